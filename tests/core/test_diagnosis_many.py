"""Several candidates against one base: Holm over the whole table, checked by hand."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sps

from ragtui.core.compare import compare_runs
from ragtui.core.errors import RagtuiError
from ragtui.core.multi_compare import compare_many
from ragtui.core.store import Store
from tests.core.diagnosis_builder import case, write

N = 12


def holm_by_hand(ps: list[float]) -> list[float]:
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = [0.0] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("many")
    ids = [f"q{i:02d}" for i in range(N)]
    base = {c: {"faithfulness": 1.0, "answer_relevance": 0.75} for c in ids}
    write(root, "base", [case(c, s) for c, s in base.items()], day=1)

    def candidate(run_id: str, day: int, faith: dict[str, float], rel: dict[str, float]) -> None:
        cases = [
            case(c, {"faithfulness": faith.get(c, 1.0), "answer_relevance": rel.get(c, 0.75)})
            for c in ids
        ]
        write(root, run_id, cases, day=day, config={"generator": run_id})

    # worse: 6 of 12 cases drop by 0.5 on faithfulness, the rest unchanged -> the score test,
    # which for k cases all moved one way by the same step is McNemar's: z = √k, p = 2·Φ(-√6)
    candidate("worse", 2, {c: 0.5 for c in ids[:6]}, {ids[0]: 1.0})
    candidate("same", 3, {ids[0]: 0.5}, {ids[1]: 0.5})  # one case each way: p = 1
    # 3 up: too few moves for the score test, the exact sign test: p = 2·(1/2)^3
    candidate("better", 4, {}, {c: 1.0 for c in ids[:3]})
    with Store.open(root) as s:
        yield s


def test_holm_over_every_cell_and_verdicts_redecided(store: Store) -> None:
    mc = compare_many(store, "base", ["worse", "same", "better"])
    assert mc.metrics == ("answer_relevance", "faithfulness")
    raw = [c.p for c in mc.cells]
    assert mc.cell("worse", "faithfulness").p == pytest.approx(2 * sps.norm.sf(math.sqrt(6)))
    assert mc.cell("better", "answer_relevance").p == pytest.approx(sps.binomtest(3, 3).pvalue)
    assert [c.p_adj for c in mc.cells] == pytest.approx(holm_by_hand(raw))
    worse = mc.cell("worse", "faithfulness")
    assert worse.p_adj == pytest.approx(6 * 2 * sps.norm.sf(math.sqrt(6)))  # 0.086: not < .05
    assert worse.delta == pytest.approx(-6 * 0.5 / N)
    assert worse.verdict == "inconclusive"
    # its CI excludes 0 (and lies past -5 points): the reason says why it is still undecided,
    # never "CI crosses ±5 points", and over which tests Holm adjusted
    assert worse.ci_high < 0
    assert worse.reason.startswith(
        "p .014 alone (its 95% CI excludes 0), but "  # 2·Φ(-√6) = .0143; ×6 = .086
        "adjusted p .086 after Holm over every test of the table (6)"
    )
    assert "crosses" not in worse.reason
    # The same pair alone (Holm over its 2 metrics: 0.029) is a regression.
    pair = compare_runs(store, "base", "worse")
    assert pair.metric("faithfulness").verdict == "regressed"
    assert mc.ranked("faithfulness") == ["better", "same", "worse"]
    payload = json.loads(json.dumps(mc.to_json(), allow_nan=False))
    assert payload["adjustment"] == "Holm over all 6 tests"
    # each cell names its test, as `compare --json` does: 6 moved cases, the score test; 3, too
    # few to test (exact bounds and the sign test)
    methods = {(c["candidate"], c["metric"]): c["method"] for c in payload["cells"]}
    assert methods[("worse", "faithfulness")] == "score"
    assert methods[("better", "answer_relevance")] == "few_moved"


def test_bad_candidate_lists(store: Store) -> None:
    with pytest.raises(RagtuiError, match="is the base run itself"):
        compare_many(store, "base", ["worse", "base"])
    with pytest.raises(RagtuiError, match="given twice"):
        compare_many(store, "base", ["worse", "worse"])
    with pytest.raises(RagtuiError, match="at least one candidate"):
        compare_many(store, "base", [])


def test_the_base_keeps_every_rerun_any_cell_averaged(tmp_path) -> None:
    """Review: the base's reruns were those of the last pair only, so with a rerun of the
    base's own config last (each side alone), a deleted base rerun went unnoticed."""
    import shutil
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_runs"
    folder = tmp_path / "runs"
    shutil.copytree(sample, folder, ignore=shutil.ignore_patterns(".ragtui*"))
    with Store.open(folder) as s:
        mc = compare_many(s, "baseline-2026-11-02", ["topk5-2026-11-09", "baseline-2026-11-05"])
        base = set(mc.reruns["baseline-2026-11-02"])
    assert {"baseline-2026-11-03", "baseline-2026-11-05", "baseline-2026-11-29"} <= base
