"""App shell: opening the folder, notices, Help, the command palette, literal run names."""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Static

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.tui import app as app_module
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.help import HelpScreen
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.widgets.run_table import RunTable
from tests.tui.conftest import JUDGE, history_cases, wait_ready, widget_text


def messages(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.message for n in app._notifications]


def test_run_app_has_the_cli_signature() -> None:
    params = inspect.signature(app_module.run_app).parameters
    assert list(params) == ["folder", "notice"] and params["notice"].default is None


async def test_notice_and_skipped_files_are_shown(history, make_app) -> None:
    (history / f"broken{SUFFIX}").write_text('{"ragtui_run": 1, "id": 5}\n', encoding="utf-8")
    app = make_app(history, notice="no run files in ./runs: showing the demo")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        shown = messages(app)
        assert "no run files in ./runs: showing the demo" in shown
        assert any("broken.ragtui.jsonl" in m for m in shown)
        assert len(app.screen.query_one(RunTable).shown_runs()) == 6  # the others still load
        assert app.margin == 0.05


async def test_a_missing_folder_is_one_clear_error(tmp_path, make_app) -> None:
    app = make_app(tmp_path / "nope")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        status = str(app.screen.query_one("#status", Static).render())
        assert "nope" in status and "no such folder" in status
        assert any("no such folder" in m for m in messages(app))


async def test_help_lists_the_keys_of_every_screen(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(widget_text(s) for s in app.screen.query(".help-section"))
        for needle in (
            "Runs (home)",
            "Mark the highlighted run as A",
            "Compare A with B",
            "Cases of a run",
            "Filter cases by id",
            "Trends",
            "Show the previous metric",
            "Compare A vs B",
            "Case",
            "ctrl+p",
        ):
            assert needle in text, needle
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_command_palette_runs_a_screen_action(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("down", "down", "ctrl+p")  # past the baseline group's line
        await pilot.pause()
        await pilot.press(*"highlighted run as B")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.marks == {"baseline-1121": "B"}


async def test_the_palette_finds_an_action_by_any_word_of_its_name(history, make_app) -> None:
    """Issue 14: "trends" (the binding's name, not in its description) and "time means"
    (two words of the description, out of order) both find the Trends action."""
    from ragtui.tui.screens.trends import TrendsScreen

    for query in ("trends", "time means"):
        app = make_app(history)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(app, pilot)
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*query)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await wait_ready(app, pilot)
            assert isinstance(app.screen, TrendsScreen), query


async def test_the_palette_puts_a_command_named_as_typed_first(history, make_app) -> None:
    """ "compare" then enter compares (not "mark B", whose help says "compared"); ragtui's copy
    comes before Textual's "Copy selected text"; one Quit, ragtui's own."""
    from textual.command import CommandList

    from ragtui.tui.screens.compare import CompareScreen

    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)

        async def listed(query: str) -> list[str]:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*query)
            await pilot.pause(0.3)
            options = app.screen.query_one(CommandList)
            return [
                str(options.get_option_at_index(i).prompt).splitlines()[0]
                for i in range(options.option_count)
            ]

        copy = await listed("copy")
        assert copy[0].startswith("copy: ") and "Copy selected text" in copy[1:], copy
        await pilot.press("escape")
        quits = [c for c in await listed("quit") if "quit" in c.casefold()]
        assert quits == ["quit: Quit ragtui"], quits
        await pilot.press("escape")
        await pilot.press("a", "down", "down", "down", "b")
        shown = await listed("compare")
        assert shown[0].startswith("compare: "), shown
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)


async def test_run_names_and_ids_show_literally(tmp_path: Path, make_app) -> None:
    name = "[bold red]evil[/] \x1b]8;;http://x\x1b\\link"
    run = Run(
        id="r[1]", name=name, created_at="2026-11-30T00:00:00Z", config_key="[b]k", judge=JUDGE
    )
    metric = "[i]m[/]\x1b[2J"
    cases = [
        replace(c, scores={**c.scores, metric: c.scores["faithfulness"]})
        for c in history_cases(3, 0.8, seed=1)
    ]
    write_run_file(tmp_path / "runs" / f"evil{SUFFIX}", run, cases)
    app = make_app(tmp_path / "runs")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        shown = table.text("r[1]", "run")
        assert "[bold red]evil[/]" in shown and "\\x1b]8;;http://x\\x1b\\link" in shown
        assert table.text("r[1]", "config") == "[b]k"
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseListScreen)
        title = str(app.screen.query_one("#title").render())
        assert "[bold red]evil[/]" in title and "\x1b" not in title
        header = widget_text(app.screen.query_one("#cases")).splitlines()[0]
        assert "[i]m[/]\\x1b[2J" in header


async def test_an_empty_folder_says_how_to_fill_it(tmp_path: Path, make_app) -> None:
    (tmp_path / "empty").mkdir()
    app = make_app(tmp_path / "empty")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        status = widget_text(app.screen.query_one("#status"))
        assert "no run files" in status and "ragtui import" in status


