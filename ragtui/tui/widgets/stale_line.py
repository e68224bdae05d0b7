"""The line an open Compare or Case shows when its runs changed on disk: "A changed on disk:
u updates". Which side changed is worked out from the store (a rerun of A that appears changes
A's figures too), so it is asked in a thread worker, never on the UI thread."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rich.text import Text
from textual.widgets import Static

from ragtui.core.store import Store
from ragtui.format import one_line

REFRESH_KEY = "u"


def changed_sides(
    store: Store,
    sides: Mapping[str, str | None],
    changed: Collection[str],
    removed: Collection[str],
    *,
    shown: Mapping[str, Collection[str]] | None = None,
    children: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """The sides ("A", "B", ...) whose figures a change in the folder outdates: any run the
    side's figures were made from (`shown`: its reruns, the re-judges a comparison showed) or
    would be made from now (the reruns of its config) that was changed, added or removed, and
    any run added or changed whose parent is one of those (a re-judge that landed: reopening
    shows the verdict under that judge). A run moved to another config, or removed, is gone
    from the side's config now: it is matched against `shown`. `children`: where a screen
    shows only some of the runs made from a side's (Compare shows a re-judge only beside one of
    the other side under the same judge), those runs per side stand for "any whose parent"."""
    touched = set(changed) | set(removed)
    parents: dict[str, str | None] | None = None
    out = []
    for side, run_id in sides.items():
        if run_id is None:
            continue
        used = {run_id, *(shown or {}).get(side, ())}
        if used & touched:
            out.append(side)
            continue
        try:
            used |= set(store.reruns(run_id))
        except Exception:  # the run itself is gone from the index: that is a change
            out.append(side)
            continue
        if used & touched:
            out.append(side)
            continue
        fresh = set(changed) - used
        if children is not None:
            if fresh & set(children.get(side, ())):
                out.append(side)
            continue
        if fresh:
            if parents is None:
                rows = store.runs().select(["run_id", "parent"]).to_pylist()
                parents = {r["run_id"]: r["parent"] for r in rows}
            if any(parents.get(r) in used for r in fresh):
                out.append(side)
    return out


NEW = "a new config"  # a side label that starts so names a config that appeared


def stale_text(sides: list[str]) -> Text:
    # a side's label may name a run or a config from the folder: through the neutraliser
    changed = [one_line(s) for s in sides if not s.startswith(NEW)]
    appeared = [one_line(s) for s in sides if s.startswith(NEW)]
    said = []
    if changed or not appeared:
        said.append(f"{' and '.join(changed) or 'the runs'} changed")
    if appeared:
        said.append(f"{' and '.join(appeared)} appeared")
    return Text.assemble(
        (f"{' and '.join(said)} on disk", "bold yellow"),
        (": ", "yellow"),
        (REFRESH_KEY, "bold"),
        (" updates the figures", "yellow"),
    )


class StaleLine(Static):
    """Hidden until the runs change; then one line naming the side and the key."""

    def show_sides(self, sides: list[str]) -> None:
        self.update(stale_text(sides))
        self.display = bool(sides)


class FollowsTheFolder:
    """For a screen whose figures a change in the open folder can outdate: it keeps the sides
    that changed in a `stale` reactive of its own and shows them in its StaleLine, and `u`
    (refresh_runs) is in its footer only while there is something to update."""

    stale: tuple[str, ...]

    def watch_stale(self, sides: tuple[str, ...]) -> None:
        self.query_one(StaleLine).show_sides(list(sides))  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "refresh_runs":
            return bool(self.stale)
        return True
