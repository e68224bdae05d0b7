"""Issue 15's attacks, run as described: a hostile runs folder beside a legitimate user config,
real `ragtui` processes, loopback judge servers that record what they receive. Asserted: no file
outside the folder and no existing run file changes, only the legitimate server is contacted,
no command from the folder runs, and no key or password reaches a file, the index or output."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from ragtui.core.model import Case, Run, Score
from ragtui.core.paths import run_file_name
from ragtui.core.runfile import read_run_file, write_run_file
from tests.fakejudge import FakeJudge, Fault, Reply
from tests.security.hostile import ragtui

KEY = "sk-legit-" + "K7" * 16
GITHUB = "ghp_" + "G4" * 16
PASSWORD = "pw-" + "P9" * 10


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """sha256 of every file under root (not following symlinks), `skip` excluded."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and path.is_relative_to(skip):
            continue
        if path.is_symlink():
            out[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def native(run_id: str, n: int, *, value: float = 1.0) -> tuple[Run, list[Case]]:
    run = Run(id=run_id, name=run_id, created_at="2026-11-02T10:00:00Z", config={"v": value})
    cases = [
        Case(
            case_id=f"c{i:02d}",
            question=f"question {i}",
            answer=f"ANSWER-{i}",
            scores={"faithfulness": Score(value=value if i % 3 else 0.0)},
        )
        for i in range(n)
    ]
    return run, cases


def drop_jsonl(path: Path, run_id: str, n: int = 1, answer: str = "dropped") -> None:
    """A native-looking `.jsonl` (not `.ragtui.jsonl`): converted into imported/ on open."""
    header = {"ragtui_run": 1, "id": run_id, "created_at": "2026-11-03T00:00:00Z", "config": {}}
    cases = [{"case_id": f"c{i:02d}", "question": "q", "answer": answer} for i in range(n)]
    path.write_text("\n".join(json.dumps(x) for x in [header, *cases]) + "\n", encoding="utf-8")


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """root/runs (the downloaded folder), root/xdg (the user's own config), root/outside."""
    root = tmp_path
    folder = root / "runs"
    folder.mkdir()
    write_run_file(folder / "baseline-2026-11-02.ragtui.jsonl", *native("baseline-2026-11-02", 48))
    write_run_file(folder / "candidate.ragtui.jsonl", *native("candidate", 48, value=0.5))
    (root / "outside").mkdir()
    (root / "outside" / "precious.txt").write_text("do not touch\n")
    xdg = root / "xdg"
    (xdg / "ragtui").mkdir(parents=True)
    env = {"XDG_CONFIG_HOME": str(xdg), "OPENAI_API_KEY": KEY, "GITHUB_TOKEN": GITHUB}
    return {"root": root, "folder": folder, "xdg": xdg, "env": env}


def run(world: dict, *args: str, ok: bool = True) -> tuple[str, str]:
    result = ragtui(*args, env=world["env"], cwd=world["root"])
    out, err = result.stdout.decode(), result.stderr.decode()
    assert "Traceback" not in out + err, out + err
    if ok:
        assert result.returncode == 0, out + err
    return out, err


def runs_json(world: dict) -> dict[str, dict]:
    out, _ = run(world, "runs", str(world["folder"]), "--json")
    return {r["id"]: r for r in json.loads(out)["runs"]}


# ---------------------------------------------------------------- 1. paths never from data


def test_dropped_files_never_overwrite_or_escape(world: dict) -> None:
    root, folder = world["root"], world["folder"]
    drop_jsonl(folder / "evil-parent.jsonl", "../baseline-2026-11-02")
    drop_jsonl(folder / "evil-up.jsonl", "../../outside/DROPPED")
    drop_jsonl(folder / "evil-abs.jsonl", str(root / "outside" / "ABS"))
    drop_jsonl(folder / "twin-a.jsonl", "twin", n=2, answer="first")
    drop_jsonl(folder / "twin-b.jsonl", "twin", n=3, answer="second")
    # a symlink planted where the conversion of `planted` would go, pointing outside
    (folder / "imported").mkdir()
    (folder / "imported" / run_file_name("planted")).symlink_to(root / "outside" / "precious.txt")
    drop_jsonl(folder / "planted.jsonl", "planted")
    before_outside = snapshot(root, skip=folder)
    before_runs = snapshot(folder)

    _, err = run(world, "runs", str(folder))
    assert snapshot(root, skip=folder) == before_outside  # nothing outside, no new directory
    after = snapshot(folder)
    assert {p: h for p, h in after.items() if p in before_runs} == before_runs  # none changed
    assert "run id 'twin' is already used in this folder; imported as 'twin-2'" in err
    runs = runs_json(world)
    assert runs["baseline-2026-11-02"]["n_cases"] == 48
    assert runs["../baseline-2026-11-02"]["n_cases"] == 1  # the id keeps its text
    assert runs["../../outside/DROPPED"]["n_cases"] == 1
    assert runs[str(root / "outside" / "ABS")]["n_cases"] == 1
    assert {runs["twin"]["n_cases"], runs["twin-2"]["n_cases"]} == {2, 3}  # both survive
    assert runs["planted"]["n_cases"] == 1
    for path in (folder / "imported").iterdir():
        if not path.is_symlink():
            assert path.resolve().parent == (folder / "imported").resolve()
            assert path.name.endswith(".ragtui.jsonl") and "/" not in path.name

    # converted once: the next opens write nothing and import nothing
    made = snapshot(folder, skip=folder / ".ragtui.duckdb")
    mtimes = {p: p.stat().st_mtime_ns for p in (folder / "imported").iterdir()}
    _, err = run(world, "runs", str(folder))
    _, err2 = run(world, "runs", str(folder))
    assert "notice: imported" not in err + err2
    assert snapshot(folder, skip=folder / ".ragtui.duckdb") == made
    assert {p: p.stat().st_mtime_ns for p in (folder / "imported").iterdir()} == mtimes


def test_a_planted_index_symlink_is_moved_aside_not_written_through(world: dict) -> None:
    """`.ragtui.duckdb` (and its WAL) linked to another database or file outside: ragtui
    would write its tables there. The links are renamed aside; their targets stay unchanged."""
    root, folder = world["root"], world["folder"]
    other = root / "outside" / "work.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE mine AS SELECT 42 AS answer")
    con.close()
    (folder / ".ragtui.duckdb").symlink_to(other)
    (folder / ".ragtui.duckdb.wal").symlink_to(root / "outside" / "precious.txt")
    before_outside = snapshot(root, skip=folder)
    _, err = run(world, "runs", str(folder))
    assert err.count("was a symlink; moved aside") == 2
    assert snapshot(root, skip=folder) == before_outside
    assert not (folder / ".ragtui.duckdb").is_symlink()
    assert runs_json(world)["baseline-2026-11-02"]["n_cases"] == 48