async def test_r_picks_up_a_new_run_file(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        assert "late" not in table.shown_runs()
        run = Run(
            id="late",
            name="late",
            created_at="2026-11-29T00:00:00Z",
            config_key="cfg-late",
            judge=JUDGE,
        )
        write_run_file(history / f"late{SUFFIX}", run, history_cases(4, 0.9, seed=3))
        await pilot.press("r")
        await wait_ready(app, pilot)
        assert table.shown_runs()[-1] == "late"
        (history / f"baseline-1122{SUFFIX}").unlink()
        await pilot.press("r")
        await wait_ready(app, pilot)
        await pilot.press("r")  # the same again: nothing new, and it says so
        await wait_ready(app, pilot)
        said = [n.message for n in app._notifications if n.title == "re-scanned"]
        assert said == ["1 run new or changed", "1 gone", "nothing changed"]


async def test_a_run_file_being_written_shows_up_and_grows_without_a_restart(
    history, make_app
) -> None:
    """Issue 14: the open folder is watched. A harness writes a run file case by case (header
    first, then appended lines): it appears in Runs, and its N grows, with no key pressed."""
    import asyncio
    import json

    from ragtui.core.runfile import case_to_json, header_to_json

    app = make_app(history, watch=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        run = Run(id="live", name="live", created_at="2026-11-29T00:00:00Z", judge=JUDGE)
        cases = history_cases(6, 0.9, seed=4)
        path = history / f"live{SUFFIX}"
        with path.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(header_to_json(run)) + "\n")
            for case in cases[:2]:
                handle.write(json.dumps(case_to_json(case)) + "\n")

        async def until(check) -> None:  # type: ignore[no-untyped-def]
            for _ in range(200):  # the watch debounces 0.3 s; a loaded machine needs longer
                await asyncio.sleep(0.05)
                await pilot.pause()
                if check():
                    return
            raise AssertionError("the Runs screen did not follow the file")

        def n_cases() -> int | None:
            model = app.screen.model
            rows = [] if model is None else [r for r in model.runs if r.id == "live"]
            return rows[0].n_cases if rows else None

        await until(lambda: "live" in table.shown_runs() and n_cases() == 2)
        with path.open("a", encoding="utf-8") as handle:
            for case in cases[2:]:
                handle.write(json.dumps(case_to_json(case)) + "\n")
        await until(lambda: n_cases() == 6)


async def test_sample_history_tour(sample_copy, make_app) -> None:
    """Mark A and B on the demo history, compare, come back, Trends, Help."""
    from ragtui.tui.screens.compare import CompareScreen
    from ragtui.tui.screens.trends import TrendsScreen

    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        runs = table.shown_runs()
        await pilot.press("a")  # on the first line (a group line: its first run)
        table.move_cursor(row=table.row_of(next(r for r in runs if r.startswith("strict-v2"))))
        await pilot.press("b", "c")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.a_run_id == runs[0] and app.screen.b_run_id.startswith("strict-v2")
        await pilot.press("escape", "t")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, TrendsScreen)
        assert "rerun spread" in widget_text(app.screen.query_one("#trend-table"))
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_margin_comes_from_ragtui_toml(history, make_app) -> None:
    """A folder's ragtui.toml may set data settings: the margin, in points."""
    (history / "ragtui.toml").write_text("[compare]\nmargin = 3\n", encoding="utf-8")
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        assert app.margin == pytest.approx(0.03)


async def test_a_bad_margin_is_a_warning_and_the_default(history, make_app) -> None:
    (history / "ragtui.toml").write_text("[compare]\nmargin = 0.05\n", encoding="utf-8")
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        assert app.margin == 0.05
        assert any(
            "compare.margin: margins are in points, from 1 to 50" in m and "using the defaults" in m
            for m in messages(app)
        )


async def test_a_folder_judge_is_ignored_with_a_notice(history, make_app) -> None:
    (history / "ragtui.toml").write_text(
        '[judges.x]\nprovider = "ollama"\nurl = "http://127.0.0.1:9"\nmodel = "m"\n',
        encoding="utf-8",
    )
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        assert any("ignored [judges]" in m and "ragtui trust" in m for m in messages(app))


async def test_a_second_ragtui_on_the_folder_browses_with_a_private_index(
    history, make_app
) -> None:
    """Another process holds the index: the app still opens, says so, and lists the runs."""
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from ragtui.core.store import Store; "
            "s = Store.open(sys.argv[1]); print('open', flush=True); time.sleep(60)",
            str(history),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        app = make_app(history)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(app, pilot)
            assert any("another ragtui holds" in m for m in messages(app))
            assert len(app.screen.query_one(RunTable).shown_runs()) == 6
    finally:
        holder.kill()
        holder.wait()


