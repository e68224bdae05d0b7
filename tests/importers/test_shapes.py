"""Real shapes that were refused or misread: dict-valued Inspect scorers declared in list form,
sample-less logs and aggregate files (summary-only runs), records inside an object, pandas
split JSON, tables of scores only, reason columns, and a truncated JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.runfile import SUFFIX, read_run_file, write_run_file
from ragtui.importers import ImportFormatError, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data"
DICT_EVAL = DATA / "inspect" / "problems_dict_scorer.eval"
NOSAMPLES_EVAL = DATA / "inspect" / "problems_dict_scorer_nosamples.eval"
# the fixture script's problems: (id, steps, steps solved)
PROBLEMS = [(3, 3), (4, 1), (2, 2), (5, 3), (3, 0), (4, 4)]


def test_dict_scorer_declared_in_list_form_has_no_phantom_failures() -> None:
    [run] = load_file(DICT_EVAL)
    assert len(run.cases) == 6
    assert all(not c.errors for c in run.cases)  # nothing missing under the bare scorer name
    metric = "problem_scorer.Problem Correctness"
    values = [c.scores[metric].value for c in run.cases]
    assert values == [1.0 if right == steps else 0.0 for steps, right in PROBLEMS]
    # the integer counts are not scores: kept as case metadata, raw
    assert all(set(c.scores) == {metric} for c in run.cases)
    assert [c.metadata["problem_scorer.Total Steps"] for c in run.cases] == [s for s, _ in PROBLEMS]
    assert [c.metadata["problem_scorer.Total Correct"] for c in run.cases] == [
        r for _, r in PROBLEMS
    ]


def test_the_logs_own_run_level_figures_are_kept_as_stated() -> None:
    [run] = load_file(DICT_EVAL)
    stated = {(f.metric, f.statistic): f for f in run.run.stated}
    # SciCode's headline: a ratio of sums, 13/21, not the mean of per-problem ratios
    ratio = stated[("problem_scorer", "sub_problem_correctness")]
    assert ratio.value == pytest.approx(13 / 21) and ratio.n == 6
    mean = stated[("problem_scorer.Problem Correctness", "mean")]
    assert mean.value == pytest.approx(3 / 6)
    # and they survive a native run file
    assert set(stated) == {
        ("problem_scorer", "sub_problem_correctness"),
        ("problem_scorer.Problem Correctness", "mean"),
    }


def test_list_form_declared_via_dict_form_too(tmp_path: Path) -> None:
    # the dict form of the same declaration ({"Problem Correctness": [mean()]}) reads alike
    import zipfile

    from ragtui.importers._inspect_log import _member

    with (
        DICT_EVAL.open("rb") as handle,
        zipfile.ZipFile(DICT_EVAL) as src,
        zipfile.ZipFile(tmp_path / "d.eval", "w") as dst,
    ):
        for info in src.infolist():
            data = _member(DICT_EVAL, src, handle, info)  # zstd members: Python 3.11 cannot
            if info.filename == "header.json":
                header = json.loads(data)
                header["eval"]["scorers"][0]["metrics"] = {
                    "Problem Correctness": [{"name": "inspect_ai/mean", "options": {}}]
                }
                data = json.dumps(header).encode()
            dst.writestr(info.filename, data)
    [run] = load_file(tmp_path / "d.eval")
    assert all(not c.errors for c in run.cases)
    assert all(set(c.scores) == {"problem_scorer.Problem Correctness"} for c in run.cases)


def test_inspect_log_without_samples_is_a_summary_only_run(tmp_path: Path) -> None:
    notices: list[str] = []
    [run] = load_file(NOSAMPLES_EVAL, notices=notices)
    assert run.cases == ()
    values = {(f.metric, f.statistic): f.value for f in run.run.stated}
    assert values[("problem_scorer", "sub_problem_correctness")] == pytest.approx(13 / 21)
    assert any("summary-only run" in n for n in notices)
    path = write_run_file(tmp_path / f"{run.run.id}{SUFFIX}", run.run, run.cases)
    back = read_run_file(path)
    assert back.cases == () and len(back.run.stated) == 2


def test_ragas_metric_score_csv_is_a_summary_only_run(tmp_path: Path) -> None:
    path = tmp_path / "ragas_scores.csv"
    path.write_text(
        "metric,score\nfaithfulness,0.8125\nanswer_relevancy,0.91\ndomain_specific_rubrics,4.2\n"
    )
    assert detect(path).name == "ragas"
    [run] = load_file(path)
    assert run.cases == ()
    stated = {f.metric: f for f in run.run.stated}
    assert stated["faithfulness"].value == 0.8125 and stated["faithfulness"].statistic == "mean"
    # RAGAS rubric means are on 1-5: (4.2 - 1) / 4
    assert stated["domain_specific_rubrics"].value == pytest.approx(0.8)
    assert stated["domain_specific_rubrics"].raw == 4.2


def test_metric_columns_only_get_row_numbers_and_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("faithfulness,answer_relevancy,context_recall\n0.5,0.9,1\n1,0.7,\n")
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert [c.case_id for c in run.cases] == ["row-1", "row-2"]
    assert run.cases[1].errors == {
        "context_recall": "RAGAS produced no score (NaN): the metric failed for this case"
    }
    assert any("numbered by row" in n for n in notices)
    other = tmp_path / "mine.csv"
    other.write_text("relevance,correct\n0.25,PASS\n0.75,FAIL\n")
    [run] = load_file(other)
    assert [(c.case_id, c.scores["relevance"].value) for c in run.cases] == [
        ("row-1", 0.25),
        ("row-2", 0.75),
    ]


def test_question_and_reason_columns_without_an_answer(tmp_path: Path) -> None:
    path = tmp_path / "trulens_export.csv"
    path.write_text(
        "Question,Groundedness,Groundedness_Reason,Answer Relevance\n"
        "Who approves refunds?,0.8,Two of three statements are supported,1.0\n"
        "Which currencies?,0.4,Only EUR is in the context,0.5\n"
    )
    [run] = load_file(path)
    first = run.cases[0]
    assert first.answer == ""
    assert first.scores["Groundedness"].reason == "Two of three statements are supported"
    assert set(first.scores) == {"Groundedness", "Answer Relevance"}


@pytest.mark.parametrize(
    "doc",
    [
        {"model": "llama3", "results": [{"question": "q1", "answer": "a1", "score": 0.5}]},
        {"columns": ["question", "answer", "score"], "data": [["q1", "a1", 0.5]]},
    ],
)
def test_records_in_an_object_and_pandas_split_json(tmp_path: Path, doc: dict) -> None:
    path = tmp_path / "out.json"
    path.write_text(json.dumps(doc))
    [run] = load_file(path)
    assert [(c.question, c.answer, c.scores["score"].value) for c in run.cases] == [
        ("q1", "a1", 0.5)
    ]


def test_mlflow_names_load_without_map(tmp_path: Path) -> None:
    path = tmp_path / "eval_results_table.json"
    path.write_text(
        json.dumps(
            {
                "columns": ["inputs", "outputs", "ground_truth", "exact_match/v1/score"],
                "data": [["q1", "a1", "a1", 1], ["q2", "a2", "b", 0]],
            }
        )
    )
    [run] = load_file(path)
    first = run.cases[0]
    assert (first.question, first.answer, first.reference) == ("q1", "a1", "a1")
    assert [c.scores["exact_match/v1"].value for c in run.cases] == [1.0, 0.0]


def test_a_truncated_json_file_says_so_first(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"results": {"winogrande": {"acc,none": 0.69}}, "samples": [{"doc": "x"')
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert str(info.value).startswith(f"{path}:1:")
    assert "invalid JSON" in str(info.value) and "truncated?" in str(info.value)


@pytest.mark.parametrize(
    ("columns", "fmt"), [("user_input,response", "ragas"), ("question,answer", "generic")]
)
def test_two_pandas_index_columns_are_not_a_metric(tmp_path: Path, columns: str, fmt: str) -> None:
    # to_csv() of a frame read back from to_csv(): `,Unnamed: 0,...`; the second index column
    # became a metric failing on every case ("--scale Unnamed: 0=LOW:HIGH")
    path = tmp_path / "twice.csv"
    path.write_text(
        f",Unnamed: 0,{columns},faithfulness\n0,0,q1,a1,0.9\n1,1,q2,a2,0.4\n2,2,q3,a3,\n"
    )
    assert detect(path).name == fmt
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert [c.question for c in run.cases] == ["q1", "q2", "q3"]
    assert all(set(c.scores) | set(c.errors) <= {"faithfulness"} for c in run.cases)
    assert [c.scores["faithfulness"].value for c in run.cases[:2]] == [0.9, 0.4]
    assert "faithfulness" in run.cases[2].errors
    assert all("Unnamed: 0" not in c.metadata for c in run.cases)
    assert not any("Unnamed" in n for n in notices), notices