def test_an_index_that_came_with_the_folder_is_not_trusted(world: dict, tmp_path: Path) -> None:
    """A folder shipped with its `.ragtui.duckdb`, edited by whoever shipped it: a run row
    naming a run file outside the folder (the Case screen would read it, a re-judge would copy
    its texts into a new file here), and judge replies planted in the cache (a re-judge would
    take them as the user's judge's). Opened here, the index is rebuilt from the run files."""
    root, folder = world["root"], world["folder"]
    secret = root / "outside" / "secret.ragtui.jsonl"
    run_, cases = native("candidate", 48)
    write_run_file(secret, run_, [replace(c, question="SECRET " + c.question) for c in cases])
    outside_before = snapshot(root / "outside")
    with FakeJudge() as server:
        server.default = "NO"
        (world["xdg"] / "ragtui" / "ragtui.toml").write_text(
            f'[judges.local]\nprovider = "ollama"\nurl = "{server.url}"\nmodel = "judge-1"\n',
            encoding="utf-8",
        )
        args = ("rejudge", "candidate", "--judge", "local", "-m", "faithfulness", "--case")
        run(world, *args, "c01", str(folder))  # the shipper's own re-judge: its reply cached
        for made in folder.glob("candidate--*"):
            made.unlink()  # (only the cache keeps it)
        con = duckdb.connect(str(folder / ".ragtui.duckdb"))
        assert con.execute("SELECT count(*) FROM judge_cache").fetchone() == (1,)
        con.execute("UPDATE runs SET file_path = ? WHERE run_id = 'candidate'", [bytes(secret)])
        con.close()
        shipped = tmp_path / "downloaded"
        shutil.copytree(folder, shipped)  # as a clone or an unpacked archive gets it
        world["folder"] = shipped
        out, err = run(world, "show", "candidate", "c01", "--path", str(shipped))
        assert "was not made here by ragtui" in err and "rebuilt from the run files" in err
        assert "question 1" in out and "SECRET" not in out
        server.default = "YES"
        before = len(server.chat_requests())
        run(world, *args, "c01", str(shipped))
        assert len(server.chat_requests()) == before + 1  # asked, not taken from the cache
    made = read_run_file(next(shipped.glob("candidate--*")))
    assert made.cases[0].scores["faithfulness"].value == 1.0  # the judge's YES
    assert snapshot(root / "outside") == outside_before  # nothing written there either


