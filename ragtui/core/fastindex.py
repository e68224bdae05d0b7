"""Fast cold indexing: DuckDB parses and validates the case lines of a run file in C++.

The Python reader (`runfile.parse_case` + `tables.case_rows`) is the reference: it names the
file, line and field of the first problem. This module applies exactly its rules in SQL to
blocks of lines and inserts the rows the Python path would have produced. When anything fails
a check, or the file holds something this path does not reproduce byte for byte (a nested
metadata value, an object as `raw`, a duplicate key, a number past 2**53, a deep line),
`index_cases` returns None and the caller runs the Python path, which then raises the precise
error or indexes the file itself. Both paths give identical index content
(tests/core/test_fastindex.py).

Everything runs in the caller's transaction; parsing functions are wrapped in try() so that a
malformed line becomes a failed check rather than an error (which would abort the transaction).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from ragtui.core.model import VERDICTS

ENABLED = True  # tests switch the fast path off to index the same files the Python way
BLOCK_BYTES = 8 << 20  # bytes of case lines parsed per batch: bounds memory on huge files
MAX_OPENERS = 200  # '{' + '[' per line; deeper lines go to Python (its recursion limit rules)

# DuckDB's JSON parser is laxer than Python's json in two ways: it takes trailing commas and
# case-insensitive nan/inf literals. Both are looked for in the raw bytes; conservative: a
# match inside a string only costs speed (the Python path runs).
_TRAILING_COMMA = re.compile(rb",[ \t\r\n]*[\]}]")
_SPACES = np.array([ord(c) for c in " \t\r\n"], dtype=np.uint8)
# The characters for which Python's str.isspace() holds (the "non-empty case id" rule).
_PY_SPACE = (
    r"\x{9}\x{a}\x{b}\x{c}\x{d}\x{1c}\x{1d}\x{1e}\x{1f}\x{20}\x{85}\x{a0}\x{1680}\x{2000}"
    r"\x{2001}\x{2002}\x{2003}\x{2004}\x{2005}\x{2006}\x{2007}\x{2008}\x{2009}\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
)


def index_cases(
    cur: duckdb.DuckDBPyConnection,
    path: Path,
    run_id: str,
    checkpoint: Callable[[], None] | None = None,
) -> int | None:
    """Insert the cases of run file `path` as rows of run `run_id`; the header is not read.

    Returns the number of cases, or None to fall back, in which case no row of the run is left
    in the caller's transaction. A DuckDB error (out of disk, ...) propagates. `checkpoint`,
    when given, is called after each block (the store commits the pieces of a huge file).
    """
    if not ENABLED:
        return None
    cur.execute("CREATE OR REPLACE TEMP TABLE _seen (case_id VARCHAR)")  # this file's ids
    try:
        n = _index(cur, path, run_id, checkpoint)
        if n is not None:
            dup = cur.execute("SELECT count(*) - count(DISTINCT case_id) FROM _seen").fetchone()
            if dup is None or dup[0]:
                n = None  # Python names the line of the repeated case id
    finally:
        cur.execute("DROP TABLE IF EXISTS _seen")
    if n is None:
        for table in _SQL:
            cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    return n


def _index(
    cur: duckdb.DuckDBPyConnection,
    path: Path,
    run_id: str,
    checkpoint: Callable[[], None] | None,
) -> int | None:
    n_cases = 0
    with path.open("rb") as handle:
        if not handle.readline().endswith(b"\n"):
            return 0  # the header is the whole file: no cases (as the Python reader says)
        rest = b""
        while True:
            data = handle.read(BLOCK_BYTES)
            block = rest + data
            cut = block.rfind(b"\n") + 1 if data else len(block)
            block, rest = block[:cut], block[cut:]
            if block:
                lines = _split(block, n_cases)
                if lines is None or not _insert_batch(cur, lines, run_id):
                    return None
                n_cases += lines.num_rows
                if checkpoint is not None:
                    checkpoint()  # a huge file: commit this piece (the caller keeps it hidden)
            if not data:
                return n_cases


def _split(block: bytes, start: int) -> pa.Table | None:
    """One Arrow string per non-blank line (zero copy), numbered from `start`; None: fall back."""
    if b"\x00" in block or _TRAILING_COMMA.search(block):
        return None
    buf = np.frombuffer(block, dtype=np.uint8)
    if _has_lax_literal(buf):
        return None
    ends = np.flatnonzero(buf == 10) + 1
    if len(ends) == 0 or ends[-1] != len(buf):
        ends = np.append(ends, len(buf))
    starts = np.concatenate(([0], ends[:-1]))
    keep = buf[starts] == ord("{")
    if not keep.all():
        for s, e in zip(starts[~keep], ends[~keep], strict=True):
            if block[s:e].strip():  # not blank and not an object: Python says what it is
                return None
    openers = (buf == ord("{")) | (buf == ord("["))
    if np.add.reduceat(openers, starts, dtype=np.int32).max() > MAX_OPENERS:
        return None
    offsets = np.concatenate((starts, [len(buf)])).astype(np.int64)
    lines = pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(offsets), pa.py_buffer(block)
    )
    try:
        lines.validate(full=True)  # UTF-8: Python's decoder is the judge of anything else
    except pa.ArrowInvalid:
        return None
    table = pa.table({"j": lines})
    if not keep.all():
        table = table.filter(pa.array(keep))
    ords = pa.array(np.arange(start, start + table.num_rows, dtype=np.int32))
    # Small record batches: DuckDB then scans them in parallel (and twice as fast on one core).
    return pa.Table.from_batches(table.append_column("ord", ords).to_batches(max_chunksize=128))


def _has_lax_literal(buf: np.ndarray) -> bool:
    """Whether `nan`, `inf` or `infinity` (any case) ends right before `,`, `]` or `}`.

    Looked for from the delimiters (few) backwards; spaces before a delimiter are skipped.
    """
    ends = np.flatnonzero((buf == 44) | (buf == 93) | (buf == 125))
    ends = ends[ends >= 3] - 1
    spaced = np.isin(buf[ends], _SPACES)
    if spaced.any():
        for k in np.flatnonzero(spaced):
            e = ends[k]
            while e >= 0 and buf[e] in _SPACES:
                e -= 1
            ends[k] = e
    ends = ends[ends >= 2]
    a, b, c = (buf[ends - k] | 0x20 for k in (2, 1, 0))  # lower-case ASCII letters
    nan = (a == ord("n")) & (b == ord("a")) & (c == ord("n"))
    inf = (a == ord("i")) & (b == ord("n")) & (c == ord("f"))
    if nan.any() or inf.any():
        return True
    ity = ends[(a == ord("i")) & (b == ord("t")) & (c == ord("y")) & (ends >= 7)]
    return any(bytes(buf[e - 7 : e + 1]).lower() == b"infinity" for e in ity)


def _insert_batch(cur: duckdb.DuckDBPyConnection, lines: pa.Table, run_id: str) -> bool:
    """Insert a block's rows; False (some rows may be in) when any row fails a check."""
    if not lines.num_rows:
        return True
    cur.register("_lines", lines)
    try:
        cur.execute(_TOP_SQL)
    finally:
        cur.unregister("_lines")
    try:
        shapes = cur.execute("SELECT DISTINCT st FROM _top").fetchall()
        if not all(shape is not None and _line_ok(json.loads(shape)) for (shape,) in shapes):
            return False
        counts = cur.execute(_COUNT_SQL).fetchone()
        for sql, expected in zip(_SQL.values(), counts[0] if counts else (), strict=True):
            inserted = cur.execute(sql, [run_id]).fetchone()
            if inserted is None or inserted[0] != expected:
                return False
        cur.execute("INSERT INTO _seen SELECT case_id FROM _top")
    finally:
        cur.execute("DROP TABLE IF EXISTS _top")
    return True


