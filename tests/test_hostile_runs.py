"""Hostile JSON-valid values in every field of a run file stay that file's problem.

Each example takes a complete, valid run file, puts one hostile value (a lone surrogate, an
integer of 5,000 digits, an out-of-range date, deep nesting, escape sequences, ...) at one
place of its header or of a case (a value, or a key), and runs `ragtui runs`, `show` and
`compare` on a folder that also holds two good runs. Whatever the value, the commands exit 0,
the good runs are listed, and the hostile file is either listed as a run or named on exactly
one line (`file:line: ...`) — never a traceback.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from ragtui.cli import cli
from ragtui.core.model import (
    Case,
    Chunk,
    Claim,
    DatasetInfo,
    JudgeInfo,
    Run,
    Score,
    SourceInfo,
    StatedFigure,
)
from ragtui.core.runfile import SUFFIX, write_run_file
from tests.core.runs_factory import make_run

HOSTILE_RUN = Run(
    id="hostile-1",
    name="hostile",
    created_at="2026-11-22T10:00:00+01:00",
    config={"top_k": 3, "generator": "llama3.2:3b", "nested": {"a": [1, 2.5, "x"]}},
    judge=JudgeInfo("qwen2.5:7b", "ollama", "p1"),
    dataset=DatasetInfo("golden", "v3"),
    parent="base-1",
    kind="rejudge",
    source=SourceInfo("ragas", "results.csv", "f" * 64),
    stated=(StatedFigure("faithfulness", 0.5, raw=0.5, statistic="mean", scale=(0, 1), n=2),),
)
HOSTILE_CASE = Case(
    case_id="case-000",
    question="How long do refunds take?",
    answer="Five to ten days.",
    reference="5-10 business days.",
    contexts=(Chunk("c1", "Refunds take 5-10 days.", "refund.md", 1, 0.83),),
    scores={
        "faithfulness": Score(0.5, raw="PARTIAL", label="PARTIAL", reason="r", reply="PARTIAL"),
        "answer_relevance": Score(0.75, raw=4, scale=(1, 5), threshold=0.5, prompt_hash="p"),
    },
    claims=(Claim("faithfulness", "takes 5-10 days", "SUPPORTED", ("c1",), "in c1"),),
    errors={"context_recall": "judge reply was not valid JSON"},
    human={"faithfulness": 1.0},
    latency_ms=812,
    metadata={"tokens": 375, "tags": ["refund"]},
    cluster="refund.md",
)


class Raw:
    """JSON text put into a line as it is (a number Python cannot hold, a deep array)."""

    def __init__(self, text: str) -> None:
        self.text = text


HOSTILE: list[Any] = [
    "x\ud800y",  # a lone high surrogate
    "\udc00",  # a lone low surrogate
    "\ud83d\ude00",  # a valid pair
    Raw("9" * 5000),  # more digits than Python converts
    Raw("-" + "1" * 4301),
    2**53 + 1,
    2**64,
    -(2**63),
    Raw("1e999"),  # JSON allows it; it is infinite as a float
    1e308,
    -0.0,
    5e-324,
    "",
    " \u00a0",
    "\x1b[31mred\x1b]52;c;Zm9v\x07\x9b",  # ANSI, OSC 52, C1
    "\u202eevil\u2066",  # bidi controls
    "[bold]markup[/bold]",
    "../../etc/passwd",
    "a" * 70_000,
    None,
    True,
    0,
    -1,
    1.5,
    [],
    {},
    Raw("[" * 3000 + "]" * 3000),
    {"\ud800": 1},
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "2026-13-45T99:99:99Z",
    "SUPPORTED",
    [1, "two", None],
]


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here] if here else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*here, i))
    return found


def _put(obj: Any, path: tuple[Any, ...], value: Any, as_key: bool) -> None:
    *parents, last = path
    for step in parents:
        obj = obj[step]
    if as_key and isinstance(obj, dict):
        obj[_key(value)] = obj.pop(last)
    else:
        obj[last] = value


def _key(value: Any) -> str:
    return (
        value
        if isinstance(value, str)
        else json.dumps(value.text if isinstance(value, Raw) else value)
    )


def _dumps(obj: Any) -> str:
    """JSON text with Raw values in place (ensure_ascii keeps lone surrogates as escapes)."""
    raws: dict[str, str] = {}

    def mark(o: Any) -> Any:
        if isinstance(o, Raw):
            token = f"@@raw{len(raws)}@@"
            raws[token] = o.text
            return token
        if isinstance(o, dict):
            return {k: mark(v) for k, v in o.items()}
        if isinstance(o, list):
            return [mark(v) for v in o]
        return o

    text = json.dumps(mark(obj))
    for token, raw in raws.items():
        text = text.replace(f'"{token}"', raw)
    return text


def _hostile_file(folder: Path, line: int, seed: int, value: Any, as_key: bool) -> Path:
    path = write_run_file(folder / f"hostile-1{SUFFIX}", HOSTILE_RUN, [HOSTILE_CASE])
    objects = [json.loads(x) for x in path.read_text().splitlines()]
    target = objects[line - 1]
    place = random.Random(seed).choice(_paths(target))
    _put(target, place, value, as_key)
    path.write_text("\n".join(_dumps(o) for o in objects) + "\n", errors="surrogatepass")
    return path


def _strict(text: str) -> Any:
    """JSON as a strict parser reads it: a bare NaN or Infinity is an error, not a number."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {name} in the output")

    return json.loads(text, parse_constant=refuse)


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    line=st.sampled_from([1, 2]),
    seed=st.integers(0, 10**6),
    value=st.sampled_from(HOSTILE),
    as_key=st.booleans(),
)
# found by this test: the run's own id replaced by a path-like value (listed under that id,
# literally); the case line's "scores" key renamed, the run left with clusters and no scored
# case (compare indexed an empty grid)
@example(line=1, seed=316, value="../../etc/passwd", as_key=False)
@example(line=2, seed=166, value=-9_223_372_036_854_775_808, as_key=True)
def test_a_hostile_value_anywhere_is_one_clear_line(
    tmp_path: Path, line: int, seed: int, value: Any, as_key: bool
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    make_run(folder, "base-1", faith=[1.0, 0.5, 0.0, 1.0])
    make_run(folder, "good-1", faith=[1.0, 1.0, 0.5, 0.5], created_at="2026-11-21T10:00:00Z")
    path = _hostile_file(folder, line, seed, value, as_key)

    # the folder's config names a metadata field as the cluster: hostile metadata reaches it
    (folder / "ragtui.toml").write_text('[compare]\ncluster = "tags"\n', encoding="utf-8")
    listed = _invoke("runs", str(folder), "--json")
    assert listed.exit_code == 0, listed.output
    ids = [r["id"] for r in _strict(listed.stdout)["runs"]]
    assert {"base-1", "good-1"} <= set(ids)
    table = _invoke("runs", str(folder))  # the table form reports bad files on stderr
    assert table.exit_code == 0 and "good-1" in table.stdout
    about = [x for x in table.stderr.splitlines() if "hostile-1" in x]  # in the file's name
    # the hostile run, under whatever id its file gives it (the value may have replaced it)
    (hostile, *more) = [*(set(ids) - {"base-1", "good-1"}), None]
    assert more in ([], [None]), ids
    if hostile is not None:
        assert about == []
        # `--` before the id: a hostile id may begin with "-"
        shown = _invoke("show", "--path", str(folder), "--", hostile)
        assert shown.exit_code == 0, shown.output
        case_ids = re.findall(r"^  (\S+)", shown.stdout, flags=re.M)
        if case_ids:
            one = _invoke("show", "--path", str(folder), "--json", "--", hostile, "case-000")
            if one.exit_code == 0:
                assert _strict(one.stdout)["case_id"] == "case-000"
            else:  # the case id itself was changed: one line naming it
                assert one.exit_code == 2 and "has no case 'case-000'" in one.stderr, one.output
        # the hostile run in a comparison: a verdict, or one line saying why there is none
        against = _invoke("compare", "-p", str(folder), "--json", "--", "base-1", hostile)
        if against.exit_code == 0:
            assert isinstance(_strict(against.stdout)["metrics"], list)
        else:
            assert against.exit_code == 2 and len(against.stderr.strip().splitlines()) == 1
    else:
        assert len(about) == 1, listed.stderr
        assert re.match(rf"skipped: {re.escape(str(path))}:{line}: \S", about[0]), about[0]

    shown = _invoke("show", "good-1", "case-001", "--path", str(folder))
    assert shown.exit_code == 0 and "How long do refunds take for plan 1?" in shown.stdout
    compared = _invoke("compare", "base-1", "good-1", str(folder), "--json")
    assert compared.exit_code == 0, compared.output
    assert _strict(compared.stdout)["metrics"]
