"""Re-judge a case (`R`), a run (then Compare with judge agreement), and the Noise screen,
against the real fake judge HTTP server (tests/fakejudge.py) on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, SelectionList

from ragtui.core.paths import run_file_name
from ragtui.trust import user_config_path
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.screens.noise import NoiseScreen
from ragtui.tui.screens.rejudge import RejudgeCaseScreen, RejudgeRunScreen
from ragtui.tui.widgets.run_table import RunTable
from tests.fakejudge import FakeJudge, Fault, Reply
from tests.tui.conftest import wait_ready, widget_text
from tests.tui.history_b import WORST, screen_text, write_history

PRECISION = json.dumps({"chunks": [{"chunk": i, "useful": i == 1} for i in (1, 2, 3)]})


def scripted(fake: FakeJudge) -> FakeJudge:
    """Faithfulness: NO for the fixture's bad answers, else YES; relevance 4; precision JSON."""
    fake.when("One digit, 1 to 5", "4")
    fake.when("chunks are useful", PRECISION)
    fake.when("Support handles", "NO")
    return fake


@pytest.fixture
def fake() -> Iterator[FakeJudge]:
    with FakeJudge(models=["judge-1"]) as server:
        yield scripted(server)


def write_config(folder: Path, url: str, concurrency: int = 4) -> None:
    """Judges go in the user's own config (a runs folder's ragtui.toml may not name judges)."""
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[judges.fake]\nprovider = "ollama"\nurl = "{url}"\nmodel = "judge-1"\n'
        f"concurrency = {concurrency}\ntimeout = 5\nretries = 0\n"
    )


@pytest.fixture
def runs(tmp_path: Path, fake: FakeJudge) -> tuple[Path, dict[str, str]]:
    ids = write_history(tmp_path / "runs")
    write_config(tmp_path / "runs", fake.url)
    return tmp_path / "runs", ids


def file_cases(folder: Path, run_id: str) -> list[dict]:
    """The cases of a run file the test wrote (`<id>.ragtui.jsonl`) or ragtui wrote."""
    path = folder / f"{run_id}.ragtui.jsonl"
    path = path if path.exists() else folder / run_file_name(run_id)
    return [json.loads(x) for x in path.read_text().splitlines()[1:]]


async def run_form(app, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.click("#judge-run")
    await wait_ready(app, pilot)
    if app.screen.query("#batch-start"):  # a run-level batch first says what it will do
        await pilot.click("#batch-start")
    for _ in range(50):  # the batch runs in a worker thread; wait for it and its messages
        await wait_ready(app, pilot)
        if not getattr(app.screen, "running", False):
            break
    await wait_ready(app, pilot)


async def test_rejudge_case_shows_old_and_new_verdicts(runs, fake, make_app) -> None:
    path, ids = runs
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        case = CaseScreen(ids["small-generator"], [WORST], 0, other_run_id=ids["baseline"])
        await app.push_screen(case)
        await wait_ready(app, pilot)
        await pilot.press("R")
        await wait_ready(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, RejudgeCaseScreen) and dialog.run_id == ids["small-generator"]
        # the run's own metrics that ragtui can judge are ticked
        ticked = dialog.query_one(SelectionList).selected
        assert sorted(ticked) == ["answer_relevance", "context_precision", "faithfulness"]
        await run_form(app, pilot)
        text = screen_text(app)
        assert "Before · qwen2.5:7b · small-generator" in text
        assert "After · fake · judge-1" in text
        assert "1 case judged; 3 scored, 0 parse failures, 0 errors" in text
        requests = fake.chat_requests()
        assert len(requests) == 3  # one call per metric, for this one case
        assert all("more than 7 days after renewal" in r.prompt for r in requests)
        assert sum("Support handles refund case 7" in r.prompt for r in requests) == 2
        # the new grades, read from the run file the batch wrote
        rejudged = [c for c in file_cases(path, dialog.result_id) if c["case_id"] == WORST]
        assert rejudged[0]["scores"]["faithfulness"]["label"] == "NO"
        assert rejudged[0]["scores"]["answer_relevance"]["value"] == 0.75
        assert re.search(r"answer_relevance  75\b", text)
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert app.screen is case
        history = widget_text(case.query_one("#case-history"))  # below the fold at 40 rows
        assert "history · this case in 6 runs" in history  # the re-judge joined it


async def test_unreachable_judge_is_one_line_and_the_form_stays(tmp_path, make_app) -> None:
    path = tmp_path / "runs"
    ids = write_history(path)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_config(path, f"http://127.0.0.1:{port}")
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeCaseScreen(ids["baseline"], WORST))
        await wait_ready(app, pilot)
        await run_form(app, pilot)
        status = str(app.screen.query_one("#rejudge-status").render())
        assert f"127.0.0.1:{port}" in status and "\n" not in status.strip()
        assert not app.screen.query_one("#judge-run").disabled  # try again, or esc
        assert app.screen.result_id is None


