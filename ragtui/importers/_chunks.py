"""Retrieved chunks from a contexts cell, shared by the RAGAS and generic importers.

A cell is a list (JSON, JSONL, or a list written into a CSV cell as JSON or a Python repr) of
texts, or of chunk objects such as `{"id": 7, "text": "…", "metadata": {"source": "a.md"},
"score": 0.83}` (LangChain's `page_content` and `content` name the text too); anything else is
one chunk of text. An object's id, source and retrieval score are kept, never its repr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragtui.core.model import Chunk
from ragtui.importers._common import as_number, fail, is_missing
from ragtui.importers._tabular import MAX_LIST_ITEMS, parse_list

TEXT_KEYS = ("text", "content", "page_content")


def chunk_items(cell: Any) -> list[Any] | None:
    """The items of a list cell (objects kept as objects); None when the cell is no list."""
    if isinstance(cell, list | tuple):
        return list(cell)
    if not isinstance(cell, str):
        return None
    text = cell.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            return parsed
    return parse_list(cell)


def has_chunk_objects(cell: Any) -> bool:
    """The cell lists chunks as objects (RAGAS writes texts only)."""
    items = chunk_items(cell) if not is_missing(cell) else None
    return bool(items) and any(isinstance(item, dict) for item in items)


def read_chunks(path: Path, where: str, column: str, cell: Any) -> tuple[Chunk, ...]:
    if is_missing(cell):
        return ()
    items = chunk_items(cell)
    if items is None:
        items = [cell]
    if len(items) > MAX_LIST_ITEMS:  # (each would be a Chunk: memory, not a list of chunks)
        raise fail(
            path,
            f"{where}, column {column!r}: expected at most {MAX_LIST_ITEMS:,} chunks in one "
            f"cell, found {len(items):,}",
        )
    chunks = []
    for n, item in enumerate(items, start=1):
        if isinstance(item, dict):
            chunks.append(_chunk(path, f"{where}, column {column!r}, item {n}", n, item))
        elif isinstance(item, str):
            chunks.append(Chunk(id=f"c{n}", text=item, rank=n))
        else:
            text = json.dumps(item) if isinstance(item, list) else str(item)
            chunks.append(Chunk(id=f"c{n}", text=text, rank=n))
    return tuple(chunks)


def _chunk(path: Path, where: str, n: int, item: dict[str, Any]) -> Chunk:
    text = next((item[k] for k in TEXT_KEYS if isinstance(item.get(k), str)), None)
    if text is None:
        raise fail(
            path,
            f"{where}: expected a chunk with a 'text' (or 'content', 'page_content') string, "
            f"found keys {sorted(map(str, item))[:6]}",
        )
    metadata = item.get("metadata")
    source = item.get("source")
    if not isinstance(source, str) and isinstance(metadata, dict):
        source = metadata.get("source")
    raw_score = item.get("score")
    score = None
    if not is_missing(raw_score):
        score = as_number(raw_score) if not isinstance(raw_score, bool) else None
        if score is None:
            raise fail(path, f"{where}: 'score': expected a number, found {str(raw_score)[:40]!r}")
    chunk_id = item.get("id")
    return Chunk(
        id=f"c{n}" if chunk_id is None or chunk_id == "" else str(chunk_id),
        text=text,
        source=source if isinstance(source, str) else None,
        rank=n,
        score=score,
    )
