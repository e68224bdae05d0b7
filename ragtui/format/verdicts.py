"""A comparison in words: verdict labels and reasons, method names, notes, the noise budget,
agreement, the gate, and the comparison table's cells (the CLI's and the report's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtui.core.verdict import (
    Clustered,
    ClusterFieldUnused,
    ErrorCounts,
    FewMoved,
    IdenticalMetric,
    IdenticalRuns,
    JudgeOnlyFloor,
    JudgesDisagree,
    LowAgreement,
    Method,
    NoReruns,
    NoRerunsLeft,
    Note,
    NotScored,
    RerunDrift,
    RerunErrors,
    RerunIdentical,
    RerunMean,
    RerunMissing,
    RerunRule,
    RunsDiffer,
    SameConfig,
    ScaleInfo,
    ScalesDiffer,
    SeedNote,
    SelfJudged,
    UnevenReruns,
    Unpaired,
    Verdict,
)
from ragtui.format.numbers import fixed, interval, p_value, pts, pts_apart, signed_pts
from ragtui.format.text import plural

if TYPE_CHECKING:
    from ragtui.core.agreement import Agreement
    from ragtui.core.analysis import MetricResult
    from ragtui.core.budget import NoiseBudget
    from ragtui.core.compare import JudgeVerdict
    from ragtui.core.gate import GateCheck, GateResult
    from ragtui.core.multi_compare import MultiComparison
    from ragtui.core.ppi import PPIEstimate

# ---------------------------------------------------------------- verdicts and methods
# (imported lazily by the core's to_json; plain strings for the CLI, the report and the TUI)

_METHODS = {
    Method.T: "paired t",
    Method.SIGN_FLIP: "sign-flip, mid-p",
    Method.SCORE: "Tango score / McNemar",
    Method.CLUSTER_SIGN_FLIP: "sign-flip by cluster",
    Method.CLUSTER_T: "cluster-robust t",
    Method.CLUSTER_SCORE: "score test by cluster",
    Method.NO_SPREAD: "exact bound (no spread)",
    Method.FEW_MOVED: "exact bound",
    Method.NONE: "—",
}


def _need(detect: int | None, no_change: int | None, band: str, beyond: bool = False) -> str:
    """The cases more data would take; said plainly when no figure can be had (all deltas
    equal: no spread to plan with; `beyond`: the change measured reaches the margin, so no
    number of cases would show no change), never as "need — cases"."""
    if detect is None and no_change is None:
        return "the cases needed cannot be estimated from these deltas"
    if no_change is None and beyond:
        return f"need ~{detect:,} cases to detect {band}; none can show no change at this Δ"
    if no_change is None:
        return f"need ~{detect:,} cases to detect {band}"
    if detect is None:
        return f"need ~{no_change:,} cases to show no change"
    return f"need ~{detect:,} cases to detect {band}, ~{no_change:,} to show no change"


def margin_pts(margin: float) -> str:
    return f"{margin * 100:g}"


# a verdict's short form where a table is narrow (its line or legend says it in full)
SHORT_VERDICTS = {"no meaningful change": "no change", "too few cases": "too few"}


def short_verdict(label: str) -> str:
    """ "no meaningful change" -> "no change", "too few cases" -> "too few"; others as they are
    ("improved (< margin)" -> "improved (< margin)")."""
    return SHORT_VERDICTS.get(label, label)


def verdict_label(m: MetricResult) -> str:
    """The verdict as a table shows it: "improved", "improved (< margin)", "too few cases"."""
    word = str(m.verdict)
    if m.verdict in (Verdict.IMPROVED, Verdict.REGRESSED) and m.below_margin:
        return f"{word} (< margin)"
    return word


def method_name(m: MetricResult) -> str:
    """The family the CI and p came from, named beside the CI."""
    name = _METHODS[m.method]
    if m.method is Method.CLUSTER_SIGN_FLIP:
        how = "exact" if m.exact else "10,000 random"
        return f"{name} ({m.units} clusters, {how})"
    if m.method is Method.SIGN_FLIP:
        return f"{name} ({'exact' if m.exact else '10,000 random'})"
    if m.method is Method.CLUSTER_T:
        return f"{name} ({m.units} clusters)"
    if m.method is Method.CLUSTER_SCORE:
        return f"{name} ({m.units} clusters, {m.moved} of {plural(m.n, 'case')} moved)"
    if m.method is Method.FEW_MOVED and m.few_moved is not None:
        few = m.few_moved
        units = plural(few.units, "cluster total" if few.clustered else "case")
        return f"{name}, {few.moved} of {units} moved, sign test"
    if m.method is Method.SCORE and m.moved is not None:  # not binary: cases that stayed put
        return f"score test, {m.moved} of {plural(m.n, 'case')} moved"
    return name


_SHORT_METHODS = {
    Method.T: "paired t",
    Method.SIGN_FLIP: "sign-flip",
    Method.SCORE: "score",
    Method.CLUSTER_SIGN_FLIP: "by cluster",
    Method.CLUSTER_T: "by cluster",
    Method.CLUSTER_SCORE: "by cluster",
    Method.NO_SPREAD: "no spread",
    Method.FEW_MOVED: "few moved",
    Method.NONE: "—",
}


def short_method(m: MetricResult) -> str:
    """The method in a table column; `method_name` gives the full name in the notes."""
    return _SHORT_METHODS[m.method]


def scale_text(scales: tuple[ScaleInfo, ...]) -> str:
    if not scales:
        return "nothing"
    parts = []
    for s in scales:
        span = f"{s.lo:g}–{s.hi:g}"
        parts.append(f"labels ({span})" if s.kind == "label" else f"numbers {span}")
    return " and ".join(parts)


def verdict_reason(m: MetricResult, margin: float, holm_over: str = "the metrics") -> str:
    """Why the verdict is what it is, with the cases needed where more would help.
    `holm_over` says which tests the adjusted p was adjusted over."""
    band = f"±{margin_pts(margin)} points"
    beyond = m.spread and m.delta is not None and abs(m.delta) >= margin
    need = _need(m.n_detect, m.n_no_change, band, beyond)
    v = m.verdict
    if v is Verdict.NOT_COMPARABLE:
        return (
            f"A scored it as {scale_text(m.scale_a)}, B as {scale_text(m.scale_b)}: "
            "no verdict across scales (declare one scale for both)"
        )
    if v is Verdict.NO_DATA:
        return "no case scored in both runs"
    if v is Verdict.TOO_FEW:
        if m.few_moved is not None:
            return (
                f"{few_moved_text(m.few_moved)}: with as many moves as these allow, each as far "
                f"as the scale allows, the 90% bound is {interval(m.ci90_low, m.ci90_high)}, "
                f"not inside {band}; more cases would tell"
            )
        if m.n and not m.spread and m.delta:
            # a shift of every case alike is what an offset or a rescaled metric gives, not
            # judges grading case by case; its CI is a bound on how many cases could differ
            head = (
                f"all {m.n} deltas are {signed_pts(m.delta)}: every case moved by exactly as "
                "much, as an offset or a rescaled metric does; no spread to test (check that "
                "A and B scored it alike)"
            )
        elif m.n and m.method is Method.NO_SPREAD and m.spread:
            head = (
                f"cases moved, but within each of the {m.units} clusters they cancel out (every "
                "cluster's total is 0): no spread between clusters to test"
            )
        elif m.n and not m.spread:
            head = (
                f"all {m.n} deltas are {signed_pts(m.delta)}: no spread to tell noise from "
                "change (a cached copy, or a change this metric does not see)"
            )
        elif m.method in (Method.CLUSTER_SIGN_FLIP, Method.CLUSTER_T, Method.CLUSTER_SCORE):
            head = f"{m.units} clusters: a test by cluster needs at least 6"
        elif m.method is Method.SIGN_FLIP:
            head = f"{m.n} cases: too few for a sign-flip test to decide anything"
        else:
            head = f"{m.n} cases: no test at α .05 can decide"
        if m.n_detect is None and m.n_no_change is None:
            return head
        return f"{head}; {need}"
    if v in (Verdict.IMPROVED, Verdict.REGRESSED):
        out = f"adjusted p {p_value(m.p_adj)} < .05 ({method_name(m)})"
        if m.below_margin:
            out += f", but the change is smaller than the {band} margin"
        return out
    if v is Verdict.NO_CHANGE:
        return f"TOST: 90% CI {interval(m.ci90_low, m.ci90_high)} inside {band}"
    if m.holm_lost:  # the CI shown is the test's own: it may well exclude 0, and the margin
        return (
            f"p {p_value(m.p)} alone (its 95% CI excludes 0), but adjusted p "
            f"{p_value(m.p_adj)} after Holm over {holm_over}: not significant among this "
            f"many tests; {need}"
        )
    return f"CI crosses {band}; {need}"


def few_moved_text(few: FewMoved) -> str:
    """ "only 3 of 48 cases moved, too few to test" (clusters: their totals, since cases may
    cancel out within one)."""
    units = plural(few.units, "cluster total" if few.clustered else "case")
    only = "" if few.moved == few.units else "only "
    return f"{only}{few.moved} of {units} moved, too few to test"


def errors_pair(m: MetricResult) -> str:
    """Bad grades A/B (errors and parse failures, each counted once): shown beside the means."""
    bad_a, bad_b = m.bad_grades()
    return f"{bad_a}/{bad_b}"


# ---------------------------------------------------------------- notes


def rule_text(n: RerunRule) -> str:
    state = "within it" if n.holds else "above it"
    out = (
        f"{n.metric}: reruns of {n.side} ({n.runs} runs, {plural(n.n, 'case')}) differ by "
        f"{n.rerun_delta * 100:.1f} points (rule of thumb: < {margin_pts(n.margin)}, {state})"
        f" · noise floor ±{n.noise_floor * 100:.1f}"
        f" · {n.runs} pure reruns at N={n.n} differ by up to {n.chance_range * 100:.1f} by chance"
    )
    if n.chance_range >= n.margin:
        out += " (so the rule fires by chance here)"
    if n.icc is not None:
        out += f" · ICC {fixed(n.icc, 2)}"
    return out + f" · {n.source} reruns"


def note_text(n: Note) -> str:
    """One sentence for any note of a comparison."""
    match n:
        case RunsDiffer(what=what, a=a, b=b, same_answers=same):
            if same:
                why = "the same answers graded twice, so each Δ is the judges' difference alone"
            elif what.startswith("judge"):
                why = "deltas mix judge and system changes"
            else:
                why = "the cases may not be the same questions"
            return f"{what} differs between A and B ({a or 'unknown'} → {b or 'unknown'}): {why}"
        case SelfJudged(side=side, generator=gen):
            return (
                f"run {side} is judged by its own generator ({gen}): self-judging inflates scores"
            )
        case NotScored(metric=metric, side=side):
            return f"{metric}: not scored in run {side}: no verdict for it"
        case ScalesDiffer(metric=metric, a=a, b=b):
            return (
                f"{metric}: A scored it as {scale_text(a)}, B as {scale_text(b)}: not comparable, "
                "no verdict (declare one scale with --scale or [metrics.NAME] scale)"
            )
        case SameConfig(others=others):
            rest = (
                f"; the config's {plural(others, 'other rerun')} on neither side" if others else ""
            )
            return (
                "A and B are reruns of one config: each side is its run alone, and their "
                f"difference is rerun noise (what `ragtui noise` measures){rest}"
            )
        case IdenticalRuns():
            return "B is identical to A on every score: a cached copy, not a new run"
        case IdenticalMetric(metric=metric, n=count):
            every = ("all " if count > 1 else "") + plural(count, "case")
            return (
                f"{metric}: B equals A on {every}: a cached grade, or a metric this change "
                "cannot move"
            )
        case RerunIdentical(side=side, run=run, twin=twin, metrics=()):
            return (
                f"rerun {run} of {side} is identical to {twin} on every score of the cases "
                "both graded: a cache hit or a judge that always answers alike, not a "
                "replicate (left out)"
            )
        case RerunIdentical(side=side, run=run, twin=twin, metrics=metrics):
            return (
                f"rerun {run} of {side} is identical to {twin} on {', '.join(metrics)}: a cache "
                "hit or a judge that always answers alike there (left out of those metrics' "
                "means and noise floors)"
            )
        case RerunDrift(metric=metric, side=side, run=run, reference=ref, shift=shift, p=p):
            return (
                f"{metric}: rerun {run} of {side} drifted from {ref} by {shift * 100:+.1f} "
                f"points (p {p:.2g}): a systematic change, not noise"
            )
        case RerunErrors(metric=metric, side=side, errors=errors, runs=runs):
            return (
                f"{metric}: {plural(errors, 'grade')} failed in {side}'s reruns ({', '.join(runs)}), not counted "
                f"in err {side}: those cases' {side} is the mean of the reruns that scored them"
            )
        case RerunMissing(metric=metric, side=side, missing=missing, runs=runs):
            return (
                f"{metric}: {plural(missing, 'compared case')} missing from {side}'s reruns "
                f"({', '.join(runs)}): those cases' {side} is the mean of the reruns that "
                "hold them"
            )
        case ErrorCounts() as e:
            counts = (
                f"{e.metric}: errors A {e.errors_a}, B {e.errors_b} · parse failures "
                f"A {e.parse_failures_a}, B {e.parse_failures_b}"
            )
            if e.differ:
                return f"{counts}: A and B differ, so part of the change may be the judge failing"
            return (
                f"{counts} (errors are counted, not averaged; a label metric's parse failures "
                "score 0, the others are errors)"
            )
        case Unpaired(metric=metric, only_a=oa, only_b=ob, n=count):
            return (
                f"{metric}: {plural(oa, 'case')} only in A, {ob} only in B; compared on the "
                f"{count} both scored"
            )
        case LowAgreement() as g:
            figures = [
                f"{k} {fixed(v, 2)}" for k, v in (("κ", g.kappa), ("ρ", g.rho)) if v is not None
            ]
            if g.constant:
                figures.append("one side gives every case the same grade")
            said = "".join(f"{f}; " for f in figures)
            return f"{g.metric}: low agreement, {g.between} ({said}{g.flipped} of {plural(g.n, 'case')} flipped)"
        case JudgesDisagree(metric=metric, verdicts=verdicts):
            said = "; ".join(f"{judge}: {v}" for judge, v in verdicts)
            return f"{metric}: the verdict depends on the judge ({said})"
        case RerunRule():
            return rule_text(n)
        case RerunMean(side=side, runs=runs):
            return f"{side}'s per-case values are the mean of its {runs} reruns"
        case UnevenReruns(side=side, runs=runs, single=single):
            return (
                f"{side} is the mean of {runs} reruns and {single} a single run: under no change "
                "the per-case changes lean one way, so false alarms split unevenly between "
                "improved and regressed (simulated: up to 1 in 21 one way and 1 in 125 the "
                f"other, where 1 in 40 each is meant); for a one-sided decision (gate), rerun "
                f"{single} as often"
            )
        case NoReruns(identical=0):
            return (
                "no reruns of A or B with the same config: noise floor unknown "
                "(run a noise rerun of A to measure it)"
            )
        case NoReruns(identical=twins):
            return (
                f"no reruns of A or B left: {plural(twins, 'rerun')} identical to an earlier run "
                f"{'was' if twins == 1 else 'were'} left out as cached copies, so the noise "
                "floor is unknown (if they were "
                "fresh judge calls, as a noise check makes, the judge answers alike every time "
                "and adds no noise)"
            )
        case NoRerunsLeft(metric=metric, identical=0):
            return f"{metric}: noise floor unknown: no case was scored in every rerun of A or B"
        case NoRerunsLeft(metric=metric, identical=twins):
            return (
                f"{metric}: noise floor unknown: no rerun of A or B is left on it "
                f"({plural(twins, 'rerun')} identical to an earlier run there, left out as "
                "cached copies)"
            )
        case JudgeOnlyFloor(side=side):
            return (
                f"the noise floor of {side} comes from judge-only reruns (same answers): it "
                "leaves out generation noise, so real reruns vary more"
            )
        case Clustered(clusters=k, cases=count, named=named, field=name, from_field=filled):
            parts = [f"{named} by their cluster field"] if named else []
            if filled:
                parts.append(f"{filled} by metadata field {name!r} ([compare] cluster)")
            alone = count - named - filled
            if alone:
                parts.append(f"{alone} on their own")
            return (
                f"{count} cases in {k} clusters ({', '.join(parts)}): tested by cluster (a "
                "cluster's total is one unit), since cases of one cluster are not independent"
            )
        case ClusterFieldUnused(field=name, own_clusters=own):
            then = "their own cluster fields are used" if own else "cases are taken as independent"
            return (
                f"cluster field {name!r} ([compare] cluster): no case of A or B has it in its "
                f"metadata, so {then} (check the field's name)"
            )
        case SeedNote(seed=seed, resamples=count, drawn=True):
            return (
                f"seed {seed} · {count:,} random sign-flips where cases or clusters are too "
                "many to enumerate"
            )
        case SeedNote(seed=seed):
            return f"seed {seed} (no test here drew at random: another seed gives the same)"
    return n.code


# Compare-many's tables (the TUI's and `compare BASE C1 C2 …`'s): why a cell's verdict can
# differ from the same pair's own comparison
HOLM_ACROSS_TABLE = (
    "p adj is Holm over every test of the table (a pair's own comparison adjusts over its "
    "metrics only, so a verdict near the line can differ there)"
)


def many_notes(m: MultiComparison) -> list[str]:
    """A several-candidates table's notes, each once, with the candidates it is about ("every
    candidate" when all): a note about the base's own reruns would otherwise repeat for each."""
    names = dict(zip(m.candidates, m.names, strict=True))
    by_text: dict[str, list[str]] = {}
    for candidate, text in m.notes:
        by_text.setdefault(text, []).append(candidate)
    out = []
    for text, who in by_text.items():
        who = list(dict.fromkeys(who))
        if len(who) == len(m.candidates) > 1:
            out.append(f"every candidate: {text}")
        else:
            out.append(f"{', '.join(names[c] for c in who)}: {text}")
    return out


