"""Start-up figures, each a fresh process timed from its spawn (several runs, min and median):
`python -c "import textual"` (the floor any Textual app pays), `ragtui --help` (goal < 0.3 s)
and the Runs screen's first paint on the sample history with its index present (goal < 0.6 s).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from ragtui.bench.figures import Figure, goal, min_median
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.services.workspace import bundled_samples

HELP_GOAL, PAINT_GOAL = 0.3, 0.6
TIMEOUT = 120.0


def _ragtui_command() -> list[str]:
    """The installed `ragtui` script beside this interpreter, else `python -m ragtui`."""
    script = Path(sys.executable).parent / "ragtui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ragtui"]


def _exit_time(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise RagtuiError(
            f"bench: {' '.join(command)} failed: {tail[0] if tail else done.returncode}"
        )
    return seconds


def _paint_time(folder: Path) -> float:
    """Spawn to the probe's "painted" line (the process is then ended)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "ragtui.bench.probe", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until the first paint (or the child dies)
        seconds = time.perf_counter() - started
        if line.strip() != b"painted":
            raise RagtuiError("bench: the Runs screen probe ended without painting its rows")
        child.wait(timeout=TIMEOUT)
        return seconds
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def startup_figures(workdir: Path, repeats: int = 5) -> list[Figure]:
    textual = [_exit_time([sys.executable, "-c", "import textual"]) for _ in range(repeats)]
    baseline = f'python -c "import textual" {min(textual):.2f} s'
    help_ = [_exit_time([*_ragtui_command(), "--help"]) for _ in range(repeats)]
    samples = workdir / "sample_runs"
    shutil.copytree(bundled_samples(), samples, ignore=shutil.ignore_patterns(".ragtui.duckdb*"))
    Store.open(samples).close()  # the index is present, as on every start after the first
    runs = len(list(samples.glob("*.ragtui.jsonl")))
    paint = [_paint_time(samples) for _ in range(repeats)]
    return [
        Figure(
            "ragtui --help",
            min_median(help_),
            baseline,
            "",
            f"{goal(min(help_), HELP_GOAL)}; fresh process, {repeats} runs",
        ),
        Figure(
            "Runs first paint, index present",
            min_median(paint),
            baseline,
            "",
            f"{goal(min(paint), PAINT_GOAL)}; sample history ({runs} runs), spawn to rows "
            f"on screen, headless, {repeats} runs",
        ),
    ]
