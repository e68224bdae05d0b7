"""`ragtui compare`, `gate` and `report` through click, on real run files in a temp folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.core.model import Claim
from ragtui.core.runfile import read_run_file
from tests.core.run_writer import RunWriter

N = 80


@pytest.fixture
def history(tmp_path: Path) -> RunWriter:
    """base (2 reruns), strict (better faithfulness), small (worse), noise (tiny change)."""
    w = RunWriter(tmp_path)
    rng = np.random.default_rng(31)
    ids = [f"case-{i:03d}" for i in range(N)]
    q = rng.uniform(0.3, 0.9, N)

    def labels(shift: float) -> dict[str, float]:
        return {c: float(rng.uniform() < min(1.0, p + shift)) for c, p in zip(ids, q, strict=True)}

    relevance = {c: float(np.round(p * 4) / 4) for c, p in zip(ids, q, strict=True)}
    base = {"generator": "llama3.2:3b", "prompt": "v1"}
    for k in range(2):
        w.write(
            f"base-{k}",
            {"faithfulness": labels(0.0), "relevance": relevance},
            config={**base, "seed": k},
            name="baseline",
        )
    w.write(
        "strict",
        {"faithfulness": labels(0.3), "relevance": relevance},
        config={**base, "prompt": "strict"},
        answers={ids[0]: "Support pays **by card** <b>now</b> | [link](x)"},
        claims={
            ids[0]: [
                Claim("faithfulness", "paid back by card", "UNSUPPORTED", (), "C2 says credit")
            ]
        },
    )
    w.write(
        "small",
        {"faithfulness": labels(-0.5), "relevance": relevance},
        config={**base, "generator": "tiny"},
    )
    noisy = dict(relevance)
    noisy[ids[1]] = max(0.0, noisy[ids[1]] - 0.25)
    w.write(
        "noise",
        {"faithfulness": labels(0.0), "relevance": noisy},
        config={**base, "temperature": 0.1},
        name="[red]noise[/red]",
    )
    return w


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_compare_table_says_points_and_verdicts(history: RunWriter) -> None:
    result = run("compare", "base-0", "strict", str(history.folder))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "faithfulness" in out and "improved" in out
    assert "reruns of A (2 runs, 80 cases) differ by" in out
    # the rule, decided on the reruns' own means, read from the run files
    means = [
        np.mean([c.scores["faithfulness"].value for c in read_run_file(history.folder / f).cases])
        for f in ("base-0.ragtui.jsonl", "base-1.ragtui.jsonl")
    ]
    spread = abs(means[0] - means[1]) * 100
    said = "within it" if spread < 5 else "above it"
    assert f"faithfulness: reruns of A (2 runs, 80 cases) differ by {spread:.1f} points" in out
    assert f"(rule of thumb: < 5, {said})" in out
    assert "err A/B" in out and "method" in out and "Tango" not in out
    # A is the mean of 2 reruns, so not binary per case: Tango's name would be wrong; some
    # cases did not move, so the score test over the deltas' values
    assert "score" in out
    assert "seed 20261201" in out
    assert "%" not in out.replace("95% CI", "").replace("worst 10%", "")


def test_compare_json_schema(history: RunWriter) -> None:
    result = run(
        "compare",
        "base-0",
        "small",
        str(history.folder),
        "--json",
        "--seed",
        "7",
        "--metric",
        "faithfulness",
        "--rerun-values",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["a"], data["b"], data["seed"], data["margin"]) == ("base-0", "small", 7, 0.05)
    (m,) = data["metrics"]
    assert m["metric"] == "faithfulness" and m["verdict"] == "regressed"
    assert m["method"] == "score" and m["why"].startswith("adjusted p")
    # the score test because some cases did not move: the count is the cases' own
    assert m["moved"] == sum(1 for c in data["cases"] if c["delta"] != 0) < N
    assert m["noise_floor"] is not None and 0 <= m["mean_a"] <= 1
    assert len(data["cases"]) == N
    assert data["cases"][0]["delta"] == min(c["delta"] for c in data["cases"])
    case = data["cases"][0]
    assert [r["run"] for r in case["a_runs"]] == ["base-0", "base-1"]
    assert case["a"] == pytest.approx(np.mean([r["value"] for r in case["a_runs"]]))
    assert all("code" in n and "text" in n for n in data["noise"] + data["warnings"])


def test_margin_is_in_points_and_comes_from_ragtui_toml(history: RunWriter) -> None:
    folder = str(history.folder)
    given = json.loads(run("compare", "base-0", "small", folder, "--json", "--margin", "3").stdout)
    assert given["margin"] == pytest.approx(0.03)
    from ragtui.config import load_config

    (history.folder / "ragtui.toml").write_text("[compare]\nmargin = 2\n", encoding="utf-8")
    expected = load_config(history.folder).margin
    assert expected != 0.05
    configured = json.loads(run("compare", "base-0", "small", folder, "--json").stdout)
    assert configured["margin"] == pytest.approx(expected)
    report = run("report", "base-0", "small", folder)
    assert f"margin ±{expected * 100:g} points" in report.stdout
    # the rule ragtui.toml's margin follows: 1 to 50 points, a fraction refused as one
    for bad in ("0", "0.05", "0.5", "51", "100", "-5", "nan", "five"):
        refused = run("compare", "base-0", "small", folder, "--margin", bad)
        assert refused.exit_code == 2 and "Traceback" not in refused.output, bad
        last = refused.stderr.strip().splitlines()[-1]  # after click's usage lines
        assert last.startswith("Error: Invalid value for '--margin': "), refused.stderr
    fraction = run("gate", "base-0", "small", folder, "--margin", "0.05").stderr
    assert (
        "margins are in points, from 1 to 50 (5 means 5 points, not 0.05); found 0.05" in fraction
    )
    for good in ("1", "50", "2.5"):
        shown = json.loads(
            run("compare", "base-0", "small", folder, "--json", "--margin", good).stdout
        )
        assert shown["margin"] == pytest.approx(float(good) / 100)


def test_rerun_values_without_json_is_a_usage_error(history: RunWriter) -> None:
    result = run("compare", "base-0", "small", str(history.folder), "--rerun-values")
    assert result.exit_code == 2 and result.stdout == ""
    # one line, as every error, naming where the options are listed
    assert result.stderr.strip().splitlines() == [
        "Error: --rerun-values adds to the JSON: give --json too (see cli compare --help)"
    ]


def test_bad_seed_and_unknown_metric_are_usage_errors(history: RunWriter) -> None:
    folder = str(history.folder)
    seed = run("compare", "base-0", "strict", folder, "--seed", "-1")
    assert seed.exit_code == 2 and "Traceback" not in seed.output and "--seed" in seed.output
    metric = run("compare", "base-0", "strict", folder, "--metric", "faithfulnes")
    assert metric.exit_code == 2
    assert "'faithfulnes' is in neither run (they have: faithfulness, relevance)" in metric.output


def test_gate_exit_codes(history: RunWriter) -> None:
    folder = str(history.folder)
    ok = run("gate", "base-0", "strict", folder)
    assert ok.exit_code == 0, ok.output
    assert "gate: passed" in ok.stdout and "shown non-inferior" in ok.stdout
    bad = run("gate", "base-0", "small", folder)
    # each metric's line names its test once (it said "(score test, …), improved — adjusted
    # p … (score test, …)")
    faith = next(x for x in bad.stdout.splitlines() if x.strip().startswith("faithfulness:"))
    assert faith.count("score test") == 1, faith
    assert bad.exit_code == 1, bad.output
    assert "FAIL faithfulness: regressed by" in bad.stdout
    # a one-case drop on relevance: one move in 80 cannot show how far cases move: up to 6.8%
    # of cases (Clopper-Pearson, one-sided 97.5%, from scipy) could drop, each by the whole
    # scale, so non-inferiority is not shown
    noise = run("gate", "base-0", "noise", folder, "--metric", "relevance")
    assert noise.exit_code == 3, noise.output
    worst = -100 * scipy.stats.beta.ppf(0.975, 1 + 1, 80 - 1)
    assert (
        "???  relevance: cannot tell: only 1 of 80 cases moved, too few to test; the exact 95% "
        f"CI lower bound is {worst:.1f}, not above -5"
    ) in noise.stdout
    floor = run("gate", "base-0", "strict", folder, "--min", "faithfulness=99")
    assert floor.exit_code == 1
    assert "below the floor 99.0" in floor.stdout
    held = run("gate", "base-0", "strict", folder, "--min", "relevance=10")
    assert held.exit_code == 0 and "≥ floor 10.0" in held.stdout
    assert run("gate", "base-0", "no-such-run", folder).exit_code == 2
    bad_min = run("gate", "base-0", "strict", folder, "--min", "faithfulness")
    assert bad_min.exit_code == 2 and "METRIC=POINTS" in bad_min.output
    typo = run("gate", "base-0", "strict", folder, "--min", "faithfulnes=80")
    assert typo.exit_code == 2
    assert "'faithfulnes' is in neither run (they have: faithfulness, relevance)" in typo.output
    # a floor typed as a fraction (as --json writes means) was a floor of 0.8 points: it held
    # for any candidate; refused now, with the figure it most likely means
    fraction = run("gate", "base-0", "strict", folder, "--min", "faithfulness=0.8")
    assert fraction.exit_code == 2
    assert "figures are in points, from 0 to 100 (faithfulness=80 for a mean of 0.8)" in (
        fraction.output
    )
    assert run("history", "strict", folder, "--pass", "faithfulness=0.5").exit_code == 2
    assert run("gate", "base-0", "strict", folder, "--margin", "500").exit_code == 2


def test_gate_undecided_exits_3_unless_told_to_pass(tmp_path: Path) -> None:
    w = RunWriter(tmp_path)
    rng = np.random.default_rng(5)
    ids = [f"c{i}" for i in range(20)]
    a = rng.uniform(0.2, 0.9, 20)
    w.write("a", {"f": dict(zip(ids, a.tolist(), strict=True))})
    noise = rng.normal(0, 0.3, 20)
    b = a + noise - noise.mean()  # no change on average, much spread: the data cannot tell
    w.write("b", {"f": dict(zip(ids, np.clip(b, 0, 1).tolist(), strict=True))}, config={"p": 2})
    undecided = run("gate", "a", "b", str(tmp_path))
    assert undecided.exit_code == 3, undecided.output
    assert (
        "???  f: cannot tell" in undecided.stdout
        and "cases to show non-inferiority" in undecided.stdout
    )
    assert run("gate", "a", "b", str(tmp_path), "--undecided-passes").exit_code == 0


@pytest.mark.parametrize(
    ("candidate", "says"),
    [
        (
            {f"c{i}": "judge timed out" for i in range(48)},
            "FAIL f: the candidate has no usable score",
        ),
        ({f"other-{i}": 1.0 for i in range(48)}, "FAIL f: only 0 cases shared by both runs"),
        (
            {f"c{i}": ("judge timed out" if i < 45 else 0.0) for i in range(48)},
            "FAIL f: only 3 cases shared by both runs (the gate needs 10)",
        ),
        (
            {f"c{i}": ("judge timed out" if i < 47 else 0.0) for i in range(48)},
            "FAIL f: only 1 case shared by both runs (the gate needs 10)",
        ),
    ],
    ids=["all errored", "no shared case", "45 of 48 errored", "47 of 48 errored"],
)
def test_gate_fails_closed(tmp_path: Path, candidate: dict, says: str) -> None:
    w = RunWriter(tmp_path)
    w.write("a", {"f": {f"c{i}": 1.0 for i in range(48)}})
    w.write("b", {"f": candidate}, config={"p": 2})
    result = run("gate", "a", "b", "-p", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert says in result.stdout and "gate: failed" in result.stdout
    data = json.loads(run("gate", "a", "b", "-p", str(tmp_path), "--json").stdout)
    assert data["outcome"] == "failed" and data["exit_code"] == 1


def test_report_markdown(history: RunWriter, tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    result = run("report", "base-0", "strict", str(history.folder), "-o", str(target))
    assert result.exit_code == 0, result.output
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# ragtui report: baseline vs strict")
    assert (
        "| metric | N | A | B | err A/B | Δ pts | 95% CI | method | p adj | noise ± | MDE "
        "| verdict |" in text
    )
    assert "**improved**" in text
    assert "## The 10 worst cases" in text and text.count("\n### ") == 10
    assert "judge prompt" not in text  # same judge: no judge warning
    # the case with an unsupported claim, if among the worst, shows it escaped
    stdout = run("report", "base-0", "strict", str(history.folder), "-m", "faithfulness")
    assert stdout.exit_code == 0
    assert "**Question:** question case-" in stdout.stdout
    # A per case is the reruns' mean, each shown, after the delta and a space
    assert re.search(r"\([-+]?\d+\.\d\) \(A's reruns \d", stdout.stdout), stdout.stdout


def test_report_escapes_untrusted_text(tmp_path: Path) -> None:
    w = RunWriter(tmp_path)
    w.write("a", {"f": {"x": 1.0, "y": 1.0}})
    w.write(
        "b",
        {"f": {"x": 0.0, "y": 1.0}},
        config={"prompt": "v2"},
        answers={"x": "Support pays **by card** <b>now</b> | [link](x)"},
        claims={"x": [Claim("f", "paid back by card", "UNSUPPORTED", (), "C2 says credit")]},
    )
    result = run("report", "a", "b", str(tmp_path))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert r"Support pays \*\*by card\*\* \<b\>now\<\/b\>" not in out  # '/' is not escaped
    assert r"Support pays \*\*by card\*\* \<b\>now\</b\> \| \[link\](x)" in out
    assert "- **Unsupported claims (B):**" in out
    assert "paid back by card — C2 says credit" in out


def test_report_over_an_existing_file_says_it_replaced_it(history: RunWriter, tmp_path: Path):  # type: ignore[no-untyped-def]
    target = tmp_path / "report.md"
    first = run("report", "base-0", "strict", str(history.folder), "-o", str(target))
    assert first.exit_code == 0 and first.stdout == f"wrote {target}\n"
    target.write_text("my notes", encoding="utf-8")
    again = run("report", "base-0", "strict", str(history.folder), "-o", str(target))
    assert again.exit_code == 0
    assert again.stdout == f"wrote {target} (replaced the file that was there)\n"
    assert target.read_text(encoding="utf-8").startswith("# ragtui report: baseline vs strict")


def rendered(markdown: str) -> str:
    """The report as a Markdown viewer shows it (CommonMark with GFM tables)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_report_shows_run_ids_as_they_are_and_no_entity_turns_invisible(tmp_path: Path) -> None:
    """Ids sit in code spans, where a backslash escape is literal: `run_a` showed as
    `run\\_a` in every viewer, and a backtick in an id ended the span early. An entity in a
    name (&rlm;) rendered as the invisible bidi mark the report promises to show."""
    w = RunWriter(tmp_path)
    a_id, b_id = "base_line_1", "cand`id|<b>x</b>_2"
    w.write(a_id, {"f": {f"c{i}": 1.0 for i in range(12)}}, name="base &rlm;x&zwj;y")
    w.write(b_id, {"f": {f"c{i}": 0.0 if i < 6 else 1.0 for i in range(12)}}, config={"p": 2})
    result = run("report", a_id, b_id, str(tmp_path))
    assert result.exit_code == 0, result.output
    html = rendered(result.stdout)
    assert f"<li><strong>A</strong> <code>{a_id}</code> (" in html
    assert "<li><strong>B</strong> <code>cand`id|&lt;b&gt;x&lt;/b&gt;_2</code> (" in html
    assert "<b>" not in html
    assert "\u200f" not in html and "\u200d" not in html
    assert "<h1>ragtui report: base &amp;rlm;x&amp;zwj;y vs " in html


