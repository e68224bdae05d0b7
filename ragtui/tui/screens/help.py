"""Help (`?`): every key of every screen (read from the screens' own BINDINGS), how to read
the Runs table, and the glossary of every figure and verdict (ragtui.format.GLOSSARY)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ragtui.format import GLOSSARY
from ragtui.tui.moves import move_bindings

# (title, module, class) in the order a user meets them (imported when Help opens: the
# screens import nothing of Help, so there is no cycle)
SCREENS = (
    ("Runs (home)", "ragtui.tui.screens.runs", "RunsScreen"),
    ("Cases of a run", "ragtui.tui.screens.cases", "CaseListScreen"),
    ("Trends", "ragtui.tui.screens.trends", "TrendsScreen"),
    ("Compare A vs B", "ragtui.tui.screens.compare", "CompareScreen"),
    ("Case", "ragtui.tui.screens.case", "CaseScreen"),
    ("Compare many", "ragtui.tui.screens.compare_many", "CompareManyScreen"),
    ("Re-judge a case", "ragtui.tui.screens.rejudge", "RejudgeCaseScreen"),
    ("Re-judge a run", "ragtui.tui.screens.rejudge", "RejudgeRunScreen"),
    ("Noise check", "ragtui.tui.screens.noise", "NoiseScreen"),
)
EXTRA = {
    "Everywhere": [("ctrl+p", "command palette: every action by name"), ("ctrl+q", "quit")],
    "Tables": [
        ("↑ ↓ j k pgup pgdn", "move the highlight (or click a row)"),
        ("g G ctrl+d ctrl+u", "top, bottom, page down, page up"),
        ("← →", "move the column focus: the status line says what the column means"),
        ("double click", "open the clicked row"),
    ],
    "Reading the Runs table": [
        ("┌ ×N", "a config with N reruns: this line is their mean (per case, then averaged)"),
        ("├ └", "the reruns themselves, each with its own means"),
        ("▁▃▆", "that config's means up to this run, on the metric's range over all runs"),
        ("A  B", "the marked runs: A the baseline, B a candidate (several Bs: compare many)"),
        ("!n", "n judge replies of this metric could not be parsed (parse failures)"),
        ("err", "metric scores that failed (counted, never turned into 0)"),
        ("(running)", "a run still being written: its figures grow until it ends"),
        ("(summary)", "a summary-only run: the means its tool stated, no cases"),
        ("ms tokens cost", "mean latency and tokens per case, total cost (where cases carry them)"),
    ],
}


def bindings_of(cls: type) -> Iterator[Binding]:
    for item in getattr(cls, "BINDINGS", []):
        binding = item if isinstance(item, Binding) else Binding(*item)
        if binding.description:
            yield binding


def help_sections() -> list[tuple[str, list[tuple[Binding | str, str]]]]:
    """(section title, [(binding or key text, what it does)]) for every screen."""
    from ragtui.tui.app import RagtuiApp

    sections: list[tuple[str, list[tuple[Binding | str, str]]]] = [
        ("Everywhere", [(b, b.tooltip or b.description) for b in bindings_of(RagtuiApp)]),
    ]
    sections[0][1].extend(EXTRA["Everywhere"])
    for title, module, name in SCREENS:
        cls = getattr(importlib.import_module(module), name)
        sections.append((title, [(b, b.tooltip or b.description) for b in bindings_of(cls)]))
    sections.append(("Tables", list(EXTRA["Tables"])))
    sections.append(("Reading the Runs table", list(EXTRA["Reading the Runs table"])))
    sections.append(("Glossary: figures and verdicts", list(GLOSSARY.items())))
    return sections


class HelpScreen(ModalScreen[None]):
    # two columns of sections where they fit side by side (app.tcss: HelpScreen.-wide)
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("question_mark", "dismiss", "close", key_display="?"),
        Binding("q", "dismiss", "close", show=False),
        *move_bindings("app."),  # a modal screen does not get the app's
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"), Grid(id="help-grid"):
            for title, keys in help_sections():
                yield Static(self._section(title, keys), classes="help-section")

    def on_mount(self) -> None:
        box = self.query_one("#help-box")
        box.border_title = "ragtui · Help"
        box.border_subtitle = "esc / ? close"

    def _section(self, title: str, keys: list[tuple[Binding | str, str]]) -> Table:
        grid = Table(
            title=Text(title, style="bold underline"),
            title_justify="left",
            box=None,
            show_header=False,
            padding=(0, 1),
        )
        grid.add_column(
            justify="right", style="bold cyan", no_wrap=True, min_width=12, max_width=22
        )
        grid.add_column()
        for key, what in keys:
            shown = self.app.get_key_display(key) if isinstance(key, Binding) else key
            grid.add_row(Text(shown), Text(what))
        return grid

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
