"""Inspect AI importer, on logs written by inspect_ai itself (see tests/data/inspect/README.md).

Expected numbers come from what Inspect recorded: `results.scores[].metrics` (its accuracy and
mean per scorer) and `reductions` (its per-sample values reduced over epochs).
"""

from __future__ import annotations

import json
import random
import statistics
import zipfile
from pathlib import Path
from typing import Any

import pytest

from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.importers import _inspect_log, detect
from ragtui.importers.base import ImportFormatError, ImportOptions
from ragtui.importers.inspect import INSPECT
from tests.importers.json_fields import WRONG, field_paths, with_value

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
REFUNDS_EVAL = DATA / "refunds.eval"
REFUNDS_JSON = DATA / "refunds.json"
ERROR_EVAL = DATA / "refunds_error.eval"
OLD_EVAL = DATA / "inspect_v0.3.43_model_graded_fact_input-task.eval"
CANCELLED_JSON = DATA / "inspect_v0.3.95_match_popularity.json"

# Inspect >= 0.3.1xx compresses .eval members with zstd, which needs the `zstandard` package
# (a ragtui dependency) before Python 3.14. Tests on such logs say so when it is missing.
HAS_ZSTD = _inspect_log.zstandard is not None or _inspect_log._ZIPFILE_ZSTD
needs_zstd = pytest.mark.skipif(
    not HAS_ZSTD, reason="zstandard not installed (a ragtui dependency)"
)


def load(path: Path) -> list[Any]:
    return INSPECT.load(path, ImportOptions())


def recorded(log: dict[str, Any]) -> dict[str, float]:
    """Inspect's own headline value per metric, keyed the way the importer names metrics."""
    keyed = {s["name"] for s in log["eval"].get("scorers") or [] if isinstance(s["metrics"], dict)}
    out = {}
    for entry in log["results"]["scores"]:
        keyed_scorer = entry["scorer"] in keyed or entry["name"] != entry["scorer"]
        key = f"{entry['scorer']}.{entry['name']}" if keyed_scorer else entry["scorer"]
        metrics = entry["metrics"]
        out[key] = (metrics.get("accuracy") or metrics.get("mean"))["value"]
    return out


def values(run_file: Any, metric: str) -> list[float]:
    return [c.scores[metric].value for c in run_file.cases if metric in c.scores]


def test_epochs_become_reruns_of_one_config() -> None:
    runs = load(REFUNDS_JSON)
    assert [r.run.kind for r in runs] == ["eval", "rerun"]
    assert len({r.run.id for r in runs}) == 2
    assert runs[0].run.config_key == runs[1].run.config_key
    assert [r.run.config["epoch"] for r in runs] == [1, 2]
    eval_id = json.loads(REFUNDS_JSON.read_text())["eval"]["eval_id"]
    assert [r.run.id for r in runs] == [
        f"inspect-refunds-{eval_id}-e1",
        f"inspect-refunds-{eval_id}-e2",
    ]
    log = json.loads(REFUNDS_JSON.read_text())
    ids = [str(i) for i in log["eval"]["dataset"]["sample_ids"]]
    for run in runs:
        assert [c.case_id for c in run.cases] == ids  # stable: the dataset's sample ids
    assert runs[0].run.name.endswith("[epoch 1]")


def test_means_equal_inspects_recorded_metrics() -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    expected = recorded(log)
    assert set(expected) == {"model_graded_fact", "includes", "overlap.words", "overlap.overlap"}
    runs = load(REFUNDS_JSON)
    for metric, value in expected.items():
        pooled = [v for r in runs for v in values(r, metric)]
        assert len(pooled) == 8
        assert statistics.mean(pooled) == pytest.approx(value)


def test_per_sample_values_equal_inspects_reductions() -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    runs = load(REFUNDS_JSON)
    for reduction in log["reductions"]:
        scorer = reduction["scorer"]
        for sample in reduction["samples"]:
            sid = str(sample["sample_id"])
            per_epoch = [next(c for c in r.cases if c.case_id == sid) for r in runs]
            reduced = sample["value"]
            pairs = reduced.items() if isinstance(reduced, dict) else [(None, reduced)]
            for key, value in pairs:
                metric = scorer if key is None else f"{scorer}.{key}"
                mean = statistics.mean(c.scores[metric].value for c in per_epoch)
                assert mean == pytest.approx(value), (sid, metric)


