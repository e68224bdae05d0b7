"""A run's case list (cases.py), driven through the real app: paging, filter and sort in
workers, the Case screen from it, odd and empty runs."""

from __future__ import annotations

import json

from textual_fastdatatable import DataTable as FastTable

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.tui.screens import cases as cases_screen
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.widgets.run_table import RunTable
from tests.tui.conftest import JUDGE, history_cases, wait_ready
from tests.tui.history_b import screen_text


async def test_enter_opens_the_case_list_and_enter_a_case(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("down", "down", "enter")  # past the group line and baseline-1120
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseListScreen) and screen.run_id == "baseline-1121"
        grid = screen.query_one("#cases", FastTable)
        assert grid.row_count == 24
        lines = (history / f"baseline-1121{SUFFIX}").read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[1])
        columns = list(grid.backend.columns)
        row = grid.get_row_at(0)
        assert row[columns.index("case")] == first["case_id"]
        faith = first["scores"]["faithfulness"]["value"]
        assert row[columns.index("faithfulness")].strip() == f"{100 * faith:.1f}"
        errored = json.loads(lines[4])  # case 3 has a context_recall error
        assert grid.get_row_at(3)[columns.index("context_recall")] == "error"
        assert errored["errors"]["context_recall"]
        # untrusted text stays literal: markup characters kept, ESC made visible
        question = grid.get_row_at(5)[columns.index("question")]
        assert question.startswith("[bold red]x[/]") and "\\x1b[31m" in question
        assert "\x1b" not in question

        await pilot.press("slash", *"billing")
        await pilot.pause()
        grid = screen.query_one("#cases", FastTable)
        assert grid.row_count == 4
        assert screen.visible_case_ids() == ["billing-01", "billing-07", "billing-13", "billing-19"]
        await pilot.press("enter", "down", "enter")
        await pilot.pause()
        from ragtui.tui.screens.case import CaseScreen

        assert isinstance(app.screen, CaseScreen)
        assert app.screen.case_ids == screen.visible_case_ids()
        assert app.screen.index == 1


