"""Format detection by content, and robustness: junk and mutated files only raise RagtuiError."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragtui.core.errors import RagtuiError
from ragtui.importers import REGISTRY, ImportFormatError, ImportOptions, _ordered, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED = {
    "ragas/ragas_v04_refunds.csv": "ragas",
    "ragas/ragas_v04_refunds.jsonl": "ragas",
    "ragas/ragas_v04_refunds.json": "ragas",
    "ragas/ragas_v01_refunds.csv": "ragas",
    "ragas/ragas_v04_refunds_index_semicolon.csv": "ragas",
    "ragas/ragas_v0.2plus_elasticsearch_ragas_evaluation.csv": "ragas",
    "promptfoo/promptfoo_v3_refunds.json": "promptfoo",
    "promptfoo/promptfoo_v3_refunds.jsonl": "promptfoo",
    "promptfoo/promptfoo_v3_refunds.csv": "promptfoo",
    "promptfoo/promptfoo_v2_refunds.json": "promptfoo",
    "generic/harness.jsonl": "generic",
    "generic/harness_report.md": "generic",
}
# every stored fixture of every importer (DeepEval and Inspect included once they exist)
FIXTURES = sorted(
    p
    for p in DATA.glob("*/*")
    if p.is_file()
    and p.suffix in {".csv", ".json", ".jsonl", ".md", ".eval", ".txt"}
    and p.stat().st_size < 200_000
)


@pytest.mark.parametrize(("name", "fmt"), sorted(EXPECTED.items()))
def test_detects_by_content_not_name(tmp_path: Path, name: str, fmt: str) -> None:
    assert detect(DATA / name).name == fmt
    # the same bytes under a meaningless name are still recognised
    renamed = tmp_path / "results.dat"
    shutil.copy(DATA / name, renamed)
    assert detect(renamed).name == fmt


def test_generic_is_asked_last() -> None:
    names = [imp.name for imp in _ordered()]
    assert names[-1] == "generic" and names[0] == "native"
    assert names.index("promptfoo") < names.index("ragas")


def test_unknown_format_lists_every_format_and_why(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nnothing tabular here\n")
    with pytest.raises(ImportFormatError) as info:
        detect(path)
    message = str(info.value)
    assert message.startswith(f"{path}: unknown format")
    for name in REGISTRY:
        assert f"  {name}: " in message


def _gzip(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data))


def _utf16(path: Path, data: bytes) -> None:
    path.write_bytes(data.decode("utf-8").encode("utf-16"))  # with its BOM, as editors save it


@pytest.mark.parametrize(
    ("name", "write", "expected"),
    [
        (
            "results.csv.gz",
            _gzip,
            "{path}: gzip-compressed data: decompress it first "
            "(gzip -dc results.csv.gz > results.csv, then import results.csv)",
        ),
        (
            "results.csv",
            _utf16,
            "{path}: UTF-16 text: save it as UTF-8 "
            "(iconv -f UTF-16 -t UTF-8 results.csv > utf8-results.csv), then import that",
        ),
    ],
)
@pytest.mark.parametrize("fmt", [None, "ragas"])
def test_compressed_or_utf16_file_is_one_line_saying_what_to_do(
    tmp_path: Path, name: str, write, expected: str, fmt: str | None
) -> None:
    # it was an 8-line "unknown format; tried: ..." whose reasons were beside the point
    path = tmp_path / name
    write(path, (DATA / "ragas" / "ragas_v04_refunds.csv").read_bytes())
    with pytest.raises(ImportFormatError) as info:
        load_file(path, fmt)
    assert str(info.value) == expected.format(path=path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=2048))
def test_arbitrary_bytes_raise_only_ragtui_errors(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(data)
    for importer in REGISTRY.values():
        importer.sniff(path, data)  # a sniffer answers, it never raises
    for fmt in [None, *REGISTRY]:
        _outcome(path, fmt)


def _outcome(path: Path, fmt: str | None) -> RagtuiError | None:
    """Load; a RagtuiError (one clear message) is a fine outcome, anything else fails the test."""
    try:
        load_file(path, fmt, ImportOptions())
    except RagtuiError as err:
        assert str(err).strip()
        return err
    return None


def _mutations() -> st.SearchStrategy:
    return st.tuples(
        st.sampled_from(FIXTURES),
        st.sampled_from(["truncate", "flip", "insert", "delete"]),
        st.floats(min_value=0.0, max_value=1.0),
        st.binary(min_size=1, max_size=8),
    )


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutation=_mutations())
def test_mutated_fixtures_raise_only_ragtui_errors(tmp_path: Path, mutation: tuple) -> None:
    source, how, where, junk = mutation
    data = bytearray(source.read_bytes())
    at = int(where * len(data))
    if how == "truncate":
        data = data[:at]
    elif how == "flip":
        data[at : at + len(junk)] = junk
    elif how == "insert":
        data[at:at] = junk
    else:
        del data[at : at + len(junk)]
    path = tmp_path / source.name
    path.write_bytes(bytes(data))
    for fmt in [None, *REGISTRY]:
        _outcome(path, fmt)
