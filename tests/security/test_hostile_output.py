"""Every CLI command on a folder where every field of every run file, every metric name and
every file name carries terminal attacks, and with a judge server whose model names, replies
and error bodies carry them too: the raw bytes each real process writes hold no ESC, no C1
control, no bidi or invisible character from the data (issue 15, point 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakejudge import FakeJudge, Fault
from tests.security.hostile import (
    CASE,
    PAYLOAD,
    RUN_A,
    RUN_B,
    evil,
    leaks,
    ragtui,
    write_hostile_folder,
)


@pytest.fixture(scope="module")
def hostile_judge() -> Iterator[FakeJudge]:
    """Offers a model with a hostile name; its replies and error bodies are hostile."""
    fake = FakeJudge(models=["judge-1", evil("model")], default=evil("reply"))
    fake.when("answer1", Fault(400, body=evil("errorbody")))
    fake.when("answer2", Fault(500, body=evil("errorbody500")))
    with fake:
        yield fake


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, hostile_judge: FakeJudge) -> dict:
    root = tmp_path_factory.mktemp("hostile-out")
    folder = write_hostile_folder(root / "runs")
    xdg = root / "xdg"
    (xdg / "ragtui").mkdir(parents=True)
    (xdg / "ragtui" / "ragtui.toml").write_text(
        f'[judges.j]\nprovider = "ollama"\nurl = "{hostile_judge.url}"\nmodel = "judge-1"\n'
        "retries = 0\nbackoff = 0.01\ntimeout = 10\n",
        encoding="utf-8",
    )
    return {"folder": folder, "root": root, "env": {"XDG_CONFIG_HOME": str(xdg)}}


def run_clean(setup: dict, *args: str, ok: bool = True) -> tuple[str, str]:
    result = ragtui(*args, env=setup["env"], cwd=setup["root"])
    raw = result.stdout + result.stderr
    assert leaks(raw) == [], (args, raw[:2000])
    assert b"Traceback" not in raw, raw.decode("utf-8", "replace")
    if ok:
        assert result.returncode == 0, (args, raw.decode("utf-8", "replace"))
    return result.stdout.decode(), result.stderr.decode()


def test_listing_and_showing(setup: dict) -> None:
    folder = str(setup["folder"])
    out, err = run_clean(setup, "runs", folder)
    assert "skipped: " in err and "notice: imported" in err  # the hostile file names, escaped
    assert "\\x1b]52;c;cHduZWQ=\\x07" in err and "\\u202e" in out
    run_clean(setup, "show", RUN_A, "--path", folder)
    out, _ = run_clean(setup, "show", RUN_A, CASE, "--path", folder)
    assert "\\x9b31m" in out and "[bold red]mk[/]" in out  # shown, inert


def test_json_outputs_are_escaped_and_decode_to_the_data(setup: dict) -> None:
    folder = str(setup["folder"])
    out, _ = run_clean(setup, "runs", folder, "--json")
    assert {r["name"] for r in json.loads(out)["runs"]} >= {evil("name")}
    out, _ = run_clean(setup, "show", RUN_A, "--path", folder, "--json")
    assert json.loads(out)["run"]["id"] == RUN_A
    out, _ = run_clean(setup, "show", RUN_A, CASE, "--path", folder, "--json")
    assert json.loads(out)["question"] == evil("question1\nsecond line\t")
    out, _ = run_clean(setup, "compare", RUN_A, RUN_B, folder, "--json")
    assert evil("metric") in {m["metric"] for m in json.loads(out)["metrics"]}


def test_compare_gate_and_report(setup: dict) -> None:
    folder = str(setup["folder"])
    run_clean(setup, "compare", RUN_A, RUN_B, folder)
    run_clean(setup, "gate", RUN_B, RUN_A, folder, "--min", f"{evil('metric')}=0.9", ok=False)
    out, _ = run_clean(setup, "report", RUN_A, RUN_B, folder)
    assert out.startswith("# ragtui report")
    report = setup["root"] / "report.md"
    run_clean(setup, "report", RUN_A, RUN_B, folder, "-o", str(report))
    assert leaks(report.read_bytes()) == []


def test_judge_commands_with_a_hostile_server(setup: dict, hostile_judge: FakeJudge) -> None:
    folder = str(setup["folder"])
    out, _ = run_clean(setup, "judges", folder)
    assert "j: ollama judge-1" in out
    out, _ = run_clean(setup, "rejudge", RUN_A, folder, "--judge", "j", "-m", "faithfulness")
    assert "parse failures" in out
    assert "answered HTTP 400" in out  # the hostile error body, escaped, in a sample line
    # the resume asks again only the cases the server refused, which it refuses again: this
    # call judged nothing (exit 1, said on one clean line)
    _, err = run_clean(
        setup, "rejudge", RUN_A, folder, "--judge", "j", "-m", "faithfulness", "--json", ok=False
    )
    assert "nothing judged" in err
    hostile_judge.default = "YES"
    out, _ = run_clean(
        setup, "noise", RUN_A, folder, "--judge", "j", "-m", "faithfulness", "--times", "2"
    )
    assert "noise floor" in out
    run_clean(setup, "noise", RUN_A, folder, "--judge", "j", "-m", "faithfulness", "--json")


def test_import_and_trust_lines(setup: dict, tmp_path: Path) -> None:
    source = next(setup["folder"].glob("ragas*.csv"))
    out, _ = run_clean(setup, "import", str(source), "--into", str(tmp_path / "copy"))
    assert "3 cases" in out
    hostile_toml = tmp_path / "elsewhere" / "ragtui.toml"
    hostile_toml.parent.mkdir()
    hostile_toml.write_text(
        f"[judges.{json.dumps(PAYLOAD)}]\nprovider = 'ollama'\nurl = 'http://127.0.0.1:9'\n"
        f"model = {json.dumps(PAYLOAD)}\n[rerun]\ncommand = {json.dumps('run ' + PAYLOAD)}\n",
        encoding="utf-8",
    )
    out, _ = run_clean(setup, "trust", str(hostile_toml))
    assert "runs the command" in out