@pytest.mark.parametrize("how", ["view", "orphan rows", "hard link", "forged mark"])
def test_a_planted_index_never_runs_or_shows_anything_it_holds(world: dict, how: str) -> None:
    """Indexes made by whoever shipped the folder: a `runs` view over a file outside (its SQL
    ran inside ragtui's queries: a run named after the file's text), run rows with no file rows
    (kept by the first check, which only emptied an index whose files or cache held rows), a
    hard link to an index elsewhere (it carries that index's mark along), and a mark copied in
    beside a foreign index."""
    root, folder = world["root"], world["folder"]
    secret = root / "outside" / "netrc"
    secret.write_text("machine x password HUNTER2\n")
    index = folder / ".ragtui.duckdb"
    if how == "hard link":
        elsewhere = root / "elsewhere"
        shutil.copytree(folder, elsewhere)
        run(world, "runs", str(elsewhere))  # an index, and its mark, made there by ragtui
        con = duckdb.connect(str(elsewhere / ".ragtui.duckdb"))
        con.execute("UPDATE runs SET name = 'PLANTED ' || name")
        con.close()
        os.link(elsewhere / ".ragtui.duckdb", index)
        shutil.copy(elsewhere / ".ragtui.duckdb.made", folder / ".ragtui.duckdb.made")
    else:
        con = duckdb.connect(str(index))
        con.execute(tables_sql())
        if how == "view":
            con.execute("DROP TABLE runs")
            con.execute(
                "CREATE VIEW runs AS SELECT content AS run_id, content AS name FROM "
                f"read_text('{secret}')"
            )
        else:
            con.execute(
                "INSERT INTO runs (run_id, name, file_path, n_cases) VALUES "
                "('ghost', 'PLANTED ghost', ?, 1)",
                [str(secret).encode()],
            )
            con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
        con.close()
        if how == "forged mark":  # the mark of the planted file, as its maker could stat it
            st = index.stat()
            (folder / ".ragtui.duckdb.made").write_text(f"{st.st_dev}:{st.st_ino}\n")
            if os.geteuid() != 0:
                pytest.skip("needs root to make a file another user's")
            os.chown(index, 65534, 65534)
    out, err = run(world, "runs", str(folder), "--json")
    assert "HUNTER2" not in out + err and "PLANTED" not in out + err and "ghost" not in out
    assert set(json.loads(out)["runs"][i]["id"] for i in range(2)) == {
        "baseline-2026-11-02",
        "candidate",
    }
    assert "was not made here by ragtui" in err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["fifo mark", "directory mark", "wal of another user"])
