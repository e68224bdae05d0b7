"""The keys line at the bottom of every screen: one widget drawing one line of text.

Textual's Footer mounts a widget per key and mounts them all again whenever the bindings change
(a screen opens, the focus moves), each one restyled twice: starting ragtui, opening a run's
cases and going back took 0.72 s of CPU with it on this 2-core machine, 0.41 s with this line.
This line shows the same keys (those bound with show=True, greyed out where the action is
disabled, the palette key on the right) and a click on a key presses it, but a change of
bindings only repaints the line.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

PALETTE_RULE = "▏"
PINNED_ACTIONS = frozenset({"help"})  # never left out: `?` is how the other keys are found


class KeyBar(Widget):
    """One line of key hints. Roomy (` a mark A `) where every key fits, compact (`amark A`)
    where not; keys the width cannot hold are left out at the right, except `? help` (Help
    lists them all); the palette key keeps the right edge."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-bar--key",
        "key-bar--description",
        "key-bar--disabled",
    }

    def __init__(self) -> None:
        super().__init__()
        # (first cell, end, binding) of each key as last drawn: what a click or hover is on
        self._places: list[tuple[int, int, Binding]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        self.refresh()

    def _shown(self) -> tuple[list[tuple[Binding, bool]], tuple[Binding, bool] | None]:
        """The bindings to show, in order (one per action), and the palette's, if any."""
        active = self.screen.active_bindings
        keys: dict[str, tuple[Binding, bool]] = {}
        for _node, binding, enabled, _tooltip in active.values():
            if binding.show:
                keys.setdefault(binding.action, (binding, enabled))
        palette = None
        if self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            palette = (binding, enabled)
        return list(keys.values()), palette

    def _item(self, binding: Binding, enabled: bool, roomy: bool) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        if not enabled:
            off = self.get_component_rich_style("key-bar--disabled")
            key_style, description_style = key_style + off, description_style + off
        item = Text(no_wrap=True)
        key = self.app.get_key_display(binding)
        item.append(f" {key} " if roomy else key, key_style)
        if binding.description:
            description = f"{binding.description} " if roomy else binding.description
            item.append(description, description_style)
        return item

    def render(self) -> Text:
        bindings, palette = self._shown()
        width = self.size.width
        for roomy, gap in ((True, ""), (False, "  ")):
            items = [(self._item(b, enabled, roomy), b, enabled) for b, enabled in bindings]
            tail = Text(no_wrap=True)
            if palette is not None:
                tail.append(PALETTE_RULE, self.get_component_rich_style("key-bar--description"))
                tail.append_text(self._item(*palette, roomy=roomy))
            wanted = sum(item.cell_len for item, _, _ in items) + len(gap) * (len(items) - 1)
            if wanted + tail.cell_len <= width:
                break
        room = max(0, width - tail.cell_len)
        if wanted > room:  # keys are left out: the pinned ones (help) stay, at the end
            pinned = [one for one in items if one[1].action in PINNED_ACTIONS]
            reserve = sum(item.cell_len + len(gap) for item, _, _ in pinned)
            rest: list[tuple[Text, Binding, bool]] = []
            used = 0
            for one in items:
                if one[1].action in PINNED_ACTIONS:
                    continue
                width_here = one[0].cell_len + (len(gap) if rest else 0)
                if used + width_here > room - reserve:
                    break
                rest.append(one)
                used += width_here
            items = rest + pinned
        line = Text(no_wrap=True, overflow="crop", end="")
        self._places = []
        for item, binding, enabled in items:  # whole keys only: a key cut in half reads as another
            start = line.cell_len + (len(gap) if line else 0)
            if start + item.cell_len > room:
                break
            line.append(gap if line else "")
            line.append_text(item)
            if enabled:
                self._places.append((start, line.cell_len, binding))
        line.pad_right(room - line.cell_len)
        if palette is not None and palette[1]:
            self._places.append((room + len(PALETTE_RULE), width, palette[0]))
        line.append_text(tail)
        return line

    def _at(self, x: int) -> Binding | None:
        return next((b for start, end, b in self._places if start <= x < end), None)

    def on_click(self, event: events.Click) -> None:
        """A click on a key (or its description) presses that key."""
        binding = self._at(event.x)
        if binding is not None:
            event.stop()
            self.app.simulate_key(binding.key)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The key under the pointer explains itself (its tooltip, else its description)."""
        binding = self._at(event.x)
        tip = None if binding is None else binding.tooltip or binding.description
        if tip != self.tooltip:  # setting it redraws the tooltip: only when the key changes
            self.tooltip = tip
