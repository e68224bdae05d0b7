"""Regenerate the bundled demo history in sample_runs/ from scripts/sample_corpus.toml.

Deterministic (seeded `random`, no network, no LLM): running it again gives the same bytes.
The runs are built so that every ragtui feature has something to show: judge noise between
reruns (and one rerun that regenerated its answers), a real improvement (strict prompt, rerun
too), a real regression (1b generator), a pure-noise change (chunk overlap), a retriever change
that loses supporting chunks (bm25), a second judge over two runs, self-judging, human labels
on two configs, clusters (each case's source document), pass thresholds, costs, a few metric
errors and parse failures, and a summary-only run. The simulated system and judge live in
sample_sim.py.

    python scripts/make_sample_runs.py [--out sample_runs]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from sample_sim import (
    CASES,
    LABEL_VALUE,
    Judge,
    System,
    faithfulness_score,
    generate,
    judge_label,
    precision_score,
    recall_score,
    relevance_score,
    relevant,
    retrieve,
    rng_for,
    step,
)

from ragtui.core.model import Case, DatasetInfo, Run, StatedFigure, derive_config_key
from ragtui.core.runfile import SUFFIX, write_run_file

HERE = Path(__file__).resolve().parent
DATASET = DatasetInfo(name="northwind-golden", version="v3")


@dataclass(frozen=True)
class RunSpec:
    id: str
    name: str
    created_at: str
    system: System
    judge: Judge
    seed: int  # judge noise seed (also recorded in the config, a volatile key)
    kind: str = "eval"
    parent: str | None = None
    gen_seed: int = 0  # reruns keep the answers: judge noise only
    errors: int = 0  # how many metric errors to sprinkle in


BASE = System("llama3.2:3b", "default-v1", 3, "base", 18)
STRICT = System("llama3.2:3b", "strict-v2", 3, "strict", 16, core_only=True)
QWEN = Judge("qwen2.5:7b", "ollama", "ragtui-judge-v1")
LLAMA = Judge("llama3.1:8b", "ollama", "ragtui-judge-v1-llama")
# USD per million tokens, as a hosted endpoint would bill them (the demo's cost column)
PRICE = {"llama3.2:3b": 0.06, "llama3.2:1b": 0.03}
RUNS = [
    RunSpec("baseline-2026-11-02", "baseline", "2026-11-02T09:14:07Z", BASE, QWEN, 100),
    RunSpec("baseline-2026-11-03", "baseline #2", "2026-11-03T08:52:41Z", BASE, QWEN, 101, "rerun"),
    RunSpec("baseline-2026-11-05", "baseline #3", "2026-11-05T16:03:19Z", BASE, QWEN, 115, "rerun"),
    RunSpec(
        "rejudge-llama3.1-2026-11-06",
        "baseline, llama3.1 judge",
        "2026-11-06T11:27:55Z",
        BASE,
        LLAMA,
        21,
        "rejudge",
        parent="baseline-2026-11-02",
    ),
    RunSpec(
        "topk5-2026-11-09",
        "top_k 5",
        "2026-11-09T10:41:02Z",
        System("llama3.2:3b", "default-v1", 5, "base", 18),
        QWEN,
        31,
    ),
    RunSpec(
        "overlap64-2026-11-12",
        "overlap 64",
        "2026-11-12T14:18:30Z",
        System("llama3.2:3b", "default-v1", 3, "base", 18, overlap=64),
        QWEN,
        212,
        gen_seed=2,
    ),
    RunSpec(
        "strict-v2-2026-11-16",
        "strict prompt",
        "2026-11-16T09:05:12Z",
        STRICT,
        QWEN,
        213,
    ),
    RunSpec(
        "strict-v2-2026-11-17",
        "strict prompt #2",
        "2026-11-17T09:11:40Z",
        STRICT,
        QWEN,
        214,
        "rerun",
    ),
    RunSpec(
        "rejudge-llama3.1-2026-11-18",
        "strict prompt, llama3.1 judge",
        "2026-11-18T11:02:33Z",
        STRICT,
        LLAMA,
        22,
        "rejudge",
        parent="strict-v2-2026-11-16",
    ),
    RunSpec(
        "small-gen-2026-11-19",
        "llama3.2:1b",
        "2026-11-19T13:37:44Z",
        System("llama3.2:1b", "default-v1", 3, "small", 22),
        QWEN,
        205,
    ),
    RunSpec(
        "bm25-2026-11-21",
        "bm25 retriever",
        "2026-11-21T15:45:18Z",
        System("llama3.2:3b", "default-v1", 3, "base", 18, retriever="bm25"),
        QWEN,
        236,
    ),
    RunSpec(
        "self-judge-2026-11-23",
        "self-judged",
        "2026-11-23T17:22:09Z",
        BASE,
        Judge("llama3.2:3b", "ollama", "ragtui-judge-v1", lenient=0.6),
        228,
        gen_seed=1,
    ),
    RunSpec(
        "strict-topk5-2026-11-26",
        "strict + top_k 5",
        "2026-11-26T10:10:10Z",
        System("llama3.2:3b", "strict-v2", 5, "strict", 16, core_only=True),
        QWEN,
        81,
        errors=4,
    ),
    RunSpec(
        "baseline-2026-11-29",
        "baseline #4 (regenerated)",
        "2026-11-29T08:30:00Z",
        BASE,
        QWEN,
        117,
        "rerun",
        gen_seed=4,  # the answers were generated again: generation noise, not judge noise only
    ),
]
# Human faithfulness labels: 32 cases of the baseline's answers and of the strict prompt's.
# A run carries the labels of its answers (a re-judge keeps its parent's answers).
HUMAN_RUNS = {
    "baseline-2026-11-02": "baseline",
    "baseline-2026-11-03": "baseline",
    "baseline-2026-11-05": "baseline",
    "rejudge-llama3.1-2026-11-06": "baseline",
    "strict-v2-2026-11-16": "strict",
    "strict-v2-2026-11-17": "strict",
    "rejudge-llama3.1-2026-11-18": "strict",
}
N_HUMAN = 32
SUMMARY_ONLY = Run(
    id="nightly-ci-2026-11-30",
    name="nightly CI (aggregate only)",
    created_at="2026-11-30T02:00:00Z",
    config={"pipeline": "nightly-ci", "generator": "llama3.2:3b", "prompt": "strict-v2"},
    config_key="cfg-nightly-ci",
    judge=QWEN.info(),
    dataset=DATASET,
    stated=(
        StatedFigure("faithfulness", 0.802, raw=0.802, statistic="mean", n=48),
        StatedFigure("answer_relevance", 0.901, raw=0.901, statistic="mean", n=48),
    ),
)


def build_run(
    spec: RunSpec, labels: dict[str, dict[str, str]], humans: dict[str, dict[str, float]]
) -> tuple[Run, list[Case]]:
    system = spec.system
    config = {
        "generator": system.generator,
        "prompt": system.prompt,
        "top_k": system.top_k,
        "embedder": "nomic-embed-text",
        "chunk_size": 512,
        "chunk_overlap": system.overlap,
        "temperature": 0.2,
        "seed": spec.seed,
    }
    if system.retriever != "dense":  # (the dense runs predate the setting)
        config["retriever"] = system.retriever
    judge = spec.judge
    run = Run(
        id=spec.id,
        name=spec.name,
        created_at=spec.created_at,
        config=config,
        config_key=derive_config_key(config, judge.info()),
        judge=judge.info(),
        dataset=DATASET,
        parent=spec.parent,
        kind=spec.kind,
    )
    parent = labels.get(spec.parent or "", {})
    rejudged = rejudge_flips(parent, spec) if parent else {}
    err_rng = rng_for("errors", spec.id)
    errored = sorted(err_rng.sample([c["id"] for c in CASES], spec.errors))
    labels[spec.id] = {}
    labelled = humans.get(HUMAN_RUNS.get(spec.id, ""), {})
    cases = []
    for case in CASES:
        cid = case["id"]
        contexts = retrieve(case, system)
        answer = generate(case, system, contexts, spec.gen_seed)
        rng = rng_for("judge", spec.seed, cid)
        label = rejudged.get(cid, parent.get(cid)) if parent else judge_label(answer, judge, rng)
        assert label is not None
        labels[spec.id][cid] = label
        scores = {
            "faithfulness": faithfulness_score(answer, label, judge, rng),
            "answer_relevance": relevance_score(answer, judge, rng),
            "context_precision": precision_score(case, contexts, judge, rng),
            "context_recall": recall_score(case, contexts, judge, rng),
        }
        errors = {}
        if cid in errored:  # the first is a timeout, the rest unparseable replies
            metric = "answer_relevance" if cid == errored[0] else "context_recall"
            del scores[metric]
            errors[metric] = (
                "judge request timed out after 60 s"
                if metric == "answer_relevance"
                else "parse failure: judge reply was not valid JSON"
            )
        speed = {"small": 0.55, "strict": 1.12}.get(system.style, 1.0) * (
            1 + 0.06 * system.top_k - 0.18
        )
        latency = round(max(380.0, rng_for("lat", system, cid).gauss(1150, 260)) * speed)
        cases.append(
            Case(
                case_id=cid,
                question=case["question"],
                answer=answer.text,
                reference=case["reference"],
                contexts=tuple(contexts),
                scores=scores,
                claims=answer.claims,
                errors=errors,
                human={"faithfulness": labelled[cid]} if cid in labelled else {},
                latency_ms=latency,
                metadata=usage(cid, contexts, answer.text, system.generator),
                # the passage that answers it: questions about one passage are not
                # independent, so the comparison resamples by passage
                cluster=relevant(case)[0],
            )
        )
    return run, cases


def usage(cid: str, contexts: list, answer: str, generator: str) -> dict[str, object]:
    prompt = 160 + sum(len(c.text) for c in contexts) // 4
    completion = max(8, len(answer) // 4)
    return {
        "topic": cid.split("-")[0],
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost_usd": round((prompt + completion) * PRICE[generator] / 1e6, 8),
    }


def rejudge_flips(parent: dict[str, str], spec: RunSpec, n: int = 6) -> dict[str, str]:
    """A second judge agrees on most labels and flips about n borderline ones."""
    rng = rng_for("rejudge", spec.seed)
    borderline = [cid for cid, label in parent.items() if label != "YES"]
    clear = [cid for cid, label in parent.items() if label == "YES"]
    picks = rng.sample(borderline, min(len(borderline), n - 2)) + rng.sample(clear, 2)
    return {cid: step(parent[cid], rng) for cid in picks}


def human_labels(spec: RunSpec) -> dict[str, float]:
    """N_HUMAN human faithfulness labels on one config's answers (the truth) for a random
    sample of cases: a random sample, so the prediction-powered estimate is unbiased."""
    truth = {}
    for case in CASES:
        contexts = retrieve(case, spec.system)
        truth[case["id"]] = generate(case, spec.system, contexts, spec.gen_seed).truth
    picked = rng_for("humans", spec.system.style).sample(sorted(truth), N_HUMAN)
    return {cid: LABEL_VALUE[truth[cid]] for cid in sorted(picked)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE.parent / "sample_runs")
    args = parser.parse_args(argv)
    labels: dict[str, dict[str, str]] = {}
    by_id = {spec.id: spec for spec in RUNS}
    humans = {
        "baseline": human_labels(by_id["baseline-2026-11-02"]),
        "strict": human_labels(by_id["strict-v2-2026-11-16"]),
    }
    for spec in RUNS:
        run, cases = build_run(spec, labels, humans)
        path = write_run_file(args.out / f"{spec.id}{SUFFIX}", run, cases)
        print(f"wrote {path} ({len(cases)} cases)")
    path = write_run_file(args.out / f"{SUMMARY_ONLY.id}{SUFFIX}", SUMMARY_ONLY, [])
    print(f"wrote {path} (summary only)")


if __name__ == "__main__":
    main()
