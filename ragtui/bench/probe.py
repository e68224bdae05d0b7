"""A fresh `ragtui` process that says when the Runs screen first shows its rows, then exits.

    python -m ragtui.bench.probe FOLDER

It imports what the `ragtui` command imports (ragtui.cli first), runs the app headless at
160x48 without the live watch, and prints "painted" once the rows are on screen.
`ragtui bench` times it from the spawn to that line (see startup.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import ragtui.cli
import ragtui.tui.app
from ragtui.tui.app import RagtuiApp


class PaintProbe(RagtuiApp):
    # a relative CSS_PATH would be looked for beside this module
    CSS_PATH = str(Path(ragtui.tui.app.__file__).with_name("app.tcss"))

    def on_mount(self) -> None:
        super().on_mount()
        self._poll = self.set_interval(0.002, self._check)

    def _check(self) -> None:
        screen = self.runs_screen
        if screen.loaded and screen.table.row_count:
            self._poll.stop()
            self.call_after_refresh(self._painted)  # the frame with the rows is out

    def _painted(self) -> None:
        print("painted", flush=True)
        self.exit()


def main() -> None:
    PaintProbe(Path(sys.argv[1]), watch=False).run(headless=True, size=(160, 48))


if __name__ == "__main__":
    main()
