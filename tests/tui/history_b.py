"""A small, fixed run history for the Compare/Case screen tests, written with the real writer.

baseline (3 reruns of one config), small-generator (a weaker generator: many regressions, with
refund-07 going from a supported answer to an unsupported one) and strict-prompt (another judge
prompt: better scores, and a comparability warning). Deterministic: a seeded RNG, fixed dates.
"""

from __future__ import annotations

import random
from pathlib import Path

from textual._context import visible_screen_stack

from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import write_run_file

TOPICS = {
    "refund": (
        "Who approves refunds requested more than {n} days after renewal?",
        "refund_policy.md",
        "Refunds requested more than {n} days after renewal need manager approval and are issued as account credit.",
    ),
    "billing": (
        "Can invoices for plan {n} be issued in EUR?",
        "billing_faq.md",
        "Invoices for plan {n} can be issued in EUR and USD on the first business day.",
    ),
    "login": (
        "How long does password reset link {n} stay valid?",
        "support_runbook.md",
        "Reset link {n} expires after one hour; users request it from the login page.",
    ),
    "shipping": (
        "How long does shipping to zone {n} take?",
        "shipping.md",
        "Standard shipping to zone {n} takes 3 to 5 business days; express takes one day.",
    ),
}
LABELS = {1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}
WORST = "refund-07"  # the case small-generator breaks on purpose
N_PER_TOPIC = 10


def case_ids() -> list[str]:
    return [f"{t}-{k:02d}" for t in TOPICS for k in range(1, N_PER_TOPIC + 1)]


def _chunks(topic: str, k: int) -> tuple[Chunk, ...]:
    _, source, text = TOPICS[topic]
    other = next(t for t in TOPICS if t != topic)
    return (
        Chunk("C1", text.format(n=k), source, 1, 0.83),
        Chunk("C2", TOPICS[other][2].format(n=k), TOPICS[other][1], 2, 0.71),
        Chunk(
            "C3", f"Escalations for {topic} case {k} go to the team lead.", "escalation.md", 3, 0.52
        ),
    )


def _case(
    cid: str, faith: float, relevance: int, precision: float, good: bool, prompt: str, err: bool
) -> Case:
    topic, k = cid.rsplit("-", 1)[0], int(cid.rsplit("-", 1)[1])
    question = TOPICS[topic][0].format(n=k)
    if good:
        answer = f"Per the {topic} policy: " + TOPICS[topic][2].format(n=k)
        claims = (
            Claim("faithfulness", f"The {topic} rule applies to case {k}", "SUPPORTED", ("C1",)),
            Claim(
                "faithfulness",
                "It is handled by the usual team",
                "PARTIAL",
                ("C3",),
                "C3 names the team lead only",
            ),
        )
    else:
        answer = f"Support handles {topic} case {k} within 24 hours and pays back by card."
        claims = (
            Claim("faithfulness", "Support handles it", "UNSUPPORTED", (), "no chunk says so"),
            Claim(
                "faithfulness", "within 24 hours", "UNSUPPORTED", (), "no time limit in the chunks"
            ),
            Claim(
                "faithfulness",
                "paid back by card",
                "UNSUPPORTED",
                ("C1",),
                "C1 says account credit",
            ),
        )
    label = LABELS[faith]
    scores = {
        "faithfulness": Score(
            faith, raw=label, label=label, reply=label, prompt_hash=prompt, reason=f"judged {label}"
        ),
        "answer_relevance": Score(
            (relevance - 1) / 4,
            raw=relevance,
            scale=(1.0, 5.0),
            prompt_hash="rel-v1",
            reply=f'{{"score": {relevance}}}',
        ),
    }
    errors = {}
    if err:
        errors["context_precision"] = "judge reply was not valid JSON"
    else:
        scores["context_precision"] = Score(precision, raw=precision, prompt_hash="prec-v1")
    return Case(
        case_id=cid,
        question=question,
        answer=answer,
        reference=TOPICS[topic][2].format(n=k),
        contexts=_chunks(topic, k),
        scores=scores,
        claims=claims,
        errors=errors,
        latency_ms=800.0 + k,
    )


