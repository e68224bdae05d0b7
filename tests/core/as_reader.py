"""Running code that must not be able to write a folder, also as root (who ignores permission
bits): as root the script runs as the unprivileged user `nobody`, otherwise the folder is made
read-only. So CI, which runs as root, runs these tests instead of skipping them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_as_reader(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run a Python script (with the repository importable) that cannot write `folder`."""
    code = f"import sys\nsys.path.insert(0, {str(REPO)!r})\n" + textwrap.dedent(script)
    command = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        folder.chmod(0o755)
    else:
        folder.chmod(0o555)
    try:
        env = {**os.environ, "HOME": str(folder)}
        return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd="/")
    finally:
        folder.chmod(0o755)


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    # pytest's tmp_path sits under a 0700 folder that another user cannot enter.
    folder = Path(tempfile.mkdtemp(prefix="ragtui-ro-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