def test_letter_grades_keep_raw_label_explanation_and_transcript() -> None:
    epoch2 = load(REFUNDS_JSON)[1]
    case = next(c for c in epoch2.cases if c.case_id == "invoice-currency")
    graded = case.scores["model_graded_fact"]
    assert (graded.value, graded.raw, graded.label) == (0.5, "P", "P")
    assert graded.reason is not None and graded.reason.endswith("GRADE: P")
    assert graded.reply is not None and "[user]" in graded.reply and "[assistant]" in graded.reply
    assert case.question in graded.reply  # the grading prompt quotes the question
    assert case.scores["includes"].raw == "I" and case.scores["includes"].value == 0.0
    assert case.question == "Which currencies can invoices be issued in?"
    assert case.answer == "Invoices can be issued in euros."
    assert case.reference == "USD, EUR or GBP"
    assert case.scores["overlap.overlap"].value == pytest.approx(0.25)


def test_judge_model_config_and_dataset() -> None:
    run = load(REFUNDS_JSON)[0].run
    assert run.judge.model == "mockllm/model"  # the "grader" role
    assert run.judge.prompt_hash is not None
    assert run.config["task"] == "refunds" and run.config["task_version"] == "v3"
    assert run.config["generator"] == "mockllm/model"
    assert {s["name"] for s in run.config["scorers"]} == {
        "model_graded_fact",
        "includes",
        "overlap",
    }
    assert run.source is not None and run.source.format == "inspect"
    assert run.created_at.endswith("Z")


@needs_zstd
def test_eval_and_json_of_one_log_import_alike() -> None:
    from_eval, from_json = load(REFUNDS_EVAL), load(REFUNDS_JSON)
    for a, b in zip(from_eval, from_json, strict=True):
        assert a.cases == b.cases
        assert a.run.config_key == b.run.config_key
        assert a.run.id == b.run.id  # one log: importing its other format is a no-op
    assert zipfile.ZipFile(REFUNDS_EVAL).infolist()[0].compress_type == 93  # zstd members


def test_public_v0343_eval_log() -> None:
    (run,) = load(OLD_EVAL)
    header = json.loads(zipfile.ZipFile(OLD_EVAL).read("header.json"))
    assert len(run.cases) == header["results"]["total_samples"] == 1
    case = run.cases[0]
    assert case.case_id == "1"
    assert case.scores["model_graded_fact"].value == recorded(header)["model_graded_fact"] == 1.0
    assert case.answer.startswith("Yo, fam!")
    assert case.scores["model_graded_fact"].reply.startswith("[user]\n")
    assert run.run.judge.model == "openai/gpt-4o-mini"  # no grader role: the evaluated model
    assert INSPECT.last_notices == []


def test_public_cancelled_json_imports_what_it_has_with_a_notice() -> None:
    (run,) = load(CANCELLED_JSON)
    log = json.loads(CANCELLED_JSON.read_text())
    assert log["status"] == "cancelled"
    assert len(INSPECT.last_notices) == 1 and "cancelled" in INSPECT.last_notices[0]
    assert str(CANCELLED_JSON) in INSPECT.last_notices[0]
    assert [c.case_id for c in run.cases] == ["1", "2", "3"]
    assert statistics.mean(values(run, "match")) == pytest.approx(recorded(log)["match"])
    assert run.run.dataset.name == "popularity"
    assert run.run.config["revision"] == "e9a9d7161"
    assert run.run.judge.model is None  # match() is rule-based: no judge
    assert run.run.id == f"inspect-popularity-{log['eval']['eval_id']}-cancelled"
    # listed as cancelled, not only in its id (it read as an ordinary run in Runs)
    assert run.run.name == f"popularity · {log['eval']['model']} (cancelled)"
    assert run.cases[0].metadata["nested"] == {"foo": "bar"}


@needs_zstd
def test_error_log_counts_failed_samples_as_errors() -> None:
    (run,) = load(ERROR_EVAL)
    assert any("'error'" in n and "retriever timed out" in n for n in INSPECT.last_notices)
    by_id = {c.case_id: c for c in run.cases}
    assert set(by_id) == {"refund-late", "invoice-currency", "support-speed", "sso-plans"}
    failed = by_id["support-speed"]
    assert failed.scores == {}
    assert set(failed.errors) == {
        "model_graded_fact",
        "includes",
        "overlap.words",
        "overlap.overlap",
    }
    assert all("retriever timed out" in e for e in failed.errors.values())
    assert sum(len(c.errors) for c in run.cases) == 8  # support-speed and the cancelled sso-plans
    assert len(by_id["refund-late"].scores) == 4


