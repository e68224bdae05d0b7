"""left / right on a row-cursor table: a column focus moves over the headers (the header lit)
and the table says which column it is and what it means, for the screen's status line."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.message import Message


class ColumnFocused(Message):
    """The column focus moved: `key` is the column, `description` its one-line meaning."""

    def __init__(self, table: Any, key: str, description: str) -> None:
        super().__init__()
        self.table, self.key, self.description = table, key, description

    @property
    def control(self) -> Any:
        return self.table


class ColumnFocus:
    """Mixed into a DataTable (Textual's or textual-fastdatatable's) that declares
    `focused_column: var[int]` and implements `column_keys`, `header_label` and `describe`."""

    focused_column: int

    @property
    def column_keys(self) -> list[str]:
        raise NotImplementedError

    def header_label(self, index: int) -> Text:
        raise NotImplementedError

    def describe(self, key: str) -> str:
        raise NotImplementedError

    def action_cursor_right(self, select: bool = False) -> None:
        self._focus_column(1)

    def action_cursor_left(self, select: bool = False) -> None:
        self._focus_column(-1)

    def _focus_column(self, step: int) -> None:
        keys = self.column_keys
        if keys:
            self.focused_column = max(0, min(len(keys) - 1, self.focused_column + step))

    def _show_focused_column(self, old: int, new: int) -> None:
        table: Any = self
        keys = self.column_keys
        columns = table.ordered_columns
        for index in (old, new):
            if 0 <= index < len(keys) and index < len(columns):
                label = self.header_label(index)
                if index == new:
                    label.stylize("reverse")
                columns[index].label = label
        table.notify_style_update()  # clears the cached header
        if not 0 <= new < min(len(keys), len(columns)):
            return
        left = sum(_width(c, table) for c in columns[:new])
        right = left + _width(columns[new], table)
        view = table.scrollable_content_region.width
        if left < table.scroll_x or right > table.scroll_x + view:
            table.scroll_to(x=left, animate=False)
        table.post_message(ColumnFocused(table, keys[new], self.describe(keys[new])))


def _width(column: Any, table: Any) -> int:
    """A column's width on screen (Textual's DataTable asks the table; fastdatatable knows)."""
    if hasattr(column, "get_render_width"):
        return int(column.get_render_width(table))
    return int(column.render_width)
