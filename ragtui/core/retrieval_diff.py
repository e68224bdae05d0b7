"""Retrieval diff of one case: the chunks B added, removed, kept and moved, and the top-k overlap.

Chunks are matched by id when the ids name chunks, else by normalised text. Many harnesses have
no chunk ids and importers number the chunks by position ("c1", "c2", ...): such an id names a
rank, not a chunk. So ids are trusted only when every id the two runs share carries the same
text on both sides; one shared id with two different texts and the case is matched by text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragtui.core.model import Chunk
from ragtui.core.text_match import normalise

MARKS = ("kept", "moved", "added", "removed")


@dataclass(frozen=True)
class ChunkMark:
    """One chunk of A or B and what became of it. Ranks are 1-based; `move` > 0: B ranks it higher."""

    mark: str  # one of MARKS
    id_a: str | None
    id_b: str | None
    rank_a: int | None
    rank_b: int | None
    source: str | None
    text: str

    @property
    def move(self) -> int | None:
        if self.rank_a is None or self.rank_b is None:
            return None
        return self.rank_a - self.rank_b

    def to_json(self) -> dict[str, Any]:
        return {
            "mark": self.mark,
            "id_a": self.id_a,
            "id_b": self.id_b,
            "rank_a": self.rank_a,
            "rank_b": self.rank_b,
            "move": self.move,
            "source": self.source,
            "text": self.text,
        }


@dataclass(frozen=True)
class RetrievalDiff:
    case_id: str
    matched_by: str  # "id" or "text"
    chunks: tuple[ChunkMark, ...]  # B's chunks in B's order, then A's removed ones in A's order
    n_a: int
    n_b: int
    k: int  # the top k compared: min(n_a, n_b)
    overlap: float | None  # Jaccard of the two top-k sets; None when a side retrieved nothing
    top_changed: bool | None  # B's first chunk is not A's first chunk

    def count(self, mark: str) -> int:
        return sum(c.mark == mark for c in self.chunks)

    def in_b(self, chunk_id_a: str) -> bool | None:
        """Whether A's chunk `chunk_id_a` is still among B's chunks; None when A has no such id."""
        for c in self.chunks:
            if c.id_a == chunk_id_a:
                return c.mark != "removed"
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "matched_by": self.matched_by,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "k": self.k,
            "overlap": self.overlap,
            "top_changed": self.top_changed,
            **{mark: self.count(mark) for mark in MARKS},
            "chunks": [c.to_json() for c in self.chunks],
        }


def ordered(chunks: Sequence[Chunk]) -> list[Chunk]:
    """By stated rank (position breaks ties and fills in a missing rank): the order in which
    a diff lists one side's chunks (a screen showing them beside the marks uses it too)."""
    return [
        c
        for _, _, c in sorted(
            (c.rank if c.rank is not None else i + 1, i, c) for i, c in enumerate(chunks)
        )
    ]


def _ids_name_chunks(a: Sequence[Chunk], b: Sequence[Chunk], na: list[str], nb: list[str]) -> bool:
    """`na`, `nb`: the chunks' normalised texts."""
    text_a: dict[str, set[str]] = {}
    for c, t in zip(a, na, strict=True):
        text_a.setdefault(c.id, set()).add(t)
    shared = False
    for c, mine in zip(b, nb, strict=True):
        if c.id in text_a:
            shared = True
            if mine and any(t and t != mine for t in text_a[c.id]):
                return False
    return shared or not any((*na, *nb))


def _keys(names: Iterable[str]) -> list[tuple[str, int]]:
    """Match keys; a repeated id or text gets its occurrence number, so nothing collapses."""
    seen: dict[str, int] = {}
    out = []
    for key in names:
        seen[key] = seen.get(key, 0) + 1
        out.append((key, seen[key]))
    return out


