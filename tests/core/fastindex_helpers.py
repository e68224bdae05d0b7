"""Index one folder twice, the fast way and the Python way, and compare everything indexed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ragtui.core import fastindex
from ragtui.core.store import Store

TABLES = ("runs", "cases", "chunks", "scores", "claims", "human")


def content(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every run table, in insertion (rowid) order; paths made relative."""
    cur = store._cursor()
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        rows = cur.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        out[table] = [_relative(row, store.folder) for row in rows]
    out["files"] = [
        _relative(row, store.folder)
        for row in cur.execute(
            "SELECT path, size, sha256, run_id FROM files ORDER BY path"
        ).fetchall()
    ]
    return out


def _relative(row: tuple[Any, ...], folder: Path) -> tuple[Any, ...]:
    prefix = str(folder)
    return tuple(
        v.replace(prefix, "<folder>") if isinstance(v, str) and v.startswith(prefix) else v
        for v in row
    )


class PathCounter:
    """Wraps the real fast path to count how often it indexed a file and how often it declined."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fast = 0
        self.declined = 0
        real = fastindex.index_cases

        def counting(cur: Any, path: Path, run_id: str, checkpoint: Any = None) -> int | None:
            n = real(cur, path, run_id, checkpoint)
            if not fastindex.ENABLED:
                return n
            if n is None:
                self.declined += 1
            else:
                self.fast += 1
            return n

        monkeypatch.setattr(fastindex, "index_cases", counting)


def index_both(
    folder: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], dict[str, Any], Store, Store, PathCounter]:
    """(fast content, python content, ...): folder is copied so both indexes see equal files."""
    fast_dir, slow_dir = tmp / "fast", tmp / "slow"
    for target in (fast_dir, slow_dir):
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns(".ragtui.duckdb*"))
    counter = PathCounter(monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(fastindex, "ENABLED", False)
        slow = Store.open(slow_dir)
        slow_content = content(slow)
    fast = Store.open(fast_dir)
    fast_content = content(fast)
    return fast_content, slow_content, fast, slow, counter