@needs_zstd
def test_case_ids_are_stable_across_logs() -> None:
    ids = {
        tuple(c.case_id for c in r.cases) for path in (REFUNDS_EVAL, ERROR_EVAL) for r in load(path)
    }
    assert len(ids) == 1


def test_a_json_log_saved_with_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + CANCELLED_JSON.read_bytes())
    assert INSPECT.sniff(path, path.read_bytes()[:65536]).matches
    assert load(path)[0].cases == load(CANCELLED_JSON)[0].cases


def test_booleans_and_unknown_values(tmp_path: Path) -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    first = {s["id"]: s for s in log["samples"] if s["epoch"] == 1}
    first["refund-late"]["scores"]["includes"]["value"] = True
    first["invoice-currency"]["scores"]["includes"]["value"] = "maybe"
    first["sso-plans"]["scores"]["includes"]["value"] = None
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(log))
    cases = {c.case_id: c for c in load(path)[0].cases}
    assert cases["refund-late"].scores["includes"].value == 1.0
    assert cases["refund-late"].scores["includes"].raw is True
    assert "unrecognised grade 'maybe'" in cases["invoice-currency"].errors["includes"]
    assert cases["sso-plans"].errors["includes"] == "no score value"


def _eval_from_json(path: Path, log: dict[str, Any]) -> Path:
    """An .eval built from a .json log the way Inspect lays it out (compact JSON, deflate)."""
    header = {k: v for k, v in log.items() if k not in ("samples", "reductions")}
    members = {"header.json": json.dumps(header).encode()}
    for sample in log["samples"]:
        name = f"samples/{sample['id']}_epoch_{sample['epoch']}.json"
        members[name] = json.dumps(sample, separators=(",", ":")).encode()
    return _zip(path, members)


def test_nested_events_keys_and_attachments_are_read_correctly(tmp_path: Path) -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    reference = {(r.run.config["epoch"], c.case_id): c for r in load(REFUNDS_JSON) for c in r.cases}
    for sample in log["samples"]:
        # a metadata key named "events" comes before the top-level one: the fast path must notice
        sample["metadata"] = {"source": "kb", "events": ["nested"]}
        sample["attachments"] = dict(sample.get("attachments") or {}, q1=sample["input"])
        sample["input"] = "attachment://q1"
    runs = load(_eval_from_json(tmp_path / "tricky.eval", log))
    for run in runs:
        for case in run.cases:
            expected = reference[(run.run.config["epoch"], case.case_id)]
            assert case.question == expected.question  # the attachment, resolved
            assert case.scores == expected.scores
            assert case.metadata == {"source": "kb", "events": ["nested"]}


def test_a_running_eval_with_only_its_journal_imports_with_a_notice(tmp_path: Path) -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    start = {"version": log["version"], "eval": log["eval"], "plan": log["plan"]}
    members = {"_journal/start.json": json.dumps(start).encode()}
    for sample in log["samples"][:3]:
        name = f"samples/{sample['id']}_epoch_{sample['epoch']}.json"
        members[name] = json.dumps(sample, separators=(",", ":")).encode()
    runs = load(_zip(tmp_path / "running.eval", members))
    assert sum(len(r.cases) for r in runs) == 3
    assert any("'started'" in n for n in INSPECT.last_notices)


def test_missing_zstandard_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_inspect_log, "zstandard", None)
    monkeypatch.setattr(_inspect_log, "_ZIPFILE_ZSTD", False)
    with pytest.raises(
        ImportFormatError, match=r"zstd-compressed; install the 'zstandard' package"
    ):
        load(REFUNDS_EVAL)


@needs_zstd
def test_zstd_members_of_several_frames() -> None:
    import zstandard

    first, second = b'{"a": 1, ' * 500, b'"b": 2}' * 500
    frames = zstandard.ZstdCompressor().compress(first) + zstandard.ZstdCompressor().compress(
        second
    )
    assert _inspect_log._zstd_frames(memoryview(frames)) == first + second
    with pytest.raises(zipfile.BadZipFile, match="truncated"):
        _inspect_log._zstd_frames(memoryview(frames[:-4]))