def diff_retrieval(case_id: str, a: Sequence[Chunk], b: Sequence[Chunk]) -> RetrievalDiff:
    a, b = ordered(a), ordered(b)
    na, nb = [normalise(c.text) for c in a], [normalise(c.text) for c in b]
    by_id = _ids_name_chunks(a, b, na, nb)
    keys_a = _keys([c.id for c in a] if by_id else na)
    keys_b = _keys([c.id for c in b] if by_id else nb)
    rank_a = {k: i + 1 for i, k in enumerate(keys_a)}
    chunk_a = dict(zip(keys_a, a, strict=True))
    # moved: out of its order among the chunks both kept. A chunk that only shifted because
    # one above it left or arrived (A x y z, B y z) kept its place: its ranks still show it
    both = set(keys_a) & set(keys_b)
    place_a = {k: i for i, k in enumerate(k for k in keys_a if k in both)}
    place_b = {k: i for i, k in enumerate(k for k in keys_b if k in both)}
    marks = []
    for j, (key, chunk) in enumerate(zip(keys_b, b, strict=True)):
        old = chunk_a.get(key)
        ra = rank_a.get(key)
        mark = "added" if old is None else ("kept" if place_a[key] == place_b[key] else "moved")
        marks.append(
            ChunkMark(
                mark,
                None if old is None else old.id,
                chunk.id,
                ra,
                j + 1,
                chunk.source if chunk.source is not None else (old.source if old else None),
                chunk.text,
            )
        )
    in_b = set(keys_b)
    for i, (key, chunk) in enumerate(zip(keys_a, a, strict=True)):
        if key not in in_b:
            marks.append(
                ChunkMark("removed", chunk.id, None, i + 1, None, chunk.source, chunk.text)
            )
    k = min(len(a), len(b))
    overlap = top_changed = None
    if k:
        top_a, top_b = set(keys_a[:k]), set(keys_b[:k])
        overlap = len(top_a & top_b) / len(top_a | top_b)
        top_changed = keys_a[0] != keys_b[0]
    return RetrievalDiff(
        case_id, "id" if by_id else "text", tuple(marks), len(a), len(b), k, overlap, top_changed
    )


def side_marks(
    diff: RetrievalDiff, a: Sequence[Chunk], b: Sequence[Chunk], side: str
) -> list[tuple[Chunk, ChunkMark | None]]:
    """One side's chunks ("A" or "B") in the diff's order (`ordered`), each with its mark in
    `diff` (found by its rank on that side, never by id: ids repeat). Every view of a case's
    chunks marks them from this, so the CLI and the screens agree."""
    mine = ordered(b if side == "B" else a)
    rank = (lambda m: m.rank_b) if side == "B" else (lambda m: m.rank_a)
    by_rank = {rank(m): m for m in diff.chunks if rank(m) is not None}
    return [(chunk, by_rank.get(i)) for i, chunk in enumerate(mine, start=1)]


@dataclass(frozen=True)
class RetrievalSummary:
    """Per comparison: over the cases where both runs retrieved something, and how many cases
    one run retrieved nothing for while the other did (a change of retrieval too)."""

    n_cases: int  # cases with chunks in both runs
    n_without: int  # paired cases where a run recorded no chunks
    mean_overlap: float | None
    top_changed: int  # cases whose first chunk changed
    top_changed_share: float | None
    with_added: int
    with_removed: int
    with_moved: int
    unchanged: int  # same chunks in the same order
    matched_by_text: int  # cases whose chunk ids did not name chunks
    only_a: int = 0  # cases where A retrieved chunks and B none (they are gone)
    only_b: int = 0  # cases where B retrieved chunks and A none

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarise_retrieval(diffs: Sequence[RetrievalDiff], n_paired: int) -> RetrievalSummary:
    both = [d for d in diffs if d.k]
    n = len(both)
    return RetrievalSummary(
        n_cases=n,
        n_without=n_paired - n,
        only_a=sum(d.n_a > 0 and d.n_b == 0 for d in diffs),
        only_b=sum(d.n_b > 0 and d.n_a == 0 for d in diffs),
        mean_overlap=sum(d.overlap or 0.0 for d in both) / n if n else None,
        top_changed=sum(bool(d.top_changed) for d in both),
        top_changed_share=sum(bool(d.top_changed) for d in both) / n if n else None,
        with_added=sum(d.count("added") > 0 for d in both),
        with_removed=sum(d.count("removed") > 0 for d in both),
        with_moved=sum(d.count("moved") > 0 for d in both),
        unchanged=sum(all(c.mark == "kept" for c in d.chunks) for d in both),
        matched_by_text=sum(d.matched_by == "text" for d in both),
    )
