"""The gate's decision on real indexed runs: it passes only what it has shown, never fails open."""

from __future__ import annotations

import numpy as np
import pytest

from ragtui.core.compare import compare_runs
from ragtui.core.gate import EXIT_UNDECIDED, Outcome, decide_gate
from ragtui.core.verdict import Method

N = 48


def _ids(n: int = N) -> list[str]:
    return [f"case-{i:03d}" for i in range(n)]


def _gate(run_writer, floors=None, means=None, **kw):
    c = compare_runs(run_writer.store(), "base", "cand", **kw)
    return decide_gate(c, floors, means)


def _codes(result) -> list[tuple[str, str]]:
    return [(ch.metric, ch.code) for ch in result.checks]


def _base(run_writer, values=None) -> np.ndarray:
    a = values if values is not None else np.random.default_rng(1).uniform(0.4, 0.9, N)
    run_writer.write("base", {"f": dict(zip(_ids(), a.tolist(), strict=True))})
    return a


def test_every_candidate_score_errored_fails(run_writer) -> None:
    _base(run_writer)
    run_writer.write("cand", {"f": dict.fromkeys(_ids(), "judge timed out")}, config={"p": 2})
    result = _gate(run_writer)
    assert result.outcome is Outcome.FAILED
    assert ("f", "no_scores") in _codes(result)


def test_no_shared_case_fails(run_writer) -> None:
    _base(run_writer)
    other = {f"other-{i}": 1.0 for i in range(N)}
    run_writer.write("cand", {"f": other}, config={"p": 2})
    result = _gate(run_writer)
    assert result.outcome is Outcome.FAILED and ("f", "too_few_shared") in _codes(result)


def test_mostly_errored_candidate_fails(run_writer) -> None:
    _base(run_writer)
    ids = _ids()
    scores = {c: ("judge timed out" if i < 45 else 0.0) for i, c in enumerate(ids)}
    run_writer.write("cand", {"f": scores}, config={"p": 2})
    result = _gate(run_writer)
    assert result.outcome is Outcome.FAILED


def test_more_errors_than_the_base_fails_even_when_scores_look_fine(run_writer) -> None:
    a = _base(run_writer)
    scores = {
        c: (v if i >= 3 else "judge timed out")
        for i, (c, v) in enumerate(zip(_ids(), a, strict=True))
    }
    run_writer.write("cand", {"f": scores}, config={"p": 2})
    result = _gate(run_writer)
    assert ("f", "more_errors") in _codes(result) and result.outcome is Outcome.FAILED


def test_a_judge_that_never_parses_fails(run_writer) -> None:
    _base(run_writer)
    run_writer.write(
        "cand",
        {"f": dict.fromkeys(_ids(), 0.0)},
        reasons={"f": dict.fromkeys(_ids(), "parse failure: no label")},
        config={"p": 2},
    )
    result = _gate(run_writer)
    assert ("f", "no_scores") in _codes(result)


def test_real_drop_near_the_ceiling_is_never_passed() -> None:
    """The audit's case: a true 10-point drop at N = 30 near the ceiling passed ~92% of the
    time. Simulated through the same decision: it must never pass."""
    from ragtui.core.analysis import analyse_metric
    from ragtui.core.compare import Comparison

    gen = np.random.default_rng(7)
    passed = 0
    for i in range(200):
        a = (gen.uniform(size=30) < 0.95).astype(float)
        b = (gen.uniform(size=30) < 0.85).astype(float)
        m = analyse_metric("f", a, b, rng=np.random.default_rng(i))
        c = Comparison("a", "b", 0, 0.05, [], [m], [], {}, [], [], None, None, ["a"])  # type: ignore[arg-type]
        passed += decide_gate(c, min_cases=10).outcome is Outcome.PASSED
    assert passed / 200 <= 0.05


