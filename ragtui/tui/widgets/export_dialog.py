"""The export dialog (`e`): where to write the table on screen, and in which format.

The path is the user's own: the default is a fixed name in the current folder, never one made
from run data. A file that exists is replaced only after a second `enter`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, RadioButton, RadioSet, Static

from ragtui.core.export import FORMATS, format_of
from ragtui.format import printable

LABELS = {"csv": "CSV", "json": "JSON", "parquet": "Parquet"}


@dataclass(frozen=True)
class ExportRequest:
    path: Path
    fmt: str  # one of core.export.FORMATS
    overwrite: bool  # the user confirmed replacing an existing file


class ExportDialog(ModalScreen[ExportRequest | None]):
    """Path and format; enter writes (from the path box or the format buttons), esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel"),
        # before the format buttons take enter as "choose": the dialog says enter writes
        Binding("enter", "write", "write the file", priority=True),
    ]

    def __init__(self, what: str, default_name: str) -> None:
        super().__init__()
        self.what = what
        self.default = Path.cwd() / f"{default_name}.csv"
        self._confirm: Path | None = None  # the existing file a second enter replaces

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Static(Text(f"Export {self.what}", style="bold"), id="export-title")
            yield Input(str(self.default), id="export-path")
            with RadioSet(id="export-format"):
                for fmt in FORMATS:
                    yield RadioButton(LABELS[fmt], value=fmt == "csv", name=fmt)
            yield Static(
                Text("enter writes the file · esc cancels · figures are fractions, as in --json"),
                id="export-status",
                markup=False,
            )

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @property
    def fmt(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else "csv"

    @on(RadioSet.Changed)
    def _format_changed(self, event: RadioSet.Changed) -> None:
        if event.pressed.name:
            self._follow_format(event.pressed.name)

    def _follow_format(self, fmt: str) -> None:
        """The file name follows the format while its extension names one."""
        box = self.query_one("#export-path", Input)
        path = Path(box.value)
        if format_of(path) is not None and path.suffix != "." + fmt:
            box.value = str(path.with_suffix("." + fmt))
            self._confirm = None

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        self._confirm = None

    def action_write(self) -> None:
        radios = self.query_one(RadioSet)
        highlighted = getattr(radios, "_selected", None)  # RadioSet's keyboard highlight
        chosen = None
        if self.focused is radios and highlighted not in (None, radios.pressed_index):
            button = list(radios.query(RadioButton))[highlighted]
            button.value = True  # the highlighted format is the one meant
            chosen = button.name
            if chosen:
                self._follow_format(chosen)  # now, not when its message arrives
        self._write(chosen)

    def _write(self, chosen: str | None = None) -> None:
        text = self.query_one("#export-path", Input).value.strip()
        status = self.query_one("#export-status", Static)
        if not text:
            status.update(Text("type a file name", style="yellow"))
            return
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        fmt = format_of(path) or chosen or self.fmt
        if path.is_dir():  # "exists: enter again replaces it" offered to replace a folder
            status.update(
                Text(f"{printable(path)} is a folder: add a file name to it", style="bold yellow")
            )
            return
        if path.exists() and self._confirm != path:
            self._confirm = path
            status.update(
                Text(f"{printable(path)} exists: enter again replaces it", style="bold yellow")
            )
            return
        self.dismiss(ExportRequest(path, fmt, overwrite=self._confirm == path))

    def action_cancel(self) -> None:
        self.dismiss(None)
