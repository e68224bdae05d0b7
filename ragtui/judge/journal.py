"""A batch's reply journal: every judge reply is kept on disk the moment it arrives.

A batch appends a case to its run file only once all of that case's metrics are graded, so a
kill between the reply and the append would lose replies that were paid for. The journal (a
hidden file beside the run file, one JSON line per reply, fsync'd) is read back on resume, so
only the calls in flight at the kill are sent again. It is used even when the shared reply cache
is bypassed (noise reruns): those replies belong to this very batch. The batch deletes its
journal when every case is in the run file.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO


def journal_path(run_file: Path) -> Path:
    return run_file.with_name(f".{run_file.name}.replies")


class ReplyJournal:
    def __init__(self, run_file: Path) -> None:
        self.path = journal_path(run_file)
        self.replies: dict[str, str] = {}
        self._handle: IO[str] | None = None
        self._lock = threading.Lock()  # puts arrive from several worker threads at once
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut by the kill: that call is simply sent again
            if isinstance(entry, dict):
                key, reply = entry.get("key"), entry.get("reply")
                if isinstance(key, str) and isinstance(reply, str):
                    self.replies[key] = reply

    def get(self, key: str) -> str | None:
        return self.replies.get(key)

    def put(self, key: str, reply: str) -> None:
        """Append one reply durably (called in a worker thread)."""
        line = json.dumps({"key": key, "reply": reply}, ensure_ascii=True) + "\n"
        with self._lock:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="utf-8")
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self.replies[key] = reply

    def close(self, *, finished: bool) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
        if finished:
            self.path.unlink(missing_ok=True)
