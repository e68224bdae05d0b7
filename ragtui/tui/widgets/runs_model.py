"""The Runs table's model: runs grouped by config (a group line over its reruns, with their
per-case mean), means with sparklines, parse failures, cost and latency, in four layouts.

Plain data built off the UI thread (`load_model` in a worker): the width of every column in
every layout comes from the lines' plain texts (cheap); styled cells are built for the lines
asked for and kept, so a first screenful paints before a long history is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from rich.cells import cell_len
from rich.text import Span, Text

from ragtui.core.costs import Figure, RunCosts
from ragtui.core.score_grid import group_means
from ragtui.core.store import RunRow as IndexedRun
from ragtui.core.store import Store
from ragtui.core.views import run_rows
from ragtui.format import case_count, cost_figure, printable, run_kind, short_metrics
from ragtui.format.text import metric_columns
from ragtui.tui.widgets.sparkline import sparkline

GROUP_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "red")
MARK_STYLES = {"A": "bold black on green", "B": "bold black on magenta"}
LAYOUTS = ("wide", "medium", "narrow", "compact")
NAME_MIN = 12  # the run names are not narrowed below this (the table scrolls instead)
# cost columns: (key, header, RunCosts field, figure shown: the per-case mean or the run total)
COSTS = (
    ("ms", "ms", "latency_ms", "mean"),
    ("tokens", "tokens", "total_tokens", "mean"),
    ("cost", "cost", "cost", "total"),
)
NO_MARK = Text("")  # the mark cell of an unmarked run (one object for all)
PAGE = 120  # lines shown at once; the rest follow from a worker
SPARK_MAX = 8  # bars of the widest sparkline
COST_KEYS = {c[0]: c for c in COSTS}


@dataclass(frozen=True)
class RunLine:
    """One line of the table: a run, or the group line over a config's reruns."""

    run: IndexedRun  # the run; for a group line, the group's first run
    members: tuple[IndexedRun, ...] = field(repr=False)  # the group (a run line: its group)
    group: int  # index of its config group, in display order
    position: int  # -1: the group line; else 0-based place in the group
    means: Mapping[str, float | None]  # a group line: per-case means over the reruns
    n_cases: int
    history: Mapping[str, Sequence[float | None]]  # this config's run means up to here

    @property
    def is_group(self) -> bool:
        return self.position < 0

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def glyph(self) -> str:
        if self.size == 1:
            return "─"
        if self.is_group:
            return "┌"
        return "└" if self.position == self.size - 1 else "├"

    @property
    def runs(self) -> tuple[IndexedRun, ...]:
        """The runs this line stands for."""
        return self.members if self.is_group else (self.run,)

    def parse_failures(self, metric: str) -> int:
        return sum(r.parse_failures.get(metric, 0) for r in self.runs)

    @property
    def errors(self) -> int:
        return sum(sum(r.errors.values()) for r in self.runs)

    def metric_errors(self, metric: str) -> int:
        return sum(r.errors.get(metric, 0) for r in self.runs)

    def matches(self, needle: str) -> bool:
        if not needle:
            return True
        folded = needle.casefold()
        for run in self.runs:
            hay = " ".join(
                str(v or "")
                for v in (run.id, run.name, run.config_key, run.judge, run.kind, run.created_at)
            )
            if folded in hay.casefold():
                return True
        return False


def group_key(run: IndexedRun) -> tuple[str, str | None, str | None]:
    """Reruns of one config: the same config key and dataset (as a comparison pairs them)."""
    return (run.config_key, run.dataset, run.dataset_version)


def build_lines(
    runs: Sequence[IndexedRun],
    metrics: Sequence[str],
    group_means: Mapping[int, tuple[Mapping[str, float], int]] | None = None,
) -> list[RunLine]:
    """Runs ordered by config group (groups by their first run's date), dates within a group;
    a group of several runs gets a line of its own first, with `group_means[g]`."""
    groups: dict[tuple[str, str | None, str | None], list[IndexedRun]] = {}
    for run in runs:
        groups.setdefault(group_key(run), []).append(run)
    out: list[RunLine] = []
    for g, members in enumerate(groups.values()):
        team = tuple(members)
        listed = [r.listed_means for r in team]
        series = {m: [means.get(m) for means in listed] for m in metrics}
        if len(team) > 1:
            means, n = (group_means or {}).get(g, ({}, 0))
            history = {m: series[m][-SPARK_MAX:] for m in metrics}
            out.append(RunLine(team[0], team, g, -1, dict(means), n, history))
        for i, run in enumerate(team):
            # the sparkline shows at most SPARK_MAX runs: keep only those
            start = max(0, i + 1 - SPARK_MAX)
            history = {m: series[m][start : i + 1] for m in metrics}
            out.append(RunLine(run, team, g, i, listed[i], run.n_cases, history))
    return out