def test_odd_files_beside_the_index_neither_hang_nor_replay(world: dict, how: str) -> None:
    """Re-review: a FIFO at the mark's name blocked the open forever; a directory there left a
    temporary mark file behind on every open; a WAL another user wrote over a copy of the index
    (DuckDB replays such a WAL into the index) was taken with the index it sits beside."""
    folder = world["folder"]
    run(world, "runs", str(folder))  # ragtui's own index and mark
    mark = folder / ".ragtui.duckdb.made"
    if how == "fifo mark":
        mark.unlink()
        os.mkfifo(mark)
    elif how == "directory mark":
        mark.unlink()
        mark.mkdir()
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to write a file as another user")
        shutil.copy(folder / ".ragtui.duckdb", world["root"] / "copy.duckdb")
        con = duckdb.connect(str(world["root"] / "copy.duckdb"))
        con.execute("UPDATE runs SET name = 'PLANTED ' || name")  # into its WAL, not the file
        shutil.copy(world["root"] / "copy.duckdb.wal", folder / ".ragtui.duckdb.wal")
        con.close()
        os.chown(folder / ".ragtui.duckdb.wal", 65534, 65534)
    said = []
    for _ in range(2):
        out, err = run(world, "runs", str(folder), "--json")
        assert "PLANTED" not in out + err
        assert {r["id"] for r in json.loads(out)["runs"]} == {"baseline-2026-11-02", "candidate"}
        said.append("was not made here by ragtui" in err)
    assert not list(folder.glob(".tmp-mark-*"))
    # the index is rebuilt when its mark is unreadable or its WAL foreign; a directory at the
    # mark's name can never be replaced, so that index is rebuilt on every open
    assert said == {"fifo mark": [True, False], "directory mark": [True, True]}.get(
        how, [True, False]
    )


def tables_sql() -> str:
    from ragtui.core.tables import SCHEMA_SQL

    return SCHEMA_SQL


def test_import_into_never_escapes_and_same_ids_both_survive(world: dict) -> None:
    root, folder = world["root"], world["folder"]
    incoming = root / "incoming"
    incoming.mkdir()
    drop_jsonl(incoming / "up.jsonl", "../../outside/IMPORTED")
    drop_jsonl(incoming / "abs.jsonl", str(root / "outside" / "ABS-IMPORT"))
    drop_jsonl(incoming / "same.jsonl", "baseline-2026-11-02", n=2)  # an id already there
    before_outside = snapshot(root, skip=folder)
    before_runs = snapshot(folder)

    _, err = run(world, "import", str(incoming), "--into", str(folder))
    assert "already used in this folder; imported as 'baseline-2026-11-02-2'" in err
    assert snapshot(root, skip=folder) == before_outside
    assert {p: h for p, h in snapshot(folder).items() if p in before_runs} == before_runs
    runs = runs_json(world)
    assert runs["baseline-2026-11-02"]["n_cases"] == 48
    assert runs["baseline-2026-11-02-2"]["n_cases"] == 2
    assert "../../outside/IMPORTED" in runs and str(root / "outside" / "ABS-IMPORT") in runs
    _, err = run(world, "import", str(incoming / "same.jsonl"), "--into", str(folder))
    assert "already imported (same content)" in err  # recorded: not a third copy


def test_rejudge_and_full_noise_outputs_stay_inside(world: dict, tmp_path: Path) -> None:
    """A parent whose id walks out of the folder: the re-judge and the pipeline reruns (the
    user's own command) are written inside it, under names ragtui built."""
    root, folder = world["root"], world["folder"]
    evil_id = "../../outside/PARENT"
    write_run_file(folder / "evil.ragtui.jsonl", *native(evil_id, 6))
    script = tmp_path / "pipeline.py"
    script.write_text(
        "import json, sys, pathlib\n"
        "out = pathlib.Path(sys.argv[1])\n"
        "header = {'ragtui_run': 1, 'id': '../../../outside/FROM-PIPELINE', "
        "'created_at': '2026-11-21T00:00:00Z', 'config': {}}\n"
        "rows = [{'case_id': f'c{i:02d}', 'question': 'q', 'answer': 'a', "
        "'scores': {'faithfulness': {'value': 1.0}}} for i in range(6)]\n"
        "(out / 'r.ragtui.jsonl').write_text('\\n'.join(json.dumps(x) for x in [header, *rows]))\n",
        encoding="utf-8",
    )
    with FakeJudge() as server:
        (world["xdg"] / "ragtui" / "ragtui.toml").write_text(
            f'[judges.local]\nprovider = "ollama"\nurl = "{server.url}"\nmodel = "judge-1"\n'
            f'[rerun]\ncommand = "{sys.executable} {script} {{out}}"\n',
            encoding="utf-8",
        )
        before_outside = snapshot(root, skip=folder)
        before_runs = snapshot(folder)
        _out, _ = run(
            world, "rejudge", evil_id, str(folder), "--judge", "local", "-m", "faithfulness"
        )
        run(world, "noise", evil_id, str(folder), "--full", "--times", "2")
    assert snapshot(root, skip=folder) == before_outside
    assert {p: h for p, h in snapshot(folder).items() if p in before_runs} == before_runs
    made = [p for p in folder.glob("*.ragtui.jsonl") if str(p) not in before_runs]
    assert len(made) == 3  # one re-judge, two pipeline reruns
    assert all(p.name.startswith("outside-PARENT--") for p in made), made
    ids = {read_run_file(p).run.id for p in made}
    assert all(i.startswith(evil_id + "--") for i in ids)  # ids keep their text


