"""The index under faults: changed files it must notice, damage it must repair, files it must
not open, and references it must not guess. The run files are never touched."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from ragtui.core import runfile
from ragtui.core.errors import RunNotFoundError
from ragtui.core.model import JudgeInfo, Run, StatedFigure
from ragtui.core.runfile import SUFFIX, RunFileAppender, write_run_file
from ragtui.core.store import INDEX_NAME, Store
from tests.core.runs_factory import make_case, make_run


def _faith_mean(store: Store, run_id: str) -> float:
    (row,) = [r for r in store.run_rows() if r.id == run_id]
    mean = row.means["faithfulness"]
    assert mean is not None
    return mean


# ---------------------------------------------------------------- changed files


def test_a_same_size_edit_with_the_old_mtime_is_indexed_again(tmp_path: Path) -> None:
    path = make_run(tmp_path, "edit-1", faith=[1.0, 1.0, 1.0, 1.0])
    with Store.open(tmp_path) as store:
        assert _faith_mean(store, "edit-1") == 1.0
        before = path.stat()
        # "value": 1.0 -> "value": 0.5 keeps the size; the mtime is put back as it was, as
        # `cp -p`, `rsync -t` or a coarse clock would leave it.
        text = path.read_text()
        edited = text.replace('"faithfulness": {"value": 1.0', '"faithfulness": {"value": 0.5', 2)
        assert len(edited) == len(text) and edited != text
        path.write_text(edited)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (
            before.st_size,
            before.st_mtime_ns,
        )
        report = store.refresh()
        assert report.indexed == [path]
        assert _faith_mean(store, "edit-1") == pytest.approx((0.5 + 0.5 + 1.0 + 1.0) / 4)


def test_a_same_size_file_swapped_in_with_the_old_mtime_is_indexed_again(tmp_path: Path) -> None:
    path = make_run(tmp_path, "swap-1", faith=[1.0, 1.0])
    with Store.open(tmp_path) as store:
        before = path.stat()
        swapped = tmp_path / "elsewhere"
        text = path.read_text()
        swapped.write_text(
            text.replace('"faithfulness": {"value": 1.0', '"faithfulness": {"value": 0.0')
        )
        assert swapped.stat().st_size == before.st_size
        os.utime(swapped, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(swapped, path)  # a new inode, same size, same mtime
        store.refresh()
        assert _faith_mean(store, "swap-1") == 0.0


def test_a_touched_but_equal_file_is_not_indexed_again(tmp_path: Path) -> None:
    path = make_run(tmp_path, "touch-1")
    with Store.open(tmp_path) as store:
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
        assert store.refresh().indexed == []


def test_a_touched_file_s_new_reading_is_kept_once_it_is_past_the_racy_window(
    tmp_path: Path,
) -> None:
    """Within a second of its mtime a file is hashed at each open whatever the index holds,
    so its reading is not written then (every open would write); once older it is, and later
    opens trust the stat."""
    path = make_run(tmp_path, "touch-2")

    def recorded(store: Store) -> int:
        row = store._cursor().execute("SELECT mtime_ns FROM files").fetchone()
        return row[0]

    with Store.open(tmp_path) as store:
        first = recorded(store)
        recent = time.time_ns()
        os.utime(path, ns=(recent, recent))
        assert store.refresh().indexed == []
        assert recorded(store) == first  # still racy: nothing written
        old = time.time_ns() - 10 * 10**9
        os.utime(path, ns=(old, old))
        assert store.refresh().indexed == []
        assert recorded(store) == old


# ---------------------------------------------------------------- run references


def test_an_ambiguous_prefix_is_an_error_listing_the_matches(tmp_path: Path) -> None:
    make_run(tmp_path, "exp-10", created_at="2026-11-01T10:00:00Z")
    make_run(tmp_path, "exp-11", created_at="2026-11-02T10:00:00Z")
    make_run(tmp_path, "other-1")
    with Store.open(tmp_path) as store:
        with pytest.raises(RunNotFoundError) as info:
            store.resolve_run("exp-1")
        assert str(info.value) == (
            "run 'exp-1' is ambiguous: 'exp-1' starts 2 run ids (exp-10, exp-11); "
            "give a full run id"
        )
        assert store.resolve_run("exp-10") == "exp-10"  # an id is never ambiguous
        assert store.resolve_run("oth") == "other-1"  # a prefix of one id
        assert store.resolve_run("other") == "other-1"  # a name of one run


def test_a_prefix_of_a_run_is_not_made_ambiguous_by_the_runs_made_from_it(
    tmp_path: Path,
) -> None:
    """`rejudge topk5` writes topk5-2026-11-09--rejudge-…; typed again to resume, "topk5" was
    refused as ambiguous. Runs made from a run (PARENT--…) do not count against its prefix;
    two runs of their own still do, and so do two re-judges of one run."""
    make_run(tmp_path, "topk5-2026-11-09")
    make_run(tmp_path, "topk5-2026-11-09--rejudge-fake-20261201t000000")
    make_run(tmp_path, "topk5-2026-11-09--rerun-fake-1-20261201t000000")
    make_run(tmp_path, "exp-10")
    make_run(tmp_path, "exp-11--rejudge-fake-20261201t000000")
    make_run(tmp_path, "exp-12")
    with Store.open(tmp_path) as store:
        assert store.resolve_run("topk5") == "topk5-2026-11-09"
        assert store.resolve_run("topk5-2026-11-09--rej") == (
            "topk5-2026-11-09--rejudge-fake-20261201t000000"
        )
        with pytest.raises(RunNotFoundError, match="'topk5-2026-11-09--' starts 2 run ids"):
            store.resolve_run("topk5-2026-11-09--")
        with pytest.raises(RunNotFoundError, match="'exp-1' starts 3 run ids"):
            store.resolve_run("exp-1")  # exp-11's re-judge has no parent here: it counts


def test_a_name_several_runs_share_is_an_error_listing_them(tmp_path: Path) -> None:
    # make_run names a run by its id up to the first "-": both are named "base"
    make_run(tmp_path, "base-a", created_at="2026-11-01T10:00:00Z")
    make_run(tmp_path, "base-b", created_at="2026-11-02T10:00:00Z")
    with (
        Store.open(tmp_path) as store,
        pytest.raises(RunNotFoundError, match=r"2 runs are named 'base' \(base-a, base-b\)"),
    ):
        store.resolve_run("base")


# ---------------------------------------------------------------- a damaged index


def _expected(folder: Path) -> dict[str, int]:
    return {"good-1": 5, "good-2": 3}


def _check_everything(store: Store) -> None:
    """Every query a user can reach, on content known from the files."""
    assert {r.id: r.n_cases for r in store.run_rows()} == {"good-1": 5, "good-2": 3}
    assert _faith_mean(store, "good-2") == pytest.approx(0.5)
    assert store.scores(["good-1", "good-2"]).num_rows == 16
    grid, metrics = store.case_grid("good-1")
    assert grid.num_rows == 5 and metrics == ["answer_relevance", "faithfulness"]
    case = store.case("good-2", "case-001")
    assert case is not None and case.scores["faithfulness"].value == 0.5
    assert store.case_history("case-000").num_rows == 4


def _damaged_copies(tmp_path: Path) -> tuple[Path, bytes, dict[str, bytes]]:
    folder = tmp_path / "runs"
    make_run(folder, "good-1")
    make_run(folder, "good-2", faith=[0.5, 0.5, 0.5], created_at="2026-11-21T10:00:00Z")
    with Store.open(folder) as store:
        _check_everything(store)
    index = (folder / INDEX_NAME).read_bytes()
    files = {p.name: p.read_bytes() for p in folder.glob("*" + SUFFIX)}
    return folder, index, files


def _open_damaged(folder: Path, damaged: bytes, files: dict[str, bytes]) -> list[str]:
    for extra in [*folder.glob(INDEX_NAME + ".wal"), *folder.glob(INDEX_NAME + ".corrupt-*")]:
        extra.unlink()  # its WAL, earlier damaged copies (its mark stays: it is ragtui's own)
    index = folder / INDEX_NAME
    if not index.exists():  # moved aside by the last round: ragtui's own again
        with Store.open(folder):
            pass
    # damaged in place, as a disk or a crash damages it: the same file (a file put there
    # instead is not ragtui's own, and is rebuilt before it is read)
    with index.open("r+b") as handle:
        handle.write(damaged)
        handle.truncate()
    with Store.open(folder) as store:
        _check_everything(store)
        notices = list(store.notices)
    assert {p.name: p.read_bytes() for p in folder.glob("*" + SUFFIX)} == files  # untouched
    return notices


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.9, 0.99])
def test_a_truncated_index_is_moved_aside_and_rebuilt(tmp_path: Path, keep: float) -> None:
    folder, index, files = _damaged_copies(tmp_path)
    notices = _open_damaged(folder, index[: int(len(index) * keep)], files)
    if keep == 0.0:  # an empty file holds nothing to keep: removed, not moved aside
        assert notices == [
            f"index {folder / INDEX_NAME} was an empty file: rebuilt from the run files"
        ]
        assert not list(folder.glob(INDEX_NAME + ".corrupt-*"))
        return
    assert len(notices) == 1 and "unreadable" in notices[0] and "rebuilt" in notices[0]
    assert len(list(folder.glob(INDEX_NAME + ".corrupt-*"))) == 1


def test_a_zeroed_block_anywhere_in_the_index_is_repaired(tmp_path: Path) -> None:
    folder, index, files = _damaged_copies(tmp_path)
    block = 1 << 18  # DuckDB's block size
    repaired = 0
    for start in range(0, len(index), block):
        damaged = index[:start] + bytes(min(block, len(index) - start)) + index[start + block :]
        notices = _open_damaged(folder, damaged, files)
        repaired += bool(notices)
        assert all("rebuilt" in n for n in notices), notices
    # the header block and at least one data block were caught (on opening or on a query)
    assert repaired >= 2


# ---------------------------------------------------------------- files that are not files


def test_special_files_named_like_run_files_are_skipped_never_opened(tmp_path: Path) -> None:
    make_run(tmp_path, "good-1")
    fifo = tmp_path / f"fifo{SUFFIX}"
    os.mkfifo(fifo)
    zero = tmp_path / f"zero{SUFFIX}"
    zero.symlink_to("/dev/zero")
    result: dict[str, object] = {}

    def open_it() -> None:
        with Store.open(tmp_path) as store:
            result["runs"] = store.runs().column("run_id").to_pylist()
            result["problems"] = sorted(str(p) for p in store.problems)

    worker = threading.Thread(target=open_it, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "opening the folder blocked on a special file"
    assert result["runs"] == ["good-1"]
    assert result["problems"] == [
        f"{fifo}: is a FIFO, not a regular file: skipped",
        f"{zero}: is a character device, not a regular file: skipped",
    ]


def test_a_line_over_the_cap_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runfile, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(runfile, "BLOCK_BYTES", 1024)
    make_run(tmp_path, "good-1")
    long_line = tmp_path / f"long{SUFFIX}"
    header = (tmp_path / f"good-1{SUFFIX}").read_text().splitlines()[0].replace("good-1", "long-1")
    long_line.write_text(header + "\n" + '{"case_id": "x", "answer": "' + "a" * 10_000 + '"}\n')
    endless = tmp_path / f"endless{SUFFIX}"
    endless.write_text(header.replace("long-1", "endless-1") + "\n" + "[" * 100_000)
    with Store.open(tmp_path) as store:
        assert sorted(str(p) for p in store.problems) == [
            f"{endless}:2: expected a line of at most 4,096 bytes, found a longer one",
            f"{long_line}:2: expected a line of at most 4,096 bytes, found a longer one",
        ]
        assert store.runs().column("run_id").to_pylist() == ["good-1"]


def test_a_file_name_that_is_not_utf8_is_indexed_and_shown_escaped(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path)
    good = Path(os.fsdecode(os.path.join(folder, b"caf\xe9" + SUFFIX.encode())))
    bad = Path(os.fsdecode(os.path.join(folder, b"r\xe9sultats" + SUFFIX.encode())))
    make_run(tmp_path, "cafe-1")
    os.replace(tmp_path / f"cafe-1{SUFFIX}", good)
    bad.write_bytes(b'{"ragtui_run": 1}\n')
    with Store.open(tmp_path) as store:
        (row,) = store.run_rows()
        assert row.id == "cafe-1" and row.file == good and row.n_cases == 5
        assert store.case("cafe-1", "case-000") is not None
        (problem,) = store.problems
        assert (
            str(problem)
            == f"{tmp_path}/r\\xe9sultats{SUFFIX}:1: field 'id': expected a string, found no such field"
        )


# ---------------------------------------------------------------- runs being written


RUN = Run("batch-1", "batch", "2026-11-20T10:00:00Z", judge=JudgeInfo("m", "ollama", "p"))


def test_a_run_being_written_is_listed_as_in_progress(tmp_path: Path) -> None:
    path = tmp_path / f"batch-1{SUFFIX}"
    with RunFileAppender(path, RUN) as out:
        out.append(make_case(0))
        out.append(make_case(1))
        with path.open("a") as handle:
            handle.write('{"case_id": "case-002", "quest')  # the writer is mid-line
        with Store.open(tmp_path) as store:
            (row,) = store.run_rows()
            assert (row.in_progress, row.n_cases) == (True, 2)
            assert store.problems == []
            path.write_bytes(path.read_bytes()[: -len('{"case_id": "case-002", "quest')])
            out.append(make_case(2))
            store.refresh()
            (row,) = store.run_rows()
            assert (row.in_progress, row.n_cases) == (True, 3)
    with Store.open(tmp_path) as store:
        (row,) = store.run_rows()
        assert (row.in_progress, row.n_cases) == (False, 3)


def test_a_reading_made_while_a_batch_held_the_file_never_overwrites_a_later_one(
    tmp_path: Path,
) -> None:
    """A refresh began reading a batch's file while the batch held it; the batch let go and
    indexed it itself (not running); the refresh committed last: the run read "(running)"
    for good (seen in the TUI after stopping a re-judge on a loaded machine)."""
    from itertools import chain

    from ragtui.core.committer import Committer
    from ragtui.core.decoding import pieces

    path = tmp_path / f"batch-1{SUFFIX}"
    with Store.open(tmp_path) as store:
        with RunFileAppender(path, RUN) as out:
            out.append(make_case(0))
            early = pieces(path, 1 << 30)
            head = next(early)  # read while the batch holds the file
            assert head.in_progress
        store.index_file(path)  # the batch's own indexing, after it let go
        done: list[object] = []
        late = Committer(store, lambda p, run_id, error: done.append((run_id, error)))
        late.take(path, chain([head], early), drain=False)
        late.flush()
        (row,) = store.run_rows()
        assert (row.in_progress, row.n_cases) == (False, 1)
        assert done == [("batch-1", None)]


def test_a_summary_only_run_is_listed_with_its_stated_means(tmp_path: Path) -> None:
    stated = (
        StatedFigure("accuracy", 0.75, raw=0.75, statistic="mean", n=40),
        StatedFigure("f1", None, raw="n/a", statistic="ratio of sums", scale=(0, 100)),
    )
    write_run_file(
        tmp_path / f"summary-1{SUFFIX}",
        Run("summary-1", "s", "2026-11-20T10:00:00Z", stated=stated),
        [],
    )
    make_run(tmp_path, "full-1")
    case = make_case(0)
    clustered = Run("clustered-1", "c", "2026-11-22T10:00:00Z")
    write_run_file(
        tmp_path / f"clustered-1{SUFFIX}",
        clustered,
        [make_case(0).__class__(**{**case.__dict__, "cluster": "refund_policy.md"})],
    )
    with Store.open(tmp_path) as store:
        rows = {r.id: r for r in store.run_rows()}
        summary = rows["summary-1"]
        assert summary.summary_only and not rows["full-1"].summary_only
        assert summary.stated == stated
        assert summary.listed_means == {"accuracy": 0.75, "f1": None}
        assert store.stated(["summary-1"]) == {"summary-1": stated}
        assert store.run("summary-1").stated == stated
        found = store.case("clustered-1", "case-000")
        assert found is not None and found.cluster == "refund_policy.md"
        assert store.cases("clustered-1").num_rows == 1


def test_the_index_has_no_copy_of_long_texts(tmp_path: Path) -> None:
    path = make_run(tmp_path, "texts-1")
    with Store.open(tmp_path) as store:
        text = "Refunds are processed in 5-10 business days."  # a chunk's text
        assert text in path.read_text()
        tables = [r[0] for r in store._cursor().execute("SHOW TABLES").fetchall()]
        assert "chunks" not in tables and "claims" not in tables
        case = store.case("texts-1", "case-000")
        assert case is not None and case.contexts[0].text == text
        # the file changed under the index: the case is read again from the new file
        shutil.copy(make_run(tmp_path / "other", "texts-1", faith=[0.0, 0.5]), path)
        changed = store.case("texts-1", "case-001")
        assert changed is not None and changed.scores["faithfulness"].value == 0.5
        assert store.case("texts-1", "case-004") is None


def _torn_note(path: Path, line: int, cases: int) -> str:
    return (
        f"{path}: line {line}, its last, is incomplete (still being written?): {cases} complete "
        "cases indexed; the rest follows when the line is complete"
    )


def test_a_harness_mid_line_keeps_its_run_listed_as_in_progress(tmp_path: Path) -> None:
    """A harness that appends without a lock (no batch of ragtui's), caught mid-line: the run
    left the index with a 'skipped file' error until the line was complete (in the TUI it
    flickered in and out and lost its A mark)."""
    path = make_run(tmp_path, "live-1", n=3)
    whole = path.read_bytes()
    lines = whole.split(b"\n")
    path.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:60])  # line 4 half written
    with Store.open(tmp_path, refresh=False) as store:
        report = store.refresh()
        assert store.problems == []
        (row,) = store.run_rows()
        assert (row.id, row.n_cases, row.in_progress) == ("live-1", 2, True)
        assert report.notes == [_torn_note(path, 4, 2)]
        again = store.refresh()  # nothing new: not read again, not said again
        assert (again.indexed, again.notes, again.failed) == ([], [], [])
        with path.open("ab") as handle:  # more of the line, still no newline
            handle.write(lines[3][60:-5])
        more = store.refresh()
        assert (len(more.indexed), more.notes, store.problems) == (1, [], [])
        path.write_bytes(whole)  # the line is complete
        done = store.refresh()
        assert done.notes == [] and store.problems == []
        (row,) = store.run_rows()
        assert (row.n_cases, row.in_progress) == (3, False)


def test_a_last_line_cut_inside_a_utf8_sequence_is_a_line_being_written(tmp_path: Path) -> None:
    path = make_run(tmp_path, "live-2", n=2)
    lines = path.read_bytes().split(b"\n")
    extra = lines[2].replace(b'"case-001"', b'"case-\xc3\xa9t\xc3\xa9"')
    cut = extra.index(b"\xc3\xa9t") + 1  # inside the two bytes of the first 'é'
    path.write_bytes(b"\n".join(lines[:3]) + b"\n" + extra[:cut])
    with Store.open(tmp_path, refresh=False) as store:
        assert store.refresh().notes == [_torn_note(path, 4, 2)]
        assert store.problems == []
        (row,) = store.run_rows()
        assert (row.n_cases, row.in_progress) == (2, True)
        # what reads the whole file (show, export, a re-judge) reads the complete cases too
        assert [c.case_id for c in runfile.read_run_file(path).cases] == ["case-000", "case-001"]


def test_a_complete_last_line_without_a_newline_is_a_case_and_a_bad_one_an_error(
    tmp_path: Path,
) -> None:
    complete = make_run(tmp_path, "whole-1", n=2)
    complete.write_bytes(complete.read_bytes().rstrip(b"\n"))
    bad = make_run(tmp_path, "bad-1", n=2)
    bad.write_bytes(bad.read_bytes().rstrip(b"\n").replace(b'"case-001"', b"1"))
    with Store.open(tmp_path) as store:
        assert [(r.id, r.n_cases, r.in_progress) for r in store.run_rows()] == [
            ("whole-1", 2, False)
        ]
        assert [str(p) for p in store.problems] == [
            f"{bad}:3: field 'case_id': expected a string, found int 1"
        ]