def groups_of(runs: Sequence[IndexedRun]) -> dict[str, list[str]]:
    """Group index (as text) -> run ids, for the groups of several runs."""
    groups: dict[tuple[str, str | None, str | None], list[str]] = {}
    for run in runs:
        groups.setdefault(group_key(run), []).append(run.id)
    return {str(g): ids for g, ids in enumerate(groups.values()) if len(ids) > 1}


@dataclass(eq=False)  # compared by identity: a reactive's value
class RunsModel:
    """Everything the table shows, computed off the UI thread. Column widths come from the
    plain texts of every line (cheap); styled cells are built for the lines asked for and
    kept, so a first screenful paints before the rest of a long history is built."""

    lines: list[RunLine]
    metrics: list[str]
    costs: dict[str, RunCosts] = field(default_factory=dict)
    unread: frozenset[str] = frozenset()  # runs whose files were too big to read for cost
    _rows: dict[str, dict[int, list[Text]]] = field(default_factory=dict, repr=False)
    _widths: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def runs(self) -> list[IndexedRun]:
        return [line.run for line in self.lines if not line.is_group]

    def with_costs(self, costs: dict[str, RunCosts], unread: set[str] = frozenset()) -> RunsModel:
        return RunsModel(self.lines, self.metrics, costs, frozenset(unread))

    @property
    def cost_columns(self) -> list[tuple[str, str, str, str]]:
        """The cost columns some run carries."""
        have = {f.field for c in self.costs.values() for f in c.figures if f.n}
        return [c for c in COSTS if c[2] in have]

    def cost_value(self, line: RunLine, field_name: str, figure: str) -> float | None:
        """A group: the mean per run. A total is unknown (None) where some case's figure is
        unreadable or missing: the sum of the others is not the run's total."""
        values = []
        for run in line.runs:
            costs = self.costs.get(run.id)
            found = None if costs is None else costs.figure(field_name)
            if figure == "total" and costs is not None and _gaps(costs, found):
                return None
            value = None if found is None else getattr(found, figure)
            if value is not None:
                values.append(value)
        return sum(values) / len(values) if values else None

    def cost_gaps(self, line: RunLine, field_name: str) -> tuple[int, int, int]:
        """(cases without the figure, of them unreadable, cases) over the line's runs."""
        missing = unreadable = cases = 0
        for run in line.runs:
            costs = self.costs.get(run.id)
            if costs is None:
                continue
            found = costs.figure(field_name)
            cases += costs.n_cases
            missing += costs.n_cases - (found.n if found else 0)
            unreadable += found.unreadable if found else 0
        return missing, unreadable, cases

    # ------------------------------------------------------------ layouts

    def columns(self, layout: str) -> list[str]:
        keys = {
            "wide": ["mark", "date", "run", "kind", "config", "judge", "N"],
            "medium": ["mark", "date", "run", "kind", "config", "N"],
            "narrow": ["mark", "date", "run", "N"],
            "compact": ["mark", "date", "run", "N"],
        }[layout]
        keys = keys + [f"m:{m}" for m in self.metrics]
        if layout != "compact":
            keys.append("err")
        if layout in ("wide", "medium"):
            keys += [c[0] for c in self.cost_columns]
        return keys

    def widths(self, layout: str) -> list[int]:
        """Each column's width in cells (padding excluded), from every line's plain text."""
        if layout not in self._widths:
            spark = _spark(layout)
            out = []
            for key in self.columns(layout):
                head = self.header(key, layout).cell_len
                if key == "mark":
                    out.append(1)  # one letter
                elif key.startswith("m:"):
                    m = key[2:]
                    body = max((len(_number(line, m, layout)) for line in self.lines), default=0)
                    out.append(max(head, body + (spark + 1 if spark else 0)))
                else:
                    texts = (self.plain(line, key, layout) for line in self.lines)
                    out.append(max([head, *(cell_len(t) for t in texts)]))
            self._widths[layout] = out
        return self._widths[layout]

    def width(self, layout: str) -> int:
        """Columns the layout needs, cell padding included."""
        return sum(w + 2 for w in self.widths(layout))

    def fitted_widths(self, layout: str, width: int) -> list[int]:
        """The layout's widths in `width` columns: where even the compact layout is wider, the
        run names give way (cut with an ellipsis, down to NAME_MIN), never a figure: a mean
        cut at the edge reads as another number (94.8 as 94)."""
        widths = list(self.widths(layout))
        over = sum(w + 2 for w in widths) - (width - 2)  # as pick: room for a scrollbar
        keys = self.columns(layout)
        if over > 0 and "run" in keys:
            at = keys.index("run")
            widths[at] = max(min(NAME_MIN, widths[at]), widths[at] - over)
        return widths

    def pick(self, width: int) -> str:
        """The richest layout that fits `width` columns (compact when none does)."""
        for layout in LAYOUTS:
            if self.width(layout) <= width - 2:
                return layout
        return LAYOUTS[-1]

    def header(self, key: str, layout: str) -> Text:
        if key.startswith("m:"):
            name = key[2:]
            shown = name if layout == "wide" else short_metrics(self.metrics)[name]
            return Text(printable(shown), justify="right")
        if key == "mark":
            return Text("")
        right = key in ("N", "err", "ms", "tokens", "cost")
        return Text(key, justify="right" if right else "left")

    def rows(self, layout: str, indices: Sequence[int]) -> list[list[Text]]:
        """The styled cells of the lines `indices`, built once per layout."""
        built = self._rows.setdefault(layout, {})
        missing = [i for i in indices if i not in built]
        if missing:
            keys = self.columns(layout)
            ranges = metric_ranges(self.runs, self.metrics)
            for i in missing:
                built[i] = [self._cell(self.lines[i], k, layout, ranges) for k in keys]
        return [built[i] for i in indices]

    def plain(self, line: RunLine, key: str, layout: str) -> str:
        """A cell's text without styles (what its width is measured on)."""
        if key in COST_KEYS:
            _, _, name, figure = COST_KEYS[key]
            value = self.cost_value(line, name, figure)
            return "" if value is None else cost_figure(name, value).removesuffix(" ms")
        return _plain(line, key, layout)

    def _cell(
        self, line: RunLine, key: str, layout: str, ranges: dict[str, tuple[float, float]]
    ) -> Text:
        if key.startswith("m:"):
            m = key[2:]
            failures = line.parse_failures(m)
            spark = _spark(layout)
            errors = _inline_errors(line, m, layout)
            return mean_cell(
                line.means.get(m), line.history[m], ranges.get(m), spark, failures, errors
            )
        if key == "mark":
            return NO_MARK
        text = self.plain(line, key, layout)
        style = GROUP_STYLES[line.group % len(GROUP_STYLES)]
        run = line.run
        if key == "run":
            spans = [Span(0, 1, style)]
            if line.is_group:
                spans.append(Span(text.rindex(" ×"), len(text), f"bold {style}"))
            elif run.in_progress or run.summary_only:
                tail = "bold yellow" if run.in_progress else "dim italic"
                spans.append(Span(text.rindex(" ("), len(text), tail))
            # cut with an ellipsis where the compact layout narrows the names (fitted_widths)
            return Text(text, spans=spans, no_wrap=True, overflow="ellipsis")
        if key == "kind":
            if line.is_group:
                return Text(text, style="dim")
            if run.in_progress:
                return Text(text, style="bold yellow")
            if run.summary_only:
                return Text(text, style="dim italic")
            return Text(text, style="" if run.kind == "eval" else "dim")
        if key == "config":
            return Text(text, style=style)
        if key == "err":
            return Text(text, style="bold red", justify="right")
        if key in ("N", *COST_KEYS):
            return Text(text, justify="right")
        return Text(text)

    # ------------------------------------------------------------ export

    def export_table(self, lines: Sequence[RunLine]) -> pa.Table:
        """The lines as data (means as fractions, as in --json): one row per line shown."""
        rows: list[dict[str, Any]] = []
        costs = {f"{name} {figure}": (name, figure) for _, _, name, figure in self.cost_columns}
        named: dict[str, str] | None = None  # the metrics' column names (from the first row)
        for line in lines:
            run = line.run
            row: dict[str, Any] = {
                "line": "group" if line.is_group else "run",
                "run_id": None if line.is_group else run.id,
                "runs": line.size if line.is_group else 1,
                "name": run.name,
                "created_at": run.created_at,
                "kind": "group" if line.is_group else run.kind,
                "config_key": run.config_key,
                "judge": run.judge,
                "dataset": run.dataset,
                "dataset_version": run.dataset_version,
                "n_cases": line.n_cases,
                "in_progress": any(r.in_progress for r in line.runs),
                "summary_only": all(r.summary_only for r in line.runs),
                "errors": line.errors,
            }
            if named is None:
                named = metric_columns(self.metrics, [*row, *costs], (" parse failures",))
            for m in self.metrics:
                row[named[m]] = line.means.get(m)
                row[f"{named[m]} parse failures"] = line.parse_failures(m)
            for column, (name, figure) in costs.items():
                row[column] = self.cost_value(line, name, figure)
            rows.append(row)
        return pa.Table.from_pylist(rows)


