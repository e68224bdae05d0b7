"""Writing an export from a thread worker and saying how it went (a line, never a crash)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
from textual.app import App

from ragtui.core.errors import RagtuiError
from ragtui.core.export import write_table

if TYPE_CHECKING:
    from ragtui.tui.widgets.export_dialog import ExportRequest


def export_and_tell(
    app: App[None], build: Callable[[], pa.Table], request: ExportRequest, noun: str
) -> None:
    """Build the table and write it where the user asked (call it in a thread worker); the
    outcome is a notification: how many `noun` went where, or why nothing was written."""
    try:
        table = build()
        written = write_table(table, request.path, request.fmt, overwrite=request.overwrite)
    except RagtuiError as err:
        app.call_from_thread(app.notify, str(err), severity="error", markup=False)
        return
    except Exception as exc:  # a worker reports its failure; it never ends the app
        app.call_from_thread(app.notify, f"export failed: {exc!r}", severity="error", markup=False)
        return
    done = f"exported {table.num_rows:,} {noun} to {written}"
    app.call_from_thread(app.notify, done, title="export", markup=False)
