"""A noise check's words that both shells say: the pending comparison's verdict per metric,
before the reruns and with them (the CLI prints them, the Noise screen styles them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragtui.format.numbers import pts
from ragtui.format.verdicts import verdict_label

if TYPE_CHECKING:
    from ragtui.core.analysis import MetricResult
    from ragtui.core.compare import Comparison


@dataclass(frozen=True)
class VerdictMove:
    metric: str
    was: MetricResult | None  # None: the comparison before did not compare it
    now: MetricResult

    @property
    def floor(self) -> str:
        """ "  (noise floor ±3.9)", or "" without a floor."""
        f = self.now.noise_floor
        return "" if f is None else f"  (noise floor ±{pts(f)})"

    def text(self) -> str:
        was = "not compared" if self.was is None else verdict_label(self.was)
        return f"  {self.metric}  {was} → {verdict_label(self.now)}{self.floor}"


@dataclass(frozen=True)
class VerdictMoves:
    heading: str
    caveat: str | None  # said when the verdict after is another judge's
    moves: list[VerdictMove]

    def lines(self) -> list[str]:
        return [
            self.heading,
            *([self.caveat] if self.caveat else []),
            *(m.text() for m in self.moves),
        ]


def verdict_moves(before: Comparison, after: Comparison) -> VerdictMoves:
    """Per metric of `after`: the verdict before the reruns → with them. When the noise judge
    is not the one that graded A and B, the verdict after is that other judge's: said so, not
    passed off as the same verdict moved by the measured noise."""
    from ragtui.judge.prompts import same_judge

    one_judge = same_judge(before.run_a.judge, after.run_a.judge) and same_judge(
        before.run_b.judge, after.run_b.judge
    )
    if one_judge:
        heading = "verdict of the pending comparison, before → with the measured noise"
        caveat = None
    else:
        own = before.run_a.judge.model or "the runs' own judge"
        heading = (
            f"verdict of the pending comparison, graded by {own} → graded by the noise judge "
            f"{after.run_a.judge.model or 'unknown'}, with its noise"
        )
        caveat = (
            "two judges: a verdict that changed may have changed with the judge, not with "
            "the measured noise"
        )
    moves = [VerdictMove(r.metric, before.metric(r.metric), r) for r in after.metrics]
    return VerdictMoves(heading, caveat, moves)
