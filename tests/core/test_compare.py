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
from ragtui.core.agreement import cohen_kappa
from ragtui.core.analysis import analyse_metric
from ragtui.core.compare import MetricResult, compare_runs, decide
from ragtui.core.errors import RagtuiError, RunNotFoundError
from ragtui.core.gate import decide_gate
from ragtui.core.store import Store
from ragtui.core.verdict import (
    ErrorCounts,
    IdenticalMetric,
    IdenticalRuns,
    JudgesDisagree,
    Method,
    NoReruns,
    NotScored,
    RerunDrift,
    RerunErrors,
    RerunIdentical,
    RerunMissing,
    RerunRule,
    RunsDiffer,
    SameConfig,
    ScalesDiffer,
    SeedNote,
    SelfJudged,
    Unpaired,
    Verdict,
)
from ragtui.format import errors_pair
from ragtui.format.verdicts import note_text, verdict_reason
from tests.core.score_reference import trinomial_score_stat

BASE = {"generator": "llama3.2:3b", "prompt": "v1"}


def _ids(n: int) -> list[str]:
    return [f"case-{i:03d}" for i in range(n)]


def _values(ids: list[str], values: np.ndarray | list[float]) -> dict[str, float]:
    return {c: float(v) for c, v in zip(ids, values, strict=True)}


def _notes(c, kind):
    return [w for w in [*c.warnings, *c.noise] if isinstance(w, kind)]


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
    # 12 cases of labels, 6 of them unchanged: the score test, at 0 McNemar's form ΣΔ/√ΣΔ²
    assert m.method is Method.SCORE and m.moved == 6
    assert m.p == pytest.approx(2 * sps.norm.sf(abs(d.sum()) / math.sqrt((d**2).sum())))
    assert m.ci_low < m.delta < m.ci_high and m.ci90_low > m.ci_low
    # MDE with the t quantiles of 11 degrees of freedom
    assert m.mde == pytest.approx((sps.t.ppf(0.975, 11) + sps.t.ppf(0.8, 11)) * sps.sem(d))
    assert m.fixed is None  # not binary
    assert m.noise_floor is None and m.rerun_delta is None and m.icc is None
    deltas = [x.delta for x in c.cases]
    assert deltas == sorted(deltas)
    assert c.cases[0].case_id == "case-004" and c.cases[0].delta == pytest.approx(-1.0)
    assert len(c.cases) == 12
    assert _notes(c, Unpaired) == [Unpaired("faithfulness", 1, 2, 12)]
    assert _notes(c, ErrorCounts) == [ErrorCounts("faithfulness", 1, 0, 0, 0)]


