"""A tiny hand-made history for the diagnosis on screen: every figure below is worked out by
hand in the table, so the tests compare the screens with it, not with the code.

Runs: base-r1 and base-r2 (two reruns of one config: A), cand-1 (a retriever change: B),
alt-1 and alt-2 (two more configs, for the several-candidates table). Three metrics:
faithfulness (YES/PARTIAL/NO), context_recall and answer_relevance, all fractions.

case      faith r1 r2 B   recall r1 r2 B   relev r1 r2 B   what B did
ret-01    1   1   0       1   1   0        1   1   1       dropped chunk C1 (it supported A's claim)
gen-02    1   1   0       1   1   1        1   1   1       same chunks, worse answer, no claims
gen-03    1   1   .5      1   1   1        1   1   1       kept A's claim, added an unsupported one
fix-04    0   0   1       1   1   1        1   1   1       its claim became supported
flaky-05  1   0   1       1   1   1        1   1   1       A's reruns disagree
move-06   1   1   1       1   1   1        1   1   1       swapped the ranks of C1 and C2
fail-07   0   0   0       1   1   1        1   1   1       fails everywhere
off-08    1   1   1       1   1   1        1   1   .25     answered another question

By hand (A = the mean of its two reruns per case):
- faithfulness Δ = (-1 -1 -.5 +1 +.5 +0 +0 +0) / 8 = -0.125 -> "-12.5 pts"; fell (B below both
  reruns): ret-01 (context recall fell: retrieval miss), gen-02 (faithfulness fell, recall held:
  ignored context), gen-03 (a new unsupported claim, recall held: hallucination) -> 3 cases,
  2 generation, 1 retrieval.
- context_recall Δ = -1/8 -> "-12.5 pts"; fell: ret-01 (retrieval).
- answer_relevance Δ = -.75/8 -> "-9.4 pts"; fell: off-08 (relevance fell alone: off-intent).
- retrieval: ret-01 A [C1 C2 C3] B [C2 C3 C4]: C4 added, C1 removed, C2 and C3 moved up one;
  top-3 overlap |{C2,C3}| / |{C1..C4}| = 0.5, top chunk changed. move-06: overlap 1, top chunk
  changed. Others: unchanged. Mean overlap (0.5 + 7) / 8 = 0.9375 -> "93.8"; top chunk changed
  in 2 of 8.
- claims: ret-01 lost support (its chunk C1 gone), gen-03 one new unsupported, fix-04 fixed.
- faithfulness classes (pass: >= 0.5): newly broken ret-01 gen-02; newly fixed fix-04; flaky
  flaky-05; stable pass gen-03 move-06 off-08; stable fail fail-07.
"""

from __future__ import annotations

from pathlib import Path

from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import write_run_file

A, B = "base-r1", "cand-1"
CASES = ("ret-01", "gen-02", "gen-03", "fix-04", "flaky-05", "move-06", "fail-07", "off-08")
# case -> (faithfulness r1, r2, B), (recall r1, r2, B), (relevance r1, r2, B)
VALUES = {
    "ret-01": ((1, 1, 0), (1, 1, 0), (1, 1, 1)),
    "gen-02": ((1, 1, 0), (1, 1, 1), (1, 1, 1)),
    "gen-03": ((1, 1, 0.5), (1, 1, 1), (1, 1, 1)),
    "fix-04": ((0, 0, 1), (1, 1, 1), (1, 1, 1)),
    "flaky-05": ((1, 0, 1), (1, 1, 1), (1, 1, 1)),
    "move-06": ((1, 1, 1), (1, 1, 1), (1, 1, 1)),
    "fail-07": ((0, 0, 0), (1, 1, 1), (1, 1, 1)),
    "off-08": ((1, 1, 1), (1, 1, 1), (1, 1, 0.25)),
}
# the other candidates: faithfulness per case (recall and relevance as A's first rerun)
ALT = {
    "alt-1": dict.fromkeys(CASES, 1.0),  # every case supported
    "alt-2": {c: VALUES[c][0][0] for c in CASES},  # A's first rerun again
}
NAMES = {"alt-1": "all-supported", "alt-2": "base-again"}
LABEL = {1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}
ANSWERS = {
    "ret-01": (
        "A manager approves late refunds and issues them as credit.",
        "Support approves late refunds and pays them by card.",
    ),
    "gen-02": ("Invoices can be issued in EUR.", "Invoices are only issued in dollars."),
}
SUPPORT = "Refunds past 30 days need manager approval and are issued as credit."


