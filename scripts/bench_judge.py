"""Judge throughput: 1,000 calls against the local fake judge answering after 50 ms, 16 at a time.

The ideal is 16 / 0.05 s = 320 calls/s. Two figures: the bare client (HTTP only), and a whole
re-judge batch (prompt building, parsing, the run file appended and fsynced per case, the
reply cache written to the DuckDB index). Run: .venv/bin/python scripts/bench_judge.py
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout

from ragtui.config import JudgeConfig  # noqa: E402
from ragtui.core.model import Case, Chunk, Run  # noqa: E402
from ragtui.core.runfile import write_run_file  # noqa: E402
from ragtui.core.store import Store  # noqa: E402
from ragtui.judge.client import JudgeClient  # noqa: E402
from ragtui.judge.runner import judge_run  # noqa: E402


async def bare(cfg: JudgeConfig, calls: int) -> float:
    messages = [{"role": "user", "content": "grade this"}]
    async with JudgeClient(cfg) as client:
        started = time.perf_counter()
        await asyncio.gather(*(client.chat(messages) for _ in range(calls)))
        return time.perf_counter() - started


async def batch(cfg: JudgeConfig, calls: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run = Run(id="bench", name="bench", created_at="2026-12-01T00:00:00Z")
        cases = [
            Case(
                case_id=f"c{i}",
                question=f"q{i}",
                answer=f"answer {i}",
                contexts=(Chunk(id="k", text=f"chunk {i}"),),
            )
            for i in range(calls)
        ]
        write_run_file(folder / "bench.ragtui.jsonl", run, cases)
        with Store.open(folder) as store:
            started = time.perf_counter()
            result = await judge_run(store, "bench", cfg, metrics=["faithfulness"])
            seconds = time.perf_counter() - started
        assert result.progress.scored == calls, result.summary()
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    ideal = args.concurrency / args.delay
    # The server runs in its own process: in-process it would share the GIL with the client
    # and measure Python's thread switching rather than the client.
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakejudge", "--delay", str(args.delay)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        cfg = JudgeConfig(
            name="bench",
            provider="ollama",
            url=url,
            model="judge-1",
            concurrency=args.concurrency,
            timeout=10,
        )
        for label, bench in (("bare client", bare), ("re-judge batch", batch)):
            seconds = asyncio.run(bench(cfg, args.calls))
            rate = args.calls / seconds
            print(
                f"{label:15s} {args.calls} calls in {seconds:.2f} s = {rate:.0f} calls/s "
                f"({100 * rate / ideal:.0f}% of the ideal {ideal:.0f}/s)"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
