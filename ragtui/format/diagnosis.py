"""The diagnosis in words: stages, retrieval and claim changes, case classes, costs."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from ragtui.format.numbers import pts, pts_apart, short_pts, signed_pts, significant
from ragtui.format.text import one_line, plural, printable

# ---------------------------------------------------------------- diagnosis

_BASIS = {
    "recall fell": "context recall fell",
    "supporting chunk gone": "a claim lost its support and its chunk left the retrieval",
    "precision fell, faithfulness held": "context precision fell while faithfulness held",
    "new unsupported claims, recall held": "new unsupported claims while context recall held",
    "new unsupported claims, chunks kept": "new unsupported claims while A's supporting chunks "
    "are still retrieved",
    "faithfulness fell, recall held": "faithfulness fell while context recall held",
    "faithfulness fell, chunks kept": "faithfulness fell while A's supporting chunks are still "
    "retrieved",
    "recall fell, same chunks": "context recall fell on the same chunks: the judge graded "
    "them differently",
    "precision fell, same chunks": "context precision fell on the same chunks: the judge graded "
    "them differently",
    "no chunks in B": "B retrieved no chunks where A retrieved some",
    "new unsupported claims, same chunks": "new unsupported claims while the chunks are unchanged",
    "faithfulness fell, same chunks": "faithfulness fell while the chunks are unchanged",
    "no rule fits": "no rule fits the metrics that moved",
    "same answers and chunks": "the same answers and chunks in A and B: only the grades changed",
}


def attribution_line(
    metric: str,
    delta: float | None,
    n_fell: int,
    by_stage: dict[str, int],
    same_output: bool = False,
) -> str:
    """ "faithfulness -6.2 pts: 14 cases fell — 9 generation, 4 retrieval, 1 unattributed".
    `same_output`: A and B gave the same answers and chunks (a re-judge), so no stage did it."""
    head = f"{printable(metric)} {signed_pts(delta)} pts"
    if n_fell == 0:
        return f"{head}: no case fell beyond noise"
    if same_output:
        return (
            f"{head}: {plural(n_fell, 'case')} fell — by the judge alone (same answers and chunks)"
        )
    parts = [f"{n} {stage}" for stage, n in by_stage.items() if n]
    return f"{head}: {plural(n_fell, 'case')} fell — " + ", ".join(parts)


def noise_rule_line(a_runs: int, min_drop: float, b_runs: int = 1) -> str:
    """How "fell" was judged. B's value is the mean of its reruns (as compare shows it); A's
    reruns, when there are several, measure the per-case noise that B must fall below."""
    b = f"B (the mean of its {b_runs} reruns)" if b_runs >= 2 else "B"
    if a_runs >= 2:
        return (
            f"a case fell when {b} is below every one of A's {a_runs} reruns (their per-case noise)"
        )
    head = "it dropped" if b_runs < 2 else f"{b} dropped"
    return (
        f"a case fell when {head} by at least {min_drop * 100:g} points "
        "(A has no reruns to measure per-case noise; set it with --min-drop)"
    )


def metric_noise_rule_text(metric: str, used: int, identical: int, min_drop: float) -> str | None:
    """How "fell" was judged on one metric, where it differs from the run's rule because A's
    reruns were left out of it as identical (a cache hit): "context_recall: a case fell when it
    dropped by at least 10 points (A's reruns are identical on it: no per-case noise to
    measure)". None where the run's rule holds."""
    if not identical:
        return None
    if used >= 2:
        return (
            f"{printable(metric)}: a case fell when B is below every one of the {used} of A's "
            f"reruns that differ on it ({plural(identical, 'identical rerun')} left out)"
        )
    return (
        f"{printable(metric)}: a case fell when it dropped by at least {min_drop * 100:g} points "
        "(A's reruns are identical on it: no per-case noise to measure)"
    )


