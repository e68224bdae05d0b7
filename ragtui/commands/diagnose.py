"""`ragtui diagnose` and `ragtui history`: thin shells over the diagnosis modules of core
(attribution, retrieval/answer/claim diffs, case classes, costs). Several candidates against
one base is `ragtui compare BASE C1 C2 ...` (commands/compare.py).

Figures are fractions in --json; everything typed and shown is in points (x 100). Every string
from a run file goes through `printable`; JSON is strict (no NaN) and carries the folder's
notices and skipped files.
"""

from __future__ import annotations

from typing import Any

import click

from ragtui.commands.common import (
    emit_json,
    folder_option,
    json_option,
    margin_option,
    metric_option,
    open_ws,
    pass_option,
    pick_folder,
    point_pairs,
    points,
    seed_option,
)
from ragtui.format import (
    attribution_text,
    chunk_fate_text,
    chunk_mark,
    classes_line,
    diagnosis_summary_lines,
    history_header,
    metric_gap_text,
    pass_rule,
    printable,
    pts,
    rerun_values_text,
    short_pts,
    signed_pts,
    word_diff,
)

EXCERPT = 90
_path_argument = click.argument("path", required=False, type=click.Path(file_okay=False))


def _roles(specs: tuple[str, ...]) -> dict[str, str]:
    """ROLE=METRIC pairs (--role)."""
    out: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise click.BadParameter(f"{spec!r}: expected ROLE=METRIC", param_hint="--role")
        out[key.strip()] = value.strip()
    return out


def _excerpt(text: str | None, limit: int = EXCERPT) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---------------------------------------------------------------- diagnose


@click.command("diagnose")
@click.argument("a")
@click.argument("b")
@_path_argument
@folder_option
@metric_option
@click.option("--case", "case_id", help="Diagnose one case in full: chunks, answer, claims.")
@click.option(
    "--min-drop",
    type=click.FloatRange(0, 100, min_open=True),
    default=10.0,
    show_default=True,
    metavar="POINTS",
    help="When A has no reruns: the drop that counts as a fall, in points.",
)
@click.option(
    "--role",
    "roles",
    multiple=True,
    metavar="ROLE=METRIC",
    help="Name the metric of a stage role: faithfulness, context_recall, context_precision, "
    "answer_relevance (repeatable).",
)
@pass_option
@click.option(
    "--worst", type=click.IntRange(min=0), default=10, show_default=True, help="Worst cases listed."
)
@margin_option
@seed_option
@json_option
def diagnose_command(
    a: str,
    b: str,
    path: str | None,
    path_option: str | None,
    metrics: tuple[str, ...],
    case_id: str | None,
    min_drop: float,
    roles: tuple[str, ...],
    passes: tuple[str, ...],
    worst: int,
    margin: float | None,
    seed: int,
    as_json: bool,
) -> None:
    """Why did B get worse than A? Which stage broke per case, what changed in the retrieval,
    which claims flipped, which cases are newly broken, and cost and latency beside quality."""
    from ragtui.core.diagnosis import diagnose, diagnose_case

    role_map = _roles(roles)
    thresholds = point_pairs(passes, "--pass")
    with open_ws(pick_folder(path, path_option)) as workspace:
        common = dict(
            margin=workspace.config.margin if margin is None else points(margin),
            seed=seed,
            min_drop=min_drop / 100,
            roles=role_map,
            thresholds=thresholds,
            cluster_field=workspace.config.cluster_field,
        )
        if case_id is not None:
            one = diagnose_case(workspace.store, a, b, case_id, **common)
            if as_json:
                emit_json(one.to_json(), workspace)
            else:
                _print_case(one)
            return
        d = diagnose(workspace.store, a, b, metrics=list(metrics) or None, **common)
        if as_json:
            emit_json(d.to_json(worst), workspace)
            return
    _print_diagnosis(d, worst)