def budget_text(b: NoiseBudget) -> str:
    """ "faithfulness: variance of the per-case Δ: case .62, generation .25, judge .13 · to reach
    MDE 5.0 pts (now 9.7): +140 cases, or judge ×3, or regenerate ×2"."""

    def share(part: float) -> str:
        return f"{min(1.0, part / b.var_delta):.2f}".removeprefix("0")

    parts = [f"case {share(b.var_case)}"]
    if b.gen_part is not None and b.judge_part is not None:
        parts += [f"generation {share(b.gen_part)}", f"judge {share(b.judge_part)}"]
    elif b.judge_part is not None:
        parts.append(f"judge {share(b.judge_part)}")
    elif b.rerun_part is not None:
        parts.append(f"reruns (generation + judge) {share(b.rerun_part)}")
    levers = [f"+{b.add_cases:,} cases" if b.add_cases is not None else "more cases"]
    if b.judge_times is not None:
        levers.append(f"judge ×{b.judge_times}")
    if b.regen_times is not None:
        levers.append(f"regenerate ×{b.regen_times}")
    notes = []
    if b.rerun_part is None:
        notes.append("rerun noise unknown (no reruns measured it)")
    elif b.var_judge is None:
        notes.append("judge share unknown (no judge-only reruns)")
    elif b.var_gen is None:
        notes.append("generation noise unknown (judge-only reruns: it is left out)")
    if b.judge_lever and b.judge_times is None:
        notes.append("judge repeats alone cannot reach it")
    if b.regen_lever and b.regen_times is None:
        notes.append("regenerating alone cannot reach it")
    goal = "reach" if b.target_mde < b.mde else "keep"
    return (
        f"{b.metric}: variance of the per-case Δ: {', '.join(parts)}"
        f" · to {goal} MDE {b.target_mde * 100:.1f} pts (now {b.mde * 100:.1f}): "
        + ", or ".join(levers)
        + (f" · {'; '.join(notes)}" if notes else "")
    )