def test_improved_candidate_passes_and_floors_hold_or_fail(run_writer) -> None:
    gen = np.random.default_rng(3)
    ids = _ids(200)
    a = gen.uniform(0.3, 0.8, 200)
    run_writer.write("base", {"f": dict(zip(ids, a.tolist(), strict=True))})
    b = np.clip(a + 0.1 + gen.normal(0, 0.05, 200), 0, 1)
    run_writer.write("cand", {"f": dict(zip(ids, b.tolist(), strict=True))}, config={"p": 2})
    assert _gate(run_writer).outcome is Outcome.PASSED
    mean = float(b.mean())
    held = _gate(run_writer, {"f": mean - 0.01}, {"f": mean})
    assert held.outcome is Outcome.PASSED and ("f", "floor_held") in _codes(held)
    below = _gate(run_writer, {"f": mean + 0.01}, {"f": mean})
    assert below.outcome is Outcome.FAILED and ("f", "below_floor") in _codes(below)
    # a floor on a metric only the base scored: the candidate has no mean to hold it
    run_writer.write("cand", {"f": dict(zip(ids, b.tolist(), strict=True))}, config={"p": 2})
    run_writer.write(
        "base", {"f": dict(zip(ids, a.tolist(), strict=True)), "g": dict.fromkeys(ids, 0.5)}
    )
    missing = _gate(run_writer, {"g": 0.1}, {})
    assert ("g", "no_floor_scores") in _codes(missing)


def test_a_metric_the_candidate_dropped_fails_the_gate(run_writer) -> None:
    """The base scored faithfulness; the candidate (its importer lost the column) did not.
    Passing on the metrics left would let a CI go green on what it no longer measures."""
    ids = _ids(40)
    gen = np.random.default_rng(5)
    a = gen.uniform(0.5, 0.9, 40)
    b = dict(zip(ids, (a + 0.05 + gen.normal(0, 0.02, 40)).tolist(), strict=True))
    a_ = dict(zip(ids, a.tolist(), strict=True))
    run_writer.write("base", {"rel": a_, "f": a_})
    run_writer.write("cand", {"rel": b}, config={"p": 2})
    result = _gate(run_writer)
    assert result.outcome is Outcome.FAILED
    assert _codes(result) == [("rel", "non_inferior"), ("f", "not_in_candidate")]
    # named with -m, the same reason (not "every case errored": none did)
    named = _gate(run_writer, metrics=["f"])
    assert named.outcome is Outcome.FAILED and _codes(named) == [("f", "not_in_candidate")]
    # a metric only the candidate scored is new, not dropped: nothing to fail
    run_writer.write("base", {"rel": a_})
    run_writer.write("cand", {"rel": b, "f": b}, config={"p": 2})
    assert _gate(run_writer).outcome is Outcome.PASSED


def test_a_floor_reads_the_candidate_as_the_table_shows_it(run_writer) -> None:
    """Grades 0-10 summing to 320 over 40 cases: the mean is exactly 80 points, and a floor of
    80 holds (averaged in floating point it falls a few ulps short). With a rerun of the
    candidate the floor reads the mean of both runs, the B the comparison shows."""
    ids = _ids(40)
    grades = [10, 9, 9, 6, 7, 10, 6, 8, 6, 9, 10, 6, 7, 6, 10, 10, 10, 6, 10, 6]
    grades += [9, 6, 8, 6, 6, 9, 6, 9, 10, 9, 8, 9, 10, 6, 6, 7, 10, 10, 7, 8]
    assert sum(grades) == 320
    assert np.mean(np.array(grades) / 10) < 0.8  # in floating point: 0.7999999999999999
    base = dict.fromkeys(ids, 0.7)
    run_writer.write("base", {"f": base})
    cand = {c: g / 10 for c, g in zip(ids, grades, strict=True)}
    run_writer.write("cand", {"f": cand}, config={"p": 2})
    held = _gate(run_writer, {"f": 0.80})
    assert ("f", "floor_held") in _codes(held) and held.outcome is Outcome.PASSED
    assert _gate(run_writer, {"f": 0.8001}).outcome is Outcome.FAILED
    # a rerun of the candidate's config, 2 points lower on every case: B is 79 by hand
    rerun = {c: g / 10 - 0.02 for c, g in zip(ids, grades, strict=True)}
    run_writer.write("cand2", {"f": rerun}, config={"p": 2}, kind="rerun")
    c = compare_runs(run_writer.store(), "base", "cand")
    (m,) = c.metrics
    assert m.mean_b == pytest.approx(0.79)
    # the first run alone (80) would hold a floor of 79.5; the candidate's 79 does not
    checks = decide_gate(c, {"f": 0.795}, {"f": 0.80}).checks
    (floor,) = [ch for ch in checks if "floor" in ch.code]
    assert floor.code == "below_floor" and floor.value == pytest.approx(0.79)


