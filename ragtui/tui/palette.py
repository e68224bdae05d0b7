"""Command palette (ctrl+p): every key binding of the current screen and the app, by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen


def screen_actions(screen: Screen) -> Iterator[tuple[str, str, str, DOMNode]]:
    """(description, key, action, node) for the screen's and the app's described bindings.

    Only bindings defined on a screen or the app: a widget's cursor keys are not commands.
    """
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding, node = active.binding, active.node
        if not isinstance(node, Screen | App) or not binding.description:
            continue
        if binding.action in seen or not active.enabled:
            continue
        seen.add(binding.action)
        # the short name first ("trends"), then what it does: a search finds either
        name = binding.description
        tooltip = binding.tooltip
        text = f"{name}: {tooltip}" if tooltip and tooltip.lower() != name.lower() else name
        yield (
            text,
            screen.app.get_key_display(binding),
            binding.action,
            node,
        )


class ActionsProvider(Provider):
    """Lists what the keys of the screen under the palette do, and runs the one picked."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out = []
        for description, key, action, node in screen_actions(self.screen):
            out.append((description, f"key {key}", partial(node.run_action, action)))
        return out

    async def discover(self) -> Hits:
        for description, help_text, run in self._commands():
            yield DiscoveryHit(description, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        words = query.casefold().split()
        for description, help_text, run in self._commands():
            score = matcher.match(description)
            # any word of the name or the description finds it, in any order
            if score <= 0 and words and all(w in description.casefold() for w in words):
                score = 0.5
            if score > 0:
                yield Hit(score, matcher.highlight(description), run, help=help_text)
