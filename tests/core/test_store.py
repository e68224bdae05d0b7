from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

from ragtui.core import committer, tables
from ragtui.core.errors import RunNotFoundError
from ragtui.core.store import INDEX_NAME, Store
from tests.core.as_reader import run_as_reader
from tests.core.runs_factory import make_run


def _content(store: Store) -> dict[str, list]:
    """Everything indexed, minus paths and timestamps of indexing, for equality checks."""
    cur = store._cursor()
    out = {}
    for table in ("runs", "cases", "scores", "human", "stated"):
        rows = cur.execute(f"SELECT * FROM {table}").fetchall()
        out[table] = sorted(map(repr, rows))
    return out


def test_index_lists_runs_and_means(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1", faith=[1.0, 0.5, 0.0, 1.0])
    make_run(tmp_path, "strict-1", faith=[1.0, 1.0, 1.0, 0.5], created_at="2026-11-21T10:00:00Z")
    with Store.open(tmp_path) as store:
        runs = store.runs()
        assert isinstance(runs, pa.Table)
        assert runs.column("run_id").to_pylist() == ["base-1", "strict-1"]
        means = {(r["run_id"], r["metric"]): r["mean"] for r in store.run_means().to_pylist()}
        assert means[("base-1", "faithfulness")] == pytest.approx(2.5 / 4)
        assert means[("strict-1", "faithfulness")] == pytest.approx(3.5 / 4)
        assert store.metrics() == ["answer_relevance", "faithfulness"]
        assert store.cases("base-1").num_rows == 4
        assert store.resolve_run("stri") == "strict-1"
        assert store.resolve_run("base") == "base-1"  # by name
        with pytest.raises(RunNotFoundError, match="no run 'zzz'"):
            store.resolve_run("zzz")


def test_incremental_reindex_touches_only_changed_files(tmp_path: Path) -> None:
    for i in range(3):
        make_run(tmp_path, f"run-{i}", created_at=f"2026-11-2{i}T10:00:00Z")
    with Store.open(tmp_path, refresh=False) as store:
        first = store.refresh()
        assert len(first.indexed) == 3
        again = store.refresh()
        assert again.indexed == [] and again.skipped == 3
        # A changed file is re-indexed; a touched-but-identical one is not.
        make_run(tmp_path, "run-1", faith=[0.0] * 5, created_at="2026-11-21T10:00:00Z")
        touched = tmp_path / "run-2.ragtui.jsonl"
        os.utime(touched, ns=(time.time_ns(), time.time_ns() + 10**9))
        third = store.refresh()
        assert [p.name for p in third.indexed] == ["run-1.ragtui.jsonl"]
        means = {(r["run_id"], r["metric"]): r["mean"] for r in store.run_means().to_pylist()}
        assert means[("run-1", "faithfulness")] == 0.0
        # A removed file drops its run.
        (tmp_path / "run-0.ragtui.jsonl").unlink()
        fourth = store.refresh()
        assert fourth.removed == ["run-0"]
        assert store.runs().column("run_id").to_pylist() == ["run-1", "run-2"]
        assert store.scores(["run-0"]).num_rows == 0
        # two gone at once (one transaction): both runs leave, every row of theirs with them
        for name in ("run-1", "run-2"):
            (tmp_path / f"{name}.ragtui.jsonl").unlink()
        fifth = store.refresh()
        assert sorted(fifth.removed) == ["run-1", "run-2"]
        assert store.runs().num_rows == 0 and store.scores(["run-1", "run-2"]).num_rows == 0
        assert store.cases("run-1").num_rows == 0


@pytest.mark.parametrize("threads", [None, "2", "x"])
def test_the_index_reads_alike_with_any_duckdb_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str | None
) -> None:
    """The suite sets RAGTUI_DUCKDB_THREADS=1; users get DuckDB's default (one thread per
    core), and a value that is not a count is ignored."""
    if threads is None:
        monkeypatch.delenv("RAGTUI_DUCKDB_THREADS", raising=False)
    else:
        monkeypatch.setenv("RAGTUI_DUCKDB_THREADS", threads)
    make_run(tmp_path, "a-1", faith=[1.0, 0.5, 0.0])
    make_run(tmp_path, "b-1", faith=[0.5, 0.5, 1.0], created_at="2026-11-21T10:00:00Z")
    with Store.open(tmp_path) as store:
        want = {"2": 2, "x": os.cpu_count(), None: os.cpu_count()}[threads]
        got = store._cursor().execute("SELECT current_setting('threads')").fetchone()[0]
        assert got == want
        means = {(r["run_id"], r["metric"]): r["mean"] for r in store.run_means().to_pylist()}
    assert means[("a-1", "faithfulness")] == pytest.approx(0.5)
    assert means[("b-1", "faithfulness")] == pytest.approx(2 / 3)