def test_the_configured_cluster_field_reaches_compare_gate_and_report(tmp_path: Path) -> None:
    ids = [f"q{i:02d}" for i in range(24)]
    rng = np.random.default_rng(8)
    a = rng.uniform(0.3, 0.7, 24)
    b = np.clip(a + np.repeat(rng.normal(0.05, 0.1, 8), 3), 0, 1)  # 8 docs move together
    meta = {c: {"source_doc": f"doc-{i // 3}"} for i, c in enumerate(ids)}
    w = RunWriter(tmp_path)
    w.write("a", {"f": dict(zip(ids, a.tolist(), strict=True))}, metadata=meta)
    w.write("b", {"f": dict(zip(ids, b.tolist(), strict=True))}, metadata=meta, config={"p": 2})
    folder = str(tmp_path)
    unclustered = json.loads(run("compare", "a", "b", folder, "--json").stdout)
    assert unclustered["metrics"][0]["units"] == 24 and unclustered["cluster_field"] is None
    (tmp_path / "ragtui.toml").write_text('[compare]\ncluster = "source_doc"\n', encoding="utf-8")
    data = json.loads(run("compare", "a", "b", folder, "--json").stdout)
    (m,) = data["metrics"]
    assert (m["method"], m["units"], data["cluster_field"]) == (
        "cluster_sign_flip",
        8,
        "source_doc",
    )
    said = "24 cases in 8 clusters (24 by metadata field 'source_doc' ([compare] cluster))"
    assert any(n["code"] == "clustered" and n["text"].startswith(said) for n in data["noise"])
    text = run("compare", "a", "b", folder).stdout
    assert "by cluster" in text and said in text
    gate = run("gate", "a", "b", folder, "--json")
    assert json.loads(gate.stdout)["comparison"]["metrics"][0]["units"] == 8
    assert "sign-flip by cluster (8 clusters, exact)" in run("report", "a", "b", folder).stdout
    assert not [w for w in data["warnings"] if w["code"] == "cluster_field_unused"]
    # a misspelt field: said, never a silent switch to independent cases
    (tmp_path / "ragtui.toml").write_text('[compare]\ncluster = "source_dco"\n', encoding="utf-8")
    typo = json.loads(run("compare", "a", "b", folder, "--json").stdout)
    assert typo["metrics"][0]["units"] == 24
    warned = "cluster field 'source_dco' ([compare] cluster): no case of A or B has it in its "
    warned += "metadata, so cases are taken as independent (check the field's name)"
    assert [w["text"] for w in typo["warnings"] if w["code"] == "cluster_field_unused"] == [warned]
    assert f"! {warned}" in run("compare", "a", "b", folder).stdout


