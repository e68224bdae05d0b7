"""Files ragtui writes through a temporary name (run files, exports) get the mode any new
file gets here (0o666 less the umask), not mkstemp's private 0600: an export is made to share."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from ragtui.core.export import write_table
from ragtui.core.model import Run
from ragtui.core.runfile import SUFFIX, write_run_file


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_export_gets_the_mode_of_an_ordinary_file(tmp_path: Path, umask: int) -> None:
    expected = {0o022: 0o644, 0o027: 0o640, 0o077: 0o600}[umask]
    (tmp_path / "plain.txt").write_text("x")  # what the system itself gives a new file
    assert mode(tmp_path / "plain.txt") == expected
    for fmt in ("csv", "json", "parquet"):
        written = write_table(pa.table({"a": [1, 2]}), tmp_path / f"out.{fmt}", fmt)
        assert mode(written) == expected, fmt


def test_a_run_file_gets_the_mode_of_an_ordinary_file(tmp_path: Path, umask: int) -> None:
    expected = {0o022: 0o644, 0o027: 0o640, 0o077: 0o600}[umask]
    run = Run(id="r1", name="r", created_at="2026-11-20T10:00:00Z")
    path = write_run_file(tmp_path / f"r1{SUFFIX}", run, [])
    assert mode(path) == expected
