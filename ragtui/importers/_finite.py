"""NaN and infinities a foreign file carries outside its scores, made writable.

Python's json writes NaN/Infinity by default, so result files hold them (an Inspect stderr of
NaN, a harness's cost or a dataset's metadata field). A run file is strict JSON: a value ragtui
only carries along (metadata, config, a refused score's raw value) keeps what the file said as
text ("NaN", "Infinity", "-Infinity"), and a number ragtui reads (a stated figure, a latency,
a retrieval score, a threshold) is left unknown (None). Without this the import wrote the run,
read it back and refused it, blaming the output folder.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ragtui.core.model import Case, Chunk, RunFile, Score, StatedFigure


def _text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def carried(value: Any) -> Any:
    """Free-form data with every non-finite float as the text JSON writers give it."""
    if isinstance(value, float) and not math.isfinite(value):
        return _text(value)
    if isinstance(value, dict):
        return {k: carried(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [carried(v) for v in value]
    return value


def _number(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _score(score: Score) -> Score:
    return replace(score, raw=carried(score.raw), threshold=_number(score.threshold))


def _chunk(chunk: Chunk) -> Chunk:
    return replace(chunk, score=_number(chunk.score)) if chunk.score is not None else chunk


def _case(case: Case) -> Case:
    return replace(
        case,
        metadata=carried(dict(case.metadata)),
        scores={m: _score(s) for m, s in case.scores.items()},
        contexts=tuple(_chunk(c) for c in case.contexts),
        latency_ms=_number(case.latency_ms),
        human={k: v for k, v in case.human.items() if math.isfinite(v)},
    )


def _figure(figure: StatedFigure) -> StatedFigure:
    return replace(figure, value=_number(figure.value), raw=carried(figure.raw))


def finite_runs(runs: list[RunFile]) -> list[RunFile]:
    """The runs with nothing a strict JSON writer refuses."""
    out = []
    for rf in runs:
        run = replace(
            rf.run,
            config=carried(dict(rf.run.config)),
            stated=tuple(_figure(f) for f in rf.run.stated),
        )
        out.append(RunFile(run=run, cases=tuple(_case(c) for c in rf.cases)))
    return out
