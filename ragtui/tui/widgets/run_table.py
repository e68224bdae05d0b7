"""The Runs table: runs grouped by config (reruns together), means with sparklines, A/B marks.

The row model (`group_rows`) is plain Python over `run_rows()`'s typed rows, cheap to test;
`RunTable` renders it. Runs are few (tens to hundreds), so Textual's own DataTable is enough
here and lets cells carry colour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import DataTable

from ragtui.core.store import RunRow as IndexedRun
from ragtui.format import printable, short_metrics
from ragtui.tui.widgets.sparkline import sparkline

GROUP_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "red")
MARK_STYLES = {"A": "bold black on green", "B": "bold black on magenta"}


@dataclass(frozen=True)
class RunRow:
    run: IndexedRun  # one run_rows() row
    group: int  # index of its config group, in display order
    position: int  # 0-based place inside the group
    size: int  # runs in the group
    history: dict[str, list[float | None]]  # metric -> means of this config's runs up to here

    @property
    def glyph(self) -> str:
        if self.size == 1:
            return "─"
        if self.position == 0:
            return "┌"
        return "└" if self.position == self.size - 1 else "├"


def group_rows(runs: Sequence[IndexedRun], metrics: Sequence[str]) -> list[RunRow]:
    """Runs ordered by config group (groups by their first run's date), dates within a group.

    `runs` come oldest first (as `run_rows` returns them); the order is stable for equal dates.
    """
    groups: dict[str, list[IndexedRun]] = {}
    for run in runs:
        groups.setdefault(run.config_key, []).append(run)
    out: list[RunRow] = []
    for g, members in enumerate(groups.values()):
        for i, run in enumerate(members):
            history = {m: [r.listed_means.get(m) for r in members[: i + 1]] for m in metrics}
            out.append(RunRow(run, g, i, len(members), history))
    return out


def metric_ranges(
    runs: Iterable[IndexedRun], metrics: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Each metric's (min, max) mean over all runs: the shared sparkline scale."""
    ranges = {}
    for m in metrics:
        values = [v for r in runs if (v := r.listed_means.get(m)) is not None]
        if values:
            ranges[m] = (min(values), max(values))
    return ranges


def matches(row: RunRow, needle: str) -> bool:
    if not needle:
        return True
    run = row.run
    hay = " ".join(
        str(v or "")
        for v in (run.id, run.name, run.config_key, run.judge, run.kind, run.created_at)
    )
    return needle.casefold() in hay.casefold()


class RunTable(DataTable):
    """Runs, one row each, keyed by run id. `layout` is wide / medium / compact by width."""

    class Opened(Message):
        """The user double-clicked a row (one click only highlights it)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.rows_model: list[RunRow] = []
        self.metrics: list[str] = []

    def show(
        self,
        rows: list[RunRow],
        metrics: list[str],
        *,
        marks: dict[str, str],
        needle: str,
        width: int,
    ) -> str:
        """(Re)build the table in the richest layout that fits `width`; returns its name.

        Keeps the cursor on the same run when that run is still shown.
        """
        keep = self.highlighted_run
        self.rows_model, self.metrics = rows, metrics
        shown = [r for r in rows if matches(r, needle)]
        ranges = metric_ranges([r.run for r in rows], metrics)
        for layout in LAYOUTS:
            headers, body = _cells(shown, metrics, marks, ranges, layout)
            if _width(headers, body) <= width - 2 or layout == LAYOUTS[-1]:
                break
        self.clear(columns=True)
        for key, label in headers:
            self.add_column(label, key=key)
        for row, cells in zip(shown, body, strict=True):
            self.add_row(*cells, key=row.run.id)
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep))
        return layout

    def on_click(self, event: events.Click) -> None:
        # runs before DataTable's own click handler, which moves the cursor and stops the event
        if event.chain == 2:
            self.post_message(self.Opened())

    @property
    def highlighted_run(self) -> str | None:
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return None if key.value is None else str(key.value)

    def shown_runs(self) -> list[str]:
        return [str(key.value) for key in self.rows]


LAYOUTS = ("wide", "medium", "narrow", "compact")


def _cells(
    rows: list[RunRow],
    metrics: list[str],
    marks: dict[str, str],
    ranges: dict[str, tuple[float, float]],
    layout: str,
) -> tuple[list[tuple[str, Text]], list[list[Text]]]:
    """Column (key, header) pairs and the rows' cells for one layout.

    wide: everything, full metric names, 8-bar sparklines; medium: no judge, short names,
    5 bars; narrow: no kind or config either (the tree glyphs still group reruns);
    compact (80 columns): date, run, N and the means.
    """
    wide, compact = layout == "wide", layout == "compact"
    keys = {
        "wide": ["mark", "date", "run", "kind", "config", "judge", "N"],
        "medium": ["mark", "date", "run", "kind", "config", "N"],
        "narrow": ["mark", "date", "run", "N"],
        "compact": ["mark", "date", "run", "N"],
    }[layout]
    headers = [
        (k, Text("" if k == "mark" else k, justify="right" if k == "N" else "left")) for k in keys
    ]
    shorts = short_metrics(metrics)
    headers += [
        (f"m:{m}", Text(printable(m if wide else shorts[m]), justify="right")) for m in metrics
    ]
    if not compact:
        headers.append(("errors", Text("err", justify="right")))
    spark = 8 if wide else 0 if compact else 5
    body = []
    for row in rows:
        run = row.run
        style = GROUP_STYLES[row.group % len(GROUP_STYLES)]
        name = Text(row.glyph + " ", style=style)
        name.append(printable(run.name))
        if row.position == 0 and row.size > 1:
            name.append(f" ×{row.size}", style=f"bold {style}")
        mark = marks.get(run.id, "")
        values = {
            "mark": Text(mark, style=MARK_STYLES.get(mark, "")),
            "date": Text(run.created_at[5:10] if compact else run.created_at[:10]),
            "run": name,
            "kind": Text(
                "running" if run.in_progress else run.kind,
                style="bold yellow" if run.in_progress else "" if run.kind == "eval" else "dim",
            ),
            "config": Text(printable(run.config_key), style=style),
            "judge": Text(printable(run.judge or "—")),
            "N": Text(str(run.n_cases), justify="right"),
        }
        cells = [values[k] for k in keys]
        for m in metrics:
            cells.append(_mean_cell(run.listed_means.get(m), row.history[m], ranges.get(m), spark))
        if not compact:
            errors = sum(run.errors.values())
            cells.append(Text(str(errors) if errors else "", style="bold red", justify="right"))
        body.append(cells)
    return headers, body


def _width(headers: list[tuple[str, Text]], body: list[list[Text]]) -> int:
    """Columns the table needs: the widest cell of each column plus DataTable's padding."""
    total = 0
    for i, (_, header) in enumerate(headers):
        total += max([header.cell_len, *(row[i].cell_len for row in body)]) + 2
    return total


def _mean_cell(
    mean: float | None, history: list[float | None], scale: tuple[float, float] | None, spark: int
) -> Text:
    # the sparkline sits left of the number, so the numbers of a column line up on the right
    cell = Text(justify="right")
    if spark and scale is not None:
        cell.append(sparkline(history[-spark:], *scale).rjust(spark), style="cyan")
        cell.append(" ")
    if mean is None:
        cell.append("—", style="dim")
    else:
        cell.append(f"{100 * mean:.1f}")
    return cell
