"""The SQL fast path indexes exactly what the Python path indexes, and leaves errors to it."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ragtui import importers
from ragtui.core import fastindex, tables
from ragtui.core.errors import RagtuiError, RunFileError
from ragtui.core.model import VERDICTS, Case, Chunk, Claim, JudgeInfo, Run, Score
from ragtui.core.runfile import dumps_line, header_to_json, read_run_file, write_run_file
from ragtui.core.store import Store
from ragtui.core.synthetic import write_synthetic_history
from tests.core.fastindex_helpers import PathCounter, content, index_both

REPO = Path(__file__).resolve().parents[2]
RUN = Run(
    id="gen-1",
    name="gen",
    created_at="2026-11-20T10:00:00Z",
    config={"top_k": 3},
    judge=JudgeInfo("qwen2.5:7b", "ollama", "p1"),
)

# ---------------------------------------------------------------- strategies

_text = st.text(st.characters(codec="utf-8"), max_size=12)
# No , ] } (a byte pattern that makes the fast path decline) and none of the control
# characters that yyjson escapes as \u001F where Python writes \u001f.
_safe_text = st.text(
    st.characters(
        codec="utf-8", exclude_characters=",]}\x0b\x0e\x0f" + bytes(range(0x1A, 0x20)).decode()
    ),
    max_size=12,
)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_number = st.one_of(st.integers(-(2**53), 2**53), _finite)
# Numbers from 2**53 on make the fast path decline (see fastindex._finite).
_safe_number = st.one_of(st.integers(-(2**53) + 1, 2**53 - 1), st.floats(-(2**53) + 1, 2**53 - 1))
_unit = st.one_of(st.floats(0, 1), st.sampled_from([0, 1, 0.5, 1e-7, 5e-324]))


def _scalar(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30), _finite, text)


def _cases(
    text: st.SearchStrategy[str], *, nested: bool, number: st.SearchStrategy[Any] = _number
) -> st.SearchStrategy[list[Case]]:
    value = (
        st.recursive(
            _scalar(text),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
            max_leaves=6,
        )
        if nested
        else _scalar(text)
    )
    opt_text = st.none() | text
    chunk = st.builds(
        Chunk,
        id=text,
        text=text,
        source=opt_text,
        rank=st.none() | st.integers(-(2**31), 2**31 - 1),
        score=st.none() | number,
    )
    scale = st.none() | st.tuples(number, number).filter(lambda s: s[0] < s[1])
    score = st.builds(
        Score,
        value=_unit,
        raw=value,
        label=opt_text,
        scale=scale,
        reason=opt_text,
        reply=opt_text,
        prompt_hash=opt_text,
        threshold=st.none() | number,
    )
    claim = st.builds(
        Claim,
        metric=text,
        text=text,
        verdict=st.sampled_from(VERDICTS),
        chunks=st.lists(text, max_size=3).map(tuple),
        reason=opt_text,
    )
    case = st.builds(
        Case,
        case_id=text.filter(lambda s: bool(s.strip())),
        question=text,
        answer=text,
        reference=opt_text,
        contexts=st.lists(chunk, max_size=3).map(tuple),
        scores=st.dictionaries(text, score, max_size=3),
        claims=st.lists(claim, max_size=2).map(tuple),
        errors=st.dictionaries(text, text, max_size=2),
        human=st.dictionaries(text, _unit, max_size=2),
        latency_ms=st.none() | number,
        metadata=st.dictionaries(text, value, max_size=3),
    )
    return st.lists(case, max_size=5, unique_by=lambda c: c.case_id)


def _compare(tmp: Path, cases: list[Case], monkeypatch: pytest.MonkeyPatch) -> PathCounter:
    folder = Path(tempfile.mkdtemp(dir=tmp))
    write_run_file(folder / "gen-1.ragtui.jsonl", RUN, cases)
    with monkeypatch.context() as m:
        fast, slow, fast_store, slow_store, counter = index_both(folder, folder, m)
        fast_store.close()
        slow_store.close()
    assert fast == slow
    assert fast["cases"] == [] or len(fast["cases"]) == len(cases)
    shutil.rmtree(folder)
    return counter


_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking whole indexes is slow
)


@_SETTINGS
@given(cases=_cases(_text, nested=True))
def test_any_valid_file_indexes_alike_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases: list[Case]
) -> None:
    counter = _compare(tmp_path, cases, monkeypatch)
    assert counter.fast + counter.declined == 1


@_SETTINGS
@given(cases=_cases(_safe_text, nested=False, number=_safe_number))
def test_files_without_nested_values_take_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases: list[Case]
) -> None:
    counter = _compare(tmp_path, cases, monkeypatch)
    assert (counter.fast, counter.declined) == (1, 0)


def test_sample_runs_synthetic_and_imported_fixtures_index_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "all"
    shutil.copytree(REPO / "sample_runs", folder / "samples")
    write_synthetic_history(folder / "synthetic", runs=2, cases=30, metrics=8)
    imported = 0
    for source in sorted((REPO / "tests" / "data").rglob("*")):
        if not source.is_file() or source.suffix in (".md", ".txt"):
            continue
        try:
            run_files = importers.load_file(source)
        except RagtuiError:
            continue  # not a result file (expected outputs, judge requests, ...)
        for i, rf in enumerate(run_files):
            run = replace(rf.run, id=f"{source.parent.name}-{source.name}-{i}")
            write_run_file(folder / "imported" / f"{run.id}.ragtui.jsonl", run, rf.cases)
            imported += 1
    assert imported >= 10
    fast, slow, fast_store, slow_store, counter = index_both(folder, tmp_path, monkeypatch)
    assert fast_store.problems == [] and slow_store.problems == []
    assert fast == slow
    assert len(fast["runs"]) == 10 + 2 + imported
    assert counter.fast >= 10 + 2 + imported - 2  # nested metadata may take the Python path


def test_rows_keep_the_python_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Several blocks per file, errors next to scores, metadata: order and ordinals must match.
    monkeypatch.setattr(fastindex, "BLOCK_BYTES", 4096)
    cases = [
        Case(
            case_id=f"c{i}",
            question=f"q{i}",
            answer="a",
            scores={"m2": Score(0.5), "m1": Score(1, raw=4, scale=(1, 5))},
            errors={"m3": "timeout", "m1": "ignored: m1 was scored"},
            human={"m2": 1.0, "m1": 0.0},
            metadata={"topic": "refund", "tokens": i, "ok": True, "ratio": 0.25},
            contexts=tuple(Chunk(f"k{j}", "x" * 300) for j in range(3)),
        )
        for i in range(60)
    ]
    counter = _compare(tmp_path, cases, monkeypatch)
    assert counter.fast == 1


# ---------------------------------------------------------------- invalid lines

_GOOD = {
    "case_id": "c1",
    "question": "q",
    "answer": "a",
    "contexts": [{"id": "k1", "text": "t", "rank": 1, "score": 0.5}],
    "scores": {"f": {"value": 0.5, "scale": [1, 5], "label": "P"}},
    "claims": [{"metric": "faithfulness", "text": "t", "verdict": "SUPPORTED", "chunks": ["k1"]}],
    "errors": {"g": "timeout"},
    "human": {"f": 1.0},
    "metadata": {"topic": "refund"},
}


def _with(path: str, value: Any) -> str:
    obj = json.loads(json.dumps(_GOOD))
    *parents, last = path.split(".")
    target = obj
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is _DELETE:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return json.dumps(obj)


_DELETE = object()

BAD_LINES = {
    "not json": '{"case_id": "c1", ',
    "not an object": "[1, 2]",
    "a second header": json.dumps({"ragtui_run": 1, **_GOOD}),
    "no case id": _with("case_id", _DELETE),
    "blank case id": _with("case_id", " \u00a0\u2003"),
    "numeric case id": _with("case_id", 7),
    "no question": _with("question", _DELETE),
    "null answer": _with("answer", None),
    "reference a number": _with("reference", 3),
    "contexts an object": _with("contexts", {"id": "k"}),
    "chunk a string": _with("contexts.0", "k1"),
    "chunk null": _with("contexts.0", None),
    "chunk without id": _with("contexts.0.id", _DELETE),
    "chunk text a number": _with("contexts.0.text", 1),
    "rank a float": _with("contexts.0.rank", 1.0),
    "rank a bool": _with("contexts.0.rank", True),
    "rank past 32 bits": _with("contexts.0.rank", 2**40),
    "rank past 64 bits": _with("contexts.0.rank", 2**63 + 1),
    "latency past 2**53": _with("latency_ms", 2**53 + 1),
    "threshold past 2**53": _with("scores.f.threshold", -(2**60)),
    "chunk score a string": _with("contexts.0.score", "0.5"),
    "scores an array": _with("scores", [0.5]),
    "score a number": _with("scores.f", 0.5),
    "score without value": _with("scores.f.value", _DELETE),
    "value above one": _with("scores.f.value", 1.5),
    "value a bool": _with("scores.f.value", True),
    "value a string": _with("scores.f.value", "0.5"),
    "scale of three": _with("scores.f.scale", [1, 3, 5]),
    "scale of strings": _with("scores.f.scale", ["1", "5"]),
    "scale reversed": _with("scores.f.scale", [5, 1]),
    "label a number": _with("scores.f.label", 2),
    "threshold a string": _with("scores.f.threshold", "x"),
    "claims a string": _with("claims", "none"),
    "unknown verdict": _with("claims.0.verdict", "MAYBE"),
    "claim chunks numbers": _with("claims.0.chunks", [1]),
    "claim without text": _with("claims.0.text", _DELETE),
    "error message a number": _with("errors.g", 500),
    "errors an array": _with("errors", ["timeout"]),
    "human above one": _with("human.f", 2),
    "human null": _with("human.f", None),
    "latency a string": _with("latency_ms", "812"),
    "latency a bool": _with("latency_ms", False),
    "metadata an array": _with("metadata", [1]),
    "trailing comma": json.dumps(_GOOD)[:-1] + ", }",
    "nan literal": json.dumps({**_GOOD, "extra": 1})[:-2] + "nan}",
    "infinity in a number field": _with("latency_ms", 1e999).replace("Infinity", "1e999"),
}


def _file(folder: Path, lines: list[str | bytes]) -> Path:
    path = folder / "bad-1.ragtui.jsonl"
    body = b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines)
    path.write_bytes(dumps_line(header_to_json(replace(RUN, id="bad-1"))).encode() + body)
    return path


def _python_error(path: Path) -> str:
    with pytest.raises(RunFileError) as info:
        read_run_file(path)
    return str(info.value)


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_each_bad_line_gets_the_python_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    good = json.dumps({**_GOOD, "case_id": "c0"})
    path = _file(tmp_path, [good, BAD_LINES[kind], good.replace('"c0"', '"c2"')])
    expected = _python_error(path)
    assert ":3:" in expected
    counter = PathCounter(monkeypatch)
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == [expected]
        assert store.runs().num_rows == 0
        for table in tables.RUN_TABLES:
            assert store._cursor().execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert counter.declined == 1


@pytest.mark.parametrize(
    "raw",
    [
        b'{"case_id": "c1", "question": "\xff", "answer": "a"}',  # not UTF-8
        b'{"case_id": "c1", "question": "q\x00", "answer": "a"}',  # a raw NUL
        b'{"case_id": "c1", "question": "q", "answer": "a"',  # truncated
    ],
)
def test_bad_bytes_get_the_python_message(tmp_path: Path, raw: bytes) -> None:
    path = _file(tmp_path, [json.dumps(_GOOD).replace("c1", "c0"), raw])
    expected = _python_error(path)
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == [expected]


def test_a_repeated_case_id_gets_the_python_message(tmp_path: Path) -> None:
    path = _file(tmp_path, [json.dumps(_GOOD)] * 2)
    expected = _python_error(path)
    assert "unique" in expected
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == [expected]
        assert store._cursor().execute("SELECT count(*) FROM cases").fetchone() == (0,)


@pytest.mark.parametrize(
    "line",
    [
        # Python's json keeps the last of two equal keys; DuckDB's structs keep the first.
        '{"case_id": "c1", "question": "first", "question": "last", "answer": "a"}',
        '{"case_id": "c1", "question": "q", "answer": "a", "contexts": '
        '[{"id": "k", "text": "first", "text": "last"}]}',
        '{"case_id": "c1", "question": "q", "answer": "a", "scores": '
        '{"f": {"value": 0.5}, "f": {"value": 1.0}}}',
        '{"case_id": "c1", "question": "q", "answer": "a", "scores": '
        '{"f": {"value": 0.5, "value": 1.0}}}',
        '{"case_id": "c1", "question": "q", "answer": "a", "claims": '
        '[{"metric": "f", "text": "t", "verdict": "PARTIAL", "verdict": "SUPPORTED"}]}',
        '{"case_id": "c1", "question": "q", "answer": "a", "human": {"f": 0, "f": 1}}',
        '{"case_id": "c1", "question": "q", "answer": "a", "metadata": {"k": 1, "k": 2}}',
        # Valid for Python, not reproduced by SQL: an object as raw, nested metadata, NaN in
        # a field nobody reads, a line nested deeper than the fast path's limit.
        '{"case_id": "c1", "question": "q", "answer": "a", "scores": '
        '{"f": {"value": 1, "raw": {"grade": [4, "of", 5]}}}}',
        '{"case_id": "c1", "question": "q", "answer": "a", "metadata": {"a": {"b": [1, 2.5]}}}',
        '{"case_id": "c1", "question": "q", "answer": "a", "extra": NaN}',
        '{"case_id": "c1", "question": "q", "answer": "a", "extra": ' + "[" * 300 + "]" * 300 + "}",
        # Blank lines between cases are skipped by both; Python's json takes a UTF-8 BOM.
        '\n  \r\n{"case_id": "c1", "question": "q", "answer": "a"}',
        b'\xef\xbb\xbf{"case_id": "c1", "question": "q", "answer": "a"}',
    ],
)
def test_lines_python_reads_its_own_way_index_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str | bytes
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    _file(folder, [line])
    fast, slow, fast_store, _, counter = index_both(folder, tmp_path, monkeypatch)
    assert fast_store.problems == []
    assert fast == slow
    assert fast["cases"] and counter.fast + counter.declined == 1


def test_the_fast_path_never_leaves_the_transaction_broken(tmp_path: Path) -> None:
    # Every bad line above is refused without an SQL error (which would abort the transaction).
    con = duckdb.connect()
    con.execute(tables.SCHEMA_SQL)
    for i, line in enumerate(BAD_LINES.values()):
        path = _file(tmp_path, [json.dumps(_GOOD).replace("c1", "c0"), line])
        con.execute("BEGIN TRANSACTION")
        assert fastindex.index_cases(con, path, f"bad-{i}") is None
        assert con.execute("SELECT count(*) FROM cases").fetchone() == (0,)
        con.execute("COMMIT")


def test_many_blocks_and_a_header_only_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastindex, "BLOCK_BYTES", 1000)  # lines longer than a block, too
    write_synthetic_history(tmp_path / "runs", runs=2, cases=25)
    (tmp_path / "runs" / "empty.ragtui.jsonl").write_text(
        dumps_line(header_to_json(replace(RUN, id="empty-1"))).rstrip("\n")
    )
    fast, slow, fast_store, _, counter = index_both(tmp_path / "runs", tmp_path, monkeypatch)
    assert fast == slow and counter.fast == 3
    assert fast_store.cases("synthetic-0001").num_rows == 25
    assert fast_store.cases("empty-1").num_rows == 0


def test_content_helper_sees_differences(tmp_path: Path) -> None:
    # The comparison above would be vacuous if content() missed a changed value.
    write_synthetic_history(tmp_path / "a", runs=1, cases=3)
    write_synthetic_history(tmp_path / "b", runs=1, cases=3, seed=8)
    with Store.open(tmp_path / "a") as a, Store.open(tmp_path / "b") as b:
        ca, cb = content(a), content(b)
    assert ca["runs"] == cb["runs"] and ca["chunks"] != cb["chunks"]


def test_a_crash_inside_the_fast_path_leaves_no_partial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_synthetic_history(tmp_path, runs=1, cases=40)
    monkeypatch.setattr(fastindex, "BLOCK_BYTES", 8192)
    real = fastindex._insert_batch
    calls = {"n": 0}

    def exploding(cur: duckdb.DuckDBPyConnection, lines: Any, run_id: str) -> bool:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk on fire")
        return real(cur, lines, run_id)

    monkeypatch.setattr(fastindex, "_insert_batch", exploding)
    with Store.open(tmp_path, refresh=False) as store:
        with pytest.raises(RuntimeError, match="disk on fire"):
            store.refresh()
        for table in ("runs", "files", *tables.RUN_TABLES):
            assert store._cursor().execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    monkeypatch.setattr(fastindex, "_insert_batch", real)
    with Store.open(tmp_path) as store:
        assert store.cases("synthetic-0000").num_rows == 40
