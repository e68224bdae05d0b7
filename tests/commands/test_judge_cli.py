"""`ragtui rejudge / judges / noise` end to end: real CLI, real index, real HTTP fake judge."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Case, Chunk, JudgeInfo, Run, Score
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.services.workspace import open_workspace
from ragtui.trust import user_config_path
from tests.fakejudge import FakeJudge, Fault

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"

SECRET = "sk-live-TOPSECRET-0123456789abcdef"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Iterator[FakeJudge]:
    with FakeJudge(models=["judge-1"]) as fake:
        yield fake


def make_runs(folder: Path, n: int = 8) -> Path:
    folder.mkdir(exist_ok=True)
    for run_id, good in (("base", 1.0), ("cand", 0.5)):
        run = Run(
            id=run_id,
            name=run_id,
            created_at="2026-11-20T10:00:00Z",
            config={"k": run_id},
            judge=JudgeInfo(),
        )
        cases = [
            Case(
                case_id=f"c{i:02d}",
                question=f"Q{i}?",
                answer=f"ANSWER-{i:02d} {run_id}",
                contexts=(Chunk(id="k1", text=f"fact {i}"),),
                scores={"faithfulness": Score(value=good if i % 2 else 1.0, label="YES")},
            )
            for i in range(n)
        ]
        write_run_file(folder / f"{run_id}.ragtui.jsonl", run, cases)
    return folder


def adhoc(fake: FakeJudge, *extra: str) -> list[str]:
    return ["--provider", "ollama", "--url", fake.url, "--model", "judge-1", *extra]


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_rejudge_adhoc(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    server.when("ANSWER-03", "NO")
    result = invoke("rejudge", "base", str(runs), "--metric", "faithfulness", *adhoc(server))
    assert result.exit_code == 0, result.output
    assert "8 cases judged; 8 scored, 0 parse failures, 0 errors" in result.stdout
    [path] = runs.glob("base--rejudge-*.ragtui.jsonl")
    rf = read_run_file(path)
    assert rf.run.kind == "rejudge" and rf.run.parent == "base"
    assert {c.case_id: c.scores["faithfulness"].label for c in rf.cases}["c03"] == "NO"
    again = invoke(
        "rejudge", "base", str(runs), "--metric", "faithfulness", *adhoc(server), "--json"
    )
    summary = json.loads(again.stdout)
    assert summary["resumed"] == 8 and summary["scored"] == 0 and len(server.chat_requests()) == 8
    third = invoke("rejudge", "base", str(runs), "--metric", "faithfulness", *adhoc(server))
    assert third.stdout.splitlines()[-1] == f"nothing new written to {path}"  # not "wrote"


def test_the_demo_history_is_never_written_and_the_line_says_what_to_do(
    tmp_path: Path, server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's ad-hoc example typed where there is no ./runs: the demo is shown, but a
    re-judge would write into the installation; the line names a way out, nothing is judged."""
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.stat().st_mtime_ns for p in SAMPLES.iterdir()}
    result = CliRunner().invoke(cli, ["rejudge", "baseline", *adhoc(server)])
    # a folder the user must name is bad input: 2, as for a run that is not there
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [
        "Error: no run files in ./runs, and the bundled demo history is not written to: name "
        f"a runs folder (PATH), or try it on a copy (cp -r {SAMPLES} runs)"
    ]
    assert server.chat_requests() == []
    assert {p.name: p.stat().st_mtime_ns for p in SAMPLES.iterdir()} == before
    # named by its path, the demo is not written either: a re-judge, a noise check, an import
    files = sorted(p.name for p in SAMPLES.iterdir() if not p.name.startswith("."))
    refused = f"{SAMPLES} is the bundled demo history, which is not written to: try it on a copy"
    for args in (
        ["rejudge", "baseline", str(SAMPLES), *adhoc(server)],
        ["noise", "baseline", str(SAMPLES), *adhoc(server), "--times", "2"],
        ["import", str(tmp_path / "x.jsonl"), "--into", str(SAMPLES)],
    ):
        (tmp_path / "x.jsonl").write_text('{"question": "q", "answer": "a"}\n')
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (1, 2) and refused in result.stderr, (args, result.output)
    assert server.chat_requests() == []
    assert sorted(p.name for p in SAMPLES.iterdir() if not p.name.startswith(".")) == files
    # the TUI writes through the same store: opened on the demo, it refuses a batch too
    with open_workspace(SAMPLES) as workspace, pytest.raises(RagtuiError, match=refused):
        workspace.store.require_writable("write a judged run")


