"""Retrieved chunks (rank, source, score, text); the ones a selected claim cites are highlighted."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from ragtui.core.model import Chunk
from ragtui.tui.widgets.literal import lit


def chunk_text(chunk: Chunk, cited: bool = False) -> Text:
    out = Text()
    out.append("▶ " if cited else "  ", style="bold green")
    out.append_text(lit(chunk.id, "bold"))
    out.append(f"  #{chunk.rank}" if chunk.rank is not None else "  #–", style="dim")
    out.append("  ")
    out.append_text(lit(chunk.source or "(no source)", "cyan"))
    if chunk.score is not None:
        out.append(f"  {chunk.score:.2f}", style="dim")
    out.append("\n")
    out.append_text(lit(chunk.text))
    return out


class ChunkBlock(Static):
    def __init__(self, chunk: Chunk) -> None:
        super().__init__(chunk_text(chunk), markup=False, classes="chunk")
        self.chunk = chunk

    def set_cited(self, cited: bool) -> None:
        self.set_class(cited, "-cited")
        self.update(chunk_text(self.chunk, cited))


class ChunksView(Vertical):
    DEFAULT_CSS = "ChunksView { height: auto; } ChunksView > .chunk { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cited: tuple[str, ...] = ()

    async def show(self, chunks: Sequence[Chunk]) -> None:
        await self.remove_children()
        self.cited = ()
        if not chunks:
            await self.mount(Static(Text("no retrieved chunks", style="dim"), classes="chunk"))
            return
        await self.mount_all(ChunkBlock(c) for c in chunks)

    def highlight(self, ids: Sequence[str]) -> None:
        self.cited = tuple(ids)
        first = None
        for block in self.query(ChunkBlock):
            cited = block.chunk.id in self.cited
            block.set_cited(cited)
            if cited and first is None:
                first = block
        if first is not None:
            first.scroll_visible(animate=False)