def test_deleting_the_index_rebuilds_the_same_content(tmp_path: Path) -> None:
    make_run(tmp_path, "a-1", faith=[1.0, 0.5, 0.0])
    make_run(tmp_path, "b-1", faith=[0.5, 0.5, 1.0])
    with Store.open(tmp_path) as store:
        before = _content(store)
    (tmp_path / INDEX_NAME).unlink()
    with Store.open(tmp_path) as store:
        after = _content(store)
    assert after == before
    assert before["scores"]


@pytest.mark.parametrize("version", [1, 99])
def test_an_index_of_another_schema_version_is_rebuilt_from_the_files(
    tmp_path: Path, version: int
) -> None:
    """An index left by an older ragtui is upgraded, one by a newer ragtui rebuilt (with a
    notice): either way its content is what the run files say, and its version is ours."""
    make_run(tmp_path, "a-1", faith=[1.0, 0.5, 0.0])
    with Store.open(tmp_path) as store:
        before = _content(store)
        ours = store._cursor().execute("SELECT value FROM meta").fetchone()
        cur = store._cursor()
        cur.execute("UPDATE meta SET value = ?", [str(version)])
        cur.execute("DELETE FROM scores")  # what a rebuild must bring back from the file
    with Store.open(tmp_path) as store:
        assert _content(store) == before
        assert store._cursor().execute("SELECT value FROM meta").fetchone() == ours
        newer = [n for n in store.notices if "newer ragtui" in n]
        assert len(newer) == (1 if version == 99 else 0)
    assert before["scores"]


def test_malformed_file_is_reported_and_the_others_load(tmp_path: Path) -> None:
    make_run(tmp_path, "good-1")
    make_run(tmp_path, "good-2")
    bad = tmp_path / "bad.ragtui.jsonl"
    lines = (tmp_path / "good-1.ragtui.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"good-1"', '"bad-1"')
    lines[3] = lines[3].replace('"value": 1.0', '"value": "high"')
    bad.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path) as store:
        assert sorted(store.runs().column("run_id").to_pylist()) == ["good-1", "good-2"]
        assert len(store.problems) == 1
        message = str(store.problems[0])
        assert message.startswith(f"{bad}:4: field 'scores.faithfulness.value'")
        assert store.scores(["bad-1"]).num_rows == 0


def test_a_broken_line_that_ends_with_its_newline_is_still_the_files_error(
    tmp_path: Path,
) -> None:
    path = make_run(tmp_path, "cut-1", n=8)
    lines = path.read_bytes().split(b"\n")
    lines[8] = lines[8][:-40]  # line 9, the last case, cut short but with its newline
    path.write_bytes(b"\n".join(lines))
    with Store.open(tmp_path) as store:
        assert store.runs().num_rows == 0
        assert store.cases("cut-1").num_rows == 0
        assert ":9:" in str(store.problems[0])


def _assert_index_empty(store: Store) -> None:
    for table in ("runs", "cases", "scores", "human", "stated", "files"):
        assert store._cursor().execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table


def test_a_crash_while_indexing_is_that_files_error_and_leaves_no_partial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(tmp_path, "crash-1", n=10)
    make_run(tmp_path, "fine-1", n=3)
    real_insert = committer._insert_all
    calls: list[str] = []

    def exploding_insert(cur, table, parts):  # type: ignore[no-untyped-def]
        calls.append(table)
        if table == "scores" and any("crash-1" in p.column("run_id").to_pylist() for p in parts):
            raise RuntimeError("disk on fire")
        real_insert(cur, table, parts)

    monkeypatch.setattr(committer, "_insert_all", exploding_insert)
    with Store.open(tmp_path, refresh=False) as store:
        report = store.refresh()
        assert "cases" in calls  # the cases were inserted before the failure...
        assert [str(e) for e in report.failed] == [
            f"{tmp_path / 'crash-1.ragtui.jsonl'}: could not be indexed (RuntimeError: disk on fire)"
        ]
        assert store.runs().column("run_id").to_pylist() == ["fine-1"]  # the other file is in
        assert store.cases("crash-1").num_rows == 0  # ...and rolled back
        assert store.scores(["crash-1"]).num_rows == 0
    monkeypatch.undo()
    with Store.open(tmp_path) as store:  # the next start indexes it whole
        assert store.cases("crash-1").num_rows == 10


