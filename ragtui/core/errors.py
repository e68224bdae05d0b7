"""The project's own errors. Every user mistake ends as one of these, shown as one line."""

from __future__ import annotations

from pathlib import Path


class RagtuiError(Exception):
    """A problem the user can fix; its message is shown as-is, without a traceback."""


class RunFileError(RagtuiError):
    """A run file that does not follow the expected format.

    The message names the file, the line (when known), the field, what was expected and what
    was found.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.detail = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = message if field is None else f"field '{field}': {message}"
        super().__init__(f"{where}: {what}")


class StoreError(RagtuiError):
    """The index cannot be opened or written."""


class RunNotFoundError(RagtuiError):
    """A run reference (id, unique prefix or name) that matches no run or several."""
