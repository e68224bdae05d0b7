"""Issue 16 point 6 on the command line: a bad judge value is one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.model import Case, Run
from ragtui.core.runfile import write_run_file


@pytest.fixture
def runs(tmp_path: Path, user_config: Path) -> Path:
    run = Run(id="base", name="base", created_at="2026-11-20T10:00:00Z")
    write_run_file(
        tmp_path / "base.ragtui.jsonl", run, [Case(case_id="c", question="q", answer="a")]
    )
    user_config.write_text(
        '[judges.j]\nprovider = "ollama"\nurl = "http://127.0.0.1:9"\nmodel = "m"\n'
    )
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--judge", "j", "--timeout", "nan"],
            "--timeout: expected a number from 0.001 to 3600, found nan",
        ),
        (
            ["--judge", "j", "--timeout", "inf"],
            "--timeout: expected a number from 0.001 to 3600, found inf",
        ),
        (
            ["--provider", "ollama", "--model", "m", "--url", "http://[::1"],
            "--url: not a valid URL",
        ),
        (
            ["--provider", "ollama", "--model", "m", "--url", "http://h:99999"],
            "--url: not a valid URL",
        ),
        (
            ["--provider", "ollama", "--model", "m", "--url", "file:///etc/passwd"],
            "--url: expected an http://",
        ),
    ],
)
def test_bad_judge_values_on_the_command_line(runs: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["rejudge", "base", str(runs), *args])
    assert result.exit_code != 0
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
