"""Markup and escape injection: every text field of a run carries Rich markup, ANSI escapes and
OSC sequences. Each screen must show those characters as text (escapes made visible as `\\x1b`)
and nothing may reach the terminal as a style, a link, or a control sequence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.segment import Segment
from textual.widgets import SelectionList

from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.core.views import printable
from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from tests.tui.conftest import wait_ready
from tests.tui.history_b import screen_segments, screen_text

# hostile text must never break a frame, so every frame is drawn (tests/conftest.py)
pytestmark = pytest.mark.paint_every_frame

EVIL = (
    "[bold red]x[/] [link=http://evil]y[/link] \x1b[31m \x1b[2J "
    "\x1b]8;;http://evil\x07z\x1b]8;;\x07 \x1b]0;title\x07"
)
SHOWN = printable(EVIL)  # what must be on screen: the same characters, ESC/BEL as \x1b/\x07
METRIC = "m" + EVIL


def evil(tag: str) -> str:
    return f"{tag}:{EVIL}"


def shown(tag: str) -> str:
    return f"{tag}:{SHOWN}"


def write_evil_runs(folder: Path) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    judge = JudgeInfo(evil("judge"), "ollama", evil("ph"))
    for run_id, name, value in (("evil-a", evil("NA"), 1.0), ("evil-b", evil("NB"), 0.0)):
        cases = []
        for i in range(3):
            label = evil("L")
            cases.append(
                Case(
                    case_id=evil(f"id{i}"),
                    question=evil(f"Q{i}"),
                    answer=evil(f"ANS-{name[:2]}"),
                    reference=evil("REF"),
                    contexts=(Chunk(evil("CID"), evil("CTEXT"), evil("CSRC"), 1, 0.9),),
                    scores={
                        METRIC: Score(
                            value if i else 0.5,
                            raw=label,
                            label=label,
                            reply=evil("REPLY"),
                            reason=evil("WHY"),
                            prompt_hash=evil("PH"),
                        )
                    },
                    claims=(
                        Claim(METRIC, evil("CLAIM"), "UNSUPPORTED", (evil("CID"),), evil("CR")),
                    ),
                    errors={"other": evil("ERR")},
                )
            )
        run = Run(
            run_id,
            name,
            "2026-11-20T10:00:00Z",
            {"generator": evil("gen")},
            judge=judge,
            dataset=DatasetInfo(evil("ds"), "v1"),
        )
        write_run_file(folder / f"{run_id}{SUFFIX}", run, cases)
    return "evil-a", "evil-b"


def assert_inert(app: RagtuiApp) -> None:
    """No control character, no link and no hyperlink metadata in anything rendered."""
    segments: list[Segment] = screen_segments(app)
    assert segments
    for seg in segments:
        bad = [c for c in seg.text if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F]
        assert not bad, f"control character reached the terminal in {seg.text!r}"
        if seg.style is not None:
            assert not seg.style.link, f"a link leaked: {seg.style.link!r} on {seg.text!r}"
    svg = app.export_screenshot()
    assert "http://evil" not in svg.split("</style>")[0]  # nowhere outside the text runs
    assert 'href="http://evil' not in svg


@pytest.fixture
def evil_folder(tmp_path: Path) -> Path:
    write_evil_runs(tmp_path / "runs")
    return tmp_path / "runs"


async def test_runs_screen_shows_markup_and_escapes_as_text(evil_folder, make_app) -> None:
    app = make_app(evil_folder)
    async with app.run_test(size=(260, 60)) as pilot:
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "NA:[bold red]x[/]" in text and "NB:[bold red]x[/]" in text
        assert_inert(app)


async def test_compare_screen_shows_markup_and_escapes_as_text(evil_folder, make_app) -> None:
    app = make_app(evil_folder)
    async with app.run_test(size=(260, 60)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen("evil-a", "evil-b"))
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert isinstance(app.screen, CompareScreen)
        assert shown("NA") in text and shown("NB") in text  # the title
        assert METRIC not in text and printable(METRIC) in text  # metric table + detail line
        assert shown("id0")[:60] in text  # case ids in the case table (first columns)
        assert "Q1:[bold red]x[/] [link=http://evil]y[/link] \\x1b[31m" in text
        assert_inert(app)


async def test_case_screen_shows_every_field_as_text(evil_folder, make_app) -> None:
    app = make_app(evil_folder)
    async with app.run_test(size=(520, 70)) as pilot:
        await wait_ready(app, pilot)
        ids = [evil(f"id{i}") for i in range(3)]
        screen = CaseScreen("evil-b", ids, 1, other_run_id="evil-a", metric=METRIC)
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        text = screen_text(app)
        for tag in (
            "id1",  # the title
            "Q1",
            "REF",
            "ANS-NA",
            "ANS-NB",
            "CLAIM",
            "CR",
            "CID",
            "CSRC",
            "CTEXT",
            "REPLY",
            "WHY",
            "PH",
            "judge",
            "NA",  # answer border titles
            "NB",
        ):
            assert shown(tag) in text, f"{tag} is not shown literally"
        assert f"({shown('L')})" in text  # the label, in the title
        assert printable(METRIC) in text
        assert_inert(app)
        await pilot.press("tab")  # A's side, then the other metric: its error message
        await pilot.press("m")
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert "error: " + shown("ERR") in text
        await pilot.press("right_square_bracket")
        await wait_ready(app, pilot)
        assert shown("Q2") in screen_text(app)
        assert_inert(app)


async def test_error_notification_stays_literal(evil_folder, make_app) -> None:
    """An unknown run whose reference carries markup: the error line shows it as text."""
    app = make_app(evil_folder)
    async with app.run_test(size=(260, 60)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen(evil("nope"), "evil-b"))
        await wait_ready(app, pilot)
        assert "nope:[bold red]x[/]" in screen_text(app)
        assert_inert(app)


async def test_case_list_stays_literal(evil_folder, make_app) -> None:
    """The run's case list (enter on a run), metric names in its column headers included."""
    app = make_app(evil_folder)
    async with app.run_test(size=(260, 60)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert "id0:[bold red]x[/]" in screen_text(app)
        assert_inert(app)


async def test_rejudge_dialog_shows_judge_replies_literally(evil_folder, make_app) -> None:
    """A judge whose model name and every reply carry markup and escapes: the dialog (judge
    list, old and new verdicts, claims, the parse-failure messages quoting the reply) stays
    literal and inert."""
    from ragtui.trust import user_config_path
    from ragtui.tui.screens.rejudge import RejudgeCaseScreen
    from tests.fakejudge import FakeJudge

    model = evil("model")
    with FakeJudge(models=[model], default=evil("JR")) as fake:
        user_config_path().parent.mkdir(parents=True, exist_ok=True)
        user_config_path().write_text(
            f'[judges.fake]\nprovider = "ollama"\nurl = "{fake.url}"\n'
            f"model = {json.dumps(model)}\nretries = 0\n"
        )
        app = make_app(evil_folder)
        async with app.run_test(size=(300, 70)) as pilot:
            await wait_ready(app, pilot)
            screen = RejudgeCaseScreen("evil-b", evil("id1"))
            await app.push_screen(screen)
            await wait_ready(app, pilot)
            assert "model:[bold red]x[/]" in screen_text(app)  # the judge list
            assert_inert(app)
            screen.query_one(SelectionList).select("faithfulness")
            await pilot.click("#judge-run")
            for _ in range(100):
                await wait_ready(app, pilot)
                if screen.result_id is not None:
                    break
            text = screen_text(app)
            assert len(fake.chat_requests()) >= 1
            assert "After · fake · model:[bold red]x[/]" in text
            assert "JR:[bold red]x[/]" in text  # quoted in the parse-failure message
            for tag in ("CLAIM", "CR"):  # the old side, wrapped in a narrow panel
                assert all(token in text for token in shown(tag).split(" ")), tag
            assert_inert(app)
