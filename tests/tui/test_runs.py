"""The Runs screen, driven through the real app: group lines, marks, filter, layouts,
parse failures, run states, cost, export and copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.run_table import RunTable
from tests.tui.conftest import (
    JUDGE,
    METRICS,
    history_cases,
    wait_ready,
    widget_text,
    write_history,
)


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
                # the cell may start with a sparkline and end with "!n" parse failures
                words = [w for w in cell(table, run_id, f"m:{metric}").split() if w[0] != "!"]
                assert words[-1] == f"{100 * mean:.1f}"
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
        # nothing matches: the table is empty and the status line, first, says why
        await pilot.press("slash", *"zzq")
        await pilot.pause()
        assert table.shown_runs() == []
        status = widget_text(app.screen.query_one("#status")).strip()
        assert status.startswith("no run matches 'zzq' · esc clears the filter · 6 runs in all")


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
        # no err column here: the failed grades stand beside the mean they are left out of
        lines = (history / f"strict-1125{SUFFIX}").read_text(encoding="utf-8").splitlines()
        failed: dict[str, int] = {}
        for line in lines[1:]:
            for metric in json.loads(line).get("errors", {}):
                failed[metric] = failed.get(metric, 0) + 1
        assert failed  # (the history has some)
        for metric, mean in expected["strict-1125"].items():
            mark = f" ✗{failed[metric]}" if metric in failed else ""
            assert cell(table, "strict-1125", f"m:{metric}") == f"{100 * mean:.1f}{mark}"


async def test_the_status_legend_keeps_whole_phrases_as_the_width_changes(
    history, make_app
) -> None:
    """At 80 columns the legend ended "· ←→" (its phrase cut): a phrase that does not fit is
    left out whole, and comes back when the terminal widens."""
    app = make_app(history)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        narrow = widget_text(app.screen.query_one("#status")).rstrip()
        assert narrow.endswith("means in points; !n parse failures"), narrow
        assert "←→" not in narrow and "…" not in narrow
        await pilot.resize_terminal(140, 30)
        await wait_ready(app, pilot)
        wide = widget_text(app.screen.query_one("#status")).rstrip()
        assert wide.endswith("· ←→ column help"), wide


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
    from ragtui.tui.widgets.runs_model import build_lines

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


# ---------------------------------------------------------------- parse failures, states, costs


async def test_parse_failures_running_and_summary_runs_are_marked(tmp_path, make_app) -> None:
    from ragtui.core.runwrite import RunFileAppender
    from tests.tui.history_extras import PARSE_FAILED, file_cases, write_extras

    folder = write_extras(tmp_path / "runs")
    faith = [c["scores"]["faithfulness"]["value"] for c in file_cases(folder, "unparsed")]
    live = Run(
        id="live",
        name="live",
        created_at="2026-11-30T00:00:00Z",
        config_key="cfg-live",
        judge=JUDGE,
    )
    with RunFileAppender(folder / f"live{SUFFIX}", live) as out:
        out.append(history_cases(1, 0.8, seed=3)[0])  # a batch still writing this file
        app = make_app(folder)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_ready(app, pilot)
            table = app.screen.query_one(RunTable)
            # the mean counts the unparsed replies as the 0 they scored, and says how many
            shown = cell(table, "unparsed", "m:faithfulness")
            assert shown.endswith(f"{100 * sum(faith) / len(faith):.1f} !{len(PARSE_FAILED)}")
            table.move_cursor(row=table.row_of("unparsed"))
            await pilot.pause()
            detail = str(app.screen.query_one("#run-detail").render())
            assert f"faithfulness {100 * sum(faith) / len(faith):.1f} (3 parse failures)" in detail
            assert cell(table, "live", "run") == "─ live (running)"
            assert cell(table, "live", "kind") == "running"
            # a summary-only run: its stated means, no case count
            assert cell(table, "summary", "run") == "─ summary (summary)"
            assert cell(table, "summary", "N") == "—"
            assert cell(table, "summary", "m:faithfulness").split()[-1] == "62.5"
            table.move_cursor(row=table.row_of("summary"))
            await pilot.pause()
            detail = str(app.screen.query_one("#run-detail").render())
            assert "stated faithfulness mean 62.5 (18 cases)" in " ".join(detail.split())
            await pilot.press("y")  # the details as Markdown: the stated figures too
            await pilot.pause()
            assert "Stated by the tool: faithfulness mean 62.5 (18 cases)" in app.clipboard


def history_with_a_batch_running(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The fixed history and a run "live" whose batch still holds its file (one case so far)."""
    from ragtui.core.runwrite import RunFileAppender

    folder = write_history(tmp_path / "runs")
    live = Run(id="live", name="live", created_at="2026-11-30T00:00:00Z", config_key="cfg-live")
    out = RunFileAppender(folder / f"live{SUFFIX}", live)
    out.append(history_cases(1, 0.8, seed=3)[0])
    return folder, out