# ---------------------------------------------------------------- JSON types
#
# A line is parsed once into typed columns (strings unescaped, numbers as doubles). The typed
# parse casts where Python's reader refuses ("0.5" into a number, 5 into a string), so the
# JSON types come from json_structure(line): the type of every member, array elements merged
# (a conflict merges to "JSON", null into the other type). Lines of a file share a handful of
# structures; each distinct one is checked here against the rules of runfile.parse_case.
# What merging hides (a null among strings, a null item) is checked on the values in SQL.

_NUM = {"UBIGINT", "BIGINT", "HUGEINT", "DOUBLE"}  # HUGEINT: UBIGINT merged with BIGINT
_OPT = {"NULL", None}  # null, or absent (the Python reader treats both alike everywhere)
_STR = _OPT | {"VARCHAR"}


def _in(shape: Any, allowed: set[str | None]) -> bool:
    return (shape is None or isinstance(shape, str)) and shape in allowed


def _fields(shape: Any, rules: dict[str, set[str | None]]) -> bool:
    return isinstance(shape, dict) and all(_in(shape.get(k), ok) for k, ok in rules.items())


def _items(shape: Any, item: Callable[[Any], bool]) -> bool:
    """An array (merged to one element shape) whose items pass `item`; null items pass here."""
    return _in(shape, _OPT) or (isinstance(shape, list) and (shape == ["NULL"] or item(shape[0])))


