"""The Runs screen and a run's case list, driven through the real app."""

from __future__ import annotations

import json
from pathlib import Path

from textual_fastdatatable import DataTable as FastTable

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.widgets.run_table import RunTable
from tests.tui.conftest import JUDGE, history_cases, wait_ready


def file_means(folder: Path) -> dict[str, dict[str, float]]:
    """run id -> metric -> mean of the scored values, read with plain json (not ragtui)."""
    out: dict[str, dict[str, float]] = {}
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        lines = path.read_text(encoding="utf-8").splitlines()
        run_id = json.loads(lines[0])["id"]
        values: dict[str, list[float]] = {}
        for line in lines[1:]:
            for metric, score in json.loads(line).get("scores", {}).items():
                values.setdefault(metric, []).append(score["value"])
        out[run_id] = {m: sum(v) / len(v) for m, v in values.items()}
    return out


def cell(table: RunTable, run_id: str, column: str) -> str:
    return str(table.get_cell(run_id, column))


async def test_runs_screen_lists_every_sample_run_with_its_means(sample_copy, make_app) -> None:
    expected = file_means(sample_copy)
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one(RunTable)
        assert sorted(table.shown_runs()) == sorted(expected)
        for run_id, means in expected.items():
            for metric, mean in means.items():
                # the cell may start with a sparkline; the number is its last word
                assert cell(table, run_id, f"m:{metric}").split()[-1] == f"{100 * mean:.1f}"
        title = str(app.screen.query_one("#title").render())
        assert "ragtui · Runs" in title and "sample_runs" in title


