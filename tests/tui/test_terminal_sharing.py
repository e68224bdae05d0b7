"""`y` and `o` in a real terminal (tmux, clipboard writes allowed as over SSH): the OSC 52 copy
lands in tmux's paste buffer, and `o` hands the terminal to $PAGER and gets it back."""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.security.test_tmux import Tmux
from tests.tui.history_diag import A, B, write_history

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

LAUNCH = """
import sys
from pathlib import Path
import ragtui.tui.app
from ragtui.tui.app import RagtuiApp

class OnCompare(RagtuiApp):
    CSS_PATH = str(Path(ragtui.tui.app.__file__).with_name("app.tcss"))

    def on_store_opened(self, message):
        super().on_store_opened(message)
        self.open_compare({a!r}, {b!r})

OnCompare(Path(sys.argv[1]), watch=False).run()
"""


@pytest.mark.timeout(300)  # a real terminal and keystrokes: slow on a loaded machine
def test_copy_and_pager_in_a_real_terminal(tmp_path: Path) -> None:
    folder = write_history(tmp_path / "runs")
    paged = tmp_path / "paged.txt"
    pager = tmp_path / "pager.py"
    pager.write_text(f"import shutil, sys\nshutil.copyfile(sys.argv[1], {str(paged)!r})\n")
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCH.format(a=A, b=B))
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "PAGER": f"{sys.executable} {pager}",
    }
    tmux = Tmux(tmp_path / "pane.bin", env)
    try:
        python = shlex.quote(sys.executable)
        tmux.start(f"{python} {shlex.quote(str(launcher))} {shlex.quote(str(folder))}")
        tmux.wait_for("cases, worst first")
        tmux.keys("y")  # the comparison
        buffer = wait_buffer(tmux, "# ragtui report: baseline vs retriever-v2")
        assert "| faithfulness | 8 | 68.8 | 56.2 |" in buffer
        tmux.keys("Tab", "y")  # the worst case of the list
        buffer = wait_buffer(tmux, "# Case ")
        assert "## Chunks of B" in buffer
        # o pages the highlighted case; back from the pager the case list keeps the focus, so
        # y copies that case again (the focus had gone to the metric table: y copied the report)
        tmux.keys("o")
        deadline = time.monotonic() + 30
        while not paged.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paged.read_text().startswith("# Case ")
        paged.unlink()
        tmux.wait_for("cases, worst first")
        tmux("set-buffer", "emptied")
        time.sleep(0.3)  # the app takes the terminal back
        tmux.keys("y")
        assert "## Chunks of B" in wait_buffer(tmux, "# Case ")
        tmux.keys("Enter", wait_for="ragtui · Case")
        tmux.keys("o")
        deadline = time.monotonic() + 30
        while not paged.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paged.read_text().startswith("# Case ")
        tmux.wait_for("ragtui · Case")  # the terminal came back to the app
        tmux.keys("q")
        deadline = time.monotonic() + 30
        while not tmux.dead() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tmux.dead(), "ragtui did not quit"
    finally:
        tmux.kill()


def wait_buffer(tmux: Tmux, start: str, timeout: float = 30.0) -> str:
    """tmux's newest paste buffer once it begins with `start` (OSC 52 puts copies there)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = tmux("show-buffer", check=False).stdout
        if text.startswith(start):
            return text
        time.sleep(0.05)
    raise AssertionError(f"the paste buffer never began with {start!r}: {text[:200]!r}")
