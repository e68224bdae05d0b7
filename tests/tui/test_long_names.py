"""Long metric names and case ids (about 60 characters, 12 metrics) at 100x32: the figures
always show, names and ids give way (cut in the middle, so their distinct ends still read
apart), and abbreviated headers stay bounded and unique."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ragtui.core.model import Case, DatasetInfo, Run, Score
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.format import short_metrics
from ragtui.format.numbers import SHORT_METRIC_WIDTH
from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.cases import CaseListScreen
from ragtui.tui.screens.compare import CompareScreen
from tests.tui.conftest import JUDGE, wait_ready
from tests.tui.history_b import screen_lines

METRICS = [
    f"an_extremely_long_metric_name_for_checking_the_layout_number_{i:02d}" for i in range(12)
]
IDS = [f"case-with-a-really-really-long-identifier-from-the-dataset-{i:03d}" for i in range(20)]
RUNS = (
    ("long-a", "a-baseline-with-a-rather-long-run-name", 0.8),
    ("long-b", "b-candidate-with-an-even-longer-run-name-here", 0.6),
)
SIZE = (100, 32)
FIGURE = re.compile(r"^-?\d+\.\d$|^[+-]\d+\.\d$|^0\.0$|^\d+$")


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    for k, (run_id, name, quality) in enumerate(RUNS):
        rng = random.Random(k)
        cases = [
            Case(
                case_id=cid,
                question=f"question of {cid}",
                answer="an answer",
                scores={
                    m: Score(value=round(min(1.0, max(0.0, rng.gauss(quality, 0.25))), 3))
                    for m in METRICS
                },
            )
            for cid in IDS
        ]
        run = Run(
            id=run_id,
            name=name,
            created_at=f"2026-11-2{k}T10:00:00Z",
            config={"variant": k},
            config_key=f"cfg-{k}",
            judge=JUDGE,
            dataset=DatasetInfo(name="golden", version="v1"),
        )
        write_run_file(folder / f"{run_id}{SUFFIX}", run, cases)
    return folder


def test_metric_abbreviations_are_bounded_and_unique() -> None:
    shorts = short_metrics(METRICS)
    assert len(set(shorts.values())) == len(METRICS)
    assert all(len(s) <= SHORT_METRIC_WIDTH for s in shorts.values()), shorts
    assert shorts[METRICS[7]].endswith("07")  # the end that tells them apart stays


async def test_runs_headers_are_bounded(long_names, make_app) -> None:
    """One abbreviated header took 55 columns, the others were off screen."""
    app = make_app(long_names)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        header = screen_lines(app)[1]
        for i in range(4):  # four metrics side by side at 100 columns, each told apart
            assert f"{i:02d}" in header, header


async def test_cases_of_a_run_tell_long_ids_apart(long_names, make_app) -> None:
    """Every id was cut to 'case-with-a-really-really-long-i…': twenty rows alike."""
    app = make_app(long_names)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("enter")
        await wait_ready(app, pilot)
        assert isinstance(app.screen, CaseListScreen)
        rows = [x for x in screen_lines(app) if re.match(r"^\s+\d+\s+case-", x)]
        assert len(rows) >= 10
        shown = [x.split()[1] for x in rows]
        assert len(set(shown)) == len(shown), shown
        for n, cell in enumerate(shown):
            assert cell.endswith(f"{n:03d}"), cell


async def test_compare_keeps_both_names_and_the_case_figures(long_names, make_app) -> None:
    """The title lost B's name; the case list showed the case column only (no A, B, Δ)."""
    app = make_app(long_names)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen("long-a", "long-b"))
        await wait_ready(app, pilot)
        lines = screen_lines(app)
        title = lines[0]
        assert "A a-baseline" in title and "run-name " in title, title
        assert "vs  B b-candidate" in title and "run-name-here" in title, title
        header = next(x for x in lines if " case " in x and "Δ pts" in x)
        assert re.search(r"\bA\b.*\bB\b.*Δ pts", header), header
        start = header.index("│") + 1 if "│" in header else 0
        rows = [x[start:] for x in lines if re.search(r"case-\S+\d{3}\b", x)]
        assert rows
        for row in rows:
            cells = row.split()
            assert len([c for c in cells if FIGURE.match(c)]) >= 3, row
        metric_rows = [x for x in lines if "an_extremely" in x]
        assert any(re.search(r"\d+\.\d\s+\d+\.\d", x) for x in metric_rows), metric_rows


async def test_case_shows_every_figure_and_the_title_values(long_names, make_app) -> None:
    """The scores table read 'an_extremely_long…  63…  4…  -20…'; the title had no A → B."""
    app = make_app(long_names)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = CaseScreen("long-b", IDS[:3], 0, other_run_id="long-a", metric=METRICS[9])
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        lines = screen_lines(app)
        assert re.search(r"A \d+(\.\d)? → B \d+(\.\d)?", lines[0]), lines[0]
        assert "1 / 3 in list" in lines[0] and "dataset-000" in lines[0], lines[0]
        rows = [x for x in lines if "an_extremely" in x and "…" in x and "number_" in x]
        assert len(rows) >= 8, lines
        for row in rows:
            assert "…" not in row.split("number_")[1], row  # nothing cut after the name
            cells = row.split("number_")[1].split()
            assert len([c for c in cells if FIGURE.match(c)]) >= 3, row


def test_a_word_one_letter_longer_than_the_cut_stays_whole() -> None:
    """Inspect's `choice` scorer was headed 'choic': one cell saved, a word misread."""
    shorts = short_metrics(["choice", "faithfulness", "answer_relevance"])
    assert shorts == {"choice": "choice", "faithfulness": "faith", "answer_relevance": "ans rel"}
