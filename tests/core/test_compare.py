"""compare_runs over a real DuckDB index of native run files, and the verdict rules."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import stats
from ragtui.core.compare import MetricResult, analyse_metric, compare_runs, decide
from ragtui.core.errors import RagtuiError, RunNotFoundError
from ragtui.core.store import Store

BASE = {"generator": "llama3.2:3b", "prompt": "v1"}


def _ids(n: int) -> list[str]:
    return [f"case-{i:03d}" for i in range(n)]


def _values(ids: list[str], values: np.ndarray | list[float]) -> dict[str, float]:
    return {c: float(v) for c, v in zip(ids, values, strict=True)}


def test_paired_figures_counts_and_case_order(run_writer) -> None:
    ids = _ids(12)
    a = [1, 0, 1, 0.5, 1, 1, 0, 0.5, 1, 1, 0.5, 1]
    b = [1, 1, 1, 1, 0, 1, 0.5, 1, 1, 1, 1, 1]
    a_scores = _values(ids, a) | {"only-a": 1.0, "err-1": "judge reply was not JSON"}
    b_scores = _values(ids, b) | {"only-b-1": 0.0, "only-b-2": 1.0, "err-1": 1.0}
    run_writer.write("A", {"faithfulness": a_scores})
    run_writer.write("B", {"faithfulness": b_scores}, config={**BASE, "prompt": "v2"})
    c = compare_runs(run_writer.store(), "A", "B")
    m = c.metric("faithfulness")
    assert m is not None
    d = np.array(b) - np.array(a)
    assert (m.n, m.only_a, m.only_b, m.errors, m.errors_a, m.errors_b) == (12, 1, 2, 1, 1, 0)
    assert m.mean_a == pytest.approx(np.mean(a)) and m.mean_b == pytest.approx(np.mean(b))
    assert m.delta == pytest.approx(d.mean())
    assert m.se == pytest.approx(sps.sem(d))
    ref = sps.ttest_rel(b, a).confidence_interval()
    assert (m.ci_low, m.ci_high) == pytest.approx((ref.low, ref.high))
    assert m.ci_method == "t"
    assert m.p == pytest.approx(stats.sign_flip_exact(d))
    assert m.mde == pytest.approx(2.80 * sps.sem(d))
    assert m.fixed is None and m.mcnemar_p is None  # not binary
    assert m.noise_floor is None and m.rerun_delta is None and m.icc is None
    deltas = [x.delta for x in c.cases]
    assert deltas == sorted(deltas)
    assert c.cases[0].case_id == "case-004" and c.cases[0].delta == pytest.approx(-1.0)
    assert len(c.cases) == 12
    assert any("1 cases only in A, 2 only in B" in w for w in c.warnings)
    assert any("1 cases errored" in w for w in c.warnings)


def test_json_schema_and_nulls(run_writer) -> None:
    ids = _ids(40)
    rng = np.random.default_rng(1)
    run_writer.write("A", {"faithfulness": _values(ids, rng.integers(0, 2, 40))})
    run_writer.write("B", {"faithfulness": _values(ids, rng.integers(0, 2, 40))}, config={"x": 1})
    j = compare_runs(run_writer.store(), "A", "B").to_json()
    assert {"a", "b", "seed", "margin", "warnings", "metrics", "cases"} <= set(j)
    assert (j["a"], j["b"], j["seed"], j["margin"]) == ("A", "B", 20261201, 0.05)
    keys = [
        "metric",
        "n",
        "only_a",
        "only_b",
        "errors",
        "mean_a",
        "mean_b",
        "delta",
        "se",
        "ci_low",
        "ci_high",
        "p",
        "p_adj",
        "noise_floor",
        "rerun_delta",
        "icc",
        "mde",
        "power",
        "verdict",
        "reason",
    ]
    assert set(keys) <= set(j["metrics"][0])
    assert j["metrics"][0]["noise_floor"] is None and j["metrics"][0]["icc"] is None
    assert j["metrics"][0]["ci_method"] == "bootstrap"
    assert set(j["cases"][0]) == {"case_id", "metric", "a", "b", "delta"}
    assert [x["delta"] for x in j["cases"]] == sorted(x["delta"] for x in j["cases"])
    assert any("noise floor unknown" in line for line in j["noise"])


def test_reruns_give_baseline_mean_noise_floor_and_icc(run_writer) -> None:
    ids = _ids(40)
    rng = np.random.default_rng(2)
    quality = rng.uniform(size=40)
    reruns = [np.round(np.clip(quality + rng.normal(0, 0.15, 40), 0, 1) * 4) / 4 for _ in range(3)]
    for k, x in enumerate(reruns):
        run_writer.write(f"base-{k}", {"faithfulness": _values(ids, x)}, config={**BASE, "seed": k})
    b = np.round(np.clip(quality + 0.1, 0, 1) * 4) / 4
    run_writer.write("strict", {"faithfulness": _values(ids, b)}, config={**BASE, "prompt": "v2"})
    c = compare_runs(run_writer.store(), "base-0", "strict")
    m = c.metric("faithfulness")
    assert m is not None
    x = np.vstack(reruns)
    assert c.reruns_a == ["base-0", "base-1", "base-2"]
    assert m.mean_a == pytest.approx(x.mean())
    assert m.delta == pytest.approx((b - x.mean(axis=0)).mean())
    pooled = float(np.mean(np.var(x, axis=0, ddof=1)))
    assert m.noise_floor == pytest.approx(1.96 * math.sqrt(2 * pooled / 40))
    assert m.rerun_delta == pytest.approx(np.ptp(x.mean(axis=1)))
    assert m.icc == pytest.approx(stats.icc1(x))
    assert m.noise_runs == 3
    line = next(s for s in c.noise_lines if s.startswith("faithfulness: reruns of A"))
    assert f"differ by {m.rerun_delta * 100:.1f} points (rule of thumb: < 5)" in line
    assert any("seed 20261201" in s for s in c.noise_lines)


def test_cache_hit_rerun_is_flagged_and_left_out(run_writer) -> None:
    ids = _ids(30)
    a = np.random.default_rng(3).integers(0, 2, 30)
    run_writer.write("base", {"faithfulness": _values(ids, a)})
    run_writer.write("base-again", {"faithfulness": _values(ids, a)}, config={**BASE, "seed": 9})
    run_writer.write("cand", {"faithfulness": _values(ids, 1 - a)}, config={"prompt": "v9"})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert any("identical to base" in w and "cache hit" in w for w in c.warnings)
    assert c.metric("faithfulness").noise_floor is None
    assert c.reruns_a == ["base"]


def test_drifted_rerun_is_flagged(run_writer) -> None:
    ids = _ids(60)
    rng = np.random.default_rng(4)
    a = rng.uniform(0.2, 0.7, 60)
    run_writer.write("base", {"m": _values(ids, a)})
    run_writer.write(
        "base-2", {"m": _values(ids, a + 0.2 + rng.normal(0, 0.02, 60))}, config={**BASE, "seed": 2}
    )
    run_writer.write("cand", {"m": _values(ids, a)}, config={"prompt": "v9"})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert any("drifted" in w and "base-2" in w for w in c.warnings)


def test_comparability_warnings(run_writer) -> None:
    ids = _ids(5)
    run_writer.write("A", {"m": _values(ids, [1, 0, 1, 1, 0])})
    run_writer.write(
        "B",
        {"m": _values(ids, [1, 1, 1, 1, 0])},
        judge="llama3.2:3b",
        prompt_hash="faith-label-v2",
        dataset_version="v4",
    )
    w = " | ".join(compare_runs(run_writer.store(), "A", "B").warnings)
    assert "judge model differs between A and B (qwen2.5:7b → llama3.2:3b)" in w
    assert "judge prompt differs between A and B (faith-label-v1 → faith-label-v2)" in w
    assert "dataset version differs between A and B (v3 → v4)" in w
    assert "run B is judged by its own generator (llama3.2:3b)" in w
    assert "run A is judged by its own" not in w


def test_rejudge_gives_judge_agreement_with_flips(run_writer) -> None:
    ids = _ids(8)
    a = [1, 1, 0.5, 0, 1, 0, 1, 0.5]
    b = [1, 0.5, 0.5, 0, 0, 0, 1, 1]
    names = {1: "YES", 0.5: "PARTIAL", 0: "NO"}
    run_writer.write(
        "A",
        {"f": _values(ids, a)},
        labels={"f": {c: names[v] for c, v in zip(ids, a, strict=False)}},
    )
    run_writer.write(
        "A-rj",
        {"f": _values(ids, b)},
        judge="llama3.2:3b",
        kind="rejudge",
        parent="A",
        labels={"f": {c: names[v] for c, v in zip(ids, b, strict=False)}},
    )
    c = compare_runs(run_writer.store(), "A", "A-rj")
    assert len(c.agreement) == 1
    g = c.agreement[0]
    assert g.n == 8
    assert g.kappa == pytest.approx(stats.cohen_kappa([names[v] for v in a], [names[v] for v in b]))
    assert g.rho == pytest.approx(sps.spearmanr(a, b).statistic)
    assert g.flipped == ["case-004", "case-001", "case-007"]  # largest change first
    assert any("judge model differs" in w for w in c.warnings)
    # an ordinary eval pair graded different answers: no judge agreement
    run_writer.write("C", {"f": _values(ids, b)}, config={"prompt": "v2"})
    assert compare_runs(run_writer.store(), "A", "C").agreement == []


def test_human_agreement(run_writer) -> None:
    ids = _ids(10)
    judge = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    human = [1, 0, 0, 0, 1, 1, 1, 1, 0, 0]
    run_writer.write("A", {"f": _values(ids, judge)}, human={"f": _values(ids, human)})
    run_writer.write("B", {"f": _values(ids, judge)}, config={"prompt": "v2"})
    c = compare_runs(run_writer.store(), "A", "B")
    assert [g.between for g in c.human] == ["A judge vs human"]
    g = c.human[0]
    assert g.kappa == pytest.approx(stats.cohen_kappa(judge, human))
    assert sorted(g.flipped) == ["case-001", "case-005", "case-009"]
    assert g.flagged and any("low agreement, A judge vs human" in w for w in c.warnings)


def test_binary_metric_gets_mcnemar(run_writer) -> None:
    ids = _ids(50)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, 50)
    b = np.where(rng.uniform(size=50) < 0.3, 1, a)
    run_writer.write("A", {"hit": _values(ids, a)})
    run_writer.write("B", {"hit": _values(ids, b)}, config={"prompt": "v2"})
    m = compare_runs(run_writer.store(), "A", "B").metric("hit")
    fixed = int(np.sum((a == 0) & (b == 1)))
    assert (m.fixed, m.broke) == (fixed, 0)
    assert m.mcnemar_p == pytest.approx(sps.binomtest(0, fixed, 0.5).pvalue)


def test_holm_across_metrics_and_metric_selection(run_writer) -> None:
    ids = _ids(40)
    rng = np.random.default_rng(6)
    base = {m: rng.uniform(size=40) for m in ("m1", "m2", "m3")}
    run_writer.write("A", {m: _values(ids, v) for m, v in base.items()})
    run_writer.write(
        "B",
        {
            m: _values(ids, np.clip(v + rng.normal(0.05 * i, 0.2, 40), 0, 1))
            for i, (m, v) in enumerate(base.items())
        },
        config={"prompt": "v2"},
    )
    store = run_writer.store()
    c = compare_runs(store, "A", "B")
    assert [m.metric for m in c.metrics] == ["m1", "m2", "m3"]
    assert [m.p_adj for m in c.metrics] == pytest.approx(stats.holm([m.p for m in c.metrics]))
    only = compare_runs(store, "A", "B", metrics=["m2"])
    assert [m.metric for m in only.metrics] == ["m2"]
    assert only.metrics[0].p_adj == only.metrics[0].p
    with pytest.raises(RagtuiError, match="metric 'nope' is in neither run"):
        compare_runs(store, "A", "B", metrics=["nope"])
    with pytest.raises(RunNotFoundError):
        compare_runs(store, "A", "missing")


def test_seed_is_reproducible_and_recorded(run_writer) -> None:
    ids = _ids(60)
    rng = np.random.default_rng(7)
    run_writer.write("A", {"m": _values(ids, rng.uniform(size=60))})
    run_writer.write("B", {"m": _values(ids, rng.uniform(size=60))}, config={"prompt": "v2"})
    store = run_writer.store()
    one, two = (compare_runs(store, "A", "B", seed=42) for _ in range(2))
    other = compare_runs(store, "A", "B", seed=43)
    assert one.metrics == two.metrics and one.seed == 42
    assert one.metrics[0].ci_low != other.metrics[0].ci_low


# ---------------------------------------------------------------- verdict rules


def _result(**kw) -> MetricResult:
    base = dict(
        metric="m",
        n=100,
        only_a=0,
        only_b=0,
        errors=0,
        mean_a=0.5,
        mean_b=0.5,
        delta=0.0,
        se=0.01,
        ci_low=-0.02,
        ci_high=0.02,
        p=0.5,
        p_adj=0.5,
        noise_floor=None,
        rerun_delta=None,
        icc=None,
        mde=0.028,
        power=0.9,
        verdict="",
        reason="",
        sd=0.1,
        cases_needed=32,
    )
    return MetricResult(**(base | kw))


def test_verdict_rules() -> None:
    assert decide(_result(delta=0.08, p_adj=0.004), 0.05).verdict == "improved"
    assert decide(_result(delta=-0.08, p_adj=0.01), 0.05).verdict == "regressed"
    r = decide(_result(), 0.05)
    assert (r.verdict, r.reason) == ("within noise", "no meaningful change")
    r = decide(_result(n=40, ci_low=-0.07, ci_high=0.05, cases_needed=140), 0.05)
    assert (r.verdict, r.reason) == ("within noise", "inconclusive (need ~140 cases)")
    assert decide(_result(n=0), 0.05).verdict == "no data"


def test_a_a_simulation_false_positives_and_power() -> None:
    """500 seeded A/A pairs from one per-case distribution: <= 7 % improved/regressed;
    a true shift of 3 SE is detected in most pairs."""
    n = 60
    gen = np.random.default_rng(20261201)
    false_alarms = 0
    for i in range(500):
        q = gen.uniform(0.2, 0.9, n)  # per-case difficulty, shared by A and B
        a = (gen.uniform(size=n) < q).astype(float)
        b = (gen.uniform(size=n) < q).astype(float)
        r = analyse_metric("m", a, b, rng=stats.rng_for(i, "m"))
        false_alarms += r.verdict in ("improved", "regressed")
    assert false_alarms / 500 <= 0.07
    detected = 0
    for i in range(200):
        a = (gen.uniform(size=n) < 0.5).astype(float)
        # sd(d) for independent Bernoulli(.5) and Bernoulli(p): sqrt(.25 + p(1-p)); 3 SE ≈ .26
        b = (gen.uniform(size=n) < 0.76).astype(float)
        detected += analyse_metric("m", a, b, rng=stats.rng_for(i, "m")).verdict == "improved"
    assert detected / 200 >= 0.7


# ---------------------------------------------------------------- the shipped sample history

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
BASELINE = "baseline-2026-11-02"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    files = sorted(SAMPLES.glob("*.ragtui.jsonl"))
    if not files:
        pytest.skip("sample_runs/ has no run files yet")
    folder = tmp_path_factory.mktemp("samples")
    for f in files:  # a copy: the index must not be written into the repo
        shutil.copy(f, folder / f.name)
    store = Store.open(folder)
    assert not store.problems, store.problems
    yield store
    store.close()


def test_samples_strict_prompt_improves_faithfulness(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "strict-v2-2026-11-16")
    assert c.metric("faithfulness").verdict == "improved"
    assert len(c.reruns_a) == 3  # the baseline's two reruns are averaged in


def test_samples_smaller_generator_regresses(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "small-gen-2026-11-19")
    assert c.metric("faithfulness").verdict == "regressed"


def test_samples_pure_noise_change_is_within_noise(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "overlap64-2026-11-12")
    assert {m.verdict for m in c.metrics} == {"within noise"}


def test_samples_baseline_reruns_give_a_noise_floor(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "strict-v2-2026-11-16")
    for m in c.metrics:  # a deterministic metric may have a floor of exactly 0
        assert m.noise_floor is not None and m.noise_floor >= 0, m
        assert m.rerun_delta is not None and m.noise_runs == 3
    faith = c.metric("faithfulness")
    assert faith.noise_floor > 0 and faith.icc is not None
    assert any("reruns of A (3 runs" in line for line in c.noise_lines)


def test_samples_rejudge_warns_and_shows_judge_agreement(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "rejudge-llama3.1-2026-11-06")
    assert any(w.startswith("judge model differs between A and B") for w in c.warnings)
    faith = next(g for g in c.agreement if g.metric == "faithfulness")
    assert faith.n > 0 and faith.kappa is not None and faith.rho is not None


def test_samples_self_judged_run_is_flagged(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "self-judge-2026-11-23")
    assert any("judged by its own generator" in w for w in c.warnings)


def test_same_run_twice_is_a_user_error(run_writer) -> None:
    run_writer.write("A", {"m": {"x": 1.0, "y": 0.0}})
    with pytest.raises(RagtuiError, match="same run"):
        compare_runs(run_writer.store(), "A", "A")


def test_json_is_strict_json_without_nan(run_writer) -> None:
    # one metric only errored, one with a single paired case: figures must be null, not NaN
    run_writer.write("A", {"m": {"x": 1.0}, "e": {"x": "timeout"}}, human={"m": {"x": 1.0}})
    run_writer.write("B", {"m": {"x": 0.5}, "e": {"x": "timeout"}}, config={"prompt": "v2"})
    c = compare_runs(run_writer.store(), "A", "B")
    text = json.dumps(c.to_json(), allow_nan=False)
    m = c.metric("m")
    assert (m.n, m.se, m.ci_low, m.mde) == (1, None, None, None)
    assert c.metric("e").verdict == "no data"
    assert c.human == []  # one labelled case is too few to measure agreement
    assert [(d.case_id, d.metric, d.delta) for d in c.cases] == [("x", "m", -0.5)]
    assert "NaN" not in text
