"""Compare screen, driven through the real app on a real index of a fixed history."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.widgets import Input
from textual_fastdatatable import DataTable as FastTable

from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.widgets.metric_table import COLUMNS, MetricTable
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import WORST, screen_lines, screen_text, write_history


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ids = write_history(tmp_path / "runs")
    return tmp_path / "runs", ids


def file_scores(folder: Path, run_id: str, metric: str) -> dict[str, float]:
    """Scores straight from the run file (not via the index or the engine)."""
    lines = (folder / f"{run_id}.ragtui.jsonl").read_text().splitlines()[1:]
    out = {}
    for line in lines:
        case = json.loads(line)
        if metric in case["scores"]:
            out[case["case_id"]] = case["scores"][metric]["value"]
    return out


def table_rows(table) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The cells as text; the metric table's first cell without its "▶ " cursor mark."""
    rows = [[str(v) for v in table.get_row_at(i)] for i in range(table.row_count)]
    if isinstance(table, MetricTable):
        for row in rows:
            row[0] = row[0][2:]
    return rows


async def open_compare(app: RagtuiApp, pilot, a: str, b: str) -> CompareScreen:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    screen = CompareScreen(a, b)
    await app.push_screen(screen)
    await wait_ready(app, pilot)
    return screen


def expected_deltas(folder: Path, ids: dict[str, str], b: str, metric: str) -> dict[str, float]:
    """B minus the mean of the three baseline reruns, per case scored in both, by hand."""
    reruns = [file_scores(folder, f"baseline-r{i}", metric) for i in (1, 2, 3)]
    scores_b = file_scores(folder, ids[b], metric)
    return {
        c: scores_b[c] - sum(r[c] for r in reruns) / 3
        for c in scores_b
        if all(c in r for r in reruns)
    }


