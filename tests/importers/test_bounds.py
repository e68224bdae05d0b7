"""Bounded memory on hostile inputs (issue 16): archive bombs, huge cells and documents, values
JSON allows that ragtui cannot store. Each is one clear error naming the file."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ragtui.importers import ImportFormatError, load_file

ROOT = Path(__file__).resolve().parents[2]
HEADER = json.dumps(
    {"version": 2, "status": "success", "eval": {"task": "bomb", "scorers": []}}
).encode()
PEAK_LIMIT = 500 << 20


def _zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> Path:
    """A zip written by hand: (name, method, compressed bytes, crc, declared size) per member,
    so a member can be as big as wanted without ever being inflated here."""
    out, central = bytearray(), bytearray()
    for name, method, data, crc, size in members:
        raw_name = name.encode()
        offset = len(out)
        fields = (20, 0, method, 0, 0, crc, len(data), size, len(raw_name), 0)
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields) + raw_name + data
        central += (
            struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, offset) + raw_name
        )
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(out), 0
    )
    path.write_bytes(bytes(out + central + end))
    return path


def _stored(name: str, data: bytes) -> tuple[str, int, bytes, int, int]:
    return (name, 0, data, zlib.crc32(data), len(data))


def _deflate_bomb(gib: float) -> tuple[bytes, int]:
    """Raw deflate of a JSON sample padded with `gib` GiB of spaces, built from one
    full-flushed 16 MiB block repeated (identical after the first): about 1 MB per GiB."""
    piece = b" " * (16 << 20)
    pieces = int(gib * 64)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(b'{"id": 1, "x": "' + piece) + comp.flush(zlib.Z_FULL_FLUSH)
    middle = comp.compress(piece) + comp.flush(zlib.Z_FULL_FLUSH)
    tail = comp.compress(b'"}') + comp.flush()
    return head + middle * (pieces - 1) + tail, 16 + pieces * len(piece) + 2


def _zstd_bomb(gib: int) -> bytes:
    """zstd frames of zeros, one per 256 MiB, as Inspect writes several frames per member."""
    import zstandard

    frame = zstandard.ZstdCompressor(level=19).compress(bytes(256 << 20))
    return frame * (gib * 4)


def _run_limited(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Import `path` in a child whose address space is capped, reporting its peak RSS."""
    code = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({PEAK_LIMIT}, {PEAK_LIMIT}))
from pathlib import Path
from ragtui.core.errors import RagtuiError
from ragtui.importers import load_file
try:
    load_file(Path(sys.argv[1]))
    print("IMPORTED")
except RagtuiError as err:
    print("ERROR", err)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent that started this process
