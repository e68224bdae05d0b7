"""The per-metric verdict table of a comparison and the notes under it (5-point rule, why,
noise budget, other judges, human-corrected estimates, agreement, warnings).

Values from the engine are fractions; everything here is shown in points (x 100). Words and
sentences come from `ragtui.format`; styles come from the verdict enum, never from text.
"""

from __future__ import annotations

import pyarrow as pa
from rich.text import Text
from textual import events, on
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from ragtui import format as fmt
from ragtui.core.compare import Agreement, Comparison, MetricResult
from ragtui.core.diagnosis import Diagnosis
from ragtui.core.verdict import (
    LowAgreement,
    NoReruns,
    NoRerunsLeft,
    Note,
    RerunIdentical,
    RerunRule,
    SameConfig,
    UnevenReruns,
    Verdict,
)
from ragtui.format import interval, p_value, pts, signed_pts
from ragtui.tui.widgets.literal import join, lit

# the CI before the error counts (mostly 0/0): at 80 columns it fits whole, where the edge
# cut it to "[-2.6," beside a long verdict
COLUMNS = (
    "metric",
    "verdict",
    "A",
    "B",
    "Δ pts",
    "95% CI",
    "p adj",
    "err A/B",
    "method",
    "noise ±",
    "MDE",
    "why",
)

METRIC_CELL = 28  # a longer metric name is cut in its middle (the line below says it whole)
WHY_MIN = 16  # below this the why column keeps this width and the table scrolls sideways

STYLES = {
    Verdict.IMPROVED: "bold green",
    Verdict.REGRESSED: "bold red",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.TOO_FEW: "yellow",
    Verdict.NO_DATA: "yellow",
    Verdict.NOT_COMPARABLE: "bold yellow",
    Verdict.NO_CHANGE: "dim",
}


def verdict_style(r: MetricResult) -> str:
    return STYLES.get(r.verdict, "")


def verdict_text(r: MetricResult) -> Text:
    """The verdict label (DESIGN.md §3's words), styled by the verdict itself."""
    return Text(fmt.verdict_label(r), style=verdict_style(r))