def test_json_is_codes_with_data_and_strict(run_writer) -> None:
    ids = _ids(40)
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    run_writer.write("A", {"faithfulness": _values(ids, a)})
    run_writer.write("B", {"faithfulness": _values(ids, b)}, config={"x": 1}, judge="llama3.1:8b")
    j = compare_runs(run_writer.store(), "A", "B").to_json()
    text = json.dumps(j, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    assert (j["a"], j["b"], j["seed"], j["margin"]) == ("A", "B", 20261201, 0.05)
    m = j["metrics"][0]
    assert {"verdict", "verdict_text", "why", "method", "method_text", "ci90_low"} <= set(m)
    assert m["method"] == "score" and m["method_text"] == "Tango score / McNemar"
    # as many cases broke as were fixed: McNemar's p is 1 (scipy), and the 90% interval of a
    # paired proportion with 22 discordant pairs of 40 spans about ±1.645·√22/40 = ±19 points,
    # far outside the ±5 margin: neither a change nor no change can be shown
    broke, fixed = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
    assert (broke, fixed) == (11, 11)
    assert sps.binomtest(fixed, broke + fixed).pvalue == 1.0
    assert m["verdict"] == "inconclusive" and (m["broke"], m["fixed"]) == (broke, fixed)
    warning = next(w for w in j["warnings"] if w["code"] == "runs_differ")
    assert warning["what"] == "judge model" and warning["b"] == "llama3.1:8b"
    assert warning["text"].startswith("judge model differs between A and B")
    assert any(n["code"] == "no_reruns" for n in j["noise"])
    assert set(j["cases"][0]) == {"case_id", "metric", "a", "b", "delta"}


def test_reruns_count_on_both_sides_symmetrically(run_writer) -> None:
    """Two reruns each of A and B: `compare A B` mirrors `compare B A` exactly, and every
    per-case figure is the reruns' mean."""
    ids = _ids(30)
    rng = np.random.default_rng(2)
    q = rng.uniform(size=30)
    runs = {}
    for side, shift, cfg in (("a", 0.0, BASE), ("b", 0.05, {**BASE, "prompt": "v2"})):
        for k in range(2):
            x = np.round(np.clip(q + shift + rng.normal(0, 0.2, 30), 0, 1) * 4) / 4
            runs[f"{side}{k}"] = x
            run_writer.write(f"{side}{k}", {"m": _values(ids, x)}, config={**cfg, "seed": k})
    store = run_writer.store()
    ab, ba = compare_runs(store, "a0", "b0"), compare_runs(store, "b0", "a0")
    mab, mba = ab.metric("m"), ba.metric("m")
    a_mean, b_mean = (runs["a0"] + runs["a1"]) / 2, (runs["b0"] + runs["b1"]) / 2
    assert ab.reruns_a == ["a0", "a1"] and ab.reruns_b == ["b0", "b1"]
    assert mab.delta == pytest.approx((b_mean - a_mean).mean())
    assert mba.delta == pytest.approx(-mab.delta)
    assert (mba.ci_low, mba.ci_high) == pytest.approx((-mab.ci_high, -mab.ci_low))
    assert mba.p == pytest.approx(mab.p) and (mab.runs_a, mab.runs_b) == (2, 2)
    cv = ab.case_values("m", "case-003")
    assert cv is not None and cv.a == pytest.approx(a_mean[3]) and cv.b == pytest.approx(b_mean[3])
    assert cv.a_runs == (("a0", runs["a0"][3]), ("a1", runs["a1"][3]))
    row = next(x for x in ab.cases if x.case_id == "case-003")
    assert (row.a, row.b) == pytest.approx((a_mean[3], b_mean[3]))
    assert {n.side for n in _notes(ab, RerunRule)} == {"A", "B"}


def test_grades_failed_in_a_rerun_are_said_and_thin_that_case_only(run_writer) -> None:
    """err A/B counts the named runs' failed grades (those cases are left out); a grade that
    failed in a rerun leaves the case in, its A the mean of the reruns that scored it, and a
    note says so (nothing said it before)."""
    ids = _ids(10)
    a0 = _values(ids, [1.0] * 10)
    a1: dict[str, float | str] = {**_values(ids, [0.0] * 10), ids[2]: "timed out"}
    a1[ids[7]] = "timed out"
    b: dict[str, float | str] = {**_values(ids, [0.5] * 10), ids[4]: "timed out"}
    run_writer.write("a0", {"m": a0}, config={**BASE, "seed": 0})
    run_writer.write("a1", {"m": a1}, config={**BASE, "seed": 1})
    run_writer.write("b0", {"m": b}, config={**BASE, "prompt": "v2"})
    c = compare_runs(run_writer.store(), "a0", "b0")
    m = c.metric("m")
    assert c.reruns_a == ["a0", "a1"]
    assert (m.n, m.errors_a, m.errors_b) == (9, 0, 1)  # case 4 left out: B's grade failed
    # A per case: (1 + 0) / 2 where both reruns scored, 1 alone on cases 2 and 7
    assert m.mean_a == pytest.approx((7 * 0.5 + 2 * 1.0) / 9)
    assert _notes(c, RerunErrors) == [RerunErrors("m", "A", 2, ("a1",))]
    assert note_text(RerunErrors("m", "A", 2, ("a1",))) == (
        "m: 2 grades failed in A's reruns (a1), not counted in err A: those cases' A is the "
        "mean of the reruns that scored them"
    )


def test_reruns_give_noise_floor_icc_and_the_rule_line(run_writer) -> None:
    ids = _ids(40)
    rng = np.random.default_rng(2)
    quality = rng.uniform(size=40)
    reruns = [np.round(np.clip(quality + rng.normal(0, 0.15, 40), 0, 1) * 4) / 4 for _ in range(3)]
    for k, x in enumerate(reruns):
        run_writer.write(
            f"base-{k}",
            {"faithfulness": _values(ids, x)},
            config={**BASE, "seed": k},
            answers={c: f"answer {c} from rerun {k}" for c in ids},
        )
    b = np.round(np.clip(quality + 0.1, 0, 1) * 4) / 4
    run_writer.write("strict", {"faithfulness": _values(ids, b)}, config={**BASE, "prompt": "v2"})
    c = compare_runs(run_writer.store(), "base-0", "strict")
    m = c.metric("faithfulness")
    x = np.vstack(reruns)
    assert c.reruns_a == ["base-0", "base-1", "base-2"]
    assert m.mean_a == pytest.approx(x.mean())
    assert m.delta == pytest.approx((b - x.mean(axis=0)).mean())
    pooled = float(np.mean(np.var(x, axis=0, ddof=1)))
    assert m.noise_floor == pytest.approx(1.96 * math.sqrt(2 * pooled / 40))
    assert m.rerun_delta == pytest.approx(np.ptp(x.mean(axis=1)))
    assert m.icc == pytest.approx(stats.icc1(x))
    assert m.noise_runs == 3
    (rule,) = _notes(c, RerunRule)
    assert rule.holds == stats.rule_holds(m.rerun_delta, 0.05)
    assert rule.chance_range == pytest.approx(
        stats.rerun_range_quantile(3) * math.sqrt(pooled / 40)
    )
    assert rule.source == "full"  # every rerun wrote its own answers


def test_cache_hit_rerun_is_flagged_and_left_out(run_writer) -> None:
    ids = _ids(30)
    a = np.random.default_rng(3).integers(0, 2, 30)
    run_writer.write("base", {"faithfulness": _values(ids, a)})
    run_writer.write("base-again", {"faithfulness": _values(ids, a)}, config={**BASE, "seed": 9})
    run_writer.write("cand", {"faithfulness": _values(ids, 1 - a)}, config={"prompt": "v9"})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert _notes(c, RerunIdentical) == [RerunIdentical("A", "base-again", "base")]
    assert c.metric("faithfulness").noise_floor is None
    assert c.reruns_a == ["base"]


def test_rerun_identical_on_one_metric_only_is_left_out_of_that_metric(run_writer) -> None:
    """A rerun that is a cache hit on one metric: no fake 0.0 floor or ICC 1.00 for it."""
    ids = _ids(30)
    rng = np.random.default_rng(31)
    same, f1 = rng.integers(0, 5, 30) / 4, rng.integers(0, 2, 30)
    run_writer.write("base", {"rel": _values(ids, same), "f": _values(ids, f1)})
    run_writer.write(
        "base-2",
        {"rel": _values(ids, same), "f": _values(ids, rng.integers(0, 2, 30))},
        config={**BASE, "seed": 2},
    )
    run_writer.write("cand", {"rel": _values(ids, same), "f": _values(ids, f1)}, config={"p": 1})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert RerunIdentical("A", "base-2", "base", ("rel",)) in c.warnings
    assert c.metric("rel").noise_floor is None and c.metric("rel").runs_a == 1
    assert c.metric("f").noise_floor is not None and c.metric("f").runs_a == 2


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
    (drift,) = _notes(c, RerunDrift)
    assert (drift.run, drift.reference, drift.side) == ("base-2", "base", "A")
    assert drift.shift == pytest.approx(0.2, abs=0.01)


def test_comparability_notes(run_writer) -> None:
    ids = _ids(5)
    run_writer.write("A", {"m": _values(ids, [1, 0, 1, 1, 0])})
    run_writer.write(
        "B",
        {"m": _values(ids, [1, 1, 1, 1, 0])},
        judge="llama3.2:3b",
        prompt_hash="faith-label-v2",
        dataset_version="v4",
        answers={c: f"another answer {c}" for c in ids},
    )
    c = compare_runs(run_writer.store(), "A", "B")
    assert RunsDiffer("judge model", "qwen2.5:7b", "llama3.2:3b") in c.warnings
    assert RunsDiffer("judge prompt", "faith-label-v1", "faith-label-v2") in c.warnings
    assert RunsDiffer("dataset version", "v3", "v4") in c.warnings
    assert _notes(c, SelfJudged) == [SelfJudged("B", "llama3.2:3b")]
    assert note_text(RunsDiffer("judge model", "qwen2.5:7b", "llama3.2:3b")).endswith(
        ": deltas mix judge and system changes"
    )


def test_another_judge_on_the_same_answers_is_all_that_differs(run_writer) -> None:
    """B grades A's own answers with another judge (a re-judge, whatever its file says):
    every Δ is the judges' difference, and the note says that, not "deltas mix judge and
    system changes". One answer of B's changed, and the mix is back."""
    ids = _ids(6)
    run_writer.write("A", {"m": _values(ids, [1, 0, 1, 1, 0, 1])})
    run_writer.write("B", {"m": _values(ids, [1, 1, 1, 1, 0, 1])}, judge="llama3.1:8b")
    c = compare_runs(run_writer.store(), "A", "B")
    judged = RunsDiffer("judge model", "qwen2.5:7b", "llama3.1:8b", same_answers=True)
    assert _notes(c, RunsDiffer) == [judged]
    assert note_text(judged) == (
        "judge model differs between A and B (qwen2.5:7b → llama3.1:8b): the same answers "
        "graded twice, so each Δ is the judges' difference alone"
    )
    assert {"code": "runs_differ", "same_answers": True}.items() <= judged.to_json().items()
    answers = {c: f"answer {c}" for c in ids} | {ids[3]: "a regenerated answer"}
    run_writer.write(
        "C", {"m": _values(ids, [1, 1, 1, 1, 0, 1])}, judge="llama3.1:8b", answers=answers
    )
    mixed = compare_runs(run_writer.store(), "A", "C")
    assert _notes(mixed, RunsDiffer) == [RunsDiffer("judge model", "qwen2.5:7b", "llama3.1:8b")]


def test_metric_scored_on_one_side_only_says_so(run_writer) -> None:
    ids = _ids(10)
    run_writer.write("A", {"m": _values(ids, [1.0] * 10), "only_a": _values(ids, [0.5] * 10)})
    run_writer.write("B", {"m": _values(ids, [1.0] * 10)}, config={"p": 2})
    store = run_writer.store()
    c = compare_runs(store, "A", "B")
    assert [m.metric for m in c.metrics] == ["m"]
    assert NotScored("only_a", "B") in c.warnings
    asked = compare_runs(store, "A", "B", metrics=["only_a"])
    assert asked.metric("only_a").verdict is Verdict.NO_DATA


def test_scales_that_differ_get_no_verdict(run_writer) -> None:
    """Two 0-10 files, B read as 1-5: the metric is not comparable and a note says why; the
    same declared scale on both sides makes it comparable again."""
    ids = _ids(20)
    rng = np.random.default_rng(8)
    run_writer.write(
        "A", {"quality": _values(ids, rng.uniform(size=20))}, scales={"quality": (0, 10)}
    )
    run_writer.write(
        "B",
        {"quality": _values(ids, rng.uniform(size=20))},
        scales={"quality": (1, 5)},
        config={"p": 2},
    )
    run_writer.write(
        "C",
        {"quality": _values(ids, rng.uniform(size=20))},
        scales={"quality": (0, 10)},
        config={"p": 3},
    )
    store = run_writer.store()
    c = compare_runs(store, "A", "B")
    m = c.metric("quality")
    assert m.verdict is Verdict.NOT_COMPARABLE and m.delta is None and m.p_adj is None
    (note,) = _notes(c, ScalesDiffer)
    assert (note.a[0].lo, note.a[0].hi, note.b[0].lo, note.b[0].hi) == (0, 10, 1, 5)
    assert c.deltas == {}
    # one declared scale on both sides: compared; two unrelated uniform draws on 20 cases
    # (per-case sd of the deltas about 0.4, so a CI of about ±19 points) cannot decide
    assert compare_runs(store, "A", "C").metric("quality").verdict is Verdict.INCONCLUSIVE


def test_labels_against_numbers_are_not_comparable(run_writer) -> None:
    ids = _ids(10)
    names = {1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}
    a = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0]
    run_writer.write(
        "A",
        {"f": _values(ids, a)},
        labels={"f": {c: names[v] for c, v in zip(ids, a, strict=True)}},
    )
    run_writer.write("B", {"f": _values(ids, a)}, config={"p": 2})
    c = compare_runs(run_writer.store(), "A", "B")
    assert c.metric("f").verdict is Verdict.NOT_COMPARABLE
    assert [s.kind for s in c.metric("f").scale_a] == ["label"]