async def test_escape_goes_back_to_runs(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseListScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_a_long_run_opens_its_case_list_and_filters_after_a_pause(
    tmp_path, make_app, monkeypatch
) -> None:
    # past DEBOUNCE_FROM_ROWS the filter waits for a pause in the typing; the threshold is
    # lowered so that a tenth of its 20,000 cases takes that path (and the file is written and
    # indexed in a tenth of the time)
    monkeypatch.setattr(cases_screen, "DEBOUNCE_FROM_ROWS", 2_000)
    n = 2_100
    folder = tmp_path / "big"
    run = Run(
        id="big", name="big", created_at="2026-11-30T00:00:00Z", config_key="cfg-big", judge=JUDGE
    )
    write_run_file(folder / f"big{SUFFIX}", run, history_cases(n, 0.8, seed=7))
    app = make_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        screen = app.screen
        grid = screen.query_one("#cases", FastTable)
        assert grid.row_count == n
        assert grid.get_row_at(0)[1] == "refund-00"
        assert grid.get_row_at(n - 1)[0] == n
        await pilot.press("ctrl+end")  # jump to the last row: only visible rows are rendered
        await pilot.pause()
        assert grid.cursor_row == n - 1
        await pilot.press("slash", *"sso-20")  # sso-20, sso-200 .. sso-2099: i % 6 == 2
        await pilot.pause(0.5)
        await wait_ready(app, pilot)
        expected = [f"sso-{i:02d}" for i in range(n) if i % 6 == 2 and f"{i:02d}".startswith("20")]
        assert screen.visible_case_ids() == expected
        assert screen.query_one("#cases", FastTable).row_count == len(expected)


async def test_double_click_opens_a_run_and_a_case(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.double_click(RunTable, offset=(20, 3))  # header, group line, 1120, 1121
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseListScreen) and screen.run_id == "baseline-1121"
        grid = screen.query_one("#cases", FastTable)
        await pilot.click(grid, offset=(10, 3))  # one click: highlight the third case only
        await pilot.pause()
        assert grid.cursor_row == 2 and app.screen is screen
        await pilot.double_click(grid, offset=(10, 3))
        await pilot.pause()
        from ragtui.tui.screens.case import CaseScreen

        assert isinstance(app.screen, CaseScreen) and app.screen.index == 2


async def test_a_missing_run_is_an_error_line_not_a_crash(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CaseListScreen("no-such-run"))
        await wait_ready(app, pilot)
        status = str(app.screen.query_one("#status").render())
        assert "no run 'no-such-run'" in status
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_s_sorts_the_case_list_lowest_first(history, make_app) -> None:
    lines = (history / f"baseline-1120{SUFFIX}").read_text(encoding="utf-8").splitlines()[1:]
    cases = [json.loads(x) for x in lines]
    recall = {
        c["case_id"]: c["scores"]["context_recall"]["value"]
        for c in cases
        if "context_recall" in c["scores"]
    }
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        screen = app.screen
        await pilot.press("s", "s")  # answer_relevance, then context_recall
        await pilot.pause()
        assert screen.sort_metric == "context_recall"
        ids = screen.visible_case_ids()
        order = [c["case_id"] for c in cases]
        scored = sorted(recall, key=lambda cid: (recall[cid], order.index(cid)))
        assert ids[: len(scored)] == scored  # lowest first, ties in file order
        errored = [c["case_id"] for c in cases if "context_recall" in c.get("errors", {})]
        assert sorted(ids[len(scored) :]) == sorted(errored)  # the failed ones last
        assert "lowest context_recall first" in str(screen.query_one("#status").render())
        await pilot.press("enter")
        await pilot.pause()
        from ragtui.tui.screens.case import CaseScreen

        assert isinstance(app.screen, CaseScreen)
        assert app.screen.case_ids == ids and app.screen.metric == "context_recall"
        await pilot.press("escape")
        await pilot.press("s", "s")  # faithfulness, then back to the file's order
        await pilot.pause()
        assert screen.sort_metric is None
        assert screen.visible_case_ids() == order


async def test_runs_without_cases_or_scores_open_cleanly(tmp_path, make_app) -> None:
    from dataclasses import replace

    folder = tmp_path / "runs"
    empty = Run(id="empty", name="empty", created_at="2026-11-01T00:00:00Z", config_key="cfg-e")
    write_run_file(folder / f"empty{SUFFIX}", empty, [])
    bare = replace(empty, id="bare", name="bare", created_at="2026-11-02T00:00:00Z")
    unscored = [replace(c, scores={}, errors={}) for c in history_cases(3, 0.8, seed=2)]
    write_run_file(folder / f"bare{SUFFIX}", bare, unscored)
    app = make_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        assert app.screen.query_one(RunTable).shown_runs() == ["empty", "bare"]
        await pilot.press("enter")  # the group line of the two: its first run
        await wait_ready(app, pilot)
        assert app.screen.query_one("#cases", FastTable).row_count == 0
        await pilot.press("enter", "s")  # nothing to open, nothing to sort by: no error
        await pilot.press("escape", "down", "down", "enter")
        await wait_ready(app, pilot)
        grid = app.screen.query_one("#cases", FastTable)
        assert grid.row_count == 3 and list(grid.backend.columns) == [
            "#",
            "case",
            "question",
            "answer",
            "ms",
        ]
        await pilot.press("escape", "t")
        await wait_ready(app, pilot)
        assert "no metrics" in str(app.screen.query_one("#title").render())


async def test_odd_case_ids_show_printable_but_open_by_their_real_id(tmp_path, make_app) -> None:
    from dataclasses import replace

    raw = "[b]id\x1b[0m\nline2"
    cases = history_cases(3, 0.8, seed=4)
    cases[0] = replace(cases[0], case_id=raw)
    run = Run(
        id="odd", name="odd", created_at="2026-11-30T00:00:00Z", config_key="cfg-o", judge=JUDGE
    )
    write_run_file(tmp_path / "runs" / f"odd{SUFFIX}", run, cases)
    app = make_app(tmp_path / "runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        grid = app.screen.query_one("#cases", FastTable)
        assert grid.get_row_at(0)[1] == "[b]id\\x1b[0m line2"  # one line, ESC made visible
        assert app.screen.visible_case_ids()[0] == raw
        await pilot.press("enter")
        await wait_ready(app, pilot)
        from ragtui.tui.screens.case import CaseScreen

        assert isinstance(app.screen, CaseScreen) and app.screen.case_ids[0] == raw


async def test_a_big_run_shows_its_first_page_then_every_case(tmp_path, make_app) -> None:
    """Paged: the first cases (file order) at once, the whole run from a worker."""
    from ragtui.tui.screens.cases import FIRST_PAGE

    n = FIRST_PAGE + 250
    folder = tmp_path / "runs"
    run = Run(id="big", name="big", created_at="2026-11-30T00:00:00Z", config_key="c", judge=JUDGE)
    write_run_file(folder / f"big{SUFFIX}", run, history_cases(n, 0.8, seed=7))
    ids = [json.loads(x)["case_id"] for x in (folder / f"big{SUFFIX}").read_text().splitlines()[1:]]
    rest = CaseListScreen.load_rest
    held: list[tuple] = []
    CaseListScreen.load_rest = lambda self, store: held.append((self, store))  # type: ignore[method-assign]
    try:
        app = make_app(folder)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(app, pilot)
            await pilot.press("enter")
            await wait_ready(app, pilot)
            screen = app.screen
            grid = screen.query_one("#cases", FastTable)
            assert grid.row_count == FIRST_PAGE and not screen.complete
            assert screen.visible_case_ids() == ids[:FIRST_PAGE]
            status = str(screen.query_one("#status").render())
            assert f"first {FIRST_PAGE} of {n} cases · loading the rest" in status
            await pilot.press("slash", *"sso")  # typed before every case is in: kept
            await wait_ready(app, pilot)
            assert screen.needle == "sso"
            CaseListScreen.load_rest = rest  # type: ignore[method-assign]
            screen.load_rest(held[-1][1])
            await wait_ready(app, pilot)
            assert screen.complete
            assert screen.visible_case_ids() == [c for c in ids if "sso" in c]
            await pilot.press("escape")  # clears the filter
            await wait_ready(app, pilot)
            assert screen.visible_case_ids() == ids
            assert str(screen.query_one("#status").render()).startswith(f"{n} cases")
    finally:
        CaseListScreen.load_rest = rest  # type: ignore[method-assign]


async def test_filter_and_sort_run_off_the_ui_thread(history, make_app, monkeypatch) -> None:
    import threading

    from ragtui.tui.screens import cases

    seen: list[str] = []
    real_filter, real_sort = cases.filter_table, cases.sort_table

    def filter_spy(table, needle):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return real_filter(table, needle)

    def sort_spy(table, metric):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return real_sort(table, metric)

    monkeypatch.setattr(cases, "filter_table", filter_spy)
    monkeypatch.setattr(cases, "sort_table", sort_spy)
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        await pilot.press("s", "slash", "b")
        await wait_ready(app, pilot)
        assert app.screen.sort_metric == "answer_relevance" and app.screen.needle == "b"
        assert seen and threading.main_thread().name not in seen


async def test_e_exports_the_cases_shown_in_their_order(
    history, make_app, tmp_path, monkeypatch
) -> None:
    import csv

    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    lines = (history / f"baseline-1120{SUFFIX}").read_text(encoding="utf-8").splitlines()[1:]
    cases = {c["case_id"]: c for c in map(json.loads, lines)}
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter", "s", "s")  # baseline-1120's cases, lowest context_recall
        await wait_ready(app, pilot)
        await pilot.press("slash", *"backup", "enter")
        await wait_ready(app, pilot)
        order = app.screen.visible_case_ids()
        assert order and all("backup" in c for c in order)
        for fmt in ("csv", "json", "parquet"):
            await pilot.press("e")
            await wait_ready(app, pilot)
            app.screen.query_one("#export-path").value = f"cases.{fmt}"
            await pilot.press("enter")
            await wait_ready(app, pilot)
            assert isinstance(app.screen, CaseListScreen)
        rows = {
            "csv": list(csv.DictReader((tmp_path / "cases.csv").open(encoding="utf-8"))),
            "json": json.loads((tmp_path / "cases.json").read_text(encoding="utf-8")),
            "parquet": pq.read_table(tmp_path / "cases.parquet").to_pylist(),
        }
    for fmt, table in rows.items():
        assert [r["case_id"] for r in table] == order, fmt
        for r in table:
            case = cases[r["case_id"]]
            for metric, score in case["scores"].items():
                assert abs(float(r[metric]) - score["value"]) < 1e-9, (fmt, metric)
            for metric, message in case.get("errors", {}).items():
                assert r[f"{metric} error"] == message and r[metric] in (None, ""), fmt


async def test_y_copies_the_highlighted_case_row_as_markdown(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        await pilot.press("down", "down", "down", "down", "down", "y")  # case 5: hostile text
        text = app.clipboard
        lines = (history / f"baseline-1120{SUFFIX}").read_text(encoding="utf-8").splitlines()
        case = json.loads(lines[6])
        assert text.startswith("## case `backup-05` of baseline\n")
        # markup and escape sequences stay literal: escaped for Markdown, ESC made visible
        assert "**Question** \\[bold red\\]x\\[/\\] who approves \\\\x1b\\[31mred" in text
        assert "\x1b" not in text
        faith = case["scores"]["faithfulness"]["value"]
        assert f"| faithfulness | {100 * faith:.1f} |" in text


async def test_left_and_right_say_what_a_case_column_means(history, make_app) -> None:
    from ragtui.format import CASE_COLUMNS

    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        await pilot.press("right", "right")
        status = str(app.screen.query_one("#status").render())
        assert status.startswith("case: " + CASE_COLUMNS["case"][:30])


async def test_a_growing_run_says_so_and_u_lists_every_case(history, make_app, tmp_path) -> None:
    """A harness still writing a run: its Cases list stayed at the first 10 cases with no
    word that the file had grown. Now a line says the run changed and `u` lists them again."""
    from tests.tui.conftest import DATASET

    whole = tmp_path / "whole.jsonl"  # written elsewhere, then copied over in two goes
    run = Run(
        id="growing",
        name="growing",
        created_at="2026-11-27T10:00:00Z",
        config={"top_k": 7},
        config_key="cfg-growing",
        judge=JUDGE,
        dataset=DATASET,
    )
    write_run_file(whole, run, history_cases(24, 0.8, 9))
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    target = history / f"growing{SUFFIX}"
    target.write_text("".join(lines[:11]), encoding="utf-8")  # the header and 10 cases
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_cases("growing")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseListScreen)
        assert screen.query_one("#cases", FastTable).row_count == 10
        assert "update" not in screen_text(app)
        with target.open("a", encoding="utf-8") as f:
            f.write("".join(lines[11:]))
        app.refresh_folder()  # what the live watch calls (off in tests)
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "the run changed on disk: u updates the figures" in text
        assert "u update" in text  # in the footer now
        assert screen.query_one("#cases", FastTable).row_count == 10  # until the user asks
        await pilot.press("u")
        await wait_ready(app, pilot)
        expected = [json.loads(x)["case_id"] for x in lines[1:]]
        assert screen.visible_case_ids() == expected
        text = screen_text(app)
        assert f"{len(expected)} cases" in text and "changed on disk" not in text
        assert "u update" not in text