class MetricTable(DataTable):
    """One row per metric; the cursor's row is the metric the rest of the screen shows, its
    column the figure whose meaning the screen explains (a cell cursor: the column header it
    is under is highlighted, and hovering a header shows the same sentence as a tooltip)."""

    class MetricHighlighted(Message):
        """The cursor moved to another metric's row."""

        def __init__(self, table: MetricTable, metric: str) -> None:
            super().__init__()
            self.table, self.metric = table, metric

        @property
        def control(self) -> MetricTable:
            return self.table

    class ColumnHighlighted(Message):
        """The cursor moved to another column; `help` is the column's one-line description."""

        def __init__(self, table: MetricTable, column: str, help: str) -> None:
            super().__init__()
            self.table, self.column, self.help = table, column, help

        @property
        def control(self) -> MetricTable:
            return self.table

    class MetricSelected(Message):
        """enter (or a click on the cursor's cell) on a metric's row."""

        def __init__(self, table: MetricTable, metric: str) -> None:
            super().__init__()
            self.table, self.metric = table, metric

        @property
        def control(self) -> MetricTable:
            return self.table

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="cell", zebra_stripes=False)
        self.metric_names: list[str] = []
        self._names: dict[str, str] = {}  # each metric as its cell shows it
        self.comparison: Comparison | None = None
        self._at: tuple[int, int] = (-1, -1)  # the (row, column) last announced

    def on_mount(self) -> None:
        for name in COLUMNS:
            left = name in ("metric", "verdict", "method", "why")
            self.add_column(Text(name, justify="left" if left else "right"), key=name)
        self.columns[ColumnKey("why")].auto_width = False  # fitted to the room: _fit_why

    def show(self, comparison: Comparison) -> None:
        self.clear()
        self.comparison = comparison
        self._at = (-1, -1)
        self.metric_names = [r.metric for r in comparison.metrics]
        self._names = fmt.middle_cut_all(self.metric_names, METRIC_CELL)
        for r in comparison.metrics:
            shown = signed_pts(r.delta)
            delta_style = "green" if shown[0] == "+" else "red" if shown[0] == "-" else ""
            errors = fmt.errors_pair(r)
            self.add_row(
                self._metric_cell(r.metric, False),
                verdict_text(r),
                Text(pts(r.mean_a), justify="right"),
                Text(pts(r.mean_b), justify="right"),
                Text(shown, style=delta_style, justify="right"),
                Text(interval(r.ci_low, r.ci_high), justify="right"),
                Text(p_value(r.p_adj), justify="right"),
                Text(errors, justify="right", style="" if errors == "0/0" else "yellow"),
                Text(fmt.short_method(r)),
                Text(pts(r.noise_floor), justify="right"),
                Text(pts(r.mde), justify="right"),
                self._why_cell(fmt.verdict_reason(r, comparison.margin), verdict_style(r)),
                key=r.metric,
            )
        self.call_after_refresh(self._fit_why)

    @staticmethod
    def _why_cell(reason: str, style: str) -> Text:
        cell = lit(reason, style)
        cell.no_wrap, cell.overflow = True, "ellipsis"
        return cell

    def on_resize(self) -> None:
        self._fit_why()

    def _fit_why(self) -> None:
        """The why column takes the width the figures leave, its text cut with an ellipsis:
        the line under the table says it in full for the highlighted metric, and the figures
        stay on screen without scrolling sideways (only where they alone do not fit)."""
        why = self.columns.get(ColumnKey("why"))
        if why is None or not self.row_count or not self.size.width:
            return
        others = sum(c.get_render_width(self) for c in self.columns.values() if c is not why)
        room = self.scrollable_content_region.width - others - 2 * self.cell_padding
        width = max(min(WHY_MIN, why.content_width), min(why.content_width, room))
        if why.width != width:
            why.width = width
            # as DataTable.update_cell does: cells rendered at the old width are stale, and
            # the scrollable width is measured again when the table goes idle
            self._update_count += 1
            self._require_update_dimensions = True
            self.refresh()

    def _metric_cell(self, metric: str, current: bool) -> Text:
        """The metric cell; the current metric is marked, since a cell cursor lights one cell.
        A long name is cut in the middle, so the figures beside it stay on screen."""
        shown = self._names.get(metric, metric)
        return join(("▶ " if current else "  ", "bold"), (shown, "bold" if current else ""))

    def select_metric(self, metric: str) -> None:
        if metric in self.metric_names:
            self.move_cursor(row=self.metric_names.index(metric))

    def headline(self, comparison: Comparison) -> str | None:
        """The metric to show first: the largest regression, else the largest improvement."""
        moved = [
            r
            for r in comparison.metrics
            if r.verdict in (Verdict.REGRESSED, Verdict.IMPROVED) and r.delta
        ]
        moved.sort(key=lambda r: (r.verdict is not Verdict.REGRESSED, -abs(r.delta or 0)))
        return moved[0].metric if moved else (self.metric_names or [None])[0]

    @property
    def current(self) -> str | None:
        if not self.metric_names:
            return None
        return self.metric_names[min(self.cursor_row, len(self.metric_names) - 1)]

    @property
    def current_column(self) -> str:
        return COLUMNS[min(max(self.cursor_column, 0), len(COLUMNS) - 1)]

    def column_help(self, column: str | None = None) -> str:
        """The sentence that explains a column (the cursor's by default); the CI and method
        columns also name the current metric's method."""
        column = column or self.current_column
        r = (
            None
            if self.comparison is None or self.current is None
            else self.comparison.metric(self.current)
        )
        return fmt.column_help(column, fmt.method_name(r) if r is not None else None)

    @on(DataTable.CellHighlighted)
    def _cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        row, column = event.coordinate.row, event.coordinate.column
        old_row, old_column = self._at
        self._at = (row, column)
        if row != old_row and 0 <= row < len(self.metric_names):
            if 0 <= old_row < len(self.metric_names):
                self.update_cell_at(
                    (old_row, 0), self._metric_cell(self.metric_names[old_row], False)
                )
            self.update_cell_at((row, 0), self._metric_cell(self.metric_names[row], True))
            self.post_message(self.MetricHighlighted(self, self.metric_names[row]))
        if (row, column) != (old_row, old_column):
            name = COLUMNS[column]
            self.post_message(self.ColumnHighlighted(self, name, self.column_help(name)))

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        if self.current is not None:
            self.post_message(self.MetricSelected(self, self.current))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Hovering a column header shows what the column means."""
        meta = event.style.meta if event.style else {}
        column = meta.get("column")
        if meta.get("row") == -1 and isinstance(column, int) and 0 <= column < len(COLUMNS):
            self.tooltip = self.column_help(COLUMNS[column])
        else:
            self.tooltip = None


def rule_lines(c: Comparison, r: MetricResult | None) -> list[Text]:
    """'reruns of A differ by x.x points (rule of thumb: < 5, within it) · noise floor ±y · …'."""
    rules = [
        n for n in c.noise if isinstance(n, RerunRule) and r is not None and n.metric == r.metric
    ]
    if not rules:  # the core's own note says why, in the CLI's words
        why = next(
            (
                n
                for n in c.noise
                if isinstance(n, NoRerunsLeft) and r is not None and n.metric == r.metric
            ),
            next((n for n in c.noise if isinstance(n, NoReruns | SameConfig)), None),
        )
        said = (
            fmt.note_text(why)
            if why is not None
            else "no reruns of A or B with the same config: noise floor unknown"
        )
        rule = f"rule of thumb: reruns differ by < {fmt.margin_pts(c.margin)} points"
        return [lit(f"{said} ({rule}) · seed {c.seed}", "yellow")]
    out = []
    for n in rules:
        line = lit(fmt.rule_text(n))
        figure = f"{n.rerun_delta * 100:.1f} points"
        start = line.plain.find(figure)
        if start >= 0:
            line.stylize("bold" if n.holds else "bold red", start, start + len(figure))
        out.append(line)
    out[-1].append(f" · seed {c.seed}")
    return out


def detail_line(r: MetricResult | None, margin: float = 0.05) -> Text:
    """The selected metric's verdict with its reason and counts, so it is readable at 80 columns."""
    if r is None:
        return Text("no metric in common between A and B", style="yellow")
    reason, method = fmt.verdict_reason(r, margin), fmt.method_name(r)
    out = join((r.metric, "bold"), ": ", verdict_text(r), " — ", (reason, ""))
    out.append(f" · n {r.n}" + ("" if method in reason else f" · {method}"))  # said once
    if r.mde is not None:
        out.append(f" · MDE {r.mde * 100:.1f} pts")
    if r.fixed is not None and r.broke is not None:
        out.append(f" · B fixed {r.fixed}, broke {r.broke} (McNemar p {p_value(r.p)})")
    bad = sum(r.bad_grades())
    if bad:
        out.append(f" · errors A/B {fmt.errors_pair(r)}", style="yellow")
    if r.bottom_a is not None and r.bottom_b is not None:
        out.append(f" · worst 10% {pts(r.bottom_a)} → {pts(r.bottom_b)}")
    return out


