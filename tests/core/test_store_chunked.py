"""Huge run files are committed in pieces (bounded memory) and stay invisible until whole."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragtui.core import indexer, runfile, tables
from ragtui.core.store import Store
from tests.core.index_helpers import content
from tests.core.runs_factory import make_run


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every file counts as huge and is read in small blocks; returns the pieces inserted."""
    inserted: list[int] = []
    monkeypatch.setattr(indexer, "CHUNKED_BYTES", 0)
    monkeypatch.setattr(runfile, "BLOCK_BYTES", 2048)
    real = tables.insert

    def counting(cur, table, batch, run_id):  # type: ignore[no-untyped-def]
        if table == "cases":
            inserted.append(batch.num_rows)
        real(cur, table, batch, run_id)

    monkeypatch.setattr(tables, "insert", counting)
    return inserted


def test_pieces_index_the_same_content(
    tmp_path: Path, pieces: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(tmp_path / "pieces", "big-1", n=12, faith=[1.0, 0.5, 0.0] * 4)
    with Store.open(tmp_path / "pieces") as store:
        assert store.problems == []
        chunked = content(store)
    assert len(pieces) >= 2 and sum(pieces) == 12  # several committed pieces, every case
    monkeypatch.undo()
    make_run(tmp_path / "whole", "big-1", n=12, faith=[1.0, 0.5, 0.0] * 4)
    with Store.open(tmp_path / "whole") as store:
        whole = content(store)
    assert chunked == whole


def test_a_bad_line_late_in_a_huge_file_leaves_nothing(tmp_path: Path, pieces: list[int]) -> None:
    path = make_run(tmp_path, "big-2", n=12)
    lines = path.read_text().splitlines()
    lines[11] = lines[11].replace('"value": 1.0', '"value": 7')
    path.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path) as store:
        assert ":12: field 'scores.faithfulness.value'" in str(store.problems[0])
        assert sum(pieces) >= 3  # pieces before the bad line had been committed
        for table in ("runs", "cases", "scores", "files"):
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
        from ragtui.core import indexer, runfile, store, tables
        indexer.CHUNKED_BYTES = 0
        runfile.BLOCK_BYTES = 2048
        real = tables.insert
        done = []
        def dying(cur, table, batch, run_id):
            if table == "cases":
                done.append(1)
                if len(done) == 3:
                    os._exit(9)  # killed after two pieces were committed
            real(cur, table, batch, run_id)
        tables.insert = dying
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
