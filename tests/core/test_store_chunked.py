"""Huge run files are committed in pieces (bounded memory) and stay invisible until whole."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragtui.core import fastindex, tables
from ragtui.core import store as store_module
from ragtui.core.store import Store
from tests.core.runs_factory import make_run


def _rows(store: Store) -> dict[str, list[str]]:
    cur = store._cursor()
    return {
        t: sorted(map(repr, cur.execute(f"SELECT * FROM {t}").fetchall()))
        for t in ("runs", "cases", "chunks", "scores", "claims")
    }


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every file counts as huge and is cut into many small pieces; returns commit counts."""
    commits: list[int] = []
    monkeypatch.setattr(store_module, "CHUNKED_BYTES", 0)
    monkeypatch.setattr(store_module, "BATCH_CASES", 3)
    monkeypatch.setattr(fastindex, "BLOCK_BYTES", 2048)
    real = fastindex.index_cases

    def counting(cur, path, run_id, checkpoint=None):  # type: ignore[no-untyped-def]
        def counted() -> None:
            commits.append(1)
            assert checkpoint is not None
            checkpoint()

        return real(cur, path, run_id, counted if checkpoint else None)

    monkeypatch.setattr(fastindex, "index_cases", counting)
    return commits


@pytest.mark.parametrize("fast", [True, False])
def test_pieces_index_the_same_content(
    tmp_path: Path, pieces: list[int], monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    make_run(tmp_path / "whole", "big-1", n=12, faith=[1.0, 0.5, 0.0] * 4)
    with Store.open(tmp_path / "whole", refresh=False) as store:
        monkeypatch.setattr(store_module, "CHUNKED_BYTES", 1 << 40)
        store.refresh()
        whole = _rows(store)
    monkeypatch.setattr(store_module, "CHUNKED_BYTES", 0)
    monkeypatch.setattr(fastindex, "ENABLED", fast)
    make_run(tmp_path / "pieces", "big-1", n=12, faith=[1.0, 0.5, 0.0] * 4)
    with Store.open(tmp_path / "pieces") as store:
        assert store.problems == []
        assert _rows(store) == {
            k: [r.replace("/whole/", "/pieces/") for r in v] for k, v in whole.items()
        }
    if fast:
        assert len(pieces) >= 2  # the file really went in as several committed pieces


def test_a_bad_line_late_in_a_huge_file_leaves_nothing(tmp_path: Path, pieces: list[int]) -> None:
    path = make_run(tmp_path, "big-2", n=12)
    lines = path.read_text().splitlines()
    lines[11] = lines[11].replace('"value": 1.0', '"value": 7')
    path.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path) as store:
        assert ":12: field 'scores.faithfulness.value'" in str(store.problems[0])
        for table in ("runs", "cases", "chunks", "scores", "files"):
            assert store._cursor().execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        assert store._cursor().execute(
            "SELECT count(*) FROM meta WHERE key = 'pending_run'"
        ).fetchone() == (0,)


def test_a_process_killed_between_pieces_leaves_no_partial_run(tmp_path: Path) -> None:
    make_run(tmp_path, "big-3", n=12)
    repo = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(repo)!r})
        from ragtui.core import fastindex, store
        store.CHUNKED_BYTES = 0
        fastindex.BLOCK_BYTES = 2048
        real = fastindex.index_cases
        def dying(cur, path, run_id, checkpoint=None):
            done = []
            def piece():
                checkpoint()
                done.append(1)
                if len(done) == 2:
                    os._exit(9)  # killed after two pieces were committed
            return real(cur, path, run_id, piece)
        fastindex.index_cases = dying
        store.Store.open({str(tmp_path)!r})
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 9, out.stderr
    with Store.open(tmp_path, refresh=False) as store:
        cur = store._cursor()
        for table in ("runs", *tables.RUN_TABLES):
            assert cur.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
        store.refresh()
        assert store.cases("big-3").num_rows == 12