print("PEAK_KB", next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:")))
"""
    return subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def _peak_mb(result: subprocess.CompletedProcess) -> float:
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("PEAK_KB"))
    return int(line.split()[1]) / 1024


def test_a_1mb_eval_whose_member_inflates_to_1gib(tmp_path: Path) -> None:
    data, size = _deflate_bomb(1)
    assert len(data) < 1_200_000
    # the archive lies about the member's size, so only the cap while inflating stops it
    for declared in (size, 1000):
        path = _zip(
            tmp_path / f"bomb{declared}.eval",
            [_stored("header.json", HEADER), ("samples/1_epoch_1.json", 8, data, 0, declared)],
        )
        result = _run_limited(path)
        assert result.returncode == 0, result.stderr[-2000:]
        [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("ERROR")]
        assert f"{path}: samples/1_epoch_1.json:" in line, line
        assert "inflates past 256 MiB" in line or "corrupt archive member" in line, line
        assert _peak_mb(result) < 500


def test_a_68kb_zstd_eval_with_a_2gib_member(tmp_path: Path) -> None:
    pytest.importorskip("zstandard")
    data = _zstd_bomb(2)
    assert len(data) < 100_000
    path = _zip(
        tmp_path / "zbomb.eval",
        [_stored("header.json", HEADER), ("samples/1_epoch_1.json", 93, data, 0, 100)],
    )
    result = _run_limited(path)
    assert result.returncode == 0, result.stderr[-2000:]
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("ERROR")]
    assert line == (
        f"ERROR {path}: samples/1_epoch_1.json: inflates past 256 MiB, the most ragtui reads "
        "of one archive member (set RAGTUI_MAX_MEMBER_MB to raise it)"
    )
    assert _peak_mb(result) < 500


def test_a_lowered_member_cap_applies(tmp_path: Path) -> None:
    data = zlib.compress(b'{"id": 1, "x": "' + b" " * (3 << 20) + b'"}', 9)[2:-4]
    size = 3 * (1 << 20) + 18
    path = _zip(
        tmp_path / "small.eval",
        [_stored("header.json", HEADER), ("samples/1_epoch_1.json", 8, data, 0, size)],
    )
    result = _run_limited(path, {"RAGTUI_MAX_MEMBER_MB": "2"})
    assert "inflates past 2 MiB" in result.stdout, result.stdout + result.stderr[-1000:]


def test_a_csv_cell_over_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b'question,answer,f\nq,"' + b"x" * (33 << 20) + b'",0.5\n')
    with pytest.raises(ImportFormatError, match=r"line \d+: not valid CSV \(a cell longer than"):
        load_file(path, "generic")


def test_a_file_over_the_file_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragtui.importers import _common

    monkeypatch.setattr(_common, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"question": "q" * 2000, "answer": "a", "f": 0.5}]))
    with pytest.raises(ImportFormatError, match="larger than 0 MiB, the most ragtui reads"):
        load_file(path, "generic")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"question": "q\\ud800", "answer": "a", "f": 0.5}]', r"\$\[0\]\.question: a lone"),
        ('[{"question": "q", "answer": "a", "f": 123456789012345678901}]', "beyond 2\\^53"),
        ('[{"question": "q", "answer": "a", "f": 1' + "0" * 5000 + "}]", "5001 digits"),
        ('[{"question": "q", "answer": "a", "f": 0.5}', r"\.json:1:\d+: invalid JSON"),
    ],
)
def test_json_values_ragtui_cannot_store(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ImportFormatError, match=message) as info:
        load_file(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_a_non_utf8_file_name_is_a_clear_error(tmp_path: Path) -> None:
    name = os.fsdecode(b"r\xff.csv")  # a name that is not UTF-8: a surrogate escape
    path = tmp_path / name
    try:
        path.write_text("question,answer,f\nq,a,0.5\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system refuses non-UTF-8 names")
    with pytest.raises(ImportFormatError, match="not UTF-8") as info:
        load_file(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kind", ["python repr", "json"])
def test_a_contexts_cell_of_millions_of_items_stays_bounded(tmp_path: Path, kind: str) -> None:
    """Security review: a 6 MB contexts cell `[1,1,…,]` (not JSON: a trailing comma) went to
    ast.literal_eval (3 GB, 28 s), and as JSON became 3 million chunks (930 MB), on merely
    opening the folder it was dropped into. Bounded: a repr list that long is kept as text, a
    list of more chunks than any retriever returns is refused naming the cell."""
    items = "1," * 1_000_000 if kind == "python repr" else ",".join(["1"] * 1_000_000)
    path = tmp_path / "harness.csv"
    path.write_text(
        f'question,answer,contexts,faithfulness\nq1,a1,"[{items}]",0.5\nq2,a2,"[]",0.5\n',
        encoding="utf-8",
    )
    result = _run_limited(path)  # (its address space capped: over the cap it would fail)
    if kind == "json":
        assert "ERROR" in result.stdout
        assert "row 2, column 'contexts': expected at most 10,000 chunks in one cell, found " in (
            result.stdout
        )
    else:
        assert "IMPORTED" in result.stdout, result.stdout
        # (under this address-space cap literal_eval fails fast on its own; uncapped it took
        # 3 GB: the bound is that a repr list this long never reaches it)
        from ragtui.importers._tabular import LITERAL_EVAL_MAX, parse_list

        assert parse_list("[" + "1," * (LITERAL_EVAL_MAX // 2 + 1) + "]") is None
        assert parse_list("[" + "1," * 100 + "]") == ["1"] * 100
