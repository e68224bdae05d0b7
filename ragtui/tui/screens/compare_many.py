"""Compare many: several candidates against one baseline in one table (candidate × metric, each
with Δ, CI, Holm-adjusted p over every test of the table, and verdict), sortable.

`s` cycles the order (or click a header), `m` shows one metric (a ranking of the candidates),
enter opens the highlighted pair on Compare. The statistics run in a thread worker.

Opened by `v` ("against every other config", `all_configs`), the candidates are the base's
other configs: a config that appears in (or vanishes from) the open folder marks the table
stale, and `u` lists the configs again. Opened with a list of candidates (several `b` marks on
Runs), the list is the user's and stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pyarrow as pa
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ragtui.core.errors import RagtuiError
from ragtui.core.multi_compare import Cell, MultiComparison
from ragtui.core.verdict import Verdict
from ragtui.format import (
    GLOSSARY,
    HOLM_ACROSS_TABLE,
    interval,
    many_notes,
    p_value,
    printable,
    pts,
    short_metrics,
    short_verdict,
    signed_pts,
)
from ragtui.services import comparing
from ragtui.tui.messages import RunsChanged
from ragtui.tui.sharing import copy_markdown, export
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.literal import join, lit
from ragtui.tui.widgets.metric_table import STYLES
from ragtui.tui.widgets.stale_line import (
    NEW,
    REFRESH_KEY,
    FollowsTheFolder,
    StaleLine,
    changed_sides,
)
from ragtui.tui.widgets.title_bar import FittedLine, Name

COLUMNS = ("candidate", "metric", "N", "A", "B", "Δ pts", "95% CI", "p adj", "verdict")
# the orders `s` cycles through: (name, sort key over a cell and its candidate's position)
SORTS = ("as given", "Δ, worst first", "Δ, best first", "p adj", "verdict")
_BY_HEADER = {"candidate": "as given", "metric": "as given", "p adj": "p adj", "verdict": "verdict"}
_VERDICT_ORDER = {v.value: i for i, v in enumerate(Verdict)}


def sorted_cells(m: MultiComparison, order: str, metric: str | None) -> list[Cell]:
    """The table's rows: every cell (or one metric's), in the order asked; cells without a Δ
    or p stay last whatever the order."""
    position = {c: i for i, c in enumerate(m.candidates)}
    metrics = {name: i for i, name in enumerate(m.metrics)}
    cells = [c for c in m.cells if metric is None or c.metric == metric]

    def given(c: Cell) -> tuple[int, int]:
        return position[c.candidate], metrics[c.metric]

    if order == "Δ, worst first":
        return sorted(cells, key=lambda c: (c.delta is None, c.delta or 0.0, given(c)))
    if order == "Δ, best first":
        return sorted(cells, key=lambda c: (c.delta is None, -(c.delta or 0.0), given(c)))
    if order == "p adj":
        return sorted(cells, key=lambda c: (c.p_adj is None, c.p_adj or 0.0, given(c)))
    if order == "verdict":
        return sorted(cells, key=lambda c: (_VERDICT_ORDER.get(c.verdict, 99), given(c)))
    return sorted(cells, key=given)


def cells_table(m: MultiComparison, cells: list[Cell]) -> pa.Table:
    """The cells as exported, those on screen in its order (as `y` copies them): fractions
    (as --json), the candidate's name beside its id."""
    names = dict(zip(m.candidates, m.names, strict=True))
    return pa.Table.from_pylist(
        [
            {"base": m.base, "candidate": c.candidate, "name": names[c.candidate]} | c.__dict__
            for c in cells
        ]
    )


