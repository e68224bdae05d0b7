"""Fixtures for the core tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.as_reader import world_readable_dir  # noqa: F401  (a fixture)
from tests.core.run_writer import RunWriter


@pytest.fixture
def run_writer(tmp_path: Path) -> Iterator[RunWriter]:
    writer = RunWriter(tmp_path / "runs")
    writer.folder.mkdir()
    yield writer
    writer.close()