async def test_metric_table_verdicts_rule_line_and_warnings(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        text = screen_text(app)
        assert "ragtui · Compare  A baseline (3 reruns)  vs  B small-generator" in text
        table = screen.query_one(MetricTable)
        rows = {r[0]: r for r in table_rows(table)}
        assert set(rows) == {"faithfulness", "answer_relevance", "context_precision"}
        faith = rows["faithfulness"]
        d = expected_deltas(path, ids, "small-generator", "faithfulness")
        delta = 100 * sum(d.values()) / len(d)
        assert faith[1] == "regressed"
        assert faith[COLUMNS.index("Δ pts")] == f"{delta:+.1f}"
        # A is the mean of 3 reruns (not binary per case), and some cases did not move
        assert faith[COLUMNS.index("method")] == "score"
        # context_precision is untouched by construction: every delta is 0, and no change
        # observed is not evidence of no change: too few cases, never "no meaningful change"
        assert rows["context_precision"][1] == "too few cases"
        assert rows["context_precision"][COLUMNS.index("err A/B")] == "0/3"  # errors, A/B
        assert rows["context_precision"][COLUMNS.index("Δ pts")] == "0.0"
        assert re.search(
            r"reruns of A \(3 runs, \d+ cases\) differ by \d+\.\d points "
            r"\(rule of thumb: < 5, (within|above) it\)",
            text,
        )
        assert "seed 20261201" in text
        assert "! context_precision: errors A 0, B 3 · parse failures A 0, B 0: A and B" in text
        # the headline metric is the largest regression
        assert table.current == "faithfulness"
        assert "faithfulness: regressed" in text


async def test_the_why_column_takes_the_room_left_and_cuts_with_an_ellipsis(
    folder, make_app
) -> None:
    """At 160 columns the verdict table fits without scrolling sideways: each metric's reason
    is shown whole, or cut with an ellipsis where it is longer than the room the figures
    leave; the line under the table says the highlighted metric's reason in full."""
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        table = screen.query_one(MetricTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        shown = widget_text(table).splitlines()
        why_at = shown[0].index("why")
        reasons = {r[0]: r[-1] for r in table_rows(table)}
        cut = 0
        for line in shown[1:4]:
            metric = line[2:].split()[0]
            cell = line[why_at:].rstrip()
            full = reasons[metric]
            assert cell == full or (cell.endswith("…") and full.startswith(cell[:-1])), cell
            cut += cell != full
        assert cut >= 1  # this history's reasons are longer than the room at 160 columns
        assert f"faithfulness: regressed — {reasons['faithfulness']}" in screen_text(app)


async def test_judge_prompt_warning(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["strict-prompt"])
        text = screen_text(app)
        assert "! judge prompt differs between A and B (faith-label-v1 → faith-label-v2)" in text
        rows = {r[0]: r for r in table_rows(screen.query_one(MetricTable))}
        assert rows["faithfulness"][1] == "improved"


async def test_histogram_and_cases_worst_first(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        d = expected_deltas(path, ids, "small-generator", "faithfulness")
        worse = sum(v < -1e-12 for v in d.values())
        better = sum(v > 1e-12 for v in d.values())
        same = len(d) - worse - better
        assert f"{worse} worse · {same} same · {better} better" in screen_text(app)
        cases = screen.query_one("#case-table", FastTable)
        rows = table_rows(cases)
        assert len(rows) == len(d)
        shown = [float(r[3]) for r in rows]
        assert shown == sorted(shown)  # worst first
        assert shown[0] == pytest.approx(100 * min(d.values()), abs=0.05)
        assert [r[0] for r in rows] == screen.visible_ids
        assert WORST in [r[0] for r in rows if float(r[3]) == -100.0]
        assert rows[0][5].startswith("Can invoices") or rows[0][5].startswith("Who approves")


async def test_filters_metric_regressions_and_search(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        assert screen.case_filter.metric == "faithfulness"
        await pilot.press("r")
        await wait_ready(app, pilot)
        d = expected_deltas(path, ids, "small-generator", "faithfulness")
        rows = table_rows(screen.query_one("#case-table", FastTable))
        assert len(rows) == sum(v < -1e-12 for v in d.values()) > 0
        assert all(float(r[3]) < 0 for r in rows)
        assert "regressions only" in screen_text(app)

        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"refund")
        await wait_ready(app, pilot)
        rows = table_rows(screen.query_one("#case-table", FastTable))
        want = [c for c, v in d.items() if v < -1e-12 and c.startswith("refund")]
        assert sorted(r[0] for r in rows) == sorted(want)
        assert "filter “refund”" in screen_text(app)
        await pilot.press("escape")  # leaves the filter box, drops the text, stays on Compare
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        assert screen.case_filter.text == ""

        # m cycles the metric: the histogram and the case list follow
        order = screen.query_one(MetricTable).metric_names
        await pilot.press("m")
        await wait_ready(app, pilot)
        nxt = order[(order.index("faithfulness") + 1) % len(order)]
        assert screen.case_filter.metric == nxt
        assert f"Δ {nxt} per case" in screen_text(app)
        d2 = expected_deltas(path, ids, "small-generator", nxt)
        rows = table_rows(screen.query_one("#case-table", FastTable))
        assert len(rows) == sum(v < -1e-12 for v in d2.values())  # still regressions only


async def test_enter_opens_case_with_visible_list_and_esc_returns(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        table = screen.query_one("#case-table", FastTable)
        table.focus()
        await pilot.press("down")
        await pilot.press("enter")
        await wait_ready(app, pilot)
        case = app.screen
        assert isinstance(case, CaseScreen)
        assert case.run_id == ids["small-generator"] and case.other_run_id == ids["baseline"]
        assert case.case_ids == screen.visible_ids and case.index == 1
        assert case.metric == "faithfulness"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_unknown_run_is_one_line_error_not_a_crash(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(app, pilot, "no-such-run", ids["baseline"])
        assert "no run 'no-such-run'" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


async def test_readable_at_80x24(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        lines = screen_text(app).splitlines()
        assert len(lines) == 24
        text = "\n".join(lines)
        for word in ("regressed", "too few cases", "faithfulness: regressed", "refund-07"):
            assert word in text


async def test_acceptance_flow_on_sample_runs(sample_copy, make_app) -> None:
    """Runs → mark A (baseline) and B (the small generator) → c → verdicts → worst case →
    its question, chunks and an UNSUPPORTED claim → ] → back to Compare → back to Runs."""
    from ragtui.tui.screens.runs import RunsScreen
    from ragtui.tui.widgets.run_table import RunTable

    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        table = runs.query_one(RunTable)
        shown = table.shown_runs()
        all_runs = app.store.runs().to_pylist()
        a = next(r["run_id"] for r in all_runs if r["name"] == "baseline")
        b = next(r["run_id"] for r in all_runs if r["run_id"].startswith("small-gen"))
        for run_id, key in ((a, "a"), (b, "b")):
            assert run_id in shown
            table.move_cursor(row=table.row_of(run_id))
            await pilot.pause()
            await pilot.press(key)
        await pilot.press("c")
        await wait_ready(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert (compare.a_run_id, compare.b_run_id) == (a, b)
        verdicts = {r[0]: r[1] for r in table_rows(compare.query_one(MetricTable))}
        assert "regressed" in verdicts.values()
        assert set(verdicts.values()) <= {
            "improved",
            "regressed",
            "no meaningful change",
            "inconclusive",
            "no data",
            "too few cases",
            "improved (< margin)",
            "regressed (< margin)",
        }
        cases = compare.query_one("#case-table", FastTable)
        worst = compare.visible_ids[0]
        cases.focus()
        await pilot.press("enter")
        await wait_ready(app, pilot)
        case = app.screen
        assert isinstance(case, CaseScreen) and case.case_id == worst
        text = screen_text(app)
        question = app.store.case(b, worst).question
        assert f"Question   {question[:60]}" in text
        chunks = app.store.case(b, worst).contexts
        assert chunks and f"{chunks[0].id}  #{chunks[0].rank}" in text
        assert "✗ UNSUPPORTED" in text
        await pilot.press("right_square_bracket")
        await wait_ready(app, pilot)
        assert case.case_id == compare.visible_ids[1]
        assert f"ragtui · Case {compare.visible_ids[1]}" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is compare
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is runs
        from ragtui.tui.screens.help import HelpScreen
        from ragtui.tui.screens.trends import TrendsScreen

        await pilot.press("t")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, TrendsScreen)
        assert "ragtui · Trends  answer_relevance  (1/4" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "mark A" in screen_text(app)


async def test_mouse_click_on_a_metric_row_switches_the_metric(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        table = screen.query_one(MetricTable)
        row = table.metric_names.index("answer_relevance")
        await pilot.click(MetricTable, offset=(3, 1 + row))  # below the header row
        await wait_ready(app, pilot)
        assert screen.case_filter.metric == "answer_relevance"
        assert "Δ answer_relevance per case" in screen_text(app)
        assert "answer_relevance: regressed" in screen_text(app)


async def test_the_verdict_line_names_its_test_once(sample_copy, make_app) -> None:
    """Seen at 160 columns: "regressed — adjusted p <.001 < .05 (sign-flip by cluster (30
    clusters, 10,000 random)) · n 48 · sign-flip by cluster (30 clusters, 10,000 random)"."""
    app = make_app(sample_copy)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("strict-v2-2026-11-16", "bm25-2026-11-21")
        await wait_ready(app, pilot)
        lines = [x for x in screen_text(app).splitlines() if "faithfulness: regressed —" in x]
        assert len(lines) == 1, screen_text(app)
        assert lines[0].count("by cluster") == 1, lines[0]
        assert "· n 48 ·" in lines[0]


async def test_a_metric_whose_reruns_were_all_left_out_says_so(sample_copy, make_app) -> None:
    """The demo's baseline has 4 reruns, identical on context_recall (left out as cached
    copies): highlighting it said "no reruns of A or B with the same config" under a header
    reading "A baseline (4 reruns)"."""
    app = make_app(sample_copy)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("baseline-2026-11-02", "bm25-2026-11-21")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        order = screen.query_one(MetricTable).metric_names
        while screen.case_filter.metric != "context_recall":
            await pilot.press("m")
            await wait_ready(app, pilot)
            assert len(order) > 1
        text = " ".join(screen_text(app).split())
        assert "no reruns of A or B with the same config" not in text
        assert (
            "context_recall: noise floor unknown: no rerun of A or B is left on it (3 reruns "
            "identical to an earlier run there, left out as cached copies)"
        ) in text


async def test_two_reruns_of_one_config_say_so_on_screen_as_in_the_cli(
    sample_copy, make_app
) -> None:
    """Review: the CLI said "A and B are reruns of one config" and the TUI's rule line "no
    reruns of A or B with the same config"."""
    app = make_app(sample_copy)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("baseline-2026-11-02", "baseline-2026-11-05")
        await wait_ready(app, pilot)
        text = " ".join(screen_text(app).split())
        assert "A and B are reruns of one config: each side is its run alone" in text
        assert "no reruns of A or B with the same config" not in text


async def test_the_case_list_widens_its_questions_when_the_terminal_grows(folder, make_app) -> None:
    """From 100 to 200 columns the question column stayed as cut for 100 (about 15 cells
    wide, 90 blank beside it) until another key refilled the list."""
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_compare(app, pilot, ids["baseline"], ids["small-generator"])
        table = app.screen.query_one("#case-table", FastTable)
        narrow = max(len(str(table.get_row_at(i)[-1])) for i in range(table.row_count))
        await pilot.resize_terminal(200, 50)
        await wait_ready(app, pilot)
        table = app.screen.query_one("#case-table", FastTable)
        wide = max(len(str(table.get_row_at(i)[-1])) for i in range(table.row_count))
        assert wide > narrow + 30, (narrow, wide)


def config_means(folder: Path, config_key: str, metric: str) -> dict[str, float]:
    """Per case, the mean over every run file of a config (read with json, not ragtui)."""
    values: dict[str, list[float]] = {}
    for path in folder.glob("*.ragtui.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        head = json.loads(lines[0])
        if head["config_key"] != config_key or head.get("kind") == "rejudge":
            continue
        for line in lines[1:]:
            case = json.loads(line)
            if metric in case["scores"]:
                values.setdefault(case["case_id"], []).append(case["scores"][metric]["value"])
    return {c: sum(v) / len(v) for c, v in values.items()}


@pytest.mark.parametrize("width", [80, 100])
async def test_the_case_caption_keeps_its_count_at_narrow_widths(
    sample_copy, make_app, width
) -> None:
    """At 100 columns `r` cut the caption to "… · regressions only · 15 of" and `f` to
    "… · regressions only · flaky": how many cases the list holds was gone. The words
    shorten instead; the count stays whole at the end."""
    a, b = "baseline-2026-11-02", "strict-v2-2026-11-16"
    keys = {
        run: json.loads((sample_copy / f"{run}.ragtui.jsonl").read_text().split("\n", 1)[0])
        for run in (a, b)
    }
    mean_a = config_means(sample_copy, keys[a]["config_key"], "faithfulness")
    mean_b = config_means(sample_copy, keys[b]["config_key"], "faithfulness")
    total = len(mean_a.keys() & mean_b.keys())
    fell = sum(mean_b[c] - mean_a[c] < -1e-12 for c in mean_a.keys() & mean_b.keys())
    app = make_app(sample_copy)
    async with app.run_test(size=(width, 30)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(a, b)
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.metric == "faithfulness"

        def caption() -> str:  # as on screen, where the fitted line could be cut
            region = screen.query_one("#case-caption").region
            return screen_lines(app)[region.y][region.x : region.right].strip()

        assert f"· {total} of {total}" in caption()
        await pilot.press("r")
        await wait_ready(app, pilot)
        assert "regressions" in caption()
        assert caption().endswith(f"· {fell} of {total}"), caption()
        for _ in range(8):  # through the classes to flaky
            await pilot.press("f")
            await wait_ready(app, pilot)
            if "flaky" in caption():
                break
        shown = screen.query_one("#case-table", FastTable).row_count
        assert "flaky" in caption() and caption().endswith(f"· {shown} of {total}"), caption()


async def test_at_80_columns_the_ci_is_whole(sample_copy, make_app) -> None:
    """At 80x24 the 95% CI was cut at the edge ("[-2.6,") beside "no meaningful change": it
    comes before the error counts now, and shows whole."""
    from ragtui.format import interval

    app = make_app(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen("baseline-2026-11-02", "strict-v2-2026-11-16"))
        await wait_ready(app, pilot)
        c = app.screen.query_one("#metric-table").comparison
        lines = screen_lines(app)
        for r in c.metrics:
            row = next(x for x in lines if f" {r.metric} " in x)
            assert interval(r.ci_low, r.ci_high) in row, row


async def test_the_case_list_gives_each_column_one_number_format(sample_copy, make_app) -> None:
    """The case list mixed "87.5" and "75" in one column: one decimal throughout now."""
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen("baseline-2026-11-02", "strict-v2-2026-11-16"))
        await wait_ready(app, pilot)
        table = app.screen.query_one("#case-table", FastTable)
        for column in (1, 2, 3):  # A, B, Δ pts
            cells = [str(table.get_row_at(i)[column]).strip() for i in range(table.row_count)]
            assert all(re.fullmatch(r"[+-]?\d+\.\d", c) for c in cells), cells
