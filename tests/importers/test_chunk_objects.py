"""Contexts given as chunk objects keep their text, id, source and retrieval score: a harness's
JSONL with question/answer/contexts is no RAGAS file (RAGAS writes texts only), and no chunk
ever becomes the repr of a dict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.model import Chunk
from ragtui.importers import ImportFormatError, detect, load_file

RECORDS = [
    {
        "id": "q1",
        "question": "Who approves refunds?",
        "answer": "A manager.",
        "contexts": [
            {
                "id": 0,
                "text": "Refunds need approval.",
                "metadata": {"source": "r.md"},
                "score": 0.9,
            },
            {
                "id": 7,
                "text": "Invoices in EUR.",
                "source": "inv.md",
                "metadata": "x",
                "score": 0.4,
            },
        ],
        "faithfulness": 1.0,
    },
    {
        "id": "q2",
        "question": "SSO?",
        "answer": "Enterprise.",
        "contexts": [{"page_content": "SSO is Enterprise only.", "metadata": {"source": "s.md"}}],
        "faithfulness": None,
    },
]
EXPECTED = {
    "q1": (
        Chunk(id="0", text="Refunds need approval.", source="r.md", rank=1, score=0.9),
        Chunk(id="7", text="Invoices in EUR.", source="inv.md", rank=2, score=0.4),
    ),
    "q2": (Chunk(id="c1", text="SSO is Enterprise only.", source="s.md", rank=1),),
}


def _jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "harness.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


def test_a_harness_jsonl_with_chunk_objects_is_a_generic_table(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    assert detect(path).name == "generic"
    [run] = load_file(path)
    assert {c.case_id: c.contexts for c in run.cases} == EXPECTED
    q2 = next(c for c in run.cases if c.case_id == "q2")
    assert "RAGAS" not in q2.errors["faithfulness"]


@pytest.mark.parametrize("fmt", ["ragas", "generic"])
def test_chunk_objects_keep_their_fields_whichever_importer(tmp_path: Path, fmt: str) -> None:
    # id 0 is an id (not a falsy one to replace), a source beside non-object metadata is kept
    [run] = load_file(_jsonl(tmp_path), fmt)
    assert {c.case_id: c.contexts for c in run.cases} == EXPECTED


def test_chunk_objects_in_a_csv_cell(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    cell = json.dumps(RECORDS[0]["contexts"]).replace('"', '""')
    path.write_text(f'id,question,answer,contexts,faithfulness\nq1,Who?,A manager.,"{cell}",1\n')
    [run] = load_file(path)
    assert run.cases[0].contexts == EXPECTED["q1"]


@pytest.mark.parametrize(
    ("chunk", "expected"),
    [
        ({"id": 1}, "item 1: expected a chunk with a 'text'"),
        ({"text": "t", "score": "high"}, "item 1: 'score': expected a number, found 'high'"),
    ],
)
def test_a_bad_chunk_object_is_named(tmp_path: Path, chunk: dict, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    good = {"question": "q1", "answer": "a", "contexts": ["text"], "faithfulness": 1}
    bad = {"question": "q2", "answer": "a", "contexts": [chunk], "faithfulness": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ImportFormatError, match="row 2") as caught:
        load_file(path)
    assert expected in str(caught.value) and "'contexts'" in str(caught.value)
