"""The rerun command runs as an argv list: no shell ever sees it or its placeholder values."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from pathlib import Path

import pytest

from ragtui.config_values import ConfigError
from ragtui.core.errors import RagtuiError
from ragtui.judge.command import command_argv, run_command

PY = shlex.quote(sys.executable)


def test_placeholders_fill_whole_arguments_and_never_split() -> None:
    argv = command_argv(
        f"{PY} eval.py --config {{config}} --tag 'a b' --id=run-{{run_id}}",
        "rerun.command",
        config="/tmp/my config.json",
        out="/o",
        run_id="x; touch /tmp/PWNED $(id)",
    )
    assert argv == [
        sys.executable,
        "eval.py",
        "--config",
        "/tmp/my config.json",
        "--tag",
        "a b",
        "--id=run-x; touch /tmp/PWNED $(id)",
    ]
    with pytest.raises(ConfigError, match="bad placeholder 'nope'"):
        command_argv("run {nope}", "rerun.command", config="c", out="o", run_id="r")
    assert command_argv("echo {{literal}}", "w", config="", out="", run_id="") == [
        "echo",
        "{literal}",
    ]


async def test_no_shell_interprets_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    lines: list[str] = []
    argv = command_argv(
        f"{PY} -c 'import sys; print(sys.argv[1:])' {{run_id}} ; touch {marker}",
        "rerun.command",
        config="",
        out="",
        run_id="$(touch " + str(marker) + ")",
    )
    await run_command(argv, timeout=30, on_line=lines.append)
    assert not marker.exists()
    assert lines == [repr([f"$(touch {marker})", ";", "touch", str(marker)])]


async def test_timeout_kills_the_command_and_its_children(tmp_path: Path) -> None:
    spawned = tmp_path / "spawned"
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(spawned)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    with pytest.raises(RagtuiError, match=r"ran past its 1\.5 s timeout"):
        await run_command([sys.executable, str(parent)], timeout=1.5)
    assert spawned.exists(), "the machine was too slow to start the child: nothing tested"
    child = int(spawned.read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(child), "the command's child outlived the timeout"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


async def test_failures_are_one_line() -> None:
    with pytest.raises(RagtuiError, match="cannot start"):
        await run_command(["/no/such/program"], timeout=5)
    with pytest.raises(RagtuiError, match="exited with status 3"):
        await run_command([sys.executable, "-c", "raise SystemExit(3)"], timeout=30)


async def test_a_huge_output_line_is_cut_not_fatal() -> None:
    lines: list[str] = []
    code = "import sys; sys.stdout.write('x' * 300000 + '\\nend\\n')"
    await run_command([sys.executable, "-c", code], timeout=30, on_line=lines.append)
    assert lines[-1] == "end" and all(len(line) <= 2000 for line in lines)