def _gaps(costs: RunCosts, found: Figure | None) -> bool:
    return found is not None and (found.unreadable > 0 or found.n < costs.n_cases)


def load_model(store: Store) -> RunsModel:
    """The table's model from the index (a worker thread: it queries)."""
    runs, metrics = run_rows(store)
    groups = groups_of(runs)
    means = group_means(store, groups) if groups else {}
    return RunsModel(build_lines(runs, metrics, {int(k): v for k, v in means.items()}), metrics)


def metric_ranges(
    runs: Sequence[IndexedRun], metrics: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Each metric's (min, max) mean over all runs: the shared sparkline scale."""
    ranges = {}
    for m in metrics:
        values = [v for r in runs if (v := r.listed_means.get(m)) is not None]
        if values:
            ranges[m] = (min(values), max(values))
    return ranges


def _spark(layout: str) -> int:
    """Sparkline bars in a mean cell: 8 wide, none compact, else 5."""
    return SPARK_MAX if layout == "wide" else 0 if layout == "compact" else 5


def _inline_errors(line: RunLine, metric: str, layout: str) -> int:
    """Failed grades shown in the mean's cell: where the err column does not fit (compact),
    so that no width hides them (the CLI's "(n err)")."""
    return line.metric_errors(metric) if layout == "compact" else 0


def _number(line: RunLine, metric: str, layout: str) -> str:
    """A mean cell's number and its marks (parse failures, failed grades), no sparkline."""
    mean = line.means.get(metric)
    text = "—" if mean is None else f"{100 * mean:.1f}"
    failures = line.parse_failures(metric)
    errors = _inline_errors(line, metric, layout)
    return text + (f" !{failures}" if failures else "") + (f" ✗{errors}" if errors else "")


def mean_cell(
    mean: float | None,
    history: Sequence[float | None],
    scale: tuple[float, float] | None,
    spark: int,
    parse_failures: int = 0,
    errors: int = 0,
) -> Text:
    """[sparkline] mean [!parse failures]: the sparkline sits left of the number, so the
    numbers of a column line up on the right."""
    spans = []
    head = ""
    if spark and scale is not None:
        head = sparkline(history[-spark:], *scale).rjust(spark) + " "
        spans.append(Span(0, spark, "cyan"))
    number = "—" if mean is None else f"{100 * mean:.1f}"
    if mean is None:
        spans.append(Span(len(head), len(head) + 1, "dim"))
    text = head + number
    if parse_failures:
        tail = f" !{parse_failures}"
        spans.append(Span(len(text), len(text) + len(tail), "bold yellow"))
        text += tail
    if errors:
        tail = f" ✗{errors}"
        spans.append(Span(len(text), len(text) + len(tail), "bold red"))
        text += tail
    return Text(text, justify="right", spans=spans)


def _plain(line: RunLine, key: str, layout: str) -> str:
    """The text of a cell of the columns other than marks, means and costs."""
    run = line.run
    if key == "date":
        return run.created_at[5:10] if layout == "compact" else run.created_at[:10]
    if key == "run":
        text = f"{line.glyph} {printable(run.name)}"
        if line.is_group:
            return f"{text} ×{line.size}"
        if run.in_progress:
            return f"{text} (running)"
        return f"{text} (summary)" if run.summary_only else text
    if key == "kind":
        if line.is_group:
            return f"{line.size} reruns"
        return run_kind(run.kind, in_progress=run.in_progress, summary_only=run.summary_only)
    if key == "config":
        return printable(run.config_key)
    if key == "judge":
        return printable(run.judge or "—")
    if key == "N":
        return case_count(line.n_cases, summary_only=run.summary_only and not line.is_group)
    if key == "err":
        errors = line.errors
        return str(errors) if errors else ""
    raise KeyError(key)
