"""The Case screen's document (`y` / `o`) and the Compare screen's diagnosis lines against
the CLI, on hand-made run files: chunk marks from the one core retrieval diff (repeated ids
included), the chunks a claim cited that left or stayed named alike, and a metric's own fall
rule where A's reruns are identical on it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.diagnosis import diagnose, diagnose_case
from ragtui.core.model import Chunk
from ragtui.services import comparing
from ragtui.services.workspace import open_workspace
from ragtui.tui.case_data import case_document, load_case
from tests.core.diagnosis_builder import case, chunks, claim, write

X, Y = "Refunds take five days.", "SSO needs the Enterprise plan."


def _doc(folder: Path, case_id: str) -> str:
    with open_workspace(folder) as ws:
        c = comparing.compare(ws, "a", "b")
        data = load_case(ws.store, c.b, case_id, c.a, c)
        d = diagnose_case(ws.store, c.a, c.b, case_id)
        return case_document(data, d, markdown=False)


def _section(doc: str, title: str) -> list[str]:
    return doc.split(f"## {title}\n\n")[1].split("\n\n")[0].splitlines()


def test_repeated_chunk_ids_keep_their_own_marks(tmp_path: Path) -> None:
    # A retrieved the same chunk twice under one id; B once: the first is kept, the second left
    twice = (Chunk("d1", X, "doc.md", 1), Chunk("d1", X, "doc.md", 2))
    write(tmp_path, "a", [case("r5", {"faithfulness": 1}, contexts=twice)], day=1)
    write(tmp_path, "b", [case("r5", {"faithfulness": 1}, contexts=twice[:1])], day=2,
          config={"generator": "b"})  # fmt: skip
    doc = _doc(tmp_path, "r5")
    assert _section(doc, "Chunks of A") == [
        "1. = d1 #1 doc.md: Refunds take five days.",
        "2. - d1 #2 doc.md: Refunds take five days.",
    ]
    assert _section(doc, "Chunks of B") == ["1. = d1 #1 doc.md: Refunds take five days."]
    cli_text = CliRunner().invoke(cli, ["diagnose", "a", "b", str(tmp_path), "--case", "r5"])
    marks = [line.split()[0] for line in cli_text.stdout.splitlines() if " A#" in line]
    assert marks == ["=", "-"]  # the CLI's marks, the same


def test_a_claim_whose_chunks_partly_left_names_each(tmp_path: Path) -> None:
    both = chunks("d1", "d2")
    only_d2 = (both[1], *chunks("d3")[:1])
    cited = "Refunds take 5 days and SSO needs Enterprise"
    write(tmp_path, "a", [case("k5", {"faithfulness": 1}, contexts=both,
                                claims=[claim(cited, "SUPPORTED", "d1", "d2")])], day=1)  # fmt: skip
    write(tmp_path, "b", [case("k5", {"faithfulness": 0}, contexts=only_d2, answer="other",
                                claims=[claim(cited, "UNSUPPORTED")])], day=2,
          config={"generator": "b"})  # fmt: skip
    fate = "its chunks d1 left B's retrieval, d2 is still retrieved"
    doc = _doc(tmp_path, "k5")
    assert f"- claim became unsupported: {cited} (SUPPORTED → UNSUPPORTED · {fate})" in doc
    cli_text = CliRunner().invoke(cli, ["diagnose", "a", "b", str(tmp_path), "--case", "k5"])
    assert f"SUPPORTED → UNSUPPORTED; {fate}  {cited}" in cli_text.stdout


def test_compare_screen_says_a_metrics_own_fall_rule(tmp_path: Path) -> None:
    from ragtui.tui.widgets.metric_table import diagnosis_lines

    ctx = chunks("d-1")
    for r, day in ((0, 1), (1, 2)):
        a = [case(f"y{i}", {"context_recall": 1.0, "faithfulness": (1.0, 0.9)[r]}, contexts=ctx)
             for i in range(2)]  # fmt: skip
        write(tmp_path, f"a{r}", a, day=day, name="A")
    b = [case(f"y{i}", {"context_recall": 0.85, "faithfulness": 1.0}, contexts=ctx, answer="b")
         for i in range(2)]  # fmt: skip
    write(tmp_path, "b", b, day=3, config={"generator": "b"})
    with open_workspace(tmp_path) as ws:
        d = diagnose(ws.store, "a0", "b")
    shown = diagnosis_lines(d, "context_recall").plain.splitlines()
    assert shown[1] == (
        "context_recall: a case fell when it dropped by at least 10 points (A's reruns are "
        "identical on it: no per-case noise to measure)"
    )
    assert "identical on it" not in diagnosis_lines(d, "faithfulness").plain
