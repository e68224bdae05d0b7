"""The simulated RAG system and LLM judge behind the demo history (see make_sample_runs.py).

Retrieval ranks the corpus chunks of scripts/sample_corpus.toml; generation assembles an answer
from the case's claims (dropping what was not retrieved, inventing what a weak model invents);
the judge grades it with seeded noise. Everything is seeded: same inputs, same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragtui.core.model import Chunk, Claim, JudgeInfo, Score

HERE = Path(__file__).resolve().parent
CORPUS = tomllib.loads((HERE / "sample_corpus.toml").read_text(encoding="utf-8"))
CHUNKS: dict[str, dict[str, str]] = {c["id"]: c for c in CORPUS["chunk"]}
CASES: list[dict[str, Any]] = CORPUS["case"]
LABEL_VALUE = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}


@dataclass(frozen=True)
class System:
    """What produced the answers: generator, prompt, retrieval."""

    generator: str
    prompt: str
    top_k: int
    style: str  # "base", "strict" or "small": how the model words (and invents) things
    halluc_cut: int  # the cases of lowest hardness rank below this hallucinate
    core_only: bool = False  # only invented direct answers survive (the strict prompt)
    overlap: int = 50
    retriever: str = "dense"  # "bm25": keyword search misses some supporting chunks


@dataclass(frozen=True)
class Judge:
    model: str
    provider: str
    prompt_version: str
    flip: float = 0.12  # chance a borderline (PARTIAL) label moves one step (judge noise)
    flip_clear: float = 0.025  # the same for clear-cut YES / NO answers
    lenient: float = 0.0  # chance a flawed answer is graded one step too kindly

    def prompt_hash(self, metric: str | None = None) -> str:
        text = self.prompt_version if metric is None else f"{self.prompt_version}/{metric}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def info(self) -> JudgeInfo:
        return JudgeInfo(model=self.model, provider=self.provider, prompt_hash=self.prompt_hash())


OPENERS = {
    "base": ["", "", "", "", "Here's what the documentation says.", "Based on the documentation:"],
    "strict": ["", "", "According to the provided context:"],
    "small": ["Great question!", "Sure!", "Of course!", ""],
}
CLOSERS = {
    "base": [
        "",
        "",
        "",
        "",
        "Let me know if you need the exact policy wording.",
        "Hope that helps!",
    ],
    "strict": [""],
    "small": ["I hope this helps!", "Let me know if you have any other questions!", ""],
}
ABSTAIN = [
    "The provided context doesn't say anything more specific about this.",
    "I couldn't find further details on this in the retrieved documents.",
]
FILLERS = [
    "If you're unsure, it's always best to reach out to Northwind support.",
    "Policies like this can sometimes vary depending on your plan.",
    "You can usually find this information in your account settings.",
    "Make sure to double-check with your workspace administrator before making changes.",
    "Northwind Cloud is designed to make this process as simple as possible.",
]
FILLER_REASON = "Generic statement; plausible, but not stated in the retrieved context."
RELEVANCE_REASONS = {
    5: ["Directly and completely answers the question.", "Answers exactly what was asked."],
    4: ["Answers the question but leaves out part of it.", "Relevant, with some padding."],
    3: ["Only partly addresses the question.", "Vague; the key detail is thin."],
    2: ["Mostly misses what was asked."],
    1: ["Does not answer the question."],
}


def rng_for(*parts: object) -> random.Random:
    # String seeds are hashed with SHA-512 by `random`, so this is stable across processes.
    return random.Random(":".join(str(p) for p in parts))


HARDNESS = sorted(CASES, key=lambda c: rng_for("hardness", c["id"]).random())
RANK = {c["id"]: i for i, c in enumerate(HARDNESS)}


def relevant(case: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(chunk for _, chunk in case["claims"]))


def retrieve(case: dict[str, Any], system: System) -> list[Chunk]:
    """Five ranked chunks: the relevant ones (the secondary ones sometimes ranked 4-5,
    so top_k 3 misses them) among same-document and unrelated distractors."""
    rng = rng_for("retrieve", case["id"])
    rel = relevant(case)
    source = CHUNKS[rel[0]]["source"]
    same = [c for c in CHUNKS if CHUNKS[c]["source"] == source and c not in rel]
    other = [c for c in CHUNKS if CHUNKS[c]["source"] != source and c not in rel]
    rng.shuffle(same)
    rng.shuffle(other)
    ranked: list[str] = (same[:2] + other)[: 5 - len(rel)]
    rng.shuffle(ranked)
    ranked.insert(0 if rng.random() < 0.8 else 1, rel[0])
    for chunk in rel[1:]:
        ranked.insert(rng.choice([1, 2, 3, 4]), chunk)
    ranked = ranked[:5]
    # Same-document distractors outrank unrelated ones, as they would by embedding similarity.
    slots = [i for i, c in enumerate(ranked) if c not in rel]
    by_source = sorted((ranked[i] for i in slots), key=lambda c: CHUNKS[c]["source"] != source)
    for i, chunk in zip(slots, by_source, strict=True):
        ranked[i] = chunk
    top = rng.uniform(0.74, 0.89)
    scores = [top]
    for _ in ranked[1:]:
        scores.append(scores[-1] - rng.uniform(0.015, 0.07))
    if system.overlap != 50:  # other chunk boundaries: scores move a little, order barely
        jitter = rng_for("overlap", system.overlap, case["id"])
        scores = sorted((s + jitter.uniform(-0.02, 0.02) for s in scores), reverse=True)
        i = jitter.randrange(1, 4)
        if ranked[i] not in rel and ranked[i + 1] not in rel:
            ranked[i], ranked[i + 1] = ranked[i + 1], ranked[i]
    if system.retriever == "bm25":
        ranked = keyword_miss(case, ranked, rel, same)
    return [
        Chunk(
            id=c,
            text=CHUNKS[c]["text"].strip(),
            source=CHUNKS[c]["source"],
            rank=r + 1,
            score=round(s, 3),
        )
        for r, (c, s) in enumerate(zip(ranked, scores, strict=True))
    ][: system.top_k]


def keyword_miss(
    case: dict[str, Any], ranked: list[str], rel: list[str], same: list[str]
) -> list[str]:
    """BM25 ranks a same-document chunk that shares the question's words above a supporting
    chunk worded differently: in about a quarter of the cases a supporting chunk (the second
    one where there are two) is replaced by a distractor. Recall falls; the answer loses that
    claim, or states it anyway without support."""
    if rng_for("bm25", case["id"]).random() >= 0.25:
        return ranked
    target = rel[1] if len(rel) > 1 else rel[0]
    spare = [c for c in same if c not in ranked] or [c for c in CHUNKS if c not in ranked]
    if target not in ranked[:3] or not spare:
        return ranked
    out = [c for c in ranked if c != target]
    out.insert(ranked.index(target), spare[0])
    return out


def states_anyway(case: dict[str, Any]) -> bool:
    """A model that lost a supporting chunk sometimes still states the fact (from its own
    training data): the claim stays, now unsupported by anything it retrieved."""
    return rng_for("anyway", case["id"]).random() < 0.5


@dataclass(frozen=True)
class Answer:
    text: str
    claims: tuple[Claim, ...]
    truth: str  # the faithfulness label a careful human would give
    relevance: int  # the answer relevance (1-5) a careful human would give
    halluc: bool


def hallucinates(case: dict[str, Any], system: System) -> bool:
    return RANK[case["id"]] < system.halluc_cut and (case["halluc"]["core"] or not system.core_only)


def generate(case: dict[str, Any], system: System, contexts: list[Chunk], seed: int) -> Answer:
    rng = rng_for("generate", system.style, system.prompt, seed, case["id"])
    seen = {c.id for c in contexts}
    bad = case["halluc"]
    halluc = hallucinates(case, system)
    parts: list[tuple[str, str, tuple[str, ...], str | None]] = []  # text, verdict, chunks, why
    dropped = False
    for i, (text, chunk) in enumerate(case["claims"]):
        if halluc and i == bad["index"]:
            parts.append((bad["text"], "UNSUPPORTED", (), bad["reason"]))
        elif chunk in seen:
            parts.append((text, "SUPPORTED", (chunk,), None))
        elif system.retriever == "bm25" and states_anyway(case):
            why = "Stated without support: no retrieved chunk says this."
            parts.append((text, "UNSUPPORTED", (), why))
        else:
            dropped = True  # the model never saw that chunk
    relevance = 5 - dropped
    truncated = filler = False
    if system.style == "small":
        if len(parts) >= 2 and rng.random() < 0.55:
            cut = len(parts) - 1
            if parts[cut][1] == "UNSUPPORTED":
                cut -= 1
            parts.pop(cut)
            truncated = True
            relevance -= 1
        if rng.random() < 0.35:
            parts.append((rng.choice(FILLERS), "PARTIAL", (), FILLER_REASON))
            filler = True
            relevance -= rng.random() < 0.5
    unsup = sum(p[1] == "UNSUPPORTED" for p in parts)
    if unsup:
        invented = halluc and bad["core"]
        truth = "NO" if invented or 2 * unsup > len(parts) else "PARTIAL"
    elif filler and not truncated and rng.random() < 0.5:
        truth = "YES"  # harmless padding
    else:
        truth = "PARTIAL" if filler else "YES"
    sentences = [cite(p[0], p[2], system.style) for p in parts]
    if dropped and (system.style == "strict" or not parts):
        sentences.append(rng.choice(ABSTAIN))
    if not parts:  # nothing it could say from what it retrieved: an honest, useless answer
        relevance = 1
    body = (
        "\n".join("- " + s for s in sentences)
        if len(sentences) >= 3 and rng.random() < 0.3
        else " ".join(sentences)
    )
    opener, closer = rng.choice(OPENERS[system.style]), rng.choice(CLOSERS[system.style])
    text = (opener + ("\n" if body.startswith("- ") else " ") + body).strip()
    text = (text + " " + closer).strip()
    claims = tuple(
        Claim(metric="faithfulness", text=t, verdict=v, chunks=c, reason=why)
        for t, v, c, why in parts
    )
    return Answer(text, claims, truth, max(1, relevance), unsup > 0)


def cite(sentence: str, chunks: tuple[str, ...], style: str) -> str:
    if style != "strict" or not chunks:
        return sentence
    return sentence[:-1] + f" (source: {CHUNKS[chunks[0]]['source']})" + sentence[-1]


def step(label: str, rng: random.Random, up: bool | None = None) -> str:
    if label == "PARTIAL":
        if up is None:
            up = rng.random() < 0.5
        return "YES" if up else "NO"
    if (up is True and label == "YES") or (up is False and label == "NO"):
        return label
    return "PARTIAL"


def judge_label(answer: Answer, judge: Judge, rng: random.Random) -> str:
    label = answer.truth
    if label != "YES" and rng.random() < judge.lenient:
        return step(label, rng, up=True)
    if rng.random() < (judge.flip if label == "PARTIAL" else judge.flip_clear):
        return step(label, rng)
    return label


def faithfulness_score(answer: Answer, label: str, judge: Judge, rng: random.Random) -> Score:
    why = next((c.reason for c in answer.claims if c.verdict == "UNSUPPORTED"), None)
    if label == "YES":
        reason = "All statements are supported by the context."
    elif why and label == answer.truth:
        reason = why
    elif answer.claims and answer.claims[-1].verdict == "PARTIAL":
        reason = "The answer adds general advice that the context does not contain."
    else:
        reason = why or "One statement goes slightly beyond what the context says."
    if judge.model.startswith("llama3.1"):
        reply = f"Verdict: {label}. {reason}"
    else:
        reply = label if rng.random() < 0.6 or label == "YES" else f"{label}\n{reason}"
    return Score(
        value=LABEL_VALUE[label],
        raw=label,
        label=label,
        reason=reason,
        reply=reply,
        prompt_hash=judge.prompt_hash("faithfulness"),
    )


def relevance_score(answer: Answer, judge: Judge, rng: random.Random) -> Score:
    raw = answer.relevance
    if rng.random() < 0.15:
        raw += -1 if raw == 5 or rng.random() < 0.5 else 1
    if rng.random() < judge.lenient * 0.5:
        raw += 1
    raw = min(5, max(1, raw))
    reason = rng.choice(RELEVANCE_REASONS[raw])
    reply = json.dumps({"score": raw, "reason": reason})
    return Score(
        value=(raw - 1) / 4,
        raw=raw,
        scale=(1, 5),
        reason=reason,
        reply=reply,
        prompt_hash=judge.prompt_hash("answer_relevance"),
        threshold=0.75,  # a 4 of 5 passes: what the case history classes read
    )


def precision_score(
    case: dict[str, Any], contexts: list[Chunk], judge: Judge, rng: random.Random
) -> Score:
    rel = set(relevant(case))
    verdicts = [int(c.id in rel) for c in contexts]
    if rng.random() < 0.04:  # the judge misreads one chunk (never the top one)
        i = rng.randrange(1, len(verdicts))
        verdicts[i] = 1 - verdicts[i]
    hits, total = 0, 0.0
    for k, v in enumerate(verdicts, start=1):
        hits += v
        total += v * hits / k
    value = round(total / hits, 4) if hits else 0.0
    reason = f"{sum(verdicts)} of {len(verdicts)} retrieved chunks are relevant to the question."
    reply = json.dumps({"verdicts": verdicts, "reason": reason})
    return Score(
        value=value,
        raw=value,
        reason=reason,
        reply=reply,
        prompt_hash=judge.prompt_hash("context_precision"),
    )


def recall_score(
    case: dict[str, Any], contexts: list[Chunk], judge: Judge, rng: random.Random
) -> Score:
    seen = {c.id for c in contexts}
    attributed = [int(c in seen) for c in relevant(case)]
    if len(attributed) > 1 and rng.random() < 0.08:  # a multi-part reference is misread
        i = rng.randrange(len(attributed))
        attributed[i] = 1 - attributed[i]
    value = round(sum(attributed) / len(attributed), 4)
    reason = (
        f"{sum(attributed)} of {len(attributed)} reference statements are backed by the context."
    )
    reply = json.dumps({"attributed": attributed, "reason": reason})
    return Score(
        value=value,
        raw=value,
        reason=reason,
        reply=reply,
        prompt_hash=judge.prompt_hash("context_recall"),
    )