def test_summary_only_run_is_refused(run_writer) -> None:
    run_writer.write("A", {"m": {"x": 1.0, "y": 0.0}})
    run_writer.write("S", {}, config={"p": 2})  # a run with no cases
    with pytest.raises(RagtuiError, match="run S has no cases: it is a summary-only run"):
        compare_runs(run_writer.store(), "A", "S")


def test_parse_failures_are_counted_and_a_difference_warns(run_writer) -> None:
    """A judge that never gives a label scores 0 with a parse failure on every case: the
    comparison counts them beside the means and warns that A and B differ."""
    ids = _ids(20)
    run_writer.write("A", {"f": _values(ids, [1.0] * 20)})
    run_writer.write(
        "B",
        {"f": _values(ids, [0.0] * 20)},
        reasons={"f": dict.fromkeys(ids, "parse failure: no label in the reply")},
        config={"p": 2},
    )
    c = compare_runs(run_writer.store(), "A", "B")
    m = c.metric("f")
    assert (m.parse_failures_a, m.parse_failures_b) == (0, 20)
    (note,) = _notes(c, ErrorCounts)
    assert note.differ and note.parse_failures_b == 20


def test_rejudge_gives_judge_agreement_with_flips(run_writer) -> None:
    ids = _ids(8)
    a = [1, 1, 0.5, 0, 1, 0, 1, 0.5]
    b = [1, 0.5, 0.5, 0, 0, 0, 1, 1]
    names = {1: "YES", 0.5: "PARTIAL", 0: "NO"}
    run_writer.write(
        "A",
        {"f": _values(ids, a)},
        labels={"f": {c: names[v] for c, v in zip(ids, a, strict=True)}},
    )
    run_writer.write(
        "A-rj",
        {"f": _values(ids, b)},
        judge="llama3.2:3b",
        kind="rejudge",
        parent="A",
        labels={"f": {c: names[v] for c, v in zip(ids, b, strict=True)}},
    )
    c = compare_runs(run_writer.store(), "A", "A-rj")
    (g,) = c.agreement
    assert g.n == 8 and not g.weighted
    assert g.kappa == pytest.approx(cohen_kappa([names[v] for v in a], [names[v] for v in b]))
    assert g.rho == pytest.approx(sps.spearmanr(a, b).statistic)
    assert g.flipped == ["case-004", "case-001", "case-007"]  # largest change first
    assert not g.flagged  # 8 cases are too few to flag a judge