async def test_a_case_whose_every_grade_the_judge_failed_is_its_reason_not_a_crash(
    tmp_path, make_app
) -> None:
    path = tmp_path / "runs"
    ids = write_history(path)
    with FakeJudge(models=["judge-1"], default=Fault(500, body="model overloaded")) as server:
        write_config(path, server.url)
        app = make_app(path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(app, pilot)
            await app.push_screen(RejudgeCaseScreen(ids["baseline"], WORST))
            await wait_ready(app, pilot)
            await run_form(app, pilot)
            status = str(app.screen.query_one("#rejudge-status").render())
            assert "HTTP 500" in status and "model overloaded" in status
            assert WORST in status and "Error" not in status  # no AssertionError(...)
            assert not app.screen.query_one("#judge-run").disabled  # try again, or esc
            assert app.screen.result_id is None


async def test_no_judges_configured_says_how_to_add_one(tmp_path, make_app) -> None:
    path = tmp_path / "runs"
    ids = write_history(path)
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeCaseScreen(ids["baseline"], WORST))
        await wait_ready(app, pilot)
        assert "no judges configured: add a [judges.NAME] table" in screen_text(app)
        assert app.screen.query_one("#judge-run").disabled
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RejudgeCaseScreen)


def kappa(x: list[str], y: list[str]) -> float:
    """Cohen's κ by its definition, for the check below."""
    n = len(x)
    observed = sum(a == b for a, b in zip(x, y, strict=True)) / n
    cx, cy = Counter(x), Counter(y)
    expected = sum(cx[k] * cy[k] for k in set(x) | set(y)) / n**2
    return (observed - expected) / (1 - expected)


