"""Issue 14 point 5 on Compare, Case and Compare many: `y` copies Markdown through OSC 52, `e`
exports the table on screen (CSV, JSON, Parquet: read back and checked against the hand-worked
figures of history_diag.py), `o` pages the case through $PAGER (a script that keeps its input)."""

from __future__ import annotations

import base64
import csv
import json
import re
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, RadioButton, Static
from textual_fastdatatable import DataTable as FastTable

from ragtui.core.model import Case, Chunk, Claim, Run, Score
from ragtui.tui.app import RagtuiApp
from ragtui.tui.case_data import CaseData, case_document
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.widgets.export_dialog import ExportDialog
from ragtui.tui.widgets.metric_table import MetricTable
from tests.tui.conftest import wait_ready
from tests.tui.history_b import screen_text
from tests.tui.history_diag import A, B, write_history


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return write_history(tmp_path / "runs")


def record_output(app: RagtuiApp) -> list[str]:
    """Everything the app writes to its terminal from now on (the driver's output)."""
    written: list[str] = []
    driver = app._driver
    assert driver is not None
    real = driver.write

    def write(data: str) -> None:
        written.append(data)
        real(data)

    driver.write = write  # type: ignore[method-assign]
    return written


def osc52(written: list[str]) -> list[str]:
    """The texts sent to the clipboard with OSC 52 (ESC ] 52 ; c ; base64 BEL)."""
    found = re.findall(r"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", "".join(written))
    return [base64.b64decode(x).decode("utf-8") for x in found]


async def open_compare(app: RagtuiApp, pilot) -> CompareScreen:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    app.open_compare(A, B)
    await wait_ready(app, pilot)
    assert isinstance(app.screen, CompareScreen)
    return app.screen


# ---------------------------------------------------------------- copy