def ppi_text(p: PPIEstimate) -> str:
    what = "change" if p.side == "B - A" else f"mean of {p.side}"
    if p.run:  # a side with reruns: the labels correct its first run, not the reruns' mean
        what += f" ({p.run})"
    fig = signed_pts if p.side == "B - A" else pts
    return (
        f"{p.metric}: {what} corrected by {p.labelled} human labels (prediction-powered): "
        f"{fig(p.estimate)} [{fig(p.ci_low)}, {fig(p.ci_high)}] beside the judge's {fig(p.judge)}"
    )


def judge_verdict_text(j: JudgeVerdict) -> str:
    return (
        f"{j.metric} under {j.judge}: {j.verdict} "
        f"{signed_pts(j.delta)} {interval(j.ci_low, j.ci_high)}"
    )


def agreement_text(g: Agreement) -> str:
    """κ (weighted or not), AC1 and raw agreement beside it, ρ, and the flips:
    "agreement m, A judge vs human, on 32 cases: weighted κ 0.81, AC1 0.86, same grade in 29,
    ρ 0.90; 3 flipped (…)"."""
    figures = []
    if g.kappa is not None:
        figures.append(f"{'weighted κ' if g.weighted else 'κ'} {fixed(g.kappa, 2)}")
    if g.ac1 is not None:
        figures.append(f"AC1 {fixed(g.ac1, 2)}")
    if g.raw is not None and g.cut is not None:  # continuous scores: pass/fail at the cut
        figures.append(f"same side of {g.cut * 100:g} in {round(g.raw * g.n)}")
    elif g.raw is not None:
        figures.append(f"same grade in {round(g.raw * g.n)}")
    if g.constant:
        figures.append("one side gives every case the same grade (no ranking to compare)")
    if g.rho is not None:
        figures.append(f"ρ {fixed(g.rho, 2)}")
    flips = ", ".join(g.flipped[:8]) + (", …" if len(g.flipped) > 8 else "")
    return (
        f"agreement {g.metric}, {g.between}, on {g.n} cases: {', '.join(figures) or 'no figures'}; "
        f"{len(g.flipped)} flipped"
        + (f" ({flips})" if flips else "")
        + (" — LOW" if g.flagged else "")
    )