def test_human_labels_agreement_and_prediction_powered_estimate(run_writer) -> None:
    ids = _ids(60)
    rng = np.random.default_rng(10)
    human = (rng.uniform(size=60) < 0.6).astype(float)
    judge = np.where(rng.uniform(size=60) < 0.8, human, 1.0)  # lenient: some 0 -> 1
    labelled = dict(list(_values(ids, human).items())[:40])
    run_writer.write("A", {"f": _values(ids, judge)}, human={"f": labelled})
    run_writer.write("B", {"f": _values(ids, judge)}, config={"prompt": "v2"})
    c = compare_runs(run_writer.store(), "A", "B")
    assert [g.between for g in c.human] == ["A judge vs human"]
    (p,) = c.ppi
    rect = human[:40] - judge[:40]
    assert (p.side, p.run, p.n, p.labelled) == ("A", "A", 60, 40)  # side A, run id "A"
    # the difference estimator over all 60 judge grades (core/ppi.py), by hand
    assert p.estimate == pytest.approx(judge.mean() + rect.mean())
    cov = np.cov(judge[:40], rect)[0, 1]
    var = judge.var(ddof=1) / 60 + rect.var(ddof=1) / 40 + 2 * cov / 60
    half = 2.022691 * math.sqrt(var)  # t quantile, 39 degrees of freedom
    assert (p.ci_low, p.ci_high) == pytest.approx((p.estimate - half, p.estimate + half))


def test_binary_metric_gets_the_score_family_and_mcnemar_counts(run_writer) -> None:
    ids = _ids(50)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, 50)
    b = np.where(rng.uniform(size=50) < 0.3, 1, a)
    run_writer.write("A", {"hit": _values(ids, a)})
    run_writer.write("B", {"hit": _values(ids, b)}, config={"prompt": "v2"})
    m = compare_runs(run_writer.store(), "A", "B").metric("hit")
    fixed = int(np.sum((a == 0) & (b == 1)))
    assert (m.fixed, m.broke) == (fixed, 0)
    assert m.method is Method.SCORE
    assert m.p == pytest.approx(sps.chi2.sf(fixed, 1))  # (f - b)²/(f + b) with b = 0
    # Tango's bounds: where the trinomial score statistic reaches ±z (scipy's optimiser)
    z = sps.norm.ppf(0.975)
    assert trinomial_score_stat(fixed, 0, 50, m.ci_low) == pytest.approx(z, abs=1e-4)
    assert trinomial_score_stat(fixed, 0, 50, m.ci_high) == pytest.approx(-z, abs=1e-4)


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
    with pytest.raises(RagtuiError, match="seed must be 0 or more"):
        compare_runs(store, "A", "B", seed=-1)


def test_worst_tenth_of_25_cases_is_three(run_writer) -> None:
    ids = _ids(25)
    a = np.linspace(0, 1, 25)
    run_writer.write("A", {"m": _values(ids, a)})
    run_writer.write("B", {"m": _values(ids, a[::-1])}, config={"p": 2})
    c = compare_runs(run_writer.store(), "A", "B")
    assert [cid for cid, _ in c.bottom["m"]["a"]] == ["case-000", "case-001", "case-002"]
    assert c.metric("m").bottom_a == pytest.approx(a[:3].mean())


def test_the_worst_tenth_is_taken_over_the_cases_both_runs_scored(run_writer) -> None:
    """B's judge failed on A's 5 lowest cases: ranked over its own cases, B's worst 10% was
    the 45 that A ranks higher, and B looked 9 points better where it was no better."""
    ids = _ids(50)
    a = np.sort(np.random.default_rng(9).uniform(0, 1, 50))
    b = np.clip(a + np.random.default_rng(10).normal(0, 0.03, 50), 0, 1)
    b_scores: dict[str, float | str] = dict(zip(ids, b.tolist(), strict=True))
    for cid in ids[:5]:
        b_scores[cid] = "judge timed out"
    run_writer.write("A", {"m": _values(ids, a)})
    run_writer.write("B", {"m": b_scores}, config={"p": 2})
    m = compare_runs(run_writer.store(), "A", "B").metric("m")
    assert m.n == 45
    # by hand: ceil(45 / 10) = 5 worst of the 45 shared cases, each side its own
    assert m.bottom_a == pytest.approx(np.sort(a[5:])[:5].mean())
    assert m.bottom_b == pytest.approx(np.sort(b[5:])[:5].mean())


