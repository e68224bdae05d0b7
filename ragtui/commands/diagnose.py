"""`ragtui diagnose`, `ragtui history` and `ragtui compare-many`: thin shells over the
diagnosis modules of core (attribution, retrieval/answer/claim diffs, case classes, costs).

Figures are fractions in --json; text says points (x 100). Every string from a run file goes
through `printable`; JSON is ASCII with no NaN.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ragtui.commands.common import open_store
from ragtui.core.stats import DEFAULT_SEED
from ragtui.format import (
    attribution_line,
    cause_text,
    chunk_mark,
    claims_line,
    classes_line,
    cost_line,
    interval,
    noise_rule_line,
    p_value,
    printable,
    pts,
    retrieval_line,
    short_metrics,
    short_pts,
    signed_pts,
    word_diff,
)

EXCERPT = 90

_margin = click.option(
    "--margin",
    type=float,
    default=0.05,
    show_default=True,
    help="Practical margin as a fraction (0.05 = 5 points).",
)
_seed = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed.")
_json = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
_metrics = click.option(
    "--metric", "-m", "metrics", multiple=True, help="Only this metric (repeatable)."
)
_passes = click.option(
    "--pass",
    "passes",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Pass threshold for the case classes, a fraction (default: the source's, else 0.5).",
)


def _pairs(specs: tuple[str, ...], option: str, *, number: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        key, value = key.strip(), value.strip()
        if number:
            try:
                parsed: Any = float(value)
            except ValueError:
                parsed = -1.0
            ok = 0.0 <= parsed <= 1.0
        else:
            parsed, ok = value, bool(value)
        if not sep or not key or not ok:
            expected = "METRIC=VALUE with VALUE a fraction in [0, 1]" if number else "ROLE=METRIC"
            raise click.BadParameter(f"{spec!r}: expected {expected}", param_hint=option)
        out[key] = parsed
    return out


def _emit_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, ensure_ascii=True, allow_nan=False))


def _excerpt(text: str | None, limit: int = EXCERPT) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---------------------------------------------------------------- diagnose


@click.command("diagnose")
@click.argument("a")
@click.argument("b")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@_metrics
@click.option("--case", "case_id", help="Diagnose one case in full: chunks, answer, claims.")
@click.option(
    "--min-drop",
    type=float,
    default=0.10,
    show_default=True,
    help="When A has no reruns: the drop that counts as a fall, a fraction.",
)
@click.option(
    "--role",
    "roles",
    multiple=True,
    metavar="ROLE=METRIC",
    help="Name the metric of a stage role: faithfulness, context_recall, context_precision, "
    "answer_relevance (repeatable).",
)
@_passes
@click.option("--worst", type=int, default=10, show_default=True, help="Worst cases listed.")
@_margin
@_seed
@_json
def diagnose_command(
    a: str,
    b: str,
    path: str | None,
    metrics: tuple[str, ...],
    case_id: str | None,
    min_drop: float,
    roles: tuple[str, ...],
    passes: tuple[str, ...],
    worst: int,
    margin: float,
    seed: int,
    as_json: bool,
) -> None:
    """Why did B get worse than A? Which stage broke per case, what changed in the retrieval,
    which claims flipped, which cases are newly broken, and cost and latency beside quality."""
    from ragtui.core.diagnosis import diagnose, diagnose_case

    role_map = _pairs(roles, "--role", number=False)
    thresholds = _pairs(passes, "--pass", number=True)
    store = open_store(path, announce=not as_json)
    try:
        common = dict(
            margin=margin, seed=seed, min_drop=min_drop, roles=role_map, thresholds=thresholds
        )
        if case_id is not None:
            one = diagnose_case(store, a, b, case_id, **common)
            if as_json:
                _emit_json(one.to_json())
            else:
                _print_case(one)
            return
        d = diagnose(store, a, b, metrics=list(metrics) or None, **common)
    finally:
        store.close()
    if as_json:
        _emit_json(d.to_json())
        return
    _print_diagnosis(d, worst)


def _print_diagnosis(d: Any, worst: int) -> None:
    echo = click.echo
    reruns = f", {len(d.a_runs)} reruns" if len(d.a_runs) > 1 else ""
    echo(
        printable(f"A {d.a_name} ({d.a}{reruns})  vs  B {d.b_name} ({d.b})")
        + f" · {d.n_cases} paired cases"
    )
    echo(noise_rule_line(len(d.a_runs), d.min_drop))
    echo("")
    echo("stages")
    for m in d.metrics:
        echo("  " + attribution_line(m.metric, m.delta, len(m.cases), m.by_stage()))
        causes = [f"{n} {cause}" for cause, n in m.by_cause().items() if n]
        if causes:
            echo("    " + ", ".join(causes))
    r, c = d.retrieval, d.claims
    echo("")
    echo(
        retrieval_line(
            r.n_cases,
            r.mean_overlap,
            r.top_changed,
            r.with_added,
            r.with_removed,
            r.with_moved,
            r.unchanged,
        )
    )
    echo(f"answers changed in {d.answers_changed} of {d.n_cases} cases")
    echo(
        claims_line(
            c.n_cases,
            c.lost_support,
            c.lost_support_chunk_gone,
            c.fixed,
            c.new,
            c.new_unsupported,
            c.dropped,
        )
    )
    echo("")
    echo("case classes (B against the runs of A's config; pass: the source's threshold, else ≥ 50)")
    for metric, counts in d.classes.items():
        echo("  " + classes_line(metric, dict(counts)))
    if d.costs:
        echo("")
        echo("cost and latency (A → B)")
        for cd in d.costs:
            echo("  " + cost_line(cd.field, cd.mean_a, cd.mean_b, cd.ratio))
    rows = d.worst(worst)
    if rows:
        echo("")
        echo(f"worst cases ({len(rows)})")
        for w in rows:
            echo(
                "  "
                + printable(f"{w.case_id}  {w.metric}")
                + f"  {short_pts(w.a)} → {short_pts(w.b)} ({signed_pts(w.delta)})  "
                + cause_text(w.cause, w.stage, w.basis, w.missing)
            )
    for w in d.warnings:
        echo("! " + printable(w))


def _print_case(one: Any) -> None:
    echo = click.echo
    echo(printable(f"case {one.case_id}   A {one.a}  vs  B {one.b}"))
    echo(f"question   {_excerpt(one.question, 200)}")
    if one.reference:
        echo(f"reference  {_excerpt(one.reference, 200)}")
    for m in one.moves:
        mark = "  fell" if m.fell else ""
        echo(
            printable(f"  {m.metric}")
            + f"  {short_pts(m.a)} → {short_pts(m.b)} ({signed_pts(m.b - m.a)}){mark}"
        )
    for at in one.attributions:
        echo(
            printable(f"stage for {at.metric}: ")
            + cause_text(at.cause, at.stage, at.basis, at.missing)
        )
    r = one.retrieval
    echo("")
    overlap = "—" if r.overlap is None else f"{pts(r.overlap)} pts"
    echo(f"chunks (matched by {r.matched_by}; top-{r.k} overlap {overlap})")
    for ch in r.chunks:
        ranks = f"A#{ch.rank_a or '-'} B#{ch.rank_b or '-'}"
        echo(
            f"  {chunk_mark(ch.mark, ch.move):<3}{ranks:<10}"
            + printable(f"{ch.id_b or ch.id_a}  {ch.source or ''}  ")
            + _excerpt(ch.text, 70)
        )
    ad = one.answer
    echo("")
    if ad.identical:
        echo("answer: unchanged")
    else:
        echo(
            f"answer diff (+{ad.words_added} words, -{ad.words_removed} words; "
            "[-removed-] {+added+})"
            + (" — long answers: only the start is compared" if ad.truncated else "")
        )
        echo(word_diff((s.kind, s.text) for s in ad.segments))
    echo("")
    changes = [ch for ch in one.claims.changes if ch.change != "same"]
    same = len(one.claims.changes) - len(changes)
    echo(f"claims ({len(changes)} changed, {same} unchanged)")
    for ch in changes:
        text = ch.text_b if ch.text_b is not None else ch.text_a
        verdicts = f"{ch.verdict_a or '—'} → {ch.verdict_b or '—'}"
        gone = ""
        if ch.change == "lost support" and ch.chunk_gone is not None:
            gone = (
                "; its chunk left B's retrieval" if ch.chunk_gone else "; its chunk is still there"
            )
        echo(f"  {ch.change:<13} {printable(verdicts)}{gone}  " + _excerpt(text, 80))
    for k in one.classes:
        echo(printable(f"class {k.metric}: ") + k.klass)


# ---------------------------------------------------------------- history


_MARK = {True: "✓", False: "✗", None: "!"}


@click.command("history")
@click.argument("run")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--base", help="Classify against this run's config (its reruns), not the history.")
@_metrics
@click.option("--class", "klass", help="List only this class (e.g. 'newly broken', flaky).")
@_passes
@_json
def history_command(
    run: str,
    path: str | None,
    base: str | None,
    metrics: tuple[str, ...],
    klass: str | None,
    passes: tuple[str, ...],
    as_json: bool,
) -> None:
    """Case classes of RUN over its history: newly broken, newly fixed, flaky, stable pass/fail.

    Without --base the history is every earlier run of RUN's dataset; with --base it is the
    base run and its reruns. A case passes when its value reaches the metric's threshold."""
    from ragtui.core.case_history import CLASSES, case_classes

    if klass is not None and klass not in CLASSES:
        raise click.BadParameter(
            f"{klass!r}: expected one of {', '.join(CLASSES)}", param_hint="--class"
        )
    thresholds = _pairs(passes, "--pass", number=True)
    store = open_store(path, announce=not as_json)
    try:
        h = case_classes(
            store, run, base=base, metrics=list(metrics) or None, thresholds=thresholds
        )
    finally:
        store.close()
    if as_json:
        _emit_json(h.to_json())
        return
    against = f"the runs of {h.base}'s config" if h.base else "every earlier run of its dataset"
    n = len(h.baseline_runs)
    click.echo(printable(f"{h.run} against {against} ({n} run{'' if n == 1 else 's'})"))
    click.echo("pass: value ≥ the threshold you gave, else the source's, else 50 points")
    for metric, counts in h.counts().items():
        click.echo("  " + classes_line(metric, counts))
    shown = h.of_class(klass) if klass else [c for c in h.cases if c.klass != "stable pass"]
    if not klass:
        hidden = len(h.cases) - len(shown)
        click.echo(f"cases ({hidden} stable pass not listed; --class 'stable pass' lists them)")
    click.echo("marks: the baseline runs, oldest first → the candidate (✓ pass, ✗ fail, ! error)")
    width_id = max((len(printable(c.case_id)) for c in shown), default=0)
    width_m = max((len(printable(c.metric)) for c in shown), default=0)
    for c in shown:
        marks = "".join(_MARK[o.passed] for o in c.history if o.baseline)
        marks = f"{marks or '—'} → {_MARK[c.candidate.passed]}"
        click.echo(
            f"  {printable(c.case_id):<{width_id}}  {printable(c.metric):<{width_m}}  "
            f"{c.klass:<16} {short_pts(c.candidate.value):>5}  {marks}"
        )
    for note in h.notes:
        click.echo("! " + printable(note))