def markdown_table(m: MultiComparison, cells: list[Cell]) -> str:
    from ragtui.format import md_code
    from ragtui.format import md_inline as md

    names = dict(zip(m.candidates, m.names, strict=True))
    tests = sum(c.p is not None for c in m.cells)
    out = [
        f"# ragtui: {md(m.base_name)} against {len(m.candidates)} candidates",
        "",
        f"Base {md_code(m.base)} · Holm over all {tests} tests · margin ±{m.margin * 100:g} points"
        f" · seed {m.seed} · figures in points",
        "",
        "| candidate | metric | N | A | B | Δ pts | 95% CI | p adj | verdict |",
        "|---|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for c in cells:
        out.append(
            f"| {md(names[c.candidate])} ({md_code(c.candidate, in_table=True)}) | "
            f"{md(c.metric)} | {c.n} | "
            f"{pts(c.mean_a)} | {pts(c.mean_b)} | {signed_pts(c.delta)} | "
            f"{interval(c.ci_low, c.ci_high)} | {p_value(c.p_adj)} | **{md(c.verdict)}** |"
        )
    if m.notes:
        out += ["", *(f"- {md(w)}" for w in many_notes(m))]
    return "\n".join(out) + "\n"


NAME_MIN = 12  # candidate names are not cut below this (the table scrolls instead)


def _add_columns(table: DataTable[Text], shown: Sequence[str] = COLUMNS) -> None:
    for name in shown:
        left = name in ("candidate", "metric", "verdict")
        table.add_column(Text(name, justify="left" if left else "right"), key=name)


def _texts(c: Cell, name: str) -> list[Text]:
    """One row's cells, the candidate's name and the metric in full (shown literally)."""
    style = STYLES.get(Verdict(c.verdict), "") if c.verdict in _VERDICT_ORDER else ""
    shown = signed_pts(c.delta)
    return [
        lit(name),
        lit(c.metric),
        Text(str(c.n), justify="right"),
        Text(pts(c.mean_a), justify="right"),
        Text(pts(c.mean_b), justify="right"),
        Text(
            shown,
            justify="right",
            style="green" if shown[0] == "+" else "red" if shown[0] == "-" else "",
        ),
        Text(interval(c.ci_low, c.ci_high), justify="right"),
        Text(p_value(c.p_adj), justify="right"),
        Text(c.verdict, style=style),
    ]


# where the figures do not fit, these columns go first, in this order: A (the base's mean,
# the same on every row of a metric) and N (the cases, the same on most rows)
DROPPABLE = ("N", "A")


def _fit(rows: list[list[Text]], cells: list[Cell], width: int) -> tuple[dict[str, str], list[str]]:
    """Fit the rows to `width` columns, in place: metric names shortened (unique within the
    table) where the full ones do not fit, then candidate names cut with an ellipsis (down to
    NAME_MIN), then the verdicts in their short forms ("no change", "too few"), then the
    columns N and A left out; never a figure cut, nor a verdict: one cut at the edge ("no
    mea", "too fe") is half a word. Returns the short metric names used (metric -> short),
    for a legend, and the columns shown."""
    shown = list(COLUMNS)

    def needed(rows: list[list[Text]]) -> int:
        widest = [
            max([len(h), *(r[i].cell_len for r in rows)])
            for i, h in enumerate(COLUMNS)
            if h in shown
        ]
        return sum(w + 2 for w in widest) + 2  # a cell's padding; room for a scrollbar

    short: dict[str, str] = {}
    if rows and needed(rows) > width:
        short = short_metrics(c.metric for c in cells)
        for r, c in zip(rows, cells, strict=True):
            r[1] = lit(short[c.metric])
    over = needed(rows) - width if rows else 0
    if over > 0:
        widest = max(r[0].cell_len for r in rows)
        room = max(min(NAME_MIN, widest), widest - over)
        for r in rows:
            if r[0].cell_len > room:
                r[0].truncate(room, overflow="ellipsis")
    if rows and needed(rows) > width:
        verdict = COLUMNS.index("verdict")
        for r in rows:
            r[verdict] = Text(short_verdict(r[verdict].plain), style=r[verdict].style)
    for column in DROPPABLE:
        if rows and needed(rows) > width:
            shown.remove(column)
    return {m: s for m, s in short.items() if s != m}, shown


class CompareManyScreen(FollowsTheFolder, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back", tooltip="Back"),
        Binding(
            "enter",
            "open_pair",
            "compare pair",
            priority=True,
            tooltip="Open the highlighted candidate against the base on Compare",
        ),
        Binding("s", "next_sort", "sort", tooltip="Next order: Δ worst/best first, p adj, verdict"),
        Binding("m", "next_metric", "metric", tooltip="One metric (a ranking), or all"),
        Binding("y", "copy", "copy", tooltip="Copy the table as Markdown (OSC 52)"),
        Binding("e", "export", "export", tooltip="Export the table: CSV, JSON, Parquet"),
        Binding(
            REFRESH_KEY,
            "refresh_runs",
            "update",
            tooltip="Compare again after the runs changed (opened by v: every config as it is now)",
        ),
    ]

    order: reactive[str] = reactive(SORTS[0], init=False)
    metric: reactive[str | None] = reactive(None, init=False)
    stale: reactive[tuple[str, ...]] = reactive((), init=False, bindings=True)
    result: var[MultiComparison | None] = var(None, always_update=True)

    class Compared(Message):
        def __init__(self, result: MultiComparison) -> None:
            super().__init__()
            self.result = result

    class Failed(Message):
        def __init__(self, what: str, error: str) -> None:
            super().__init__()
            self.what, self.error = what, error

    class SidesChecked(Message):
        def __init__(self, sides: list[str]) -> None:
            super().__init__()
            self.sides = sides

    def __init__(self, base: str, candidates: list[str], *, all_configs: bool = False) -> None:
        super().__init__()
        self.base, self.candidates = base, list(candidates)
        self.all_configs = all_configs  # the candidates are "every other config" (`v`)
        self.rows: list[Cell] = []
        self.shown_columns: list[str] = list(COLUMNS)  # less N and A where too narrow

    def compose(self) -> ComposeResult:
        yield FittedLine(*self._title(), id="many-title", classes="screen-title")
        yield StaleLine(id="many-stale", markup=False)
        with Vertical(id="many-body"):
            yield Static(id="many-caption", markup=False)
            yield DataTable(id="many-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="many-notes", markup=False)
        yield KeyBar()

    def _title(self, m: MultiComparison | None = None) -> list[str | tuple[str, str] | Name]:
        """The title's parts: the base's name gives way (cut in the middle) before the rest."""
        base = self.base if m is None else m.base_name
        n = len(self.candidates)
        tests = "" if m is None else f" · Holm over {sum(c.p is not None for c in m.cells)} tests"
        return [
            ("ragtui · Compare many  ", "bold"),
            "base ",
            Name(base),
            f"  vs  {n} candidate{'s' if n != 1 else ''}{tests}",
        ]

    def on_mount(self) -> None:
        _add_columns(self.query_one("#many-table", DataTable))
        self.query_one("#many-body").loading = True
        self.compute()

    # ------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, group="many", exit_on_error=False)
    def compute(self) -> None:
        workspace = self.app.workspace  # type: ignore[attr-defined]
        try:
            candidates = self.candidates
            if self.all_configs:  # the configs as they are now (a new one joins on `u`)
                candidates = comparing.other_configs(workspace, self.base)
                if not candidates:
                    raise RagtuiError("no other config of the base's dataset to compare with")
            result = comparing.compare_several(workspace, self.base, candidates)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.post_message(self.Failed("compare many", str(err)))
            return
        self.post_message(self.Compared(result))

    @work(thread=True, group="many-stale", exit_on_error=False)
    def check_sides(self, changed: list[str], removed: list[str]) -> None:
        candidates = list(self.candidates)
        sides = {"the base": self.base} | {f"candidate {c}": c for c in candidates}
        shown: dict[str, tuple[str, ...]] = {}
        if self.result is not None:  # the reruns each side's figures were averaged from
            made_from = self.result.reruns
            shown = {"the base": made_from.get(self.result.base, ())}
            shown |= {f"candidate {c}": made_from.get(c, ()) for c in candidates}
        try:
            hit = changed_sides(self.app.store, sides, changed, removed, shown=shown)  # type: ignore[attr-defined]
            if self.all_configs and "the base" not in hit:
                added, gone = comparing.other_configs_changed(
                    self.app.workspace,  # type: ignore[attr-defined]
                    self.base,
                    candidates,
                )
                hit += [f"{NEW} ({name})" for name in added]
                hit += [f"candidate {c}" for c in gone]
        except Exception as err:
            self.post_message(self.Failed("update check", str(err)))
            return
        self.post_message(self.SidesChecked(list(dict.fromkeys(hit))))

    # ------------------------------------------------------------ results

    @on(Compared)
    def _compared(self, message: Compared) -> None:
        self.candidates = list(message.result.candidates)
        self.result = message.result
        self.query_one("#many-body").loading = False
        self.query_one("#many-title", FittedLine).update(*self._title(message.result))
        self._fill()
        self.query_one("#many-table", DataTable).focus()

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        text = f"{message.what}: {message.error}"
        self.query_one("#many-body").loading = False
        self.query_one("#many-notes", Static).update(lit(text, "bold red"))
        self.notify(printable(text), severity="error", markup=False)

    def on_runs_changed(self, message: RunsChanged) -> None:
        self.check_sides(list(message.changed), list(message.removed))

    @on(SidesChecked)
    def _sides_checked(self, message: SidesChecked) -> None:
        if message.sides:
            self.stale = tuple(dict.fromkeys([*self.stale, *message.sides]))
            self.notify(
                f"{' and '.join(self.stale)} changed on disk: {REFRESH_KEY} compares again",
                severity="warning",
            )

    def watch_order(self) -> None:
        self._fill()

    def on_resize(self) -> None:
        # the columns are fitted to the width: fit them again, the highlighted row kept
        table = self.query_one("#many-table", DataTable)
        row = table.cursor_row
        self._fill()
        if self.rows:
            table.move_cursor(row=min(row, len(self.rows) - 1))

    def watch_metric(self) -> None:
        self._fill()

    def _fill(self) -> None:
        m = self.result
        if m is None:
            return
        table = self.query_one("#many-table", DataTable)
        names = dict(zip(m.candidates, m.names, strict=True))
        table.clear(columns=True)  # a column keeps the widest cell it ever held: start anew
        self.rows = sorted_cells(m, self.order, self.metric)
        rows = [_texts(c, names[c.candidate]) for c in self.rows]
        short, self.shown_columns = _fit(rows, self.rows, self.size.width)
        _add_columns(table, self.shown_columns)
        keep = [i for i, name in enumerate(COLUMNS) if name in self.shown_columns]
        for cells in rows:
            table.add_row(*(cells[i] for i in keep))
        legend = ", ".join(f"{s} = {name}" for name, s in short.items())
        # the verdicts shown in their short form, said in full in the legend
        shortened = sorted(
            {c.verdict for r, c in zip(rows, self.rows, strict=True) if r[-1].plain != c.verdict}
        )
        if shortened:
            words = ", ".join(f"{short_verdict(v)} = {v}" for v in shortened)
            legend = f"{legend}, {words}" if legend else words
        left_out = [c for c in COLUMNS if c not in self.shown_columns]
        if left_out:
            said = " and ".join(left_out)
            legend = f"{legend} · {said} left out: too narrow" if legend else f"{said} left out"
        notes = [
            lit(
                f"each cell: the candidate against the base on one metric; {HOLM_ACROSS_TABLE}"
                f" · margin ±{m.margin * 100:g} points · seed {m.seed}"
                + (f" · {legend}" if legend else ""),
                "dim",
            ),
            *(lit(f"! {w}", "yellow") for w in many_notes(m)),
        ]
        self.query_one("#many-notes", Static).update(Text("\n").join(notes))
        caption = join(
            ("order: ", "bold"),
            self.order,
            ("  ·  metric: ", "bold"),
            (self.metric, "") if self.metric else "all",
            Text(
                "  ·  s sort (or click a header) · m metric · enter opens the pair",
                style="dim",
            ),
        )
        self.query_one("#many-caption", Static).update(caption)

    # ------------------------------------------------------------ actions

    @on(DataTable.HeaderSelected, "#many-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        name = self.shown_columns[event.column_index]
        if name == "Δ pts":
            self.order = "Δ, worst first" if self.order != "Δ, worst first" else "Δ, best first"
        else:
            self.order = _BY_HEADER.get(name, self.order)
        self.notify(f"{name}: {GLOSSARY.get(name, '')}", timeout=4)

    def action_next_sort(self) -> None:
        self.order = SORTS[(SORTS.index(self.order) + 1) % len(SORTS)]

    def action_next_metric(self) -> None:
        m = self.result
        if m is None:
            return
        order: list[str | None] = [None, *m.metrics]
        self.metric = order[(order.index(self.metric) + 1) % len(order)]

    def action_open_pair(self) -> None:
        table = self.query_one("#many-table", DataTable)
        if self.result is None or not self.rows:
            return
        cell = self.rows[min(max(table.cursor_row, 0), len(self.rows) - 1)]
        self.app.open_compare(self.result.base, cell.candidate)  # type: ignore[attr-defined]

    def action_copy(self) -> None:
        if self.result is not None:
            copy_markdown(self.app, markdown_table(self.result, self.rows), "the table")

    def action_export(self) -> None:
        m = self.result
        if m is not None:
            rows = list(self.rows)
            export(self, "the candidates table", "ragtui-candidates", lambda: cells_table(m, rows))

    def action_refresh_runs(self) -> None:
        self.stale = ()
        self.query_one("#many-body").loading = True
        self.compute()

    def action_back(self) -> None:
        self.app.pop_screen()
