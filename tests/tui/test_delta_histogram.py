"""The per-case Δ histogram: its axis in points, and a caption that is whole or compact, never cut."""

from __future__ import annotations

import numpy as np
import pytest
from textual.app import App, ComposeResult

from ragtui.tui.widgets.delta_histogram import DeltaHistogram
from tests.tui.conftest import widget_text


class HistogramApp(App[None]):
    CSS = "DeltaHistogram { width: 100%; height: 10; }"

    def compose(self) -> ComposeResult:
        yield DeltaHistogram()


@pytest.mark.parametrize("width", [20, 28, 30, 40])
async def test_axis_in_points_and_a_caption_never_cut(width: int) -> None:
    deltas = np.array([-1.0] * 15 + [0.0] * 18 + [0.5] * 15)  # 15 worse, 18 same, 15 better
    app = HistogramApp()
    async with app.run_test(size=(width, 12)) as pilot:
        histogram = app.query_one(DeltaHistogram)
        histogram.set_deltas("faithfulness", deltas)
        await pilot.pause()
        *_, axis, labels, caption = widget_text(histogram).rstrip("\n").splitlines()
    assert set(axis.strip()) == {"─"}
    assert labels.split() == ["-100", "0", "+100"]
    full = "15 worse · 18 same · 15 better"  # 30 cells
    assert caption.strip() == (full if width >= len(full) else "▼15 =18 ▲15")
