"""Trends: one metric's per-run means over time, a line per config, CI bars, rerun spread;
or (`c`) quality against cost: one dot per config, the metric against mean latency, tokens
or cost per case (`x` switches which).

When runs change on disk (a new run, a file that grew, one deleted), a line says so and `u`
computes the trends again, as on Compare and Case."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import DataTable, LoadingIndicator

from ragtui.core.costs import RunCosts, bounded_costs
from ragtui.core.store import Store
from ragtui.core.trends import CostPoint, TrendSeries, metric_trends, quality_against_cost
from ragtui.core.views import run_rows
from ragtui.format import cost_figure, printable, pts, short_metrics
from ragtui.tui.messages import RunsChanged
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.stale_line import REFRESH_KEY, FollowsTheFolder, StaleLine
from ragtui.tui.widgets.title_bar import TitleBar
from ragtui.tui.widgets.trend_plot import COST_LABELS, CostPlot, TrendPlot, rich_color

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp

COST_FIELDS = ("latency_ms", "total_tokens", "cost")


class TrendsScreen(FollowsTheFolder, Screen[None]):
    HELP = (
        "One metric's mean per run over time, a line per config, with 95% CI bars; dots: "
        "the mean of the worst 10% of cases. **m**/**M** switch metric; **c** plots quality "
        "against cost or latency; **u** updates after the runs changed on disk."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "metric(1)", "next metric", tooltip="Show the next metric"),
        Binding(
            "M", "metric(-1)", "prev metric", key_display="M", tooltip="Show the previous metric"
        ),
        Binding(
            "c",
            "cost_view",
            "quality vs cost",
            tooltip="Switch between the trend and quality against cost or latency, per config",
        ),
        Binding(
            "x",
            "cost_field",
            "cost measure",
            tooltip="Quality against: mean latency, tokens or cost per case (the next one)",
        ),
        Binding("escape", "back", "back", tooltip="Back to the runs"),
        Binding(
            REFRESH_KEY,
            "refresh_runs",
            "update",
            tooltip="Compute the trends again after the runs changed on disk",
        ),
    ]
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]

    index: var[int] = var(0, init=False)
    view: var[str] = var("trend", init=False)  # "trend" or "cost"
    cost_field: var[str] = var(COST_FIELDS[0], init=False)
    stale: reactive[tuple[str, ...]] = reactive((), init=False, bindings=True)

    def __init__(self, metrics: list[str], metric: str | None = None) -> None:
        super().__init__()
        self.metrics = metrics
        self.set_reactive(TrendsScreen.index, metrics.index(metric) if metric in metrics else 0)
        self.cache: dict[str, list[TrendSeries]] = {}
        self.costs: dict[str, RunCosts] | None = None  # read from the run files on first use

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    @property
    def metric(self) -> str | None:
        return self.metrics[self.index] if self.metrics else None

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield StaleLine(id="trends-stale", markup=False)
        yield LoadingIndicator(id="loading")
        yield TrendPlot(id="plot")
        yield CostPlot(id="cost-plot")
        yield DataTable(id="trend-table", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self._title()
        self._show()

    # ------------------------------------------------------------ state

    def watch_index(self) -> None:
        self._title()
        self._show()

    def watch_view(self, view: str) -> None:
        self.set_class(view == "cost", "-cost")
        self._title()
        self._show()

    def watch_cost_field(self) -> None:
        self._title()
        self._show()

    def _title(self) -> None:
        title = Text("ragtui", style="bold")
        title.append(" · Trends  ")
        if self.metric is None:
            title.append("no metrics in this folder", style="dim")
        else:
            title.append(printable(self.metric), style="bold")
            title.append(f"  ({self.index + 1}/{len(self.metrics)}, m/M to switch)", style="dim")
            if self.view == "cost":
                title.append(f"  against {COST_LABELS[self.cost_field]}", style="bold")
        self.query_one(TitleBar).set_title(title, str(self.ragtui.folder))

    # ------------------------------------------------------------ data

    def _show(self) -> None:
        metric, store = self.metric, self.ragtui.store
        if metric is None or store is None:
            self.query_one(LoadingIndicator).display = False
            return
        series = self.cache.get(metric)
        if series is None or (self.view == "cost" and self.costs is None):
            self.query_one(LoadingIndicator).display = True
            self.compute(store, metric, self.view == "cost")
            return
        self._draw(metric, series)

    @work(thread=True, exclusive=True, group="trends", description="compute the trends")
    def compute(self, store: Store, metric: str, with_costs: bool) -> None:
        # t-intervals and the bottom decile over every run: numpy/scipy, off the UI thread;
        # cost and latency come from the run files, read once
        try:
            series = self.cache.get(metric) or metric_trends(store, metric)
            costs = self.costs
            if with_costs and costs is None:
                # a bounded read: big run files give their latency from the index only
                costs, _ = bounded_costs(store, [r for r in store.run_rows() if r.n_cases])
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._computed, metric, series, costs)

    def _failed(self, error: str) -> None:
        """A line (in the title) and a notification; the screen stays."""
        self.query_one(LoadingIndicator).display = False
        line = Text("ragtui", style="bold")
        line.append(" · Trends  ")
        line.append(printable(error), style="bold red")
        self.query_one(TitleBar).set_title(line, str(self.ragtui.folder))
        self.notify(error, title="trends", severity="error", markup=False)

    def _computed(
        self, metric: str, series: list[TrendSeries], costs: dict[str, RunCosts] | None
    ) -> None:
        self.cache[metric] = series
        if costs is not None:
            self.costs = costs
        if metric == self.metric:
            self._show()

    # ------------------------------------------------------------ the runs changed on disk

    def on_runs_changed(self, message: RunsChanged) -> None:
        if message.changed or message.removed:
            self.stale = ("the runs",)
            self.notify(
                f"the runs changed on disk: {REFRESH_KEY} updates the trends", severity="warning"
            )

    def action_refresh_runs(self) -> None:
        store = self.ragtui.store
        if store is None:
            return
        self.stale = ()
        self.cache.clear()
        self.costs = None
        self.query_one(LoadingIndicator).display = True
        self.relist(store)

    @work(thread=True, exclusive=True, group="trends", description="list the metrics again")
    def relist(self, store: Store) -> None:
        """The metrics as they are now (a new run may bring one), then the trends."""
        try:
            _, metrics = run_rows(store)  # as Runs lists them (stated-only metrics too)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._relisted, metrics)

    def _relisted(self, metrics: list[str]) -> None:
        shown = self.metric
        self.metrics = metrics
        index = metrics.index(shown) if shown in metrics else 0
        if index != self.index:
            self.index = index  # draws it (watch_index)
            return
        self._title()
        self._show()

    # ------------------------------------------------------------ drawing

    def _draw(self, metric: str, series: list[TrendSeries]) -> None:
        self.query_one(LoadingIndicator).display = False
        table = self.query_one("#trend-table", DataTable)
        table.clear(columns=True)
        if self.view == "cost":
            assert self.costs is not None
            points = quality_against_cost(series, self.costs, COST_FIELDS)
            self.query_one(CostPlot).draw(printable(metric), self.cost_field, points)
            self._cost_table(table, metric, points)
            return
        self.query_one(TrendPlot).draw(printable(metric), series)
        labels = [dot_label(i, one.name) for i, one in enumerate(series)]
        rows = []
        for one in series:
            last = one.points[-1]
            ci = "—" if last.ci_low is None else f"[{pts(last.ci_low)}, {pts(last.ci_high)}]"
            latest = pts(last.mean) + (" (stated)" if last.stated else "")
            spread = one.spread
            errors = sum(p.n_errors for p in one.points)
            rows.append(
                [
                    Text(str(len(one.points)), justify="right"),
                    Text(latest, justify="right"),
                    Text(ci, justify="right"),
                    Text("—" if spread is None else f"{100 * spread:.1f} pts", justify="right"),
                    Text(pts(last.bottom), justify="right"),
                    Text(str(errors) if errors else "", style="bold red", justify="right"),
                    Text(printable(one.config_key), style="dim"),
                ]
            )
        headers = ("runs", "latest", "95% CI", "rerun spread", "worst 10%", "errors")
        # the config key has its own column here
        _fill(table, labels, [*headers, "config key"], [*headers, "config key"], rows)

    def _cost_table(self, table: DataTable, metric: str, points: list[CostPoint]) -> None:
        labels = [dot_label(i, p.label) for i, p in enumerate(points)]
        figures = {
            field: same_decimals([cost_figure(field, p.costs.get(field)) for p in points])
            for field in COST_FIELDS
        }
        rows = [
            [
                Text(str(p.runs), justify="right"),
                Text(pts(p.quality), justify="right"),
                *(Text(figures[field][i], justify="right") for field in COST_FIELDS),
            ]
            for i, p in enumerate(points)
        ]
        headers = fit_cost_columns(metric, labels, rows, self.size.width)
        keys = ["runs", "quality", *COST_FIELDS]
        _fill(table, labels, keys, [printable(h) for h in headers], rows)

    def on_resize(self) -> None:
        # the cost table is fitted to the width: fit it again
        if self.view == "cost" and self.metric in self.cache and self.costs is not None:
            self._show()

    # ------------------------------------------------------------ actions

    def action_metric(self, step: int) -> None:
        if self.metrics:
            self.index = (self.index + step) % len(self.metrics)

    def action_cost_view(self) -> None:
        self.view = "trend" if self.view == "cost" else "cost"

    def action_cost_field(self) -> None:
        self.cost_field = COST_FIELDS[(COST_FIELDS.index(self.cost_field) + 1) % len(COST_FIELDS)]
        if self.view != "cost":
            self.view = "cost"

    def action_back(self) -> None:
        self.app.pop_screen()


NAME_MIN = 12  # config names are not cut below this (the table scrolls instead)


def fit_cost_columns(
    metric: str, labels: list[Text], rows: list[list[Text]], width: int
) -> list[str]:
    """The cost table's headers after the config column, fitted to `width` columns: full
    ("latency per case"), then short ("latency", the metric abbreviated), then the config
    names cut with an ellipsis (in place, down to NAME_MIN), never a figure: a cost cut at the
    edge ("0.0000" of 0.00002581) reads as a real zero."""

    def needed(headers: list[str]) -> int:
        widths = [max([len(h), *(r[i].cell_len for r in rows)]) for i, h in enumerate(headers)]
        widest = max([len("config"), *(label.cell_len for label in labels)])
        return widest + sum(w + 2 for w in widths) + 2 + 2  # cell padding; a scrollbar

    full = ["runs", metric] + [
        COST_LABELS[f].removeprefix("mean ").removesuffix(" (ms)") for f in COST_FIELDS
    ]
    short = ["runs", short_metrics([metric])[metric], "latency", "tokens", "cost"]
    if needed(full) <= width:
        return full
    over = needed(short) - width
    if over > 0 and labels:
        widest = max(label.cell_len for label in labels)
        room = max(min(NAME_MIN, widest), widest - over)
        for label in labels:
            if label.cell_len > room:
                label.truncate(room, overflow="ellipsis")
    return short


def same_decimals(figures: list[str]) -> list[str]:
    """A column's plain decimal figures given one number of decimals (trailing zeros added):
    "0.0000356" among "0.00002581" reads as "0.00003560". Others ("—", "1,168 ms") stay."""

    def decimals(figure: str) -> int | None:
        whole, dot, fraction = figure.partition(".")
        plain = whole.replace(",", "").lstrip("-").isdigit() and fraction.isdigit()
        return len(fraction) if dot and plain else None

    most = max((d for d in map(decimals, figures) if d is not None), default=None)
    if most is None:
        return figures
    out = []
    for figure in figures:
        d = decimals(figure)
        out.append(figure if d is None else figure + "0" * (most - d))
    return out


def dot_label(i: int, name: str) -> Text:
    """A config's name after the dot of its colour on the plot."""
    label = Text("● ", style=rich_color(i))
    label.append(printable(name))
    return label


def _fill(
    table: DataTable,
    labels: list[Text],
    keys: list[str],
    headers: list[str],
    rows: list[list[Text]],
) -> None:
    """The config column, then one column per header, each as wide as its widest cell, then
    the rows. Widths are given, not left to the table to measure when it goes idle: a first
    frame drawn before that measure kept the header's width on screen ('1,168 m' for
    '1,168 ms', a cost of 0.00002581 shown as '0.00') until a key or a resize redrew it."""
    table.add_column("config", key="config", width=_width("config", labels))
    for i, (key, header) in enumerate(zip(keys, headers, strict=True)):
        table.add_column(Text(header), key=key, width=_width(header, [r[i] for r in rows]))
    for label, cells in zip(labels, rows, strict=True):
        table.add_row(label, *cells)


def _width(header: str, cells: list[Text]) -> int:
    """A column sized to its header and cells (measured, it was at times left at the
    header's width after a view switch: '● stri' for strict-prompt)."""
    return max([cell_len(header), *(c.cell_len for c in cells)])