def test_a_crash_inside_a_big_files_transaction_leaves_no_partial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(tmp_path, "crash-2", n=10)
    monkeypatch.setattr(committer, "GROUP_BYTES", 0)  # a "big" file: committed alone
    real = tables.insert
    inserted = {}

    def insert_then_crash(cur, table, batch, run_id):  # type: ignore[no-untyped-def]
        real(cur, table, batch, run_id)
        if table == "scores":
            inserted["rows"] = cur.execute("SELECT count(*) FROM scores").fetchone()[0]
            raise RuntimeError("killed mid-transaction")

    monkeypatch.setattr(tables, "insert", insert_then_crash)
    with Store.open(tmp_path, refresh=False) as store:
        report = store.refresh()
        assert "killed mid-transaction" in str(report.failed[0])
        assert inserted == {"rows": 20}  # the rows existed inside the transaction
        _assert_index_empty(store)


def test_duplicate_run_id_in_two_files_is_reported(tmp_path: Path) -> None:
    make_run(tmp_path, "same-1")
    shutil.copy(tmp_path / "same-1.ragtui.jsonl", tmp_path / "zcopy.ragtui.jsonl")
    with Store.open(tmp_path) as store:
        assert store.runs().num_rows == 1
        assert "already used by" in str(store.problems[0])


