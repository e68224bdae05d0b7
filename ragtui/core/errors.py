"""The project's own errors. Every user mistake ends as one of these, shown as one line."""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(path: str | Path) -> str:
    """A path as text that can always be printed: bytes that are not UTF-8 (a file name in
    Latin-1, say) appear as \\xe9 escapes instead of making the output fail."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _safe(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class RagtuiError(Exception):
    """A problem the user can fix; its message is shown as-is, without a traceback."""

    # a message of several lines whose data parts were neutralised line by line when it was
    # made (`format.one_line`), so its own line breaks can be printed as line breaks
    multiline = False


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
        self.path = shown_path(path)
        self.line = line
        self.field = None if field is None else _safe(field)
        self.detail = _safe(message)
        where = self.path if line is None else f"{self.path}:{line}"
        what = self.detail if field is None else f"field '{self.field}': {self.detail}"
        super().__init__(f"{where}: {what}")

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as it is (a decoding worker process sends its errors back)."""
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(cls: type[RunFileError], args: tuple[object, ...], state: dict) -> RunFileError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class StoreError(RagtuiError):
    """The index cannot be opened or written."""


class IndexFault(StoreError):
    """The index itself failed (a full disk, DuckDB out of memory), not anything the user typed
    or a run file: a failure of what ran, exit 1 on the command line, never 2 ("bad input")."""


class DiskFull(IndexFault):
    """The index cannot be written: no space left on the device (or over a quota)."""


class WriteError(RagtuiError):
    """A file ragtui writes could not be written (a full disk, no permission)."""


class InputError(RagtuiError):
    """What the user typed names nothing or cannot be right (a run, a case, a metric, a judge,
    an option's value): a usage error, exit 2 on the command line. Other RagtuiErrors are
    failures of what ragtui ran (a judge that cannot be reached): exit 1."""


class RunNotFoundError(InputError):
    """A run reference (id, unique prefix or name) that matches no run or several."""


class UnknownMetricError(InputError):
    """A metric named in an option that the runs (or the judge) do not have: a usage error
    (exit 2), whose message lists the metrics that are known."""
