"""Fast cold indexing: DuckDB parses and validates the case lines of a run file in C++.

The Python reader (`runfile.parse_case` + `tables.case_rows`) is the reference: it names the
file, line and field of the first problem. This module applies exactly its rules in SQL to
blocks of lines and inserts the rows the Python path would have produced. When anything fails
a check, or the file holds something this path does not reproduce byte for byte (a nested
metadata value, an object as `raw`, a duplicate key, a line nested very deeply),
`index_cases` returns None and the caller runs the Python path, which then raises the precise
error or indexes the file itself. Both paths give identical index content
(tests/core/test_fastindex.py).

Everything runs in the caller's transaction; parsing functions are wrapped in try() so that a
malformed line becomes a failed check rather than an error (which would abort the transaction).
"""

from __future__ import annotations

import re
from pathlib import Path

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


def index_cases(cur: duckdb.DuckDBPyConnection, path: Path, run_id: str) -> int | None:
    """Insert the cases of run file `path` as rows of run `run_id`; the header is not read.

    Returns the number of cases, or None to fall back, in which case no row of the run is left
    in the caller's transaction. A DuckDB error (out of disk, ...) propagates.
    """
    if not ENABLED:
        return None
    n = _index(cur, path, run_id)
    if n is not None:
        dup = cur.execute(
            "SELECT count(*) - count(DISTINCT case_id) FROM cases WHERE run_id = ?", [run_id]
        ).fetchone()
        if dup is None or dup[0]:
            n = None  # Python names the line of the repeated case id
    if n is None:
        for table in _SQL:
            cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    return n


def _index(cur: duckdb.DuckDBPyConnection, path: Path, run_id: str) -> int | None:
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
        counts = cur.execute(_COUNT_SQL).fetchone()
        for sql, expected in zip(_SQL.values(), counts[0] if counts else (), strict=True):
            inserted = cur.execute(sql, [run_id]).fetchone()
            if inserted is None or inserted[0] != expected:
                return False
    finally:
        cur.execute("DROP TABLE IF EXISTS _top")
    return True


# ---------------------------------------------------------------- SQL
#
# Every JSON object is read with json_transform_strict into MAP(VARCHAR, JSON): that fails on
# duplicate keys (Python's json keeps the last value, DuckDB the first) and on a non-object,
# so such lines fall back. A map value is the JSON text of the member, or NULL for null or an
# absent key (the Python reader treats both alike everywhere). Its first character gives the
# JSON type; yyjson writes strings with exactly the escapes Python's json.dumps uses.


def _is_str(x: str) -> str:
    return f"coalesce(starts_with({x}, '\"'), false)"


def _opt_str(x: str) -> str:
    return f"({x} IS NULL OR starts_with({x}, '\"'))"


def _str(x: str) -> str:
    return (
        f"CASE WHEN starts_with({x}, '\"') THEN CASE WHEN contains({x}, '\\') "
        f"THEN json_extract_string({x}, '$') ELSE {x}[2:-2] END END"
    )


def _is_num(x: str) -> str:
    """A finite JSON number; an integer past 2**53 fails (the Python path cannot store it)."""
    return (
        f"coalesce(regexp_matches({x}, '^-?[0-9]') "
        f"AND (NOT regexp_full_match({x}, '-?[0-9]+') OR abs(try_cast({x} AS HUGEINT)) <= {2**53}) "
        f"AND isfinite(try_cast({x} AS DOUBLE)), false)"
    )


def _opt_num(x: str) -> str:
    return f"({x} IS NULL OR {_is_num(x)})"


def _num(x: str) -> str:
    return f"CASE WHEN regexp_matches({x}, '^-?[0-9]') THEN try_cast({x} AS DOUBLE) END"


def _unit(x: str) -> str:
    """A required finite number in [0, 1]."""
    return f"({_is_num(x)} AND try_cast({x} AS DOUBLE) BETWEEN 0 AND 1)"


# yyjson writes a control character as \u001F where Python's json.dumps writes \u001f.
_UPPER_ESCAPE = "'\\\\u00[01][A-F]'"


def _pyjson(x: str) -> str:
    """`json.dumps(value, ensure_ascii=False)` of a scalar; NULL when not reproduced here."""
    return (
        f"CASE WHEN {x} IS NULL THEN 'null' "
        f"WHEN starts_with({x}, '\"') THEN CASE WHEN NOT regexp_matches({x}, {_UPPER_ESCAPE}) "
        f"THEN {x} END "
        f"WHEN {x} IN ('true', 'false') OR regexp_full_match({x}, '-?[0-9]+') THEN {x} "
        f"WHEN {_is_num(x)} THEN CAST(try_cast({x} AS DOUBLE) AS VARCHAR) END"
    )