def test_undecided_has_its_own_exit_code_and_the_cases_needed(run_writer) -> None:
    gen = np.random.default_rng(4)
    ids = _ids(20)
    a = gen.uniform(0.2, 0.9, 20)
    run_writer.write("base", {"f": dict(zip(ids, a.tolist(), strict=True))})
    b = np.clip(a + gen.normal(0, 0.2, 20), 0, 1)
    run_writer.write("cand", {"f": dict(zip(ids, b.tolist(), strict=True))}, config={"p": 2})
    result = _gate(run_writer)
    (check,) = result.checks
    assert result.outcome is Outcome.UNDECIDED and check.n_needed and check.n_needed > 20
    assert result.exit_code() == EXIT_UNDECIDED and result.exit_code(undecided_passes=True) == 0


def test_scales_that_differ_fail(run_writer) -> None:
    ids = _ids(20)
    run_writer.write("base", {"q": dict.fromkeys(ids, 0.5)}, scales={"q": (0, 10)})
    run_writer.write("cand", {"q": dict.fromkeys(ids, 0.5)}, scales={"q": (1, 5)}, config={"p": 2})
    result = _gate(run_writer)
    assert _codes(result) == [("q", "not_comparable")]


@pytest.mark.parametrize("n", [80])
def test_an_unchanged_metric_is_non_inferior_from_the_exact_bound(run_writer, n) -> None:
    """Every case identical on a deterministic metric: no t-interval, but at most 4.5% of
    80 cases could differ (Clopper-Pearson), so the change is above -5 points."""
    ids = _ids(n)
    run_writer.write("base", {"recall": dict.fromkeys(ids, 1.0)})
    run_writer.write("cand", {"recall": dict.fromkeys(ids, 1.0)}, config={"p": 2})
    assert _gate(run_writer).outcome is Outcome.PASSED


def test_every_gate_code_has_its_sentence() -> None:
    from ragtui.core.gate import CODES, GateCheck
    from ragtui.format import gate_check_text

    for code in CODES:
        text = gate_check_text(GateCheck("m", Outcome.FAILED, code, 3.0, 10.0, 40), 0.05)
        assert text.startswith("FAIL m: ") and len(text) > len("FAIL m: ") + 10, code


def test_an_unchanged_metric_in_few_clusters_is_not_non_inferior(run_writer) -> None:
    """The same 100 unchanged cases in 5 clusters (documents): the units that can differ are
    the 5 clusters, not the 100 cases. The exact bound was ±3.6 points and the gate passed;
    over 5 clusters at most 52% of them can differ (Clopper-Pearson, 0 of 5), and with one
    cluster of 60 cases those are 76% of the cases: nothing is shown."""
    from scipy import stats as sps

    ids = _ids(100)
    sizes = [60, 10, 10, 10, 10]
    clusters = {c: f"doc-{k}" for k, n in enumerate(sizes) for c in ids[sum(sizes[:k]) :][:n]}
    run_writer.write("base", {"recall": dict.fromkeys(ids, 1.0)}, clusters=clusters)
    run_writer.write(
        "cand", {"recall": dict.fromkeys(ids, 1.0)}, clusters=clusters, config={"p": 2}
    )
    result = _gate(run_writer)
    assert result.outcome is not Outcome.PASSED
    m = compare_runs(run_writer.store(), "base", "cand").metric("recall")
    u = sps.binomtest(0, 5).proportion_ci(0.95, method="exact").high  # a share of clusters
    share = (60 + 10 + (u * 5 - 2) * 10) / 100  # the 2.6 largest clusters' cases
    assert (m.ci_low, m.ci_high) == pytest.approx((-share, share))