# ---------------------------------------------------------------- 2. trust from the user


@pytest.fixture
def servers() -> Iterator[tuple[FakeJudge, FakeJudge]]:
    with FakeJudge(required_key=KEY) as legit, FakeJudge() as attacker:
        yield legit, attacker


def write_folder_toml(world: dict, attacker: FakeJudge, marker: Path) -> Path:
    command = f"{sys.executable} -c \"open('{marker}', 'w').write('ran')\""
    path = world["folder"] / "ragtui.toml"
    path.write_text(
        f'[judges.gpt]\nprovider = "ollama"\nurl = "{attacker.url}"\nmodel = "judge-1"\n'
        'api_key_env = "GITHUB_TOKEN"\n'
        f'[judges.home]\nprovider = "ollama"\nurl = "{attacker.url}"\nmodel = "judge-1"\n'
        'api_key_env = "HOME"\n'
        f"[rerun]\ncommand = {json.dumps(command)}\n"
        "[compare]\nmargin = 3\n",
        encoding="utf-8",
    )
    return path


def test_a_folder_config_cannot_redirect_judges_keys_or_run_commands(
    world: dict, servers: tuple[FakeJudge, FakeJudge]
) -> None:
    legit, attacker = servers
    root, folder = world["root"], world["folder"]
    marker = root / "outside" / "PWNED"
    write_folder_toml(world, attacker, marker)
    (world["xdg"] / "ragtui" / "ragtui.toml").write_text(
        f'[judges.gpt]\nprovider = "ollama"\nurl = "{legit.url}"\nmodel = "judge-1"\n'
        'api_key_env = "OPENAI_API_KEY"\nretries = 0\n',
        encoding="utf-8",
    )
    before_outside = snapshot(root, skip=folder)
    before_runs = snapshot(folder)
    f = str(folder)
    out, err = run(world, "rejudge", "candidate", f, "--judge", "gpt", "-m", "faithfulness")
    assert "ignored [judges], [rerun]" in err and "ragtui trust" in err
    out, err = run(world, "judges", f)
    assert "gpt: ollama judge-1" in out and "home" not in out
    _, err = run(world, "noise", "candidate", f, "--full", "--times", "2", ok=False)
    assert "--full needs [rerun] command" in err
    run(world, "noise", "candidate", f, "--judge", "gpt", "-m", "faithfulness", "--times", "2")
    _, err = run(world, "rejudge", "candidate", f, "--judge", "home", ok=False)
    assert "unknown judge 'home'" in err

    assert attacker.log() == []  # the folder's server was never contacted
    assert legit.chat_requests() and all(
        r.headers.get("authorization") == f"Bearer {KEY}" for r in legit.log()
    )
    assert not marker.exists()  # the folder's command never ran
    assert snapshot(root, skip=folder) == before_outside
    assert {p: h for p, h in snapshot(folder).items() if p in before_runs} == before_runs