# ---------------------------------------------------------------- gate


def gate_metric_line(m: MetricResult, margin: float) -> str:
    reason, method = verdict_reason(m, margin), method_name(m)
    # the test named once, as on screen (a few moves: the reason says what was done)
    said = method in reason or (m.few_moved is not None and few_moved_text(m.few_moved) in reason)
    named = "" if said else f" ({method})"
    return (
        f"{m.metric}: {signed_pts(m.delta)} points, 95% CI {interval(m.ci_low, m.ci_high)}"
        f"{named}, {verdict_label(m)} — {reason}"
    )


def gate_check_text(ch: GateCheck, margin: float) -> str:
    """One gate check: "ok   ", "FAIL " or "???  " and why."""
    band = margin_pts(margin)
    tag = {"passed": "ok   ", "failed": "FAIL ", "undecided": "???  "}[ch.outcome]
    need = (
        f"need ~{ch.n_needed:,} cases to show non-inferiority"
        if ch.n_needed is not None
        else "the cases non-inferiority needs cannot be estimated from these deltas"
    )
    mean = pts(ch.value)
    near = ch.value is not None and ch.threshold is not None and mean == pts(ch.threshold)
    if ch.code == "below_floor" and near:
        mean = pts_apart(ch.value, ch.threshold)  # type: ignore[arg-type]  # 79.96, not 80.0
    texts = {
        "non_inferior": f"shown non-inferior: 95% CI lower bound {signed_pts(ch.value)} > -{band}",
        "regressed": f"regressed by {pts(abs(ch.value or 0.0))} points (significant after Holm)",
        "not_in_candidate": (
            "the base scored it and the candidate did not (a dropped or renamed metric): no "
            "verdict, so no pass (-m names the metrics to gate)"
        ),
        "not_comparable": "A and B scored it on different scales: no verdict, so no pass",
        "no_scores": "the candidate has no usable score (every case errored or failed to parse)",
        "too_few_shared": (
            f"only {plural(round(ch.value), 'case')} shared by both runs (the gate needs "
            f"{ch.threshold:.0f})"
            if ch.value is not None and ch.threshold is not None
            else "too few shared cases"
        ),
        "more_errors": (
            f"the candidate has more errors and parse failures ({ch.value:.0f}) than the base "
            f"({ch.threshold:.0f})"
            if ch.value is not None and ch.threshold is not None
            else "more errors than the base"
        ),
        "few_moved": (
            f"cannot tell: {few_moved_text(ch.few_moved)}; the exact 95% CI lower bound is "
            f"{signed_pts(ch.value)}, not above -{band}"
            if ch.few_moved is not None
            else f"cannot tell: the exact 95% CI lower bound is {signed_pts(ch.value)}"
        ),
        "too_close": (
            f"too close to call: the 95% CI lower bound is above -{band} by random sign-flips, "
            f"but their p there ({p_value(ch.value)}) is within its own sampling error of .05, "
            "so another --seed could land below; more cases or clusters decide it"
        ),
        "undecided": (
            f"cannot tell: 95% CI lower bound {signed_pts(ch.value)} is not above -{band}"
            f" and no significant regression; {need}"
        ),
        "undecided_no_change": (
            f"cannot tell: 95% CI lower bound {signed_pts(ch.value)} is not above -{band}, "
            "though compare calls it no meaningful change (its 90% CI, 5% a side, fits the "
            f"margin; the gate asks 97.5% on the downside); {need}"
        ),
        "floor_held": f"mean {mean} ≥ floor {pts(ch.threshold)}",
        "below_floor": f"candidate mean {mean} is below the floor {pts(ch.threshold)}",
        "no_floor_scores": (
            f"no candidate mean to hold the floor {pts(ch.threshold)}: no case both runs "
            "scored has a score of it in the candidate"
        ),
        "nothing_compared": "no metric in common between the runs: nothing to pass",
        "new_failures": (
            "1 case passed in every baseline run and fails in the candidate (listed below)"
            if ch.value == 1
            else f"{ch.value or 0:.0f} cases passed in every baseline run and fail in the "
            "candidate (listed below)"
        ),
        "no_new_failures": "no case that passed in every baseline run fails in the candidate",
    }
    return f"{tag}{ch.metric}: {texts[ch.code]}"


