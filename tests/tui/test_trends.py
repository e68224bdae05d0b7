"""The Trends screen: a plot per metric, CI, rerun spread and worst-10% figures per config."""

from __future__ import annotations

import json
import math

import pytest
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

from ragtui.core.runfile import SUFFIX
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.screens.trends import TrendsScreen
from tests.tui.conftest import wait_ready, widget_text


def run_values(path, metric: str) -> list[float]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [s[metric]["value"] for s in (json.loads(x)["scores"] for x in lines) if metric in s]


async def test_trends_plots_each_metric_per_config(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrendsScreen)
        assert screen.query_one(PlotextPlot).is_mounted
        title = str(screen.query_one("#title").render())
        assert "Trends" in title and "answer_relevance" in title and "(1/3" in title
        table = screen.query_one("#trend-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[0].split()[1] for r in rows] == ["baseline", "strict-prompt", "strict-prompt"]
        assert [r[1] for r in rows] == ["3", "2", "1"]
        # latest baseline run, its rerun spread and its worst 10%, from the files with json
        means = []
        for run_id in ("baseline-1120", "baseline-1121", "baseline-1122"):
            values = run_values(history / f"{run_id}{SUFFIX}", "answer_relevance")
            means.append(sum(values) / len(values))
        assert rows[0][2] == f"{100 * means[-1]:.1f}"
        assert rows[0][4] == f"{100 * (max(means) - min(means)):.1f} pts"
        worst = sorted(values)[: math.ceil(len(values) / 10)]
        assert rows[0][5] == f"{100 * sum(worst) / len(worst):.1f}"
        assert rows[2][4] == "—"  # one run: no spread

        await pilot.press("m")
        await wait_ready(app, pilot)
        assert "context_recall" in str(screen.query_one("#title").render())
        table = screen.query_one("#trend-table", DataTable)
        assert str(table.get_row_at(0)[6]) == "9"  # 3 runs x 3 errored cases
        await pilot.press("M", "M")
        await wait_ready(app, pilot)
        assert "faithfulness" in str(screen.query_one("#title").render())
        plot = str(screen.query_one(PlotextPlot).render())
        assert "faithfulness (points)" in plot and "11-20" in plot
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_a_metric_that_always_errored_shows_dashes_not_a_crash(tmp_path, make_app) -> None:
    from dataclasses import replace

    from ragtui.core.model import Run
    from ragtui.core.runfile import write_run_file
    from tests.tui.conftest import JUDGE, history_cases

    cases = [
        replace(c, errors={**c.errors, "broken": "judge timed out"})
        for c in history_cases(5, 0.8, 1)
    ]
    run = Run(
        id="r1", name="r1", created_at="2026-11-30T00:00:00Z", config_key="cfg-r", judge=JUDGE
    )
    write_run_file(tmp_path / "runs" / f"r1{SUFFIX}", run, cases)
    app = make_app(tmp_path / "runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await wait_ready(app, pilot)
        screen = app.screen
        assert screen.metric == "answer_relevance"
        await pilot.press("m")  # "broken" sorts next
        await wait_ready(app, pilot)
        assert screen.metric == "broken"
        row = [str(c) for c in screen.query_one("#trend-table", DataTable).get_row_at(0)]
        assert row[2] == "—" and row[6] == "5"  # no mean; five errors counted


async def test_a_summary_only_run_is_a_point_at_its_stated_mean(tmp_path, make_app) -> None:
    from tests.tui.history_extras import write_extras

    folder = write_extras(tmp_path / "runs")
    app = make_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t", "M")  # answer_relevance, back round to faithfulness
        await wait_ready(app, pilot)
        screen = app.screen
        assert screen.metric == "faithfulness"
        table = screen.query_one("#trend-table", DataTable)
        rows = {
            str(table.get_row_at(i)[0]).split(" ", 1)[1]: table.get_row_at(i)
            for i in range(table.row_count)
        }
        summary = [str(c) for c in rows["summary"]]
        assert summary[1] == "1" and summary[2] == "62.5 (stated)"
        assert summary[3] == "—" and summary[5] == "—"  # no cases: no CI, no worst 10%


async def test_c_plots_quality_against_latency_and_x_switches_to_cost(tmp_path, make_app) -> None:
    from ragtui.tui.widgets.trend_plot import CostPlot
    from tests.tui.history_extras import file_cases, write_extras

    folder = write_extras(tmp_path / "runs")

    def per_case(run_id: str, pick) -> float:  # type: ignore[no-untyped-def]
        cases = file_cases(folder, run_id)
        return sum(pick(c) for c in cases) / len(cases)

    def faith(run_id: str) -> float:
        return per_case(run_id, lambda c: c["scores"]["faithfulness"]["value"])

    app = make_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t", "M", "c")  # faithfulness against latency
        await wait_ready(app, pilot)
        screen = app.screen
        assert screen.view == "cost" and screen.query_one(CostPlot).display
        assert "against mean latency per case" in str(screen.query_one("#title").render())
        table = screen.query_one("#trend-table", DataTable)
        rows = {
            str(table.get_row_at(i)[0]).split(" ", 1)[1]: table.get_row_at(i)
            for i in range(table.row_count)
        }
        # priced-a and priced-b are reruns of one config: means of their per-run means
        quality = (faith("priced-a") + faith("priced-b")) / 2
        latency = sum(per_case(r, lambda c: c["latency_ms"]) for r in ("priced-a", "priced-b")) / 2
        cost = (
            sum(per_case(r, lambda c: c["metadata"]["cost"]) for r in ("priced-a", "priced-b")) / 2
        )
        priced = [str(c) for c in rows["priced-a"]]
        assert priced[1] == "2" and priced[2] == f"{100 * quality:.1f}"
        assert priced[3] == f"{latency:,.0f} ms" and priced[5] == f"{cost:.4g}"
        assert [str(c) for c in rows["summary"]][3] == "—"  # stated means, no cases, no cost
        plot = str(screen.query_one(CostPlot).render())
        assert "faithfulness (points) against mean latency per case (ms)" in plot
        assert "priced-a" in plot and "cheap" in plot
        await pilot.press("x")
        await wait_ready(app, pilot)
        assert "against mean tokens per case" in str(screen.query_one("#title").render())
        await pilot.press("x")
        await wait_ready(app, pilot)
        assert "against mean cost per case" in str(screen.query_one(CostPlot).render())
        await pilot.press("c")  # back to the trend
        await wait_ready(app, pilot)
        assert screen.view == "trend" and not screen.query_one(CostPlot).display


def test_a_label_is_drawn_only_where_it_covers_no_dot_and_no_label() -> None:
    """Worked by hand in a 40×15 plot: 32 columns and 10 rows inside plotext's frame, one
    unit of x per column and of y per row; each label starts one cell right of its dot."""
    from ragtui.tui.widgets.trend_plot import labels_that_fit

    points = [
        (2, 5, "alpha"),  # row 4, cells 3-7: beta's dot is at cell 5
        (5, 5, "beta"),  # cells 6-9, free
        (20, 5, "gamma"),  # cells 21-25, free
        (12, 5, "delta-long-name"),  # cells 13-27: gamma's dot and label are there
        (30, 1, "edge"),  # cells 31-34: past the frame (the last column is 31)
        (12, 8, "delta"),  # row 1, cells 13-17, free
    ]
    assert labels_that_fit(points, (0, 31), (0, 9), (40, 15)) == [
        False,
        True,
        True,
        False,
        False,
        True,
    ]
    assert labels_that_fit(points, (0, 31), (0, 9), (8, 4)) == [False] * 6  # no room at all


async def test_at_80_columns_no_two_labels_run_together(sample_copy, make_app) -> None:
    """At 80×24 the demo's cost plot drew names over one another ("●tostrict prstrict +
    top_k"). Each name drawn now sits whole right after its own dot, with a space after it;
    the table under the plot names every dot by colour."""
    from ragtui.format import printable
    from ragtui.tui.widgets.trend_plot import CostPlot
    from tests.tui.history_b import screen_lines

    app = make_app(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await wait_ready(app, pilot)
        await pilot.press("c")
        await wait_ready(app, pilot)
        plot = app.screen.query_one(CostPlot)
        assert plot.last_drawn is not None
        names = [printable(p.label) for p in plot.last_drawn[2]]
        region = plot.region
        lines = [x[region.x : region.right] for x in screen_lines(app)[region.y : region.bottom]]
        drawn = [(n, x) for x in lines for n in names if n in x]
        assert len(drawn) >= 3
        for name, line in drawn:
            at = line.index(name)
            assert line[at - 1] == "●", line  # its own dot, just before it
            assert line[at + len(name) : at + len(name) + 1] in ("", " ", "│"), line


async def test_a_new_run_marks_trends_stale_and_u_draws_it(history, make_app) -> None:
    """A run added while Trends was open never appeared (not even after m/M) until the screen
    was left and opened again. Now a line says the runs changed and `u` draws them anew."""
    from dataclasses import replace

    from ragtui.core.runfile import read_run_file, write_run_file
    from tests.tui.history_b import screen_text

    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrendsScreen)
        assert "update" not in screen_text(app)
        whole = read_run_file(history / f"strict-1124{SUFFIX}")
        run = replace(whole.run, id="hybrid-1127", name="hybrid", config_key="cfg-hybrid")
        run = replace(run, created_at="2026-11-27T09:30:00Z")
        write_run_file(history / f"hybrid-1127{SUFFIX}", run, whole.cases)
        app.refresh_folder()  # what the live watch calls (off in tests)
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "the runs changed on disk: u updates the figures" in text
        assert "u update" in text
        await pilot.press("u")
        await wait_ready(app, pilot)
        table = screen.query_one("#trend-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[0].split()[1] for r in rows][-1] == "hybrid"
        values = run_values(history / f"hybrid-1127{SUFFIX}", "answer_relevance")
        assert rows[-1][2] == f"{100 * sum(values) / len(values):.1f}"
        assert "changed on disk" not in screen_text(app)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_the_cost_column_is_whole_at_narrow_widths(sample_copy, make_app, size) -> None:
    """At 100 columns the quality-against-cost table ran past the screen and its cost per
    case was cut at the edge to "0.0000" for every config: a real zero to the eye. Headers
    shorten and config names give way, never a figure."""
    from decimal import Decimal

    from tests.tui.history_b import screen_lines

    lines = (sample_copy / f"topk5-2026-11-09{SUFFIX}").read_text(encoding="utf-8")
    costs = [json.loads(x)["metadata"]["cost_usd"] for x in lines.splitlines()[1:]]
    expected = format(Decimal(f"{sum(costs) / len(costs):.4g}"), "f")  # 0.00003485
    app = make_app(sample_copy)
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t", "c")
        await wait_ready(app, pilot)
        shown = screen_lines(app)
        row = next(x for x in shown if "● top_k 5" in x)
        assert row.rstrip().endswith(f" {expected}"), row
        table = app.screen.query_one("#trend-table", DataTable)
        for i in range(min(table.row_count, 5)):  # the rows on screen: every figure whole
            cells = [str(c) for c in table.get_row_at(i)]
            line = next(x for x in shown if cells[0].rstrip("…") in x)
            assert all(c in line for c in cells[1:]), (cells, line)


@pytest.mark.parametrize("size", [(100, 32), (80, 24)])
async def test_the_first_frame_of_quality_against_cost_shows_whole_figures(
    sample_copy, make_app, size
) -> None:
    """The first `c` on a fresh start showed '1,168 m' and a cost of '0.00' (the columns at
    their headers' widths until the table measured its cells, and at times it stayed so until
    `x` or a resize). The frame drawn with the rows already shows every figure whole."""
    from tests.tui.history_b import screen_lines

    app = make_app(sample_copy)
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await wait_ready(app, pilot)
        screen = app.screen
        table = screen.query_one("#trend-table", DataTable)
        frames: list[str] = []
        draw = screen._draw

        def drawn(*args):  # type: ignore[no-untyped-def]
            draw(*args)
            frames.append(widget_text(table))  # before the table goes idle

        screen._draw = drawn
        await pilot.press("c")
        await wait_ready(app, pilot)
        assert frames, "the cost view was not drawn"
        first = frames[-1]
        for i in range(min(table.row_count, 5)):
            cells = [str(c) for c in table.get_row_at(i)]
            line = next(x for x in first.splitlines() if cells[0].rstrip("…") in x)
            assert all(c in line for c in cells[1:]), (cells, line)
        assert any("1,168 ms" in x for x in screen_lines(app))


async def test_the_cost_column_has_one_format(sample_copy, make_app) -> None:
    """ "0.0000356" stood among 8-decimal costs: one number of decimals a column."""
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t", "c")
        await wait_ready(app, pilot)
        table = app.screen.query_one("#trend-table", DataTable)
        costs = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        decimals = {len(c.partition(".")[2]) for c in costs if c != "—"}
        assert len(decimals) == 1, costs
        assert "0.00003560" in costs, costs
