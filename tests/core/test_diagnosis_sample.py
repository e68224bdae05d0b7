"""Diagnosis on the bundled demo history (sample_runs/, copied to a temp folder): the 1b
generator is a generation regression, top_k 5 changes the retrieval. Expectations are computed
from the run files themselves, not from the diagnosis code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragtui.core.diagnosis import Diagnosis, diagnose
from ragtui.core.model import RunFile
from ragtui.core.runfile import SUFFIX, read_run_file
from ragtui.core.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_runs"
BASELINES = ("baseline-2026-11-02", "baseline-2026-11-03", "baseline-2026-11-05")
SMALL, TOPK5, OVERLAP = "small-gen-2026-11-19", "topk5-2026-11-09", "overlap64-2026-11-12"


@pytest.fixture(scope="module")
def runs() -> dict[str, RunFile]:
    return {p.name.removesuffix(SUFFIX): read_run_file(p) for p in SAMPLE.glob("*" + SUFFIX)}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("sample") / "runs"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns(".*"))
    with Store.open(folder) as s:
        assert not s.problems
        yield s


def value(rf: RunFile, case_id: str, metric: str) -> float | None:
    c = next(c for c in rf.cases if c.case_id == case_id)
    s = c.scores.get(metric)
    return None if s is None else s.value


def fell_by_hand(runs: dict[str, RunFile], b: str, metric: str) -> set[str]:
    """Cases where B is below every baseline rerun (A has three reruns)."""
    out = set()
    for c in runs[b].cases:
        a = [value(runs[r], c.case_id, metric) for r in BASELINES]
        vb = value(runs[b], c.case_id, metric)
        if vb is not None and a[0] is not None and vb < min(x for x in a if x is not None):
            out.add(c.case_id)
    return out


def contexts(rf: RunFile) -> dict[str, list[str]]:
    return {c.case_id: [k.id for k in c.contexts] for c in rf.cases}


@pytest.fixture(scope="module")
def small(store: Store) -> Diagnosis:
    return diagnose(store, BASELINES[0], SMALL)


def test_small_generator_is_a_generation_regression(
    small: Diagnosis, runs: dict[str, RunFile]
) -> None:
    faith = next(m for m in small.metrics if m.metric == "faithfulness")
    assert {c.case_id for c in faith.cases} == fell_by_hand(runs, SMALL, "faithfulness")
    assert len(faith.cases) >= 10
    assert faith.by_stage() == {
        "generation": len(faith.cases),
        "retrieval": 0,
        "judge": 0,
        "unattributed": 0,
    }
    # retrieval did not change at all: same chunk ids in the same order in every case
    assert contexts(runs[SMALL]) == contexts(runs[BASELINES[0]])
    assert small.retrieval.unchanged == small.retrieval.n_cases == 48
    # every hallucination has a B claim marked UNSUPPORTED that A's answer did not make
    for c in faith.cases:
        if c.cause != "hallucination":
            continue
        a = next(x for x in runs[BASELINES[0]].cases if x.case_id == c.case_id)
        b = next(x for x in runs[SMALL].cases if x.case_id == c.case_id)
        a_texts = {cl.text for cl in a.claims}
        assert any(cl.verdict == "UNSUPPORTED" and cl.text not in a_texts for cl in b.claims)


def test_top_k_5_adds_chunks_below_the_old_ones(store: Store, runs: dict[str, RunFile]) -> None:
    a, b = contexts(runs[BASELINES[0]]), contexts(runs[TOPK5])
    assert all(b[c][: len(a[c])] == a[c] and len(b[c]) > len(a[c]) for c in a)
    d = diagnose(store, BASELINES[0], TOPK5)
    r = d.retrieval
    assert (r.n_cases, r.with_added, r.with_removed, r.with_moved) == (48, 48, 0, 0)
    assert (r.mean_overlap, r.top_changed_share) == (1.0, 0.0)
    # precision fell where faithfulness held: the extra chunks are noise
    precision = next(m for m in d.metrics if m.metric == "context_precision")
    fell = fell_by_hand(runs, TOPK5, "context_precision")
    assert {c.case_id for c in precision.cases} == fell and fell
    held = fell - fell_by_hand(runs, TOPK5, "faithfulness")
    assert {c.case_id for c in precision.cases if c.cause == "retrieval noise"} == held


def test_chunk_overlap_change_moves_and_swaps_chunks(
    store: Store, runs: dict[str, RunFile]
) -> None:
    a, b = contexts(runs[BASELINES[0]]), contexts(runs[OVERLAP])
    jaccard = [len(set(a[c]) & set(b[c])) / len(set(a[c]) | set(b[c])) for c in a]
    reordered = sum(set(a[c]) == set(b[c]) and a[c] != b[c] for c in a)
    swapped_in = sum(set(a[c]) != set(b[c]) for c in a)
    r = diagnose(store, BASELINES[0], OVERLAP).retrieval
    assert r.mean_overlap == pytest.approx(sum(jaccard) / len(jaccard))
    assert r.with_added == r.with_removed == swapped_in > 0
    assert r.with_moved >= reordered > 0


def test_a_rejudge_against_its_parent_is_put_on_the_judge(
    store: Store, runs: dict[str, RunFile], small: Diagnosis
) -> None:
    """The demo's llama3.1 re-judge of the strict prompt graded its parent's own answers and
    chunks (checked here in the files): its cases that fell were put on generation and
    retrieval stages ("3 generation") that did not change. They are regraded, the judge's."""
    from ragtui.format import attribution_line

    parent, rejudge = "strict-v2-2026-11-16", "rejudge-llama3.1-2026-11-18"
    for c in runs[rejudge].cases:
        twin = next(x for x in runs[parent].cases if x.case_id == c.case_id)
        assert c.answer and c.answer == twin.answer
        assert [k.id for k in c.contexts] == [k.id for k in twin.contexts]
    d = diagnose(store, parent, rejudge)
    assert d.same_output
    fallen = [c for m in d.metrics for c in m.cases]
    assert fallen  # the test is about cases that fell
    assert {(c.cause, c.stage) for c in fallen} == {("regraded", "judge")}
    m = next(m for m in d.metrics if m.cases)
    line = attribution_line(m.metric, m.delta, len(m.cases), m.by_stage(), d.same_output)
    assert line.endswith(" fell — by the judge alone (same answers and chunks)")
    assert not small.same_output  # another generator: its own answers
    # only a retrieval metric that fell on unchanged chunks is the judge's there
    assert all(
        c.stage != "judge" or c.basis.endswith("same chunks")
        for m in small.metrics
        for c in m.cases
    )