def test_identical_b_is_too_few_cases_never_no_change(run_writer) -> None:
    ids = _ids(200)
    a = np.random.default_rng(9).integers(0, 2, 200)
    run_writer.write("A", {"m": _values(ids, a)})
    run_writer.write("B", {"m": _values(ids, a)}, config={"p": 2})
    c = compare_runs(run_writer.store(), "A", "B")
    assert c.metric("m").verdict is Verdict.TOO_FEW
    assert _notes(c, IdenticalRuns) and not _notes(c, IdenticalMetric)


def test_the_seed_line_says_whether_any_test_drew_at_random(run_writer) -> None:
    """20 continuous cases that all moved: sign-flips, 2^20 patterns too many, so 10,000 drawn
    with the seed. The same runs with half the cases unmoved take the score test, which draws
    nothing: the line says the seed changes nothing there (it said '10,000 random sign-flips
    where clusters are too many to enumerate' for every comparison, clustered or not)."""
    ids = _ids(20)
    rng = np.random.default_rng(8)
    a = rng.uniform(0.2, 0.8, 20)
    moved = a + rng.normal(0.05, 0.1, 20)
    run_writer.write("A", {"m": _values(ids, a)})
    run_writer.write("B", {"m": _values(ids, moved)}, config={"p": 2})
    half = np.where(np.arange(20) % 2 == 0, a, moved)
    run_writer.write("C", {"m": _values(ids, half)}, config={"p": 3})
    store = run_writer.store()
    drawn = compare_runs(store, "A", "B", seed=5)
    (note,) = _notes(drawn, SeedNote)
    assert drawn.metric("m").method is Method.SIGN_FLIP and not drawn.metric("m").exact
    assert note_text(note) == (
        "seed 5 · 10,000 random sign-flips where cases or clusters are too many to enumerate"
    )
    none = compare_runs(store, "A", "C", seed=5)
    (note,) = _notes(none, SeedNote)
    assert none.metric("m").method is Method.SCORE
    assert note_text(note) == "seed 5 (no test here drew at random: another seed gives the same)"


def test_an_inconclusive_change_past_the_margin_offers_no_cases_to_show_no_change() -> None:
    """8 cases, Δ -18.75 points against a 5-point margin: more cases could detect it, but none
    would show no change if that is the change, and the reason says so."""
    a = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0])
    b = np.array([0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0])  # every case moved
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0))
    assert m.verdict is Verdict.INCONCLUSIVE and m.delta == pytest.approx(-0.1875)
    assert m.n_no_change is None and m.n_detect is not None
    assert verdict_reason(m, 0.05).endswith(
        f"need ~{m.n_detect:,} cases to detect ±5 points; none can show no change at this Δ"
    )


def test_every_case_shifted_alike_says_so_not_a_cached_copy(run_writer) -> None:
    """B = A + 0.25 on every case: no spread to test, and the reason names an offset or a
    rescaled metric; "a cached copy" (which makes deltas of 0) would mislead."""
    ids = _ids(40)
    a = np.random.default_rng(3).choice([0.0, 0.25, 0.5, 0.75], 40)
    run_writer.write("A", {"m": _values(ids, a)})
    run_writer.write("B", {"m": _values(ids, a + 0.25)}, config={"p": 2})
    m = compare_runs(run_writer.store(), "A", "B").metric("m")
    assert m.verdict is Verdict.TOO_FEW
    why = verdict_reason(m, 0.05)
    assert why.startswith("all 40 deltas are +25.0: every case moved by exactly as much")
    assert "cached" not in why


def test_verdict_under_another_judge_and_disagreement(run_writer) -> None:
    """A and B both re-graded by a second judge: the verdict under each, side by side."""
    ids = _ids(60)
    rng = np.random.default_rng(12)
    a = (rng.uniform(size=60) < 0.5).astype(float)
    b = np.where(rng.uniform(size=60) < 0.35, 1.0, a)  # B fixes cases: improved
    run_writer.write("A", {"f": _values(ids, a)})
    run_writer.write("B", {"f": _values(ids, b)}, config={"prompt": "v2"})
    # the other judge sees no difference: it grades both the same
    for parent, config in (("A", BASE), ("B", {"prompt": "v2"})):
        run_writer.write(
            f"{parent}-rj",
            {"f": _values(ids, a)},
            judge="llama3.1:8b",
            prompt_hash="other-v1",
            kind="rejudge",
            parent=parent,
            config=config,
        )
    c = compare_runs(run_writer.store(), "A", "B")
    judges = [(j.judge, j.verdict) for j in c.judges]
    assert judges[0] == ("qwen2.5:7b (faith-label-v1)", Verdict.IMPROVED)
    assert judges[1] == ("llama3.1:8b (other-v1)", Verdict.TOO_FEW)
    assert not _notes(c, JudgesDisagree)  # too few cases is not a decided verdict


def test_seed_is_recorded_and_negative_refused(run_writer) -> None:
    ids = _ids(60)
    rng = np.random.default_rng(7)
    run_writer.write("A", {"m": _values(ids, rng.uniform(size=60))})
    run_writer.write("B", {"m": _values(ids, rng.uniform(size=60))}, config={"prompt": "v2"})
    store = run_writer.store()
    one, two = (compare_runs(store, "A", "B", seed=42) for _ in range(2))
    assert one.metrics == two.metrics and one.seed == 42


def test_clustered_cases_are_compared_by_cluster(run_writer) -> None:
    ids = _ids(36)
    rng = np.random.default_rng(15)
    doc = np.repeat(rng.normal(0, 0.2, 12), 3)
    a = rng.uniform(0.3, 0.7, 36)
    clusters = {c: f"doc-{i // 3}" for i, c in enumerate(ids)}
    run_writer.write("A", {"m": _values(ids, a)}, clusters=clusters)
    run_writer.write(
        "B", {"m": _values(ids, np.clip(a + doc, 0, 1))}, clusters=clusters, config={"p": 2}
    )
    store = run_writer.store()
    if store.case_clusters("A") is None:
        pytest.skip("the index does not store case clusters yet")
    m = compare_runs(store, "A", "B").metric("m")
    assert m.method is Method.CLUSTER_SIGN_FLIP and m.units == 12