async def test_rejudge_run_opens_compare_with_judge_agreement(runs, fake, make_app) -> None:
    path, ids = runs
    parent = ids["small-generator"]
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeRunScreen(parent))
        await wait_ready(app, pilot)
        await run_form(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.a_run_id == parent and compare.b_run_id.startswith(parent + "--rejudge-fake")
        assert len(fake.chat_requests()) == 40 * 3
        old = {c["case_id"]: c["scores"]["faithfulness"]["label"] for c in file_cases(path, parent)}
        new = {
            c["case_id"]: c["scores"]["faithfulness"]["label"]
            for c in file_cases(path, compare.b_run_id)
        }
        order = sorted(old)
        k = kappa([old[c] for c in order], [new[c] for c in order])
        flips = sum(old[c] != new[c] for c in order)
        while compare.metric != "faithfulness":  # its agreement first in the notes
            await pilot.press("m")
            await wait_ready(app, pilot)
        text = screen_text(app)
        assert "A small-generator  vs  B small-generator · fake" in text
        assert f"agreement faithfulness, A judge vs B judge, on 40 cases: κ {k:.2f}" in text
        assert f"same grade in {40 - flips}" in text and f"; {flips} flipped" in text


async def test_stopping_a_run_rejudge_keeps_finished_cases_and_resumes(tmp_path, make_app) -> None:
    path = tmp_path / "runs"
    ids = write_history(path)
    with FakeJudge(models=["judge-1"], delay=0.05) as slow:
        scripted(slow)
        write_config(path, slow.url, concurrency=1)
        app = make_app(path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(app, pilot)
            screen = RejudgeRunScreen(ids["baseline"])
            await app.push_screen(screen)
            await wait_ready(app, pilot)
            await pilot.click("#judge-run")
            await wait_ready(app, pilot)
            await pilot.click("#batch-start")
            written = path / "unknown"
            for _ in range(400):  # until two cases are in the file: stop mid-batch, for sure
                await pilot.pause(0.05)
                files = list(path.glob(f"{ids['baseline']}--rejudge-*.ragtui.jsonl"))
                if files and len(files[0].read_text().splitlines()) >= 3:
                    written = files[0]
                    break
            assert written.exists()
            assert screen.running
            await pilot.press("escape")  # stop: the screen closes at once
            await pilot.pause()
            assert app.screen is not screen
            # every worker done (the batch's, and a listing the new file started: a newer one
            # cancels it, which wait_for_complete would raise as WorkerCancelled)
            await wait_ready(app, pilot)
            files = list(path.glob(f"{ids['baseline']}--rejudge-*.ragtui.jsonl"))
            kept = len(files[0].read_text().splitlines()) - 1
            assert 1 <= kept < 40
            # back on Runs, the stopped batch is listed as it now is: not "(running)" for good
            # (a listing made while the batch still held its file says running; the batch's
            # end lists the folder again, a message or two later)
            for _ in range(100):
                await wait_ready(app, pilot)
                table = app.screen.query_one(RunTable)
                stopped = next(r for r in table.shown_runs() if "--rejudge-" in r)
                shown = table.text(stopped, "run")  # a column of every layout
                if not shown.endswith("(running)"):
                    break
                await pilot.pause(0.05)
            assert not shown.endswith("(running)"), shown
            calls = len(slow.chat_requests())
            assert calls < 40 * 3
            # J again: the finished cases are not judged twice (no need to be slow now)
            slow.delay = 0.0
            again = RejudgeRunScreen(ids["baseline"])
            await app.push_screen(again)
            await wait_ready(app, pilot)
            await run_form(app, pilot)
            assert isinstance(app.screen, CompareScreen), screen_text(app)
            assert len(file_cases(path, app.screen.b_run_id)) == 40
            assert len(slow.chat_requests()) - calls <= (40 - kept) * 3


async def test_noise_screen_reruns_judge_and_shows_floor_and_verdict(runs, fake, make_app) -> None:
    path, ids = runs
    parent = ids["baseline"]
    good = [c["answer"] for c in file_cases(path, parent) if c["answer"].startswith("Per the")]
    flipped = good[:3]  # the second judge pass says NO to three good answers
    seen: Counter[str] = Counter()

    def responder(request) -> Reply:  # type: ignore[no-untyped-def]
        seen[request.prompt] += 1
        hit = any(answer in request.prompt for answer in flipped)
        return Reply("NO" if hit and seen[request.prompt] == 2 else "YES")

    fake.responder = responder
    app = make_app(path)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_ready(app, pilot)
        screen = NoiseScreen(parent, against=ids["small-generator"])
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        metrics = screen.query_one(SelectionList)
        metrics.deselect_all()
        metrics.select("faithfulness")
        screen.query_one("#judge-times", Input).value = "2"
        await run_form(app, pilot)
        text = screen_text(app)
        m1 = 100 * len(good) / 40
        m2 = 100 * (len(good) - 3) / 40
        floor = 100 * 1.96 * 3**0.5 / 40  # 1.96·√(Σe²)/N with three e = 1
        assert f"faithfulness: reruns {m1:.1f} / {m2:.1f} · noise floor ±{floor:.1f} points" in text
        assert f"reruns differ by {m1 - m2:.1f} points" in text
        assert "verdict with the noise floor: A" in text
        # the runs were graded by qwen2.5:7b, the noise by judge-1 (B re-judged by it): the
        # verdict after is another judge's, said so (it read "before → with the measured noise")
        assert "before → with the measured noise" not in text
        assert (
            "verdict of the pending comparison, graded by qwen2.5:7b → graded by the noise "
            "judge judge-1, with its noise" in text
        )
        assert "two judges: a verdict that changed may have changed with the judge" in text
        # baseline vs small-generator was "regressed" on faithfulness (see test_compare.py)
        assert re.search(r"faithfulness  regressed → \w", text)
        assert re.search(
            r"faithfulness\s+(regressed|improved|no meaningful change|inconclusive)", text
        )
        assert (
            sum(1 for r in fake.chat_requests() if "One word: YES, PARTIAL or NO" in r.prompt) >= 80
        )


async def test_n_on_compare_opens_noise_for_a_against_b_and_back_recompares(runs, make_app) -> None:
    path, ids = runs
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        compare = CompareScreen(ids["baseline"], ids["small-generator"])
        await app.push_screen(compare)
        await wait_ready(app, pilot)
        first = compare.comparison
        await pilot.press("n")
        await wait_ready(app, pilot)
        noise = app.screen
        assert isinstance(noise, NoiseScreen)
        assert (noise.run_id, noise.against) == (ids["baseline"], ids["small-generator"])
        assert "ragtui · Noise  baseline  (pending comparison vs small-gen-1)" in screen_text(app)
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert app.screen is compare
        assert compare.comparison is not None and compare.comparison is not first  # recomputed


async def test_J_on_runs_rejudges_the_highlighted_run_and_n_opens_noise(
    runs, fake, make_app
) -> None:
    from ragtui.tui.screens.runs import RunsScreen
    from ragtui.tui.widgets.run_table import RunTable

    path, ids = runs
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        runs_screen = app.screen
        assert isinstance(runs_screen, RunsScreen)
        table = runs_screen.query_one(RunTable)
        table.move_cursor(row=table.row_of(ids["strict-prompt"]))
        await pilot.pause()
        await pilot.press("n")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, NoiseScreen) and app.screen.run_id == ids["strict-prompt"]
        await pilot.press("escape")
        await wait_ready(app, pilot)
        await pilot.press("J")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, RejudgeRunScreen)
        await run_form(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.a_run_id == ids["strict-prompt"]
        while compare.metric != "faithfulness":  # its agreement first in the notes
            await pilot.press("m")
            await wait_ready(app, pilot)
        assert "agreement faithfulness, A judge vs B judge" in screen_text(app)
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert app.screen is runs_screen
        assert compare.b_run_id in table.shown_runs()  # the new run is listed on return


async def test_a_run_rejudge_says_what_it_will_do_and_sends_nothing_before_start(
    runs, fake, make_app
) -> None:
    """Issue 14: cases x metrics = calls and the judge, shown before any call; Back returns."""
    path, ids = runs
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeRunScreen(ids["baseline"]))
        await wait_ready(app, pilot)
        ticked = list(app.screen.query_one(SelectionList).selected)
        await pilot.click("#judge-run")
        await wait_ready(app, pilot)
        text = screen_text(app)
        n = len(file_cases(path, ids["baseline"]))
        assert f"{n} cases × {len(ticked)} metrics = {n * len(ticked)} judge calls" in text
        assert f"fake (ollama judge-1 at {fake.url})" in text
        assert fake.chat_requests() == []
        await pilot.click("#batch-back")
        await wait_ready(app, pilot)
        assert app.screen.query_one("#batch-form").display
        assert fake.chat_requests() == []


