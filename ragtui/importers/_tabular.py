"""Reading the tables eval harnesses write: CSV (any delimiter), JSON records, JSONL, Markdown.

Also list cells as pandas writes them: JSON arrays, Python list reprs with mixed quoting, and
numpy array reprs that have no commas between the elements.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragtui.importers._common import decode_text, fail, json_lines, load_json
from ragtui.importers.base import ImportFormatError

# contexts cells easily exceed the 128 KiB default; a cell past this is refused, not held
MAX_CELL_BYTES = 32 << 20
csv.field_size_limit(MAX_CELL_BYTES)

_INDEX_HEADERS = {"", "index", "level_0"}
_PANDAS_UNNAMED = re.compile(r"unnamed: \d+")  # pandas' name for a column with no header
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[dict[str, Any]]
    kind: str  # csv, json, jsonl, markdown
    # the line (or record) number of each row in the file, for error messages
    lines: list[int]
    # the scalar members of a JSON object that holds the records in its one list member
    extra: dict[str, Any] = field(default_factory=dict)

    def where(self, i: int) -> str:
        """Where row i is in the source file, for messages: its line, or its JSON record."""
        return f"row {self.lines[i]}" if self.kind != "json" else f"record {i + 1}"


def looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def header_columns(head: bytes) -> list[str] | None:
    """The column names of a CSV head, or None when it is not delimited text."""
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:
            return None  # binary, not a head cut inside a multi-byte character
        text = head[: exc.start].decode("utf-8-sig")
    if not text.strip() or looks_like_json(text) or "\x00" in text:
        return None
    text, sep = excel_separator(text)
    first = text.splitlines()[0] if text.splitlines() else ""
    delimiter = sep or _sniff_delimiter(text)
    try:
        row = next(csv.reader([first], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return None
    return [c.strip() for c in row] if len(row) > 1 else None


def json_keys(head: bytes) -> set[str]:
    """Object keys seen in the head of a JSON/JSONL file (cheap: a regex, no full parse), and
    the names in a pandas split `"columns": [...]` list."""
    text = head.decode("utf-8", errors="ignore")
    keys = set(re.findall(r'"([A-Za-z_][A-Za-z0-9_ ()=.\-/]*)"\s*:', text))
    return keys | set(split_columns(text))


def split_columns(text: str) -> list[str]:
    """The column names of pandas split JSON (`{"columns": [...], "data": [[...]]}`) in a head."""
    match = re.search(r'"columns"\s*:\s*(\[[^\]]{0,20000}\])', text[:65536])
    if not match:
        return []
    try:
        columns = json.loads(match.group(1))
    except ValueError:
        return []
    return [c for c in columns if isinstance(c, str)] if isinstance(columns, list) else []


def head_table(head: bytes, jsonl: bool = False) -> tuple[list[str], list[dict[str, Any]]]:
    """Column names and the first rows that a file head shows (rows only when whole).
    `jsonl`: the file is named .jsonl, so a first line that parses alone is a record even
    when no second follows (not an object holding its records in a list member)."""
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff")
    if is_markdown_table(text):
        if len(head) >= 65536:  # the head ends inside a row of a longer report: leave that row
            text = text[: text.rfind("\n") + 1]
        try:
            table = read_markdown(Path("head"), text)
        except (ValueError, ImportFormatError):
            # a bad row: load() names it with the file's own path; the sniff sees the header
            return _markdown_header(text), []
        return table.columns, table.rows[:20]
    if looks_like_json(text):
        try:
            data = json.loads(text)
            # one line: a record; an object over several lines (pretty-printed) is no JSONL
            if jsonl and isinstance(data, dict) and "\n" not in text.strip():
                data = [data]
        except (ValueError, RecursionError):
            first = text.lstrip().split("\n", 1)[0]
            try:  # JSONL: the first line
                data = [json.loads(first)] if first.startswith("{") else None
            except (ValueError, RecursionError):
                data = None
        records = records_from_json(data)[0] if data is not None else None
        if records:
            return _columns(records), records[:20]
        return split_columns(text) or sorted(json_keys(head)), []
    columns = header_columns(head)
    if not columns:
        return [], []
    text, sep = excel_separator(text)
    delimiter = sep or _sniff_delimiter(text)
    try:
        records = _first_records(text, delimiter, 21)
    except csv.Error:
        return columns, []
    complete = records[1:-1] if len(head) >= 65536 else records[1:]
    rows = [dict(zip(columns, r, strict=True)) for r in complete if len(r) == len(columns)]
    return columns, rows


_EXCEL_SEP = re.compile(r"sep=(.)\r?\n")


def excel_separator(text: str) -> tuple[str, str | None]:
    """Excel's `sep=;` first line (written by its exports for other locales, and read by it
    as the delimiter): (the text after that line, the delimiter), else (text, None)."""
    match = _EXCEL_SEP.match(text)
    if match is None or match.group(1) in '"\r\n':
        return text, None
    return text[match.end() :], match.group(1)


def _sniff_delimiter(text: str) -> str:
    """The delimiter that splits the first records into equal, multi-column rows.

    csv.Sniffer alone guesses wrong on ';' files whose cells hold comma-separated lists.
    """
    sample = text[:65536]
    best, best_cols = "", 1
    for delimiter in ",;\t|":
        try:
            records = list(_first_records(sample, delimiter, 21))
        except csv.Error:
            continue
        if not records or len(records[0]) < 2:
            continue
        complete = records[:-1] if len(records) > 1 else records  # the last may be cut off
        consistent = all(len(r) == len(records[0]) for r in complete if any(c.strip() for c in r))
        if consistent and len(records[0]) > best_cols:
            best, best_cols = delimiter, len(records[0])
    if best:
        return best
    try:
        return csv.Sniffer().sniff(sample[:20000], delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _first_records(sample: str, delimiter: str, limit: int) -> list[list[str]]:
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter)
    out = []
    for row in reader:
        out.append(row)
        if len(out) >= limit:
            break
    return out


def read_table(path: Path, data: bytes) -> Table:
    """Rows of a CSV, JSON (records or pandas column orient) or JSONL file, as dicts."""
    text = decode_text(path, data)
    if "\x00" in text:
        raise fail(path, "expected text, found binary data (NUL bytes)")
    if not text.strip():
        raise fail(path, "the file is empty")
    if looks_like_json(text):
        return _read_json(path, text)
    if is_markdown_table(text):
        return read_markdown(path, text)
    return _read_csv(path, text)


def _is_jsonl(text: str) -> bool:
    # several JSON objects, one per line: the first line parses alone
    first = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict) and bool(text.lstrip()[len(first) :].strip())
    except (ValueError, RecursionError):
        return False


def _first_line_object(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        return False


def _read_json(path: Path, text: str) -> Table:
    # a .jsonl of one record is JSONL too (an eval of one case), not one object without records;
    # a .jsonl whose first line is no whole object (a pretty-printed JSON object) is read as JSON
    jsonl = _is_jsonl(text) or (path.suffix.lower() == ".jsonl" and _first_line_object(text))
    if text.lstrip().startswith("{") and jsonl:
        return _read_jsonl(path, text)
    data = load_json(path, text)
    records, extra = records_from_json(data)
    if records is None:
        raise fail(path, f"expected JSON records, found {_shape(data)}")
    columns = _columns(records)
    return Table(columns, records, "json", list(range(1, len(records) + 1)), extra)


def _shape(data: Any) -> str:
    if isinstance(data, dict):
        keys = ", ".join(list(map(str, data))[:8])
        return f"an object with keys {keys} and no list of records"
    if isinstance(data, list):
        return "a list that holds other things than objects"
    return type(data).__name__


def records_from_json(data: Any) -> tuple[list[dict[str, Any]] | None, dict[str, Any]]:
    """(records, the object's other scalar members) from `[{...}]`, pandas `orient=split`
    `{"columns": [...], "data": [[...]]}` or `orient=columns` `{col: {i: v}}`, or an object
    whose one list member holds the records (`{"results": [{...}], "model": "x"}`)."""
    if isinstance(data, list):
        return (data if all(isinstance(r, dict) for r in data) else None), {}
    if not isinstance(data, dict):
        return None, {}
    if isinstance(data.get("columns"), list) and isinstance(data.get("data"), list):
        cols = [str(c) for c in data["columns"]]
        if all(isinstance(r, list) and len(r) == len(cols) for r in data["data"]):
            return [dict(zip(cols, r, strict=True)) for r in data["data"]], {}
        return None, {}
    lists = [k for k, v in data.items() if isinstance(v, list)]
    if len(lists) == 1 and not any(isinstance(v, dict) for v in data.values()):
        records = data[lists[0]]
        if records and all(isinstance(r, dict) for r in records):
            extra = {
                str(k): v
                for k, v in data.items()
                if k != lists[0] and isinstance(v, str | int | float | bool)
            }
            return records, extra
        return None, {}
    if data and all(isinstance(v, dict) for v in data.values()):
        keys: list[str] = []
        seen: set[str] = set()
        for column in data.values():
            for k in column:
                if k not in seen:
                    seen.add(k)
                    keys.append(k)
        return [{c: data[c].get(k) for c in data} for k in keys], {}
    return None, {}


def _read_jsonl(path: Path, text: str) -> Table:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, line, last in json_lines(text):
        obj = load_json(path, line, first_line=number, last=last)
        if not isinstance(obj, dict):
            raise fail(path, f"line {number}: expected a JSON object, found {type(obj).__name__}")
        rows.append(obj)
        lines.append(number)
    return Table(_columns(rows), rows, "jsonl", lines)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    columns: list[str] = []
    seen: set[str] = set()
    for row in rows:
        for key in row:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    return columns


def csv_error_text(exc: csv.Error) -> str:
    """Python's csv error in a user's words: a cell that runs to the end of the file is a cut
    file (the tool that wrote it had not finished), not a mystery."""
    text = str(exc)
    if "field larger than field limit" in text:
        return f"a cell longer than {MAX_CELL_BYTES >> 20} MiB"
    if "unexpected end of data" in text:
        return (
            "a quoted cell runs to the end of the file: truncated? import a whole copy "
            "(one its tool finished)"
        )
    return text


def _read_csv(path: Path, text: str) -> Table:
    text, sep = excel_separator(text)
    delimiter = sep or _sniff_delimiter(text)
    first = 3 if sep else 2  # the line of the first row (the sep line and the header above)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
        body = list(reader)
    except csv.Error as exc:
        line = reader.line_num + first - 2
        raise fail(path, f"line {line}: not valid CSV ({csv_error_text(exc)})") from None
    header = [h.strip() for h in header]
    if len(header) < 2:
        raise fail(path, f"expected a table with several columns, found header {header!r}")
    skip = index_prefix(header)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, cells in enumerate(body, start=first):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise fail(
                path,
                f"row {number}: expected {len(header)} cells, found {len(cells)} "
                "(truncated file or unquoted delimiter?)",
            )
        rows.append(dict(zip(header[skip:], cells[skip:], strict=True)))
        lines.append(number)
    return Table(header[skip:], rows, "csv", lines)


def is_index_column(name: str) -> bool:
    """A name pandas gives an index it writes with to_csv(): empty, `index`, `level_0`, or
    `Unnamed: N` once such a file is read back and written again."""
    lowered = name.strip().lower()
    return lowered in _INDEX_HEADERS or bool(_PANDAS_UNNAMED.fullmatch(lowered))


def index_prefix(header: list[str]) -> int:
    """How many leading columns are pandas index columns (to_csv() twice writes two: `,Unnamed:
    0,...`); the last column always stays, so a table keeps at least one."""
    n = 0
    while n < len(header) - 1 and is_index_column(header[n]):
        n += 1
    return n


def is_markdown_table(text: str) -> bool:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    for i, line in enumerate(lines[:-1]):
        if line.strip().startswith("|") and _MD_SEPARATOR.match(lines[i + 1]):
            return True
    return False


def _md_cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    cells = re.split(r"(?<!\\)\|", inner)
    return [c.strip().replace("\\|", "|") for c in cells]


def _markdown_header(text: str) -> list[str]:
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        if lines[i].strip().startswith("|") and _MD_SEPARATOR.match(lines[i + 1]):
            return _md_cells(lines[i])
    return []


def read_markdown(path: Path, text: str) -> Table:
    """The first Markdown table in the text (a harness report), one row per case."""
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        if lines[i].strip().startswith("|") and _MD_SEPARATOR.match(lines[i + 1]):
            header = _md_cells(lines[i])
            rows: list[dict[str, Any]] = []
            numbers: list[int] = []
            for j in range(i + 2, len(lines)):
                if not lines[j].strip().startswith("|"):
                    break
                cells = _md_cells(lines[j])
                if len(cells) != len(header):
                    raise fail(
                        path, f"line {j + 1}: expected {len(header)} cells, found {len(cells)}"
                    )
                rows.append(dict(zip(header, cells, strict=True)))
                numbers.append(j + 1)
            return Table(header, rows, "markdown", numbers)
    raise fail(path, "no Markdown table (a | header | row followed by | --- |) found")


MAX_LIST_ITEMS = 10_000  # items of one list cell (retrieved chunks): more is no list of chunks
# a Python-repr list (not JSON, not plain string literals) parsed by ast.literal_eval only up to
# this size: `[1,1,1,…,]` of 6 MB took 3 GB and 28 s there
LITERAL_EVAL_MAX = 1 << 16


def parse_list(value: Any) -> list[str] | None:
    """A list of strings from a list cell; None when the cell is not a list at all.

    Accepts real lists, JSON arrays, Python reprs (`ast.literal_eval`, mixed quotes) and numpy
    reprs such as `['a' 'b'\\n 'c']`, which have no commas.
    """
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list):
        if len(parsed) > MAX_LIST_ITEMS:
            return None  # no list a tool writes into a cell: its text, as it is
        return [v if isinstance(v, str) else json.dumps(v) for v in parsed]
    # Before literal_eval: it would glue numpy's comma-less 'a' 'b' into one string 'ab'.
    strings = _string_literals(text)
    if strings is not None:
        return strings
    if len(text) > LITERAL_EVAL_MAX:  # its syntax tree takes ~500 bytes a character
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return [str(v) for v in parsed] if isinstance(parsed, list | tuple) else None


def _string_literals(text: str) -> list[str] | None:
    # A flat list of string literals, commas optional (numpy prints ['a' 'b' ...]); None when the
    # text holds anything else (numbers, nesting), which literal_eval then handles.
    items: list[str] = []
    depth = 0
    with warnings.catch_warnings():
        # a junk cell such as '\d' would print "invalid escape sequence" warnings: it is data
        warnings.simplefilter("ignore")
        return _collect_literals(text, items, depth)


def _collect_literals(text: str, items: list[str], depth: int) -> list[str] | None:
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                items.append(str(ast.literal_eval(token.string)))
            elif token.type == tokenize.OP and token.string in "[]":
                depth += 1 if token.string == "[" else -1
                if depth > 1:
                    return None
            elif (token.type == tokenize.OP and token.string == ",") or token.type in (
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.ENDMARKER,
                tokenize.INDENT,
                tokenize.DEDENT,
            ):
                continue
            else:
                return None
    except (tokenize.TokenError, SyntaxError, ValueError, IndentationError):
        return None
    return items
