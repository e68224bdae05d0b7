"""Case screen: evidence, claim → chunk highlighting, stepping, A/B sides, history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.widgets.chunks_view import ChunkBlock
from ragtui.tui.widgets.claims_view import ClaimsView
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import WORST, case_ids, screen_text, write_history
from tests.tui.history_extras import file_cases


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ids = write_history(tmp_path / "runs")
    return tmp_path / "runs", ids


async def open_case(app: RagtuiApp, pilot, screen: CaseScreen) -> CaseScreen:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    await app.push_screen(screen)
    await wait_ready(app, pilot)
    return screen


def cited(screen: CaseScreen) -> dict[str, bool]:
    return {b.chunk.id: b.has_class("-cited") for b in screen.query(ChunkBlock)}


LIST = [WORST, "refund-08", "billing-01"]


async def test_worst_case_shows_question_answers_chunks_and_unsupported_claims(
    folder, make_app
) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen(
            ids["small-generator"], LIST, 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        text = screen_text(app)
        # baseline-r1 said YES (1.0), small-generator NO (0.0): written so by the fixture
        assert f"ragtui · Case {WORST}  faithfulness A 100 → B 0 (NO)  1 / 3 in list" in text
        assert "Who approves refunds requested more than 7 days after renewal?" in text
        assert "Answer A · baseline" in text and "Answer B · small-generator" in text
        assert "Per the refund policy" in text  # A's answer
        assert "Support handles refund case 7 within 24 hours" in text  # B's answer
        assert "✗ UNSUPPORTED Support handles it" in text
        assert "refund_policy.md" in text and "escalation.md" in text
        below = widget_text(screen.query_one("#case-judge")) + widget_text(
            screen.query_one("#case-history")
        )  # below the fold at 40 rows: read from the widgets
        assert "prompt faith-label-v1" in below and "reply  NO" in below
        assert "history · this case in 5 runs" in below


async def test_selecting_a_claim_highlights_the_chunks_it_cites(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen(
            ids["small-generator"], LIST, 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        claims = screen.query_one(ClaimsView)
        assert [c.text for c in claims.claims][2] == "paid back by card"
        assert cited(screen) == {"C1": False, "C2": False, "C3": False}  # claim 0 cites nothing
        claims.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert cited(screen) == {"C1": True, "C2": False, "C3": False}
        assert re.search(r"▶ =\s+C1", screen_text(app))  # cited, and kept from A (=)
        await pilot.press("up")
        await pilot.pause()
        assert not any(cited(screen).values())


async def test_clicking_a_claim_highlights_its_chunk(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        # on A's side refund-07 was answered well: claim 1 (PARTIAL) cites C3
        screen = CaseScreen(ids["baseline"], LIST, 0, metric="faithfulness")
        await open_case(app, pilot, screen)
        claims = screen.query_one(ClaimsView)
        assert [c.verdict for c in claims.claims] == ["SUPPORTED", "PARTIAL"]
        assert cited(screen)["C1"] is True  # the first claim is highlighted on open
        # the PARTIAL claim's first row: border (1) + the SUPPORTED claim's one row
        await pilot.click(ClaimsView, offset=(4, 2))
        await pilot.pause()
        assert claims.highlighted == 1
        assert cited(screen) == {"C1": False, "C2": False, "C3": True}


async def test_step_through_the_list_and_back(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        before = app.screen
        screen = CaseScreen(
            ids["small-generator"], LIST, 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        await pilot.press("right_square_bracket")
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "ragtui · Case refund-08" in text and "2 / 3 in list" in text
        assert "more than 8 days after renewal" in text
        await pilot.press("right_square_bracket", "right_square_bracket")  # clamps at the end
        await wait_ready(app, pilot)
        assert "ragtui · Case billing-01" in screen_text(app)
        assert screen.index == 2
        await pilot.press("left_square_bracket")
        await wait_ready(app, pilot)
        assert screen.index == 1 and "ragtui · Case refund-08" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is before


async def test_tab_switches_the_side_of_claims_and_chunks(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen(
            ids["small-generator"], LIST, 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        assert "Claims of B · faithfulness" in screen_text(app)
        await pilot.press("tab")
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert screen.side == "A"
        assert "Claims of A · faithfulness" in text and "Chunks of A · baseline" in text
        assert "✓ SUPPORTED The refund rule applies to case 7" in text
        assert "UNSUPPORTED" not in widget_text(screen.query_one(ClaimsView))
        await pilot.press("tab")
        await wait_ready(app, pilot)
        assert screen.side == "B" and "✗ UNSUPPORTED" in screen_text(app)


async def test_metric_key_and_errors_shown(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    errored = case_ids()[5]  # the fixture errors context_precision on every 13th case from 5
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen(ids["small-generator"], [errored], 0, other_run_id=ids["baseline"])
        await open_case(app, pilot, screen)
        assert screen.metric == "answer_relevance"  # the first metric, by name
        await pilot.press("m")
        await wait_ready(app, pilot)
        assert screen.metric == "context_precision"
        text = screen_text(app)
        assert "context_precision A" in text and "→ B error" in text
        assert "error: judge reply was not valid JSON" in text


async def test_case_readable_at_80x24(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = CaseScreen(
            ids["small-generator"], LIST, 0, other_run_id=ids["baseline"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        text = screen_text(app)
        assert "refund-07" in text and "1 / 3 in list" in text
        assert "Question" in text and "UNSUPPORTED" in text


async def test_an_empty_list_shows_a_line_not_a_crash(folder, make_app) -> None:
    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_case(app, pilot, CaseScreen(ids["baseline"], [], 0))
        assert "(no case in the list)" in screen_text(app)
        await pilot.press("right_square_bracket", "R", "tab", "m", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, CaseScreen)


async def test_a_single_run_s_case_does_not_offer_a_b_to_switch_to(folder, make_app) -> None:
    """`tab A/B` was on the key line of a one-run case, where it did nothing; with A and B it
    is there."""
    from ragtui.tui.widgets.key_bar import KeyBar

    path, ids = folder
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_case(app, pilot, CaseScreen(ids["baseline"], LIST, 0, metric="faithfulness"))
        assert "A/B" not in widget_text(app.screen.query_one(KeyBar))
        await pilot.press("escape")
        await wait_ready(app, pilot)
        both = CaseScreen(ids["small-generator"], LIST, 0, other_run_id=ids["baseline"])
        await open_case(app, pilot, both)
        assert "A/B" in widget_text(app.screen.query_one(KeyBar))


async def test_the_title_shows_b_as_the_mean_of_its_reruns_without_one_rerun_s_label(
    folder, make_app
) -> None:
    """B = baseline, whose three reruns grade some case apart: the title's B is their mean (as
    Compare shows it), not one rerun's label beside another's figure."""
    path, ids = folder
    runs = [f"baseline-r{r}" for r in (1, 2, 3)]
    grades = {
        run: {c["case_id"]: c["scores"]["faithfulness"] for c in file_cases(path, run)}
        for run in runs
    }
    case = next(c for c in grades[runs[0]] if len({grades[r][c]["value"] for r in runs}) > 1)
    mean = sum(grades[r][case]["value"] for r in runs) / 3
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen(
            ids["baseline"], [case], 0, other_run_id=ids["small-generator"], metric="faithfulness"
        )
        await open_case(app, pilot, screen)
        title = screen_text(app).splitlines()[0]
        assert re.search(rf"→ B {round(mean * 100, 1):g}  1 / 1 in list", title), title


async def test_the_page_keys_reach_the_whole_case_from_the_claims(sample_copy, make_app) -> None:
    """With the focus on the claims list (as the case opens), ctrl+d, G, pgdn, end and space
    moved in the list or did nothing: the judge reply, the class and the history below could
    not be reached. They page the whole case now; j walks the claims, then the page."""
    app = make_app(sample_copy)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = CaseScreen(
            "strict-v2-2026-11-16",
            ["refund-01", "refund-02"],
            0,
            other_run_id="baseline-2026-11-02",
            metric="faithfulness",
        )
        await open_case(app, pilot, screen)
        body = screen.query_one("#case-body")
        claims = screen.query_one(ClaimsView)
        assert app.focused is claims and body.max_scroll_y > 0

        def history_on_screen() -> bool:
            region = screen.query_one("#case-history").region
            return bool(region.height) and body.region.contains_region(region)

        for keys in (["G"], ["end"], ["ctrl+d"] * 6, ["pagedown"] * 6, ["space"] * 6):
            await pilot.press("g")
            await pilot.pause()
            assert body.scroll_y == 0, keys
            await pilot.press(*keys)
            await pilot.pause()
            assert body.scroll_y == body.max_scroll_y and history_on_screen(), keys
            assert app.focused is claims, keys
        await pilot.press("ctrl+u")
        await pilot.pause()
        assert body.scroll_y < body.max_scroll_y
        await pilot.press("g")
        await pilot.pause()
        assert body.scroll_y == 0
        # j walks the claims first, then the page below them
        n = claims.option_count
        for _ in range(n - 1):
            await pilot.press("j")
        await pilot.pause()
        assert claims.highlighted == n - 1 and body.scroll_y == 0
        await pilot.press("j", "j")
        await pilot.pause()
        assert claims.highlighted == n - 1 and body.scroll_y == 2
        await pilot.press("k")
        await pilot.pause()
        assert claims.highlighted == n - 2


async def test_the_history_says_it_lists_only_the_last_figures(sample_copy, make_app) -> None:
    """ "this case in 14 runs" drew 14 points but listed 8 figures, as if those were all."""
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CaseScreen("strict-v2-2026-11-16", ["refund-01"], 0)
        await open_case(app, pilot, screen)
        text = widget_text(screen.query_one("#case-history"))
        runs = int(re.search(r"this case in (\d+) runs", text).group(1))  # type: ignore[union-attr]
        assert runs > 8 and "figures: the last 8" in text, text
        line = next(x for x in text.splitlines() if x.strip().startswith("faithfulness"))
        assert "… " in line and len(line.split("…")[1].split()) == 8, line


async def test_a_case_whose_run_left_says_so_where_the_case_was(tmp_path: Path) -> None:
    """`u` after the run's file was deleted: the yellow line went, the old case stayed drawn,
    and the error was a toast and a red line far below (off screen at 40 rows)."""
    from ragtui.core.runfile import SUFFIX
    from tests.tui.conftest import write_history as write_fixed_history

    folder = write_fixed_history(tmp_path / "runs")
    app = RagtuiApp(folder, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_case("strict-1124", ["refund-00"], 0)
        await wait_ready(app, pilot)
        assert "Answer about refund number 0." in str(app.screen.query_one("#answer-b").render())
        (folder / f"strict-1124{SUFFIX}").unlink()
        app.refresh_folder()
        await wait_ready(app, pilot)
        await pilot.press("u")
        await wait_ready(app, pilot)
        question = str(app.screen.query_one("#case-question").render())
        assert question.startswith("case: ") and "strict-1124" in question, question
        assert "Answer about" not in str(app.screen.query_one("#answer-b").render())
        assert "refund-00  1 / 1 in list" in widget_text(app.screen.query_one("#case-title"))
        # the file back, `u`: the case shows, and j / k walk its claims again
        write_fixed_history(tmp_path / "again")
        (tmp_path / "again" / f"strict-1124{SUFFIX}").rename(folder / f"strict-1124{SUFFIX}")
        app.refresh_folder()
        await wait_ready(app, pilot)
        await pilot.press("u")
        await wait_ready(app, pilot)
        assert "Answer about refund number 0." in str(app.screen.query_one("#answer-b").render())
        assert isinstance(app.focused, ClaimsView), app.focused
