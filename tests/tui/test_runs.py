"""The Runs screen and a run's case list, driven through the real app."""

from __future__ import annotations

import json
from pathlib import Path

from ragtui.core.runfile import SUFFIX
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.widgets.run_table import RunTable
from tests.tui.conftest import METRICS, wait_ready


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


def cell(table: RunTable, run_id: str, column: str, *, group: bool = False) -> str:
    """What a run's row (or its group's line) shows in a column."""
    return table.text(run_id, column, group=group)


def case_means(folder: Path, run_ids: list[str]) -> dict[str, float]:
    """The per-metric mean over cases of each case's mean over `run_ids` (plain json)."""
    per_case: dict[tuple[str, str], list[float]] = {}
    for run_id in run_ids:
        lines = (folder / f"{run_id}{SUFFIX}").read_text(encoding="utf-8").splitlines()[1:]
        for line in lines:
            case = json.loads(line)
            for metric, score in case.get("scores", {}).items():
                per_case.setdefault((metric, case["case_id"]), []).append(score["value"])
    by_metric: dict[str, list[float]] = {}
    for (metric, _), values in per_case.items():
        by_metric.setdefault(metric, []).append(sum(values) / len(values))
    return {m: sum(v) / len(v) for m, v in by_metric.items()}


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


async def test_reruns_are_grouped_under_a_line_with_their_mean(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert table.shown_runs()[:3] == ["baseline-1120", "baseline-1121", "baseline-1122"]
        assert cell(table, "baseline-1120", "run", group=True) == "┌ baseline ×3"
        assert cell(table, "baseline-1120", "run") == "├ baseline"
        assert cell(table, "baseline-1121", "run") == "├ baseline"
        assert cell(table, "baseline-1122", "run") == "└ baseline"
        assert cell(table, "strict-rejudge", "run") == "─ strict-prompt"
        # issue 14: the group line shows the reruns' per-case mean, averaged (Compare's A);
        # each run keeps its own means
        reruns = ["baseline-1120", "baseline-1121", "baseline-1122"]
        group = case_means(history, reruns)
        own = file_means(history)
        for metric in METRICS:
            shown = cell(table, "baseline-1120", f"m:{metric}", group=True).split()[-1]
            assert shown == f"{100 * group[metric]:.1f}"
            for run_id in reruns:
                mine = cell(table, run_id, f"m:{metric}").split()[-1]
                assert mine == f"{100 * own[run_id][metric]:.1f}"
        assert cell(table, "baseline-1120", "kind", group=True) == "3 reruns"
        assert cell(table, "baseline-1120", "err", group=True) == "9"  # 3 runs x 3 errors
        # wide layout: judge column and an 8-bar sparkline of the config's history so far
        assert cell(table, "strict-rejudge", "judge") == "llama3.1:8b"
        spark = cell(table, "baseline-1122", "m:faithfulness").split()[0]
        assert len(spark) == 3 and set(spark) <= set("▁▂▃▄▅▆▇█")
        # the detail panel of the group line: how far the three baseline runs spread
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
        # rows: the baseline group line, its 3 runs, the strict group line, strict-1124
        await pilot.press(*["down"] * 5, "b")
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
        await pilot.click(RunTable, offset=(20, 3))  # header, group line, 1120, then 1121
        await pilot.pause()
        assert table.highlighted_run == "baseline-1121"
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


async def test_j_and_n_open_the_judge_screens_for_the_highlighted_run(history, make_app) -> None:
    from ragtui.tui.screens.noise import NoiseScreen
    from ragtui.tui.screens.rejudge import RejudgeRunScreen

    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("down", "down", "J")  # past the group line and baseline-1120
        await pilot.pause()
        assert isinstance(app.screen, RejudgeRunScreen) and app.screen.run_id == "baseline-1121"
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoiseScreen) and app.screen.run_id == "baseline-1121"


def test_sparkline_on_a_shared_scale() -> None:
    from ragtui.tui.widgets.sparkline import sparkline

    # scale 0..7: one block per unit, ▁ for the lowest, █ for the highest
    assert sparkline([0, 3, 7, 5.4], 0, 7) == "▁▄█▆"
    assert sparkline([-1, None, 9], 0, 7) == "▁ █"  # a gap; out of range is clipped
    assert sparkline([0.8, 0.8], 0.8, 0.8) == "▅▅"  # no spread: the middle, 0.5 x 7 = 3.5 -> 4


def test_lines_order_reruns_together_under_a_group_line() -> None:
    from ragtui.core.store import RunRow
    from ragtui.format import short_metric
    from ragtui.tui.widgets.run_table import build_lines

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
    lines = build_lines(runs, ["m"], {0: ({"m": 0.6}, 1)})
    assert [(r.run.id, r.is_group) for r in lines] == [
        ("a1", True),
        ("a1", False),
        ("a2", False),
        ("a3", False),
        ("b1", False),
    ]
    assert [r.glyph for r in lines] == ["┌", "├", "├", "└", "─"]
    assert lines[0].means == {"m": 0.6} and lines[1].means == {"m": 0.5}  # group vs its run
    assert lines[3].history["m"] == [0.5, None, 0.7] and lines[4].history["m"] == [0.9]
    assert lines[0].history["m"] == [0.5, None, 0.7]  # the group line: every rerun
    assert short_metric("context_precision") == "ctx prec"
    assert short_metric("answer_relevance") == "ans rel"