def test_a_bound_within_the_sign_flips_own_error_of_the_margin_is_undecided_for_any_seed(
    run_writer,
) -> None:
    """30 documents of 2 questions, every document moved (continuous scores), shifted so the
    95% lower bound from 10,000 random sign patterns sits on -5 points. (Found on the demo's
    top_k 5 against the baseline, context_precision: the gate passed it with the default seed
    and not with --seed 1.) The test's p at -5 is within its Monte Carlo error of .05, so it
    is undecided whatever the seed; and that p agrees with the bound each time."""
    from ragtui.core.intervals import ALPHA, MARGIN_P_ERROR, SignFlip

    ids = _ids(60)
    docs = {c: f"doc-{i // 2}" for i, c in enumerate(ids)}
    rng = np.random.default_rng(11)
    d = np.repeat(rng.normal(0.0, 0.12, 30), 2) + rng.normal(0.0, 0.05, 60)
    # move the deltas so that the bound by the exact test's own patterns lands on -5 points
    groups = np.repeat(np.arange(30), 2)
    totals, sizes = np.bincount(groups, weights=d), np.full(30, 2.0)
    low, _ = SignFlip(totals, sizes, np.random.default_rng(0), mid_p=False).interval(ALPHA)
    d = d + (-0.05 - low)
    a = np.full(60, 0.5)
    run_writer.write("A", {"m": dict(zip(ids, a, strict=True))}, clusters=docs)
    run_writer.write("B", {"m": dict(zip(ids, a + d, strict=True))}, clusters=docs, config={"p": 2})
    store = run_writer.store()
    outcomes = set()
    for seed in (1, 2, 3, 4, 5, 20261201):
        c = compare_runs(store, "A", "B", seed=seed)
        m = c.metric("m")
        assert m.method is Method.CLUSTER_SIGN_FLIP and m.margin_p is not None and not m.exact
        assert (m.ci_low > -0.05) == (m.margin_p < ALPHA)  # the bound is the test's
        assert abs(m.margin_p - ALPHA) < MARGIN_P_ERROR
        (check,) = decide_gate(c).checks
        outcomes.add((check.outcome, check.code))
    # too close to call for a seed whose bound clears the margin; undecided for the others
    # (where compare calls it no meaningful change, the gate's line says so)
    assert (Outcome.UNDECIDED, "too_close") in outcomes
    assert outcomes <= {
        (Outcome.UNDECIDED, "too_close"),
        (Outcome.UNDECIDED, "undecided"),
        (Outcome.UNDECIDED, "undecided_no_change"),
    }


def test_the_demo_case_of_that_seed_dependence_no_longer_rests_on_random_patterns(
    tmp_path,
) -> None:
    """The demo's top_k 5 against the baseline, context_precision: most documents did not
    move, so it takes the score test on the clusters' totals, which draws nothing at random:
    the same bound and gate outcome for every seed."""
    import shutil
    from pathlib import Path

    from ragtui.core.store import Store

    folder = tmp_path / "runs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "sample_runs", folder)
    seen = set()
    with Store.open(folder) as store:
        for seed in (1, 2, 20261201):
            c = compare_runs(
                store,
                "baseline-2026-11-02",
                "topk5-2026-11-09",
                metrics=["context_precision"],
                seed=seed,
            )
            m = c.metric("context_precision")
            assert m.method is Method.CLUSTER_SCORE and m.margin_p is None
            (check,) = decide_gate(c).checks
            seen.add((m.ci_low, m.ci_high, check.outcome, check.code))
    assert len(seen) == 1


def test_no_meaningful_change_that_the_gate_cannot_pass_says_why(run_writer) -> None:
    """Compare's "no meaningful change" reads the 90% CI (TOST, 5% a side); the gate asks the
    95% CI's lower bound (2.5% on the downside) to clear the margin. Between the two the gate
    says so, or the dashboard and CI read as contradicting each other."""
    from scipy import stats

    from ragtui.core.verdict import Verdict
    from ragtui.format import gate_check_text

    rng = np.random.default_rng(11)
    a = _base(run_writer, np.full(N, 0.5))
    d = np.clip(rng.normal(0.0, 0.18, N), -0.5, 0.5)
    d = d - d.mean() - 0.005  # a mean drop of half a point
    run_writer.write("cand", {"f": dict(zip(_ids(), (a + d).tolist(), strict=True))})
    result = _gate(run_writer)
    low90, _ = stats.t.interval(0.90, N - 1, loc=d.mean(), scale=stats.sem(d))
    low95, _ = stats.t.interval(0.95, N - 1, loc=d.mean(), scale=stats.sem(d))
    assert low95 <= -0.05 < low90  # the case this test is about (scipy's t-intervals)
    c = compare_runs(run_writer.store(), "base", "cand")
    assert c.metric("f").verdict is Verdict.NO_CHANGE
    (check,) = [ch for ch in result.checks if ch.metric == "f"]
    assert (check.outcome, check.code) == (Outcome.UNDECIDED, "undecided_no_change")
    assert "though compare calls it no meaningful change" in gate_check_text(check, 0.05)