async def test_a_batch_that_indexed_its_own_end_is_listed_finished(tmp_path, make_app) -> None:
    """A stopped batch closes its file and indexes it itself, at a moment of its own: the
    folder's re-scan after it then finds nothing new, and Runs must not keep the run listed as
    running (as it did when Runs had listed it just before)."""
    import asyncio

    folder, out = history_with_a_batch_running(tmp_path)
    app = make_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert cell(table, "live", "run") == "─ live (running)"
        out.close()  # the batch stops: its file is closed and indexed on the way out
        await asyncio.to_thread(app.workspace.store.index_file, folder / f"live{SUFFIX}")
        app.refresh_folder(relist=True)  # what a stopped batch's screen asks for
        await wait_ready(app, pilot)
        assert cell(table, "live", "run") == "─ live"
        assert cell(table, "live", "N") == "1"


async def test_an_older_listing_that_lands_last_is_not_shown(
    tmp_path, make_app, monkeypatch
) -> None:
    """Two listings in flight (a re-scan while Runs was still listing): the older one, read
    before the index changed, may finish after the newer one, and must not replace it."""
    import asyncio
    import time

    from ragtui.tui.screens import runs as runs_screen

    folder, out = history_with_a_batch_running(tmp_path)
    app = make_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        read, landed = asyncio.Event(), []
        real = runs_screen.load_model

        def slow_first(store):  # type: ignore[no-untyped-def]
            model = real(store)
            if not landed:  # the first listing is read now and lands a second later
                landed.append(model)
                app.call_from_thread(read.set)
                time.sleep(1.0)
                app.call_from_thread(landed.append, model)  # (queued just before it lands)
            return model

        monkeypatch.setattr(runs_screen, "load_model", slow_first)
        screen = app.screen
        screen.load_runs(app.workspace.store)
        await read.wait()
        out.close()
        await asyncio.to_thread(app.workspace.store.index_file, folder / f"live{SUFFIX}")
        screen.load_runs(app.workspace.store)
        await wait_ready(app, pilot)
        assert cell(screen.query_one(RunTable), "live", "run") == "─ live"
        while len(landed) < 2:  # until the older listing has landed too
            await asyncio.sleep(0.05)
        await pilot.pause()
        assert cell(screen.query_one(RunTable), "live", "run") == "─ live"


async def test_cost_and_latency_show_per_run_in_the_table(tmp_path, make_app) -> None:
    from tests.tui.history_extras import file_cases, write_extras

    folder = write_extras(tmp_path / "runs")
    app = make_app(folder)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert table.column_keys[-3:] == ["ms", "tokens", "cost"]
        for run_id in ("priced-a", "priced-b", "cheap"):
            cases = file_cases(folder, run_id)
            latency = sum(c["latency_ms"] for c in cases) / len(cases)
            tokens = sum(
                c["metadata"]["prompt_tokens"] + c["metadata"]["completion_tokens"] for c in cases
            ) / len(cases)
            cost = sum(c["metadata"]["cost"] for c in cases)
            assert cell(table, run_id, "ms") == f"{latency:,.0f}"
            assert cell(table, run_id, "tokens") == f"{tokens:,.1f}"
            assert cell(table, run_id, "cost") == f"{cost:.4g}"
        assert cell(table, "unparsed", "cost") == ""  # its cases carry no cost
        table.move_cursor(row=table.row_of("cheap"))
        await pilot.pause()
        detail = str(app.screen.query_one("#run-detail").render())
        cases = file_cases(folder, "cheap")
        cost = sum(c["metadata"]["cost"] for c in cases)
        assert f"cost total per run {cost:.4g}" in detail