def write_history(folder: Path) -> dict[str, str]:
    """Write the history into `folder`; returns {name: run id} (baseline: the first rerun)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261201)
    ids = case_ids()
    base_faith = {c: rng.choice([1.0, 1.0, 1.0, 1.0, 0.5, 0.0]) for c in ids}
    base_faith[WORST] = 1.0
    base_rel = {c: rng.choice([3, 4, 4, 5, 5]) for c in ids}
    base_prec = {c: round(rng.uniform(0.4, 1.0), 2) for c in ids}
    judge = JudgeInfo("qwen2.5:7b", "ollama", "faith-label-v1")
    dataset = DatasetInfo("golden", "v3")
    out: dict[str, str] = {}

    def step(v: float, d: int) -> float:
        return min(1.0, max(0.0, v + 0.5 * d))

    for r in range(3):  # reruns of the same config: the judge flips a few cases by one step
        cases = []
        for c in ids:
            f = base_faith[c]
            if r and c != WORST and rng.random() < 0.1:
                f = step(f, rng.choice([-1, 1]))
            cases.append(_case(c, f, base_rel[c], base_prec[c], f > 0, "faith-label-v1", False))
        run_id = f"baseline-r{r + 1}"
        run = Run(
            run_id,
            "baseline",
            f"2026-11-20T1{r}:00:00Z",
            {"top_k": 3, "generator": "llama3.2:3b", "prompt": "v1", "rerun": r},
            judge=judge,
            dataset=dataset,
        )
        write_run_file(folder / f"{run_id}.ragtui.jsonl", run, cases)
        out.setdefault("baseline", run_id)

    cases = []
    for i, c in enumerate(ids):
        f = base_faith[c]
        if c == WORST:
            f = 0.0
        elif rng.random() < 0.35:
            f = step(f, -2 if rng.random() < 0.3 else -1)
        rel = max(1, base_rel[c] - (1 if rng.random() < 0.3 else 0))
        cases.append(_case(c, f, rel, base_prec[c], f > 0, "faith-label-v1", i % 13 == 5))
    run = Run(
        "small-gen-1",
        "small-generator",
        "2026-11-22T09:00:00Z",
        {"top_k": 3, "generator": "qwen2.5:0.5b", "prompt": "v1"},
        judge=judge,
        dataset=dataset,
    )
    write_run_file(folder / "small-gen-1.ragtui.jsonl", run, cases)
    out["small-generator"] = run.id

    cases = []
    for c in ids:
        f = step(base_faith[c], 1) if rng.random() < 0.5 else base_faith[c]
        cases.append(_case(c, f, base_rel[c], base_prec[c], f > 0, "faith-label-v2", False))
    run = Run(
        "strict-1",
        "strict-prompt",
        "2026-11-24T09:00:00Z",
        {"top_k": 3, "generator": "llama3.2:3b", "prompt": "strict-v2"},
        judge=JudgeInfo("qwen2.5:7b", "ollama", "faith-label-v2"),
        dataset=dataset,
    )
    write_run_file(folder / "strict-1.ragtui.jsonl", run, cases)
    out["strict-prompt"] = run.id
    return out


# ---------------------------------------------------------------- reading the screen


def screen_strips(app) -> list:  # type: ignore[no-untyped-def]
    """The current screen drawn afresh by its real compositor, over the screens it covers (as
    Textual's own screenshots do: a modal screen's backdrop is the screens beneath it)."""
    visible_screen_stack.set(app._background_screens)
    return app.screen._compositor.render_strips()


def screen_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The screen as the terminal would show it, one string per row (from the real compositor)."""
    return ["".join(seg.text for seg in strip) for strip in screen_strips(app)]


def screen_text(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(screen_lines(app))


def screen_segments(app) -> list:  # type: ignore[no-untyped-def]
    """Every rendered segment (text + style) of the current screen."""
    return [seg for strip in screen_strips(app) for seg in strip]
