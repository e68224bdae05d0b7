"""Claim verdicts, colour-coded; highlighting a claim tells the screen which chunks it cites."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.message import Message
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ragtui.core.model import Claim
from ragtui.tui.widgets.literal import lit

MARKS = {"SUPPORTED": ("✓", "green"), "PARTIAL": ("~", "yellow"), "UNSUPPORTED": ("✗", "red")}


def claim_text(claim: Claim) -> Text:
    mark, style = MARKS.get(claim.verdict, ("?", "magenta"))
    out = Text()
    out.append(f"{mark} ", style=f"bold {style}")
    out.append(claim.verdict if claim.verdict in MARKS else "?", style=style)
    out.append(" ")
    out.append_text(lit(claim.text))
    cites = ", ".join(claim.chunks)
    out.append_text(lit(f"  → {cites}" if cites else "  → no chunk", "dim"))
    if claim.reason:
        out.append("\n    ")
        out.append_text(lit(claim.reason, "dim italic"))
    return out


class ClaimsView(OptionList):
    """One option per claim; the highlighted claim's chunks are announced with `Cited`."""

    class Cited(Message):
        """The highlighted claim changed; `chunks` are the ids it cites (may be empty).
        `follow`: the user moved the highlight, so the cited chunk may be scrolled to (not when
        the claims were just shown: the screen keeps its place)."""

        def __init__(
            self, claims_view: ClaimsView, chunks: tuple[str, ...], follow: bool = True
        ) -> None:
            super().__init__()
            self.claims_view = claims_view
            self.chunks = chunks
            self.follow = follow

        @property
        def control(self) -> ClaimsView:
            return self.claims_view

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.claims: list[Claim] = []
        self._shown = False  # the next highlight comes from show(), not from the user

    def show(self, claims: Sequence[Claim]) -> None:
        self.claims = list(claims)
        self.clear_options()
        if not self.claims:
            self.add_option(
                Option(Text("no claims recorded for this metric", style="dim"), disabled=True)
            )
            self.post_message(self.Cited(self, (), follow=False))
            return
        self.add_options(Option(claim_text(c)) for c in self.claims)
        self._shown = True
        self.highlighted = 0

    def action_cursor_down(self) -> None:
        """Past the last claim the page around goes on down (what lies below the claims)."""
        if self.highlighted is None or self.highlighted >= self.option_count - 1:
            self._scroll_page(1)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        """Above the first claim the page around goes on up."""
        if self.highlighted is None or self.highlighted <= 0:
            self._scroll_page(-1)
        else:
            super().action_cursor_up()

    def _scroll_page(self, lines: int) -> None:
        for node in self.ancestors:
            if isinstance(node, Widget) and node.allow_vertical_scroll:
                node.scroll_relative(y=lines, animate=False)
                return

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        follow, self._shown = not self._shown, False
        if 0 <= event.option_index < len(self.claims):
            chunks = self.claims[event.option_index].chunks
            self.post_message(self.Cited(self, chunks, follow=follow))
