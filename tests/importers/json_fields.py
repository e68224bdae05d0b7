"""Walking a JSON document's fields, to put a wrong type in each (importer fuzz tests)."""

from __future__ import annotations

import json
from typing import Any

WRONG = (None, 5, "x", [1], {"a": 1}, True)


def field_paths(value: Any, depth: int, skip: frozenset[str], prefix: tuple = ()) -> list[tuple]:
    """Paths to the fields of a JSON document (first list item only), `depth` levels deep."""
    out = []
    if depth == 0:
        return out
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value[:1])
        if isinstance(value, list)
        else []
    )
    for key, child in items:
        if key in skip:
            continue
        out.append((*prefix, key))
        out += field_paths(child, depth - 1, skip, (*prefix, key))
    return out


def with_value(doc: Any, path: tuple, new: Any) -> Any:
    copy = json.loads(json.dumps(doc))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy
