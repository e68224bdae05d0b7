"""Native run files (`*.ragtui.jsonl`): line 1 is the run header, every further line one case.

Reading goes through one typed decoder (`runschema`), which names file, line, field,
expectation and finding on the first problem. Lines are read in blocks with a length cap, so
memory stays bounded whatever a file holds; special files (FIFOs, devices) are never read.
Writing lives in `runwrite` (re-exported here): reading a written file gives back equal
objects, and writing them again gives the same bytes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import add
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from ragtui.core.errors import RunFileError
from ragtui.core.model import (
    Case,
    Chunk,
    Claim,
    DatasetInfo,
    JudgeInfo,
    Run,
    RunFile,
    Score,
    SourceInfo,
    StatedFigure,
    derive_config_key,
)
from ragtui.core.runerrors import explain, show
from ragtui.core.runschema import (
    CASE_DECODER,
    FORMAT_VERSION,
    HEADER_DECODER,
    CaseLine,
    HeaderLine,
    LineProblem,
    check_case,
    check_header,
)

if TYPE_CHECKING:  # found at run time through __getattr__ below (runwrite imports this module)
    from ragtui.core.runwrite import (  # noqa: F401
        RunFileAppender,
        case_to_json,
        dumps_line,
        header_to_json,
        write_run_file,
    )

try:  # advisory locks mark a run file that a batch is still writing (POSIX only)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".ragtui.jsonl"
MAX_LINE_BYTES = 8 << 20  # one case line; bounds memory (a decoded line is a few times this)
BLOCK_BYTES = 4 << 20  # bytes read and decoded at a time
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, LineProblem)
_BOM = b"\xef\xbb\xbf"

__all__ = ["FORMAT_VERSION", "SUFFIX"]


def is_run_file(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


class SpecialFileError(RunFileError):
    """A path named like a run file that is a FIFO, a device or a socket: never opened to read."""


# ---------------------------------------------------------------- opening


def open_run_file(path: str | Path) -> IO[bytes]:
    """Open for reading without ever blocking (a FIFO would), and only a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SpecialFileError(path, f"is {file_kind(mode)}, not a regular file: skipped")
    return os.fdopen(fd, "rb", buffering=0)


def file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "a special file"