def _object(shape: Any, value: Callable[[Any], bool]) -> bool:
    """An object with free keys whose values pass `value` ("JSON" alone: the empty object)."""
    return _in(shape, _OPT | {"JSON"}) or (
        isinstance(shape, dict) and all(map(value, shape.values()))
    )


_CHUNK_RULES = {
    "id": _STR,
    "text": _STR,
    "source": _STR,
    "rank": _OPT | {"UBIGINT", "BIGINT", "HUGEINT"},
}
_CHUNK_RULES["score"] = _OPT | _NUM
_CLAIM_RULES = {"metric": _STR, "text": _STR, "verdict": _STR, "reason": _STR}
_SCORE_RULES = {k: _STR for k in ("label", "reason", "reply", "prompt_hash")}
_SCORE_RULES |= {"value": _OPT | _NUM, "threshold": _OPT | _NUM}


def _line_ok(shape: Any) -> bool:
    return (
        _fields(shape, {"case_id": _STR, "question": _STR, "answer": _STR, "reference": _STR})
        and "ragtui_run" not in shape
        and _in(shape.get("latency_ms"), _OPT | _NUM)
        and _items(shape.get("contexts"), lambda c: _fields(c, _CHUNK_RULES))
        and _items(
            shape.get("claims"),
            lambda c: (
                _fields(c, _CLAIM_RULES) and _items(c.get("chunks"), lambda x: x == "VARCHAR")
            ),
        )
        and _object(
            shape.get("scores"),
            lambda s: (
                s == "NULL"
                or (_fields(s, _SCORE_RULES) and _items(s.get("scale"), lambda x: _in(x, _NUM)))
            ),
        )
        and _object(shape.get("errors"), lambda v: v == "VARCHAR")
        and _object(shape.get("human"), lambda v: _in(v, _NUM))
        and _object(shape.get("metadata"), lambda v: True)
    )


# ---------------------------------------------------------------- SQL
#
# Objects with free keys (scores, errors, human, metadata) become maps, which come out NULL
# when a key repeats (Python's json keeps the last value, a struct the first); the keys of the
# other objects read are listed and checked for repeats. Parsing functions are wrapped in
# try(): a malformed line fails a check instead of aborting the transaction.

