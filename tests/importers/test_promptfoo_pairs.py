"""promptfoo: every prompt x provider pair of results.prompts is its own run, even when two
pairs read alike (labels alike in their first 40 characters, or one provider id twice)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.model import stable_case_id
from ragtui.importers import load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "promptfoo"
V3 = DATA / "promptfoo_v3_refunds.json"
LONG = {
    "terse": "You are a careful support assistant for ACME. Variant A: answer briefly.",
    "strict": "You are a careful support assistant for ACME. Variant B: only the context.",
}


def _long_labels(data: dict) -> None:
    for item in [*data["results"]["prompts"], *(r["prompt"] for r in data["results"]["results"])]:
        item["label"] = LONG[item["label"]]


def _one_provider_id(data: dict) -> None:
    for prompt in data["results"]["prompts"]:
        prompt["provider"] = "openai:chat:gpt-4o-mini"
    for result in data["results"]["results"]:
        result["provider"] = {"id": "openai:chat:gpt-4o-mini"}


@pytest.mark.parametrize("change", [_long_labels, _one_provider_id])
def test_pairs_that_read_alike_stay_apart(tmp_path: Path, change) -> None:
    data = json.loads(V3.read_text())
    change(data)
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    run_files = load_file(path)
    pairs = data["results"]["prompts"]
    assert len(run_files) == len(pairs) == 4
    assert len({r.run.id for r in run_files}) == 4
    assert len({r.run.name for r in run_files}) == 4
    assert len({r.run.config_key for r in run_files}) == 4  # not reruns of one config
    by_pair = {r.run.config["pair"]: r for r in run_files}
    queries = [
        json.loads(V3.read_text())["results"]["results"][i]["vars"]["query"] for i in (0, 4, 8, 12)
    ]
    for index, pair in enumerate(pairs):
        run_file = by_pair[index]
        assert f"pair {index}" in run_file.run.name
        # each test once, under its own id (no positional '-2' ids for 'repeats')
        assert [c.case_id for c in run_file.cases] == [stable_case_id(q) for q in queries]
        # promptfoo's own sums and counts for this pair
        for metric, total in pair["metrics"]["namedScores"].items():
            values = [c.scores[metric].value for c in run_file.cases if metric in c.scores]
            ungraded = [c for c in run_file.cases if "no grade" in c.errors.get(metric, "")]
            assert len(values) + len(ungraded) == pair["metrics"]["namedScoresCount"][metric]
            assert sum(values) == pytest.approx(total)
