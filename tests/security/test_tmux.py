"""The real `ragtui` in a real terminal (tmux, with set-clipboard on as in the attack): every
byte the CLI and the TUI write to the pane is captured with pipe-pane while the TUI is walked
through its screens. No escape sequence, C1, bidi or invisible character from the hostile folder
reaches the terminal, the paste buffer stays empty and the pane title stays ours."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.hostile import REPO, RUN_A, leaks, write_hostile_folder

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One private tmux server (its own socket, no user config) with one pane."""

    def __init__(self, log: Path, env: dict[str, str]) -> None:
        self.socket = f"ragtui-test-{uuid.uuid4().hex[:8]}"
        self.log = log
        self.env = env

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=30,
        )

    def start(self, command: str) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        # the pane waits for a key, so that pipe-pane is attached before the first byte
        script = f"read go; exec env {exports} {command}"
        self("new-session", "-d", "-x", "200", "-y", "50", "sh", "-c", script)
        self("set-option", "-g", "set-clipboard", "on")
        self("set-option", "-g", "remain-on-exit", "on")
        self("pipe-pane", "-o", f"cat >> {shlex.quote(str(self.log))}")
        self("send-keys", "Enter")

    def screen(self) -> str:
        return self("capture-pane", "-p").stdout

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.screen():
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the pane shows:\n{self.screen()}")

    def wait_for_gone(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text not in self.screen():
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never went; the pane shows:\n{self.screen()}")

    def keys(self, *keys: str, wait_for: str | None = None) -> None:
        for key in keys:
            self("send-keys", key)
            # keys within one screen; screen changes are waited for. A lone Escape needs a
            # pause after it, or the next key reads as Alt+key
            time.sleep(0.2 if key == "Escape" else 0.05)
        if wait_for:
            self.wait_for(wait_for)

    def dead(self) -> bool:
        return self("display-message", "-p", "#{pane_dead}").stdout.strip() == "1"

    def kill(self) -> None:
        self("kill-server", check=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = write_hostile_folder(tmp_path / "runs")
    future = time.time() + 10 * 365 * 86400  # the imported CSV's run sorts after A and B
    for csv in folder.glob("*.csv"):
        os.utime(csv, (future, future))
    return folder


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }
    session = Tmux(tmp_path / "pane.bin", env)
    yield session
    session.kill()


def check_terminal(session: Tmux) -> None:
    raw = session.log.read_bytes()
    assert raw, "pipe-pane captured nothing"
    assert leaks(raw, allow_esc=True) == []
    buffers = session("list-buffers", check=False).stdout
    assert "pwned" not in buffers and buffers.strip() == "", buffers
    title = session("display-message", "-p", "#{pane_title}").stdout
    assert "PWNED" not in title, title


def test_cli_in_a_terminal_writes_nothing_from_the_data(folder: Path, tmux: Tmux) -> None:
    python = shlex.quote(sys.executable)
    commands = [
        f"{python} -m ragtui runs {shlex.quote(str(folder))}",
        f"{python} -m ragtui show {shlex.quote(RUN_A)} --path {shlex.quote(str(folder))}",
        f"{python} -m ragtui compare A B {shlex.quote(str(folder))}",
    ]
    tmux.start("sh -c " + shlex.quote("; ".join(commands) + "; echo ALL-DONE"))
    tmux.wait_for("ALL-DONE", timeout=90)
    check_terminal(tmux)


@pytest.mark.timeout(300)  # a real terminal and keystrokes: slow on a loaded machine
def test_tui_walked_through_its_screens_writes_nothing_from_the_data(
    folder: Path, tmux: Tmux
) -> None:
    tmux.start(f"{shlex.quote(sys.executable)} -m ragtui open {shlex.quote(str(folder))}")
    tmux.wait_for("name\\x1b]")  # the Runs screen, a hostile run name shown escaped (cut: the
    # hostile metric columns leave the names their minimum, even at 200 columns)
    tmux.keys("a", "Down", "b", "c", wait_for="ragtui · Compare")  # Compare A vs B
    # the case list's caption, fitted: the hostile metric cut, its count ("· 0 of 0") whole
    tmux.wait_for("· 0 of 0")
    tmux.keys("m", wait_for="faithfulness ·")  # the next metric, with cases to open
    tmux.keys("Tab", "Enter", wait_for="ragtui · Case")  # the worst case
    tmux.keys("m", "]", "Escape", wait_for="cases, worst first")  # back on Compare
    tmux.keys("Escape", wait_for="ragtui · Runs")
    tmux.keys("Up", "Enter")  # the case list of A
    tmux.wait_for("ragtui · Cases")
    tmux.keys("Escape", "t")  # trends
    tmux.wait_for("Trends")
    tmux.keys("m", "Escape", wait_for="ragtui · Runs")
    # Help's own title, not "help" (the key bar says it on every screen); and Help gone before
    # q: under load a q right behind an Escape the app has not read yet arrives as Alt+q
    tmux.keys("?", wait_for="ragtui · Help")
    tmux.keys("Escape")
    tmux.wait_for_gone("ragtui · Help")
    tmux.keys("q")
    deadline = time.monotonic() + 30
    while not tmux.dead() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tmux.dead(), f"ragtui did not quit; the pane shows:\n{tmux.screen()}"
    check_terminal(tmux)