def _struct(*keys: str) -> str:
    return "{" + ", ".join(f'"{k}": "JSON"' for k in keys) + "}"


_CHUNK = _struct("id", "text", "source", "rank", "score")
_CLAIM = _struct("metric", "text", "verdict", "chunks", "reason")
_SCORE = (
    "STRUCT("
    + ", ".join(
        f"{k} JSON"
        for k in ("value", "raw", "label", "scale", "reason", "reply", "prompt_hash", "threshold")
    )
    + ")"
)
_MEMBERS = (
    "case_id",
    "question",
    "answer",
    "reference",
    "latency_ms",
    "contexts",
    "scores",
    "claims",
    "errors",
    "human",
    "metadata",
)
_LINE = _struct(*_MEMBERS)
_CONTAINERS = {
    "contexts": "[",
    "claims": "[",
    "scores": "{",
    "errors": "{",
    "human": "{",
    "metadata": "{",
}
# A line is parsed into a struct of its members as JSON text (NULL when null or absent, which
# the Python reader treats alike everywhere); the first character gives the JSON type, and
# yyjson writes strings with exactly the escapes Python's json.dumps uses. The containers are
# then parsed from that text. Structs keep the first of two equal keys where Python keeps the
# last, so the keys of every object read are listed and checked for repeats; objects with free
# keys (scores, errors, ...) become maps, which are NULL when a key repeats.
_PARSED = {
    "contexts": f"try(json_transform(t.contexts, '[{_CHUNK}]'))",
    "claims": f"try(json_transform(t.claims, '[{_CLAIM}]'))",
    "scores": f"""try(json_transform(t.scores, '"MAP(VARCHAR, {_SCORE})"'))""",
    "errors": """try(json_transform(t.errors, '"MAP(VARCHAR, JSON)"'))""",
    "human": """try(json_transform(t.human, '"MAP(VARCHAR, JSON)"'))""",
    "metadata": """try(json_transform(t.metadata, '"MAP(VARCHAR, JSON)"'))""",
}
_UNIQUE = (
    "coalesce(list_bool_and(list_transform({}, lambda x: len(x) = len(list_distinct(x)))), true)"
)
_TOP_SQL = f"""
CREATE OR REPLACE TEMP TABLE _top AS
SELECT ord, cid, case_id, question, answer, reference, latency_ms,
    {", ".join(_CONTAINERS)},
    (k IS NOT NULL AND NOT list_contains(k, 'ragtui_run')
        AND {" AND ".join(_UNIQUE.format(x) for x in ("[k]", "kc", "kl", "ks"))}
        AND {
    " AND ".join(
        f"(raw_{m} IS NULL OR (starts_with(raw_{m}, '{c}') AND {m} IS NOT NULL))"
        for m, c in _CONTAINERS.items()
    )
}) AS top_ok
FROM (
    SELECT ord, k, t.case_id AS cid, {_str("t.case_id")} AS case_id,
        t.question, t.answer, t.reference, t.latency_ms,
        {", ".join(f"t.{m} AS raw_{m}" for m in _CONTAINERS)},
        {", ".join(f"{sql} AS {m}" for m, sql in _PARSED.items())},
        try(json_keys(t.contexts, '$[*]')) AS kc, try(json_keys(t.claims, '$[*]')) AS kl,
        try(json_keys(t.scores, '$.*')) AS ks
    FROM (SELECT ord, try(json_keys(j)) AS k, try(json_transform(j, '{_LINE}')) AS t
          FROM _lines))
"""
_KEY = "(json_object(e.key, 0)::VARCHAR)[2:-4]"  # the key as JSON text, quoted
_META = (
    f"list_transform(map_entries(metadata), lambda e: CASE WHEN NOT regexp_matches({_KEY}, "
    f"{_UPPER_ESCAPE}) THEN {_KEY} || ': ' || {_pyjson('e.value')} END)"
)
_SCALE = "regexp_extract(s.scale, '^\\[([^,]+),([^,]+)\\]$', ['lo', 'hi'])"
_VERDICTS = ", ".join(f"'\"{v}\"'" for v in VERDICTS)

