"""A case's A → B diffs on screen: the word diff of the answers, the chunk marks of the
retrieval diff, and the claims that flipped. Data from core (answer_diff, retrieval_diff,
claim_diff); words from ragtui.format; every run-file string through `lit` (printable)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ragtui.core.answer_diff import AnswerDiff
from ragtui.core.claim_diff import ClaimDiff
from ragtui.core.model import Chunk
from ragtui.core.retrieval_diff import ChunkMark, RetrievalDiff, ordered, side_marks
from ragtui.format import CLAIM_CHANGE_WORDS, chunk_mark, claim_change_detail
from ragtui.tui.widgets.chunks_view import ChunkMarking
from ragtui.tui.widgets.literal import lit

ADDED = "bold green underline"
REMOVED = "red strike"


def answer_texts(diff: AnswerDiff) -> tuple[Text, Text]:
    """(A's answer with its removed words marked, B's with its added words marked)."""
    a, b = Text(), Text()
    for seg in diff.segments:
        if seg.kind == "equal":
            a.append_text(lit(seg.in_a))  # A's own whitespace: its line breaks stay
            b.append_text(lit(seg.text))
        elif seg.kind == "removed":
            a.append_text(lit(seg.text, REMOVED))
        else:
            b.append_text(lit(seg.text, ADDED))
    if diff.truncated:
        note = Text("\n(long answers: only their start is diffed)", style="dim")
        a.append_text(note)
        b.append_text(note.copy())
    return a, b


def _note(mark: ChunkMark, side: str) -> str:
    if mark.mark == "added":
        return "added in B"
    if mark.mark == "removed":
        return "not in B" if side == "A" else "removed: only in A"
    if mark.mark in ("moved", "kept") and mark.rank_a != mark.rank_b:
        return f"A #{mark.rank_a} → B #{mark.rank_b}"  # kept: shifted by a chunk that left
    return ""


def _marking(mark: ChunkMark, side: str) -> ChunkMarking:
    return ChunkMarking(chunk_mark(mark.mark, mark.move), mark.mark, _note(mark, side))


def chunk_markings(
    diff: RetrievalDiff, a: Sequence[Chunk], b: Sequence[Chunk], side: str
) -> tuple[list[Chunk], list[ChunkMarking | None], list[tuple[Chunk, ChunkMarking]]]:
    """One side's chunks in rank order, each one's marking, and the other side's chunks this
    side lacks (B side: A's removed ones; A side: B's added ones)."""
    marked = side_marks(diff, a, b, side)
    mine = [chunk for chunk, _ in marked]
    other = ordered(a if side == "B" else b)
    other_rank = (lambda m: m.rank_a) if side == "B" else (lambda m: m.rank_b)
    markings = [None if m is None else _marking(m, side) for _, m in marked]
    lacking = "removed" if side == "B" else "added"
    ghosts = []
    for m in diff.chunks:
        r = other_rank(m)
        if m.mark == lacking and r is not None and 0 < r <= len(other):
            ghosts.append((other[r - 1], _marking(m, side)))
    return mine, markings, ghosts


_SYMBOLS = {
    "lost support": ("✗", "bold red"),
    "fixed": ("✓", "bold green"),
    "weakened": ("↘", "yellow"),
    "strengthened": ("↗", "green"),
    "new": ("+", "bold"),
    "dropped": ("−", "dim"),
}


def claim_changes_text(diff: ClaimDiff) -> Group:
    """The claims that changed from A to B, one row each (unchanged ones are counted)."""
    changed = [c for c in diff.changes if c.change != "same"]
    same = len(diff.changes) - len(changed)
    head = Text("claims A → B", style="bold")
    head.append(f"  {len(changed)} changed · {same} unchanged", style="dim")
    if not diff.changes:
        head.append("  (no faithfulness claims in A or B)", style="dim")
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), show_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for c in changed:
        symbol, style = _SYMBOLS.get(c.change, ("?", ""))
        new_unsupported = c.change == "new" and c.verdict_b == "UNSUPPORTED"
        word = Text(f"{symbol} {CLAIM_CHANGE_WORDS[c.change]}")
        word.stylize("bold red" if new_unsupported else style)
        text = lit(c.text_b if c.text_b is not None else c.text_a)
        detail = claim_change_detail(
            c.change, c.verdict_a, c.verdict_b, c.chunks_left, c.chunks_kept
        )
        gone = c.change == "lost support" and c.chunk_gone
        text.append_text(lit(f"  ({detail})", "bold red" if gone else "dim"))
        table.add_row(word, text)
    return Group(head, table) if changed else Group(head)