def being_written(handle: IO[bytes]) -> bool:
    """Whether a batch (`RunFileAppender`) holds this file's lock: it is still being written."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


# ---------------------------------------------------------------- lines


def line_error(path: str | Path, number: int, problem: LineProblem) -> RunFileError:
    expected = f"expected {problem.expected}"
    if problem.found is not ...:
        expected += f", found {show(problem.found)}"
    return RunFileError(path, expected, line=number, field=problem.field)


def _too_long(path: str | Path, number: int) -> RunFileError:
    return RunFileError(
        path,
        f"expected a line of at most {_size(MAX_LINE_BYTES)}, found a longer one",
        line=number,
    )


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n % (1 << 20) == 0 else f"{n:,} bytes"


def read_header_line(
    handle: IO[bytes], path: str | Path, digest: Any = None
) -> tuple[bytes, bytes]:
    """(line 1, the bytes read after it): line 1 must fit the line cap."""
    data = b""
    while True:
        block = handle.read(BLOCK_BYTES)
        if digest is not None and block:
            digest.update(block)
        data += block
        cut = data.find(b"\n")
        if cut >= 0 or not block:
            break
        if len(data) > MAX_LINE_BYTES:
            raise _too_long(path, 1)
    if cut < 0:
        cut = len(data)
    if cut > MAX_LINE_BYTES:
        raise _too_long(path, 1)
    return data[: cut + 1], data[cut + 1 :]


def parse_header(line: bytes, path: str | Path) -> tuple[HeaderLine, Any]:
    """Line 1 decoded and checked: (the header, created_at as naive UTC)."""
    line = line.removeprefix(_BOM)  # (a line of a BOM alone is as empty as none)
    if not line.strip():
        found = "an empty line" if line.endswith(b"\n") else "an empty file"
        raise RunFileError(path, f"expected a run header on line 1, found {found}", line=1)
    try:
        header = HEADER_DECODER.decode(line)
        return header, check_header(header)
    except DECODE_ERRORS as exc:
        raise line_error(path, 1, explain(line, exc, header=True)) from None


def split_lines(
    handle: IO[bytes],
    path: str | Path,
    first: bytes,
    offset: int,
    *,
    digest: Any = None,
    drop_torn_tail: bool = False,
) -> Iterator[Lines]:
    """Blocks of lines from line 2 on, with their numbers and byte offsets (blank ones too).

    `first` is what was already read after line 1, which started `offset` bytes earlier.
    A last line without a newline comes alone, as a block marked `unterminated` (see
    `decode_complete`), unless `drop_torn_tail` (a file that a batch holds, whose writer is
    mid-line): then it is left out.
    """
    number, at, block = 2, offset, first
    while True:
        data = handle.read(BLOCK_BYTES)
        if digest is not None and data:
            digest.update(data)
        block = block + data if block else data
        tail = None
        if data:
            cut = block.rfind(b"\n")
            if cut < 0:
                if len(block) > MAX_LINE_BYTES:
                    raise _too_long(path, number)
                continue
            body, block = block[:cut], block[cut + 1 :]
        elif not block:
            return
        elif block.endswith(b"\n"):  # the end: what is left is whole lines
            body = block[:-1]
        else:  # the end, the last line without its newline
            cut = block.rfind(b"\n")
            body, tail = (block[:cut], block[cut + 1 :]) if cut >= 0 else (None, block)
            if drop_torn_tail:
                tail = None
        for part, unterminated in ((body, False), (tail, True)):
            if part is None:
                continue
            lines = part.split(b"\n")
            lengths = list(map(len, lines))
            if max(lengths) > MAX_LINE_BYTES:
                raise _too_long(
                    path, number + next(i for i, n in enumerate(lengths) if n > MAX_LINE_BYTES)
                )
            # offset of line i: where the block starts + the lengths before it + their newlines
            offsets = list(map(add, accumulate(lengths, initial=at), range(len(lines))))
            yield Lines(lines, range(number, number + len(lines)), offsets, lengths, unterminated)
            number += len(lines)
            at = offsets[-1] + lengths[-1] + 1
        if not data:
            return
        if len(block) > MAX_LINE_BYTES:
            raise _too_long(path, number)


@dataclass
class Lines:
    """A block of lines of a run file: the lines, their numbers, offsets and lengths."""

    lines: list[bytes]
    numbers: Sequence[int]
    offsets: list[int]
    lengths: list[int]
    unterminated: bool = False  # the file's last line, without its newline (one line)

    def only(self, keep: list[int]) -> Lines:
        return Lines(
            [self.lines[i] for i in keep],
            [self.numbers[i] for i in keep],
            [self.offsets[i] for i in keep],
            [self.lengths[i] for i in keep],
            self.unterminated,
        )


def decode_complete(
    block: Lines, path: str | Path, seen: set[str]
) -> tuple[list[CaseLine], Lines] | None:
    """`decode_cases`, except that the file's last line, without its newline, that is no
    complete JSON (cut short, or inside a UTF-8 sequence) is a line still being written: None,
    and the lines before it count. A broken line that ends with its newline stays an error,
    and so does a complete last line that breaks a rule."""
    if block.unterminated and block.lines[0].strip():
        try:
            msgspec.json.decode(block.lines[0].removeprefix(_BOM))
        except msgspec.DecodeError:
            return None
    return decode_cases(block, path, seen)


def decode_cases(block: Lines, path: str | Path, seen: set[str]) -> tuple[list[CaseLine], Lines]:
    """The typed cases of a block, and the block without its blank lines. The first bad line
    (or repeated case id) raises."""
    decode = CASE_DECODER.decode
    cases = []
    blank = []
    for i, line in enumerate(block.lines):
        try:
            case = decode(line)
            check_case(case)
        except DECODE_ERRORS as exc:
            if not line.strip():
                blank.append(i)
                continue
            case = _decode_slowly(line, exc, path, block.numbers[i])
        cases.append(case)
    if blank:
        skip = set(blank)
        block = block.only([i for i in range(len(block.lines)) if i not in skip])
    ids = [c.case_id for c in cases]
    unique = set(ids)
    if len(unique) != len(ids) or not seen.isdisjoint(unique):
        for case_id, number in zip(ids, block.numbers, strict=True):
            if case_id in seen:
                problem = LineProblem("case_id", "a case id unique within the run", case_id)
                raise line_error(path, number, problem)
            seen.add(case_id)
    seen |= unique
    return cases, block


def _decode_slowly(line: bytes, exc: BaseException, path: str | Path, number: int) -> CaseLine:
    if line.startswith(_BOM):  # a byte order mark (Python's json takes one, so do we)
        try:
            case = CASE_DECODER.decode(line[3:])
            check_case(case)
            return case
        except DECODE_ERRORS as again:
            line, exc = line[3:], again
    raise line_error(path, number, explain(line, exc)) from None


# ---------------------------------------------------------------- model objects


def to_run(header: HeaderLine) -> Run:
    config = dict(header.config or {})
    judge = header.judge or _NO_JUDGE
    judge_info = JudgeInfo(
        model=judge.model, provider=judge.provider, prompt_hash=judge.prompt_hash
    )
    dataset = header.dataset
    source = header.source
    return Run(
        id=header.id,
        name=header.name or header.id,
        created_at=header.created_at,
        config=config,
        config_key=header.config_key or derive_config_key(config, judge_info),
        judge=judge_info,
        dataset=DatasetInfo() if dataset is None else DatasetInfo(dataset.name, dataset.version),
        parent=header.parent,
        kind=header.kind or "eval",
        source=None if source is None else SourceInfo(source.format, source.path, source.sha256),
        stated=tuple(
            StatedFigure(f.metric, f.value, f.raw, f.statistic, f.scale, f.n)  # type: ignore[arg-type]
            for f in header.stated or ()
        ),
    )


class _NoJudge:
    model = provider = prompt_hash = None


_NO_JUDGE = _NoJudge()


def to_case(c: CaseLine) -> Case:
    return Case(
        case_id=c.case_id,
        question=c.question,
        answer=c.answer,
        reference=c.reference,
        contexts=tuple(
            Chunk(id=k.id, text=k.text, source=k.source, rank=k.rank, score=k.score)
            for k in c.contexts or ()
        ),
        scores={
            metric: Score(
                value=s.value,
                raw=s.raw,
                label=s.label,
                scale=s.scale,  # type: ignore[arg-type]
                reason=s.reason,
                reply=s.reply,
                prompt_hash=s.prompt_hash,
                threshold=s.threshold,
            )
            for metric, s in (c.scores or {}).items()
        },
        claims=tuple(
            Claim(
                metric=k.metric,
                text=k.text,
                verdict=k.verdict,
                chunks=tuple(k.chunks or ()),
                reason=k.reason,
            )
            for k in c.claims or ()
        ),
        errors=dict(c.errors or {}),
        human=dict(c.human or {}),
        latency_ms=c.latency_ms,
        metadata=dict(c.metadata or {}),
        cluster=c.cluster,
    )


# ---------------------------------------------------------------- reading whole files


def iter_run_file(path: str | Path, *, whole: bool = False) -> tuple[Run, Iterator[Case]]:
    """Open a run file: the header now, the cases lazily (bounded memory for big files).

    Raises RunFileError on the header at once and on a bad case line when it is reached. A
    last line still being written (see `decode_complete`) is left out, as the index does,
    unless `whole` (an import copies the file once: a cut one is its error).
    """
    handle = open_run_file(path)
    try:
        line, first = read_header_line(handle, path)
        header, _ = parse_header(line, path)
    except BaseException:
        handle.close()
        raise
    return to_run(header), _iter_cases(handle, path, line, first, whole)


def _iter_cases(
    handle: IO[bytes], path: str | Path, line: bytes, first: bytes, whole: bool
) -> Iterator[Case]:
    seen: set[str] = set()
    with handle:
        if not line.endswith(b"\n"):
            return  # the header is the whole file
        for block in split_lines(handle, path, first, len(line)):
            decoded = (
                decode_cases(block, path, seen) if whole else decode_complete(block, path, seen)
            )
            if decoded is not None:  # (None: a last line still being written)
                yield from map(to_case, decoded[0])


def read_run_file(path: str | Path, *, whole: bool = False) -> RunFile:
    run, cases = iter_run_file(path, whole=whole)
    return RunFile(run=run, cases=tuple(cases))


def read_case_at(path: str | Path, offset: int, length: int, number: int) -> Case:
    """One case, from the line at `offset` (as indexed): the index keeps no long texts."""
    with open_run_file(path) as handle:
        handle.seek(offset)
        line = handle.read(length)
    cases, _ = decode_cases(Lines([line], [number], [offset], [length]), path, set())
    if not cases:
        raise RunFileError(path, "expected a case, found a blank line", line=number)
    return to_case(cases[0])


_WRITING = ("RunFileAppender", "write_run_file", "header_to_json", "case_to_json", "dumps_line")


def __getattr__(name: str) -> Any:
    """Writing lives in `runwrite` (which reads this module); its names are found here too."""
    if name in _WRITING:
        from ragtui.core import runwrite

        return getattr(runwrite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