def rerun_values_text(a_runs: Iterable[float], b_runs: Iterable[float]) -> str:
    """ " · A's reruns 100 / 80 · B's reruns 100 / 0": the values each side's mean is of
    (empty when neither side has reruns)."""
    out = ""
    for side, values in (("A", list(a_runs)), ("B", list(b_runs))):
        if len(values) > 1:
            out += f" · {side}'s reruns " + " / ".join(short_pts(v) for v in values)
    return out


def _and(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


_ROLE_WORDS = {
    "context_recall": "context recall",
    "context_precision": "context precision",
    "faithfulness": "faithfulness",
    "answer_relevance": "answer relevance",
}


def _off_intent(basis: str, held: tuple[str, ...]) -> str:
    """What held beside a fall of answer relevance, and only that: "answer relevance fell
    while faithfulness held", "... while context recall held and the chunks are unchanged"."""
    parts = []
    if held:
        parts.append(_and([_ROLE_WORDS.get(r, r) for r in held]) + " held")
    if basis == "relevance fell, same chunks":
        parts.append("the chunks are unchanged")
    return "answer relevance fell" + (" while " + " and ".join(parts) if parts else "")


def _ungraded_text(u: Any) -> str:
    """ "context_recall's grade failed in B for this case" (a metric the role has, whose
    grade of this one case is missing on a side)."""
    name = printable(u.metric)
    if u.failed:
        return f"{name}'s grade failed in {u.side} for this case"
    return f"{name} has no grade in {u.side} for this case"


def metric_gap_text(
    metric: str, a: float | None, b: float | None, error_a: str | None, error_b: str | None
) -> str:
    """A metric one case was not compared on, the side that failed named: "faithfulness
    error in A (judge timeout) → 0 · not compared"."""

    def side(name: str, value: float | None, error: str | None) -> str:
        if error is not None:
            return f"error in {name} ({one_line(error)})"
        return short_pts(value) if value is not None else f"no grade in {name}"

    return f"{printable(metric)}  {side('A', a, error_a)} → {side('B', b, error_b)} · not compared"


def cause_text(
    cause: str,
    stage: str,
    basis: str,
    missing: tuple[str, ...] = (),
    ungraded: tuple[Any, ...] = (),
    held: tuple[str, ...] = (),
) -> str:
    """ "generation: hallucination (new unsupported claims while context recall held)".
    `ungraded`: core.attribution.Ungraded, a role's metric whose grade of this case failed."""
    if cause == "unattributed":
        said = [_ungraded_text(u) for u in ungraded]
        if missing:
            said.append(f"needs {', '.join(missing)} (or name the metric with --role ROLE=METRIC)")
        if said:
            return "unattributed: " + "; ".join(said)
        return f"unattributed: {_BASIS.get(basis, basis)}"
    if cause == "off-intent":
        return f"{stage}: {cause} ({_off_intent(basis, held)})"
    return f"{stage}: {cause} ({_BASIS.get(basis, basis)})"


def attribution_text(at: Any) -> str:
    """A case attribution (core.diagnosis.CaseAttribution) in words, as `cause_text`."""
    return cause_text(at.cause, at.stage, at.basis, at.missing, at.ungraded, at.held)


def one_sided_retrieval(only_a: int, only_b: int) -> str:
    """ " · B retrieved nothing in 1 case (A did)": cases the per-chunk figures leave out."""
    out = ""
    if only_a:
        out += f" · B retrieved nothing in {plural(only_a, 'case')} (A did)"
    if only_b:
        out += f" · A retrieved nothing in {plural(only_b, 'case')} (B did)"
    return out


def retrieval_line(
    n_cases: int,
    mean_overlap: float | None,
    top_changed: int,
    added: int,
    removed: int,
    moved: int,
    unchanged: int,
    only_a: int = 0,
    only_b: int = 0,
) -> str:
    if n_cases == 0:
        return "retrieval: no case has chunks in both runs" + one_sided_retrieval(only_a, only_b)
    return (
        f"retrieval ({plural(n_cases, 'case')}): mean top-k overlap {pts(mean_overlap)} pts · "
        f"top chunk changed in {top_changed} · chunks added in {added}, removed in {removed}, "
        f"moved in {moved} · unchanged in {unchanged}" + one_sided_retrieval(only_a, only_b)
    )


def claims_line(
    n_cases: int,
    lost: int,
    lost_gone: int,
    fixed: int,
    new: int,
    new_unsupported: int,
    dropped: int,
) -> str:
    if n_cases == 0:
        return "claims: neither run has faithfulness claims"
    return (
        f"claims ({plural(n_cases, 'case')}): {lost} lost support ({lost_gone} with their "
        f"chunk gone) · {fixed} fixed · {new} new ({new_unsupported} unsupported) · "
        f"{dropped} dropped"
    )


def classes_line(metric: str, counts: dict[str, int]) -> str:
    """ "faithfulness: 6 newly broken · 2 flaky · 31 stable pass" (empty classes left out)."""
    parts = [f"{n} {klass}" for klass, n in counts.items() if n]
    return f"{printable(metric)}: " + (" · ".join(parts) or "no case")


_COST_UNITS = {
    "latency_ms": "ms",
    "prompt_tokens": "prompt tokens",
    "completion_tokens": "completion tokens",
    "total_tokens": "tokens",
    "cost": "cost",
    "judge_cost": "judge cost",
}


def cost_figure(field: str, value: float | None) -> str:
    """Latency in whole ms, tokens with one decimal, costs with four significant digits."""
    if value is None:
        return "—"
    if field == "latency_ms":
        return f"{value:,.0f} ms"
    if field.endswith("tokens"):
        return f"{value:,.1f}"
    return significant(value, 4)


def cost_line(
    field: str,
    mean_a: float | None,
    mean_b: float | None,
    ratio: float | None,
    n_a: int | None = None,
    n_b: int | None = None,
    n_cases: int | None = None,
) -> str:
    """ "latency: mean 1,144 ms → 652 ms (×0.57)"; when a side carries the figure on fewer
    than the `n_cases` compared, " · over 8 → 10 of 10 cases" (its mean is over those)."""
    name = {"latency_ms": "latency"}.get(field, _COST_UNITS.get(field, field))
    text = f"{name}: mean {cost_figure(field, mean_a)} → {cost_figure(field, mean_b)}"
    text += "" if ratio is None else f" (×{ratio:.2f})"
    if n_cases is not None and (n_a, n_b) != (n_cases, n_cases):
        text += f" · over {n_a} → {n_b} of {plural(n_cases, 'case')}"
    return text


def chunk_mark(mark: str, move: int | None) -> str:
    """The mark beside a chunk: = kept, + added, - removed, ↑2 / ↓1 moved up / down."""
    if mark == "moved" and move:
        return f"↑{move}" if move > 0 else f"↓{-move}"
    return {"kept": "=", "added": "+", "removed": "-"}.get(mark, "?")


def word_diff(segments: Iterable[tuple[str, str]]) -> str:
    """Answer diff for plain text: removed words as [-…-], added as {+…+} (git's word diff)."""
    out = []
    for kind, text in segments:
        shown = printable(text)
        out.append({"added": f"{{+{shown}+}}", "removed": f"[-{shown}-]"}.get(kind, shown))
    return "".join(out)


def new_failure_line(
    case_id: str,
    metric: str,
    baseline: Iterable[float | None],
    value: float | None,
    threshold: float,
) -> str:
    """For `gate --no-new-failures`: "refund-07 faithfulness: passed in every baseline run
    (100, 100), fails in the candidate (0; pass ≥ 50)"."""
    before = ", ".join(short_pts(v) for v in baseline)
    return (
        f"{printable(case_id)} {printable(metric)}: passed in every baseline run ({before}), "
        f"fails in the candidate ({pts_apart(value, threshold)}; pass ≥ {short_pts(threshold)})"
    )


# ---------------------------------------------------------------- diagnosis on screen


def retrieval_summary(
    n_cases: int, mean_overlap: float | None, top_changed: int, only_a: int = 0, only_b: int = 0
) -> str:
    """ "retrieval: mean top-k overlap 93.8 pts · top chunk changed in 2 of 8 cases"."""
    if n_cases == 0:
        return "retrieval: no case has chunks in both runs" + one_sided_retrieval(only_a, only_b)
    return (
        f"retrieval: mean top-k overlap {pts(mean_overlap)} pts · top chunk changed in "
        f"{top_changed} of {plural(n_cases, 'case')}" + one_sided_retrieval(only_a, only_b)
    )


def claims_summary(lost: int, lost_gone: int, fixed: int, new: int, new_unsupported: int) -> str:
    """ "claims: 1 became unsupported (1 with its chunk gone) · 1 fixed · 1 new (1 unsupported)"."""
    return (
        f"claims: {lost} became unsupported ({lost_gone} with the chunk gone) · {fixed} fixed"
        f" · {new} new ({new_unsupported} unsupported)"
    )


def case_retrieval_text(
    added: int, removed: int, moved: int, kept: int, k: int, overlap: float | None, top: bool | None
) -> str:
    """One case: "retrieval: 1 added · 1 removed · 2 moved · 0 kept · top-3 overlap 50 pts ·
    top chunk changed"."""
    out = f"retrieval: {added} added · {removed} removed · {moved} moved · {kept} kept"
    if overlap is not None:
        out += f" · top-{k} overlap {short_pts(overlap)} pts"
    if top is not None:
        out += " · top chunk changed" if top else " · same top chunk"
    return out


CLAIM_CHANGE_WORDS = {
    "lost support": "became unsupported",
    "fixed": "fixed",
    "weakened": "weakened",
    "strengthened": "strengthened",
    "new": "new",
    "dropped": "dropped",
    "same": "same",
}


def chunk_fate_text(left: tuple[str, ...], kept: tuple[str, ...]) -> str:
    """What became of the chunks a claim that lost its support cited in A, each named: "its
    chunk d1 left B's retrieval, d2 is still retrieved" (the CLI and the Case screen)."""
    ids = lambda xs: ", ".join(printable(x) for x in xs)  # noqa: E731
    parts = []
    if left:
        parts.append(f"{ids(left)} left B's retrieval")
    if kept:
        parts.append(f"{ids(kept)} {'is' if len(kept) == 1 else 'are'} still retrieved")
    if not parts:
        return "A cited no chunk B's diff knows"
    noun = "its chunk" if len(left) + len(kept) == 1 else "its chunks"
    return f"{noun} " + ", ".join(parts)


def claim_change_detail(
    change: str,
    verdict_a: str | None,
    verdict_b: str | None,
    chunks_left: tuple[str, ...] = (),
    chunks_kept: tuple[str, ...] = (),
) -> str:
    """What happened to one claim, after its text: "SUPPORTED → UNSUPPORTED · its chunk C1
    left B's retrieval"; "new in B, UNSUPPORTED"."""
    if change == "new":
        return f"new in B, {verdict_b or 'no verdict'}"
    if change == "dropped":
        return f"only in A ({verdict_a or 'no verdict'})"
    out = f"{verdict_a or '?'} → {verdict_b or '?'}"
    if change == "lost support":
        out += " · " + chunk_fate_text(chunks_left, chunks_kept)
    return out


def case_class_text(
    klass: str, baseline: Iterable[float | None], value: float | None, threshold: float
) -> str:
    """ "newly broken · baseline runs 100 100 · candidate 0 · pass ≥ 50"."""
    before = " ".join(short_pts(v) for v in baseline) or "none"
    shown, bar = pts_apart(value, threshold), short_pts(threshold)
    return f"{klass} · baseline runs {before} · candidate {shown} · pass ≥ {bar}"


def pass_rule(thresholds: dict[str, float]) -> str:
    """The pass rule the case classes used: "faithfulness ≥ 72 (--pass), other metrics: the
    source's threshold, else ≥ 50"."""
    rest = "the source's threshold, else ≥ 50"
    if not thresholds:
        return rest
    given = ", ".join(f"{printable(m)} ≥ {v * 100:g}" for m, v in thresholds.items())
    return f"{given} (--pass), other metrics: {rest}"


def history_header(run: str, base: str | None, n_baseline: int, n_own: int) -> str:
    """The head of `ragtui history`: what the run was classified against, and its own
    config's runs (which decide flaky): "b2 against every earlier run of another config of
    its dataset (3 runs) · its own config: 2 runs"."""
    against = (
        f"the runs of {base}'s config"
        if base
        else "every earlier run of another config of its dataset"
    )
    own = f" · its own config: {plural(n_own, 'run')}" if n_own > 1 else ""
    return printable(f"{run} against {against} ({plural(n_baseline, 'run')}){own}")


def class_filter_caption(klass: str | None, count: int | None = None) -> str:
    if klass is None:
        return "every class"
    return klass if count is None else f"{klass} ({count})"


def diagnosis_summary_lines(d: Any, worst: int = 10, *, said: Collection[str] = ()) -> list[str]:
    """A diagnosis as `ragtui diagnose` prints it and the Markdown report lists it (untrusted
    text already made printable). `said`: warnings said elsewhere already (the report lists the
    comparison's once, in its own section); the diagnosis's own still come here."""
    out: list[str] = []
    echo = out.append
    reruns = f", {len(d.a_runs)} reruns" if len(d.a_runs) > 1 else ""
    b_reruns = f", {len(d.b_runs)} reruns" if len(d.b_runs) > 1 else ""
    echo(
        printable(f"A {d.a_name} ({d.a}{reruns})  vs  B {d.b_name} ({d.b}{b_reruns})")
        + f" · {plural(d.n_cases, 'paired case')}"
    )
    echo(noise_rule_line(len(d.a_runs), d.min_drop, len(d.b_runs)))
    echo("")
    echo("stages")
    for m in d.metrics:
        echo("  " + attribution_line(m.metric, m.delta, len(m.cases), m.by_stage(), d.same_output))
        causes = [f"{n} {cause}" for cause, n in m.by_cause().items() if n]
        if causes:
            echo("    " + ", ".join(causes))
        rule = metric_noise_rule_text(m.metric, m.a_reruns_used, m.a_reruns_identical, d.min_drop)
        if rule:
            echo("    " + rule)
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
            r.only_a,
            r.only_b,
        )
    )
    echo(f"answers changed in {d.answers_changed} of {plural(d.n_cases, 'case')}")
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
    echo(f"case classes (B against the runs of A's config; pass: {pass_rule(d.thresholds)})")
    for metric, counts in d.classes.items():
        echo("  " + classes_line(metric, dict(counts)))
    if d.costs:
        echo("")
        echo(f"cost and latency (A → B, over the {plural(d.n_cases, 'paired case')})")
        for cd in d.costs:
            echo(
                "  "
                + cost_line(cd.field, cd.mean_a, cd.mean_b, cd.ratio, cd.n_a, cd.n_b, d.n_cases)
            )
    rows = d.worst(worst)
    if rows:
        echo("")
        echo(f"worst cases ({len(rows)})")
        for w in rows:
            echo(
                "  "
                + printable(f"{w.case_id}  {w.metric}")
                + f"  {short_pts(w.a)} → {short_pts(w.b)} ({signed_pts(w.delta)})  "
                + attribution_text(w)
            )
    for w in d.warnings:
        if w not in said:
            echo("! " + printable(w))
    return out
