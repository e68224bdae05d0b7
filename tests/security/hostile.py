"""A hostile runs folder: every text field of a run file, every metric name and every file
name carries terminal attacks, and a detector for them in raw output bytes.

The payload holds OSC 52 (write "pwned" to the clipboard), OSC 0 (set the window title),
OSC 8 (a hyperlink), CSI (clear screen, red background), a one-byte C1 CSI (U+009B), bidi
overrides and isolates, zero-width and invisible characters, a line separator, and Rich markup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # base64 "pwned"
OSC0 = "\x1b]0;PWNED-TITLE\x07"
OSC8 = "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
CSI = "\x1b[2J\x1b[41m"
C1 = "\x9b31m"
BIDI = "\u202eEDIR\u202c\u2066iso\u2069\u200f"
INVISIBLE = "z\u200bw\u200dj\u2060\ufeff\u00ad\u2028"
MARKUP = "[bold red]mk[/][link=http://evil.example]L[/link]"
PAYLOAD = OSC52 + OSC0 + OSC8 + CSI + C1 + BIDI + INVISIBLE + MARKUP
# File names cannot hold "/" (nor NUL): the same attacks without the URL.
NAME_PAYLOAD = OSC52 + OSC0 + "\x1b[41m" + C1 + BIDI + "z\u200b"

# Byte sequences from the data that must never reach a terminal.
FORBIDDEN = {
    "OSC 52": b"\x1b]52",
    "OSC 0": b"\x1b]0;",
    "OSC 8 to evil": b"\x1b]8;;http://evil",
    "CSI clear": b"\x1b[2J",
    "CSI red": b"\x1b[41m",
}
# Characters that never reach a terminal from data at all (ragtui itself never prints them).
NEVER = [chr(c) for c in range(0x80, 0xA0)] + list(
    "\u202e\u202c\u2066\u2069\u200f\u200e\u202a\u202b\u202d\u2067\u2068\u061c"
    "\u200b\u200c\u200d\u2060\ufeff\u00ad\u2028\u2029"
)


def evil(tag: str) -> str:
    return f"{tag}{PAYLOAD}"


def leaks(raw: bytes, *, allow_esc: bool = False) -> list[str]:
    """What of the payload reached the output, by name; [] when nothing did. Piped CLI output
    has no ESC at all; a terminal UI has its own (allow_esc), but never the data's."""
    found = [name for name, seq in FORBIDDEN.items() if seq in raw]
    if not allow_esc:  # a terminal UI's own sequences use both (Textual: OSC 22 ... BEL)
        found += [name for name, byte in (("ESC", b"\x1b"), ("BEL", b"\x07")) if byte in raw]
    text = raw.decode("utf-8", "replace")
    found += [f"U+{ord(c):04X}" for c in NEVER if c in text]
    return found


# ---------------------------------------------------------------- the folder

METRIC = evil("metric")  # not a faithfulness metric: its claims keep free verdict words


def _case(i: int, good: bool) -> dict[str, Any]:
    return {
        "case_id": evil(f"case{i}"),
        "question": evil(f"question{i}\nsecond line\t"),
        "answer": evil(f"answer{i}"),
        "reference": evil("reference"),
        "contexts": [
            {"id": evil("chunk"), "text": evil("chunktext"), "source": evil("src"), "rank": 1}
        ],
        "scores": {
            "faithfulness": {
                "value": 1.0 if good or i % 2 else 0.0,
                "raw": evil("raw"),
                "label": evil("label"),
                "reason": evil("reason"),
                "reply": evil("reply"),
                "prompt_hash": evil("ph"),
            },
            METRIC: {"value": 0.5 if good else 0.25, "raw": {evil("k"): evil("v")}},
        },
        "claims": [
            {
                "metric": METRIC,
                "text": evil("claim"),
                "verdict": evil("verdict"),
                "chunks": [evil("chunk")],
                "reason": evil("claimreason"),
            }
        ],
        "errors": {evil("errmetric"): evil("error")},
        "human": {METRIC: 0.5},
        "latency_ms": 10 + i,
        "metadata": {evil("mk"): evil("mv")},
        "cluster": evil("cluster"),
    }


def _header(run_id: str, good: bool) -> dict[str, Any]:
    return {
        "ragtui_run": 1,
        "id": run_id,
        "name": evil("name"),
        "created_at": "2026-11-20T10:00:00Z" if good else "2026-11-21T10:00:00Z",
        "config": {evil("ck"): evil("cv"), "generator": evil("gen"), "good": good},
        "config_key": evil("cfgkey") + ("g" if good else "b"),
        "judge": {"model": evil("jm"), "provider": evil("jp"), "prompt_hash": evil("jph")},
        "dataset": {"name": evil("ds"), "version": evil("dv")},
        "parent": evil("parent"),
        "kind": "eval",
        "source": {"format": evil("fmt"), "path": evil("path"), "sha256": evil("sha")},
        "stated": [{"metric": METRIC, "value": 0.5, "raw": evil("sraw"), "statistic": evil("st")}],
    }


RUN_A = "A" + NAME_PAYLOAD  # hostile ids, given on the command line as they are
RUN_B = "B" + NAME_PAYLOAD
CASE = evil("case1")


def write_run(path: Path, header: Mapping[str, Any], cases: list[dict[str, Any]]) -> None:
    lines = [json.dumps(header), *(json.dumps(c) for c in cases)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_hostile_folder(folder: Path, n: int = 6) -> Path:
    """Two hostile runs sharing hostile case ids, under hostile file names, plus a broken run
    file and a foreign CSV with hostile names (for the `skipped:` and `notice:` lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    for run_id, good in ((RUN_A, False), (RUN_B, True)):
        cases = [_case(i, good) for i in range(n)]
        write_run(
            folder / f"{run_id}-file{NAME_PAYLOAD}.ragtui.jsonl", _header(run_id, good), cases
        )
    (folder / f"broken{NAME_PAYLOAD}.ragtui.jsonl").write_text(
        json.dumps({"ragtui_run": 1, "id": 5}) + "\n", encoding="utf-8"
    )
    rows = ["user_input,response,retrieved_contexts,faithfulness"]
    rows += [f'"{evil("csvq")}{i}","{evil("csva")}","[""{evil("ctx")}""]",1' for i in range(3)]
    (folder / f"ragas{NAME_PAYLOAD}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


# ---------------------------------------------------------------- running ragtui


def ragtui(  # type: ignore[no-untyped-def]
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None, real: bool = False
):
    """`ragtui ARGS`: raw stdout and stderr bytes and the exit code. In this process through
    click's runner (the bytes the commands write; a process costs a second of imports), or
    with `real=True` as `python -m ragtui` in a process of its own (what a user runs)."""
    if not real:
        return _in_process(args, env, cwd)
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "ragtui", *args],
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=90,
        check=False,
    )


def _in_process(args: tuple[str, ...], env: Mapping[str, str] | None, cwd: Path | None):  # type: ignore[no-untyped-def]
    import contextlib

    from click.testing import CliRunner

    from ragtui.cli import cli

    runner = CliRunner()
    with contextlib.chdir(cwd or Path.cwd()):
        result = runner.invoke(
            cli, list(args), env={"COLUMNS": "200", "FORCE_COLOR": None, **(env or {})}
        )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback would have been printed: fail loudly
    return subprocess.CompletedProcess(
        ["ragtui", *args], result.exit_code, result.stdout_bytes, result.stderr_bytes
    )