# ---------------------------------------------------------------- compare-many


@click.command("compare-many")
@click.argument("runs", nargs=-1, required=True)
@_metrics
@click.option("--sort", "sort_metric", help="Rank the candidates by their Δ on this metric.")
@_margin
@_seed
@_json
def compare_many_command(
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    sort_metric: str | None,
    margin: float,
    seed: int,
    as_json: bool,
) -> None:
    """Compare several candidates with one base: ragtui compare-many BASE C1 C2 ... [PATH].

    One table of candidates × metrics (Δ, 95% CI, verdict), Holm-adjusted over every cell.
    A last argument that is a folder is the runs folder."""
    from ragtui.core.multi_compare import compare_many

    refs = list(runs)
    path = refs.pop() if len(refs) > 2 and Path(refs[-1]).is_dir() else None
    if len(refs) < 2:
        raise click.UsageError("give a base run and at least one candidate: BASE C1 [C2 ...]")
    store = open_store(path, announce=not as_json)
    try:
        mc = compare_many(store, refs[0], refs[1:], list(metrics) or None, margin, seed)
    finally:
        store.close()
    if sort_metric is not None and sort_metric not in mc.metrics:
        raise click.BadParameter(
            f"{sort_metric!r} is not compared (metrics: {', '.join(mc.metrics)})",
            param_hint="--sort",
        )
    if as_json:
        payload = mc.to_json()
        if sort_metric:
            payload["order"] = mc.ranked(sort_metric)
        _emit_json(payload)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    tests = sum(c.p is not None for c in mc.cells)
    table = Table(
        title=Text(printable(f"base {mc.base_name} ({mc.base}) · Holm over {tests} tests")),
        box=None,
        header_style="bold",
    )
    table.add_column("candidate")
    headers = short_metrics(mc.metrics)
    for m in mc.metrics:
        table.add_column(Text(printable(headers[m])), justify="right")
    order = mc.ranked(sort_metric) if sort_metric else list(mc.candidates)
    names = dict(zip(mc.candidates, mc.names, strict=True))
    for cand in order:
        cells = [Text(printable(f"{names[cand]}\n{cand}"))]
        for m in mc.metrics:
            c = mc.cell(cand, m)
            if c is None:
                cells.append(Text("—"))
                continue
            verdict = c.verdict
            style = {"improved": "green", "regressed": "red"}.get(c.verdict, "")
            cells.append(
                Text(
                    f"{signed_pts(c.delta)}  p {p_value(c.p_adj)}\n"
                    f"{interval(c.ci_low, c.ci_high)}\n{printable(verdict)}",
                    style=style,
                )
            )
        table.add_row(*cells)
    Console(highlight=False).print(table)
    for w in mc.warnings:
        click.echo("! " + printable(w))