# ---------------------------------------------------------------- verdict rules


def _result(**kw) -> MetricResult:
    base = dict(
        metric="m",
        n=100,
        mean_a=0.5,
        mean_b=0.5,
        delta=0.0,
        se=0.01,
        ci_low=-0.02,
        ci_high=0.02,
        ci90_low=-0.017,
        ci90_high=0.017,
        p=0.5,
        p_adj=0.5,
        method=Method.T,
        units=100,
        spread=True,
        can_detect=True,
        tightest=0.0,
        mde=0.028,
        sd=0.1,
        n_detect=32,
        n_no_change=40,
    )
    return MetricResult(**(base | kw))


def test_verdict_rules() -> None:
    assert decide(_result(delta=0.08, p_adj=0.004), 0.05).verdict is Verdict.IMPROVED
    assert decide(_result(delta=-0.08, p_adj=0.01), 0.05).verdict is Verdict.REGRESSED
    assert decide(_result(), 0.05).verdict is Verdict.NO_CHANGE
    # TOST reads the 90% CI: a 95% CI just outside ±5 still shows no change
    r = decide(_result(ci_low=-0.052, ci_high=0.04, ci90_low=-0.045, ci90_high=0.035), 0.05)
    assert r.verdict is Verdict.NO_CHANGE
    r = decide(_result(n=40, ci_low=-0.07, ci_high=0.05, ci90_low=-0.06, ci90_high=0.04), 0.05)
    assert r.verdict is Verdict.INCONCLUSIVE
    assert decide(_result(n=0), 0.05).verdict is Verdict.NO_DATA


def test_significant_change_below_the_margin_says_so() -> None:
    r = decide(_result(delta=0.02, p_adj=0.001, ci_low=0.01, ci_high=0.03), 0.05)
    assert r.verdict is Verdict.IMPROVED and r.below_margin


def test_significant_alone_but_not_after_holm_is_inconclusive_and_says_so() -> None:
    r = decide(
        _result(
            delta=0.06, p=0.03, p_adj=0.09, ci_low=0.01, ci_high=0.11, ci90_low=0.02, ci90_high=0.1
        ),
        0.05,
    )
    assert r.verdict is Verdict.INCONCLUSIVE and r.holm_lost


def test_no_spread_is_too_few_cases_even_with_a_zero_width_interval() -> None:
    r = decide(
        _result(
            spread=False,
            delta=0.0,
            ci_low=0.0,
            ci_high=0.0,
            ci90_low=0.0,
            ci90_high=0.0,
            p=None,
            p_adj=None,
        ),
        0.05,
    )
    assert r.verdict is Verdict.TOO_FEW


def test_undecidable_n_is_too_few_cases() -> None:
    # e.g. 5 clusters: no sign-flip test reaches .05, and the 90% bound cannot be tight
    r = decide(_result(can_detect=False, tightest=None, p=0.0625, p_adj=0.0625), 0.05)
    assert r.verdict is Verdict.TOO_FEW


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
    assert c.metric("faithfulness").verdict is Verdict.IMPROVED
    assert len(c.reruns_a) == 4  # the baseline's three reruns are averaged in


def test_samples_smaller_generator_regresses(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "small-gen-2026-11-19")
    assert c.metric("faithfulness").verdict is Verdict.REGRESSED


def test_samples_pure_noise_change_shows_no_meaningful_change(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "overlap64-2026-11-12")
    verdicts = {m.metric: m.verdict for m in c.metrics}
    assert verdicts == {
        "answer_relevance": Verdict.NO_CHANGE,
        "faithfulness": Verdict.NO_CHANGE,
        # a handful of the 30 clusters moved, by hundredths: too few moves to test, or to show
        # how far cases move (their exact bounds reach well past the margin)
        "context_precision": Verdict.TOO_FEW,
        "context_recall": Verdict.TOO_FEW,
    }
    for name in ("context_precision", "context_recall"):
        m = c.metric(name)
        assert m.method is Method.FEW_MOVED and m.few_moved is not None, m
        assert m.few_moved.clustered and m.few_moved.units == 30 and m.few_moved.moved <= 5
        assert m.ci90_low < -0.05 and m.ci90_high > 0.05, m  # type: ignore[operator]


def test_samples_baseline_reruns_give_a_noise_floor(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "strict-v2-2026-11-16")
    faith = c.metric("faithfulness")
    assert faith.noise_floor > 0 and faith.icc is not None and faith.noise_runs == 4
    assert any(n.metric == "faithfulness" and n.side == "A" for n in _notes(c, RerunRule))


def test_samples_rejudge_warns_and_shows_judge_agreement(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "rejudge-llama3.1-2026-11-06")
    assert any(isinstance(w, RunsDiffer) and w.what == "judge model" for w in c.warnings)
    faith = next(g for g in c.agreement if g.metric == "faithfulness")
    assert faith.n > 0 and faith.kappa is not None and faith.rho is not None


def test_samples_self_judged_run_is_flagged(sample_store: Store) -> None:
    c = compare_runs(sample_store, BASELINE, "self-judge-2026-11-23")
    assert any(isinstance(w, SelfJudged) for w in c.warnings)


def test_same_run_twice_is_a_user_error(run_writer) -> None:
    run_writer.write("A", {"m": {"x": 1.0, "y": 0.0}})
    with pytest.raises(RagtuiError, match="same run"):
        compare_runs(run_writer.store(), "A", "A")