def test_report_names_the_stage_of_a_retrieval_regression(tmp_path: Path) -> None:
    """Issue 12: the Markdown report carries the diagnosis. On the demo history the bm25
    retriever loses supporting chunks: every case whose context recall fell is a retrieval
    miss, and as many as the files show."""
    import shutil

    from ragtui.core.runfile import read_run_file

    repo = Path(__file__).resolve().parents[2]
    folder = tmp_path / "runs"
    shutil.copytree(repo / "sample_runs", folder)
    base = read_run_file(folder / "baseline-2026-11-02.ragtui.jsonl")
    bm25 = read_run_file(folder / "bm25-2026-11-21.ragtui.jsonl")
    reruns = [
        read_run_file(folder / f"baseline-2026-11-{d}.ragtui.jsonl") for d in ("03", "05", "29")
    ]

    def recall(case) -> float:  # type: ignore[no-untyped-def]
        return case.scores["context_recall"].value

    # a case fell when B is below every one of A's reruns
    fell = [
        b.case_id
        for b, *a in zip(bm25.cases, base.cases, *(r.cases for r in reruns), strict=True)
        if recall(b) < min(recall(x) for x in a)
    ]
    result = CliRunner().invoke(cli, ["report", "baseline", "bm25", "-p", str(folder)])
    assert result.exit_code == 0, result.output
    section = result.stdout.split("## Diagnosis")[1].split("## Warnings")[0]
    assert "context\\_recall -" in section
    assert f"{len(fell)} cases fell — {len(fell)} retrieval" in section
    assert f"{len(fell)} retrieval miss" in section
    # each warning once, in its own section (the diagnosis block repeated them all)
    twin = "rerun baseline-2026-11-03 of A is identical to baseline-2026-11-02"
    assert twin not in section and result.stdout.count(twin) == 1
    # the diagnosis's own notes stay (the review found them dropped with the repeats)
    header = json.loads((folder / "bm25-2026-11-21.ragtui.jsonl").read_text().split("\n")[0])
    header["dataset"]["version"] = "v-other"
    lines = (folder / "bm25-2026-11-21.ragtui.jsonl").read_text().split("\n")
    lines[0] = json.dumps(header)
    (folder / "bm25-2026-11-21.ragtui.jsonl").write_text("\n".join(lines))
    again = CliRunner().invoke(cli, ["report", "baseline", "bm25", "-p", str(folder)]).stdout
    said = "are on different datasets (or versions): a case id may not be the same question"
    assert again.count(said) == 1 and again.count(twin) == 1


