"""The run file format as typed msgspec structs: one decoder for reading and for indexing.

A line is decoded in C straight into these structs, which checks every JSON type and range on
the way. What types cannot say (a non-blank id, a verdict word, low < high) is checked after,
in `check_case` / `check_header`. When a line fails, `explain` turns the decoder's error (which
carries the field path) into the project's message: `file:line: field 'x': expected …, found …`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Struct

from ragtui.core.model import VERDICTS, is_faithfulness

FORMAT_VERSION = 1
MAX_EXACT = 2**53  # larger numbers do not survive a float64 column

# Numbers keep their JSON type (an int stays an int), so a file written again gives the same bytes.
Number = (
    Annotated[int, Meta(ge=-MAX_EXACT, le=MAX_EXACT)]
    | Annotated[float, Meta(ge=-MAX_EXACT, le=MAX_EXACT)]
)
Unit = Annotated[int, Meta(ge=0, le=1)] | Annotated[float, Meta(ge=0, le=1)]
Rank = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
Count = Annotated[int, Meta(ge=0, lt=MAX_EXACT)]
Scale = tuple[Number, Number]


class ChunkLine(Struct, gc=False):
    id: str
    text: str
    source: str | None = None
    rank: Rank | None = None
    score: Number | None = None


class ScoreLine(Struct, gc=False):
    value: Unit
    raw: Any = None
    label: str | None = None
    scale: Scale | None = None
    reason: str | None = None
    reply: str | None = None
    prompt_hash: str | None = None
    threshold: Number | None = None


class ClaimLine(Struct, gc=False):
    metric: str
    text: str
    verdict: str
    chunks: list[str] | None = None
    reason: str | None = None


class CaseLine(Struct, gc=False):
    case_id: str
    question: str
    answer: str
    reference: str | None = None
    contexts: list[ChunkLine] | None = None
    scores: dict[str, ScoreLine] | None = None
    claims: list[ClaimLine] | None = None
    errors: dict[str, str] | None = None
    human: dict[str, Unit] | None = None
    latency_ms: Number | None = None
    metadata: dict[str, Any] | None = None
    cluster: str | None = None
    ragtui_run: Any = UNSET  # only to say that a header does not belong here


class JudgeLine(Struct, gc=False):
    model: str | None = None
    provider: str | None = None
    prompt_hash: str | None = None


class DatasetLine(Struct, gc=False):
    name: str | None = None
    version: str | None = None


class SourceLine(Struct, gc=False):
    format: str
    path: str | None = None
    sha256: str | None = None


class StatedLine(Struct, gc=False):
    metric: str
    value: Unit | None = None
    raw: Any = None
    statistic: str | None = None
    scale: Scale | None = None
    n: Count | None = None


class HeaderLine(Struct, gc=False):
    ragtui_run: Any
    id: str
    created_at: str
    name: str | None = None
    config: dict[str, Any] | None = None
    config_key: str | None = None
    judge: JudgeLine | None = None
    dataset: DatasetLine | None = None
    parent: str | None = None
    kind: str | None = None
    source: SourceLine | None = None
    stated: list[StatedLine] | None = None


CASE_DECODER = msgspec.json.Decoder(CaseLine)
HEADER_DECODER = msgspec.json.Decoder(HeaderLine)

# ---------------------------------------------------------------- what each field expects
#
# Keyed by the field path with list positions as [] and free object keys as *. A pair is
# (wrong JSON type, right type out of range). A path not listed takes its parent's entry.

_NUMBER = ("a finite number", "a number of magnitude at most 2^53")
_TEXT = "a string"
_JSON = "a JSON value whose numbers are finite, integers of at most 4300 digits"
EXPECTED: dict[str, str | tuple[str, str]] = {
    "": "a JSON object",
    "case_id": _TEXT,
    "question": _TEXT,
    "answer": _TEXT,
    "reference": _TEXT,
    "cluster": _TEXT,
    "contexts": "a JSON array",
    "contexts[]": "a JSON object",
    "contexts[].id": _TEXT,
    "contexts[].text": _TEXT,
    "contexts[].source": _TEXT,
    "contexts[].rank": "a 32-bit integer",
    "contexts[].score": _NUMBER,
    "scores": "a JSON object",
    "scores.*": "a JSON object",
    "scores.*.value": ("a finite number", "a number in [0, 1] (normalised)"),
    "scores.*.raw": _JSON,
    "scores.*.label": _TEXT,
    "scores.*.scale": "[low, high] with low < high",
    "scores.*.reason": _TEXT,
    "scores.*.reply": _TEXT,
    "scores.*.prompt_hash": _TEXT,
    "scores.*.threshold": _NUMBER,
    "claims": "a JSON array",
    "claims[]": "a JSON object",
    "claims[].metric": _TEXT,
    "claims[].text": _TEXT,
    "claims[].verdict": _TEXT,
    "claims[].chunks": "an array of chunk ids (strings)",
    "claims[].reason": _TEXT,
    "errors": "a JSON object",
    "errors.*": "an error message (string)",
    "human": "a JSON object",
    "human.*": ("a finite number", "a number in [0, 1]"),
    "latency_ms": _NUMBER,
    "metadata": "a JSON object",
    "metadata.*": _JSON,
    # the header
    "ragtui_run": f'the run header (an object with "ragtui_run": {FORMAT_VERSION}) on line 1',
    "id": _TEXT,
    "created_at": _TEXT,
    "name": _TEXT,
    "config": "a JSON object",
    "config.*": _JSON,
    "config_key": _TEXT,
    "judge": "a JSON object",
    "judge.model": _TEXT,
    "judge.provider": _TEXT,
    "judge.prompt_hash": _TEXT,
    "dataset": "a JSON object",
    "dataset.name": _TEXT,
    "dataset.version": _TEXT,
    "parent": _TEXT,
    "kind": _TEXT,
    "source": "a JSON object",
    "source.format": _TEXT,
    "source.path": _TEXT,
    "source.sha256": _TEXT,
    "stated": "a JSON array",
    "stated[]": "a JSON object",
    "stated[].metric": _TEXT,
    "stated[].value": ("a finite number", "a number in [0, 1] (normalised) or null"),
    "stated[].raw": _JSON,
    "stated[].statistic": _TEXT,
    "stated[].scale": "[low, high] with low < high",
    "stated[].n": ("a count of cases (integer >= 0)", "a count of cases (integer >= 0)"),
}
# Struct types behind each free-keyed object, to find which key holds the bad value.
FREE_KEYS: dict[str, Any] = {
    "scores": ScoreLine,
    "errors": str,
    "human": Unit,
    "metadata": Any,
    "config": Any,
}


class LineProblem(Exception):
    """A problem with one line: the field path (None: the line), what was expected, and the
    offending value when there is one to show. The reader adds the file and line number."""

    def __init__(self, field: str | None, expected: str, found: Any = ...) -> None:
        super().__init__(expected)
        self.field = field
        self.expected = expected
        self.found = found


# ---------------------------------------------------------------- checks types cannot express


def check_case(case: CaseLine) -> None:
    if case.ragtui_run is not UNSET:
        raise LineProblem(None, "a case (the run header belongs on line 1 only)")
    if not case.case_id.strip():
        raise LineProblem("case_id", "a non-empty case id", case.case_id)
    if case.scores:
        for metric, score in case.scores.items():
            if score.scale is not None and not score.scale[0] < score.scale[1]:
                raise LineProblem(f"scores.{metric}.scale", EXPECTED["scores.*.scale"], score.scale)  # type: ignore[arg-type]
    if case.claims:
        for i, claim in enumerate(case.claims):
            if claim.verdict not in VERDICTS and is_faithfulness(claim.metric):
                raise LineProblem(
                    f"claims[{i}].verdict", "one of " + ", ".join(VERDICTS), claim.verdict
                )
            if not claim.verdict.strip():
                raise LineProblem(f"claims[{i}].verdict", "a verdict word", claim.verdict)


RUN_KINDS = ("eval", "rejudge", "rerun")


def check_header(header: HeaderLine) -> datetime:
    """The header's own rules; returns created_at as a naive UTC datetime (the index's)."""
    version = header.ragtui_run
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise LineProblem("ragtui_run", f"format version {FORMAT_VERSION}", version)
    if not header.id.strip():
        raise LineProblem("id", "a non-empty run id", header.id)
    if header.kind is not None and header.kind not in RUN_KINDS:
        raise LineProblem("kind", "one of " + ", ".join(RUN_KINDS), header.kind)
    for i, figure in enumerate(header.stated or ()):
        if figure.scale is not None and not figure.scale[0] < figure.scale[1]:
            raise LineProblem(f"stated[{i}].scale", EXPECTED["stated[].scale"], figure.scale)
    return utc_moment(header.created_at)


def utc_moment(stamp: str) -> datetime:
    """An ISO 8601 date-time as naive UTC; its offset must keep it within years 1-9999."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise LineProblem(
            "created_at", "an ISO 8601 date-time such as 2026-11-20T10:00:00Z", stamp
        ) from None
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        raise LineProblem(
            "created_at", "a date-time within years 1 to 9999 once converted to UTC", stamp
        ) from None
