"""Issue 14 on Compare and Case: the Case screen shows Compare's A (the reruns' mean, each rerun
beside it), and an open Compare or Case offers to update when its runs change on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual_fastdatatable import DataTable as FastTable

from ragtui.format import pts, short_pts
from ragtui.services import comparing
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.widgets.metric_table import COLUMNS, MetricTable
from tests.tui import history_b, history_diag
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import screen_text


def file_scores(folder: Path, run_id: str, metric: str) -> dict[str, float]:
    """Scores straight from the run file (not via the index or the engine)."""
    out = {}
    for line in (folder / f"{run_id}.ragtui.jsonl").read_text().splitlines()[1:]:
        case = json.loads(line)
        if metric in case["scores"]:
            out[case["case_id"]] = case["scores"][metric]["value"]
    return out


@pytest.fixture
def reruns(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ids = history_b.write_history(tmp_path / "runs")
    return tmp_path / "runs", ids


async def test_case_shows_the_same_a_as_compare_with_each_rerun(reruns, make_app) -> None:
    path, ids = reruns
    runs = [file_scores(path, f"baseline-r{i}", "faithfulness") for i in (1, 2, 3)]
    b = file_scores(path, ids["small-generator"], "faithfulness")
    # a case whose three baseline reruns disagree: its A is their mean, not the first rerun
    case = next(c for c in sorted(b) if len({r[c] for r in runs}) > 1)
    values = [r[case] for r in runs]
    mean = sum(values) / 3
    app = make_app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(ids["baseline"], ids["small-generator"])
        await wait_ready(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        await pilot.press("slash", *case)  # the case list, filtered to this case
        await wait_ready(app, pilot)
        row = [str(v).strip() for v in compare.query_one("#case-table", FastTable).get_row_at(0)]
        assert row[:3] == [case, pts(mean), pts(b[case])]  # one decimal a column
        await pilot.press("enter", "enter")  # out of the filter box, then open the case
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CaseScreen) and screen.case_id == case
        title = f"faithfulness A {short_pts(mean)} → B {short_pts(b[case])}"
        assert title in screen_text(app)
        scores = " ".join(widget_text(screen.query_one("#case-scores")).split())
        reruns_shown = " ".join(short_pts(v) for v in values)
        assert f"faithfulness {short_pts(mean)} {reruns_shown} {short_pts(b[case])}" in scores

    # opened without Compare (e.g. from elsewhere with two runs): the same figures
    app = make_app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_ready(app, pilot)
        app.open_case(
            ids["small-generator"], [case], 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await wait_ready(app, pilot)
        assert title in screen_text(app)


def rewrite_candidate(folder: Path, faith: dict[str, float]) -> None:
    """cand-1 written again with other faithfulness values (a harness re-ran it)."""
    from dataclasses import replace

    from ragtui.core.model import Score
    from ragtui.core.runfile import read_run_file, write_run_file

    whole = read_run_file(folder / "cand-1.ragtui.jsonl")
    run, cases = whole.run, whole.cases
    new = []
    for c in cases:
        scores = dict(c.scores)
        if c.case_id in faith:
            label = {1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}[faith[c.case_id]]
            scores["faithfulness"] = Score(faith[c.case_id], raw=label, label=label)
        new.append(replace(c, scores=scores))
    write_run_file(folder / "cand-1.ragtui.jsonl", run, new)


@pytest.fixture
def diag(tmp_path: Path) -> Path:
    return history_diag.write_history(tmp_path / "runs")


async def test_compare_offers_to_update_when_b_changes_on_disk(diag, make_app) -> None:
    app = make_app(diag)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(history_diag.A, history_diag.B)
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert "update" not in screen_text(app)  # nothing to update: not in the footer
        # ret-01 and gen-02 fixed in the file: faithfulness Δ by hand becomes
        # (0 + 0 - .5 + 1 + .5 + 0 + 0 + 0) / 8 = +0.125
        rewrite_candidate(diag, {"ret-01": 1.0, "gen-02": 1.0})
        app.refresh_folder()  # what the live watch calls (off in tests)
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "B changed on disk: u updates the figures" in text
        assert "u update" in text  # the key is in the footer now
        assert any("B changed on disk" in str(n.message) for n in app._notifications)
        # the figures on screen stay as they were until the user asks (Δ -12.5 by hand)
        row = screen.query_one(MetricTable).metric_names.index("faithfulness")
        delta = COLUMNS.index("Δ pts")
        assert str(screen.query_one(MetricTable).get_row_at(row)[delta]) == "-12.5"
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        faith = screen.comparison.metric("faithfulness")
        assert faith.delta == pytest.approx(0.125)


async def test_a_new_rerun_of_a_marks_a_changed_and_case_offers_too(diag, make_app) -> None:
    app = make_app(diag)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(history_diag.A, history_diag.B)
        await wait_ready(app, pilot)
        app.open_case(
            history_diag.B, ["ret-01"], 0, other_run_id=history_diag.A, metric="faithfulness"
        )
        await wait_ready(app, pilot)
        case = app.screen
        assert isinstance(case, CaseScreen)
        # a third rerun of A's config appears in the folder: A's figures change
        from dataclasses import replace

        from ragtui.core.runfile import read_run_file, write_run_file

        whole = read_run_file(diag / "base-r2.ragtui.jsonl")
        # not a copy of an earlier rerun (a cache hit, left out): fail-07 half supported
        half = history_diag.Score(0.5, raw="PARTIAL", label="PARTIAL")
        third = [
            replace(c, scores={**c.scores, "faithfulness": half}) if c.case_id == "fail-07" else c
            for c in whole.cases
        ]
        write_run_file(diag / "base-r3.ragtui.jsonl", replace(whole.run, id="base-r3"), third)
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "A changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert len(case.comparison.reruns_a) == 3  # the case's figures now average 3 reruns
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert "A changed on disk" in screen_text(app)  # Compare was told too
        # B's file deleted: updating says so on a line, and the app stays
        (diag / "cand-1.ragtui.jsonl").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "A and B changed on disk" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        assert "cand-1" in widget_text(app.screen.query_one("#compare-notes"))


async def test_a_rerun_deleted_under_compare_and_case_marks_its_side_changed(
    diag, make_app
) -> None:
    """A's second rerun removed from the folder: A's figures were its mean with that rerun,
    so Compare and Case say A changed (the rerun is gone from the index: its config cannot be
    looked up any more) and `u` averages the one left."""
    app = make_app(diag)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(history_diag.A, history_diag.B)
        await wait_ready(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and len(compare.comparison.reruns_a) == 2
        app.open_case(
            history_diag.B, ["ret-01"], 0, other_run_id=history_diag.A, metric="faithfulness"
        )
        await wait_ready(app, pilot)
        (diag / "base-r2.ragtui.jsonl").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "A changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert "A changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert compare.comparison.reruns_a == [history_diag.A]


def _rewrite_run(folder: Path, source: str, target: str, **changes: object) -> None:
    """`source`'s run file written again as `target` with its header changed (answers kept)."""
    from dataclasses import replace

    from ragtui.core.runfile import read_run_file, write_run_file

    whole = read_run_file(folder / f"{source}.ragtui.jsonl")
    write_run_file(folder / f"{target}.ragtui.jsonl", replace(whole.run, **changes), whole.cases)


