"""Shared TUI fixtures: run histories in temp folders and an app factory.

`history` is a small fixed history written with write_run_file (deterministic: snapshot tests
use it). `sample_copy` is a temp copy of the shipped demo history in sample_runs/.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.worker import WorkerCancelled

from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.tui.app import RagtuiApp

REPO = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = REPO / "sample_runs"

JUDGE = JudgeInfo(model="qwen2.5:7b", provider="ollama", prompt_hash="faith-label-v1")
OTHER_JUDGE = JudgeInfo(model="llama3.1:8b", provider="ollama", prompt_hash="faith-label-v1")
DATASET = DatasetInfo(name="golden", version="v3")
METRICS = ("faithfulness", "answer_relevance", "context_recall")

# (run id, name, date, config, judge, kind, parent, quality): quality shifts the score odds
HISTORY = (
    ("baseline-1120", "baseline", "2026-11-20T10:00:00Z", "base", JUDGE, "eval", None, 0.70),
    ("baseline-1121", "baseline", "2026-11-21T10:00:00Z", "base", JUDGE, "rerun", None, 0.72),
    ("baseline-1122", "baseline", "2026-11-22T10:00:00Z", "base", JUDGE, "rerun", None, 0.69),
    ("strict-1124", "strict-prompt", "2026-11-24T09:30:00Z", "strict", JUDGE, "eval", None, 0.82),
    ("strict-1125", "strict-prompt", "2026-11-25T09:30:00Z", "strict", JUDGE, "rerun", None, 0.80),
    (
        "strict-rejudge",
        "strict-prompt",
        "2026-11-26T14:00:00Z",
        "strict",
        OTHER_JUDGE,
        "rejudge",
        "strict-1125",
        0.78,
    ),
)
CONFIGS = {
    "base": {"top_k": 3, "generator": "llama3.2:3b", "prompt": "plain-v1"},
    "strict": {"top_k": 5, "generator": "llama3.2:3b", "prompt": "strict-v2"},
}
TOPICS = ("refund", "billing", "sso", "export", "quota", "backup")


def history_cases(n: int, quality: float, seed: int) -> list[Case]:
    """n cases with three metrics; one context_recall error every 7th case."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        cid = f"{topic}-{i:02d}"
        label = rng.choices(
            ["YES", "PARTIAL", "NO"], [quality, (1 - quality) / 2, (1 - quality) / 2]
        )[0]
        faith = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}[label]
        relevance = min(5, max(1, round(rng.gauss(1 + 4 * quality, 0.8))))
        scores = {
            "faithfulness": Score(value=faith, raw=label, label=label),
            "answer_relevance": Score(value=(relevance - 1) / 4, raw=relevance, scale=(1, 5)),
        }
        errors = {}
        if i % 7 == 3:
            errors["context_recall"] = "judge reply was not valid JSON"
        else:
            scores["context_recall"] = Score(value=round(rng.random(), 2))
        chunks = (
            Chunk(
                id="c1",
                text=f"The {topic} policy says managers approve.",
                source=f"{topic}.md",
                rank=1,
                score=0.83,
            ),
            Chunk(
                id="c2",
                text=f"{topic} FAQ: credits, not cash.",
                source="faq.md",
                rank=2,
                score=0.61,
            ),
        )
        verdict = {"YES": "SUPPORTED", "PARTIAL": "PARTIAL", "NO": "UNSUPPORTED"}[label]
        claims = (
            Claim(
                metric="faithfulness",
                text=f"A manager approves {topic} requests",
                verdict=verdict,
                chunks=("c1",) if verdict != "UNSUPPORTED" else (),
                reason="checked against c1",
            ),
        )
        question = f"Who approves {topic} requests after 30 days? (case {i})"
        if i == 5:
            question = "[bold red]x[/] who approves \x1b[31mred\x1b[0m refunds?"
        cases.append(
            Case(
                case_id=cid,
                question=question,
                answer=f"Answer about {topic} number {i}.",
                reference=f"A manager approves {topic} requests.",
                contexts=chunks,
                scores=scores,
                claims=claims,
                errors=errors,
                latency_ms=float(400 + 10 * i),
            )
        )
    return cases


def write_history(folder: Path, n_cases: int = 24) -> Path:
    """The fixed history above, one run file per run."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed, (run_id, name, date, config, judge, kind, parent, quality) in enumerate(HISTORY):
        run = Run(
            id=run_id,
            name=name,
            created_at=date,
            config=CONFIGS[config],
            # another judge is another config key (as derive_config_key would make it)
            config_key=f"cfg-{config}" if judge is JUDGE else f"cfg-{config}-rejudged",
            judge=judge,
            dataset=DATASET,
            parent=parent,
            kind=kind,
        )
        write_run_file(folder / f"{run_id}{SUFFIX}", run, history_cases(n_cases, quality, seed))
    return folder


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return write_history(tmp_path / "runs")


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A temp copy of sample_runs/ (without any index file), so tests never touch the original."""
    files = sorted(SAMPLE_RUNS.glob(f"*{SUFFIX}"))
    if not files:
        pytest.fail("sample_runs/ holds no run files: the demo history is missing")
    target = tmp_path / "sample_runs"
    shutil.copytree(SAMPLE_RUNS, target, ignore=shutil.ignore_patterns(".ragtui.duckdb*"))
    return target


@pytest.fixture
def make_app() -> Callable[..., RagtuiApp]:
    """RagtuiApp(folder) factory (the app closes its store when it exits). The live folder
    watch is off unless a test asks for it: most tests want a folder that holds still."""

    def factory(folder: Path, notice: str | None = None, *, watch: bool = False) -> RagtuiApp:
        return RagtuiApp(folder, notice=notice, watch=watch)

    return factory


async def wait_ready(app: RagtuiApp, pilot, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until the runs are loaded (or the folder failed) and every worker has finished.

    Time-based, not a count of pauses: a cold index on a loaded machine can take seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # the live folder watch runs for as long as the app: it is never "finished"
        busy = [w for w in app.workers if w.group != "watch"]
        if busy:  # (an empty list would mean "all workers" to wait_for_complete)
            # an exclusive worker replaced by a newer one is cancelled: go on waiting
            with contextlib.suppress(WorkerCancelled):
                await app.workers.wait_for_complete(busy)
        await pilot.pause()
        settled = app.store_error is not None or (app.store is not None and app.runs_screen.loaded)
        if settled and not [w for w in app.workers if w.group != "watch"]:
            break
        await pilot.pause(0.02)
    else:
        raise TimeoutError("the app did not finish loading")
    await pilot.pause()
    # a table measures its columns when it goes idle after new rows: on a loaded machine that
    # can come after the pause above, and a picture taken then shows the columns too narrow
    while time.monotonic() < deadline and any(_measuring(t) for t in app.screen.query("DataTable")):
        await pilot.pause(0.01)
    await pilot.pause()


def _measuring(table) -> bool:  # type: ignore[no-untyped-def]
    """A table on screen with rows whose widths it has not measured yet (Textual's own flag,
    in both the stock DataTable and textual-fastdatatable)."""
    return bool(table.size.area) and getattr(table, "_require_update_dimensions", False)


def widget_text(widget) -> str:  # type: ignore[no-untyped-def]
    """What a mounted widget shows on screen, as plain text lines."""
    from textual.geometry import Region

    lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return "\n".join(line.text for line in lines)