def _print_diagnosis(d: Any, worst: int) -> None:
    for line in diagnosis_summary_lines(d, worst):
        click.echo(line)


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
            + rerun_values_text(m.a_runs, m.b_runs)
        )
    for g in one.gaps:
        echo("  " + metric_gap_text(g.metric, g.a, g.b, g.error_a, g.error_b))
    for at in one.attributions:
        echo(printable(f"stage for {at.metric}: ") + attribution_text(at))
    r = one.retrieval
    echo("")
    overlap = "—" if r.overlap is None else f"{pts(r.overlap)} pts"
    echo(f"chunks (matched by {r.matched_by}; top-{r.k} overlap {overlap})")
    for ch in r.chunks:
        ranks = f"A#{ch.rank_a or '-'} B#{ch.rank_b or '-'}"
        echo(
            f"  {chunk_mark(ch.mark, ch.move):<3}{ranks:<10}"
            + printable(f"{ch.id_b or ch.id_a or ''}  {ch.source or ''}  ")
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
            gone = "; " + chunk_fate_text(ch.chunks_left, ch.chunks_kept)
        echo(f"  {ch.change:<13} {printable(verdicts)}{gone}  " + _excerpt(text, 80))
    for k in one.classes:
        echo(printable(f"class {k.metric}: ") + k.klass)


# ---------------------------------------------------------------- history


_MARK = {True: "✓", False: "✗", None: "!"}


@click.command("history")
@click.argument("run")
@_path_argument
@folder_option
@click.option("--base", help="Classify against this run's config (its reruns), not the history.")
@metric_option
@click.option("--class", "klass", help="List only this class (e.g. 'newly broken', flaky).")
@pass_option
@json_option
def history_command(
    run: str,
    path: str | None,
    path_option: str | None,
    base: str | None,
    metrics: tuple[str, ...],
    klass: str | None,
    passes: tuple[str, ...],
    as_json: bool,
) -> None:
    """Case classes of RUN over its history: newly broken, newly fixed, flaky, stable pass/fail.

    Without --base the history is every earlier run of RUN's dataset under another config;
    with --base it is the base run and its reruns. RUN's own reruns always count: a case they disagree on is flaky. A case passes when its value reaches the metric's threshold."""
    from ragtui.core.case_history import CLASSES, case_classes

    if klass is not None and klass not in CLASSES:
        raise click.BadParameter(
            f"{klass!r}: expected one of {', '.join(CLASSES)}", param_hint="--class"
        )
    thresholds = point_pairs(passes, "--pass")
    with open_ws(pick_folder(path, path_option)) as workspace:
        h = case_classes(
            workspace.store, run, base=base, metrics=list(metrics) or None, thresholds=thresholds
        )
        if as_json:
            emit_json(h.to_json(klass), workspace)
            return
    click.echo(history_header(h.run, h.base, len(h.baseline_runs), len(h.candidate_runs)))
    click.echo(f"pass: {pass_rule(thresholds)}")  # the words `diagnose` uses
    for metric, counts in h.counts().items():
        click.echo("  " + classes_line(metric, counts))
    shown = h.of_class(klass) if klass else [c for c in h.cases if c.klass != "stable pass"]
    if not klass:
        hidden = len(h.cases) - len(shown)
        click.echo(f"cases ({hidden} stable pass not listed; --class 'stable pass' lists them)")
    click.echo(
        "marks: the baseline runs, oldest first → the candidate, then its reruns outside the "
        "baseline (✓ pass, ✗ fail, ! error)"
    )
    width_id = max((len(printable(c.case_id)) for c in shown), default=0)
    width_m = max((len(printable(c.metric)) for c in shown), default=0)
    for c in shown:
        marks = "".join(_MARK[o.passed] for o in c.history if o.baseline)
        rerun_marks = "".join(
            _MARK[o.passed]
            for o in c.history
            if o.run_id in h.candidate_runs and not o.baseline and o.run_id != h.run
        )
        marks = f"{marks or '—'} → {_MARK[c.candidate.passed]}{rerun_marks}"
        click.echo(
            f"  {printable(c.case_id):<{width_id}}  {printable(c.metric):<{width_m}}  "
            f"{c.klass:<16} {short_pts(c.candidate.value):>5}  {marks}"
        )
    for note in h.notes:
        click.echo("! " + printable(note))