def test_trusting_a_folder_config_is_explicit_and_lost_on_change(
    world: dict, servers: tuple[FakeJudge, FakeJudge]
) -> None:
    _legit, attacker = servers
    folder = world["folder"]
    toml = write_folder_toml(world, attacker, world["root"] / "outside" / "RAN")
    args = ("rejudge", "candidate", str(folder), "--judge", "gpt", "-m", "faithfulness")
    _, err = run(world, "trust", str(folder), ok=False)  # a bad value: nothing recorded
    assert "judges.home.api_key_env: $HOME holds no secret" in err
    toml.write_text(toml.read_text().replace('"HOME"', '"OTHER_KEY"'), encoding="utf-8")
    out, _ = run(world, "trust", str(folder))
    assert "judge gpt: ollama judge-1 at" in out and "$GITHUB_TOKEN" in out
    assert "runs the command" in out
    toml.write_text(toml.read_text() + "# edited\n", encoding="utf-8")
    _, err = run(world, *args, ok=False)  # edited: untrusted again
    assert "ignored [judges], [rerun]" in err and attacker.log() == []
    run(world, "trust", str(toml))
    run(world, *args)
    assert attacker.chat_requests()  # the user chose this judge
    run(world, "trust", "--forget", str(toml))
    attacker.reset()
    run(world, *args, ok=False)
    assert attacker.log() == []


# ---------------------------------------------------------------- 4. secrets masked


def index_text(folder: Path) -> str:
    """Every value of every table of the index, as text (DuckDB compresses strings on disk,
    so a byte grep alone could miss one)."""
    con = duckdb.connect(str(folder / ".ragtui.duckdb"), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return "\n".join(str(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)
    finally:
        con.close()


@pytest.mark.timeout(300)  # some 20 real processes: slow on a loaded machine
def test_keys_and_passwords_echoed_by_the_judge_never_reach_disk_or_output(
    world: dict, user_config: Path
) -> None:
    folder = world["folder"]
    token = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()
    secrets = [KEY, PASSWORD, token]
    with FakeJudge(models=["judge-1", "model {auth}"], echo_headers=True) as server:
        # {auth}: the Authorization header the request carried (Bearer key, or Basic token)
        server.default = Reply("YES {auth}", headers=(("X-Key", "{auth}"),))
        server.when("ANSWER-1", Fault(500, body="server error {auth}"))
        server.when("ANSWER-2", Fault(400, body='{"error": "bad {auth}"}'))
        server.when("ANSWER-4", Fault(200, body="not json {auth}"))
        url = server.url
        password_url = url.replace("http://", f"http://bob:{PASSWORD}@")
        (world["xdg"] / "ragtui" / "ragtui.toml").write_text(
            f'[judges.keyed]\nprovider = "ollama"\nurl = "{server.url}"\nmodel = "judge-1"\n'
            'api_key_env = "OPENAI_API_KEY"\nretries = 1\nbackoff = 0.01\n'
            f'[judges.pw]\nprovider = "ollama"\nurl = "{password_url}"\nmodel = "judge-1"\n'
            "retries = 1\nbackoff = 0.01\n",
            encoding="utf-8",
        )
        outputs = []
        f = str(folder)
        for judge in ("keyed", "pw"):
            outputs += run(world, "rejudge", "candidate", f, "--judge", judge, "-m", "faithfulness")
            # (the resume asks again only the cases the judge refused: it grades nothing, exit 1)
            outputs += run(world, "rejudge", "candidate", f, "--judge", judge, "--json", ok=False)
            outputs += run(
                world, "noise", "candidate", f, "--judge", judge, "--times", "2", "--json",
                "-m", "faithfulness",
            )  # fmt: skip
        outputs += run(world, "judges", f)
        outputs += run(world, "runs", f, "--json")
        for rid in [r for r in runs_json(world) if "--rejudge-" in r]:
            outputs += run(world, "show", rid, "--path", f, "--json")
    assert any("Bearer" in r.headers.get("authorization", "") for r in server.log())
    assert any("Basic" in r.headers.get("authorization", "") for r in server.log())
    text = "\n".join(outputs)
    assert "Bearer ***" in text and "Basic ***" in text  # the echoes arrived, masked
    assert f"pw: ollama judge-1 at {url}" in text  # the URL without its password
    found = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    stored = index_text(folder)
    for secret in secrets:
        assert secret not in text, secret
        assert secret not in stored, secret
        for path, data in found.items():
            assert secret.encode() not in data, (secret, path)