_CHUNK = "STRUCT(id VARCHAR, text VARCHAR, source VARCHAR, rank HUGEINT, score DOUBLE)"
_CLAIM = "STRUCT(metric VARCHAR, text VARCHAR, verdict VARCHAR, chunks VARCHAR[], reason VARCHAR)"
_SCORE = (
    "MAP(VARCHAR, STRUCT(value DOUBLE, raw JSON, label VARCHAR, scale DOUBLE[], "
    "reason VARCHAR, reply VARCHAR, prompt_hash VARCHAR, threshold DOUBLE))"
)
_MAPS = {
    "scores": _SCORE,
    "errors": "MAP(VARCHAR, VARCHAR)",
    "human": "MAP(VARCHAR, DOUBLE)",
    "metadata": "MAP(VARCHAR, JSON)",
}
_LINE = (
    '{"case_id": "VARCHAR", "question": "VARCHAR", "answer": "VARCHAR", "reference": "VARCHAR", '
    f'"latency_ms": "DOUBLE", "contexts": "{_CHUNK}[]", "claims": "{_CLAIM}[]", '
    + ", ".join(f'"{m}": "JSON"' for m in _MAPS)
    + "}"
)
_UNIQUE = (
    "coalesce(list_bool_and(list_transform({}, lambda x: len(x) = len(list_distinct(x)))), true)"
)
_TOP_SQL = f"""
CREATE OR REPLACE TEMP TABLE _top AS
SELECT ord, st, t.case_id, t.question, t.answer, t.reference, t.latency_ms, t.contexts,
    t.claims, {", ".join(m for m in _MAPS)},
    (k IS NOT NULL AND {" AND ".join(_UNIQUE.format(x) for x in ("[k]", "kc", "kl", "ks"))}
        AND {" AND ".join(f"(t.{m} IS NULL OR {m} IS NOT NULL)" for m in _MAPS)}) AS top_ok
FROM (
    SELECT *, {", ".join(f'''try(json_transform(t.{m}, '"{typ}"')) AS {m}''' for m, typ in _MAPS.items())},
        try(json_keys(t.scores, '$.*')) AS ks
    FROM (SELECT ord, try(json_structure(j)) AS st, try(json_keys(j)) AS k,
              try(json_keys(j, '$.contexts[*]')) AS kc, try(json_keys(j, '$.claims[*]')) AS kl,
              try(json_transform(j, '{_LINE}')) AS t
          FROM _lines))
"""


def _finite(x: str) -> str:
    """Null or finite; from 2**53 on the fast path declines, as the JSON type (an integer the
    Python path cannot store, or a float it can) is not known per value here."""
    return f"({x} IS NULL OR (isfinite({x}) AND abs({x}) < {2**53}))"


# yyjson writes a control character as \u001F where Python's json.dumps writes \u001f.
_UPPER_ESCAPE = "'\\\\u00[01][A-F]'"


def _pyjson(x: str) -> str:
    """`json.dumps(value, ensure_ascii=False)` of a scalar given as JSON text; NULL when not
    reproduced here (an object, an array, a non-finite number, an upper-case escape)."""
    return (
        f"CASE WHEN {x} IS NULL THEN 'null' "
        f"WHEN starts_with({x}, '\"') THEN CASE WHEN NOT regexp_matches({x}, {_UPPER_ESCAPE}) "
        f"THEN {x} END "
        f"WHEN {x} IN ('true', 'false') THEN {x} "
        f"WHEN regexp_full_match({x}, '-?[0-9]+') THEN {x} "
        f"WHEN regexp_matches({x}, '^-?[0-9]') AND isfinite(try_cast({x} AS DOUBLE)) "
        f"THEN CAST(try_cast({x} AS DOUBLE) AS VARCHAR) END"
    )


_KEY = "(json_object(e.key, 0)::VARCHAR)[2:-4]"  # the key as JSON text, quoted
_META = (
    f"list_transform(map_entries(metadata), lambda e: CASE WHEN NOT regexp_matches({_KEY}, "
    f"{_UPPER_ESCAPE}) THEN {_KEY} || ': ' || {_pyjson('e.value')} END)"
)
_VERDICTS = ", ".join(f"'{v}'" for v in VERDICTS)