def test_contexts_from_metadata_and_multiple_choice_options(tmp_path: Path) -> None:
    log = json.loads(REFUNDS_JSON.read_text())
    first = {s["id"]: s for s in log["samples"] if s["epoch"] == 1}
    first["refund-late"]["metadata"] = {
        "contexts": ["Managers approve late refunds.", "Credit only."]
    }
    first["invoice-currency"]["metadata"] = {
        "documents": [
            {"text": "USD, EUR or GBP.", "source": "billing.md", "id": "d7"},
            {"text": "x"},
        ]
    }
    first["sso-plans"]["choices"] = ["Free", "Enterprise"]
    path = tmp_path / "rag.json"
    path.write_text(json.dumps(log))
    cases = {c.case_id: c for c in load(path)[0].cases}
    assert [(c.id, c.text, c.rank) for c in cases["refund-late"].contexts] == [
        ("c1", "Managers approve late refunds.", 1),
        ("c2", "Credit only.", 2),
    ]
    doc = cases["invoice-currency"].contexts
    assert [(c.id, c.source) for c in doc] == [("d7", "billing.md"), ("c2", None)]
    assert cases["sso-plans"].question.endswith("\n\nA) Free\nB) Enterprise")
    assert cases["support-speed"].contexts == ()


def test_imported_runs_round_trip_through_native_files(tmp_path: Path) -> None:
    paths = [REFUNDS_JSON, OLD_EVAL, CANCELLED_JSON] + (
        [REFUNDS_EVAL, ERROR_EVAL] if HAS_ZSTD else []
    )
    for path in paths:
        for run_file in load(path):
            out = write_run_file(
                tmp_path / f"{run_file.run.id}.ragtui.jsonl", run_file.run, run_file.cases
            )
            assert read_run_file(out) == run_file


def test_sniffer_and_detect() -> None:
    for path in (REFUNDS_EVAL, REFUNDS_JSON, ERROR_EVAL, OLD_EVAL, CANCELLED_JSON):
        assert INSPECT.sniff(path, path.read_bytes()[:65536]).matches, path
        assert detect(path).name == "inspect", path
    deepeval = DATA.parent / "deepeval" / "latest_test_run.json"
    assert not INSPECT.sniff(deepeval, deepeval.read_bytes()[:65536]).matches
    assert not INSPECT.sniff(Path("x.csv"), b"question,answer\nq,a\n").matches