async def test_a_cost_total_with_unreadable_cases_is_unknown_not_the_rest_s_sum(
    tmp_path, make_app
) -> None:
    """gen-b's 10 cases each cost 0.01, 5 of them written as the string "0.01" (unreadable):
    its total read 0.05, half of gen-a's, as if those cases cost nothing."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for run_id, day, strings in (("gen-a", 1, 0), ("gen-b", 2, 5)):
        lines = [
            {"ragtui_run": 1, "id": run_id, "name": run_id, "kind": "eval",
             "created_at": f"2026-12-0{day}T10:00:00Z", "config": {"r": run_id}}
        ]  # fmt: skip
        for i in range(10):
            cost = "0.01" if i < strings else 0.01
            lines.append(
                {"case_id": f"c{i}", "question": "q", "answer": "a", "latency_ms": 500,
                 "scores": {"faithfulness": {"value": 0.8}}, "metadata": {"cost": cost}}
            )  # fmt: skip
        text = "".join(json.dumps(x) + "\n" for x in lines)
        (folder / f"{run_id}{SUFFIX}").write_text(text, encoding="utf-8")
    app = make_app(folder)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert cell(table, "gen-a", "cost") == "0.1"
        assert cell(table, "gen-b", "cost") in ("", "—")
        table.move_cursor(row=table.row_of("gen-b"))
        await pilot.pause()
        detail = str(app.screen.query_one("#run-detail").render())
        assert "cost total unknown: 5 of 10 cases unreadable" in detail
        assert "latency mean per case 500" in detail  # every case carries its latency


@pytest.mark.parametrize("eager_bytes", [1 << 20, 0])
async def test_a_small_history_is_drawn_once_with_its_costs(
    tmp_path, make_app, monkeypatch, eager_bytes
) -> None:
    """Run files under EAGER_COST_BYTES in all get their latency, tokens and cost before the
    table is first drawn (it is drawn once, its columns do not shift); a bigger history is
    drawn first and gains them after."""
    from ragtui.tui.screens import runs as runs_screen
    from tests.tui.history_extras import write_extras

    monkeypatch.setattr(runs_screen, "EAGER_COST_BYTES", eager_bytes)
    folder = write_extras(tmp_path / "runs")
    app = make_app(folder)
    drawn: list[list[str]] = []  # the table's columns each time the runs are (re)listed
    async with app.run_test(size=(200, 40)) as pilot:
        screen = app.runs_screen
        table = screen.query_one(RunTable)
        screen.watch(screen, "model", lambda m: drawn.append(list(table.column_keys)), init=False)
        await wait_ready(app, pilot)
        assert table.column_keys[-3:] == ["ms", "tokens", "cost"]
    if eager_bytes:
        assert len(drawn) == 1 and drawn[0][-3:] == ["ms", "tokens", "cost"], drawn
    else:
        assert len(drawn) == 2 and "cost" not in drawn[0], drawn


async def test_costs_that_cannot_be_read_leave_the_runs_listed_and_say_why(
    tmp_path, make_app, monkeypatch
) -> None:
    from ragtui.tui.screens import runs as runs_screen
    from tests.tui.history_extras import write_extras

    def unreadable(*args: object) -> None:
        raise OSError("Input/output error")

    monkeypatch.setattr(runs_screen, "bounded_costs", unreadable)
    folder = write_extras(tmp_path / "runs")
    app = make_app(folder)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert {"priced-a", "priced-b", "cheap"} <= set(table.shown_runs())
        assert "cost" not in table.column_keys
        said = [n.message for n in app._notifications]
        assert said == ["cost and latency: Input/output error"], said


# ---------------------------------------------------------------- marks, keys, layout


async def test_several_candidates_open_the_multi_run_comparison(history, make_app) -> None:
    app = make_app(history)
    opened: list[tuple[str, list[str]]] = []
    app.open_compare_many = lambda base, candidates: opened.append((base, candidates))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        await pilot.press("a")  # on the baseline group line: its first run
        for run_id in ("strict-1124", "strict-rejudge"):
            table.move_cursor(row=table.row_of(run_id))
            await pilot.press("b")
        assert app.screen.marks == {
            "baseline-1120": "A",
            "strict-1124": "B",
            "strict-rejudge": "B",
        }
        status = str(app.screen.query_one("#status").render())
        assert "A baseline-1120" in status and "B strict-1124 +1 more" in status
        await pilot.press("c")
        assert opened == [("baseline-1120", ["strict-1124", "strict-rejudge"])]
        await pilot.press("b")  # b again on a candidate unmarks it: back to A vs B
        assert cell(table, "strict-rejudge", "mark") == ""
        await pilot.press("c")
        await pilot.pause()
        from ragtui.tui.screens.compare import CompareScreen

        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.a_run_id, app.screen.b_run_id) == ("baseline-1120", "strict-1124")


async def test_left_and_right_say_what_a_column_means(history, make_app) -> None:
    from ragtui.format import RUNS_COLUMNS

    app = make_app(history)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        status = app.screen.query_one("#status")
        await pilot.press("right", "right", "right")  # mark, date, run
        assert str(status.render()).startswith("run: " + RUNS_COLUMNS["run"][:40])
        n = table.column_keys.index("m:faithfulness")
        await pilot.press(*["right"] * (n - 2))
        assert str(status.render()).startswith("faithfulness: mean in points")
        header = table.ordered_columns[n].label
        assert any("reverse" in str(span.style) for span in header.spans)  # lit


async def test_breakpoints_fold_the_detail_panel_and_the_keys_line_fits_the_width(
    history, make_app
) -> None:
    app = make_app(history)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        assert screen.has_class("-narrow") and screen.has_class("-short")
        assert not screen.query_one("#run-detail").display
        keys = widget_text(screen.query_one(KeyBar))
        assert keys.startswith("⏎cases  amark A  bmark B")  # compact: 80 columns hold more keys
        await pilot.resize_terminal(160, 40)
        await wait_ready(app, pilot)
        assert screen.has_class("-wide") and screen.has_class("-tall")
        assert screen.query_one("#run-detail").display
        keys = widget_text(screen.query_one(KeyBar))
        assert keys.startswith(" ⏎ cases  a mark A  b mark B ")  # roomy again
        assert screen.layout_name == "wide"


async def test_a_long_history_shows_its_first_page_then_every_run(tmp_path, make_app) -> None:
    from ragtui.bench.synthetic import write_synthetic_history
    from ragtui.tui.widgets.runs_model import PAGE

    folder = tmp_path / "runs"
    write_synthetic_history(folder, runs=PAGE + 10, cases=2, metrics=2, texts=False)
    expected = file_means(folder)
    rest = RunTable.add_rest
    held: list[tuple] = []
    RunTable.add_rest = lambda self, *args: held.append((self, *args))  # type: ignore[method-assign]
    try:
        app = make_app(folder)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_ready(app, pilot)
            table = app.screen.query_one(RunTable)
            assert table.row_count == PAGE and not table.complete  # the first page only
            assert len(table.shown) == PAGE + 10 + 4  # every run and the 4 group lines
            RunTable.add_rest = rest  # type: ignore[method-assign]
            table, *args = held[-1]
            table.add_rest(*args)
            await wait_ready(app, pilot)
            assert table.complete and table.row_count == len(table.shown)
            assert sorted(table.shown_runs()) == sorted(expected)
            last = max(expected)
            mean = expected[last]["faithfulness"]
            assert cell(table, last, "m:faithfulness").split()[-1] == f"{100 * mean:.1f}"
    finally:
        RunTable.add_rest = rest  # type: ignore[method-assign]


# ---------------------------------------------------------------- export and copy


async def test_e_exports_the_runs_table_as_csv_json_and_parquet(
    history, make_app, tmp_path, monkeypatch
) -> None:
    import csv

    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    expected = file_means(history)
    group = case_means(history, ["baseline-1120", "baseline-1121", "baseline-1122"])
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        for fmt in ("csv", "json", "parquet"):
            await pilot.press("e")
            await wait_ready(app, pilot)
            app.screen.query_one("#export-path").value = f"out.{fmt}"
            await pilot.press("enter")
            await wait_ready(app, pilot)
            assert isinstance(app.screen, RunsScreen)
        rows = {
            "csv": list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8"))),
            "json": json.loads((tmp_path / "out.json").read_text(encoding="utf-8")),
            "parquet": pq.read_table(tmp_path / "out.parquet").to_pylist(),
        }
    for fmt, table in rows.items():
        runs = [r for r in table if r["line"] == "run"]
        assert sorted(r["run_id"] for r in runs) == sorted(expected), fmt
        for r in runs:
            for metric, mean in expected[r["run_id"]].items():
                assert abs(float(r[metric]) - mean) < 1e-9, (fmt, r["run_id"], metric)
        (base,) = [r for r in table if r["line"] == "group" and r["name"] == "baseline"]
        assert abs(float(base["faithfulness"]) - group["faithfulness"]) < 1e-9, fmt
        assert int(base["runs"]) == 3


async def test_y_copies_the_highlighted_run_as_markdown_through_osc_52(history, make_app) -> None:
    import base64

    expected = file_means(history)
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        written: list[str] = []
        write = app._driver.write
        app._driver.write = lambda data: (written.append(data), write(data))[1]  # type: ignore[method-assign]
        table = app.screen.query_one(RunTable)
        table.move_cursor(row=table.row_of("strict-1125"))
        await pilot.press("y")
        text = app.clipboard
        assert text.startswith("## run `strict-1125`: strict-prompt\n")
        for metric, mean in expected["strict-1125"].items():
            assert f"| {metric.replace('_', chr(92) + '_')} | {100 * mean:.1f} |" in text
        assert "| context\\_recall | " in text and "| 3 | 0 |" in text  # 3 errors
        osc = "\x1b]52;c;" + base64.b64encode(text.encode()).decode() + "\a"
        assert osc in written
        assert "copied run strict-1125 as Markdown" in list(app._notifications)[-1].message


async def test_a_run_file_too_big_to_read_gives_latency_from_the_index(
    tmp_path, make_app, monkeypatch
) -> None:
    """Tokens and cost are read from the run files within a byte budget; a bigger file
    shows its latency (the index has it) and says why the rest is missing."""
    from ragtui.core import costs
    from tests.tui.history_extras import file_cases, write_extras

    folder = write_extras(tmp_path / "runs")
    sizes = {p.stem.split(".")[0]: p.stat().st_size for p in folder.glob(f"*{SUFFIX}")}
    monkeypatch.setattr(costs, "READ_LIMIT", sizes["priced-a"] - 1)  # priced-a: too big
    monkeypatch.setattr(costs, "READ_BUDGET", 10**9)
    app = make_app(folder)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        cases = file_cases(folder, "priced-a")
        latency = sum(c["latency_ms"] for c in cases) / len(cases)
        assert cell(table, "priced-a", "ms") == f"{latency:,.0f}"
        assert cell(table, "priced-a", "tokens") == "" and cell(table, "priced-a", "cost") == ""
        assert cell(table, "cheap", "cost") != ""  # small enough: read
        table.move_cursor(row=table.row_of("priced-a"))
        await pilot.pause()
        detail = str(app.screen.query_one("#run-detail").render())
        assert "tokens and cost not read: a big run file (latency from the index)" in detail


async def test_at_80_columns_no_figure_is_cut_at_the_edge(sample_copy, make_app) -> None:
    """The demo at 80x24: even the compact layout was wider than the screen, so the last
    metric column was cut at the edge and 94.8 read as 94, 100.0 as 100. The run names give
    way now (cut with an ellipsis); every mean shows whole, as the files give it."""
    expected = file_means(sample_copy)
    app = make_app(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        shown = widget_text(table).splitlines()
        for run_id, means in expected.items():
            row = table.row_of(run_id)
            if row is None or row + 1 >= len(shown):
                continue  # a group's folded run, or below the fold
            line = shown[row + 1]  # after the header
            for mean in means.values():
                assert f"{100 * mean:.1f}" in line.split(), (run_id, line)
        assert any(line.rstrip().endswith("…") or "…" in line for line in shown)  # a long name


def test_a_group_line_is_the_a_a_comparison_shows(tmp_path: Path) -> None:
    """x2 is a cached copy of x1 (every score equal): Compare leaves it out of A, and the
    group line over x1, x2, x3 counted x1 twice (54.98 beside Compare's 61.96)."""
    from ragtui.core.compare import compare_runs
    from ragtui.core.store import Store
    from ragtui.tui.widgets.runs_model import load_model
    from tests.core.run_writer import RunWriter

    writer = RunWriter(tmp_path)
    ids = [f"c{i}" for i in range(6)]
    x1 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    x3 = [0.9, 0.8, 0.7, 0.6, 0.5, 1.0]
    base = {"top_k": 3}
    for run_id, values, seed in (("x1", x1, 1), ("x2", x1, 2), ("x3", x3, 3)):
        writer.write(
            run_id, {"m": dict(zip(ids, values, strict=True))}, config={**base, "seed": seed}
        )
    writer.write("y1", {"m": dict.fromkeys(ids, 0.5)}, config={"top_k": 5})
    by_hand = sum((a + b) / 2 for a, b in zip(x1, x3, strict=True)) / 6  # x2 left out
    with Store.open(tmp_path) as store:
        (group,) = [line for line in load_model(store).lines if line.is_group]
        shown_a = compare_runs(store, "x1", "y1").metric("m").mean_a
    assert group.means["m"] == pytest.approx(by_hand) and shown_a == pytest.approx(by_hand)
    assert group.n_cases == 6


async def test_one_run_is_said_in_the_singular_and_a_skipped_file_stays_said(
    tmp_path: Path, make_app
) -> None:
    """ "1 runs in 1 configs"; and a broken file was only named in a toast that fades."""
    from dataclasses import replace

    from ragtui.core.runfile import write_run_file
    from tests.tui.conftest import JUDGE, history_cases

    folder = tmp_path / "runs"
    run = Run(id="only", name="only", created_at="2026-11-30T00:00:00Z", judge=JUDGE)
    write_run_file(folder / f"only{SUFFIX}", replace(run), history_cases(3, 0.8, seed=1))
    (folder / f"broken{SUFFIX}").write_text('{"ragtui_run": 1, "id": 5}\n', encoding="utf-8")
    app = make_app(folder)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_ready(app, pilot)
        status = str(app.screen.query_one("#status").render())
        assert "1 run in 1 config" in status and "1 runs" not in status, status
        assert "1 file skipped" in status and "ragtui runs" in status, status


async def test_in_an_empty_folder_every_run_key_says_no_run_is_highlighted(
    tmp_path: Path, make_app
) -> None:
    """`e`, `n` and enter did nothing, silently, where `y` and `J` said so."""
    (tmp_path / "empty").mkdir()
    app = make_app(tmp_path / "empty")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(app, pilot)
        for key in ("e", "n", "enter", "J", "y"):
            app.clear_notifications()
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, RunsScreen), key
            said = [n.message for n in app._notifications]
            assert "no run highlighted" in said, (key, said)


