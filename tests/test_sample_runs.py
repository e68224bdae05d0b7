"""The bundled demo history (sample_runs/): it reads cleanly, has the shape the demo promises,
its comparisons come out as intended (checked with scipy), and the script reproduces it."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragtui.core.model import RunFile
from ragtui.core.runfile import SUFFIX, read_run_file

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_runs"
SCRIPT = ROOT / "scripts" / "make_sample_runs.py"
METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")
BASELINES = ("baseline-2026-11-02", "baseline-2026-11-03", "baseline-2026-11-05")
REGENERATED = "baseline-2026-11-29"  # a rerun of the baseline that generated its answers again
REJUDGE = "rejudge-llama3.1-2026-11-06"
STRICT, SMALL, NOISE = "strict-v2-2026-11-16", "small-gen-2026-11-19", "overlap64-2026-11-12"
STRICT_2, STRICT_REJUDGE = "strict-v2-2026-11-17", "rejudge-llama3.1-2026-11-18"
BM25, SUMMARY = "bm25-2026-11-21", "nightly-ci-2026-11-30"
LABELS = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}


@pytest.fixture(scope="module")
def all_runs() -> dict[str, RunFile]:
    files = sorted(SAMPLE.glob("*" + SUFFIX))
    out = {}
    for path in files:
        rf = read_run_file(path)
        assert path.name == rf.run.id + SUFFIX
        out[rf.run.id] = rf
    return out


@pytest.fixture(scope="module")
def runs(all_runs: dict[str, RunFile]) -> dict[str, RunFile]:
    """The runs with cases (all but the summary-only one)."""
    return {rid: rf for rid, rf in all_runs.items() if rid != SUMMARY}


def values(rf: RunFile, metric: str) -> dict[str, float]:
    return {c.case_id: c.scores[metric].value for c in rf.cases if metric in c.scores}


def paired(a: dict[str, float], b: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    keys = sorted(set(a) & set(b))
    return np.array([a[k] for k in keys]), np.array([b[k] for k in keys])


def rerun_mean(runs: dict[str, RunFile], metric: str) -> dict[str, float]:
    per_run = [values(runs[r], metric) for r in BASELINES]
    return {k: float(np.mean([v[k] for v in per_run])) for k in per_run[0]}


def holm4(p: float) -> float:
    """The smallest p of four metrics after Holm: p times 4 (the strictest step)."""
    return min(1.0, 4 * p)


def test_shape_of_the_history(runs: dict[str, RunFile]) -> None:
    assert len(runs) >= 9
    case_ids = [c.case_id for c in runs[BASELINES[0]].cases]
    assert len(case_ids) >= 40
    dates = []
    for rf in runs.values():
        assert [c.case_id for c in rf.cases] == case_ids, rf.run.id
        assert rf.run.created_at.endswith("Z")
        dates.append(datetime.fromisoformat(rf.run.created_at.replace("Z", "+00:00")))
        assert rf.run.dataset.name == "northwind-golden"
    assert all(d.year == 2026 and d.month == 11 and d.tzinfo == UTC for d in dates)
    assert (max(dates) - min(dates)).days >= 21  # several weeks
    topics = {cid.split("-")[0] for cid in case_ids}
    assert {"refund", "billing", "support", "api", "sso", "retention", "onboarding"} <= topics


def test_kinds_parents_and_config_keys(runs: dict[str, RunFile]) -> None:
    kinds = {rid: rf.run.kind for rid, rf in runs.items()}
    assert kinds[BASELINES[0]] == "eval"
    assert kinds[BASELINES[1]] == kinds[BASELINES[2]] == "rerun"
    assert sorted(r for r, k in kinds.items() if k == "rejudge") == [REJUDGE, STRICT_REJUDGE]
    assert kinds[REGENERATED] == kinds[STRICT_2] == "rerun"
    assert len({runs[r].run.config_key for r in (*BASELINES, REGENERATED)}) == 1
    assert runs[STRICT].run.config_key == runs[STRICT_2].run.config_key
    # every run but the reruns has a config of its own (the rejudges differ by judge)
    reruns = {*BASELINES[1:], REGENERATED, STRICT_2}
    others = [rf.run.config_key for rid, rf in runs.items() if rid not in reruns]
    assert len(set(others)) == len(others)

    # a second judge graded two runs (a baseline and the strict prompt) with one prompt
    pairs = ((BASELINES[0], REJUDGE), (STRICT, STRICT_REJUDGE))
    assert runs[REJUDGE].run.judge == runs[STRICT_REJUDGE].run.judge
    for parent_id, child_id in pairs:
        parent, child = runs[parent_id], runs[child_id]
        assert child.run.parent == parent.run.id
        assert child.run.judge.model != parent.run.judge.model
        assert child.run.judge.prompt_hash != parent.run.judge.prompt_hash
        for a, b in zip(parent.cases, child.cases, strict=True):
            assert (a.answer, a.contexts) == (b.answer, b.contexts)
            assert a.scores["faithfulness"].prompt_hash != b.scores["faithfulness"].prompt_hash
    children = {REJUDGE, STRICT_REJUDGE}
    assert all(rf.run.parent is None for rid, rf in runs.items() if rid not in children)

    configs = {rid: rf.run.config for rid, rf in runs.items()}
    base = configs[BASELINES[0]]
    assert base["generator"] == "llama3.2:3b" and base["top_k"] == 3
    assert base["prompt"] == "default-v1" and runs[BASELINES[0]].run.judge.model == "qwen2.5:7b"
    assert configs["topk5-2026-11-09"]["top_k"] == 5
    assert configs[STRICT]["prompt"] == "strict-v2"
    assert configs[SMALL]["generator"] == "llama3.2:1b"
    assert (base["chunk_overlap"], configs[NOISE]["chunk_overlap"]) == (50, 64)
    assert configs[BM25]["retriever"] == "bm25" and "retriever" not in base
    selfjudged = [rf for rf in runs.values() if rf.run.judge.model == rf.run.config["generator"]]
    assert selfjudged, "one run should be judged by its own generator"


def test_cases_are_complete_and_consistent(runs: dict[str, RunFile]) -> None:
    for rf in runs.values():
        top_k = rf.run.config["top_k"]
        for case in rf.cases:
            where = f"{rf.run.id}/{case.case_id}"
            assert case.question and case.answer and case.reference, where
            assert len(case.contexts) == top_k, where
            assert [c.rank for c in case.contexts] == list(range(1, top_k + 1)), where
            scores = [c.score for c in case.contexts]
            assert scores == sorted(scores, reverse=True), where
            assert all(c.source and c.source.endswith(".md") for c in case.contexts), where
            assert all(200 <= len(c.text) <= 500 for c in case.contexts), where
            ids = {c.id for c in case.contexts}
            assert all(c.metric == "faithfulness" for c in case.claims), where
            # an answer with no claim is an abstention: the model found nothing to say
            assert (
                case.claims
                or "context doesn't say" in case.answer
                or "couldn't find" in (case.answer)
            ), where
            assert case.cluster, where  # the passage that answers it
            for claim in case.claims:
                assert set(claim.chunks) <= ids, where
                assert bool(claim.chunks) == (claim.verdict == "SUPPORTED"), where
                assert claim.verdict == "SUPPORTED" or claim.reason, where
            assert set(case.scores) | set(case.errors) == set(METRICS), where
            assert not set(case.scores) & set(case.errors), where
            for score in case.scores.values():
                assert score.prompt_hash, where
                assert 0.0 <= score.value <= 1.0
            if "faithfulness" in case.scores:
                f = case.scores["faithfulness"]
                assert f.raw == f.label and f.value == LABELS[f.label] and f.reply, where
            if "answer_relevance" in case.scores:
                r = case.scores["answer_relevance"]
                assert r.scale == (1, 5) and r.raw in range(1, 6), where
                assert r.value == (r.raw - 1) / 4, where


def test_context_precision_matches_its_verdicts(runs: dict[str, RunFile]) -> None:
    import json

    for case in runs["topk5-2026-11-09"].cases:
        score = case.scores["context_precision"]
        verdicts = json.loads(score.reply)["verdicts"]
        assert len(verdicts) == len(case.contexts)
        # average precision over the relevant ranks (the RAGAS definition)
        hits = [k for k, v in enumerate(verdicts, start=1) if v]
        ap = np.mean([(i + 1) / k for i, k in enumerate(hits)]) if hits else 0.0
        assert score.value == pytest.approx(ap, abs=1e-4), case.case_id
        # the chunk the answer's first supported claim cites is judged relevant
        cited = [c.chunks[0] for c in case.claims if c.chunks]
        if cited:
            ranks = {c.id: c.rank for c in case.contexts}
            assert verdicts[ranks[cited[0]] - 1] == 1, case.case_id


def test_hallucinations_are_flagged(runs: dict[str, RunFile]) -> None:
    base = runs[BASELINES[0]]
    flagged = [c for c in base.cases if any(cl.verdict == "UNSUPPORTED" for cl in c.claims)]
    assert len(flagged) >= 8
    labels = [c.scores["faithfulness"].label for c in flagged]
    assert sum(label != "YES" for label in labels) >= 0.8 * len(labels)
    assert any(
        any(ch.isdigit() for ch in cl.text)
        for c in flagged
        for cl in c.claims
        if cl.verdict == "UNSUPPORTED"
    )
    strict = runs[STRICT]
    n_strict = sum(any(cl.verdict == "UNSUPPORTED" for cl in c.claims) for c in strict.cases)
    n_small = sum(any(cl.verdict == "UNSUPPORTED" for cl in c.claims) for c in runs[SMALL].cases)
    assert n_strict < len(flagged) < n_small


@pytest.mark.parametrize(
    ("labelled", "same_answers", "least"),
    [(BASELINES[0], (*BASELINES[1:], REJUDGE), 1), (STRICT, (STRICT_2, STRICT_REJUDGE), 0)],
)
def test_human_labels(
    runs: dict[str, RunFile], labelled: str, same_answers: tuple, least: int
) -> None:
    """At least 30 labels on each side of baseline vs strict (the prediction-powered estimate
    needs them), on the same cases of every run that has the same answers."""
    base = runs[labelled]
    human = {c.case_id: c.human["faithfulness"] for c in base.cases if c.human}
    assert len(human) == 32
    assert set(human.values()) <= {0.0, 0.5, 1.0} and len(set(human.values())) >= 2
    judge = values(base, "faithfulness")
    disagree = sum(judge[k] != v for k, v in human.items())
    assert least <= disagree <= 8  # the baseline's judge gets some wrong
    for other in same_answers:
        assert {c.case_id: c.human for c in runs[other].cases} == {
            c.case_id: c.human for c in base.cases
        }


def test_metric_errors_are_visible(runs: dict[str, RunFile]) -> None:
    errors = [(m, e) for rf in runs.values() for c in rf.cases for m, e in c.errors.items()]
    assert 2 <= len(errors) <= 10
    assert ("context_recall", "parse failure: judge reply was not valid JSON") in errors


def test_baseline_reruns_differ_by_judge_noise(runs: dict[str, RunFile]) -> None:
    for metric in METRICS:
        means = [np.mean(list(values(runs[r], metric).values())) for r in BASELINES]
        spread = max(means) - min(means)
        assert spread < 0.05, metric  # the classic "reruns differ by < 5 points"
        if metric == "faithfulness":
            gaps = [abs(a - b) for i, a in enumerate(means) for b in means[i + 1 :]]
            assert all(0.01 <= g <= 0.04 for g in gaps), gaps
    # the answers stay the same: only the judge's grades move
    a, b = runs[BASELINES[0]], runs[BASELINES[1]]
    assert [c.answer for c in a.cases] == [c.answer for c in b.cases]
    assert values(a, "faithfulness") != values(b, "faithfulness")


def test_rejudge_mostly_agrees(runs: dict[str, RunFile]) -> None:
    a = {c.case_id: c.scores["faithfulness"].label for c in runs[BASELINES[0]].cases}
    b = {c.case_id: c.scores["faithfulness"].label for c in runs[REJUDGE].cases}
    flips = sum(a[k] != b[k] for k in a)
    assert 4 <= flips <= 8


@pytest.mark.parametrize("reference", ["first", "reruns"])
def test_strict_prompt_is_a_real_improvement(runs: dict[str, RunFile], reference: str) -> None:
    ref = (
        values(runs[BASELINES[0]], "faithfulness")
        if reference == "first"
        else rerun_mean(runs, "faithfulness")
    )
    a, b = paired(ref, values(runs[STRICT], "faithfulness"))
    assert 0.10 <= (b - a).mean() <= 0.14
    assert holm4(stats.wilcoxon(b, a).pvalue) < 0.01
    assert holm4(stats.ttest_rel(b, a).pvalue) < 0.01
    assert holm4(sign_flip_p(b - a)) < 0.01


@pytest.mark.parametrize("metric", ["faithfulness", "answer_relevance"])
def test_small_generator_is_a_real_regression(runs: dict[str, RunFile], metric: str) -> None:
    for ref in (values(runs[BASELINES[0]], metric), rerun_mean(runs, metric)):
        a, b = paired(ref, values(runs[SMALL], metric))
        assert -0.18 <= (b - a).mean() <= -0.12
        assert holm4(stats.ttest_rel(b, a).pvalue) < 0.01
        assert holm4(stats.wilcoxon(b, a).pvalue) < 0.05
        assert holm4(sign_flip_p(b - a)) < 0.05


@pytest.mark.parametrize("metric", METRICS)
def test_chunk_overlap_change_is_pure_noise(runs: dict[str, RunFile], metric: str) -> None:
    for ref in (values(runs[BASELINES[0]], metric), rerun_mean(runs, metric)):
        a, b = paired(ref, values(runs[NOISE], metric))
        d = b - a
        assert abs(d.mean()) < 0.015
        if not d.any():
            continue
        # answer-level changes go both ways (a misread chunk only ever lowers precision)
        if metric in METRICS[:2] and (d != 0).sum() >= 2:
            assert (d > 0).any() and (d < 0).any()
        result = stats.ttest_rel(b, a)
        ci = result.confidence_interval(0.95)
        assert ci.low > -0.05 and ci.high < 0.05
        assert result.pvalue > 0.05 and sign_flip_p(d) > 0.05


def sign_flip_p(d: np.ndarray) -> float:
    """Paired sign-flip randomisation test on the mean difference (seeded)."""
    res = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=20_000, random_state=20261201
    )
    return float(res.pvalue)


def test_script_reproduces_the_files_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    made = sorted(p.name for p in tmp_path.glob("*" + SUFFIX))
    committed = sorted(p.name for p in SAMPLE.glob("*" + SUFFIX))
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_clusters_are_passages_shared_by_several_questions(runs: dict[str, RunFile]) -> None:
    clusters = [c.cluster for c in runs[BASELINES[0]].cases]
    assert all(clusters)
    sizes = sorted(clusters.count(x) for x in set(clusters))
    assert len(sizes) >= 20 and sizes[-1] >= 3  # enough clusters, several of them shared


def test_bm25_loses_supporting_chunks(runs: dict[str, RunFile]) -> None:
    """The retriever change: recall falls where a supporting chunk was replaced, and some
    answers state the lost fact anyway, without support."""
    base, bm25 = runs[BASELINES[0]], runs[BM25]
    lost = 0
    for a, b in zip(base.cases, bm25.cases, strict=True):
        if [c.id for c in a.contexts] != [c.id for c in b.contexts]:
            lost += 1
            assert b.scores["context_recall"].value <= a.scores["context_recall"].value
    assert 6 <= lost <= 16
    unsupported = [
        cl
        for c in bm25.cases
        for cl in c.claims
        if cl.verdict == "UNSUPPORTED" and "Stated" in (cl.reason or "")
    ]
    assert unsupported


def test_regenerated_rerun_has_new_answers(runs: dict[str, RunFile]) -> None:
    a, b = runs[BASELINES[0]], runs[REGENERATED]
    changed = sum(x.answer != y.answer for x, y in zip(a.cases, b.cases, strict=True))
    assert changed >= 10


def test_summary_only_run_states_its_means(all_runs: dict[str, RunFile]) -> None:
    rf = all_runs[SUMMARY]
    assert rf.cases == ()
    assert {f.metric for f in rf.run.stated} == {"faithfulness", "answer_relevance"}
    assert all(f.statistic == "mean" and f.n == 48 and 0 <= f.value <= 1 for f in rf.run.stated)


def test_thresholds_and_costs(runs: dict[str, RunFile]) -> None:
    for case in runs[BASELINES[0]].cases:
        assert case.scores["answer_relevance"].threshold == 0.75
        tokens = case.metadata["prompt_tokens"] + case.metadata["completion_tokens"]
        assert case.metadata["cost_usd"] == pytest.approx(tokens * 0.06 / 1e6)