async def test_a_rerun_moved_to_another_config_marks_its_side_changed(diag, make_app) -> None:
    """base-r2's header edited to another config: A's figures were the mean of base-r1 and
    base-r2, a fresh Compare takes base-r1 alone, yet the open one showed no yellow line (the
    moved rerun was looked for among A's reruns now, where it no longer is)."""
    app = make_app(diag)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(history_diag.A, history_diag.B)
        await wait_ready(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.comparison.reruns_a == ["base-r1", "base-r2"]
        _rewrite_run(diag, "base-r2", "base-r2", config_key="cfg-moved")
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "A changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert compare.comparison.reruns_a == ["base-r1"]


async def test_a_rejudge_of_a_side_that_lands_marks_that_side_changed(diag, make_app) -> None:
    """Compare shows a verdict per judge only for a judge that re-graded both A and B. A
    re-judge of B alone (kind rejudge, parent cand-1) changes no figure, so nothing is said;
    a re-judge of A by the same judge then lands, and the open Compare says A changed; after
    `u` the verdict under that judge is shown. Another run of no side's (a re-judge of alt-1)
    changes nothing."""
    from ragtui.core.model import JudgeInfo

    second = JudgeInfo("llama3.1:8b", "ollama", "p2")
    app = make_app(diag)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare(history_diag.A, history_diag.B)
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        _rewrite_run(
            diag, "alt-1", "rj-alt", id="rj-alt", kind="rejudge", parent="alt-1", judge=second
        )
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        _rewrite_run(
            diag,
            history_diag.B,
            "rj-cand",
            id="rj-cand",
            kind="rejudge",
            parent="cand-1",
            judge=second,
            config_key=None,
        )
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)  # B alone: no verdict under it
        # (as compared afresh: the same figures, and no verdict under the second judge)
        again = comparing.compare(app.workspace, history_diag.A, history_diag.B)
        shown = app.screen.comparison
        assert not again.judges
        assert [(m.metric, m.delta, m.verdict) for m in again.metrics] == [
            (m.metric, m.delta, m.verdict) for m in shown.metrics
        ]
        # and a re-judge of A by the same judge: that judge re-graded both sides now; after u
        # both verdicts are shown
        _rewrite_run(
            diag,
            history_diag.A,
            "rj-base",
            id="rj-base",
            kind="rejudge",
            parent="base-r1",
            judge=second,
            config_key=None,
        )
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "A changed on disk: u updates the figures" in screen_text(app)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "changed on disk" not in screen_text(app)
        assert {(j.a, j.b) for j in app.screen.comparison.judges} >= {("rj-base", "rj-cand")}
        # the re-judge of B removed: the comparison showed its verdict, so B changed again
        (diag / "rj-cand.ragtui.jsonl").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        assert "B changed on disk: u updates the figures" in screen_text(app)