def test_rejudge_selected_cases_and_garbage(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    server.default = "¯\\_(ツ)_/¯ [bold]not markup[/bold]"
    result = invoke(
        "rejudge",
        "base",
        str(runs),
        "--case",
        "c01",
        "--case",
        "c02",
        "-m",
        "faithfulness",
        "-m",
        "answer_relevance",
        *adhoc(server),
    )
    assert result.exit_code == 0, result.output
    assert "2 cases judged; 0 scored, 4 parse failures, 0 errors" in result.stdout


def test_connection_refused_is_one_line_and_non_zero(tmp_path: Path) -> None:
    runs = make_runs(tmp_path / "runs")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = invoke(
        "rejudge",
        "base",
        str(runs),
        "--provider",
        "openai",
        "--url",
        f"http://127.0.0.1:{port}",
        "--model",
        "m",
    )
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "connection refused" in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert result.stderr == lines[0] + "\n"  # nothing else: no blank line from a progress bar
    # nothing was judged, so no empty N=0 run is left behind (issue 14)
    assert sorted(p.name for p in runs.iterdir() if p.suffix == ".jsonl") == [
        "base.ragtui.jsonl",
        "cand.ragtui.jsonl",
    ]
    listed = invoke("runs", str(runs), "--json")
    assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == ["base", "cand"]


def test_a_case_re_judge_the_judge_failed_entirely_exits_1_not_0(
    tmp_path: Path, server: FakeJudge
) -> None:
    """Two cases (under the stop rule's three) whose every grade the judge refused: nothing
    was judged, so the exit code says a failure (a script must not take it for done), with
    one Error line on stderr; with --json, the counts are still printed."""
    runs = make_runs(tmp_path / "runs")
    write_toml(runs, server)  # backoff 0.01: the retries are quick
    server.default = Fault(500, body="model overloaded")
    args = ("rejudge", "base", str(runs), "--case", "c01", "--case", "c02", "-m", "faithfulness")
    env = {"RAGTUI_TEST_SECRET": SECRET}
    result = invoke(*args, "--judge", "local", "--json", env=env)
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["left_out"] == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "2 cases" in errors[0] and "Traceback" not in result.output
    assert not list(runs.glob("base--rejudge-*"))
    # one case of two refused: something was judged, that is a partial success (exit 0)
    server.default = "YES"
    server.when("ANSWER-01", Fault(500, body="model overloaded"))
    assert invoke(*args, "--judge", "local", env=env).exit_code == 0
    # c01 alone again, refused again: nothing judged by this call, though the run file that
    # the call before began is there (it exited 0 then, and 1 on a fresh folder)
    assert list(runs.glob("base--rejudge-*"))
    again = invoke(
        "rejudge",
        "base",
        str(runs),
        "--case",
        "c01",
        "-m",
        "faithfulness",
        "--judge",
        "local",
        env=env,
    )
    assert again.exit_code == 1, again.output
    assert (
        "the judge failed every grade of the 1 case asked: nothing judged (running" in again.stderr
    )


def test_bad_judge_choice_is_one_line(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    """Bad input exits 2 in the judge commands as everywhere else (they exited 1, the code
    of a judge that failed); a judge that cannot be reached stays 1."""
    result = invoke("rejudge", "base", str(runs), "--judge", "nope")
    assert result.exit_code == 2 and "unknown judge 'nope'" in result.stderr
    result = invoke("rejudge", "base", str(runs), "--provider", "ollama")
    assert result.exit_code == 2 and "missing --url, --model" in result.stderr
    result = invoke("rejudge", "base", str(runs))
    assert result.exit_code == 2 and "name a judge: --judge NAME" in result.stderr
    adhoc = ["--provider", "openai", "--url", f"{server.url}/v1", "--model", "judge-1"]
    result = invoke("rejudge", "nosuch", str(runs), *adhoc)
    assert result.exit_code == 2 and "no run 'nosuch'" in result.stderr
    assert invoke("compare", "nosuch", "base", str(runs)).exit_code == 2  # as compare does
    result = invoke("rejudge", "base", str(runs), "--case", "no-such-case", *adhoc)
    assert result.exit_code == 2 and "has no case 'no-such-case'" in result.stderr
    assert server.chat_requests() == []  # nothing was sent for any of them


def write_toml(folder: Path, fake: FakeJudge, extra: str = "") -> None:
    """Judges go in the user's own config (a runs folder's ragtui.toml may not name judges)."""
    user_config = user_config_path()
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(
        f'[judges.local]\nprovider = "openai"\nurl = "{fake.url}/v1"\nmodel = "judge-1"\n'
        f'api_key_env = "RAGTUI_TEST_SECRET"\nbackoff = 0.01\n'
        f'[judges.gone]\nprovider = "ollama"\nurl = "http://127.0.0.1:9"\nmodel = "x"\n'
        f"retries = 0\n{extra}",
        encoding="utf-8",
    )


def test_api_key_never_written_or_logged(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    write_toml(runs, server)
    server.required_key = SECRET
    env = {"RAGTUI_TEST_SECRET": SECRET}
    outputs = [
        invoke("rejudge", "base", str(runs), "--judge", "local", "-m", "faithfulness", env=env),
        invoke(
            "noise",
            "base",
            str(runs),
            "--judge",
            "local",
            "--times",
            "2",
            "-m",
            "faithfulness",
            env=env,
        ),
        invoke("judges", str(runs), env=env),
    ]
    server.required_key = "something-else"  # now every call is refused with 401
    outputs.append(invoke("rejudge", "cand", str(runs), "--judge", "local", env=env))
    assert [r.exit_code for r in outputs[:2]] == [0, 0], outputs[0].output + outputs[1].output
    # the refusal is reported (every grade refused the same way: the batch stops at once)...
    assert outputs[3].exit_code == 1 and "HTTP 401" in outputs[3].stderr
    assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in server.chat_requests())
    for r in outputs:  # ...but never with the key
        assert SECRET not in r.output
    files = [p for p in runs.rglob("*") if p.is_file()]
    assert any(p.name == ".ragtui.duckdb" for p in files) and len(files) >= 6
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p


def test_missing_key_env_is_a_clear_error(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    write_toml(runs, server)
    result = invoke(
        "rejudge", "base", str(runs), "--judge", "local", env={"RAGTUI_TEST_SECRET": ""}
    )
    assert result.exit_code == 2  # the user's own setup: fixed by them, as bad input is
    assert "judges.local.api_key_env names $RAGTUI_TEST_SECRET, which is not set" in result.stderr


def test_judges_lists_and_checks(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs")
    write_toml(runs, server)
    result = invoke("judges", str(runs), env={"RAGTUI_TEST_SECRET": SECRET})
    assert result.exit_code == 1
    assert re.search(r"local: openai judge-1 at .* key \$RAGTUI_TEST_SECRET — ok", result.stdout)
    assert re.search(r"gone: ollama x at .* — FAILED: .*connection refused", result.stdout)
    assert "1 of 2 judges not usable" in result.stderr
    assert [r.path for r in server.log()] == ["/v1/models"]


def test_noise_prints_floor_and_verdict(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs", n=12)
    flip = {"n": 0}

    def noisy(request):  # every third call disagrees: reruns differ
        flip["n"] += 1
        return "NO" if flip["n"] % 3 == 0 else "YES"

    server.responder = noisy
    pending = invoke("compare", "base", "cand", "--path", str(runs), "-m", "faithfulness", "--json")
    (was,) = json.loads(pending.stdout)["metrics"]
    result = invoke(
        "noise",
        "base",
        str(runs),
        *adhoc(server),
        "--times",
        "3",
        "-m",
        "faithfulness",
        "--against",
        "cand",
    )
    assert result.exit_code == 0, result.output
    # the pending verdict before → with the noise, in the Noise screen's words (it was only
    # on the screen): here under two judges, which is said
    shown = invoke("show", "base", "--path", str(runs), "--json")
    own = json.loads(shown.stdout)["run"]["judge"]["model"] or "the runs' own judge"
    assert (
        f"verdict of the pending comparison, graded by {own} → graded by the noise judge "
        "judge-1, with its noise" in result.stdout
    )
    assert "two judges: a verdict that changed may have changed with the judge" in result.stdout
    assert re.search(
        rf"^  faithfulness  {re.escape(was['verdict_text'])} → [a-z ()<]+(  \(noise floor ±\d+\.\d\))?$",
        result.stdout,
        re.M,
    ), result.stdout
    # 3 reruns of base, then cand re-judged by the same judge for a like-for-like verdict
    assert len(server.chat_requests()) == 36 + 12
    assert "B re-judged by ollama-judge-1" in result.stdout
    # the floor is the noise judge's, and base was graded by another: said, not implied
    assert "the noise floor is judge-1's: base was graded by " in result.stdout
    assert "whose own noise may differ" in result.stdout
    assert re.search(r"faithfulness: reruns [\d. /]+ · noise floor ±\d+\.\d points", result.stdout)
    assert "vs  B" in result.stdout and "faithfulness" in result.stdout


def test_noise_full_runs_the_pipeline(tmp_path: Path) -> None:
    runs = make_runs(tmp_path / "runs")
    script = tmp_path / "pipeline.py"
    script.write_text(
        "import json, sys, pathlib\n"
        "config, out, run_id = sys.argv[1:4]\n"
        "cfg = json.load(open(config))\n"
        "print('pipeline running', run_id, cfg)\n"
        "header = {'ragtui_run': 1, 'id': 'ignored', 'name': 'x', "
        "'created_at': '2026-11-21T00:00:00Z', 'config': cfg}\n"
        "rows = [{'case_id': f'c{i:02d}', 'question': 'q', 'answer': 'a', 'scores': "
        "{'faithfulness': {'value': float(i % 2)}}} for i in range(8)]\n"
        "p = pathlib.Path(out) / 'result.ragtui.jsonl'\n"
        "p.write_text('\\n'.join(json.dumps(x) for x in [header, *rows]) + '\\n')\n",
        encoding="utf-8",
    )
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[rerun]\ncommand = "{sys.executable} {script} {{config}} {{out}} {{run_id}}"\n',
        encoding="utf-8",
    )
    result = invoke("noise", "base", str(runs), "--full", "--times", "2")
    assert result.exit_code == 0, result.output
    assert "| pipeline running base--full-" in result.stderr
    assert "faithfulness: reruns" in result.stdout
    made = sorted(runs.glob("base--full-*.ragtui.jsonl"))
    assert len(made) == 2
    headers = [read_run_file(p).run for p in made]
    base = read_run_file(runs / "base.ragtui.jsonl").run
    assert {h.kind for h in headers} == {"rerun"} and {h.parent for h in headers} == {"base"}
    assert {h.config_key for h in headers} == {base.config_key}


def test_a_second_full_noise_check_keeps_one_floor_with_the_earlier_reruns(tmp_path: Path) -> None:
    """`--full -k 2` twice: the second printed a floor over the parent and its own rerun alone,
    above a comparison whose floor is over every rerun of the config (as the judge-only check
    already counts its earlier reruns)."""
    runs = make_runs(tmp_path / "runs")
    counter = tmp_path / "calls"
    script = tmp_path / "pipeline.py"
    script.write_text(
        "import json, sys, pathlib\n"
        "config, out = sys.argv[1:3]\n"
        f"counter = pathlib.Path({str(counter)!r})\n"
        "n = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "counter.write_text(str(n))\n"
        "header = {'ragtui_run': 1, 'id': 'ignored', 'name': 'x', "
        "'created_at': '2026-11-21T00:00:00Z', 'config': json.load(open(config))}\n"
        "rows = [{'case_id': f'c{i:02d}', 'question': 'q', 'answer': f'new answer {n}', "
        "'scores': {'faithfulness': {'value': 0.0 if i < n else 1.0}}} for i in range(8)]\n"
        "p = pathlib.Path(out) / 'result.ragtui.jsonl'\n"
        "p.write_text('\\n'.join(json.dumps(x) for x in [header, *rows]) + '\\n')\n",
        encoding="utf-8",
    )
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[rerun]\ncommand = "{sys.executable} {script} {{config}} {{out}}"\n', encoding="utf-8"
    )
    args = ("noise", "base", str(runs), "--full", "-k", "2", "--against", "cand", "--json")
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    (noise,) = data["noise"]
    # the parent (every case 1.0), then rerun n gives its first n cases 0.0
    assert len(noise["runs"]) == 5 and noise["runs"][0] == "base"
    assert noise["means"] == [1.0, 7 / 8, 6 / 8, 5 / 8, 4 / 8]
    (metric,) = data["comparison"]["metrics"]
    assert noise["noise_floor"] == pytest.approx(metric["noise_floor"])


def test_kill_9_mid_batch_then_resume(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs", n=40)
    server.delay = 0.05
    command = [
        sys.executable,
        "-m",
        "ragtui",
        "rejudge",
        "base",
        str(runs),
        "-m",
        "faithfulness",
        *adhoc(server, "--concurrency", "2"),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = list(runs.glob("base--rejudge-*.ragtui.jsonl"))
        if files and len(files[0].read_text().splitlines()) > 8:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    [path] = runs.glob("base--rejudge-*.ragtui.jsonl")
    complete = path.read_text().split("\n")[1:-1]  # after the header; the last may be partial
    written = [json.loads(line)["case_id"] for line in complete]
    assert 8 <= len(written) < 40  # killed mid-batch
    time.sleep(0.1)  # a request the killed process had already sent is logged as the first's
    server.delay = 0.0  # the resume need not be slow
    resume_start = time.monotonic()
    resumed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    second = [
        re.search(r"ANSWER-(\d\d)", r.prompt).group(1)
        for r in server.chat_requests()
        if r.time >= resume_start
    ]
    assert not {f"c{n}" for n in second} & set(written)  # nothing finished was judged again
    # every unwritten case is judged once, except those whose reply had already arrived and
    # was kept in the batch's reply journal (at most the two in flight at --concurrency 2)
    assert len(second) == len(set(second))
    assert 40 - len(written) - 2 <= len(second) <= 40 - len(written)
    final = read_run_file(path)
    assert sorted(c.case_id for c in final.cases) == [f"c{i:02d}" for i in range(40)]
    assert f"({len(written)} already done)" in resumed.stdout


def test_ctrl_c_mid_batch_exits_130_with_one_line(tmp_path: Path, server: FakeJudge) -> None:
    """SIGINT (Ctrl-C, a cancelled CI job) is exit 130 and "interrupted": click's own
    "Aborted!" exited 1, which `ragtui gate` uses for a failed gate. Finished cases stay."""
    runs = make_runs(tmp_path / "runs", n=40)
    server.delay = 0.05
    command = [sys.executable, "-m", "ragtui", "rejudge", "base", str(runs), "-m", "faithfulness"]
    proc = subprocess.Popen(
        [*command, *adhoc(server, "--concurrency", "2")],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal delivers it: the test worker may ignore SIGINT, and a child inherits that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(server.chat_requests()) < 6:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    [path] = runs.glob("base--rejudge-*.ragtui.jsonl")
    assert len(path.read_text().splitlines()) >= 2  # the header and the cases finished


def test_noise_json(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs", n=10)
    calls = {"n": 0}

    def alternating(request):  # rerun 1 says YES to all, rerun 2 says NO to the first 5
        calls["n"] += 1
        return "NO" if 10 < calls["n"] <= 15 else "YES"

    server.responder = alternating
    result = invoke(
        "noise",
        "base",
        str(runs),
        *adhoc(server, "--concurrency", "1"),
        "-k",
        "2",
        "-m",
        "faithfulness",
        "--against",
        "cand",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    [noise] = data["noise"]
    assert noise["means"] == [1.0, 0.5] and noise["n"] == 10
    # hand-worked: e = five -1s and five 0s; floor = 1.96 * sqrt(sum e^2) / N
    assert noise["noise_floor"] == pytest.approx(1.96 * 5**0.5 / 10)
    assert noise["rerun_delta"] == pytest.approx(0.5)
    assert data["comparison"]["a"] == data["reruns"][0]


def test_noise_full_imports_a_foreign_result(tmp_path: Path) -> None:
    from ragtui.core.model import stable_case_id

    runs = tmp_path / "runs"
    runs.mkdir()
    questions = ["Who approves refunds?", "Which currencies?", "How to reset a password?"]
    parent = Run(id="base", name="base", created_at="2026-11-20T10:00:00Z", config={"k": 3})
    cases = [
        Case(
            case_id=stable_case_id(q),
            question=q,
            answer="a",
            scores={"faithfulness": Score(value=1.0)},
        )
        for q in questions
    ]
    write_run_file(runs / "base.ragtui.jsonl", parent, cases)
    script = tmp_path / "pipeline.py"  # writes a RAGAS-style CSV: imported by the sniffer
    script.write_text(
        "import sys, pathlib\n"
        "rows = ['user_input,response,retrieved_contexts,faithfulness']\n"
        f'rows += [f\'{{q}},a,"[""c""]",{{v}}\' for q, v in zip({questions!r}, [1, 0, 1])]\n'
        "(pathlib.Path(sys.argv[1]) / 'results.csv').write_text('\\n'.join(rows) + '\\n')\n",
        encoding="utf-8",
    )
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[rerun]\ncommand = "{sys.executable} {script} {{out}}"\n', encoding="utf-8"
    )
    result = invoke("noise", "base", str(runs), "--full", "--times", "2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["reruns"]) == 3  # the parent and two pipeline reruns
    [noise] = data["noise"]
    assert noise["n"] == 3 and noise["means"] == pytest.approx([1.0, 2 / 3, 2 / 3])
    made = [read_run_file(p) for p in sorted(runs.glob("base--full-*.ragtui.jsonl"))]
    assert [rf.run.source.format for rf in made] == ["ragas", "ragas"]
    assert {rf.run.config_key for rf in made} == {
        read_run_file(runs / "base.ragtui.jsonl").run.config_key
    }


def test_rejudge_replaces_a_crash_left_file_and_says_so(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs", n=4)
    args = ("rejudge", "base", "-p", str(runs), "-m", "faithfulness", *adhoc(server))
    assert invoke(*args).exit_code == 0
    [path] = runs.glob("base--rejudge-*.ragtui.jsonl")
    path.write_bytes(b"")  # what a kill -9 or a full disk left before the header was durable
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    notice = f"{path} was empty (left by an interrupted batch): started it again"
    assert f"notice: {notice}" in result.stderr
    data = json.loads(result.stdout)
    assert notice in data["notices"] and data["skipped"] == [] and data["folder"] == str(runs)
    assert data["cases"] == 4 and data["resumed"] == 0
    assert len(read_run_file(path).cases) == 4


def test_unknown_metrics_are_usage_errors_listing_the_known(tmp_path: Path, server) -> None:
    runs = make_runs(tmp_path / "runs", n=4)
    rejudge = invoke("rejudge", "base", str(runs), "-m", "faithfulnes", *adhoc(server))
    assert rejudge.exit_code == 2
    assert "unknown metric 'faithfulnes' (judge metrics: faithfulness," in rejudge.stderr
    noise = invoke("noise", "base", "-p", str(runs), "-m", "recal", *adhoc(server))
    assert noise.exit_code == 2 and "judge metrics: faithfulness" in noise.stderr
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text('[rerun]\ncommand = "false"\n', encoding="utf-8")
    full = invoke("noise", "base", str(runs), "--full", "-m", "faithfulnes")
    assert full.exit_code == 2
    assert "metric 'faithfulnes' is not scored in base (it has: faithfulness)" in full.stderr
    assert not server.chat_requests()


def test_a_smaller_times_after_a_larger_keeps_one_noise_floor(
    tmp_path: Path, server: FakeJudge
) -> None:
    """`-k 3` then `-k 2`: the second reuses reruns 1-2 (asked nothing) while the comparison
    averages all 3; its noise lines were over the 2 alone (±7.1 above a verdict with ±7.6).
    Now the floor is over every run of the reruns' config, as the comparison's."""
    runs = make_runs(tmp_path / "runs", n=10)
    calls = {"n": 0}

    def third_says_no(request):  # rerun 2 says NO to 1 case, rerun 3 to 4 (none identical)
        calls["n"] += 1
        return "NO" if calls["n"] == 11 or 20 < calls["n"] <= 24 else "YES"

    server.responder = third_says_no
    args = (str(runs), *adhoc(server, "--concurrency", "1"), "-m", "faithfulness")
    pending = invoke("compare", "base", "cand", "--path", str(runs), "-m", "faithfulness", "--json")
    first = invoke("noise", "base", *args, "-k", "3", "--against", "cand", "--json")
    assert first.exit_code == 0, first.output
    # the verdict as it stood before the reruns, as `compare` gave it then
    before = json.loads(first.stdout)["before"]
    assert before["metrics"] == json.loads(pending.stdout)["metrics"]
    asked = len(server.chat_requests())
    again = invoke("noise", "base", *args, "-k", "2", "--against", "cand", "--json")
    assert again.exit_code == 0, again.output
    assert len(server.chat_requests()) == asked  # the reruns and re-judged cand are reused
    data = json.loads(again.stdout)
    [noise] = data["noise"]
    assert noise["means"] == [1.0, 0.9, 0.6]  # all 3 reruns, by hand
    (metric,) = data["comparison"]["metrics"]
    assert noise["noise_floor"] == pytest.approx(metric["noise_floor"])


def test_a_judge_that_answers_alike_every_time_is_said(tmp_path: Path, server: FakeJudge) -> None:
    runs = make_runs(tmp_path / "runs", n=10)
    server.responder = lambda request: "YES"
    result = invoke(
        "noise", "base", str(runs), *adhoc(server), "-k", "2", "-m", "faithfulness",
        "--against", "cand",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "noise floor ±0.0 points" in result.stdout
    assert "every run gave every case the same grade" in result.stdout
    # the comparison below leaves the twin out; it says why, not "run a noise rerun of A"
    assert "run a noise rerun of A to measure it" not in result.stdout
    assert "1 rerun identical to an earlier run was left out as cached copies" in result.stdout


def test_the_noise_floor_leaves_out_a_run_of_the_config_with_new_answers(
    tmp_path: Path, server: FakeJudge
) -> None:
    """The floor is judge-only: the parent's answers graded again. A run of the reruns'
    config that made new answers (a regeneration) carries generation noise too: left out."""
    runs = make_runs(tmp_path / "runs", n=10)
    args = (str(runs), *adhoc(server, "--concurrency", "1"), "-m", "faithfulness", "--json")
    first = json.loads(invoke("noise", "base", *args, "-k", "2").stdout)
    key = json.loads(invoke("runs", str(runs), "--json").stdout)["runs"]
    config_key = next(r["config_key"] for r in key if r["id"] == first["reruns"][0])
    regen = Run(
        id="regen", name="base", created_at="2026-11-21T10:00:00Z", config_key=config_key,
        judge=JudgeInfo("judge-1", "ollama"), kind="rerun",
    )  # fmt: skip
    cases = [
        Case(case_id=f"c{i:02d}", question=f"Q{i}?", answer=f"NEW ANSWER {i}",
             scores={"faithfulness": Score(value=0.0, label="NO")})
        for i in range(10)
    ]  # fmt: skip
    write_run_file(runs / "regen.ragtui.jsonl", regen, cases)
    again = json.loads(invoke("noise", "base", *args, "-k", "2").stdout)
    [noise] = again["noise"]
    assert "regen" not in again["reruns"] and len(noise["means"]) == 2


def _legacy_header(path: Path, metrics: list[str]) -> None:
    """Rewrite a re-judge's header as an earlier version wrote it: its prompt hash over the
    prompts of the metrics it graded only."""
    from ragtui.judge.metrics import METRICS
    from ragtui.judge.prompts import combined_hash

    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["judge"]["prompt_hash"] = combined_hash([METRICS[m].prompt for m in metrics])
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")


@pytest.mark.parametrize("legacy", [False, True])
def test_a_noise_check_of_some_metrics_is_the_same_judge_as_the_re_judge_it_reruns(
    tmp_path: Path, server: FakeJudge, legacy: bool
) -> None:
    """Audit finding: the run-level prompt hash covered only the metrics chosen, so a noise
    check of faithfulness alone, by the judge and prompts that re-judged the run on two
    metrics, was taken for another judge: the re-judge left out of its own reruns and a line
    saying its floor was another judge's. The same judge model and per-metric prompts are one
    judge for the metrics they share (also for a re-judge file an earlier version wrote)."""
    runs = make_runs(tmp_path / "runs", n=6)
    server.when("Q2?", "2")
    server.when("1 to 5", "4")
    two = ("-m", "faithfulness", "-m", "answer_relevance")
    assert invoke("rejudge", "base", str(runs), *adhoc(server), *two).exit_code == 0
    [path] = runs.glob("base--rejudge-*.ragtui.jsonl")
    if legacy:
        _legacy_header(path, ["faithfulness", "answer_relevance"])
    rejudge = read_run_file(path).run
    result = invoke(
        "noise", rejudge.id, str(runs), *adhoc(server), "-k", "2", "-m", "faithfulness", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reruns"][0] == rejudge.id and len(data["reruns"]) == 3  # the run and 2 reruns
    assert data["note"] is None  # no "the noise floor is judge-1's" line
    headers = {r.id: r for r in (read_run_file(f).run for f in runs.glob("*.ragtui.jsonl"))}
    assert [headers[r].config_key for r in data["reruns"]] == [rejudge.config_key] * 3


def test_a_re_judge_of_some_metrics_counts_under_its_judge_in_a_comparison(
    tmp_path: Path, server: FakeJudge
) -> None:
    """A re-judged on two metrics, B on faithfulness alone, by one judge: the comparison shows
    the faithfulness verdict under that judge beside the runs' own (it looked for a re-judge
    of B with the same two-metric hash and found none)."""
    runs = make_runs(tmp_path / "runs", n=8)
    two = ("-m", "faithfulness", "-m", "answer_relevance")
    assert invoke("rejudge", "base", str(runs), *adhoc(server), *two).exit_code == 0
    assert invoke("rejudge", "cand", str(runs), *adhoc(server), "-m", "faithfulness").exit_code == 0
    result = invoke("compare", "base", "cand", str(runs), "-m", "faithfulness", "--json")
    data = json.loads(result.stdout)
    [a] = (read_run_file(f).run.id for f in runs.glob("base--rejudge-*.ragtui.jsonl"))
    [b] = (read_run_file(f).run.id for f in runs.glob("cand--rejudge-*.ragtui.jsonl"))
    under = [(j["judge"].split(" ")[0], j["a"], j["b"], j["metric"]) for j in data["judges"]]
    assert ("judge-1", a, b, "faithfulness") in under


def test_noise_counts_the_grades_of_a_case_whose_every_grade_failed(
    tmp_path: Path, server: FakeJudge
) -> None:
    """Audit finding: a case the judge failed entirely (a prompt too long: HTTP 400) is left
    out of each rerun's file, so the noise line and `noise --json` counted none of its grades
    as errors, while a case with one failed grade was counted. Here c03 fails every grade and
    c05 its relevance only, in both reruns: faithfulness has 1 error per rerun, relevance 2,
    and the JSON says per rerun how many cases were left out and how many are partial."""
    runs = make_runs(tmp_path / "runs", n=8)
    server.when("ANSWER-03", Fault(400, body="context length exceeded"))
    server.when("Q5?", Fault(400, body="context length exceeded"))
    server.when("1 to 5", "4")
    args = ("noise", "base", str(runs), *adhoc(server), "-k", "2")
    two = ("-m", "faithfulness", "-m", "answer_relevance")
    data = json.loads(invoke(*args, *two, "--json").stdout)
    errors = {m["metric"]: (m["errors"], m["n"]) for m in data["noise"]}
    assert errors == {"faithfulness": ([1, 1], 7), "answer_relevance": ([2, 2], 6)}
    counts = [(b["left_out"], b["partial"], b["scored"], b["errors"]) for b in data["batches"]]
    assert counts == [(1, 1, 13, 3)] * 2  # 8 cases x 2 metrics = 16 grades
    text = invoke(*args, *two).stdout
    assert re.search(r"faithfulness: .* · 2 errored scores left out", text)
    assert re.search(r"answer_relevance: .* · 4 errored scores left out", text)


def test_two_runs_a_judge_grades_alike_are_not_called_a_cached_copy(
    tmp_path: Path, server: FakeJudge
) -> None:
    """Audit finding (the Noise screen): a judge that says YES to everything gives A and B the
    same score on every case, and the comparison said "B is identical to A on every score: a
    cached copy, not a new run" though B's answers differ from A's. Equal scores over other
    answers are no cached copy: the per-metric line says what equal grades can mean."""
    runs = make_runs(tmp_path / "runs", n=8)
    server.default = "YES"
    for run in ("base", "cand"):
        assert (
            invoke("rejudge", run, str(runs), *adhoc(server), "-m", "faithfulness").exit_code == 0
        )
    [a] = (read_run_file(f).run.id for f in runs.glob("base--rejudge-*.ragtui.jsonl"))
    [b] = (read_run_file(f).run.id for f in runs.glob("cand--rejudge-*.ragtui.jsonl"))
    text = invoke("compare", a, b, str(runs)).stdout
    assert "B is identical to A on every score" not in text
    assert "faithfulness: B equals A on all 8 cases" in text


def test_noise_full_refuses_a_native_result_cut_mid_line(tmp_path: Path) -> None:
    """A rerun command that crashed mid-line left a native file whose last case is cut: it
    was copied in as a whole rerun, silently one case short (the index's reading, which
    leaves a line still being written out, is no way to take a finished command's output)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    parent = Run(id="base", name="base", created_at="2026-11-20T10:00:00Z", config={"k": 3})
    cases = [
        Case(case_id=f"c{i}", question="q", answer="a", scores={"m": Score(value=0.5)})
        for i in range(3)
    ]
    write_run_file(runs / "base.ragtui.jsonl", parent, cases)
    script = tmp_path / "pipeline.py"  # two whole cases, the third cut short, no newline
    script.write_text(
        "import json, pathlib, sys\n"
        "head = {'ragtui_run': 1, 'id': 'x', 'created_at': '2026-11-20T10:00:00Z'}\n"
        "case = lambda i: json.dumps(\n"
        "    {'case_id': f'c{i}', 'question': 'q', 'answer': 'a', 'scores': {'m': {'value': 0.5}}}\n"
        ")\n"
        "text = json.dumps(head) + '\\n' + case(0) + '\\n' + case(1) + '\\n' + case(2)[:-7]\n"
        "(pathlib.Path(sys.argv[1]) / 'r.ragtui.jsonl').write_text(text)\n",
        encoding="utf-8",
    )
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(
        f'[rerun]\ncommand = "{sys.executable} {script} {{out}}"\n', encoding="utf-8"
    )
    result = invoke("noise", "base", str(runs), "--full", "--times", "2")
    assert result.exit_code != 0, result.output
    assert "r.ragtui.jsonl:4: expected one JSON object per line" in result.output, result.output
    assert not list(runs.glob("base--full-*.ragtui.jsonl"))  # no short rerun written
