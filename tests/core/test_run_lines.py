"""Every kind of bad case line gets one `file:line: field` message, from the reader and the
index alike, and leaves nothing indexed; any valid file reads and indexes back as written."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ragtui.core.errors import RunFileError
from ragtui.core.model import VERDICTS, Case, Chunk, Claim, JudgeInfo, Run, Score
from ragtui.core.runfile import dumps_line, header_to_json, read_run_file, write_run_file
from ragtui.core.store import Store
from tests.core.index_helpers import count
from tests.core.runs_factory import make_run

RUN = Run(
    id="bad-1",
    name="bad",
    created_at="2026-11-20T10:00:00Z",
    config={"top_k": 3},
    judge=JudgeInfo("qwen2.5:7b", "ollama", "p1"),
)
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
_DELETE = object()


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


_STRING = "expected a string"
_NUMBER = "expected a finite number"
_BIG = "expected a number of magnitude at most 2^53"
_STORE = "expected a JSON value whose numbers are finite, integers of at most 4300 digits"
_SURROGATE = "expected text without unpaired surrogate escapes (\\ud800-\\udfff)"

# kind: (line, field or None, the message after "field 'x': ")
BAD_LINES: dict[str, tuple[str, str | None, str]] = {
    "not json": ('{"case_id": "c1", ', None, "expected one JSON object per line"),
    "not an object": ("[1, 2]", None, "expected a JSON object, found array [1, 2]"),
    "a second header": (
        json.dumps({"ragtui_run": 1, **_GOOD}),
        None,
        "expected a case (the run header belongs on line 1 only)",
    ),
    "no case id": (_with("case_id", _DELETE), "case_id", _STRING),
    "blank case id": (
        _with("case_id", " \u00a0\u2003"),
        "case_id",
        'expected a non-empty case id, found str " \u00a0\u2003"',
    ),
    "numeric case id": (_with("case_id", 7), "case_id", f"{_STRING}, found int 7"),
    "no question": (_with("question", _DELETE), "question", _STRING),
    "null answer": (_with("answer", None), "answer", f"{_STRING}, found null"),
    "reference a number": (_with("reference", 3), "reference", f"{_STRING}, found int 3"),
    "cluster a number": (_with("cluster", 3), "cluster", f"{_STRING}, found int 3"),
    "contexts an object": (
        _with("contexts", {"id": "k"}),
        "contexts",
        'expected a JSON array, found object {"id": "k"}',
    ),
    "chunk a string": (_with("contexts.0", "k1"), "contexts[0]", "expected a JSON object"),
    "chunk null": (_with("contexts.0", None), "contexts[0]", "expected a JSON object, found null"),
    "chunk without id": (_with("contexts.0.id", _DELETE), "contexts[0].id", _STRING),
    "chunk text a number": (_with("contexts.0.text", 1), "contexts[0].text", _STRING),
    "rank a float": (_with("contexts.0.rank", 1.0), "contexts[0].rank", "expected a 32-bit"),
    "rank a bool": (_with("contexts.0.rank", True), "contexts[0].rank", "expected a 32-bit"),
    "rank past 32 bits": (_with("contexts.0.rank", 2**40), "contexts[0].rank", "expected a 32-bit"),
    "rank past 64 bits": (_with("contexts.0.rank", 2**63 + 1), "contexts[0].rank", "expected a 32"),
    "latency past 2**53": (_with("latency_ms", 2**53 + 2), "latency_ms", _BIG),
    "latency of 5000 digits": (
        _with("latency_ms", 0).replace('"latency_ms": 0', '"latency_ms": ' + "9" * 5000),
        "latency_ms",
        _BIG + ", found int 99999",
    ),
    "threshold past 2**53": (_with("scores.f.threshold", -(2**60)), "scores.f.threshold", _BIG),
    "chunk score a string": (
        _with("contexts.0.score", "0.5"),
        "contexts[0].score",
        f'{_NUMBER}, found str "0.5"',
    ),
    "scores an array": (_with("scores", [0.5]), "scores", "expected a JSON object"),
    "score a number": (_with("scores.f", 0.5), "scores.f", "expected a JSON object"),
    "score without value": (_with("scores.f.value", _DELETE), "scores.f.value", _NUMBER),
    "value above one": (
        _with("scores.f.value", 1.5),
        "scores.f.value",
        "expected a number in [0, 1] (normalised), found float 1.5",
    ),
    "value a bool": (_with("scores.f.value", True), "scores.f.value", _NUMBER),
    "value a string": (_with("scores.f.value", "0.5"), "scores.f.value", _NUMBER),
    "scale of three": (
        _with("scores.f.scale", [1, 3, 5]),
        "scores.f.scale",
        "expected [low, high]",
    ),
    "scale of strings": (_with("scores.f.scale", ["1", "5"]), "scores.f.scale", "expected [low"),
    "scale reversed": (
        _with("scores.f.scale", [5, 1]),
        "scores.f.scale",
        "expected [low, high] with low < high, found array [5, 1]",
    ),
    "label a number": (_with("scores.f.label", 2), "scores.f.label", _STRING),
    "threshold a string": (_with("scores.f.threshold", "x"), "scores.f.threshold", _NUMBER),
    "raw of 5000 digits": (
        _with("scores.f.raw", 0).replace('"raw": 0', '"raw": ' + "7" * 5000),
        "scores.f.raw",
        _STORE,
    ),
    "claims a string": (_with("claims", "none"), "claims", "expected a JSON array"),
    "unknown verdict": (
        _with("claims.0.verdict", "MAYBE"),
        "claims[0].verdict",
        'expected one of SUPPORTED, PARTIAL, UNSUPPORTED, found str "MAYBE"',
    ),
    "blank verdict of another metric": (
        _with("claims.0.metric", "relevancy").replace('"SUPPORTED"', '"  "'),
        "claims[0].verdict",
        "expected a verdict word",
    ),
    "claim chunks numbers": (
        _with("claims.0.chunks", [1]),
        "claims[0].chunks",
        "expected an array of chunk ids (strings), found array [1]",
    ),
    "claim without text": (_with("claims.0.text", _DELETE), "claims[0].text", _STRING),
    "error message a number": (
        _with("errors.g", 500),
        "errors.g",
        "expected an error message (string), found int 500",
    ),
    "errors an array": (_with("errors", ["timeout"]), "errors", "expected a JSON object"),
    "human above one": (_with("human.f", 2), "human.f", "expected a number in [0, 1], found int 2"),
    "human null": (_with("human.f", None), "human.f", f"{_NUMBER}, found null"),
    "latency a string": (_with("latency_ms", "812"), "latency_ms", f'{_NUMBER}, found str "812"'),
    "latency a bool": (_with("latency_ms", False), "latency_ms", f"{_NUMBER}, found bool false"),
    "latency infinite": (
        _with("latency_ms", 0).replace('"latency_ms": 0', '"latency_ms": 1e999'),
        "latency_ms",
        _BIG,
    ),
    "metadata an array": (_with("metadata", [1]), "metadata", "expected a JSON object"),
    "metadata of 5000 digits": (
        _with("metadata.n", 0).replace('"n": 0', '"n": [1, ' + "5" * 5000 + "]"),
        "metadata.n",
        _STORE,
    ),
    "a surrogate in the answer": (
        _with("answer", "x\ud800y"),
        "answer",
        f'{_SURROGATE}, found str "x\\ud800y"',
    ),
    "a surrogate in a metric name": (
        json.dumps({**_GOOD, "errors": {"m\udc00": "boom"}}),
        "errors.m\\udc00",
        _SURROGATE,
    ),
    "a surrogate in the case id": (_with("case_id", "\udbff"), "case_id", _SURROGATE),
    "a surrogate deep in metadata": (
        _with("metadata.k", {"a": ["ok", "\ud83d"]}),
        "metadata.k.a[1]",
        _SURROGATE,
    ),
    "trailing comma": (json.dumps(_GOOD)[:-1] + ", }", None, "expected one JSON object per line"),
    "nan literal": (
        _with("latency_ms", 0).replace('"latency_ms": 0', '"latency_ms": NaN'),
        None,
        "expected one JSON",
    ),
    "nested too deeply": (
        _with("metadata.k", 0).replace('"k": 0', '"k": ' + "[" * 5000 + "]" * 5000),
        None,
        "expected JSON nested less deeply",
    ),
}


def _file(folder: Path, lines: list[str | bytes]) -> Path:
    path = folder / "bad-1.ragtui.jsonl"
    body = b"".join(
        (x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass")) + b"\n" for x in lines
    )
    path.write_bytes(dumps_line(header_to_json(RUN)).encode() + body)
    return path


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_each_bad_line_is_one_clear_error_and_indexes_nothing(tmp_path: Path, kind: str) -> None:
    line, field, message = BAD_LINES[kind]
    good = json.dumps({**_GOOD, "case_id": "c0"})
    path = _file(tmp_path, [good, line, good.replace('"c0"', '"c2"')])
    where = f"{path}:3: " + ("" if field is None else f"field '{field}': ")
    with pytest.raises(RunFileError) as info:
        read_run_file(path)
    assert str(info.value).startswith(where + message), str(info.value)
    str(info.value).encode("utf-8")  # printable as it is: no lone surrogate in the message
    make_run(tmp_path, "good-1")
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == [str(info.value)]
        assert store.runs().column("run_id").to_pylist() == ["good-1"]
        assert count(store, "cases") == 5  # good-1's only


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"case_id": "c1", "question": "\xff", "answer": "a"}', "expected UTF-8 text"),
        (b'{"case_id": "c1", "question": "q\x00", "answer": "a"}', "expected one JSON object"),
        (b'{"case_id": "c1", "question": "q", "answer": "a"', "expected one JSON object"),
    ],
)
def test_bad_bytes_are_clear_errors(tmp_path: Path, raw: bytes, message: str) -> None:
    path = _file(tmp_path, [json.dumps(_GOOD).replace("c1", "c0"), raw])
    with Store.open(tmp_path) as store:
        assert len(store.problems) == 1
        assert str(store.problems[0]).startswith(f"{path}:3: {message}")
        assert count(store, "cases") == 0


def test_a_repeated_case_id_is_named_at_its_second_line(tmp_path: Path) -> None:
    path = _file(tmp_path, [json.dumps(_GOOD), "", json.dumps(_GOOD)])
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == [
            f"{path}:4: field 'case_id': expected a case id unique within the run, found str \"c1\""
        ]
        assert count(store, "cases") == 0


@pytest.mark.parametrize(
    ("line", "question"),
    [
        # JSON keeps the last of two equal keys (as Python's json does)
        ('{"case_id": "c1", "question": "first", "question": "last", "answer": "a"}', "last"),
        # blank lines between cases are skipped; a UTF-8 byte order mark is taken
        ('\n  \r\n{"case_id": "c1", "question": "q", "answer": "a"}', "q"),
        (b'\xef\xbb\xbf{"case_id": "c1", "question": "bom", "answer": "a"}', "bom"),
        ('{"case_id": "c1", "question": "q\\u0000", "answer": "a"}', "q\x00"),
    ],
)
def test_lines_json_allows_read_and_index_alike(
    tmp_path: Path, line: str | bytes, question: str
) -> None:
    _file(tmp_path, [line])
    with Store.open(tmp_path) as store:
        assert store.problems == []
        assert store.cases("bad-1").column("question").to_pylist() == [question]
        case = store.case("bad-1", "c1")
        assert case is not None and case.question == question


# ---------------------------------------------------------------- any valid file

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-(2**53), max_value=2**53)
_number = st.one_of(st.integers(-(2**53), 2**53), _finite)
_unit = st.one_of(st.floats(0, 1), st.sampled_from([0, 1, 0.5, 1e-7, 5e-324]))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30), _finite, _text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_opt_text = st.none() | _text
_cases = st.lists(
    st.builds(
        Case,
        case_id=_text.filter(lambda s: bool(s.strip())),
        question=_text,
        answer=_text,
        reference=_opt_text,
        contexts=st.lists(
            st.builds(
                Chunk,
                id=_text,
                text=_text,
                source=_opt_text,
                rank=st.none() | st.integers(-(2**31), 2**31 - 1),
                score=st.none() | _number,
            ),
            max_size=3,
        ).map(tuple),
        scores=st.dictionaries(
            _text,
            st.builds(
                Score,
                value=_unit,
                raw=_json,
                label=_opt_text,
                scale=st.none() | st.tuples(_number, _number).filter(lambda s: s[0] < s[1]),
                reason=_opt_text,
                reply=_opt_text,
                prompt_hash=_opt_text,
                threshold=st.none() | _number,
            ),
            max_size=3,
        ),
        claims=st.lists(
            st.builds(
                Claim,
                metric=_text,
                text=_text,
                verdict=st.sampled_from(VERDICTS),
                chunks=st.lists(_text, max_size=3).map(tuple),
                reason=_opt_text,
            ),
            max_size=2,
        ).map(tuple),
        errors=st.dictionaries(_text, _text, max_size=2),
        human=st.dictionaries(_text, _unit, max_size=2),
        latency_ms=st.none() | _number,
        metadata=st.dictionaries(_text, _json, max_size=3),
        cluster=_opt_text,
    ),
    max_size=5,
    unique_by=lambda c: c.case_id,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking whole indexes is slow
)
@given(cases=_cases)
def test_any_valid_file_reads_and_indexes_as_written(tmp_path: Path, cases: list[Case]) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    run = replace(RUN, id="gen-1")
    path = write_run_file(folder / "gen-1.ragtui.jsonl", run, cases)
    assert read_run_file(path).cases == tuple(cases)
    with Store.open(folder) as store:
        assert store.problems == []
        assert store.cases("gen-1").column("case_id").to_pylist() == [c.case_id for c in cases]
        # a metric both scored and failed counts as scored (the error is not a second row)
        expected = [
            (c.case_id, m, float(s.value), None) for c in cases for m, s in c.scores.items()
        ] + [
            (c.case_id, m, None, e) for c in cases for m, e in c.errors.items() if m not in c.scores
        ]
        got = [
            (r["case_id"], r["metric"], r["value"], r["error"])
            for r in store.scores(["gen-1"]).to_pylist()
        ]
        assert sorted(got, key=repr) == sorted(expected, key=repr)
        for case in cases:
            assert store.case("gen-1", case.case_id) == case
    shutil.rmtree(folder)


def test_sample_runs_and_imported_fixtures_index_as_their_files_say(tmp_path: Path) -> None:
    from ragtui import importers
    from ragtui.core.errors import RagtuiError

    repo = Path(__file__).resolve().parents[2]
    folder = tmp_path / "all"
    shutil.copytree(repo / "sample_runs", folder / "samples")
    imported = 0
    for source in sorted((repo / "tests" / "data").rglob("*")):
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
    with Store.open(folder) as store:
        assert store.problems == []
        rows = {r.id: r for r in store.run_rows()}
        samples = len(list((repo / "sample_runs").glob("*.ragtui.jsonl")))
        assert len(rows) == samples + imported
        for row in rows.values():
            written = read_run_file(row.file)
            assert store.run(row.id) == written.run
            assert row.n_cases == len(written.cases)
            expected = [
                (c.case_id, m, float(s.value), None)
                for c in written.cases
                for m, s in c.scores.items()
            ] + [
                (c.case_id, m, None, e)
                for c in written.cases
                for m, e in c.errors.items()
                if m not in c.scores
            ]
            got = [
                (r["case_id"], r["metric"], r["value"], r["error"])
                for r in store.scores([row.id]).to_pylist()
            ]
            assert sorted(got, key=repr) == sorted(expected, key=repr), row.id
            for case in written.cases[:3] + written.cases[-2:]:
                assert store.case(row.id, case.case_id) == case