def test_second_process_gets_a_private_index_and_may_still_write_files(tmp_path: Path) -> None:
    make_run(tmp_path, "shared-1")
    with Store.open(tmp_path) as store:
        assert not store.read_only
        script = textwrap.dedent(
            f"""
            from ragtui.core.store import Store
            s = Store.open({str(tmp_path)!r})
            print(s.read_only, s.private, s.runs().num_rows)
            print(s.notices[0])
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        first, notice = out.stdout.splitlines()
        assert first == "False True 1"  # files may be written; the other ragtui indexes them
        assert "another ragtui holds" in notice
        assert store.runs().num_rows == 1  # the first process is unaffected


def test_random_bytes_index_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    make_run(tmp_path, "r-1")
    (tmp_path / INDEX_NAME).write_bytes(os.urandom(8192))
    with Store.open(tmp_path) as store:
        assert store.runs().num_rows == 1
        assert "unreadable" in store.notices[0] and "rebuilt" in store.notices[0]
    assert list(tmp_path.glob(INDEX_NAME + ".corrupt-*"))


def test_read_only_folder_browses_and_refuses_writes(world_readable_dir: Path) -> None:
    tmp_path = world_readable_dir
    make_run(tmp_path, "ro-1")
    script = textwrap.dedent(
        f"""
        from ragtui.core.errors import StoreError
        from ragtui.core.store import Store
        s = Store.open({str(tmp_path)!r})
        print(s.read_only, s.runs().num_rows)
        print(s.notices[0])
        try:
            s.require_writable("write a re-judged run")
        except StoreError as err:
            print("refused:", err)
        """
    )
    out = run_as_reader(tmp_path, script)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "True 1"
    assert "read-only" in lines[1]
    assert lines[2].startswith("refused: cannot write a re-judged run")
    assert not (tmp_path / INDEX_NAME).exists()


def test_case_reconstructs_what_the_file_says(tmp_path: Path) -> None:
    from ragtui.core.runfile import read_run_file

    path = make_run(tmp_path, "full-1", faith=[0.5, 1.0])
    original = read_run_file(path)
    with Store.open(tmp_path) as store:
        for case in original.cases:
            assert store.case("full-1", case.case_id) == case
        assert store.case("full-1", "nope") is None
        assert store.run("full-1") == original.run


def test_reruns_group_by_config_key(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1", created_at="2026-11-01T10:00:00Z")
    make_run(
        tmp_path,
        "base-2",
        created_at="2026-11-02T10:00:00Z",
        config={"top_k": 3, "generator": "llama3.2:3b", "seed": 9},
    )
    make_run(tmp_path, "topk-1", config={"top_k": 5, "generator": "llama3.2:3b"})
    with Store.open(tmp_path) as store:
        assert store.reruns("base-2") == ["base-1", "base-2"]
        assert store.reruns("topk-1") == ["topk-1"]


def test_judge_cache_round_trip(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        assert store.cache_get("k") is None
        store.cache_put(
            "k",
            provider="ollama",
            url="http://127.0.0.1:1",
            model="m",
            prompt_hash="p",
            input_hash="i",
            options="{}",
            reply="YES",
        )
        assert store.cache_get("k") == "YES"
    with Store.open(tmp_path) as store:
        assert store.cache_get("k") == "YES"


@pytest.mark.parametrize("group_bytes", [0, 1 << 30])  # every file alone / all in one group
def test_decoding_beside_committing_indexes_what_one_thread_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group_bytes: int
) -> None:
    from ragtui.bench.synthetic import write_synthetic_history
    from ragtui.core import indexer, runfile
    from tests.core.index_helpers import content

    monkeypatch.setattr(committer, "GROUP_BYTES", group_bytes)
    monkeypatch.setattr(runfile, "BLOCK_BYTES", 4096)  # several blocks per file
    source = tmp_path / "source"
    write_synthetic_history(source, runs=5, cases=12)
    shutil.copy(source / "synthetic-0001.ragtui.jsonl", source / "twin.ragtui.jsonl")  # a clash
    broken = (source / "synthetic-0002.ragtui.jsonl").read_text().splitlines()
    broken[0] = broken[0].replace('"synthetic-0002"', '"broken-1"')
    broken[7] = broken[7].replace('"case_id": "case-000006"', '"case_id": 6')
    (source / "zbroken.ragtui.jsonl").write_text("\n".join(broken) + "\n")
    results = {}
    monkeypatch.setattr(indexer, "HERE_WHILE_STARTING", False)
    for overlap in (False, True):  # decoded here / by worker processes beside the committer
        folder = tmp_path / f"overlap-{overlap}"
        shutil.copytree(source, folder)
        monkeypatch.setattr(indexer, "PROCESS_BYTES", 0 if overlap else 1 << 62)
        with Store.open(folder) as store:
            problems = sorted(str(p).replace(str(folder), "<folder>") for p in store.problems)
            results[overlap] = (content(store), problems)
    assert results[True] == results[False]
    runs, problems = results[True][0]["runs"], results[True][1]
    assert len(runs) == 5
    assert problems == [
        "<folder>/twin.ragtui.jsonl:1: field 'id': run id 'synthetic-0001' is already used by "
        "<folder>/synthetic-0001.ragtui.jsonl",
        "<folder>/zbroken.ragtui.jsonl:8: field 'case_id': expected a string, found int 6",
    ]


def test_a_folder_of_many_tiny_runs_indexes_within_duckdbs_memory_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~8,000 two-case files went into one INSERT of ~16,000 tiny Arrow tables, which DuckDB
    scanned with per-thread buffers: out of its 256 MB (on 2 threads). Here 600 one-case files
    under 16 MB (and 4 threads: with 1, DuckDB scanned them in far less) do that."""
    from ragtui.core import store as store_module

    monkeypatch.setattr(store_module, "MEMORY_LIMIT", "16MB")
    monkeypatch.setenv("RAGTUI_DUCKDB_THREADS", "4")
    text = make_run(tmp_path, "r-0000", n=1).read_text()
    for k in range(1, 600):
        (tmp_path / f"r-{k:04d}.ragtui.jsonl").write_text(
            text.replace('"r-0000"', f'"r-{k:04d}"', 1)
        )
    with Store.open(tmp_path) as store:
        assert [str(p) for p in store.problems] == []
        assert store.runs().num_rows == 600
        assert store._cursor().execute("SELECT count(*) FROM scores").fetchone() == (1200,)


def test_a_failed_insert_reports_its_own_error_not_the_aborted_cleanup() -> None:
    """After an INSERT fails, DuckDB's transaction is aborted and unregistering the batch
    fails too ("transaction is aborted"): that second error used to replace the first."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t (k VARCHAR PRIMARY KEY)")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.ConstraintException, match='duplicate key "a"'):
        committer._insert_all(con, "t", [pa.table({"k": ["a"]}), pa.table({"k": ["a"]})])


def test_inserts_are_bounded_in_rows_and_keep_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    monkeypatch.setattr(committer, "INSERT_ROWS", 3)
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k INTEGER)")
    committer._insert_all(con, "t", [pa.table({"k": [i, i + 100]}) for i in range(5)])
    assert sorted(r[0] for r in con.execute("SELECT k FROM t").fetchall()) == [
        0,
        1,
        2,
        3,
        4,
        100,
        101,
        102,
        103,
        104,
    ]


def test_an_unreadable_subfolder_is_reported_like_an_unreadable_file(
    world_readable_dir: Path,
) -> None:
    """The scan skipped a subfolder it could not list without a word: its runs were missing
    from every list with no mention."""
    make_run(world_readable_dir, "open-1", n=2)
    private = world_readable_dir / "private"
    private.mkdir()
    make_run(private, "hidden-1", n=2)
    private.chmod(0o700 if os.geteuid() == 0 else 0o000)  # (root's: nobody cannot list it)
    try:
        result = run_as_reader(
            world_readable_dir,
            f"""
            from ragtui.core.store import Store
            with Store.open({str(world_readable_dir)!r}) as store:
                print(store.runs().column("run_id").to_pylist())
                print(*store.problems, sep="\\n")
            """,
        )
    finally:
        private.chmod(0o755)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['open-1']",
        f"{private}: is a folder that cannot be read (Permission denied)",
    ]