async def test_y_copies_the_case_or_the_comparison_through_osc52(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        written = record_output(app)
        await pilot.press("y")  # on the verdict table: the comparison
        await wait_ready(app, pilot)
        sent = osc52(written)
        assert len(sent) == 1 and sent[0] == app.clipboard
        report = sent[0]
        assert report.startswith("# ragtui report: baseline vs retriever-v2")
        # the verdict table's faithfulness row: A 68.8 (mean of 75 and 62.5), B 56.2, Δ -12.5
        assert re.search(r"\| faithfulness \| 8 \| 68\.8 \| 56\.2 \| 0/0 \| -12\.5 \|", report)

        screen.query_one(MetricTable).select_metric("faithfulness")
        await wait_ready(app, pilot)
        screen.query_one("#case-table", FastTable).focus()
        await pilot.press("y")  # on the case list: the highlighted case (the worst: gen-02)
        await wait_ready(app, pilot)
        case = osc52(written)[-1]
        assert case.startswith("# Case gen-02\n")
        assert "> Invoices can be issued in EUR." in case  # A's answer
        assert "> Invoices are only issued in dollars." in case  # B's answer
        assert "| faithfulness | 100 | 100 · 100 | 0 | -100.0 | newly broken | generation |" in case
        assert any("copied case gen-02 as Markdown" in str(n.message) for n in app._notifications)


async def test_y_on_case_copies_chunks_claims_and_scores(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_case(B, ["ret-01"], 0, other_run_id=A, metric="faithfulness")
        await wait_ready(app, pilot)
        written = record_output(app)
        await pilot.press("y")
        await pilot.pause()
        (text,) = osc52(written)
        assert "## Chunks of B" in text and "## Chunks of A" in text
        # B's chunks with their marks against A: C2 and C3 up one, C4 added
        assert "1. = C2 #1 faq.md 0.80: ret-01 FAQ entry." in text
        assert "3. + C4 #3 payments.md 0.60: Card payments settle in two days." in text
        assert "- UNSUPPORTED (faithfulness): Late refunds need manager approval → no chunk" in text
        assert "- claim became unsupported: Late refunds need manager approval" in text
        # base-r2 repeats base-r1's recall exactly (a cache hit): left out, so no reruns shown
        assert "| context\\_recall | 100 |  | 0 | -100.0 | newly broken | retrieval |" in text
        assert "| faithfulness | 100 | 100 · 100 | 0 | -100.0 | newly broken | retrieval |" in text


def test_case_markdown_keeps_hostile_text_inert() -> None:
    evil = "click [here](http://evil.example) \x1b]52;c;ZXZpbA==\x07 <script> \u202e"
    case = Case(
        case_id="x",
        question=evil,
        answer=evil,
        contexts=(Chunk("c1", evil, "a|b.md"),),
        scores={"faithfulness": Score(1.0, raw=evil, reply=evil)},
        claims=(Claim("faithfulness", evil, "SUPPORTED", ("c1",), evil),),
    )
    run = Run("r", "run", "2026-01-01T00:00:00Z")
    text = case_document(CaseData("x", run, case, None, None, []))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b" in text and "\\u202e" in text  # made visible
    assert "[here](http" not in text and "\\[here\\]" in text  # no live link
    assert "<script>" not in text and "a\\|b.md" in text  # no HTML, no broken table


# ---------------------------------------------------------------- export


async def export_to(app: RagtuiApp, pilot, path: Path, fmt: str | None = None) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("e")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, ExportDialog)
    box = dialog.query_one("#export-path", Input)
    if fmt is not None:  # choose the format with the radio buttons: the extension follows
        box.value = str(path.with_suffix(".csv"))
        button = next(b for b in dialog.query(RadioButton) if b.name == fmt)
        await pilot.click(button)
        await pilot.pause()
        assert box.value == str(path)
        box.focus()
    else:
        box.value = str(path)
    await pilot.press("enter")
    await wait_ready(app, pilot)
    assert not isinstance(app.screen, ExportDialog)


async def test_e_exports_the_verdict_table_and_the_case_list(runs, make_app, tmp_path) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        target = tmp_path / "verdicts.json"
        await export_to(app, pilot, target)
        rows = {r["metric"]: r for r in json.loads(target.read_text())}
        assert set(rows) == {"answer_relevance", "context_recall", "faithfulness"}
        faith = rows["faithfulness"]
        # by hand (history_diag): A = mean of the two reruns' means (6/8, 5/8); B 4.5/8
        assert faith["n"] == 8
        assert faith["mean_a"] == pytest.approx((6 / 8 + 5 / 8) / 2)
        assert faith["mean_b"] == pytest.approx(4.5 / 8)
        assert faith["delta"] == pytest.approx(-0.125)
        assert rows["answer_relevance"]["delta"] == pytest.approx(-0.75 / 8)

        # the case list as filtered on screen: faithfulness, newly broken only
        screen.query_one(MetricTable).select_metric("faithfulness")
        await wait_ready(app, pilot)
        await pilot.press("f")
        await wait_ready(app, pilot)
        screen.query_one("#case-table", FastTable).focus()
        target = tmp_path / "cases.csv"
        await export_to(app, pilot, target)
        with target.open(newline="", encoding="utf-8") as handle:
            got = list(csv.DictReader(handle))
        assert sorted((r["case_id"], r["class"], float(r["delta"])) for r in got) == [
            ("gen-02", "newly broken", -1.0),
            ("ret-01", "newly broken", -1.0),
        ]
        assert {r["question"] for r in got} == {
            "What does the policy say about gen-02?",
            "What does the policy say about ret-01?",
        }

        # the same name again: the dialog asks first; a second enter replaces the file
        target.write_text("old")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog) and "exists" in screen_text(app)
        assert target.read_text() == "old"
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert target.read_text().startswith('"case_id"')


async def test_export_to_a_missing_folder_is_a_message_not_a_crash(runs, make_app, tmp_path):  # type: ignore[no-untyped-def]
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(app, pilot)
        await export_to(app, pilot, tmp_path / "nowhere" / "x.csv")
        assert isinstance(app.screen, CompareScreen)
        assert any(
            "does not exist" in str(n.message) and n.severity == "error" for n in app._notifications
        )


