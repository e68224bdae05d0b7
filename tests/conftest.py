"""Every test runs with its own empty user config dir, so the machine's own
~/.config/ragtui (judges, trusted files) never leaks into a test, nor a test into it."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest
import textual._wait
import textual.constants
from textual._context import visible_screen_stack
from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen

from ragtui.core.workers import cores

# Textual's Pilot waits after every key press and pause until the process has used under 5%
# of a CPU over one window (20 ms, twice per key). The same rule over 5 ms windows waits a
# quarter as long: the TUI tests spend most of their time in these waits, not in work.
textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20

# The suite runs in one worker process per core (pytest-xdist): DuckDB's own threads, one per
# core in each worker, would only contend with the other workers (~10% of the suite's CPU in
# their scheduling). One thread each; `test_store` opens an index with DuckDB's default too.
os.environ.setdefault("RAGTUI_DUCKDB_THREADS", "1")

# Scrolls and fades end where they would, at once: a test waits for animations to finish
# (half a second for a `G` in a long pane), and none of them is what a test checks.
textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]

# Every app a test starts parses the same CSS again (app.tcss and each widget's DEFAULT_CSS:
# ~40 ms of CPU an app). Textual caches parsed rules per stylesheet, keyed on the CSS text
# and where it came from; one cache per test process, keyed also on the theme's variables,
# gives each app the rules an earlier app parsed from the same text (Textual already shares
# them between its own re-parses).
_PARSED: dict[tuple[object, ...], object] = {}
_parse_rules = Stylesheet._parse_rules


def _shared_parse_rules(self: Stylesheet, css: str, read_from, *args, **kwargs):  # type: ignore[no-untyped-def]
    key = (
        css,
        read_from,
        args,
        tuple(sorted(kwargs.items())),
        tuple(sorted(self._variables.items())),
    )
    if key not in _PARSED:
        _PARSED[key] = _parse_rules(self, css, read_from, *args, **kwargs)
    return _PARSED[key]


Stylesheet._parse_rules = _shared_parse_rules  # type: ignore[method-assign]

# A headless app composes every changed region of every frame into an update that its driver
# then throws away (a third of a TUI test's CPU). The app is left to run as it would; only that
# discarded update is skipped. What a test reads off the screen, and every snapshot, is drawn
# afresh by the real compositor (tests/tui/history_b.screen_lines, Textual's screenshots), and
# each app's last screen is drawn in full as the test closes it, so a widget that fails to
# draw still fails its test. Tests marked `paint_every_frame` (those that feed hostile text to
# the screens) have every frame drawn, as in a terminal.
_PAINT_EVERY_FRAME = False
_compositor_refresh = Screen._compositor_refresh
_shutdown = App._shutdown


def _refresh_unless_discarded(self: Screen) -> None:  # type: ignore[type-arg]
    app = self.app
    if app.is_headless and self is app.screen and not _PAINT_EVERY_FRAME:
        self._compositor._dirty_regions.clear()
        self._dirty_widgets.clear()
        return
    _compositor_refresh(self)


async def _shutdown_after_last_frame(self: App) -> None:  # type: ignore[type-arg]
    failure = None
    if self.is_headless and self._screen_stack:
        try:
            visible_screen_stack.set(self._background_screens)
            self.screen._compositor.render_update(full=True)
        except Exception as exc:  # raised by run_test, as a failure while running would be
            failure = exc
    await _shutdown(self)
    if failure is not None and self._exception is None:
        self._exception = failure


Screen._compositor_refresh = _refresh_unless_discarded  # type: ignore[method-assign]
App._shutdown = _shutdown_after_last_frame  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def paint_every_frame(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    global _PAINT_EVERY_FRAME
    _PAINT_EVERY_FRAME = request.node.get_closest_marker("paint_every_frame") is not None
    yield
    _PAINT_EVERY_FRAME = False


# PYTHONDONTWRITEBYTECODE=1 (set on this machine) makes every test worker, and every `ragtui`
# a test starts, compile ragtui and rewrite the tests' asserts again: 3.5 s of CPU a worker.
# The tests keep the compiled files (in __pycache__, which git ignores).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(autouse=True)
def user_config_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
def user_config(user_config_home: Path) -> Path:
    """The user's own ragtui.toml (not yet written): judges and commands belong here."""
    folder = user_config_home / "ragtui"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "ragtui.toml"


# Tests that take seconds (a real terminal, subprocesses, simulations, big or hostile files)
# start first, each on the next free worker (pyproject: --maxschedchunk=2): a long test picked
# up last would keep one worker busy after the others have finished. A renamed test merely
# loses its place here.
LONG_TESTS = frozenset(
    {
        "tests/security/test_tmux.py::test_tui_walked_through_its_screens_writes_nothing_from_the_data",
        "tests/test_hostile_runs.py::test_a_hostile_value_anywhere_is_one_clear_line",
        "tests/tui/test_judge_screens.py::test_stopping_a_run_rejudge_keeps_finished_cases_and_resumes",
        "tests/tui/test_cases.py::test_a_long_run_opens_its_case_list_and_filters_after_a_pause",
        "tests/core/test_run_lines.py::test_any_valid_file_reads_and_indexes_as_written",
        "tests/tui/test_compare.py::test_acceptance_flow_on_sample_runs",
        "tests/security/test_hostile_tui.py::test_every_screen_and_toast_stays_inert",
        "tests/tui/test_terminal_sharing.py::test_copy_and_pager_in_a_real_terminal",
        "tests/commands/test_judge_cli.py::test_kill_9_mid_batch_then_resume",
        "tests/security/test_tmux.py::test_cli_in_a_terminal_writes_nothing_from_the_data",
        "tests/commands/test_bench.py::test_bench_prints_every_figure",
        "tests/test_robustness.py::test_the_store_reports_a_bad_file_and_indexes_the_rest",
        "tests/tui/test_app.py::test_the_palette_finds_an_action_by_any_word_of_its_name",
        "tests/core/test_simulation.py::test_a_a_and_a_b_false_positives_and_coverage",
        "tests/tui/test_compare_live.py::test_case_shows_the_same_a_as_compare_with_each_rerun",
        "tests/commands/test_basic_cli.py::test_user_errors_are_one_line_without_traceback",
        "tests/tui/test_cases.py::test_e_exports_the_cases_shown_in_their_order",
        "tests/core/test_index_memory.py::test_hostile_files_index_within_a_memory_limit",
    }
)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collected modules' objects live to the end: keep the garbage collector from
    walking them again and again (a quarter of a TUI test's CPU went to that), and collect
    the young generation less often (Textual makes many short-lived objects per frame)."""
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """At its end pytest collects garbage five times over to find late unraisable exceptions
    (~1 s a worker, all workers at once, the run's last second): what the tests left is
    frozen first, as the collected modules were."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.nodeid.split("[")[0] not in LONG_TESTS)  # stable


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores. A TUI test spends much of its time waiting
    for the app to go idle; the extra worker uses those waits."""
    return cores() + 1  # the cores this process may use (os.cpu_count counts the host's)
