"""Trends: one metric's per-run means over time, a line per config, CI bars, rerun spread."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, LoadingIndicator

from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.core.trends import TrendSeries, metric_trends
from ragtui.format import printable
from ragtui.tui.screens.runs import TitleBar
from ragtui.tui.widgets.trend_plot import TrendPlot, rich_color

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp


def _pts(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


class TrendsScreen(Screen[None]):
    HELP = (
        "One metric's mean per run over time, a line per config, with 95% CI bars; dots: "
        "the mean of the worst 10% of cases. **m**/**M** switch metric."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "metric(1)", "next metric", tooltip="Show the next metric"),
        Binding(
            "M", "metric(-1)", "prev metric", key_display="M", tooltip="Show the previous metric"
        ),
        Binding("escape", "back", "back", tooltip="Back to the runs"),
    ]

    def __init__(self, metrics: list[str], metric: str | None = None) -> None:
        super().__init__()
        self.metrics = metrics
        self.index = metrics.index(metric) if metric in metrics else 0
        self.cache: dict[str, list[TrendSeries]] = {}

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    @property
    def metric(self) -> str | None:
        return self.metrics[self.index] if self.metrics else None

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield LoadingIndicator(id="loading")
        yield TrendPlot(id="plot")
        yield DataTable(id="trend-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#trend-table", DataTable)
        for label in ("config", "runs", "latest", "95% CI", "rerun spread", "worst 10%", "errors"):
            table.add_column(label, key=label)
        self._title()
        self._show_metric()

    def on_resize(self) -> None:
        self._title()
        self.query_one(Footer).compact = self.size.width < 120

    def _title(self) -> None:
        title = Text("ragtui", style="bold")
        title.append(" · Trends  ")
        if self.metric is None:
            title.append("no metrics in this folder", style="dim")
        else:
            title.append(printable(self.metric), style="bold")
            title.append(f"  ({self.index + 1}/{len(self.metrics)}, m/M to switch)", style="dim")
        self.query_one(TitleBar).set_title(title, str(self.ragtui.folder))

    def _show_metric(self) -> None:
        metric, store = self.metric, self.ragtui.store
        if metric is None or store is None:
            return
        if metric in self.cache:
            self._draw(metric, self.cache[metric])
            return
        self.query_one(LoadingIndicator).display = True
        self.compute(store, metric)

    @work(thread=True, exclusive=True, group="trends")
    def compute(self, store: Store, metric: str) -> None:
        # t-intervals and the bottom decile over every run: numpy/scipy, off the UI thread
        try:
            series = metric_trends(store, metric)
        except RagtuiError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error", markup=False)
            return
        self.app.call_from_thread(self._computed, metric, series)

    def _computed(self, metric: str, series: list[TrendSeries]) -> None:
        self.cache[metric] = series
        if metric == self.metric:
            self._draw(metric, series)

    def _draw(self, metric: str, series: list[TrendSeries]) -> None:
        self.query_one(LoadingIndicator).display = False
        self.query_one(TrendPlot).draw(printable(metric), series)
        table = self.query_one("#trend-table", DataTable)
        table.clear()
        for i, one in enumerate(series):
            last = one.points[-1]
            label = Text("● ", style=rich_color(i))
            label.append(printable(one.label))
            if self.size.width >= 100:  # at 80 columns the numbers matter more than the key
                label.append(f"  {printable(one.config_key)}", style="dim")
            ci = "—" if last.ci_low is None else f"[{_pts(last.ci_low)}, {_pts(last.ci_high)}]"
            spread = one.spread
            errors = sum(p.n_errors for p in one.points)
            table.add_row(
                label,
                Text(str(len(one.points)), justify="right"),
                Text(_pts(last.mean), justify="right"),
                Text(ci, justify="right"),
                Text("—" if spread is None else f"{100 * spread:.1f} pts", justify="right"),
                Text(_pts(last.bottom), justify="right"),
                Text(str(errors) if errors else "", style="bold red", justify="right"),
            )

    def action_metric(self, step: int) -> None:
        if not self.metrics:
            return
        self.index = (self.index + step) % len(self.metrics)
        self._title()
        self._show_metric()

    def action_back(self) -> None:
        self.app.pop_screen()
