"""Decoding pauses the cycle collector block by block (core/decoding.paused_gc): after any
index, good or failed, the collector is as the program left it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.core.store import Store


def folder_with_a_bad_block(root: Path) -> Path:
    root.mkdir()
    run = Run(id="good", name="g", created_at="2026-11-20T10:00:00Z")
    write_run_file(root / f"good{SUFFIX}", run, [])
    with (root / f"good{SUFFIX}").open("a") as out:
        out.write(
            '{"case_id": "c1", "question": "q", "answer": "a", "scores": {"m": {"value": 0.5}}}\n'
        )
    bad = write_run_file(
        root / f"bad{SUFFIX}", Run(id="bad", name="b", created_at="2026-11-20T10:00:00Z"), []
    )
    with bad.open("a") as out:  # the decoder fails inside the block: the pause must still end
        out.write(
            '{"case_id": "c1", "question": "q", "answer": "a", "scores": {"m": {"value": "x"}}}\n'
        )
    return root


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_restored")
@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_as_it_was_after_indexing(tmp_path: Path, enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    store = Store.open(folder_with_a_bad_block(tmp_path / "runs"))
    try:
        assert [r.id for r in store.run_rows()] == ["good"]
        assert len(store.problems) == 1 and "bad" in str(store.problems[0])
    finally:
        store.close()
    assert gc.isenabled() is enabled
