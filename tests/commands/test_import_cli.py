"""`ragtui import` end to end (real files, real DuckDB index) and on-the-fly folder imports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.model import SourceInfo
from ragtui.core.runfile import read_run_file
from ragtui.core.store import Store
from ragtui.importers._common import file_sha256
from ragtui.importers.folder import import_foreign_files
from tests.core.as_reader import run_as_reader

DATA = Path(__file__).resolve().parents[1] / "data"
RAGAS = DATA / "ragas" / "ragas_v04_refunds.csv"
PROMPTFOO = DATA / "promptfoo" / "promptfoo_v3_refunds.json"
HOMEGROWN = DATA / "generic" / "homegrown.csv"


def _import(*args: str) -> object:
    return CliRunner().invoke(cli, ["import", *args])


def test_import_writes_indexes_and_reports(tmp_path: Path) -> None:
    into = tmp_path / "runs"
    result = _import(str(RAGAS), str(PROMPTFOO), "--into", str(into))
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 5  # 1 RAGAS run + 4 promptfoo prompt x provider runs
    assert lines[0].startswith("ragas-v04-refunds-") and "5 cases" in lines[0]
    assert "faithfulness, answer_relevancy" in lines[0] and "2 failed scores" in lines[0]
    files = sorted(into.glob("*.ragtui.jsonl"))
    assert len(files) == 5
    with Store.open(into) as store:
        runs = store.runs().to_pylist()
        assert len(runs) == 5 and {r["n_cases"] for r in runs} == {4, 5}
        ragas_id = next(r["run_id"] for r in runs if r["source_format"] == "ragas")
        means = {r["metric"]: r for r in store.run_means().to_pylist() if r["run_id"] == ragas_id}
        assert means["faithfulness"]["mean"] == pytest.approx(0.875)
        assert means["faithfulness"]["n_errors"] == 1
    assert read_run_file(files[0]).run.source is not None


def test_same_file_twice_is_a_noop(tmp_path: Path) -> None:
    into = tmp_path / "runs"
    assert _import(str(RAGAS), "--into", str(into)).exit_code == 0
    before = sorted(p.name for p in into.iterdir())
    copy = tmp_path / "renamed.csv"
    shutil.copy(RAGAS, copy)
    result = _import(str(RAGAS), str(copy), "--into", str(into))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.count("already imported (same content)") == 2
    assert sorted(p.name for p in into.iterdir()) == before


def test_each_file_fails_alone(tmp_path: Path) -> None:
    into = tmp_path / "runs"
    bad = tmp_path / "notes.txt"
    bad.write_text("not results\n")
    result = _import(
        str(bad),
        str(RAGAS),
        str(DATA / "ragas" / "ragas_evaluationresult_repr.txt"),
        "--into",
        str(into),
    )
    assert result.exit_code == 1
    assert "unknown format; tried:" in result.stderr and "generic:" in result.stderr
    assert "to_pandas().to_csv" in result.stderr
    assert "2 of 3 file(s) not imported" in result.stderr
    assert len(list(into.glob("*.ragtui.jsonl"))) == 1


def test_map_name_and_set(tmp_path: Path) -> None:
    into = tmp_path / "runs"
    result = _import(
        str(HOMEGROWN),
        "--into",
        str(into),
        "--name",
        "nightly",
        "--set",
        "top_k=5",
        "--set",
        "judge.model=qwen2.5:7b",
        "--map",
        "question=query",
        "answer=generated",
        "score:faith=judge_faith",
    )
    assert result.exit_code == 0, result.output
    [path] = into.glob("*.ragtui.jsonl")
    run_file = read_run_file(path)
    assert run_file.run.name == "nightly" and run_file.run.config["top_k"] == 5
    assert run_file.run.judge.model == "qwen2.5:7b"
    assert [set(c.scores) | set(c.errors) for c in run_file.cases] == [{"faith"}] * 3


def test_traces_option_gives_claims(tmp_path: Path) -> None:
    into = tmp_path / "runs"
    traces = DATA / "ragas" / "ragas_v04_refunds_str.traces.json"
    result = _import(str(RAGAS), "--traces", str(traces), "--into", str(into))
    assert result.exit_code == 0, result.output
    [path] = into.glob("*.ragtui.jsonl")
    with Store.open(into) as store:
        case = store.case(read_run_file(path).run.id, read_run_file(path).cases[2].case_id)
    assert case is not None
    assert [c.verdict for c in case.claims] == ["SUPPORTED", "UNSUPPORTED"]


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    result = _import(str(RAGAS), "--format", "excel", "--into", str(tmp_path))
    assert result.exit_code == 2 and "excel" in result.output
    result = _import(str(RAGAS), "--set", "novalue", "--into", str(tmp_path))
    assert result.exit_code == 2 and "expected KEY=VALUE" in result.output
    result = _import(str(tmp_path / "missing.csv"), "--into", str(tmp_path / "runs"))
    assert result.exit_code == 1 and "no such file" in result.stderr


def test_import_a_folder(tmp_path: Path) -> None:
    source = tmp_path / "results"
    source.mkdir()
    shutil.copy(RAGAS, source / "a.csv")
    shutil.copy(PROMPTFOO, source / "b.json")
    result = _import(str(source), "--into", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 5


def test_native_file_is_validated_and_copied(tmp_path: Path) -> None:
    first = tmp_path / "a"
    assert _import(str(RAGAS), "--into", str(first)).exit_code == 0
    [native] = first.glob("*.ragtui.jsonl")
    second = tmp_path / "b"
    result = _import(str(native), "--into", str(second))
    assert result.exit_code == 0, result.output
    copy, original = read_run_file(second / native.name), read_run_file(native)
    assert (copy.run.id, copy.cases) == (original.run.id, original.cases)
    # the copy records where it came from, so importing it again is recognised
    assert copy.run.source == SourceInfo("native", str(native), file_sha256(native))
    again = _import(str(native), "--into", str(second))
    assert again.exit_code == 0 and "already" in again.stderr


def test_folder_of_foreign_files_is_imported_once(tmp_path: Path) -> None:
    shutil.copy(RAGAS, tmp_path / "results.csv")
    shutil.copy(DATA / "ragas" / "ragas_v04_refunds_traces.json", tmp_path / "results_traces.json")
    shutil.copy(PROMPTFOO, tmp_path / "pf.json")
    (tmp_path / "README.md").write_text("# just docs\n")
    (tmp_path / "broken.json").write_text("{oops")
    written, notices = import_foreign_files(tmp_path)
    assert len(written) == 5 and all(p.parent == tmp_path / "imported" for p in written)
    assert sum(n.startswith("imported ") for n in notices) == 2
    [broken] = [n for n in notices if "broken.json" in n]
    assert broken.startswith("not imported:") and "\n" not in broken
    ragas_run = next(read_run_file(p) for p in written if p.name.startswith("results-"))
    assert ragas_run.cases[0].claims  # the sibling traces file was used
    assert import_foreign_files(tmp_path)[0] == []  # already converted: nothing written
    with Store.open(tmp_path) as store:
        assert len(store.runs()) == 5


def test_read_only_folder_gets_a_notice(world_readable_dir: Path) -> None:
    # as root this runs as `nobody`, so CI (root) runs it instead of skipping it
    folder = world_readable_dir
    shutil.copy(RAGAS, folder / "results.csv")
    out = run_as_reader(
        folder,
        f"""
        from pathlib import Path
        from ragtui.importers.folder import import_foreign_files
        written, notices = import_foreign_files(Path({str(folder)!r}))
        print(len(written))
        print(notices[0])
        """,
    )
    assert out.returncode == 0, out.stderr
    written, notice = out.stdout.splitlines()
    assert written == "0"
    assert notice == (
        f"{folder} is read-only: 1 foreign result file(s) not imported (results.csv); "
        "use `ragtui import FILE --into DIR`"
    )
    assert not (folder / "imported").exists()


def test_pairs_keep_spaces_and_parentheses() -> None:
    from ragtui.commands.importing import _pairs

    assert _pairs(
        ("question=q answer=a", "score:fc(mode=f1)=fc(mode=f1)"), "--map", several=True
    ) == {
        "question": "q",
        "answer": "a",
        "score:fc(mode=f1)": "fc(mode=f1)",
    }
    assert _pairs(("contexts=Metric: x",), "--map", several=True) == {"contexts": "Metric: x"}
    assert _pairs(("prompt=strict v2, short",), "--set", several=False) == {
        "prompt": "strict v2, short"
    }


def test_import_of_a_cancelled_inspect_log_says_so(tmp_path: Path) -> None:
    source = (
        Path(__file__).parents[1] / "data" / "inspect" / "inspect_v0.3.95_match_popularity.json"
    )
    result = CliRunner().invoke(cli, ["import", str(source), "--into", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "status is 'cancelled'; imported the 3 samples it holds" in result.output


RATED = (
    "question,answer,rating\n"
    "Who approves late refunds?,A manager.,4\n"
    "Which currencies?,EUR and USD.,2\n"
)


def test_import_applies_the_scales_declared_for_the_folder(tmp_path: Path) -> None:
    source = tmp_path / "rated.csv"
    source.write_text(RATED, encoding="utf-8")
    into = tmp_path / "runs"
    into.mkdir()
    (into / "ragtui.toml").write_text("[metrics.rating]\nscale = [1, 5]\n", encoding="utf-8")
    result = _import(str(source), "--into", str(into), "--map", "score:rating=rating")
    assert result.exit_code == 0, result.output
    [path] = into.glob("*.ragtui.jsonl")
    scores = [c.scores["rating"] for c in read_run_file(path).cases]
    assert [s.value for s in scores] == [(4 - 1) / 4, (2 - 1) / 4]  # the declared 1-5 scale
    assert [s.raw for s in scores] == ["4", "2"] and scores[0].scale == (1.0, 5.0)
    # --scale wins over the folder's declaration
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(into / "ragtui.toml", again / "ragtui.toml")
    given = _import(
        str(source), "--into", str(again), "--map", "score:rating=rating", "--scale", "rating=0:10"
    )
    assert given.exit_code == 0, given.output
    [path] = again.glob("*.ragtui.jsonl")
    assert [c.scores["rating"].value for c in read_run_file(path).cases] == [0.4, 0.2]


def test_import_without_a_declared_scale_keeps_the_raw_value_as_an_error(tmp_path: Path) -> None:
    source = tmp_path / "rated.csv"
    source.write_text(RATED, encoding="utf-8")
    into = tmp_path / "runs"
    result = _import(str(source), "--into", str(into), "--map", "score:rating=rating")
    assert result.exit_code == 0, result.output
    [path] = into.glob("*.ragtui.jsonl")
    case = read_run_file(path).cases[0]
    assert "rating" not in case.scores and "--scale rating=LOW:HIGH" in case.errors["rating"]


def test_the_formats_tried_are_a_line_each_and_a_hostile_name_stays_one_line(
    tmp_path: Path,
) -> None:
    """The list of formats tried was printed as one line with "\\x0a" between them; a file
    name's own newline and escape must still show literally, never as a line of its own."""
    bad = tmp_path / "evil\nError: all fine\x1b[31m.csv"
    bad.write_text("not results\n")
    result = _import(str(bad), "--into", str(tmp_path / "runs"))
    lines = result.stderr.splitlines()
    assert lines[0].endswith("unknown format; tried:"), lines[0]
    assert "evil\\x0aError: all fine\\x1b[31m.csv" in lines[0] and "\x1b" not in result.stderr
    tried = [x.split(":")[0].strip() for x in lines[1:] if x.startswith("  ")]
    assert tried[0] == "native" and tried[-1] == "generic" and len(tried) >= 6
    assert not any(x.startswith("Error: all fine") for x in lines)