async def test_a_folder_of_foreign_result_files_opens_with_them_imported(
    tmp_path, make_app
) -> None:
    import shutil

    data = Path(__file__).parents[1] / "data"
    shutil.copy(data / "ragas" / "ragas_v04_refunds.csv", tmp_path)
    shutil.copy(data / "inspect" / "refunds.eval", tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        formats = sorted(r["source_format"] for r in app.store.runs().to_pylist())
        assert formats[0] == "inspect" and formats[-1] == "ragas"
        shown = app.screen.query_one(RunTable).shown_runs()
        assert len(shown) == len(formats) >= 2
        assert any("imported" in line and "foreign result file" in line for line in messages(app))


async def test_import_into_the_open_folder_just_works(history, make_app) -> None:
    """Issue 14: `ragtui import FILE --into` the folder the dashboard holds writes the run file
    (the index is the dashboard's), and the dashboard's watch lists the new run."""
    import asyncio
    import subprocess
    import sys

    source = Path(__file__).resolve().parents[1] / "data" / "ragas" / "ragas_v04_refunds.csv"
    app = make_app(history, watch=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        before = len(table.shown_runs())
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "ragtui", "import", str(source), "--into", str(history)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert done.returncode == 0, done.stderr
        assert "another ragtui holds" in done.stderr  # said once, then it just works
        for _ in range(200):
            await asyncio.sleep(0.05)
            await pilot.pause()
            if len(table.shown_runs()) == before + 1:
                break
        assert any(r.startswith("ragas-v04-refunds") for r in table.shown_runs())


def test_the_app_exits_non_zero_after_a_crash(history, monkeypatch) -> None:
    """Issue 16: a crash is never a success: `ragtui` returns the app's error status."""
    from ragtui.tui.app import RagtuiApp, run_app

    def boom(self: RagtuiApp) -> None:
        raise RuntimeError("boom")

    original = RagtuiApp.run
    monkeypatch.setattr(RagtuiApp, "on_mount", boom)
    monkeypatch.setattr(RagtuiApp, "run", lambda self: original(self, headless=True))
    assert run_app(history) == 1


def test_the_watch_ignores_what_lies_behind_a_symlinked_folder(tmp_path) -> None:
    """The scan does not follow a symlinked folder; the watch did (a link to / made it walk
    into /proc and stop): what changes behind one is not worth a re-scan."""
    from ragtui.tui.app import _worth_a_look

    (tmp_path / "sub").mkdir()
    (tmp_path / "root").symlink_to("/")
    assert _worth_a_look(None, str(tmp_path / "sub" / "a.ragtui.jsonl"), tmp_path)
    assert _worth_a_look(None, str(tmp_path / "b.ragtui.jsonl"), tmp_path)
    assert not _worth_a_look(None, str(tmp_path / "root" / "proc" / "1" / "stat"), tmp_path)
    assert not _worth_a_look(None, str(tmp_path / ".ragtui.duckdb.wal"), tmp_path)


async def test_a_result_file_still_being_written_is_looked_at_again(
    history: Path, make_app, monkeypatch
) -> None:
    """The watch leaves a foreign result file changed a moment ago for later; nothing else may
    stir the folder after its writer's last write, so the app looks again by itself."""
    from ragtui.services import workspace as workspaces
    from ragtui.services.workspace import FolderChanges

    monkeypatch.setattr(workspaces, "SETTLE_SECONDS", 0.0)  # look again after 0.25 s
    app = make_app(history)
    async with app.run_test() as pilot:
        await wait_ready(app, pilot)
        looks: list[dict] = []
        monkeypatch.setattr(app, "refresh_folder", lambda **kw: looks.append(kw))
        for _ in range(3):  # a writer going on: each refresh finds the file waiting again
            app._folder_refreshed(FolderChanges([], [], [], [], waiting=["results.csv"]))
        await pilot.pause(0.1)
        assert looks == []  # not at once: the file is given time to hold still
        await pilot.pause(0.4)
        assert looks == [{}]  # one look, not one per refresh (they chained up to 20 a second)
        app._folder_refreshed(FolderChanges([], [], [], [], waiting=["results.csv"]))
        await pilot.pause(0.5)
        assert looks == [{}, {}]  # and the next waiting file gets its own


async def test_a_watch_that_stopped_stays_said_on_the_runs_line(
    history: Path, make_app, monkeypatch
) -> None:
    """The live watch ending (the system's inotify limit reached, say) was one toast that
    faded: from then on new run files never showed, and nothing on screen said why."""
    import watchfiles

    async def no_more_watches(*args, **kwargs):  # as watchfiles fails on a full inotify table
        raise OSError("OS file watch limit reached")
        yield  # (an async generator, as awatch is)

    monkeypatch.setattr(watchfiles, "awatch", no_more_watches)
    app = make_app(history, watch=True)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_ready(app, pilot)
        await pilot.pause(0.1)
        status = str(app.screen.query_one("#status").render())
        assert "not watching the folder (OS file watch limit reached; r re-scans)" in status
