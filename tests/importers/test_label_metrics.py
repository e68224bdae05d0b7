"""Label columns (PASS/FAIL, yes/no/partial) in a question/answer/contexts table are metrics
whichever importer reads the file, never dropped unsaid."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.importers import detect, load_file

TABLE = """question,answer,contexts,verdict,grounded,faithfulness
Who approves refunds?,A manager.,"[""Refunds need manager approval.""]",PASS,yes,1
Which currencies?,EUR and USD.,"[""Invoices in EUR and USD.""]",FAIL,no,0.5
SSO?,Enterprise.,"[""SSO is Enterprise only.""]",pass,partial,
"""


@pytest.mark.parametrize("fmt", [None, "generic"])
def test_label_columns_are_metrics(tmp_path: Path, fmt: str | None) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(TABLE)
    assert detect(path).name == "ragas"  # its question/answer/contexts columns
    [run] = load_file(path, fmt)
    verdict = [c.scores["verdict"] for c in run.cases]
    assert [(s.value, s.label, s.raw) for s in verdict] == [
        (1.0, "PASS", "PASS"),
        (0.0, "FAIL", "FAIL"),
        (1.0, "PASS", "pass"),
    ]
    # yes / no / partial: 1, 0, .5 (mean .5, as --format generic reads them)
    assert [c.scores["grounded"].value for c in run.cases] == [1.0, 0.0, 0.5]
    assert [c.scores["faithfulness"].value for c in run.cases[:2]] == [1.0, 0.5]
    assert "faithfulness" in run.cases[2].errors


@pytest.mark.parametrize("fmt", [None, "generic"])
def test_a_label_column_with_other_words_is_said(tmp_path: Path, fmt: str | None) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(TABLE.replace(",pass,partial,", ",ERROR,partial,"))
    notices: list[str] = []
    [run] = load_file(path, fmt, notices=notices)
    assert not any("verdict" in c.scores for c in run.cases)
    assert run.cases[2].metadata["verdict"] == "ERROR"
    assert any("column 'verdict'" in n and "'ERROR'" in n for n in notices), notices