def _chunks(case_id: str, side: str) -> tuple[Chunk, ...]:
    c1 = Chunk("C1", SUPPORT if case_id == "ret-01" else f"{case_id} policy.", "policy.md", 1, 0.9)
    c2 = Chunk("C2", f"{case_id} FAQ entry.", "faq.md", 2, 0.8)
    c3 = Chunk("C3", f"{case_id} escalation runbook.", "runbook.md", 3, 0.7)
    if side == "A":
        return (c1, c2, c3)
    if case_id == "ret-01":  # the retriever change: C1 gone, C4 new
        c4 = Chunk("C4", "Card payments settle in two days.", "payments.md", 3, 0.6)
        return (
            Chunk("C2", c2.text, c2.source, 1, 0.8),
            Chunk("C3", c3.text, c3.source, 2, 0.7),
            c4,
        )
    if case_id == "move-06":
        return (
            Chunk("C2", c2.text, c2.source, 1, 0.9),
            Chunk("C1", c1.text, c1.source, 2, 0.8),
            c3,
        )
    return (c1, c2, c3)


def _claims(case_id: str, side: str) -> tuple[Claim, ...]:
    f = "faithfulness"
    if case_id == "ret-01":
        text = "Late refunds need manager approval"
        if side == "A":
            return (Claim(f, text, "SUPPORTED", ("C1",), "C1 says so"),)
        return (Claim(f, text, "UNSUPPORTED", (), "no chunk mentions approval"),)
    if case_id == "gen-03":
        kept = Claim(f, "Invoices are issued in EUR", "SUPPORTED", ("C1",))
        if side == "A":
            return (kept,)
        return (kept, Claim(f, "Invoices are free of charge", "UNSUPPORTED", (), "not in C1-C3"))
    if case_id == "fix-04":
        verdict = "UNSUPPORTED" if side == "A" else "SUPPORTED"
        return (Claim(f, "Exports run every night", verdict, ("C2",) if side == "B" else ()),)
    return ()


def _case(case_id: str, side: str, faith: float, recall: float, relevance: float) -> Case:
    answers = ANSWERS.get(case_id, (f"The answer to {case_id}.", f"The answer to {case_id}."))
    label = LABEL[float(faith)]
    return Case(
        case_id=case_id,
        question=f"What does the policy say about {case_id}?",
        answer=answers[0 if side == "A" else 1],
        reference=f"The reference for {case_id}.",
        contexts=_chunks(case_id, side),
        scores={
            "faithfulness": Score(float(faith), raw=label, label=label, reply=label),
            "context_recall": Score(float(recall), raw=recall),
            "answer_relevance": Score(float(relevance), raw=relevance),
        },
        claims=_claims(case_id, side),
        latency_ms=500.0,
    )


def write_history(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    judge = JudgeInfo("qwen2.5:7b", "ollama", "faith-label-v1")
    dataset = DatasetInfo("golden", "v1")

    def write(run_id: str, name: str, day: str, key: str, cases: list[Case]) -> None:
        run = Run(
            run_id,
            name,
            f"2026-12-{day}Z",
            {"retriever": key},
            config_key=f"cfg-{key}",
            judge=judge,
            dataset=dataset,
            kind="eval" if not run_id.endswith("r2") else "rerun",
        )
        write_run_file(folder / f"{run_id}.ragtui.jsonl", run, cases)

    for r, run_id in enumerate(("base-r1", "base-r2")):
        cases = [_case(c, "A", VALUES[c][0][r], VALUES[c][1][r], VALUES[c][2][r]) for c in CASES]
        write(run_id, "baseline", f"01T1{r}:00:00", "base", cases)
    write(
        B,
        "retriever-v2",
        "02T10:00:00",
        "cand",
        [_case(c, "B", VALUES[c][0][2], VALUES[c][1][2], VALUES[c][2][2]) for c in CASES],
    )
    for day, (run_id, faith) in enumerate(ALT.items(), start=3):
        cases = [_case(c, "A", faith[c], VALUES[c][1][0], VALUES[c][2][0]) for c in CASES]
        write(run_id, NAMES[run_id], f"0{day}T10:00:00", run_id, cases)
    return folder
