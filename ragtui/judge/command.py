"""Running the user's own pipeline (`[rerun] command`): an argv list, never a shell.

The command line comes from the user's trusted config only (see ragtui.config). It is split
with shlex and its placeholders are filled in per argument, so a value with spaces or quotes
stays one argument and nothing is ever interpreted by a shell. The process gets no stdin, its
own process group (killed whole on timeout or cancel) and a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Callable, Sequence

from ragtui.config_values import command_argv
from ragtui.core.errors import RagtuiError

LINE_CHARS = 2000  # a longer output line is cut when shown
READ_BYTES = 1 << 16

__all__ = ["command_argv", "run_command"]


async def run_command(
    argv: Sequence[str],
    *,
    timeout: float,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """Run `argv` to the end within `timeout` seconds, handing each output line (stdout and
    stderr together) to `on_line`. A missing program, a non-zero exit or the deadline is a
    RagtuiError naming the command."""
    shown = shlex.join(argv)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills its children too
        )
    except OSError as exc:
        raise RagtuiError(f"rerun command cannot start ({exc.strerror}): {shown}") from None
    try:
        async with asyncio.timeout(timeout):
            await _pump(process, on_line)
            status = await process.wait()
    except TimeoutError:
        await _kill(process)
        raise RagtuiError(f"rerun command ran past its {timeout:g} s timeout: {shown}") from None
    except BaseException:
        await _kill(process)
        raise
    if status != 0:
        raise RagtuiError(f"rerun command exited with status {status}: {shown}")


async def _pump(process: asyncio.subprocess.Process, on_line: Callable[[str], None] | None) -> None:
    # read in blocks, not readline(): a line longer than the stream limit must not raise
    assert process.stdout is not None
    pending = b""
    while chunk := await process.stdout.read(READ_BYTES):
        *lines, pending = (pending + chunk).split(b"\n")
        if len(pending) > LINE_CHARS:
            lines.append(pending)
            pending = b""
        for raw in lines:
            if on_line:
                on_line(raw[:LINE_CHARS].decode("utf-8", "replace").rstrip("\r"))
    if pending and on_line:
        on_line(pending[:LINE_CHARS].decode("utf-8", "replace").rstrip("\r"))


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    with contextlib.suppress(Exception):
        await process.wait()
