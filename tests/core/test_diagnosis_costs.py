"""Cost and latency per run and between runs. The metadata carries the tools' own usage objects,
copied from the genuine fixtures in tests/data; expected totals are summed from those files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragtui.core.costs import case_figures, cost_deltas, run_costs
from ragtui.core.store import Store
from tests.core.diagnosis_builder import case, write

DATA = Path(__file__).resolve().parents[1] / "data"


def fixture(path: str) -> dict:
    return json.loads((DATA / path).read_text(encoding="utf-8"))


PROMPTFOO = fixture("promptfoo/promptfoo_v3_refunds.json")["results"]["results"]
INSPECT = fixture("inspect/refunds.json")["samples"]
DEEPEVAL = fixture("deepeval/latest_test_run.json")["testRunData"]["testCases"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("costs")
    pf = [
        case(
            f"p{i}",
            {"faithfulness": 1.0},
            latency_ms=r["latencyMs"],
            metadata={"tokenUsage": r["tokenUsage"], "cost": r["cost"]},
        )
        for i, r in enumerate(PROMPTFOO)
    ]
    write(root, "promptfoo", pf, day=1)
    ins = [
        case(f"p{i}", {"faithfulness": 1.0}, latency_ms=s["total_time"] * 1000,
             metadata={"model_usage": s["model_usage"]})
        for i, s in enumerate(INSPECT)
    ]  # fmt: skip
    write(root, "inspect", ins, day=2, config={"generator": "inspect"})
    de = [
        case(f"p{i}", {"faithfulness": 1.0}, metadata={"evaluationCost": t["evaluationCost"]})
        for i, t in enumerate(DEEPEVAL)
    ]
    de.append(case("bad1", {"faithfulness": 1.0}, metadata={"evaluationCost": "cheap"}))
    de.append(case("bad2", {"faithfulness": 1.0}, metadata={"evaluationCost": -1}))
    de.append(case("bad3", {"faithfulness": 1.0}, metadata={"evaluationCost": True}))
    write(root, "deepeval", de, day=3, config={"generator": "deepeval"})
    with Store.open(root) as s:
        yield s


def test_totals_and_means_from_each_tools_usage(store: Store) -> None:
    pf, ins, de = run_costs(store, ["promptfoo", "inspect", "deepeval"])
    latency = pf.figure("latency_ms")
    assert latency.n == len(PROMPTFOO)
    assert latency.total == sum(r["latencyMs"] for r in PROMPTFOO)
    assert pf.figure("total_tokens").total == sum(r["tokenUsage"]["total"] for r in PROMPTFOO)
    assert pf.figure("prompt_tokens").mean == pytest.approx(
        sum(r["tokenUsage"]["prompt"] for r in PROMPTFOO) / len(PROMPTFOO)
    )
    assert pf.figure("cost").total == 0.0  # promptfoo's local provider reports cost 0
    usage = [u for s in INSPECT for u in s["model_usage"].values()]
    assert ins.figure("prompt_tokens").total == sum(u["input_tokens"] for u in usage)
    assert ins.figure("completion_tokens").total == sum(u["output_tokens"] for u in usage)
    assert ins.figure("total_tokens").total == sum(u["total_tokens"] for u in usage)
    judge = de.figure("judge_cost")
    assert judge.n == len(DEEPEVAL) and judge.unreadable == 3  # never read as 0
    assert judge.total == pytest.approx(math.fsum(t["evaluationCost"] for t in DEEPEVAL))
    assert de.figure("latency_ms") is None and de.figure("cost") is None
    json.dumps([r.to_json() for r in (pf, ins, de)], allow_nan=False)


def test_deltas_between_two_runs(store: Store) -> None:
    pf, ins = run_costs(store, ["promptfoo", "inspect"])
    by_field = {d.field: d for d in cost_deltas(pf, ins)}
    mean_pf = sum(r["latencyMs"] for r in PROMPTFOO) / len(PROMPTFOO)
    mean_in = sum(s["total_time"] * 1000 for s in INSPECT) / len(INSPECT)
    lat = by_field["latency_ms"]
    assert (lat.mean_a, lat.mean_b) == (pytest.approx(mean_pf), pytest.approx(mean_in))
    assert lat.delta == pytest.approx(mean_in - mean_pf)
    assert lat.ratio == pytest.approx(mean_in / mean_pf)
    cost = by_field["cost"]
    assert cost.mean_a == 0.0 and cost.mean_b is None and cost.ratio is None


def test_totals_from_prompt_and_completion_when_no_total() -> None:
    got = case_figures(None, {"usage": {"input_tokens": 120, "output_tokens": 30}})
    assert (got["prompt_tokens"], got["completion_tokens"], got["total_tokens"]) == (120, 30, 150)
    assert case_figures(None, {})["cost"] is None


def test_huge_or_odd_values_are_unreadable_not_summed() -> None:
    """Two 1e308 costs would overflow a sum to inf (and --json refuses NaN/inf)."""
    for bad in (1e308, float("nan"), -3, "12", [1]):
        assert case_figures(None, {"cost": bad})["cost"] is not None
        assert not isinstance(case_figures(None, {"cost": bad})["cost"], float)
    assert case_figures(1e300, {})["latency_ms"] is not None
    assert not isinstance(case_figures(1e300, {})["latency_ms"], float)


def test_no_infinite_ratio() -> None:
    from ragtui.core.costs import Figure, RunCosts

    a = RunCosts("a", 1, (Figure("cost", 1, 1e-300, 1e-300),))
    b = RunCosts("b", 1, (Figure("cost", 1, 1e14, 1e14),))
    (d,) = cost_deltas(a, b)
    assert d.ratio is None and d.delta == pytest.approx(1e14)


def test_diagnosis_costs_are_over_the_paired_cases(tmp_path) -> None:
    """Every paired case costs 1,000 ms and $0.01 in both runs; B also has a case A lacks
    (20,000 ms, $1), and one of B's paired cases carries no cost: quality is compared on the
    4 paired cases, so latency is 1,000 → 1,000 ms, and B's cost is over 3 of them."""
    from ragtui.core.diagnosis import diagnose
    from ragtui.format import diagnosis_summary_lines
    from tests.core.diagnosis_builder import case

    def run(n: int) -> list:
        return [
            case(
                f"k{i}",
                {"faithfulness": 1.0},
                answer=f"answer {i}",
                latency_ms=1000,
                metadata={"cost_usd": 0.01},
            )
            for i in range(n)
        ]

    b = run(4)
    b[3] = case("k3", {"faithfulness": 1.0}, answer="answer 3", latency_ms=1000)
    b.append(case("extra", {"faithfulness": 1.0}, latency_ms=20000, metadata={"cost_usd": 1.0}))
    write(tmp_path, "A", run(4), day=1, config={"generator": "a"})
    write(tmp_path, "B", b, day=2, config={"generator": "b"})
    with Store.open(tmp_path) as s:
        d = diagnose(s, "A", "B")
    costs = {c.field: (c.mean_a, c.mean_b, c.n_a, c.n_b) for c in d.costs}
    assert costs == {"latency_ms": (1000.0, 1000.0, 4, 4), "cost": (0.01, 0.01, 4, 3)}
    lines = diagnosis_summary_lines(d)
    at = lines.index("cost and latency (A → B, over the 4 paired cases)")
    assert lines[at + 1 : at + 3] == [
        "  latency: mean 1,000 ms → 1,000 ms (×1.00)",
        "  cost: mean 0.01 → 0.01 (×1.00) · over 4 → 3 of 4 cases",
    ]