def gate_summary(result: GateResult, undecided_passes: bool = False) -> str:
    failed = [ch for ch in result.checks if ch.outcome == "failed"]
    if result.outcome == "failed":
        return f"gate: failed ({len(failed)} reason{'s' if len(failed) > 1 else ''})"
    if result.outcome == "undecided":
        verdict = "passes (--undecided-passes)" if undecided_passes else "exit 3"
        return f"gate: undecided — the data cannot tell yet; {verdict}"
    return "gate: passed (the candidate is shown non-inferior on every metric, every floor holds)"


# ---------------------------------------------------------------- comparison tables
# (the CLI's table and the Markdown report's: one set of columns and cells)

COMPARE_COLUMNS = (
    "metric",
    "N",
    "A",
    "B",
    "err A/B",
    "Δ pts",
    "95% CI",
    "method",
    "p adj",
    "noise ±",
    "MDE",
    "verdict",
)


def metric_cells(m: MetricResult, *, full_method: bool = False) -> tuple[str, ...]:
    """One metric's row under COMPARE_COLUMNS; `full_method` names the method in full (with
    its clusters and resamples) where there is room for it."""
    return (
        m.metric,
        str(m.n),
        pts(m.mean_a),
        pts(m.mean_b),
        errors_pair(m),
        signed_pts(m.delta),
        interval(m.ci_low, m.ci_high),
        method_name(m) if full_method else short_method(m),
        p_value(m.p_adj),
        pts(m.noise_floor),
        pts(m.mde),
        verdict_label(m),
    )


def metric_details(m: MetricResult) -> list[str]:
    """What a metric's row cannot hold: McNemar's counts, the worst 10% of cases."""
    out = []
    if m.fixed is not None:
        out.append(
            f"{m.metric}: B fixed {m.fixed} cases, broke {m.broke} "
            f"(McNemar p {p_value(m.p)}, the verdict's own test)"
        )
    if m.bottom_a is not None or m.bottom_b is not None:
        out.append(
            f"{m.metric}: worst 10% of the {m.n} cases both scored average {pts(m.bottom_a)} "
            f"in A, {pts(m.bottom_b)} in B"
        )
    return out
