"""Every real result file in shared/fixtures (public/, wild/) imports with the case counts and
per-metric means its README states, or is refused with one line naming the real reason.

The figures below are copied from shared/fixtures/wild/README.md ("S": what the file itself
states, "C": what its rows give) and from the files' own results blocks, not from ragtui.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.importers import ImportFormatError, load_file

SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
if not SHARED.is_dir():  # a worktree under /work/wt: shared/ is beside the worktrees
    SHARED = Path("/work/shared/fixtures")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared/fixtures not present")

# file: (runs, cases per run, {metric: (mean, n scored)}, {metric: {statistic: stated value}})
IMPORTS = {
    "wild/ragas/huytran_ragas_evaluation.csv": (
        1,
        49,
        {
            "context_recall": (0.6531, 49),
            "answer_correctness": (0.5644, 47),
            "faithfulness": (0.7527, 46),
            "answer_relevancy": (0.6388, 49),
        },
        {},
    ),
    "wild/inspect/2025-07-30T18-42-38+00-00_mmlu_ZYEnfbu3nstBuwzjiAGzuG.eval": (
        1,
        285,
        {"choice": (0.7825, 285)},
        {"choice": {"accuracy": 0.7825, "stderr": 0.0245}},
    ),
    "wild/inspect/2026-02-24T03-41-47+00-00_starsim-benchmark_bJiYS8Q7MELDd7HuTosWbY.eval": (
        1,
        23,
        {"starsim_scorer": (0.6522, 23)},
        {"starsim_scorer": {"mean": 0.6522, "sub_step_accuracy": 0.6522, "test_pass_rate": 0.7158}},
    ),
    "wild/inspect/2026-02-21T18-19-01+00-00_starsim-agent-benchmark_fvVCTH6QVCnf3YW6NgN8Rb.eval": (
        1,
        23,
        {"agent_scorer": (0.7826, 23)},
        {"agent_scorer": {"mean": 0.7826, "sub_step_accuracy": 0.7826, "test_pass_rate": 0.7579}},
    ),
    "wild/inspect/2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json": (
        1,
        1,
        {"model_graded_fact": (1.0, 1)},
        {"model_graded_fact": {"accuracy": 1.0, "stderr": 0.0}},
    ),
    # status "error": 27 samples of 51, each with an error and no scores
    "wild/inspect/2026-07-22T16-51-18-00-00_a2ui-v1-0-eval_nXpB6sZohVsmQgnyUD8nuj.eval": (
        1,
        27,
        {"a2ui_scorer": (None, 0), "measured_model_graded_qa": (None, 0)},
        {},
    ),
    # samples omitted: a summary-only run of what the header states
    "wild/inspect/2025-05-12T20-28-13-04-00_no-samples.json": (
        1,
        0,
        {},
        {"match": {"accuracy": 0.6667, "stderr": 0.3333}},
    ),
    "public/ragas_v0.2plus_elasticsearch_ragas_evaluation.csv": (
        1,
        4,
        {"context_precision": (0.375, 4), "faithfulness": (0.8333, 4), "context_recall": (0.5, 4)},
        {},
    ),
    "public/inspect_v0.3.43_model_graded_fact_input-task.eval": (
        1,
        1,
        {"model_graded_fact": (1.0, 1)},
        {"model_graded_fact": {"accuracy": 1.0}},
    ),
    "public/inspect_v0.3.95_match_popularity.json": (
        1,
        3,
        {"match": (0.6667, 3)},
        {"match": {"accuracy": 0.6667, "stderr": 0.3333}},
    ),
}
REFUSED = {
    # truncated mid-write: the parse error, with its place, comes first
    "wild/lm-eval/lm_eval_results.json": (
        "lm_eval_results.json:65958:20: invalid JSON (Expecting value); "
        "the file ends there: truncated? import a whole copy (one its tool finished)"
    ),
}


@needs_shared
@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_imports_with_the_files_own_figures(name: str) -> None:
    runs_expected, cases_expected, means, stated = IMPORTS[name]
    runs = load_file(SHARED / name)
    assert len(runs) == runs_expected
    run = runs[0]
    assert len(run.cases) == cases_expected
    for metric, (mean, n) in means.items():
        values = [c.scores[metric].value for c in run.cases if metric in c.scores]
        assert len(values) == n, metric
        if mean is not None:
            assert sum(values) / n == pytest.approx(mean, abs=5e-5), metric
        # what was not scored is counted as an error, never dropped
        assert sum(metric in c.errors for c in run.cases) == cases_expected - n, metric
    figures = {(f.metric, f.statistic): f.value for f in run.run.stated}
    for metric, by_stat in stated.items():
        for statistic, value in by_stat.items():
            assert figures[(metric, statistic)] == pytest.approx(value, abs=5e-5)


@needs_shared
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_the_real_reason(name: str) -> None:
    with pytest.raises(ImportFormatError) as info:
        load_file(SHARED / name)
    message = str(info.value)
    assert message == f"{SHARED / name.rsplit('/', 1)[0]}/{REFUSED[name]}"
    assert "\n" not in message


@needs_shared
def test_every_shared_fixture_is_covered() -> None:
    files = {
        str(p.relative_to(SHARED))
        for p in SHARED.rglob("*")
        if p.is_file() and p.name != "README.md"
    }
    assert files == set(IMPORTS) | set(REFUSED)


@needs_shared
def test_the_summary_only_inspect_log_is_listed_at_its_accuracy(tmp_path) -> None:
    """Its header states accuracy 0.6667 then stderr 0.3333; `ragtui runs` listed 33.3."""
    import shutil

    from click.testing import CliRunner

    from ragtui.cli import cli

    name = "wild/inspect/2025-05-12T20-28-13-04-00_no-samples.json"
    shutil.copy(SHARED / name, tmp_path)
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith("inspect-")]
    assert line.split()[-1] == "66.7"