async def test_a_marked_run_mid_line_keeps_its_mark_and_one_that_leaves_says_so(
    history, make_app
) -> None:
    """A harness caught mid-line no longer makes the run vanish (and lose its A); a marked
    run whose file does go is unmarked with a word, not silently."""
    app = make_app(history)
    path = history / f"baseline-1120{SUFFIX}"
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        await pilot.press("a")
        assert screen.marks == {"baseline-1120": "A"}
        whole = path.read_bytes()
        with path.open("ab") as handle:
            handle.write(b'{"case_id": "late-01", "quest')  # the writer is mid-line
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert screen.marks == {"baseline-1120": "A"}
        table = screen.query_one(RunTable)
        assert "(running)" in cell(table, "baseline-1120", "run")
        messages = [str(n.message) for n in app._notifications]
        assert not any("skipped" in n.lower() or "late-01" in n for n in messages)
        assert any(
            f"{path}: line 26, its last, is incomplete (still being written?): 24 complete "
            "cases indexed" in n
            for n in messages
        )
        path.write_bytes(whole)
        path.rename(history / "elsewhere.txt")
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert screen.marks == {}
        assert (
            "unmarked A baseline-1120: no longer in the folder (its file was removed, renamed "
            "or cannot be read); mark it again when it is back"
        ) in [str(n.message) for n in app._notifications]