def agreement_line(g: Agreement) -> Text:
    line = lit(fmt.agreement_text(g))
    if g.flagged:
        line.stylize("bold yellow", len(line.plain) - len(" — LOW"))
    return line


def notes(c: Comparison, metric: str | None) -> Text:
    r = c.metric(metric) if metric is not None else None
    lines = [*rule_lines(c, r), detail_line(r, c.margin)]
    if metric is not None:
        lines += [lit(fmt.budget_text(b), "dim") for b in c.budget if b.metric == metric]
        lines += [lit(fmt.judge_verdict_text(j)) for j in c.judges if j.metric == metric]
        lines += [lit(fmt.ppi_text(p)) for p in c.ppi if p.metric == metric]
    # every metric's agreement: when the judges disagree, that is the news, whatever is selected;
    # the engine's low-agreement notes say the same, so they are not repeated
    # (the selected metric's first: the box may cut the rest)
    agreements = sorted([*c.agreement, *c.human], key=lambda g: g.metric != metric)
    lines += [agreement_line(g) for g in agreements]
    # warnings about the selected metric (and about the runs) first: the box may cut the rest
    shown = [w for w in c.warnings if not isinstance(w, LowAgreement)]
    # (reruns on one side only, a caution about the method, after what is wrong with the runs)
    shown.sort(key=lambda w: (isinstance(w, UnevenReruns), not _about(w, metric)))
    lines += [lit(f"! {fmt.note_text(w)}", "yellow") for w in shown]
    return Text("\n").join(lines)


def _about(note: Note, metric: str | None) -> bool:
    if isinstance(note, RerunIdentical):
        return not note.metrics or metric in note.metrics
    return getattr(note, "metric", None) in (None, metric)


def diagnosis_lines(d: Diagnosis, metric: str) -> Text:
    """The selected metric's stage line first, then the retrieval and claim summaries, the
    classes, then the other metrics' stage lines (a short screen shows the first two)."""
    by_metric = {m.metric: m for m in d.metrics}
    lines: list[Text] = []

    def stage_line(name: str, bold: bool) -> None:
        m = by_metric.get(name)
        if m is not None:
            line = fmt.attribution_line(
                m.metric, m.delta, len(m.cases), m.by_stage(), d.same_output
            )
            lines.append(lit(line, "bold" if bold else ""))
            rule = fmt.metric_noise_rule_text(
                m.metric, m.a_reruns_used, m.a_reruns_identical, d.min_drop
            )
            if bold and rule:
                lines.append(lit(rule))

    stage_line(metric, True)
    r, c = d.retrieval, d.claims
    lines.append(
        lit(fmt.retrieval_summary(r.n_cases, r.mean_overlap, r.top_changed, r.only_a, r.only_b))
    )
    lines.append(
        lit(
            fmt.claims_summary(
                c.lost_support, c.lost_support_chunk_gone, c.fixed, c.new, c.new_unsupported
            )
        )
    )
    if metric in d.classes:
        lines.append(lit("classes · " + fmt.classes_line(metric, dict(d.classes[metric]))))
    for name in by_metric:
        if name != metric:
            stage_line(name, False)
    return Text("\n").join(lines)


def metrics_table(c: Comparison) -> pa.Table:
    """The verdict table as exported: figures as fractions (as --json), words beside them."""
    rows = []
    for m in c.metrics:
        rows.append(
            {
                "a": c.a,
                "b": c.b,
                "metric": m.metric,
                "verdict": fmt.verdict_label(m),
                "n": m.n,
                "mean_a": m.mean_a,
                "mean_b": m.mean_b,
                "delta": m.delta,
                "ci_low": m.ci_low,
                "ci_high": m.ci_high,
                "method": fmt.method_name(m),
                "p": m.p,
                "p_adj": m.p_adj,
                "noise_floor": m.noise_floor,
                "mde": m.mde,
                "errors_a": m.bad_grades()[0],
                "errors_b": m.bad_grades()[1],
                "why": fmt.verdict_reason(m, c.margin),
            }
        )
    return pa.Table.from_pylist(rows)