async def test_a_run_rejudge_begun_before_says_only_the_calls_left_are_sent(
    runs, fake, make_app
) -> None:
    """Three cases were judged by an earlier run of the same batch: the plan says so and
    counts only the calls left, which is what the judge then receives (it resumes)."""
    from ragtui.config import load_config
    from ragtui.core.store import Store
    from ragtui.judge.runner import judge_run

    path, ids = runs
    cases = [c["case_id"] for c in file_cases(path, ids["baseline"])]
    n, metrics = len(cases), ["answer_relevance", "faithfulness"]
    with Store.open(path) as store:
        cfg = load_config(path).judge("fake")
        await judge_run(store, ids["baseline"], cfg, metrics=metrics, case_ids=cases[:3])
    fake.reset()
    scripted(fake)
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeRunScreen(ids["baseline"]))
        await wait_ready(app, pilot)
        ticked = app.screen.query_one(SelectionList)
        ticked.deselect_all()
        for m in metrics:
            ticked.select(m)
        await pilot.click("#judge-run")
        await wait_ready(app, pilot)
        flat = " ".join(screen_text(app).split())
        left = (n - 3) * 2
        assert (
            f"{n} cases × 2 metrics = {n * 2} judge calls, 6 of them made by an earlier run" in flat
        )
        assert f"{left} left to send" in flat
        assert fake.chat_requests() == []
        await pilot.click("#batch-start")
        for _ in range(50):
            await wait_ready(app, pilot)
            if not getattr(app.screen, "running", False):
                break
        assert len(fake.chat_requests()) == left


