"""File names ragtui builds (ragtui.core.paths): never from data, never outside the folder,
never over an existing entry."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragtui.core.model import Case, Run
from ragtui.core.paths import (
    UnsafePathError,
    checked,
    free_run_id,
    new_run_path,
    resumable_run_path,
    run_file_name,
)
from ragtui.core.runfile import write_run_file


def test_names_are_a_slug_and_a_hash_of_the_id() -> None:
    digest = hashlib.sha256(b"baseline-2026-11-02").hexdigest()[:8]
    assert run_file_name("baseline-2026-11-02") == f"baseline-2026-11-02-{digest}.ragtui.jsonl"
    assert run_file_name("../etc/passwd").startswith("etc-passwd-")
    assert run_file_name("..").startswith("run-") and run_file_name("").startswith("run-")
    assert run_file_name("x", 3).endswith("-3.ragtui.jsonl")
    # ids that slug alike still get different names
    assert run_file_name("a/b") != run_file_name("a b") != run_file_name("a-b")
    assert run_file_name("Base") != run_file_name("base")  # case-insensitive file systems


@given(st.text())
def test_any_id_gives_one_plain_file_name(run_id: str) -> None:
    name = run_file_name(run_id)
    assert "/" not in name and "\\" not in name and "\0" not in name
    assert name.isascii() and not name.startswith((".", "-"))
    assert len(name.encode()) <= 100 and name.endswith(".ragtui.jsonl")


def test_checked_refuses_names_and_folders_that_leave(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("..", "a/b", "", "x\0y"):
        with pytest.raises(UnsafePathError):
            checked(folder, name)
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "imported").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="leads outside"):
        new_run_path(folder / "imported", "x", root=folder)
    assert (
        checked(folder / "sub", "x.ragtui.jsonl", root=folder) == folder / "sub" / "x.ragtui.jsonl"
    )


def test_a_taken_name_or_a_planted_symlink_is_never_reused(tmp_path: Path) -> None:
    first = tmp_path / run_file_name("r")
    first.write_text("someone else's\n")
    (tmp_path / run_file_name("r", 2)).symlink_to(tmp_path / "nowhere")  # dangling
    assert new_run_path(tmp_path, "r") == tmp_path / run_file_name("r", 3)


def test_a_batch_resumes_only_its_own_file(tmp_path: Path) -> None:
    mine = Run(id="p--rejudge-x", name="n", created_at="2026-11-20T10:00:00Z")
    other = Run(id="impostor", name="n", created_at="2026-11-20T10:00:00Z")
    case = Case(case_id="c", question="q", answer="a")
    assert resumable_run_path(tmp_path, mine.id) == tmp_path / run_file_name(mine.id)
    write_run_file(tmp_path / run_file_name(mine.id), other, [case])  # planted: not ours
    target = resumable_run_path(tmp_path, mine.id)
    assert target == tmp_path / run_file_name(mine.id, 2)
    write_run_file(target, mine, [case])
    assert resumable_run_path(tmp_path, mine.id) == target  # ours: resumed
    os.unlink(target)
    target.symlink_to(tmp_path / run_file_name(mine.id))  # a symlink is never appended to
    assert resumable_run_path(tmp_path, mine.id) == tmp_path / run_file_name(mine.id, 3)


def test_free_run_id() -> None:
    assert free_run_id("a", set()) == "a"
    assert free_run_id("a", {"a", "a-2"}) == "a-3"
