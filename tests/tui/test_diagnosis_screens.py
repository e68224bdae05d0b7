"""The diagnosis on Compare and Case (issue 12), on the hand-made history of history_diag.py:
every expected figure below is worked out by hand in that module's docstring."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.style import Style
from textual.widgets import Static
from textual_fastdatatable import DataTable as FastTable

from ragtui.format import GLOSSARY
from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.widgets.chunks_view import ChunkBlock, ChunksView
from ragtui.tui.widgets.metric_table import COLUMNS, MetricTable
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import screen_text
from tests.tui.history_diag import A, B, write_history


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return write_history(tmp_path / "runs")


async def open_compare(app: RagtuiApp, pilot) -> CompareScreen:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    app.open_compare(A, B)
    await wait_ready(app, pilot)
    assert isinstance(app.screen, CompareScreen)
    return app.screen


async def choose_metric(screen: CompareScreen, app: RagtuiApp, pilot, metric: str) -> None:  # type: ignore[no-untyped-def]
    screen.query_one(MetricTable).select_metric(metric)
    await wait_ready(app, pilot)
    assert screen.metric == metric


def case_rows(screen: CompareScreen) -> dict[str, list[str]]:
    table = screen.query_one("#case-table", FastTable)
    rows = [[str(v) for v in table.get_row_at(i)] for i in range(table.row_count)]
    return {r[0]: r for r in rows}


def styled_text(widget, want: Style) -> list[str]:  # type: ignore[no-untyped-def]
    """The runs of text a widget renders with every attribute of `want` (e.g. underline)."""
    from textual.geometry import Region

    out: list[str] = []
    size = widget.outer_size  # the border too: `size` is the content's
    for strip in widget.render_lines(Region(0, 0, size.width, size.height)):
        run = ""
        for seg in strip:
            style = seg.style or Style()
            hit = all(
                getattr(style, attr) == value
                for attr in ("underline", "strike")
                if (value := getattr(want, attr)) is not None
            )
            if hit:
                run += seg.text
            elif run:
                out.append(run)
                run = ""
        if run:
            out.append(run)
    return [" ".join(r.split()) for r in out if r.strip()]


async def test_compare_shows_stage_lines_retrieval_and_claim_counts(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        await choose_metric(screen, app, pilot, "faithfulness")
        text = widget_text(screen.query_one("#compare-diagnosis"))
        lines = [line.strip() for line in text.splitlines()]
        # the selected metric's line first, then retrieval, claims, classes, the other metrics
        assert lines[0] == "faithfulness -12.5 pts: 3 cases fell — 2 generation, 1 retrieval"
        assert (
            lines[1] == "retrieval: mean top-k overlap 93.8 pts · top chunk changed in 2 of 8 cases"
        )
        assert lines[2] == (
            "claims: 1 became unsupported (1 with the chunk gone) · 1 fixed · 1 new (1 unsupported)"
        )
        assert lines[3] == (
            "classes · faithfulness: 2 newly broken · 1 newly fixed · 1 flaky · 3 stable pass"
            " · 1 stable fail"
        )
        assert "context_recall -12.5 pts: 1 case fell — 1 retrieval" in lines
        assert "answer_relevance -9.4 pts: 1 case fell — 1 generation" in lines


async def test_case_list_has_a_class_column_and_f_cycles_the_classes(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        await choose_metric(screen, app, pilot, "faithfulness")
        rows = case_rows(screen)
        classes = {case: row[4] for case, row in rows.items()}
        assert classes == {
            "ret-01": "newly broken",
            "gen-02": "newly broken",
            "gen-03": "stable pass",
            "fix-04": "newly fixed",
            "flaky-05": "flaky",
            "move-06": "stable pass",
            "fail-07": "stable fail",
            "off-08": "stable pass",
        }
        # f walks the classes present, in a fixed order, then back to every case
        seen = []
        for _ in range(6):
            await pilot.press("f")
            await wait_ready(app, pilot)
            seen.append((screen.case_class, sorted(case_rows(screen))))
        assert seen == [
            ("newly broken", ["gen-02", "ret-01"]),
            ("newly fixed", ["fix-04"]),
            ("flaky", ["flaky-05"]),
            ("stable pass", ["gen-03", "move-06", "off-08"]),
            ("stable fail", ["fail-07"]),
            (None, sorted(classes)),
        ]
        await pilot.press("f")
        await wait_ready(app, pilot)
        assert "cases, worst first · faithfulness · newly broken · 2 of 8" in screen_text(app)
        assert "f class" in screen_text(app)  # in the footer
        await pilot.press("question_mark")
        await wait_ready(app, pilot)
        sections = [widget_text(w) for w in app.screen.query(".help-section")]
        assert any("Cycle the case-class filter" in s for s in sections)  # and in Help


async def test_enter_from_a_metric_row_lists_its_cases_then_opens_one(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        table = screen.query_one(MetricTable)
        assert app.focused is table
        await choose_metric(screen, app, pilot, "context_recall")
        await pilot.press("enter")  # on a metric row: its cases, and the focus moves there
        await wait_ready(app, pilot)
        cases = screen.query_one("#case-table", FastTable)
        assert app.focused is cases and screen.case_filter.metric == "context_recall"
        await pilot.press("enter")  # on the case list: the worst case of context_recall
        await wait_ready(app, pilot)
        case = app.screen
        assert isinstance(case, CaseScreen)
        assert (case.case_id, case.metric) == ("ret-01", "context_recall")
        assert case.comparison is screen.comparison  # Compare's own figures travel along


def cursor_painted(table) -> bool:  # type: ignore[no-untyped-def]
    """The table paints its cursor: some cell on the cursor's row has the cursor's colours."""
    from textual.geometry import Region

    cursor = table.get_component_rich_style("datatable--cursor")
    row = table.cursor_row + 1  # below the header
    strip = table.render_lines(Region(0, row, table.size.width, 1))[0]
    return any(seg.style and seg.style.bgcolor == cursor.bgcolor for seg in strip)


async def test_the_focused_table_shows_its_cursor(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot)
        metrics = screen.query_one(MetricTable)
        assert app.focused is metrics and cursor_painted(metrics)
        await pilot.press("tab")
        await pilot.pause()
        cases = screen.query_one("#case-table", FastTable)
        assert app.focused is cases and cursor_painted(cases)


async def test_each_verdict_column_is_explained_on_focus_and_hover(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(app, pilot)
        await choose_metric(screen, app, pilot, "faithfulness")
        table = screen.query_one(MetricTable)
        help_line = screen.query_one("#column-help", Static)
        seen = {}
        for i, column in enumerate(COLUMNS):
            table.move_cursor(column=i)
            await pilot.pause()
            seen[column] = str(help_line.content)
        for column in ("A", "B", "Δ pts", "p adj", "noise ±", "MDE", "verdict"):
            assert seen[column] == f"{column} · {GLOSSARY[column]}"
        # the CI's line names the method of the metric under the cursor
        method = screen.comparison.metric("faithfulness")
        from ragtui.format import method_name

        assert f"here: {method_name(method)}" in table.column_help("95% CI")
        # off the metric table, the line goes (its room goes to the lists)
        assert help_line.display
        await pilot.press("tab")
        await pilot.pause()
        assert not help_line.display
        # hovering a header shows the same sentence as a tooltip
        table.move_cursor(column=0)
        table.scroll_home(animate=False)
        await pilot.pause()
        before = COLUMNS.index("p adj")
        x = sum(c.get_render_width(table) for c in list(table.columns.values())[:before]) + 1
        await pilot.hover(MetricTable, offset=(x, 0))
        await pilot.pause()
        assert table.tooltip == table.column_help("p adj")


async def test_case_marks_chunks_diffs_answers_and_flipped_claims(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_ready(app, pilot)
        app.open_case(B, ["ret-01", "gen-03", "fix-04"], 0, other_run_id=A, metric="faithfulness")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseScreen)
        # B's chunks in B's order with their marks, then A's chunk that B dropped (C2 and C3
        # only shifted up as C1 left: kept, in their order, with the ranks that changed)
        blocks = [
            (b.chunk.id, b.marking.symbol, b.marking.note, b.ghost)
            for b in screen.query(ChunkBlock)
        ]
        assert blocks == [
            ("C2", "=", "A #2 → B #1", False),
            ("C3", "=", "A #3 → B #2", False),
            ("C4", "+", "added in B", False),
            ("C1", "-", "removed: only in A", True),
        ]
        # the word diff: A's removed words struck through, B's added words underlined
        assert styled_text(screen.query_one("#answer-a"), Style(strike=True)) == [
            "A manager",
            "issues",
            "as credit",
        ]
        assert styled_text(screen.query_one("#answer-b"), Style(underline=True)) == [
            "Support",
            "pays",
            "by card",
        ]
        text = widget_text(screen.query_one("#case-diagnosis"))
        flat = " ".join(text.split())
        assert "stage faithfulness: retrieval: retrieval miss (context recall fell)" in flat
        assert "class faithfulness: newly broken · baseline runs 100 100 · candidate 0" in flat
        assert "retrieval: 1 added · 1 removed · 0 moved · 2 kept · top-3 overlap 50 pts" in flat
        assert (
            "✗ became unsupported Late refunds need manager approval (SUPPORTED → UNSUPPORTED · "
            "its chunk C1 left B's retrieval)" in flat
        )
        scores = " ".join(widget_text(screen.query_one("#case-scores")).split())
        assert "▶ faithfulness 100 100 100 0 -100.0 newly broken retrieval" in scores

        await pilot.press("right_square_bracket")  # gen-03: a new unsupported claim
        await wait_ready(app, pilot)
        flat = " ".join(widget_text(screen.query_one("#case-diagnosis")).split())
        assert "+ new Invoices are free of charge (new in B, UNSUPPORTED)" in flat
        assert "generation: hallucination" in flat
        await pilot.press("right_square_bracket")  # fix-04: its claim became supported
        await wait_ready(app, pilot)
        flat = " ".join(widget_text(screen.query_one("#case-diagnosis")).split())
        assert "✓ fixed Exports run every night (UNSUPPORTED → SUPPORTED)" in flat
        assert "class faithfulness: newly fixed" in flat


async def test_compare_uses_breakpoint_classes(runs, make_app) -> None:
    for size, classes in (
        ((80, 24), {"-narrow", "-short"}),
        ((120, 40), {"-normal", "-tall"}),
        ((170, 50), {"-wide", "-tall"}),
    ):
        app = make_app(runs)
        async with app.run_test(size=size) as pilot:
            screen = await open_compare(app, pilot)
            have = {c for c in screen.classes if c.startswith("-")}
            assert classes <= have, size
            assert len(have & {"-narrow", "-normal", "-wide"}) == 1


async def test_a_failed_diagnosis_is_a_line_and_a_notification(tmp_path, make_app) -> None:
    """A and B share no case: the comparison says so, the diagnosis cannot run; neither ends
    the app. A case only B has opens with a line instead of a diff."""
    from ragtui.core.model import Case, DatasetInfo, Run, Score
    from ragtui.core.runfile import write_run_file

    folder = tmp_path / "runs"
    folder.mkdir()
    for run_id, cases in (("a-run", ["x1", "x2"]), ("b-run", ["y1", "y2"])):
        run = Run(run_id, run_id, "2026-12-01T10:00:00Z", dataset=DatasetInfo("d", "1"))
        rows = [Case(c, f"q {c}", "answer", scores={"faithfulness": Score(1.0)}) for c in cases]
        write_run_file(folder / f"{run_id}.ragtui.jsonl", run, rows)
    app = make_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("a-run", "b-run")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        line = widget_text(screen.query_one("#compare-diagnosis"))
        assert "diagnosis: runs a-run and b-run share no scored case" in " ".join(line.split())
        assert any(n.severity == "error" and "diagnosis" in n.message for n in app._notifications)
        app.open_case("b-run", ["y1"], 0, other_run_id="a-run")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseScreen)
        assert "not in A: nothing to diff" in screen_text(app)


async def test_a_case_opened_at_80x24_starts_at_its_question(tmp_path, make_app) -> None:
    """The first claim's chunk is lit on open, but the screen stays at the top: the question
    first (a cited chunk is scrolled to only when the user moves through the claims)."""
    from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, Run, Score
    from ragtui.core.runfile import write_run_file

    folder = tmp_path / "runs"
    folder.mkdir()
    long = " ".join(["The refund policy says a manager approves late refunds."] * 8)
    for run_id in ("a-run", "b-run"):
        case = Case(
            "long-01",
            "Who approves late refunds?",
            long,
            contexts=(Chunk("C1", "Managers approve late refunds.", "policy.md", 1, 0.9),),
            scores={"faithfulness": Score(1.0)},
            claims=(Claim("faithfulness", "A manager approves", "SUPPORTED", ("C1",)),),
        )
        run = Run(run_id, run_id, "2026-12-01T10:00:00Z", dataset=DatasetInfo("d", "1"))
        write_run_file(folder / f"{run_id}.ragtui.jsonl", run, [case])
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        app.open_case("b-run", ["long-01"], 0, other_run_id="a-run", metric="faithfulness")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseScreen)
        chunks = screen.query_one(ChunksView)
        assert chunks.cited == ("C1",)
        assert chunks.region.y >= 24  # the lit chunk is below the fold...
        assert screen.query_one("#case-body").scroll_y == 0  # ...and the screen stays put
        assert "Question   Who approves late refunds?" in screen_text(app)
