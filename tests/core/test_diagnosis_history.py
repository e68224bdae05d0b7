"""Case history classes on a hand-built history; every expected class is read off the table
below by the rules in case_history.py's docstring."""

from __future__ import annotations

import pytest

from ragtui.core.case_history import case_classes, new_failures
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from tests.core.diagnosis_builder import case, write

# case: (x0, x1, y0, y1, candidate) faithfulness; None: not in that run; "err": errored
TABLE: dict[str, tuple[float | str | None, ...]] = {
    "held": (1, 1, 1, 1, 0),
    "fixed": (0, 0, 0, 0, 1),
    "flaky": (1, 0, 1, 1, 1),
    "flaky-y": (1, 1, 1, 0, 1),
    "pass": (1, 1, 1, 1, 1),
    "fail": (0, 0, 0, 0, 0),
    "varies": (1, 1, 0, 0, 1),
    "partial": (0.5, 0.5, 0.5, 0.5, 0.4),  # 0.5 passes (>= 0.5); 0.4 fails
    "errored": (1, 1, 1, 1, "err"),
    "new": (None, None, None, None, 1),
    "src-thr": (0.8, 0.8, 0.8, 0.8, 0.6),  # the source states a 0.7 threshold
}
BASE_MODE = {  # against x0's config only (x0, x1)
    "held": "newly broken",
    "fixed": "newly fixed",
    "flaky": "flaky",
    "flaky-y": "stable pass",
    "pass": "stable pass",
    "fail": "stable fail",
    "varies": "stable pass",
    "partial": "newly broken",
    "errored": "unscored",
    "new": "no history",
    "src-thr": "newly broken",
}
HISTORY_MODE = {**BASE_MODE, "flaky-y": "flaky", "varies": "varies by config"}
RUNS = [("x0", "X", 0), ("x1", "X", 1), ("y0", "Y", 0), ("y1", "Y", 1), ("cand", "Z", 0)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("history")
    for k, (run_id, config, seed) in enumerate(RUNS):
        cases = []
        for cid, values in TABLE.items():
            v = values[k]
            if v is None:
                continue
            thr = {"faithfulness": 0.7} if cid == "src-thr" else None
            cases.append(case(cid, {"faithfulness": v}, thresholds=thr))
        write(root, run_id, cases, day=k + 1, config={"generator": config, "seed": seed})
    # Newer than the candidate (not its history), and another dataset with config X.
    write(root, "later", [case("pass", {"faithfulness": 0})], day=9, config={"generator": "W"})
    write(
        root,
        "other",
        [case("pass", {"faithfulness": 0})],
        day=2,
        config={"generator": "X", "seed": 5},
        dataset=("other", "v1"),
    )
    with Store.open(root) as s:
        assert not s.problems
        yield s


def classes(history) -> dict[str, str]:
    return {c.case_id: c.klass for c in history.cases}


def test_against_the_base_config(store: Store) -> None:
    h = case_classes(store, "cand", base="x0")
    assert h.baseline_runs == ("x0", "x1")
    assert classes(h) == BASE_MODE
    assert h.counts()["faithfulness"]["newly broken"] == 3


def test_against_the_whole_history(store: Store) -> None:
    h = case_classes(store, "cand")
    assert h.baseline_runs == ("x0", "x1", "y0", "y1")  # not "later", not the other dataset
    assert classes(h) == HISTORY_MODE


def test_pass_thresholds(store: Store) -> None:
    h = case_classes(store, "cand", base="x0")
    by_id = {c.case_id: c for c in h.cases}
    assert (by_id["src-thr"].threshold, by_id["src-thr"].threshold_from) == (0.7, "source")
    assert (by_id["held"].threshold, by_id["held"].threshold_from) == (0.5, "default")
    mine = case_classes(store, "cand", base="x0", thresholds={"faithfulness": 0.3})
    got = classes(mine)
    assert got["partial"] == "stable pass" and got["src-thr"] == "stable pass"
    assert got["held"] == "newly broken"


def test_new_failures_for_the_gate(store: Store) -> None:
    found = new_failures(store, "x0", "cand")
    assert [f.case_id for f in found] == ["held", "partial", "src-thr"]
    held = found[0]
    assert [(o.run_id, o.value, o.passed) for o in held.history if o.baseline] == [
        ("x0", 1.0, True),
        ("x1", 1.0, True),
    ]
    assert (held.candidate.value, held.candidate.passed) == (0.0, False)
    assert new_failures(store, "x0", "x1") == []  # a rerun of the base: nothing newly broken
    assert [f.case_id for f in new_failures(store, "y0", "cand", "faithfulness")] == [
        "held",
        "partial",
        "src-thr",
    ]


def test_errors_are_clear(store: Store) -> None:
    with pytest.raises(RagtuiError, match="not scored in cand"):
        case_classes(store, "cand", metrics=["recall"])
    with pytest.raises(RagtuiError, match="same run"):
        case_classes(store, "cand", base="cand")
    with pytest.raises(RagtuiError, match="expected a fraction"):
        case_classes(store, "cand", thresholds={"faithfulness": 2.0})
    first = case_classes(store, "x0")
    # no run of another config before x0: only its own config's runs (x0 and its rerun x1),
    # which show only the case they disagree on as flaky
    assert first.baseline_runs == () and first.candidate_runs == ("x0", "x1")
    assert "its own config's 2 runs tell only whether a case is flaky" in first.notes[0]
    got = classes(first)
    assert got.pop("flaky") == "flaky"
    assert set(got.values()) == {"no history"}


def test_a_rerun_of_the_base_config_is_flaky_not_newly_broken(store: Store) -> None:
    got = classes(case_classes(store, "x1", base="x0"))
    assert got["flaky"] == "flaky"  # x0 passed, x1 (same config) fails
    assert got["held"] == "stable pass"
    assert classes(case_classes(store, "x1"))["flaky"] == "flaky"  # its history: x0 only


def test_gate_line_for_a_new_failure(store: Store) -> None:
    from ragtui.format import new_failure_line

    (held, *_) = new_failures(store, "x0", "cand")
    line = new_failure_line(
        held.case_id,
        held.metric,
        [o.value for o in held.history if o.baseline],
        held.candidate.value,
        held.threshold,
    )
    assert line == (
        "held faithfulness: passed in every baseline run (100, 100), "
        "fails in the candidate (0; pass ≥ 50)"
    )
