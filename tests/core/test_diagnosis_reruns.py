"""B's reruns in the diagnosis and the case classes, on small hand-built histories.

Every expectation is worked by hand from README's rules: a case's value is the mean of its
reruns on both sides; a case falls when that B value is below every A rerun, or (one A run)
at least 10 points below A; a case whose candidate config's reruns disagree is flaky.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.core.case_history import case_classes, new_failures
from ragtui.core.compare import compare_runs
from ragtui.core.diagnosis import diagnose, diagnose_case
from ragtui.core.store import Store
from ragtui.format import diagnosis_summary_lines
from tests.core.diagnosis_builder import case, chunks, write

CASES = [f"k{i:02d}" for i in range(6)]


def _run(root: Path, run_id: str, fails: set[str], generator: str, day: int, seed: int = 0) -> None:
    cases = [
        case(
            cid,
            {"faithfulness": 0.0 if cid in fails else 1.0, "context_recall": 1.0},
            contexts=chunks("x-1", "y-1"),
            answer=f"{generator} answers {cid}",
        )
        for cid in CASES
    ]
    write(root, run_id, cases, config={"generator": generator, "seed": seed}, day=day)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    """A passes everything; B and its rerun B2 (one config) each fail one case: B k01, B2 k00."""
    root = tmp_path_factory.mktemp("breruns")
    _run(root, "A", set(), "a", day=1)
    _run(root, "B", {"k01"}, "b", day=2)
    _run(root, "B2", {"k00"}, "b", day=3, seed=1)
    with Store.open(root) as s:
        assert not s.problems
        yield s


def test_b_is_the_mean_of_its_reruns_as_in_compare(store: Store) -> None:
    d = diagnose(store, "A", "B")
    faith = next(m for m in d.metrics if m.metric == "faithfulness")
    # k00: A 1, B (1 + 0) / 2 = 0.5; k01: A 1, B (0 + 1) / 2 = 0.5: both 50 points down
    assert [(c.case_id, c.a, c.b) for c in faith.cases] == [("k00", 1.0, 0.5), ("k01", 1.0, 0.5)]
    assert d.b_runs == ("B", "B2")
    c = compare_runs(store, "A", "B")
    worst = {x.case_id: (x.a, x.b) for x in c.cases if x.metric == "faithfulness" and x.delta < 0}
    assert worst == {"k00": (1.0, 0.5), "k01": (1.0, 0.5)}
    one = diagnose_case(store, "A", "B", "k00")
    move = next(m for m in one.moves if m.metric == "faithfulness")
    assert (move.a, move.b, move.b_runs, move.fell) == (1.0, 0.5, (1.0, 0.0), True)
    lines = diagnosis_summary_lines(d)
    assert lines[0].endswith("B B (B, 2 reruns) · 6 paired cases")
    assert "B (the mean of its 2 reruns) dropped by at least 10 points" in lines[1]


def _classes(history) -> dict[str, str]:
    return {c.case_id: c.klass for c in history.cases if c.metric == "faithfulness"}


def test_mirror_image_reruns_are_both_flaky(store: Store) -> None:
    # k00: A ✓, B ✓, B2 ✗; k01: A ✓, B ✗, B2 ✓ — B's config disagrees with itself on both
    for base in ("A", None):
        got = _classes(case_classes(store, "B", base=base))
        assert (got["k00"], got["k01"]) == ("flaky", "flaky"), base
    assert new_failures(store, "A", "B") == []
    d = diagnose(store, "A", "B")
    assert (
        d.classes["faithfulness"]["flaky"] == 2 and d.classes["faithfulness"]["newly broken"] == 0
    )


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory):
    """A passes everything; B0 (day 2) and B (day 3) are one config: on k01 B0 passes, B fails."""
    root = tmp_path_factory.mktemp("older")
    _run(root, "A", set(), "a", day=1)
    _run(root, "B0", set(), "b", day=2)
    _run(root, "B", {"k01"}, "b", day=3, seed=1)
    with Store.open(root) as s:
        assert not s.problems
        yield s


def test_an_older_rerun_of_the_candidate_counts_with_base_too(older: Store) -> None:
    # k01: A ✓, B0 ✓, B ✗ -> B's config disagrees: flaky with or without --base
    assert _classes(case_classes(older, "B"))["k01"] == "flaky"
    assert _classes(case_classes(older, "B", base="A"))["k01"] == "flaky"
    assert new_failures(older, "A", "B") == []


@pytest.fixture(scope="module")
def later(tmp_path_factory: pytest.TempPathFactory):
    """A (day 1) passes everything; B (day 2) fails k00; A3, a rerun of A made after B (day 3),
    fails k00 and k01."""
    root = tmp_path_factory.mktemp("later")
    _run(root, "A", set(), "a", day=1)
    _run(root, "B", {"k00"}, "b", day=2)
    _run(root, "A3", {"k00", "k01"}, "a", day=3, seed=1)
    with Store.open(root) as s:
        assert not s.problems
        yield s


def test_every_rerun_of_the_base_counts_as_compare_averages_it(later: Store) -> None:
    """Compare puts A at the mean of A and A3 (50 on k00, whatever their dates): A3 failing
    k00 shows A's config fails it too, so B failing it is not newly broken."""
    h = case_classes(later, "B", base="A")
    assert set(h.baseline_runs) == {"A", "A3"}
    got = _classes(h)
    # k00: A ✓, A3 ✗ -> B ✗: flaky; k01: A ✓, A3 ✗ -> B ✓: flaky
    assert (got["k00"], got["k01"]) == ("flaky", "flaky")
    assert new_failures(later, "A", "B") == []
    # without a base the history is what came before B: A3 is not part of it
    alone = _classes(case_classes(later, "B"))
    assert (alone["k00"], alone["k01"]) == ("newly broken", "stable pass")