def test_json_is_strict_json_without_nan(run_writer) -> None:
    # one metric only errored, one with a single paired case: figures must be null, not NaN
    run_writer.write("A", {"m": {"x": 1.0}, "e": {"x": "timeout"}}, human={"m": {"x": 1.0}})
    run_writer.write("B", {"m": {"x": 0.5}, "e": {"x": "timeout"}}, config={"prompt": "v2"})
    c = compare_runs(run_writer.store(), "A", "B")
    text = json.dumps(c.to_json(rerun_values=True), allow_nan=False)
    m = c.metric("m")
    assert (m.n, m.se, m.mde) == (1, None, None)
    assert m.verdict is Verdict.TOO_FEW
    assert c.metric("e").verdict is Verdict.NO_DATA
    assert c.human == [] or c.human[0].n == 1
    assert [(d.case_id, d.metric, d.delta) for d in c.cases] == [("x", "m", -0.5)]
    assert "NaN" not in text


def test_two_reruns_of_one_config_compare_as_mirror_images(run_writer) -> None:
    """A, A2 and A3 are reruns of one config: `compare A2 A` averaged A3 into A2's side and
    `compare A A2` into A's, so the two directions compared different data (+0.57 pts,
    p .51 one way; -2.50, p .018, "regressed" the other). Each side is now its run alone."""
    ids = _ids(40)
    rng = np.random.default_rng(3)
    mu = rng.uniform(0.2, 0.8, 40)
    made = {}
    for i, rid in enumerate(("A", "A2", "A3")):
        made[rid] = (mu + rng.normal(0.02 * i, 0.06, 40)).clip(0, 1).round(3)
        run_writer.write(rid, {"m": _values(ids, list(made[rid]))}, config={**BASE, "seed": i})
    store = run_writer.store()
    there, back = compare_runs(store, "A", "A2"), compare_runs(store, "A2", "A")
    m1, m2 = there.metric("m"), back.metric("m")
    assert m1.delta == pytest.approx(float((made["A2"] - made["A"]).mean()))  # no A3 in it
    assert m2.delta == pytest.approx(-m1.delta) and m2.p == pytest.approx(m1.p)
    assert (m2.ci_low, m2.ci_high) == pytest.approx((-m1.ci_high, -m1.ci_low))
    assert there.reruns_a == ["A"] and there.reruns_b == ["A2"]
    (same,) = _notes(there, SameConfig)
    assert same.others == 1
    assert "A and B are reruns of one config" in note_text(same)
    assert not _notes(there, NoReruns)


def test_a_rerun_that_lacks_some_cases_is_said(run_writer) -> None:
    """A rerun of part of the dataset thinned those cases' A to the reruns that hold them,
    without a word (a failed grade there was said)."""
    ids = _ids(10)
    run_writer.write("base", {"m": _values(ids, [1.0] * 10)})
    run_writer.write("base-2", {"m": _values(ids, [0.0] * 10)}, config={**BASE, "seed": 2})
    # (one value of its own: a rerun equal to base-2 wherever both graded is a cache hit)
    run_writer.write(
        "base-3", {"m": _values(ids[2:], [0.0] * 7 + [1.0])}, config={**BASE, "seed": 3}
    )
    run_writer.write("cand", {"m": _values(ids, [1.0] * 10)}, config={"prompt": "v2"})
    c = compare_runs(run_writer.store(), "base", "cand")
    (gap,) = _notes(c, RerunMissing)
    assert (gap.metric, gap.side, gap.missing, gap.runs) == ("m", "A", 2, ("base-3",))
    assert note_text(gap).startswith("m: 2 compared cases missing from A's reruns (base-3)")
    # by hand: A is 1/2 on the two cases base-3 lacks, 1/3 on seven it holds, 2/3 on one
    assert c.metric("m").mean_a == pytest.approx((2 * 0.5 + 7 / 3 + 2 / 3) / 10)


def test_a_change_of_exactly_the_margin_is_not_below_it(run_writer) -> None:
    """Every case up by 0.05 from 0.8 (0.85 - 0.8 = 0.04999… in floats): shown "+5.0" and, by
    float dust, flagged "(< margin)"; from 0.1 the same change was not. Neither is now."""
    ids = _ids(40)
    for start in (0.8, 0.1):
        a = [start + (0.01 if i % 2 else 0.0) for i in range(40)]  # some spread to test
        b = [round(x + (0.03 if i % 4 < 2 else 0.07), 2) for i, x in enumerate(a)]
        assert round(100 * sum(y - x for x, y in zip(a, b, strict=True)) / 40, 9) == 5.0
        run_writer.write(f"a{start}", {"m": _values(ids, a)}, config={"base": start})
        run_writer.write(f"b{start}", {"m": _values(ids, b)}, config={"prompt": f"v{start}"})
    store = run_writer.store()
    for start in (0.8, 0.1):
        m = compare_runs(store, f"a{start}", f"b{start}").metric("m")
        assert m.verdict is Verdict.IMPROVED and not m.below_margin, (start, m.delta)


def test_reruns_exactly_5_points_apart_break_the_rule_in_both_places(run_writer) -> None:
    """Issue 13: the comparison and `ragtui noise` disagreed at exactly 5.0 points. Reruns
    whose means are 95.0 and 100.0: both now say the rule (< 5) does not hold."""
    from ragtui.judge.noise import noise_lines, rerun_noise

    ids = _ids(20)
    run_writer.write("base", {"m": _values(ids, [0.0] + [1.0] * 19)})
    run_writer.write("base-2", {"m": _values(ids, [1.0] * 20)}, config={**BASE, "seed": 2})
    run_writer.write("cand", {"m": _values(ids, [1.0] * 20)}, config={"prompt": "v2"})
    store = run_writer.store()
    (rule,) = _notes(compare_runs(store, "base", "cand"), RerunRule)
    assert round(rule.rerun_delta * 100, 1) == 5.0 and not rule.holds
    (line,) = noise_lines(rerun_noise(store, ["base", "base-2"], ["m"]), 0.05)
    assert "differ by 5.0 points (rule of thumb: < 5, above it)" in line


