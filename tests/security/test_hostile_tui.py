"""The real app on the hostile folder (every field and file name hostile) with a hostile judge
server: every screen and every notification, as rendered segments, holds no control, bidi or
invisible character (the raw-bytes check in a real terminal is test_tmux.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import SelectionList

from ragtui.trust import user_config_path
from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.screens.help import HelpScreen
from ragtui.tui.screens.noise import NoiseScreen
from ragtui.tui.screens.rejudge import RejudgeCaseScreen, RejudgeRunScreen
from ragtui.tui.screens.trends import TrendsScreen
from tests.fakejudge import FakeJudge, Fault
from tests.security.hostile import CASE, METRIC, NEVER, RUN_A, RUN_B, evil, write_hostile_folder
from tests.tui.conftest import wait_ready
from tests.tui.history_b import screen_segments, screen_text

# hostile text must never break a frame, so every frame is drawn (tests/conftest.py)
pytestmark = pytest.mark.paint_every_frame


def dangerous(text: str) -> list[str]:
    bad = [c for c in text if (ord(c) < 32 and c not in "\n") or c in NEVER or c == "\x7f"]
    return [f"U+{ord(c):04X}" for c in bad]


def check(app: RagtuiApp, where: str) -> None:
    seen = []
    for seg in screen_segments(app):
        seen += dangerous(seg.text)
        if seg.style is not None and seg.style.link:
            seen.append(f"link {seg.style.link}")
    for note in app._notifications:
        seen += dangerous(note.message) + dangerous(note.title or "")
    assert seen == [], f"{where}: {seen[:10]}"


@pytest.fixture
def hostile_judge() -> Iterator[FakeJudge]:
    fake = FakeJudge(models=["judge-1", evil("model")], default=evil("reply"))
    fake.when("answer1", Fault(400, body=evil("errorbody")))
    with fake:
        yield fake


@pytest.fixture
def folder(tmp_path: Path, hostile_judge: FakeJudge) -> Path:
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[judges.j]\nprovider = "ollama"\nurl = "{hostile_judge.url}"\nmodel = "judge-1"\n'
        "retries = 0\ntimeout = 10\n",
        encoding="utf-8",
    )
    folder = write_hostile_folder(tmp_path / "runs")
    # a folder's judge: ignored, and its notice names the hostile path
    (folder / "ragtui.toml").write_text(
        f"[judges.{json.dumps(evil('fj'))}]\nprovider = 'ollama'\nurl = 'http://127.0.0.1:9'\n"
        "model = 'm'\n",
        encoding="utf-8",
    )
    return folder


async def settle(app: RagtuiApp, pilot, where: str) -> None:  # type: ignore[no-untyped-def]
    await wait_ready(app, pilot)
    check(app, where)


async def test_every_screen_and_toast_stays_inert(folder: Path, hostile_judge: FakeJudge) -> None:
    app = RagtuiApp(folder)
    async with app.run_test(size=(220, 60)) as pilot:
        await settle(app, pilot, "runs")
        assert len(app._notifications) >= 3  # ignored judges, imported csv, skipped file
        assert "name\\x1b]52" in screen_text(app)
        await app.push_screen(CaseListScreen(RUN_A))
        await settle(app, pilot, "case list")
        await app.push_screen(CaseScreen(RUN_B, [CASE, evil("case2")], 0, RUN_A, METRIC))
        await settle(app, pilot, "case")
        for key in ("tab", "m", "right_square_bracket"):
            await pilot.press(key)
            await settle(app, pilot, f"case after {key}")
        await app.push_screen(CompareScreen(RUN_A, RUN_B))
        await settle(app, pilot, "compare")
        await pilot.press("m")
        await settle(app, pilot, "compare, next metric")
        await app.push_screen(TrendsScreen(["faithfulness", METRIC], METRIC))
        await settle(app, pilot, "trends")
        await pilot.press("c")  # quality against cost: the config names beside their dots
        await settle(app, pilot, "trends, quality against cost")
        await app.push_screen(HelpScreen())
        await settle(app, pilot, "help")


async def test_judge_dialogs_with_a_hostile_server_stay_inert(
    folder: Path, hostile_judge: FakeJudge
) -> None:
    app = RagtuiApp(folder)
    async with app.run_test(size=(220, 60)) as pilot:
        await wait_ready(app, pilot)
        for case in (CASE, evil("case0")):  # one gets a 400 with a hostile body
            screen = RejudgeCaseScreen(RUN_A, case)
            await app.push_screen(screen)
            await settle(app, pilot, "re-judge case dialog")
            screen.query_one(SelectionList).select("faithfulness")
            await pilot.click("#judge-run")
            for _ in range(100):
                await wait_ready(app, pilot)
                if screen.result_id is not None or "error" in screen_text(app).lower():
                    break
            check(app, "re-judge case result")
            app.pop_screen()
            await wait_ready(app, pilot)
        assert hostile_judge.chat_requests()
        await app.push_screen(RejudgeRunScreen(RUN_A))
        await settle(app, pilot, "re-judge run dialog")
        await app.push_screen(NoiseScreen(RUN_A, against=RUN_B))
        await settle(app, pilot, "noise dialog")