async def test_rejudge_of_a_run_that_no_longer_exists_is_a_line_not_a_crash(
    runs, fake, make_app
) -> None:
    """Issue 13: a worker's failure is an error line and a notification; the app goes on."""
    path, _ = runs
    app = make_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(RejudgeRunScreen("no-such-run"))
        await wait_ready(app, pilot)
        assert app.is_running and isinstance(app.screen, RejudgeRunScreen)
        assert "no-such-run" in screen_text(app)
        assert any("no-such-run" in str(n.message) for n in app._notifications)
        await pilot.press("escape")
        await wait_ready(app, pilot)
        assert app.is_running


async def test_a_noise_check_says_what_it_will_do_and_sends_nothing_before_start(
    runs, fake, make_app
) -> None:
    """cases × metrics × reruns = calls, the judge, and what the pending comparison may add;
    nothing reaches the judge before Start; Back returns to the form."""
    path, ids = runs
    n = len(file_cases(path, ids["baseline"]))
    app = make_app(path)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_ready(app, pilot)
        screen = NoiseScreen(ids["baseline"], against=ids["small-generator"])
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        metrics = screen.query_one(SelectionList)
        metrics.deselect_all()
        metrics.select("faithfulness")
        metrics.select("answer_relevance")
        screen.query_one("#judge-times", Input).value = "4"
        await pilot.click("#judge-run")
        await wait_ready(app, pilot)
        text = screen_text(app)
        assert f"Noise check of baseline: {n} cases × 2 metrics × 4 reruns = {n * 8} judge" in text
        assert f"fake (ollama judge-1 at {fake.url})" in text
        b = len(file_cases(path, ids["small-generator"]))
        flat = " ".join(text.split())  # the plan wraps at the screen's width
        assert f"B is re-judged first, up to {b * 2} more calls" in flat
        assert fake.chat_requests() == []
        await pilot.click("#batch-back")
        await wait_ready(app, pilot)
        assert screen.query_one("#batch-form").display
        assert not screen.query_one("#batch-confirm").display
        assert fake.chat_requests() == [] and not screen.running


async def test_noise_under_the_runs_own_judge_keeps_before_and_after_one_judge(
    runs, fake, make_app
) -> None:
    """A and B were both re-judged by the noise judge: before and after are verdicts of one
    judge, so the screen says the verdict moved with the measured noise, with no two-judge
    line."""
    from ragtui.config import load_config
    from ragtui.core.store import Store
    from ragtui.judge.runner import judge_run

    path, ids = runs
    with Store.open(path) as store:
        cfg = load_config(path).judge("fake")
        a = await judge_run(store, ids["baseline"], cfg, metrics=["faithfulness"])
        b = await judge_run(store, ids["small-generator"], cfg, metrics=["faithfulness"])
    app = make_app(path)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_ready(app, pilot)
        screen = NoiseScreen(a.run_id, against=b.run_id)
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        metrics = screen.query_one(SelectionList)
        metrics.deselect_all()
        metrics.select("faithfulness")
        screen.query_one("#judge-times", Input).value = "2"
        await run_form(app, pilot)
        text = screen_text(app)
        assert "verdict of the pending comparison, before → with the measured noise" in text
        assert "two judges" not in text and "whose own noise may differ" not in text


def test_re_judge_and_noise_say_esc_alike() -> None:
    """ "esc Back / stop" on Re-judge, "esc back / stop" on Noise."""
    from ragtui.tui.screens.noise import NoiseScreen
    from ragtui.tui.screens.rejudge import RejudgeRunScreen

    def esc(cls: type) -> str:
        return next(b.description for b in cls.BINDINGS if b.key == "escape")  # type: ignore[attr-defined]

    assert esc(RejudgeRunScreen) == esc(NoiseScreen) == "back / stop"
