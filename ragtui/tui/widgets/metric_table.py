"""The per-metric verdict table of a comparison and the notes under it (5% rule, warnings, agreement).

Values from the engine are fractions; everything here is shown in points (x 100).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ragtui.core.compare import Agreement, Comparison, MetricResult
from ragtui.format import interval, p_value, pts, signed_pts
from ragtui.tui.widgets.literal import join, lit

COLUMNS = ("metric", "verdict", "A", "B", "Δ pts", "95% CI", "p adj", "noise ±", "MDE", "why")


def verdict_style(r: MetricResult) -> str:
    if r.verdict == "improved":
        return "bold green"
    if r.verdict == "regressed":
        return "bold red"
    if r.reason.startswith("inconclusive") or r.verdict == "no data":
        return "yellow"
    return "dim"


def verdict_text(r: MetricResult) -> Text:
    """The verdict word, with the qualifier of a within-noise verdict (as DESIGN.md §3 names it)."""
    word = r.verdict
    if r.verdict == "within noise" and r.reason == "no meaningful change":
        word = "no meaningful change"
    elif r.verdict == "within noise" and r.reason.startswith("inconclusive"):
        word = "inconclusive"
    return Text(word, style=verdict_style(r))


class MetricTable(DataTable):
    """One row per metric; the highlighted row is the metric the rest of the screen shows."""

    DEFAULT_CSS = "MetricTable { height: auto; max-height: 12; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.metric_names: list[str] = []

    def on_mount(self) -> None:
        for name in COLUMNS:
            self.add_column(
                Text(name, justify="left" if name in ("metric", "verdict", "why") else "right")
            )

    def show(self, comparison: Comparison) -> None:
        self.clear()
        self.metric_names = [r.metric for r in comparison.metrics]
        for r in comparison.metrics:
            ci = interval(r.ci_low, r.ci_high)
            shown = signed_pts(r.delta)
            delta_style = "green" if shown[0] == "+" else "red" if shown[0] == "-" else ""
            self.add_row(
                lit(r.metric),
                verdict_text(r),
                Text(pts(r.mean_a), justify="right"),
                Text(pts(r.mean_b), justify="right"),
                Text(shown, style=delta_style, justify="right"),
                Text(ci, justify="right"),
                Text(p_value(r.p_adj), justify="right"),
                Text(pts(r.noise_floor), justify="right"),
                Text(pts(r.mde), justify="right"),
                lit(r.reason, verdict_style(r)),
                key=r.metric,
            )

    def select_metric(self, metric: str) -> None:
        if metric in self.metric_names:
            self.move_cursor(row=self.metric_names.index(metric))

    def headline(self, comparison: Comparison) -> str | None:
        """The metric to show first: the largest regression, else the largest improvement."""
        moved = [
            r for r in comparison.metrics if r.verdict in ("regressed", "improved") and r.delta
        ]
        moved.sort(key=lambda r: (r.verdict != "regressed", -abs(r.delta or 0)))
        return moved[0].metric if moved else (self.metric_names or [None])[0]

    @property
    def current(self) -> str | None:
        if not self.metric_names:
            return None
        return self.metric_names[min(self.cursor_row, len(self.metric_names) - 1)]


def rule_line(c: Comparison, r: MetricResult | None) -> Text:
    """'reruns of A differ by x.x points (rule of thumb: < 5) · noise floor ±y · seed N'."""
    margin = f"{c.margin * 100:g}"
    if r is None or r.rerun_delta is None or r.noise_floor is None:
        return Text(
            f"no reruns of A or B with the same config: noise floor unknown (rule of thumb: "
            f"reruns differ by < {margin} points) · seed {c.seed}",
            style="yellow",
        )
    side = "A" if len(c.reruns_a) > 1 else "B"
    over = r.rerun_delta > c.margin + 1e-9
    out = Text()
    out.append(f"reruns of {side} differ by ")
    out.append(f"{r.rerun_delta * 100:.1f} points", style="bold red" if over else "bold")
    out.append(
        f" (rule of thumb: < {margin}) · noise floor ±{r.noise_floor * 100:.1f}"
        f" ({r.noise_runs} runs) · seed {c.seed}"
    )
    return out


def detail_line(r: MetricResult | None) -> Text:
    """The selected metric's verdict with its reason and counts, so it is readable at 80 columns."""
    if r is None:
        return Text("no metric in common between A and B", style="yellow")
    out = join((r.metric, "bold"), ": ", verdict_text(r), " — ", (r.reason, ""))
    out.append(f" · n {r.n}")
    if r.mde is not None:
        out.append(f" · MDE {r.mde * 100:.1f} pts")
    if r.fixed is not None and r.broke is not None:
        mc = "" if r.mcnemar_p is None else f" (McNemar p {p_value(r.mcnemar_p)})"
        out.append(f" · B fixed {r.fixed}, broke {r.broke}{mc}")
    if r.errors:
        out.append(f" · {r.errors} errored", style="yellow")
    if r.bottom_a is not None and r.bottom_b is not None:
        out.append(f" · worst 10% {pts(r.bottom_a)} → {pts(r.bottom_b)}")
    return out


def agreement_line(g: Agreement) -> Text:
    figures = " · ".join(f"{k} {v:.2f}" for k, v in (("κ", g.kappa), ("ρ", g.rho)) if v is not None)
    flips = ", ".join(g.flipped[:5]) + (", …" if len(g.flipped) > 5 else "")
    return join(
        ("agreement ", "bold"),
        (g.metric, ""),
        f" ({g.between}): {figures or 'n/a'} · {len(g.flipped)} of {g.n} flipped",
        (f" ({flips})" if flips else "", "dim"),
        Text("  ! low", style="bold yellow") if g.flagged else "",
    )


def notes(c: Comparison, metric: str | None) -> Text:
    r = c.metric(metric) if metric is not None else None
    lines = [rule_line(c, r), detail_line(r)]
    # every metric's agreement: when the judges disagree, that is the news, whatever is selected;
    # the engine's "low agreement" warnings say the same, so they are not repeated
    agreements = [*c.agreement, *c.human]
    lines += [agreement_line(g) for g in agreements]
    said = tuple(f"{g.metric}: low agreement" for g in agreements)
    lines += [lit(f"! {w}", "yellow") for w in c.warnings if not w.startswith(said)]
    return Text("\n").join(lines)