# Per table: the rows (FROM ...), their columns in table order, the check every row must
# pass, and the insertion order (the Python path's: case by case, then within the case).
_TABLES: dict[str, tuple[str, str, str, str]] = {
    "cases": (
        f"(SELECT *, {_META} AS meta FROM _top)",
        """case_id, ord::INTEGER, question, answer, reference, latency_ms,
        CASE WHEN cardinality(metadata) > 0 THEN '{' || array_to_string(meta, ', ') || '}' END""",
        f"""top_ok AND case_id IS NOT NULL AND regexp_matches(case_id, '[^{_PY_SPACE}]')
        AND question IS NOT NULL AND answer IS NOT NULL AND {_finite("latency_ms")}
        AND coalesce(list_bool_and(list_transform(meta, lambda x: x IS NOT NULL)), true)
        AND coalesce(list_bool_and(list_transform(map_values(errors),
            lambda x: x IS NOT NULL)), true)""",
        "ord",
    ),
    "chunks": (
        """(SELECT ord, case_id, unnest(contexts) AS c, generate_subscripts(contexts, 1) AS i
        FROM _top WHERE contexts IS NOT NULL)""",
        "case_id, (i - 1)::INTEGER, c.id, c.rank::INTEGER, c.source, c.score, c.text",
        f"""c IS NOT NULL AND c.id IS NOT NULL AND c.text IS NOT NULL AND {_finite("c.score")}
        AND coalesce(c.rank BETWEEN -2147483648 AND 2147483647, true)""",
        "ord, i",
    ),
    "scores": (
        """(SELECT ord, case_id, unnest(map_keys(scores)) AS metric,
            unnest(map_values(scores)) AS s, NULL AS e,
            generate_subscripts(map_keys(scores), 1) AS pos, 0 AS grp
        FROM _top WHERE scores IS NOT NULL
        UNION ALL
        SELECT ord, case_id, metric, NULL, e, pos, 1 FROM (
            SELECT ord, case_id, scores, unnest(map_keys(errors)) AS metric,
                unnest(map_values(errors)) AS e,
                generate_subscripts(map_keys(errors), 1) AS pos
            FROM _top WHERE errors IS NOT NULL)
        WHERE scores IS NULL OR NOT map_contains(scores, metric))""",
        f"""case_id, metric, s.value, e, s.label,
        CASE WHEN s.raw IS NOT NULL THEN {_pyjson("s.raw")} END, s.scale[1], s.scale[2],
        s.reason, s.reply, s.prompt_hash, s.threshold""",
        f"""grp = 1 OR (s IS NOT NULL AND s.value BETWEEN 0 AND 1
        AND (s.raw IS NULL OR {_pyjson("s.raw")} IS NOT NULL) AND {_finite("s.threshold")}
        AND (s.scale IS NULL OR (len(s.scale) = 2 AND s.scale[1] IS NOT NULL
            AND s.scale[2] IS NOT NULL AND {_finite("s.scale[1]")} AND {_finite("s.scale[2]")}
            AND s.scale[1] < s.scale[2])))""",
        "ord, grp, pos",
    ),
    "claims": (
        """(SELECT ord, case_id, unnest(claims) AS c, generate_subscripts(claims, 1) AS i
        FROM _top WHERE claims IS NOT NULL)""",
        "case_id, (i - 1)::INTEGER, c.metric, c.text, c.verdict, coalesce(c.chunks, []), c.reason",
        f"""c IS NOT NULL AND c.metric IS NOT NULL AND c.text IS NOT NULL
        AND (coalesce(c.verdict IN ({_VERDICTS}), false)
            OR (c.verdict IS NOT NULL AND trim(c.verdict) <> ''
                AND NOT starts_with(lower(c.metric), 'faithfulness')
                AND NOT starts_with(lower(c.metric), 'groundedness')))
        AND coalesce(list_bool_and(list_transform(c.chunks, lambda x: x IS NOT NULL)), true)""",
        "ord, i",
    ),
    "human": (
        """(SELECT ord, case_id, unnest(map_keys(human)) AS metric,
            unnest(map_values(human)) AS v, generate_subscripts(map_keys(human), 1) AS pos
        FROM _top WHERE human IS NOT NULL)""",
        "case_id, metric, v",
        "v BETWEEN 0 AND 1",
        "ord, pos",
    ),
}
# The rows each table gets from a block, counted before inserting; an insert keeps only rows
# that pass every check, so a shortfall means some row failed (and the block falls back).
_COUNT_SQL = (
    "SELECT [" + ", ".join(f"(SELECT count(*) FROM {rows})" for rows, *_ in _TABLES.values()) + "]"
)
_SQL = {
    name: f"INSERT INTO {name} SELECT ?::VARCHAR, {columns} FROM {rows} WHERE {ok}"
    + (f" ORDER BY {order}" if name == "scores" else "")  # the others keep scan order
    for name, (rows, columns, ok, order) in _TABLES.items()
}