# Per table: the rows (FROM ...), their columns in table order, the check every row must
# pass, and the insertion order (the Python path's: case by case, then within the case).
_TABLES: dict[str, tuple[str, str, str, str]] = {
    "cases": (
        f"(SELECT *, {_META} AS meta FROM _top)",
        f"""case_id, ord::INTEGER, {_str("question")}, {_str("answer")}, {_str("reference")},
        {_num("latency_ms")},
        CASE WHEN cardinality(metadata) > 0 THEN '{{' || array_to_string(meta, ', ') || '}}' END""",
        f"""top_ok AND {_is_str("cid")} AND regexp_matches(case_id, '[^{_PY_SPACE}]')
        AND {_is_str("question")} AND {_is_str("answer")} AND {_opt_str("reference")}
        AND {_opt_num("latency_ms")}
        AND coalesce(list_bool_and(list_transform(meta, lambda x: x IS NOT NULL)), true)
        AND coalesce(list_bool_and(list_transform(map_values(errors),
            lambda x: {_is_str("x")})), true)""",
        "ord",
    ),
    "chunks": (
        """(SELECT ord, case_id, unnest(contexts) AS c, generate_subscripts(contexts, 1) AS i
        FROM _top WHERE contexts IS NOT NULL)""",
        f"""case_id, (i - 1)::INTEGER, {_str("c.id")},
        CASE WHEN regexp_full_match(c.rank, '-?[0-9]+') THEN try_cast(c.rank AS INTEGER) END,
        {_str("c.source")}, {_num("c.score")}, {_str("c.text")}""",
        f"""c IS NOT NULL AND {_is_str("c.id")} AND {_is_str("c.text")}
        AND {_opt_str("c.source")} AND {_opt_num("c.score")}
        AND (c.rank IS NULL OR (regexp_full_match(c.rank, '-?[0-9]+')
            AND try_cast(c.rank AS INTEGER) IS NOT NULL))""",
        "ord, i",
    ),
    "scores": (
        """(SELECT *, """
        + _SCALE
        + """ AS sc FROM (
            SELECT ord, case_id, unnest(map_keys(scores)) AS metric,
                unnest(map_values(scores)) AS s, NULL AS e,
                generate_subscripts(map_keys(scores), 1) AS pos, 0 AS grp
            FROM _top WHERE scores IS NOT NULL
            UNION ALL
            SELECT ord, case_id, metric, NULL, e, pos, 1 FROM (
                SELECT ord, case_id, scores, unnest(map_keys(errors)) AS metric,
                    unnest(map_values(errors)) AS e,
                    generate_subscripts(map_keys(errors), 1) AS pos
                FROM _top WHERE errors IS NOT NULL)
            WHERE scores IS NULL OR NOT map_contains(scores, metric)))""",
        f"""case_id, metric, {_num("s.value")}, CASE WHEN grp = 1 THEN {_str("e")} END,
        {_str("s.label")}, CASE WHEN s.raw IS NOT NULL THEN {_pyjson("s.raw")} END,
        {_num("sc.lo")}, {_num("sc.hi")}, {_str("s.reason")}, {_str("s.reply")},
        {_str("s.prompt_hash")}, {_num("s.threshold")}""",
        f"""grp = 1 OR (s IS NOT NULL AND {_unit("s.value")}
        AND (s.raw IS NULL OR {_pyjson("s.raw")} IS NOT NULL)
        AND {_opt_str("s.label")} AND {_opt_str("s.reason")}
        AND {_opt_str("s.reply")} AND {_opt_str("s.prompt_hash")}
        AND {_opt_num("s.threshold")}
        AND (s.scale IS NULL OR ({_is_num("sc.lo")} AND {_is_num("sc.hi")})))""",
        "ord, grp, pos",
    ),
    "claims": (
        """(SELECT ord, case_id, unnest(claims) AS c, generate_subscripts(claims, 1) AS i
        FROM _top WHERE claims IS NOT NULL)""",
        f"""case_id, (i - 1)::INTEGER, {_str("c.metric")}, {_str("c.text")},
        {_str("c.verdict")},
        coalesce(json_extract_string(c.chunks, '$[*]'), []::VARCHAR[]), {_str("c.reason")}""",
        f"""c IS NOT NULL AND {_is_str("c.metric")} AND {_is_str("c.text")}
        AND coalesce(c.verdict IN ({_VERDICTS}), false) AND {_opt_str("c.reason")}
        AND (c.chunks IS NULL OR (starts_with(c.chunks, '[') AND coalesce(list_bool_and(
            list_transform(json_type(c.chunks, '$[*]'), lambda t: t = 'VARCHAR')), true)))""",
        "ord, i",
    ),
    "human": (
        """(SELECT ord, case_id, unnest(map_keys(human)) AS metric,
            unnest(map_values(human)) AS v, generate_subscripts(map_keys(human), 1) AS pos
        FROM _top WHERE human IS NOT NULL)""",
        f"""case_id, metric, {_num("v")}""",
        _unit("v"),
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