# ---------------------------------------------------------------- malformed files


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _bad_files(tmp: Path) -> list[tuple[Path, str]]:
    data = REFUNDS_EVAL.read_bytes()
    text = REFUNDS_JSON.read_text()
    log = json.loads(text)
    header = json.loads(zipfile.ZipFile(OLD_EVAL).read("header.json"))
    sample = zipfile.ZipFile(OLD_EVAL).read("samples/1_epoch_1.json")
    wrong_scores = dict(log, samples=[dict(log["samples"][0], scores=[1, 2])])
    no_id = dict(log, samples=[dict(log["samples"][0], id=None)])
    corrupt = bytearray(data)
    info = zipfile.ZipFile(REFUNDS_EVAL).getinfo("samples/refund-late_epoch_1.json")
    corrupt[info.header_offset + 100 : info.header_offset + 140] = bytes(40)
    junk = random.Random(6).randbytes(4096)
    cases = [
        ("empty.eval", b"", "the file is empty"),
        ("truncated.eval", data[: len(data) // 2], "truncated or corrupt zip"),
        ("junk.eval", b"PK" + junk, "truncated or corrupt zip"),
        ("truncated.json", text[: len(text) // 3].encode(), "invalid JSON"),
        ("junk.json", junk, "expected UTF-8 JSON"),
        ("list.json", b"[1, 2]", "expected a JSON object, found an array"),
        (
            "no_task.json",
            json.dumps({"version": 2, "status": "success", "eval": {}}).encode(),
            "'task'",
        ),
        (
            "samples_text.json",
            json.dumps(dict(log, samples="x")).encode(),
            "field 'samples': expected an array",
        ),
        ("scores_list.json", json.dumps(wrong_scores).encode(), "samples[0]: field 'scores'"),
        ("no_id.json", json.dumps(no_id).encode(), "samples[0]: field 'id'"),
        (
            "no_samples.json",
            json.dumps(dict(log, samples=[], results=None)).encode(),
            "holds no samples and states no results",
        ),
    ]
    if HAS_ZSTD:
        where = "samples/refund-late_epoch_1.json: corrupt archive member"
        cases.append(("corrupt_member.eval", bytes(corrupt), where))
    out = []
    for name, content, message in cases:
        (tmp / name).write_bytes(content)
        out.append((tmp / name, message))
    out.append((_zip(tmp / "other.eval", {"foo.txt": b"hello"}), "not an Inspect log"))
    broken = {"header.json": json.dumps(header).encode(), "samples/1_epoch_1.json": sample[:-20]}
    out.append(
        (_zip(tmp / "bad_sample.eval", broken), "samples/1_epoch_1.json:402:41: invalid JSON")
    )
    out.append(
        (
            _zip(tmp / "header_list.eval", {"header.json": b"[]"}),
            "header.json: expected a JSON object",
        )
    )
    return out


def test_malformed_files_give_one_clear_error(tmp_path: Path) -> None:
    for path, message in _bad_files(tmp_path):
        INSPECT.last_notices = ["untouched"]
        with pytest.raises(ImportFormatError) as caught:
            load(path)
        text = str(caught.value)
        assert text.startswith(f"{path}:"), text
        assert message in text, (path.name, text)
        assert "\n" not in text
        assert INSPECT.last_notices == ["untouched"]  # a failed load reports nothing half-done


# ---------------------------------------------------------------- wrong types anywhere


def test_wrong_types_anywhere_never_crash(tmp_path: Path) -> None:
    """Any field replaced by any other JSON type: a clean import or one ImportFormatError,
    never another exception, and what is imported is a valid native run."""
    doc = json.loads(CANCELLED_JSON.read_text())
    doc["samples"][0].update(choices=["Yes", "No"], attachments={"a": "b"})
    doc["samples"][0]["metadata"]["documents"] = [{"text": "t", "id": "d1", "source": "s"}]
    doc["eval"]["model_roles"] = {"grader": {"model": "openai/gpt-4o"}}
    doc["eval"]["scorers"][0]["options"] = {"model": "openai/gpt-4o-mini"}
    paths = field_paths(
        doc,
        4,
        frozenset({"events", "messages", "attachments", "store", "model_usage", "error_retries"}),
    )
    assert len(paths) > 40
    target = tmp_path / "variant.json"
    for path in paths:
        for new in WRONG:
            target.write_text(json.dumps(with_value(doc, path, new)))
            try:
                run_files = load(target)
            except ImportFormatError as err:
                assert str(err).startswith(str(target)), (path, new, err)
                continue
            for run_file in run_files:
                out = write_run_file(tmp_path / "out.ragtui.jsonl", run_file.run, run_file.cases)
                assert read_run_file(out) == run_file, (path, new)


def test_a_second_result_for_one_sample_and_epoch_is_refused_naming_both(tmp_path: Path) -> None:
    """It was 'not imported: cannot write into DIR (…ragtui.jsonl:3: field 'case_id': expected a
    case id unique within the run …)': the output blamed, the log's two places unnamed."""
    log = json.loads(CANCELLED_JSON.read_text())
    log["samples"].append(log["samples"][0])
    merged = tmp_path / "merged.json"
    merged.write_text(json.dumps(log))
    with zipfile.ZipFile(OLD_EVAL) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["samples/1_epoch_1_copy.json"] = members["samples/1_epoch_1.json"]
    copied = _zip(tmp_path / "copied.eval", members)
    for path, where, first in [
        (merged, "samples[3]", "samples[0]"),
        (copied, "samples/1_epoch_1_copy.json", "samples/1_epoch_1.json"),
    ]:
        with pytest.raises(ImportFormatError) as caught:
            load(path)
        assert str(caught.value) == (
            f"{path}: {where}: sample id '1' epoch 1: expected one result per sample and "
            f"epoch, found a second (the first in {first})"
        )


def test_a_finished_log_missing_a_sample_says_which_and_what_its_figures_cover(
    tmp_path: Path,
) -> None:
    """A sample lost from a finished log (a member of a .eval, an entry cut by hand) imported
    the rest with no word, beside the stated figures of every sample."""
    log = json.loads(REFUNDS_JSON.read_text())
    total = log["results"]["total_samples"]  # the log's own count: 4 samples x 2 epochs
    lost = log["samples"].pop(5)
    short = tmp_path / "short.json"
    short.write_text(json.dumps(log))
    runs = load(short)
    assert sum(len(r.cases) for r in runs) == total - 1
    (said,) = INSPECT.last_notices
    assert said == (
        f"{short}: the log counts {total} samples (results.total_samples) and holds "
        f"{total - 1}: the per-case figures are over the {total - 1} it holds, its stated "
        f"figures over all {total}; missing: {lost['id']} (epoch {lost['epoch']})"
    )
    load(REFUNDS_JSON)
    assert INSPECT.last_notices == []  # the whole log: nothing to say