def test_all_configs_compares_the_base_with_the_first_run_of_every_other_config(
    tmp_path: Path,
) -> None:
    """`compare BASE --all-configs`, the CLI's `v`: the candidates are, from the files alone,
    the oldest run with cases of each other config of the base's dataset, re-judges left out."""
    import shutil

    folder = tmp_path / "runs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "sample_runs", folder)
    headers = []
    for path in folder.glob("*.ragtui.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        headers.append((json.loads(lines[0]), len(lines) - 1))
    headers.sort(key=lambda h: h[0]["created_at"])
    base = next(h for h, _ in headers if h["id"] == "baseline-2026-11-02")
    seen, expected = {base["config_key"]}, []
    for h, n in headers:
        usable = h["dataset"] == base["dataset"] and h["kind"] != "rejudge" and n
        if usable and h["config_key"] not in seen:
            seen.add(h["config_key"])
            expected.append(h["id"])
    assert len(expected) >= 5
    result = run("compare", "baseline", "--all-configs", str(folder), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["id"] for c in data["candidates"]] == expected
    refused = run("compare", "baseline", "bm25", "--all-configs", str(folder))
    assert refused.exit_code == 2 and "give the base run only" in refused.stderr
    # a note about the base's own reruns is said once for the table, not once per candidate
    about_a = [w for w in data["warnings"] if "baseline-2026-11-03 of A is identical" in w]
    assert len(about_a) == len(expected)  # the JSON keeps every pair's notes
    text = run("compare", "baseline", "--all-configs", str(folder)).stdout.splitlines()
    said = [line for line in text if "baseline-2026-11-03 of A is identical" in line]
    assert len(said) == 1 and said[0].startswith("! every candidate: rerun baseline-2026-11-03")


def test_a_floor_reads_the_same_mean_whether_or_not_m_gates_its_metric(tmp_path: Path) -> None:
    """B scores 75 on faith and its rerun 85: B as compare shows it is 80. A floor of 80 held
    without -m and failed with `-m recall` (it read the first run alone, 75)."""
    writer = RunWriter(tmp_path)
    ids = [f"c{i:02d}" for i in range(40)]
    gen = np.random.default_rng(7)
    recall = {c: float(v) for c, v in zip(ids, gen.uniform(0.5, 1.0, 40), strict=True)}
    writer.write("a", {"faith": dict.fromkeys(ids, 0.7), "recall": recall})
    cand = {"p": 2}
    writer.write("b", {"faith": dict.fromkeys(ids, 0.75), "recall": recall}, config=cand)
    rerun = {c: min(1.0, v + 0.001) for c, v in recall.items()}  # not a cache hit
    writer.write("b2", {"faith": dict.fromkeys(ids, 0.85), "recall": rerun}, config=cand)
    folder = str(tmp_path)
    for extra in ([], ["-m", "recall"]):
        out = run("gate", "a", "b", folder, "--min", "faith=80", "--json", *extra)
        (floor,) = [ch for ch in json.loads(out.stdout)["checks"] if "floor" in ch["code"]]
        assert floor["code"] == "floor_held" and floor["value"] == pytest.approx(0.80), extra


def test_reruns_on_one_side_only_say_the_false_alarms_split_unevenly(history: RunWriter) -> None:
    """A averaged over its 2 reruns against a single B: the per-case changes are skewed under
    no change, which a one-sided decision (the gate) should know (the statistician's
    simulation: 1 in 21 improved, 1 in 125 regressed, where 1 in 40 each is meant)."""

    def notes(a: str, b: str) -> list[dict]:
        result = run("compare", a, b, str(history.folder), "--json")
        assert result.exit_code == 0, result.output
        noise = json.loads(result.stdout)["warnings"]
        return [
            {k: v for k, v in n.items() if k != "text"}
            for n in noise
            if n["code"] == "uneven_reruns"
        ]

    reruns = len(list(history.folder.glob("base-*.ragtui.jsonl")))  # base-0 and base-1
    assert notes("base-0", "strict") == [
        {"code": "uneven_reruns", "side": "A", "runs": reruns, "single": "B"}
    ]
    assert notes("strict", "base-0") == [
        {"code": "uneven_reruns", "side": "B", "runs": reruns, "single": "A"}
    ]
    assert notes("strict", "noise") == []  # one run a side: alike
    out = run("compare", "base-0", "strict", str(history.folder)).stdout
    assert f"A is the mean of {reruns} reruns and B a single run" in out
    assert "rerun B as often" in out
    # and the gate, a one-sided decision, says it too
    gate = run("gate", "base-0", "strict", str(history.folder))
    assert f"A is the mean of {reruns} reruns and B a single run" in gate.stdout + gate.stderr