async def test_reruns_are_grouped_with_a_count(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert table.shown_runs()[:3] == ["baseline-1120", "baseline-1121", "baseline-1122"]
        assert cell(table, "baseline-1120", "run").startswith("┌ baseline ×3")
        assert cell(table, "baseline-1121", "run").startswith("├ ")
        assert cell(table, "baseline-1122", "run").startswith("└ ")
        assert cell(table, "strict-rejudge", "run").startswith("─ ")
        # wide layout: judge column and an 8-bar sparkline of the config's history so far
        assert cell(table, "strict-rejudge", "judge") == "llama3.1:8b"
        spark = cell(table, "baseline-1122", "m:faithfulness").split()[0]
        assert len(spark) == 3 and set(spark) <= set("▁▂▃▄▅▆▇█")
        # the detail panel: how far the three baseline runs spread, from the files
        means = file_means(history)
        base = [
            means[r]["faithfulness"] for r in ("baseline-1120", "baseline-1121", "baseline-1122")
        ]
        detail = str(app.screen.query_one("#run-detail").render())
        assert "reruns of this config (3) differ by" in detail
        assert f"faithfulness {100 * (max(base) - min(base)):.1f}" in detail


async def test_mark_a_and_b_then_compare(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        await pilot.press("a")
        table = screen.query_one(RunTable)
        assert cell(table, "baseline-1120", "mark") == "A"
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        assert "mark B first" in [n.message for n in app._notifications][-1]
        await pilot.press("down", "down", "down", "b")
        assert cell(table, "strict-1124", "mark") == "B"
        assert "A baseline-1120" in str(screen.query_one("#status").render())
        await pilot.press("c")
        await pilot.pause()
        from ragtui.tui.screens.compare import CompareScreen

        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.a_run_id, app.screen.b_run_id) == ("baseline-1120", "strict-1124")


async def test_marking_a_run_b_moves_the_mark(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("a", "b")  # the same run: B replaces A on it
        assert app.screen.marks == {"baseline-1120": "B"}
        await pilot.press("c")
        await pilot.pause()
        assert "mark A first" in [n.message for n in app._notifications][-1]


async def test_filter_narrows_rows_and_escape_clears(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        await pilot.press("slash", *"strict")
        assert table.shown_runs() == ["strict-1124", "strict-1125", "strict-rejudge"]
        app.screen.query_one("#filter").value = "llama3.1"  # the judge column matches too
        await pilot.pause()
        assert table.shown_runs() == ["strict-rejudge"]
        await pilot.press("enter")  # leaves the filter box, keeps the filter
        assert table.has_focus and table.shown_runs() == ["strict-rejudge"]
        await pilot.press("escape")
        assert len(table.shown_runs()) == 6


async def test_click_highlights_a_row(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        await pilot.click(RunTable, offset=(20, 3))  # header is row 0: third run
        await pilot.pause()
        assert table.highlighted_run == "baseline-1122"
        assert isinstance(app.screen, RunsScreen)  # one click only highlights


async def test_compact_at_80x24_still_shows_every_mean(history, make_app) -> None:
    expected = file_means(history)
    app = make_app(history)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        assert screen.layout_name == "compact"
        table = screen.query_one(RunTable)
        assert table.virtual_size.width <= 80
        for metric, mean in expected["strict-1125"].items():
            assert cell(table, "strict-1125", f"m:{metric}") == f"{100 * mean:.1f}"


async def test_enter_opens_the_case_list_and_enter_a_case(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("down", "enter")
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


async def test_a_20000_case_run_opens_its_case_list(tmp_path, make_app) -> None:
    n = 20_100  # just past DEBOUNCE_FROM_ROWS: the filter waits for a pause in the typing
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
        await pilot.press("slash", *"sso-2000")  # sso-2000 .. sso-20098: ids with i % 6 == 2
        await pilot.pause(0.5)
        await wait_ready(app, pilot)
        expected = [
            f"sso-{i:02d}" for i in range(n) if i % 6 == 2 and f"{i:02d}".startswith("2000")
        ]
        assert screen.visible_case_ids() == expected
        assert screen.query_one("#cases", FastTable).row_count == len(expected)


async def test_j_and_n_open_the_judge_screens_for_the_highlighted_run(history, make_app) -> None:
    from ragtui.tui.screens.noise import NoiseScreen
    from ragtui.tui.screens.rejudge import RejudgeRunScreen

    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("down", "J")
        await pilot.pause()
        assert isinstance(app.screen, RejudgeRunScreen) and app.screen.run_id == "baseline-1121"
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoiseScreen) and app.screen.run_id == "baseline-1121"


async def test_double_click_opens_a_run_and_a_case(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.double_click(RunTable, offset=(20, 2))  # second run
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


def test_sparkline_on_a_shared_scale() -> None:
    from ragtui.tui.widgets.sparkline import sparkline

    # scale 0..7: one block per unit, ▁ for the lowest, █ for the highest
    assert sparkline([0, 3, 7, 5.4], 0, 7) == "▁▄█▆"
    assert sparkline([-1, None, 9], 0, 7) == "▁ █"  # a gap; out of range is clipped
    assert sparkline([0.8, 0.8], 0.8, 0.8) == "▅▅"  # no spread: the middle, 0.5 x 7 = 3.5 -> 4


def test_group_rows_orders_reruns_together_with_their_history() -> None:
    from ragtui.core.store import RunRow
    from ragtui.format import short_metric
    from ragtui.tui.widgets.run_table import group_rows

    def run(run_id: str, key: str, mean: float | None) -> RunRow:
        return RunRow(
            id=run_id,
            name=run_id,
            created_at="2026-11-20T10:00:00Z",
            kind="eval",
            config_key=key,
            config={},
            generator=None,
            judge=None,
            judge_provider=None,
            judge_prompt_hash=None,
            dataset=None,
            dataset_version=None,
            parent=None,
            n_cases=1,
            file=Path(f"{run_id}.ragtui.jsonl"),
            means={"m": mean},
        )

    runs = [run("a1", "A", 0.5), run("b1", "B", 0.9), run("a2", "A", None), run("a3", "A", 0.7)]
    rows = group_rows(runs, ["m"])
    assert [r.run.id for r in rows] == ["a1", "a2", "a3", "b1"]
    assert [r.glyph for r in rows] == ["┌", "├", "└", "─"]
    assert rows[2].history["m"] == [0.5, None, 0.7] and rows[3].history["m"] == [0.9]
    assert short_metric("context_precision") == "ctx prec"
    assert short_metric("answer_relevance") == "ans rel"


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
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert app.screen.query_one("#cases", FastTable).row_count == 0
        await pilot.press("enter", "s")  # nothing to open, nothing to sort by: no error
        await pilot.press("escape", "down", "enter")
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
