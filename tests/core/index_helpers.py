"""What an index holds, for equality checks between two indexes of the same files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragtui.core.store import Store

TABLES = ("runs", "cases", "scores", "human", "stated")


def content(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every run table, sorted; paths made relative to the folder."""
    cur = store._cursor()
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        rows = cur.execute(f"SELECT * FROM {table}").fetchall()
        out[table] = sorted((_relative(row, store.folder) for row in rows), key=repr)
    out["files"] = sorted(
        _relative(row, store.folder)
        for row in cur.execute("SELECT path, size, sha256, run_id FROM files").fetchall()
    )
    return out


def _relative(row: tuple[Any, ...], folder: Path) -> tuple[Any, ...]:
    prefix = str(folder)
    out = []
    for v in row:
        if isinstance(v, bytes) and v.startswith(prefix.encode()):
            v = b"<folder>" + v[len(prefix.encode()) :]
        elif isinstance(v, str) and v.startswith(prefix):
            v = "<folder>" + v[len(prefix) :]
        out.append(v)
    return tuple(out)


def count(store: Store, table: str) -> int:
    row = store._cursor().execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])
