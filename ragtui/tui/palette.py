"""Command palette (ctrl+p): every key binding of the current screen and the app, by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

# Textual's own bindings (ctrl+q quit, ctrl+c copy selected text, tab focus next): still
# commands, but listed after ragtui's, and never in place of ragtui's for the same action
_TEXTUAL_KEYS = frozenset(
    (b.key, b.action) for b in Binding.make_bindings([*App.BINDINGS, *Screen.BINDINGS])
)
# A command whose name matches what was typed comes before one whose description does
# (Textual's fuzzy scores are small numbers; a tier is far above any of them)
_NAME_TIER = 1000.0
_OWN_TIER = 100.0


def screen_actions(screen: Screen) -> Iterator[tuple[str, str, str, DOMNode, str, bool]]:
    """(text, key, action, node, name, own) for the screen's and the app's described bindings:
    `name` is the binding's short name, `own` False for Textual's built-in ones, which come
    after ragtui's (one entry per action: ragtui's `q` quit, not Textual's ctrl+q).

    Only bindings defined on a screen or the app: a widget's cursor keys are not commands.
    """
    seen: set[str] = set()
    actives = [
        a
        for a in screen.active_bindings.values()
        if isinstance(a.node, Screen | App) and a.binding.description and a.enabled
    ]
    actives.sort(key=lambda a: (a.binding.key, a.binding.action) in _TEXTUAL_KEYS)
    for active in actives:
        binding, node = active.binding, active.node
        if binding.action in seen:
            continue
        seen.add(binding.action)
        # the short name first ("trends"), then what it does: a search finds either
        name = binding.description
        tooltip = binding.tooltip
        text = f"{name}: {tooltip}" if tooltip and tooltip.lower() != name.lower() else name
        own = (binding.key, binding.action) not in _TEXTUAL_KEYS
        yield (text, screen.app.get_key_display(binding), binding.action, node, name, own)


class ActionsProvider(Provider):
    """Lists what the keys of the screen under the palette do, and runs the one picked."""

    def _commands(self) -> list[tuple[str, str, str, bool, Callable[[], object]]]:
        out = []
        for text, key, action, node, name, own in screen_actions(self.screen):
            out.append((text, f"key {key}", name, own, partial(node.run_action, action)))
        return out

    async def discover(self) -> Hits:
        for text, help_text, _name, _own, run in self._commands():
            yield DiscoveryHit(text, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        words = query.casefold().split()
        for text, help_text, name, own, run in self._commands():
            score = matcher.match(text)
            # any word of the name or the description finds it, in any order
            if score <= 0 and words and all(w in text.casefold() for w in words):
                score = 0.5
            if score <= 0:
                continue
            # "compare" runs compare, not "mark B" whose help says "compared"
            if matcher.match(name) > 0:
                score += _NAME_TIER
            if own:
                score += _OWN_TIER
            yield Hit(score, matcher.highlight(text), run, help=help_text)
