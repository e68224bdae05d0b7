"""The Runs table widget: the lines of a `RunsModel` (runs_model.py), filtered, marked, in
the richest layout that fits its width. The UI thread only adds rows whose cells and column
widths the model already has, so it skips DataTable's per-cell measuring (the slow part of
painting thousands of runs); rows after the first page come from a worker.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events, work
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.widgets import DataTable

from ragtui.format import RUNS_COLUMNS, printable
from ragtui.tui.widgets.column_focus import ColumnFocus, ColumnFocused
from ragtui.tui.widgets.runs_model import (
    MARK_STYLES,
    NO_MARK,
    PAGE,
    RunLine,
    RunsModel,
)


def describe(key: str) -> str:
    """The one-line description of a column (format.RUNS_COLUMNS)."""
    if key.startswith("m:"):
        return f"{printable(key[2:])}: {RUNS_COLUMNS['metric']}"
    return RUNS_COLUMNS.get(key, key)


class RunTable(ColumnFocus, DataTable):
    """The lines of a `RunsModel`, filtered by `needle`, marked by `marks` (run id -> A / B),
    in the richest layout that fits its width."""

    class Opened(Message):
        """The user double-clicked a row (one click only highlights it)."""

    ColumnFocused = ColumnFocused

    model: var[RunsModel | None] = var(None, init=False)
    marks: var[dict[str, str]] = var(dict, init=False)
    needle: var[str] = var("", init=False)
    layout_name: var[str] = var("medium")
    focused_column: var[int] = var(-1, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.shown: list[RunLine] = []  # the lines picked by the filter (rows may lag)
        self._keys: list[str] = []
        self._fixed = False
        self._generation = 0  # which fill the rows being built belong to
        self._keep: RunLine | None = None  # the line the cursor goes back to
        self._fitted: list[int] = []  # the column widths of the last fill

    # ------------------------------------------------------------ filling

    def watch_model(self) -> None:
        self._fill()

    def watch_needle(self) -> None:
        self._fill()

    def on_resize(self, event: events.Resize) -> None:
        model, width = self.model, event.size.width
        if model is None:
            return
        layout = model.pick(width)
        if layout != self.layout_name or model.fitted_widths(layout, width) != self._fitted:
            self._fill()

    def _fill(self) -> None:
        """(Re)build the rows: the first page now, the rest from a worker (a long history
        paints at once); keeps the cursor on the same line when it is still shown."""
        model = self.model
        if model is None:
            return
        keep = self.highlighted_line
        width = self.size.width or self.app.size.width
        layout = model.pick(width)
        keys, widths = model.columns(layout), model.fitted_widths(layout, width)
        self._fitted = widths
        picked = [i for i, line in enumerate(model.lines) if line.matches(self.needle)]
        runs = {model.lines[i].run.id for i in picked if not model.lines[i].is_group}
        # a group line is shown when one of its runs is
        picked = [
            i
            for i in picked
            if not model.lines[i].is_group or any(r.id in runs for r in model.lines[i].members)
        ]
        self.shown = [model.lines[i] for i in picked]
        self._generation += 1
        self._fixed = False
        self.clear(columns=True)
        self._keys = keys
        for key, width in zip(keys, widths, strict=True):
            self.add_column(model.header(key, layout), key=key, width=width)
        self._fixed = True
        self._add(model.rows(layout, picked[:PAGE]), picked[:PAGE])
        self.layout_name = layout
        self._keep = keep
        if len(picked) > PAGE:  # after the first page is on screen
            rest = picked[PAGE:]
            self.call_after_refresh(self.add_rest, model, layout, rest, self._generation)
        self._restore_cursor()
        self.focused_column = min(self.focused_column, len(keys) - 1)

    def _add(self, rows: list[list[Text]], indices: list[int]) -> None:
        assert self.model is not None
        lines = self.model.lines
        self.add_rows(
            self._with_marks(cells, lines[i]) for cells, i in zip(rows, indices, strict=True)
        )

    @work(thread=True, exclusive=True, group="run-rows", description="build the run rows")
    def add_rest(self, model: RunsModel, layout: str, indices: list[int], generation: int) -> None:
        """The rows after the first page, built off the UI thread."""
        try:
            rows = model.rows(layout, indices)
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self.notify, f"runs table: {exc!r}", severity="error")
            return
        self.app.call_from_thread(self._rest_built, generation, rows, indices)

    def _rest_built(self, generation: int, rows: list[list[Text]], indices: list[int]) -> None:
        if generation != self._generation:
            return  # refilled meanwhile: these rows belong to an older fill
        self._add(rows, indices)
        self._restore_cursor()

    def _restore_cursor(self) -> None:
        if self._keep is None:
            return
        index = self._index_of(self._keep)
        if index is not None and index < self.row_count:
            self.move_cursor(row=index)
            self._keep = None

    @property
    def complete(self) -> bool:
        """Every shown line has its row (the rest of a long history is added by a worker)."""
        return self.row_count == len(self.shown)

    def _with_marks(self, cells: list[Text], line: RunLine) -> list[Text]:
        mark = "" if line.is_group else self.marks.get(line.run.id, "")
        return [Text(mark, style=MARK_STYLES[mark]), *cells[1:]] if mark else cells

    def watch_marks(self, old: dict[str, str], new: dict[str, str]) -> None:
        """Only the mark cells that changed are redrawn (rows added later get theirs then)."""
        changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
        for row, line in enumerate(self.shown[: self.row_count]):
            if not line.is_group and line.run.id in changed:
                mark = new.get(line.run.id, "")
                cell = Text(mark, style=MARK_STYLES[mark]) if mark else NO_MARK
                self.update_cell_at(Coordinate(row, 0), cell)

    def _update_dimensions(self, new_rows: Any) -> None:
        # Every column has a width the model measured and every row is one line: measuring
        # each cell again (DataTable's way) is the slowest part of painting many runs.
        if not self._fixed:
            super()._update_dimensions(new_rows)
            return
        header = self.header_height if self.show_header else 0
        width = sum(c.get_render_width(self) for c in self.columns.values())
        self.virtual_size = Size(width, self.row_count + header)

    # ------------------------------------------------------------ what is where

    @property
    def highlighted_line(self) -> RunLine | None:
        if not self.shown or not 0 <= self.cursor_row < min(len(self.shown), self.row_count):
            return None
        return self.shown[self.cursor_row]

    @property
    def highlighted_run(self) -> str | None:
        """The highlighted run's id (on a group line: the group's first run)."""
        line = self.highlighted_line
        return None if line is None else line.run.id

    def _index_of(self, line: RunLine) -> int | None:
        for i, other in enumerate(self.shown):
            if other.run.id == line.run.id and other.is_group == line.is_group:
                return i
        return None

    def row_of(self, run_id: str, *, group: bool = False) -> int:
        """The row of a run's line (or, with `group`, of its group's line)."""
        for i, line in enumerate(self.shown):
            if line.is_group == group and (
                line.run.id == run_id if not group else run_id in {r.id for r in line.members}
            ):
                return i
        raise KeyError(run_id)

    def text(self, run_id: str, key: str, *, group: bool = False) -> str:
        """What a cell shows, as plain text (for tests and copying)."""
        cell = self.get_cell_at(Coordinate(self.row_of(run_id, group=group), self._keys.index(key)))
        return str(cell)

    def shown_runs(self) -> list[str]:
        """The run lines shown, in order (group lines left out)."""
        return [line.run.id for line in self.shown if not line.is_group]

    @property
    def column_keys(self) -> list[str]:
        return list(self._keys)

    # ------------------------------------------------------------ input

    def on_click(self, event: events.Click) -> None:
        # runs before DataTable's own click handler, which moves the cursor and stops the event
        if event.chain == 2:
            self.post_message(self.Opened())

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """A header (or cell) under the mouse shows its column's description as a tooltip."""
        column = event.style.meta.get("column")
        if isinstance(column, int) and 0 <= column < len(self._keys):
            self.tooltip = describe(self._keys[column])

    def header_label(self, index: int) -> Text:
        assert self.model is not None
        return self.model.header(self._keys[index], self.layout_name)

    def describe(self, key: str) -> str:
        return describe(key)

    def watch_focused_column(self, old: int, new: int) -> None:
        if self.model is not None:
            self._show_focused_column(old, new)