def test_samples_show_clusters_both_judges_and_human_corrections(sample_store: Store) -> None:
    """Issue 11: the sample history shows the new lines: resampling by cluster (each case's
    passage), the verdict under a second judge that graded both runs, and prediction-powered
    estimates from 32 human labels on each side."""
    from ragtui.core.verdict import Method

    c = compare_runs(sample_store, BASELINE, "strict-v2-2026-11-16")
    faith = c.metric("faithfulness")
    # by cluster; most clusters unmoved, so the score test on the clusters' totals
    assert faith.method is Method.CLUSTER_SCORE and faith.units >= 20
    judges = {j.judge for j in c.judges if j.metric == "faithfulness"}
    assert len(judges) == 2  # qwen (the runs' own) and llama3.1 (the re-judges of A and B)
    assert {e.metric for e in c.ppi} >= {"faithfulness"}
    assert len(c.reruns_b) == 2  # B's rerun counts too


def test_a_parse_failure_is_one_bad_grade_whether_it_errored_or_was_scored(run_writer) -> None:
    """Seen after a TUI re-judge: 48 parse failures recorded as errors showed "err A/B 0/96"."""
    ids = _ids(40)
    run_writer.write("A", {"f": _values(ids, [1.0] * 40)})
    b: dict[str, float | str] = {c: 1.0 for c in ids}
    for c in ids[:6]:  # six replies that could not be read, recorded as errors
        b[c] = "parse failure: no rating 1-5 in the reply 'YES'"
    for c in ids[6:9]:  # three scored 0 anyway, their reason says why
        b[c] = 0.0
    reasons = {"f": {c: "parse failure: no label in the reply" for c in ids[6:9]}}
    run_writer.write("B", {"f": b}, config={"prompt": "v2"}, reasons=reasons)
    c = compare_runs(run_writer.store(), "A", "B")
    (m,) = c.metrics
    assert (m.errors_b, m.parse_failures_b, m.parse_scored_b) == (6, 9, 3)
    assert m.bad_grades() == (0, 9)  # nine bad grades, not 6 + 9
    assert errors_pair(m) == "0/9"  # what the err A/B column shows
    assert m.n == 34  # 40 cases, 6 without a B value
    check = decide_gate(c).checks[0]
    assert check.code == "more_errors" and (check.value, check.threshold) == (9.0, 0.0)


def test_label_replies_that_could_not_be_read_keep_the_metric_comparable(run_writer) -> None:
    """ragtui's own judge scores an unreadable YES/PARTIAL/NO reply 0, with no label and a
    "parse failure: " reason. Those zeros are counted, not a second scale: a re-judge with a
    few of them was "not comparable" ("labels (0-1) and numbers 0-1") and failed every gate."""
    ids = _ids(12)
    names = {1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}
    a = [1.0, 0.5, 1.0, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.0]
    b = [1.0, 1.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    unreadable = ids[10:]  # B's last two replies had no label: scored 0
    run_writer.write(
        "A",
        {"f": _values(ids, a)},
        labels={"f": {c: names[v] for c, v in zip(ids, a, strict=True)}},
    )
    run_writer.write(
        "B",
        {"f": _values(ids, b)},
        config={"p": 2},
        labels={"f": {c: names[v] for c, v in zip(ids, b, strict=True) if c not in unreadable}},
        reasons={"f": dict.fromkeys(unreadable, "parse failure: no label in the reply")},
    )
    m = compare_runs(run_writer.store(), "A", "B").metric("f")
    assert m.verdict is not Verdict.NOT_COMPARABLE
    assert [s.kind for s in m.scale_b] == ["label"]
    assert m.n == 12 and m.mean_b == pytest.approx(sum(b) / 12)


def test_a_case_b_scored_as_every_rerun_of_a_did_is_unmoved(run_writer) -> None:
    """0.1 in each of A's three reruns averages 0.10000000000000002 in floats: B's 0.1 was a
    -3e-17 delta, counted "worse" in Compare's histogram and kept by "regressions only"."""
    ids = _ids(12)
    reruns = (
        [0.1] * 10 + [0.2, 0.9],
        [0.1] * 10 + [0.3, 0.7],
        [0.1] * 10 + [0.4, 0.8],
    )
    for k, values in enumerate(reruns):
        run_writer.write(f"a{k}", {"m": _values(ids, values)}, config={**BASE, "seed": k})
    run_writer.write("b", {"m": _values(ids, [0.1] * 10 + [0.3, 0.8])}, config={"p": 2})
    c = compare_runs(run_writer.store(), "a0", "b")
    assert c.reruns_a == ["a0", "a1", "a2"]
    assert [x.delta for x in c.cases] == [0.0] * 12  # by hand: each case's reruns average B's
    assert c.metric("m").delta == 0.0


def test_a_cache_hit_rerun_of_part_of_the_cases_is_left_out_too(run_writer) -> None:
    """A rerun holding 39 of A's 40 cases, each with A's own score, was a real replicate:
    noise floor ±0.0, ICC 1.00. So is one with A's scores and a case of its own (a cache
    serving the old cases of a grown dataset); one that differs on a shared case is not."""
    ids = _ids(40)
    a = np.random.default_rng(8).integers(0, 2, 40).astype(float)
    run_writer.write("base", {"f": _values(ids, a)})
    run_writer.write("part", {"f": _values(ids[1:], a[1:])}, config={**BASE, "seed": 2})
    run_writer.write("cand", {"f": _values(ids, 1 - a)}, config={"prompt": "v9"})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert _notes(c, RerunIdentical) == [RerunIdentical("A", "part", "base")]
    assert c.metric("f").noise_floor is None and c.reruns_a == ["base"]

    extra = [*ids, "case-new"]
    run_writer.write("more", {"f": _values(extra, [*a, 1.0])}, config={**BASE, "seed": 3})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert RerunIdentical("A", "more", "base") in c.warnings and c.reruns_a == ["base"]

    moved = a.copy()
    moved[5] = 1 - moved[5]
    run_writer.write("real", {"f": _values(ids[1:], moved[1:])}, config={**BASE, "seed": 4})
    c = compare_runs(run_writer.store(), "base", "cand")
    assert c.reruns_a == ["base", "real"] and c.metric("f").noise_floor is not None