async def test_a_folder_typed_as_the_export_path_is_not_offered_for_replacing(  # type: ignore[no-untyped-def]
    runs, make_app, tmp_path
):
    """A folder typed as the path got "exists: enter again replaces it", and the second enter
    an error: the dialog now says it is a folder and waits for a file name."""
    folder = tmp_path / "exports"
    folder.mkdir()
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(folder)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        said = str(app.screen.query_one("#export-status", Static).render())
        assert said == f"{folder} is a folder: add a file name to it"
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, ExportDialog)  # still waiting for a file name
        assert not [n for n in app._notifications if n.severity == "error"]
    assert folder.is_dir() and not list(folder.iterdir())


def unwritable_folder(tmp_path: Path) -> Path | None:
    """A folder this user cannot create a file in: a read-only one of our own (root writes
    there anyway), else /sys, which refuses root too; None when there is none."""
    own = tmp_path / "read-only"
    own.mkdir()
    own.chmod(0o500)
    for folder in (own, Path("/sys")):
        try:
            (folder / "probe").touch()
        except OSError:
            return folder
        (folder / "probe").unlink()
    return None


async def test_export_to_an_unwritable_folder_is_one_line_naming_the_file(  # type: ignore[no-untyped-def]
    runs, make_app, tmp_path
):
    """A folder the user cannot write to (the commonest export failure) said 'export failed:
    PermissionError(13, 'Permission denied')': no file named, a Python repr."""
    folder = unwritable_folder(tmp_path)
    if folder is None:
        pytest.skip("no folder this user cannot write to")
    target = folder / "verdicts.csv"
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(app, pilot)
        await export_to(app, pilot, target)
        assert isinstance(app.screen, CompareScreen)
        errors = [str(n.message) for n in app._notifications if n.severity == "error"]
    assert errors == [f"cannot write {target}: Permission denied"]
    assert not target.exists()


# ---------------------------------------------------------------- pager


@pytest.fixture
def pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PAGER is a script that copies the file it is given: what the user's pager would show."""
    kept = tmp_path / "paged.txt"
    script = tmp_path / "pager.py"
    script.write_text(
        f"import shutil, sys\nshutil.copyfile(sys.argv[1], {str(kept)!r})\n", encoding="utf-8"
    )
    monkeypatch.setenv("PAGER", f"{sys.executable} {script}")
    return kept


async def test_o_opens_the_case_in_the_pager(runs, make_app, pager) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_case(B, ["ret-01"], 0, other_run_id=A, metric="faithfulness")
        await wait_ready(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        text = pager.read_text(encoding="utf-8")
        assert text.startswith("# Case ret-01\n")  # plain text: no Markdown escapes
        assert "    What does the policy say about ret-01?" in text
        assert "    A manager approves late refunds and issues them as credit." in text
        assert "    Support approves late refunds and pays them by card." in text
        assert "- claim became unsupported: Late refunds need manager approval" in text
        assert isinstance(app.screen, CaseScreen)


async def test_a_pager_that_fails_is_a_message(runs, make_app, monkeypatch) -> None:
    monkeypatch.setenv("PAGER", "ragtui-no-such-pager-here")
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_case(B, ["ret-01"], 0, other_run_id=A, metric="faithfulness")
        await wait_ready(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, CaseScreen)
        assert any("not found: set PAGER" in str(n.message) for n in app._notifications)


async def test_enter_on_the_format_buttons_writes_the_highlighted_format(
    runs, make_app, tmp_path, monkeypatch
) -> None:
    """Keyboard only: e, tab to the formats, → to JSON, enter. The dialog says "enter writes
    the file"; on the buttons enter only chose the format and nothing was written."""
    monkeypatch.chdir(tmp_path)  # the default file name is in the current folder
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        await pilot.press("tab", "right")
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert not isinstance(app.screen, ExportDialog)
    written = list(tmp_path.glob("*.json"))
    assert len(written) == 1 and not list(tmp_path.glob("*.csv"))
    rows = json.loads(written[0].read_text())
    assert {r["metric"] for r in rows} == {"answer_relevance", "context_recall", "faithfulness"}
