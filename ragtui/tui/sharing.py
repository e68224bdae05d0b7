"""Getting text out of the TUI: `y` copies Markdown through OSC 52 (Textual's
`App.copy_to_clipboard` writes ESC ] 52 ; c ; base64 BEL, which terminals and tmux honour over
SSH), `o` hands the terminal to `$PAGER` with the text in a temporary file, `e` writes the
table on screen (core/export.py) where the export dialog says.

The pager command comes from the user's environment only (never from a folder); the file it
gets has a fixed name in a private temporary folder, never a name made from run data.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from textual.app import App, SuspendNotSupported
from textual.dom import DOMNode

from ragtui.core.errors import RagtuiError
from ragtui.core.export import write_table
from ragtui.format import printable
from ragtui.tui.widgets.export_dialog import ExportRequest

PAGER_TIMEOUT_HEADLESS = 60  # seconds: with no terminal to hand over, a pager cannot wait on keys


def copy_markdown(app: App[object], text: str, what: str) -> None:
    """Copy `text` with OSC 52 and say what was copied."""
    app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    app.notify(f"copied {what} as Markdown ({lines} lines) · through the terminal (OSC 52)")


def page(app: App[object], text: str) -> str | None:
    """Show `text` in $PAGER (default `less`) with the app suspended; the error, if any."""
    argv = shlex.split(os.environ.get("PAGER") or "less")
    if not argv:
        return "PAGER is set but empty: set it to a pager such as less"
    with tempfile.TemporaryDirectory(prefix="ragtui-") as folder:
        path = Path(folder) / "case.md"
        path.write_text(text, encoding="utf-8")
        try:
            try:
                with app.suspend():
                    done = subprocess.run([*argv, str(path)], check=False)
            except SuspendNotSupported:
                if not app.is_headless:
                    return "this terminal cannot be handed to a pager (try y to copy instead)"
                # headless (tests, a web front end): no terminal to hand over; the pager runs
                # on the file alone and may not wait for keys
                done = subprocess.run(
                    [*argv, str(path)],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                    timeout=PAGER_TIMEOUT_HEADLESS,
                )
        except FileNotFoundError:
            return f"pager {printable(argv[0])!r} not found: set PAGER to one that is installed"
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"pager {printable(argv[0])!r} failed: {exc}"
    if done.returncode != 0:
        return f"pager {printable(argv[0])!r} exited with status {done.returncode}"
    return None


def export(
    node: DOMNode,
    what: str,
    default_name: str,
    table: Callable[[], pa.Table],
    failed: Callable[[str], None] | None = None,
) -> None:
    """Ask where (the export dialog), then write `table()` in a thread worker. A failure is a
    notification (and `failed(message)`, for a screen that also shows it on a line)."""
    app = node.app

    def write(request: ExportRequest) -> None:
        try:
            data = table()
            path = write_table(data, request.path, request.fmt, overwrite=request.overwrite)
        except RagtuiError as err:
            app.call_from_thread(report, str(err))
            return
        except Exception as exc:  # a worker reports, it never ends the app
            app.call_from_thread(report, f"export failed: {exc!r}")
            return
        app.call_from_thread(
            app.notify,
            f"wrote {data.num_rows} rows of {what} to {path} ({request.fmt})",
            title="export",
        )

    def report(message: str) -> None:
        app.notify(message, title="export", severity="error", timeout=10)
        if failed is not None:
            failed(message)

    def chosen(request: ExportRequest | None) -> None:
        if request is not None:
            node.run_worker(
                lambda: write(request), thread=True, group="export", exit_on_error=False
            )

    app.open_export(what, default_name, chosen)  # type: ignore[attr-defined]
