"""Retrieved chunks (rank, source, score, text); the ones a selected claim cites are highlighted.

With a retrieval diff, each chunk carries its mark against the other run (+ added, - removed,
↑2 / ↓1 moved, = kept) and the chunks only the other run retrieved follow, dimmed ("ghosts").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from ragtui.core.model import Chunk
from ragtui.tui.widgets.literal import lit

MARK_STYLES = {"added": "bold green", "removed": "bold red", "moved": "bold cyan", "kept": "dim"}


@dataclass(frozen=True)
class ChunkMarking:
    """A chunk's mark on screen: `symbol` from format.chunk_mark, `mark` one of
    retrieval_diff.MARKS, `note` what it means here ("added in B", "A #1 → B #2")."""

    symbol: str
    mark: str
    note: str


def chunk_text(chunk: Chunk, cited: bool = False, marking: ChunkMarking | None = None) -> Text:
    out = Text()
    out.append("▶ " if cited else "  ", style="bold green")
    if marking is not None:
        out.append(f"{marking.symbol:<3}", style=MARK_STYLES.get(marking.mark, ""))
    out.append_text(lit(chunk.id, "bold"))
    out.append(f"  #{chunk.rank}" if chunk.rank is not None else "  #–", style="dim")
    out.append("  ")
    out.append_text(lit(chunk.source or "(no source)", "cyan"))
    if chunk.score is not None:
        out.append(f"  {chunk.score:.2f}", style="dim")
    if marking is not None and marking.note:
        out.append(f"  {marking.note}", style=MARK_STYLES.get(marking.mark, ""))
    out.append("\n")
    out.append_text(lit(chunk.text))
    return out


class ChunkBlock(Static):
    def __init__(self, chunk: Chunk, marking: ChunkMarking | None = None, ghost: bool = False):
        super().__init__(
            chunk_text(chunk, marking=marking),
            markup=False,
            classes="chunk -ghost" if ghost else "chunk",
        )
        self.chunk, self.marking, self.ghost = chunk, marking, ghost

    def set_cited(self, cited: bool) -> None:
        self.set_class(cited, "-cited")
        self.update(chunk_text(self.chunk, cited, self.marking))


class ChunksView(Vertical):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cited: tuple[str, ...] = ()

    async def show(
        self,
        chunks: Sequence[Chunk],
        markings: Sequence[ChunkMarking | None] = (),
        ghosts: Sequence[tuple[Chunk, ChunkMarking]] = (),
    ) -> None:
        """`markings[i]` marks `chunks[i]`; `ghosts` are the other run's chunks not in this one."""
        await self.remove_children()
        self.cited = ()
        if not chunks and not ghosts:
            await self.mount(Static(Text("no retrieved chunks", style="dim"), classes="chunk"))
            return
        marks = list(markings) + [None] * (len(chunks) - len(markings))
        blocks = [ChunkBlock(c, m) for c, m in zip(chunks, marks, strict=False)]
        blocks += [ChunkBlock(c, m, ghost=True) for c, m in ghosts]
        await self.mount_all(blocks)

    def highlight(self, ids: Sequence[str], follow: bool = True) -> None:
        """Mark the chunks `ids`; with `follow`, scroll the first of them into view."""
        self.cited = tuple(ids)
        first = None
        for block in self.query(ChunkBlock):
            cited = block.chunk.id in self.cited and not block.ghost
            block.set_cited(cited)
            if cited and first is None:
                first = block
        if first is not None and follow:
            first.scroll_visible(animate=False)
