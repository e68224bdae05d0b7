"""Every key the README documents exists where it says, and the keyboard conventions (j/k/g/G,
ctrl+d/ctrl+u) move in tables and text panes."""

from __future__ import annotations

import re
from pathlib import Path

from textual import events
from textual.widgets import DataTable

from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.tui.app import RagtuiApp
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.compare import CompareScreen
from ragtui.tui.screens.compare_many import CompareManyScreen
from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.screens.trends import TrendsScreen
from tests.tui.conftest import REPO, wait_ready

# README screen names -> screen classes (None: the app's own bindings)
SCREENS = {
    "everywhere": None,
    "Runs": RunsScreen,
    "Cases of a run": CaseListScreen,
    "Trends": TrendsScreen,
    "Compare": CompareScreen,
    "Case": CaseScreen,
    "Compare many": CompareManyScreen,
}
# README key spellings -> Textual key names
NAMES = {
    "?": "question_mark",
    "/": "slash",
    "esc": "escape",
    "]": "right_square_bracket",
    "[": "left_square_bracket",
}


def readme_keys() -> dict[str, list[str]]:
    """{screen: [keys]} from the README's "| screen | keys |" table."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| screen | keys |") :].split("\n\n")[0]
    out: dict[str, list[str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        # a cell is "`a` / `b` mark A / B · `c` compare": every backticked token is a key
        out[cells[0]] = re.findall(r"`([^`]+)`", cells[1])
    return out


def bound_keys(cls: type | None) -> set[str]:
    bindings = RagtuiApp.BINDINGS if cls is None else cls.BINDINGS
    keys = set()
    for b in bindings:
        for key in b.key.split(","):  # type: ignore[union-attr]
            keys.add(key.strip())
    return keys


def test_every_key_in_the_readme_is_bound_on_its_screen() -> None:
    documented = readme_keys()
    assert set(documented) == set(SCREENS), "README key table rows changed: update SCREENS"
    app_keys = bound_keys(None) | {"ctrl+p", "escape", "enter", "tab"}  # Textual's own
    for screen, keys in documented.items():
        have = bound_keys(SCREENS[screen]) | app_keys
        for key in keys:
            assert NAMES.get(key, key) in have, f"README says {key!r} works on {screen}"


async def test_j_k_g_G_move_in_the_runs_table_and_case_list(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(DataTable)
        assert table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")
        assert table.cursor_row == 0
        await pilot.press("enter")  # the case list: a textual-fastdatatable
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseListScreen)
        grid = app.screen.query_one("#cases")
        await pilot.press("j", "j", "j")
        assert grid.cursor_row == 3
        await pilot.press("G")
        last = grid.cursor_row
        assert last > 3
        await pilot.press("k", "g")
        assert grid.cursor_row == 0
        await pilot.press("ctrl+d")
        assert grid.cursor_row > 0


async def test_typing_j_in_a_filter_types_it(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("slash", "j", "k")
        assert app.screen.query_one("#filter").value == "jk"


def test_the_readme_glossary_says_what_help_says() -> None:
    """Issue 14: a glossary in Help and the README; one source (format.GLOSSARY), no drift."""
    from ragtui.format import GLOSSARY

    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Glossary") :].split("\n## ")[0]
    rows = [r for r in table.splitlines() if r.startswith("| ") and not r.startswith("| term")]
    assert len(rows) >= 25
    for row in rows:
        term, meaning = (c.strip() for c in row.strip("|").split(" | ", 1))
        assert GLOSSARY[term] == meaning, term
    for verdict in ("improved", "regressed", "no meaningful change", "inconclusive", "too few"):
        assert f"| {verdict}" in table


def big_folder(folder: Path, runs: int = 2, cases: int = 40_000) -> Path:
    """Run files big enough that opening the folder takes a moment (written as plain text)."""
    folder.mkdir(parents=True)
    for r in range(runs):
        run = Run(id=f"big-{r}", name="big", created_at="2026-11-20T10:00:00Z", config_key="k")
        path = write_run_file(folder / f"big-{r}{SUFFIX}", run, [])
        line = (
            '{"case_id": "c%d", "question": "q %d", "answer": "a", "scores": {"m": {"value": %s}}}'
        )
        with path.open("a", encoding="utf-8") as out:
            out.writelines(line % (i, i, (i * 7 + r) % 10 / 10) + "\n" for i in range(cases))
    return folder


async def test_keys_pressed_while_a_screen_loads_reach_its_bindings(tmp_path: Path) -> None:
    """Textual focuses a screen's first focusable widget, here the hidden filter box: `q`
    pressed while the folder was still indexing went into the filter and the app stayed."""
    app = RagtuiApp(big_folder(tmp_path / "runs"), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        loading = not app.runs_screen.loaded
        focused = app.focused
        assert focused is None or focused.display, f"hidden {focused!r} has the focus"
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running, f"q did not quit (loading: {loading})"


async def test_no_screen_gives_the_focus_to_a_hidden_widget(tmp_path: Path) -> None:
    """Right after Cases and Compare open (before their workers are done) and once loaded."""
    app = RagtuiApp(big_folder(tmp_path / "runs", cases=20_000), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        for screen, open_it in (
            (CaseListScreen, lambda: app.open_cases("big-0")),
            (CompareScreen, lambda: app.open_compare("big-0", "big-1")),
        ):
            open_it()
            await pilot.pause()
            assert isinstance(app.screen, screen)
            for moment in ("opening", "loaded"):
                focused = app.focused
                assert focused is None or focused.display, f"{moment}: hidden {focused!r}"
                await wait_ready(app, pilot)
            assert app.focused is not None, "nothing has the focus once loaded"
            await pilot.press("escape")
            await wait_ready(app, pilot)


async def test_keys_typed_right_after_q_do_nothing(sample_copy, make_app) -> None:
    """`q` then `e` typed at once: the export dialog was pushed while the app shut down and
    its mount ended in a traceback and exit code 1."""
    app = make_app(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        for key in ("q", "e", "question_mark"):  # as a terminal delivers them: no pause between
            app._driver.send_message(events.Key(key, None))
        await pilot.pause()
    assert app.return_code == 0


async def test_keys_typed_at_once_on_case_never_crash(sample_copy, make_app) -> None:
    """`m` then `]` typed at once (a real terminal, a fast typist): the metric's redraw went
    on after the next case had begun loading, and asserted on the case that was gone."""
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("baseline-2026-11-02", "bm25-2026-11-21")
        await wait_ready(app, pilot)
        await pilot.press("tab", "enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseScreen)
        for _ in range(5):
            keys = ("m", "right_square_bracket", "tab", "m", "left_square_bracket")
            for key in (*keys, "right_square_bracket", "left_square_bracket"):
                app._driver.send_message(events.Key(key, None))
            await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseScreen) and app.screen.data is not None


async def test_tab_on_compare_switches_between_metric_table_and_case_list(
    sample_copy, make_app
) -> None:
    """README: Compare `tab` metric table / case list. From the case list, tab was taken by
    textual-fastdatatable (next cell): it moved the case cursor down a row and the focus never
    went back to the metric table."""
    from textual_fastdatatable import DataTable as FastTable

    from ragtui.tui.widgets.metric_table import MetricTable

    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_compare("baseline-2026-11-02", "strict-v2-2026-11-16")
        await wait_ready(app, pilot)
        assert isinstance(app.focused, MetricTable)
        for expected in (FastTable, MetricTable, FastTable, MetricTable):
            await pilot.press("tab")
            await pilot.pause()
            assert isinstance(app.focused, expected), type(app.focused)
        await pilot.press("tab")
        await pilot.pause()
        cases = app.focused
        assert isinstance(cases, FastTable) and cases.cursor_row == 0
        await pilot.press("shift+tab")
        await pilot.pause()
        assert isinstance(app.focused, MetricTable)
        assert cases.cursor_row == 0  # the case cursor stayed where it was


async def test_j_walks_the_claims_of_the_case_that_right_bracket_opened(
    sample_copy, make_app
) -> None:
    """README: Case `j` / `k` walk the claims. After `]` (or `[`, `u`) the next case drew
    without the focus (the body's loading state took it), so j and k did nothing."""
    import json

    from ragtui.tui.widgets.claims_view import ClaimsView

    run_file = sample_copy / "strict-v2-2026-11-16.ragtui.jsonl"
    rows = [json.loads(x) for x in run_file.read_text(encoding="utf-8").splitlines()[1:]]
    claims_of = {r["case_id"]: len(r.get("claims") or []) for r in rows}
    assert claims_of["refund-04"] >= 2 and claims_of["refund-06"] >= 2  # claims to walk
    app = make_app(sample_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        screen = CaseScreen(
            "strict-v2-2026-11-16",
            ["refund-06", "refund-04"],
            0,
            other_run_id="baseline-2026-11-02",
            metric="faithfulness",
        )
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        for key, case in (
            ("right_square_bracket", "refund-04"),
            ("left_square_bracket", "refund-06"),
        ):
            await pilot.press(key)
            await wait_ready(app, pilot)
            claims = screen.query_one(ClaimsView)
            assert screen.case_id == case and claims.option_count == claims_of[case]
            assert claims.highlighted == 0
            await pilot.press("j")
            await pilot.pause()
            assert claims.highlighted == 1, f"j did nothing after {key}"
            await pilot.press("k")
            await pilot.pause()
            assert claims.highlighted == 0
