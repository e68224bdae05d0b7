"""Compare many: from Compare (`v`), the base against every other config in one table; Δ by
hand (history_diag.py), p adj = Holm over every test of the table (checked against a Holm
worked here on the pairs' own p-values), sortable, each row opening its pair."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from textual.widgets import DataTable, Input

from ragtui.core.compare import compare_runs
from ragtui.format import p_value
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.screens.compare_many import CompareManyScreen
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import screen_lines, screen_text
from tests.tui.history_diag import A, B, write_history

CANDIDATES = [B, "alt-1", "alt-2"]
NAMES = {B: "retriever-v2", "alt-1": "all-supported", "alt-2": "base-again"}
# faithfulness Δ by hand: A per case is the mean of its two reruns (1,1,1,0,.5,1,0,1)
FAITH_A = [1, 1, 1, 0, 0.5, 1, 0, 1]
FAITH = {
    B: [0, 0, 0.5, 1, 1, 1, 0, 1],
    "alt-1": [1] * 8,
    "alt-2": [1, 1, 1, 0, 1, 1, 0, 1],  # A's first rerun
}


def delta(candidate: str) -> float:
    return sum(b - a for a, b in zip(FAITH_A, FAITH[candidate], strict=True)) / 8


def holm(ps: list[float]) -> list[float]:
    """Holm's step-down adjustment, written out here."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = [0.0] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (len(ps) - rank) * ps[i])
        out[i] = min(1.0, running)
    return out


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return write_history(tmp_path / "runs")


def rows(screen: CompareManyScreen) -> list[list[str]]:
    table = screen.query_one("#many-table", DataTable)
    return [[str(v) for v in table.get_row_at(i)] for i in range(table.row_count)]


async def open_many(app, pilot) -> CompareManyScreen:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    app.open_compare(A, B)
    await wait_ready(app, pilot)
    await pilot.press("v")  # A against every other config of its dataset
    await wait_ready(app, pilot)
    screen = app.screen
    assert isinstance(screen, CompareManyScreen)
    return screen


