"""`ragtui compare`, `gate` and `report` through click, on real run files in a temp folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.model import Claim
from tests.core.run_writer import RunWriter

N = 80


@pytest.fixture
def history(tmp_path: Path) -> RunWriter:
    """base (2 reruns), strict (better faithfulness), small (worse), noise (tiny change)."""
    w = RunWriter(tmp_path)
    rng = np.random.default_rng(31)
    ids = [f"case-{i:03d}" for i in range(N)]
    q = rng.uniform(0.3, 0.9, N)

    def labels(shift: float) -> dict[str, float]:
        return {c: float(rng.uniform() < min(1.0, p + shift)) for c, p in zip(ids, q, strict=True)}

    relevance = {c: float(np.round(p * 4) / 4) for c, p in zip(ids, q, strict=True)}
    base = {"generator": "llama3.2:3b", "prompt": "v1"}
    for k in range(2):
        w.write(
            f"base-{k}",
            {"faithfulness": labels(0.0), "relevance": relevance},
            config={**base, "seed": k},
            name="baseline",
        )
    w.write(
        "strict",
        {"faithfulness": labels(0.3), "relevance": relevance},
        config={**base, "prompt": "strict"},
        answers={ids[0]: "Support pays **by card** <b>now</b> | [link](x)"},
        claims={
            ids[0]: [
                Claim("faithfulness", "paid back by card", "UNSUPPORTED", (), "C2 says credit")
            ]
        },
    )
    w.write(
        "small",
        {"faithfulness": labels(-0.5), "relevance": relevance},
        config={**base, "generator": "tiny"},
    )
    noisy = dict(relevance)
    noisy[ids[1]] = max(0.0, noisy[ids[1]] - 0.25)
    w.write(
        "noise",
        {"faithfulness": labels(0.0), "relevance": noisy},
        config={**base, "temperature": 0.1},
        name="[red]noise[/red]",
    )
    return w


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_compare_table_says_points_and_verdicts(history: RunWriter) -> None:
    result = run("compare", "base-0", "strict", str(history.folder))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "faithfulness" in out and "improved" in out
    assert "reruns of A (2 runs, 80 cases) differ by" in out and "(rule of thumb: < 5)" in out
    assert "seed 20261201" in out
    assert "%" not in out.replace("95% CI", "").replace("worst 10%", "")


def test_compare_json_schema(history: RunWriter) -> None:
    result = run(
        "compare",
        "base-0",
        "small",
        str(history.folder),
        "--json",
        "--seed",
        "7",
        "--metric",
        "faithfulness",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["a"], data["b"], data["seed"], data["margin"]) == ("base-0", "small", 7, 0.05)
    (m,) = data["metrics"]
    assert m["metric"] == "faithfulness" and m["verdict"] == "regressed"
    assert m["noise_floor"] is not None and 0 <= m["mean_a"] <= 1
    assert len(data["cases"]) == N
    assert data["cases"][0]["delta"] == min(c["delta"] for c in data["cases"])


def test_untrusted_names_are_not_markup(history: RunWriter) -> None:
    result = run("compare", "base-0", "noise", str(history.folder))
    assert result.exit_code == 0, result.output
    assert "[red]noise[/red]" in result.stdout


def test_gate_exit_codes(history: RunWriter) -> None:
    folder = str(history.folder)
    ok = run("gate", "base-0", "strict", folder)
    assert ok.exit_code == 0, ok.output
    assert "gate: passed" in ok.stdout
    bad = run("gate", "base-0", "small", folder)
    assert bad.exit_code == 1, bad.output
    assert "FAIL faithfulness regressed by" in bad.stdout
    # a one-case drop on relevance is within noise: it does not fail the gate
    noise = run("gate", "base-0", "noise", folder, "--metric", "relevance")
    assert noise.exit_code == 0, noise.output
    assert "no meaningful change" in noise.stdout or "inconclusive" in noise.stdout
    floor = run("gate", "base-0", "strict", folder, "--min", "faithfulness=0.99")
    assert floor.exit_code == 1
    assert "below the floor 99.0" in floor.stdout
    held = run("gate", "base-0", "strict", folder, "--min", "relevance=0.1")
    assert held.exit_code == 0 and "≥ floor 10.0" in held.stdout
    assert run("gate", "base-0", "no-such-run", folder).exit_code == 2
    bad_min = run("gate", "base-0", "strict", folder, "--min", "faithfulness")
    assert bad_min.exit_code == 2 and "METRIC=VALUE" in bad_min.output
    assert run("gate", "base-0", "strict", folder, "--margin", "5").exit_code == 2


def test_report_markdown(history: RunWriter, tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    result = run("report", "base-0", "strict", str(history.folder), "-o", str(target))
    assert result.exit_code == 0, result.output
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# ragtui report: baseline vs strict")
    assert "| metric | N | A | B | Δ pts | 95% CI | p adj | noise ± | MDE | verdict |" in text
    assert "**improved**" in text
    assert "## The 10 worst cases" in text and text.count("\n### ") == 10
    assert "judge prompt" not in text  # same judge: no judge warning
    # the case with an unsupported claim, if among the worst, shows it escaped
    stdout = run("report", "base-0", "strict", str(history.folder), "-m", "faithfulness")
    assert stdout.exit_code == 0
    assert "**Question:** question case-" in stdout.stdout


def test_report_escapes_untrusted_text(tmp_path: Path) -> None:
    w = RunWriter(tmp_path)
    w.write("a", {"f": {"x": 1.0, "y": 1.0}})
    w.write(
        "b",
        {"f": {"x": 0.0, "y": 1.0}},
        config={"prompt": "v2"},
        answers={"x": "Support pays **by card** <b>now</b> | [link](x)"},
        claims={"x": [Claim("f", "paid back by card", "UNSUPPORTED", (), "C2 says credit")]},
    )
    result = run("report", "a", "b", str(tmp_path))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert r"Support pays \*\*by card\*\* \<b\>now\<\/b\>" not in out  # '/' is not escaped
    assert r"Support pays \*\*by card\*\* \<b\>now\</b\> \| \[link\](x)" in out
    assert "- **Unsupported claims (B):**" in out
    assert "paid back by card — C2 says credit" in out