def test_a_file_without_a_date_says_so_and_date_sets_it(tmp_path: Path) -> None:
    """A RAGAS CSV holds no run date: its run was dated by the file's modification time without
    a word (a copy made today put an old run last in Trends). The import says so; --date
    gives the real one. An Inspect log has its own date: nothing to say."""
    import json
    import os
    from datetime import UTC, datetime

    csv = tmp_path / "results.csv"
    shutil.copy(DATA / "ragas" / "ragas_v04_refunds.csv", csv)
    os.utime(csv, (1_700_000_000, 1_700_000_000))  # 2023-11-14 22:13:20 UTC
    day = datetime.fromtimestamp(1_700_000_000, UTC).date().isoformat()
    guessed = CliRunner().invoke(cli, ["import", str(csv), "--into", str(tmp_path / "a")])
    assert guessed.exit_code == 0, guessed.output
    assert (
        f"notice: {csv}: no run date in the file: its modification time ({day}) dates its run; "
        "give the real date with ragtui import --date YYYY-MM-DD"
    ) in guessed.stderr.splitlines()
    dated = CliRunner().invoke(
        cli, ["import", str(csv), "--into", str(tmp_path / "b"), "--date", "2026-11-02"]
    )
    assert dated.exit_code == 0 and "no run date" not in dated.stderr
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path / "b"), "--json"])
    assert [r["created_at"] for r in json.loads(listed.stdout)["runs"]] == ["2026-11-02T00:00:00Z"]
    bad = CliRunner().invoke(
        cli, ["import", str(csv), "--into", str(tmp_path / "c"), "--date", "2026-13-45"]
    )
    assert bad.exit_code == 2 and "expected a date YYYY-MM-DD" in bad.stderr
    inspect = CliRunner().invoke(
        cli, ["import", str(DATA / "inspect" / "refunds.eval"), "--into", str(tmp_path / "d")]
    )
    assert inspect.exit_code == 0 and "no run date" not in inspect.stderr


def test_import_into_the_bundled_demo_is_bad_input_exit_2_as_for_rejudge(tmp_path: Path) -> None:
    """README: exit 2 for bad input. `import --into` the demo exited 1 (a failure of what ran),
    where `rejudge` and `noise` on the demo exit 2; nothing is written either way."""
    demo = Path(__file__).resolve().parents[2] / "sample_runs"
    before = sorted(p.name for p in demo.iterdir())
    result = CliRunner().invoke(cli, ["import", str(RAGAS), "--into", str(demo)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"Error: {demo} is the bundled demo history, which is not written to: try it on a copy "
        f"(cp -r {demo} runs)"
    ]
    assert sorted(p.name for p in demo.iterdir()) == before