async def test_v_on_compare_opens_every_config_against_a(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_many(app, pilot)
        assert screen.candidates == CANDIDATES
        got = rows(screen)
        assert len(got) == 3 * 3  # candidates × metrics
        assert [r[0] for r in got[::3]] == [NAMES[c] for c in CANDIDATES]  # as given
        faith = {r[0]: r for r in got if r[1] == "faithfulness"}
        for c in CANDIDATES:
            assert float(faith[NAMES[c]][5]) == pytest.approx(100 * delta(c), abs=0.051)
        # Holm over all nine tests, from each pair's own (unadjusted) p-values
        store = app.store
        raw = []
        for c in CANDIDATES:
            pair = compare_runs(store, A, c, margin=0.05)
            raw += [(NAMES[c], m.metric, m.p) for m in pair.metrics]
        tested = [(n, m, p) for n, m, p in raw if p is not None]
        adjusted = holm([p for _, _, p in tested])
        shown = {(r[0], r[1]): r[7] for r in got}
        for (n, m, _), p_adj in zip(tested, adjusted, strict=True):
            assert shown[(n, m)] == p_value(p_adj)
        assert f"Holm over {len(tested)} tests" in screen_text(app)
        # a note about the base's own reruns is said once, not once per candidate
        notes = " ".join(widget_text(screen.query_one("#many-notes")).split())
        assert notes.count("rerun base-r2 of A is identical to base-r1") == 1
        assert "every candidate: rerun base-r2 of A is identical" in notes


async def test_sort_metric_filter_and_enter_opens_the_pair(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_many(app, pilot)
        await pilot.press("s")  # Δ, worst first
        await pilot.pause()
        deltas = [float(r[5]) for r in rows(screen)]
        assert deltas == sorted(deltas)
        await pilot.press("s")  # Δ, best first
        await pilot.pause()
        deltas = [float(r[5]) for r in rows(screen)]
        assert deltas == sorted(deltas, reverse=True)
        assert rows(screen)[0][:2] == ["all-supported", "faithfulness"]  # +31.25 by hand
        order = [None, "answer_relevance", "context_recall", "faithfulness"]
        for metric in order[1:]:
            await pilot.press("m")  # one metric: a ranking of the candidates
            await pilot.pause()
            assert {r[1] for r in rows(screen)} == {metric}
        ranked = [r[0] for r in rows(screen)]
        by_hand = sorted(CANDIDATES, key=delta, reverse=True)
        assert ranked == [NAMES[c] for c in by_hand]
        await pilot.press("enter")  # the best one, on Compare
        await wait_ready(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert (compare.a_run_id, compare.b_run_id) == (A, by_hand[0])


async def test_export_the_candidates_table_to_parquet(runs, make_app, tmp_path) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_many(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        target = tmp_path / "many.parquet"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        table = pq.read_table(target).to_pylist()
        assert len(table) == 9
        faith = {r["candidate"]: r["delta"] for r in table if r["metric"] == "faithfulness"}
        assert faith == pytest.approx({c: delta(c) for c in CANDIDATES})
        assert {r["name"] for r in table} == set(NAMES.values())
        # one metric, best first on screen: the export holds those rows, in that order
        await pilot.press("s", "s", "m")
        await pilot.pause()
        shown = [(r[0], r[1]) for r in rows(app.screen)]
        assert len(shown) == 3 and {m for _, m in shown} == {"answer_relevance"}
        await pilot.press("e")
        await pilot.pause()
        target = tmp_path / "one-metric.parquet"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        got = [(r["name"], r["metric"]) for r in pq.read_table(target).to_pylist()]
        assert got == shown


async def test_v_on_the_sample_history_leaves_out_summary_only_runs(sample_copy, make_app) -> None:
    """The demo holds a summary-only run (a CI job that kept its means only): `v` listed it as
    a candidate and the whole table failed with "has no cases"."""
    import json

    cases = {}  # run id -> case lines in its file (read with plain json, not ragtui)
    for path in sample_copy.glob("*.ragtui.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        cases[json.loads(lines[0])["id"]] = len(lines) - 1
    summary = {run_id for run_id, n in cases.items() if n == 0}
    assert summary  # the demo has one: the test is about it
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("baseline-2026-11-02", "bm25-2026-11-21")
        await wait_ready(app, pilot)
        await pilot.press("v")
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareManyScreen)
        assert [n.message for n in app._notifications if n.severity == "error"] == []
        assert screen.candidates and not set(screen.candidates) & summary
        assert all(cases[c] for c in screen.candidates)
        assert len(rows(screen)) >= len(screen.candidates)


async def test_v_typed_twice_opens_one_table(runs, make_app) -> None:
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(A, B)
        await wait_ready(app, pilot)
        from textual import events

        for _ in range(2):  # as a terminal delivers them: no pause between
            app._driver.send_message(events.Key("v", "v"))
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareManyScreen)
        assert sum(isinstance(s, CompareManyScreen) for s in app.screen_stack) == 1
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)


@pytest.mark.parametrize("size", [(100, 30), (96, 30)])
async def test_every_verdict_is_whole_on_screen_at_narrow_widths(
    sample_copy, make_app, size
) -> None:
    """At 100 columns the demo's table was wider than the screen and its verdicts were cut at
    the edge ("no meaningful cha"). Metric names shorten (with a legend) and candidate names
    give way, never a figure or a verdict; a resize fits the table again."""
    metrics = ("answer_relevance", "context_precision", "context_recall", "faithfulness")
    app = make_app(sample_copy)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare_many(
            "baseline-2026-11-02",
            ["topk5-2026-11-09", "strict-v2-2026-11-16", "bm25-2026-11-21"],
        )
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareManyScreen)
        wide = rows(screen)
        assert {r[1] for r in wide} == set(metrics)  # full names where they fit
        await pilot.resize_terminal(*size)
        await wait_ready(app, pilot)
        shown = rows(screen)
        assert {r[1] for r in shown} == {"ans rel", "ctx prec", "ctx rec", "faith"}
        text = screen_text(app)
        assert "ans rel = answer_relevance" in text.replace("\n", " ")
        table = screen.query_one("#many-table", DataTable)
        for cells, full in zip(shown, wide, strict=True):
            assert cells[2:] == full[2:]  # every figure and verdict as it was
        # each row on screen ends with its verdict, whole, inside the table
        region = table.region
        lines = screen_lines(app)[region.y + 1 : region.y + region.height]
        body = [x[region.x : region.x + region.width].rstrip() for x in lines if " 48 " in x]
        visible = shown[int(table.scroll_y) : int(table.scroll_y) + len(body)]
        assert len(body) >= 8
        for line, cells in zip(body, visible, strict=True):
            assert line.endswith(cells[-1]), line


async def test_at_80_columns_verdicts_and_title_are_whole(sample_copy, make_app) -> None:
    """At 80x24 the verdicts were cut ("no mea", "too fe", "regres", "inconc") and so was the
    title. Verdicts take their short forms (said in full in the legend), then N and A (the
    base's mean, the same on every row of a metric) give way: every verdict reads whole."""
    from ragtui.format import SHORT_VERDICTS

    app = make_app(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare_many(
            "baseline-2026-11-02",
            [
                "strict-v2-2026-11-16",
                "topk5-2026-11-09",
                "small-gen-2026-11-19",
                "bm25-2026-11-21",
            ],
        )
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareManyScreen)
        lines = screen_lines(app)
        assert lines[0].rstrip().endswith("tests"), lines[0]
        words = {"improved", "regressed", "inconclusive", "no data", "not comparable"}
        words |= set(SHORT_VERDICTS.values())
        table = screen.query_one("#many-table", DataTable)
        region = table.region
        body = [
            x[region.x : region.x + region.width - 2].rstrip()
            for x in lines[region.y + 1 : region.y + region.height]
        ]
        body = [x for x in body if x.strip()]
        assert len(body) >= 8
        for line in body:
            assert any(line.endswith(w) for w in words), line
        notes = " ".join(screen_text(app).split())
        assert "no change = no meaningful change" in notes


async def open_listed(app, pilot, candidates: list[str]) -> CompareManyScreen:  # type: ignore[no-untyped-def]
    """A against candidates of the user's choosing (several `b` on Runs)."""
    await wait_ready(app, pilot)
    app.open_compare_many(A, candidates)
    await wait_ready(app, pilot)
    screen = app.screen
    assert isinstance(screen, CompareManyScreen)
    return screen


def add_config(folder: Path, run_id: str, like: str, name: str) -> None:
    """A new config in the folder: `like`'s run file copied with a new id, name and config
    (the cases, and so the figures, are `like`'s)."""
    from dataclasses import replace

    from ragtui.core.runfile import read_run_file, write_run_file

    whole = read_run_file(folder / f"{like}.ragtui.jsonl")
    run = replace(
        whole.run, id=run_id, name=name, config={"retriever": name}, config_key=f"cfg-{name}"
    )
    write_run_file(folder / f"{run_id}.ragtui.jsonl", run, whole.cases)


async def test_v_notices_a_new_config_and_u_adds_it(runs, make_app) -> None:
    """A config dropped into the folder while `v`'s table was open left it as it was (no stale
    line, `u` did nothing): every p adj on screen was Holm over too few tests."""
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_many(app, pilot)
        assert "3 candidates" in screen_text(app)
        add_config(runs, "alt-3", like="alt-1", name="hybrid")
        app.refresh_folder()  # what the live watch calls (off in tests)
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "a new config (hybrid) appeared on disk: u updates the figures" in text
        assert "u update" in text  # the key is in the footer now
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert sorted(screen.candidates) == sorted([*CANDIDATES, "alt-3"])  # oldest first
        assert "4 candidates" in screen_text(app)
        got = rows(screen)
        assert len(got) == 4 * 3
        faith = {r[0]: r for r in got if r[1] == "faithfulness"}
        assert float(faith["hybrid"][5]) == pytest.approx(100 * delta("alt-1"), abs=0.051)
        # the config gone again: the table says so, and `u` takes it out
        (runs / "alt-3.ragtui.jsonl").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "candidate alt-3 changed on disk" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert screen.candidates == CANDIDATES and len(rows(screen)) == 3 * 3


async def test_a_deleted_rerun_of_the_base_marks_the_table_changed(runs, make_app) -> None:
    """The base's figures average its two reruns: with one of them deleted the index no longer
    knows it was a rerun, and the table went on showing figures made from a file that is gone."""
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_listed(app, pilot, [B, "alt-1"])
        assert "changed on disk" not in screen_text(app)
        faith = {r[0]: r for r in rows(screen) if r[1] == "faithfulness"}
        assert float(faith["all-supported"][5]) == pytest.approx(100 * delta("alt-1"), abs=0.051)
        (runs / "base-r2.ragtui.jsonl").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "the base changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        # A is base-r1 alone now (faithfulness 1 1 1 0 1 1 0 1): alt-1's all ones gain 2/8
        faith = {r[0]: r for r in rows(screen) if r[1] == "faithfulness"}
        assert float(faith["all-supported"][5]) == pytest.approx(25.0, abs=0.051)


async def test_a_list_of_candidates_stays_when_a_config_appears(runs, make_app) -> None:
    """Opened with candidates of the user's choosing (several `b` on Runs): a new config in
    the folder is not one of them."""
    app = make_app(runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_listed(app, pilot, [B, "alt-1"])
        add_config(runs, "alt-3", like="alt-1", name="hybrid")
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert screen.candidates == [B, "alt-1"]
