"""One formatting for the CLI, the Markdown report and the TUI (plain strings: no rich here).

Figures are fractions in the core and in --json; every text shows points (x 100), never percent.
Untrusted text (anything from a run file, a file name or a judge server) goes through
`printable()` before it reaches any output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragtui.core.verdict import (
    Clustered,
    ErrorCounts,
    IdenticalMetric,
    IdenticalRuns,
    JudgeOnlyFloor,
    JudgesDisagree,
    LowAgreement,
    Method,
    NoReruns,
    Note,
    NotScored,
    RerunDrift,
    RerunIdentical,
    RerunMean,
    RerunRule,
    RunsDiffer,
    ScaleInfo,
    ScalesDiffer,
    SeedNote,
    SelfJudged,
    Unpaired,
    Verdict,
)

if TYPE_CHECKING:
    from ragtui.core.agreement import Agreement
    from ragtui.core.analysis import MetricResult
    from ragtui.core.budget import NoiseBudget
    from ragtui.core.compare import JudgeVerdict
    from ragtui.core.gate import GateCheck, GateResult
    from ragtui.core.ppi import PPIEstimate

# Every character a terminal may act on or a reader cannot see: C0/C1 controls and DEL (ESC
# starts ANSI/OSC sequences, U+009B is a one-byte CSI), the Unicode categories Cf (bidi
# controls U+061C U+200E/F U+202A-202E U+2066-2069, zero-width U+200B-200D U+2060, BOM U+FEFF,
# soft hyphen, tag characters), Cs (lone surrogates, which cannot even be encoded), Zl/Zp
# (line and paragraph separators), plus invisible letters (Hangul fillers, U+034F, U+17B4/5,
# Mongolian variation selectors) and the noncharacters U+FFFE/F. Unicode 15.1 categories as
# ranges (tests/test_format.py checks them against the running Python's unicodedata).
_UNSAFE_RANGES = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x034F, 0x034F),
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0x3164, 0x3164), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
_KEEP = "\t\n"  # shown as they are where multi-line text is shown


def _char_class(ranges: Iterable[tuple[int, int]], keep: str = "") -> str:
    def esc(code: int) -> str:
        return f"\\U{code:08x}"

    parts = []
    for low, high in ranges:
        for a, b in _split_out(low, high, {ord(c) for c in keep}):
            parts.append(esc(a) if a == b else f"{esc(a)}-{esc(b)}")
    return "[" + "".join(parts) + "]"


def _split_out(low: int, high: int, skip: set[int]) -> list[tuple[int, int]]:
    out, start = [], low
    for code in sorted(c for c in skip if low <= c <= high):
        if start <= code - 1:
            out.append((start, code - 1))
        start = code + 1
    if start <= high:
        out.append((start, high))
    return out


_UNSAFE = re.compile(_char_class(_UNSAFE_RANGES))  # everything, tab and newline too
_UNSAFE_MULTILINE = re.compile(_char_class(_UNSAFE_RANGES, keep=_KEEP))


def _re2_class(ranges: Iterable[tuple[int, int]], keep: str) -> str:
    # RE2 (Arrow, DuckDB) spells code points \x{...}; UTF-8 columns cannot hold surrogates
    parts = []
    for low, high in ranges:
        if low == 0xD800:
            continue
        for a, b in _split_out(low, high, {ord(c) for c in keep}):
            parts.append(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}")
    return "[" + "".join(parts) + "]"


# The same set (less tab and newline) for Arrow/DuckDB regex filters that find the values
# needing `printable`.
UNSAFE_RE2 = _re2_class(_UNSAFE_RANGES, _KEEP)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, *, multiline: bool = True) -> str:
    """Untrusted text with every control, escape, bidi, zero-width or invisible character
    shown as a visible escape (ESC -> "\\x1b", U+202E -> "\\u202e"), so a terminal never acts
    on it and a reader sees what is there. Tab and newline stay where multi-line text is shown
    (`multiline=True`); one-line contexts (a table cell, a file name in a notice, an id) pass
    `multiline=False` and get them escaped too. Markup characters stay as they are: renderers
    must not parse them. None is "" and anything else its str()."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    pattern = _UNSAFE_MULTILINE if multiline else _UNSAFE
    return pattern.sub(_escape, text)


def one_line(text: object) -> str:
    """`printable` for a one-line context: newlines and tabs are escaped as well."""
    return printable(text, multiline=False)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells astral characters as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(obj: Any, **options: Any) -> str:
    """JSON for a terminal or a pipe: readable Unicode, but every character `printable` would
    escape (C1 controls, bidi, zero-width ...) written as a \\u escape, so no such byte reaches
    the output. Outside strings json.dumps writes only ASCII, so this stays valid JSON and
    decodes to the same value. Options go to json.dumps (indent, default, sort_keys)."""
    options.setdefault("ensure_ascii", False)
    # outside strings only indentation whitespace: keep newlines (inside, json escapes them)
    return _UNSAFE_MULTILINE.sub(_json_escape, json.dumps(obj, **options))


# ---------------------------------------------------------------- numbers


def pts(value: float | None) -> str:
    """A fraction in points with one decimal: 0.781 -> "78.1"; None -> "—"."""
    return "—" if value is None else f"{value * 100:.1f}"


def signed_pts(value: float | None) -> str:
    """A delta in signed points: +8.1, -0.7; "0.0" rather than "-0.0" from float dust."""
    if value is None:
        return "—"
    x = round(value * 100, 1)
    return "0.0" if x == 0 else f"{x:+.1f}"


def short_pts(value: float | None) -> str:
    """A per-case value in points without a trailing ".0": 100, 83.3, 50."""
    return "—" if value is None else f"{value * 100:.1f}".removesuffix(".0")


def p_value(p: float | None) -> str:
    """A p-value the way papers print it: .004, <.001, 1."""
    if p is None:
        return "—"
    if p < 0.001:
        return "<.001"
    return f"{p:.3f}".removeprefix("0") if p < 1 else "1"


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval in signed points: [+3.2, +13.0]."""
    if low is None or high is None:
        return "—"
    return f"[{signed_pts(low)}, {signed_pts(high)}]"


# ---------------------------------------------------------------- metric names

_ABBREVIATIONS = {
    "answer": "ans",
    "context": "ctx",
    "faithfulness": "faith",
    "relevance": "rel",
    "relevancy": "rel",
    "precision": "prec",
    "recall": "rec",
    "correctness": "corr",
    "similarity": "sim",
}


def _abbreviate(name: str, keep: int) -> str:
    words = [w for w in re.split(r"[\s_\-/.]+", name) if w]
    return " ".join(_ABBREVIATIONS.get(w.lower(), w[:keep]) for w in words) or name


def short_metrics(names: Iterable[str]) -> dict[str, str]:
    """Column headers for metrics, unique within the table: faithfulness -> faith,
    context_precision -> ctx prec. Names that would collide keep more of each word, and
    at worst their full name, so two columns never read the same."""
    names = list(dict.fromkeys(names))
    out: dict[str, str] = {}
    for keep in (5, 8, 12):
        out = {n: _abbreviate(n, keep) for n in names}
        if len(set(out.values())) == len(out):
            return out
    counts: dict[str, int] = {}
    for short in out.values():
        counts[short] = counts.get(short, 0) + 1
    out = {n: (n if counts[s] > 1 else s) for n, s in out.items()}
    return out if len(set(out.values())) == len(out) else {n: n for n in names}


def short_metric(name: str) -> str:
    """One metric's header on its own (tables use `short_metrics` so headers stay unique)."""
    return short_metrics([name])[name]


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
    "relevance fell alone": "answer relevance fell while the other metrics held",
    "no rule fits": "no rule fits the metrics that moved",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def attribution_line(
    metric: str, delta: float | None, n_fell: int, by_stage: dict[str, int]
) -> str:
    """ "faithfulness -6.2 pts: 14 cases fell — 9 generation, 4 retrieval, 1 unattributed"."""
    head = f"{printable(metric)} {signed_pts(delta)} pts"
    if n_fell == 0:
        return f"{head}: no case fell beyond noise"
    parts = [f"{n} {stage}" for stage, n in by_stage.items() if n]
    return f"{head}: {_plural(n_fell, 'case')} fell — " + ", ".join(parts)


def noise_rule_line(a_runs: int, min_drop: float) -> str:
    if a_runs >= 2:
        return (
            f"a case fell when B is below every one of A's {a_runs} reruns (their per-case noise)"
        )
    return (
        f"a case fell when it dropped by at least {min_drop * 100:g} points "
        "(A has no reruns to measure per-case noise; set it with --min-drop)"
    )


def cause_text(cause: str, stage: str, basis: str, missing: tuple[str, ...] = ()) -> str:
    """ "generation: hallucination (new unsupported claims while context recall held)"."""
    if cause == "unattributed":
        if missing:
            return (
                f"unattributed: needs {', '.join(missing)} "
                "(or name the metric with --role ROLE=METRIC)"
            )
        return f"unattributed: {_BASIS.get(basis, basis)}"
    return f"{stage}: {cause} ({_BASIS.get(basis, basis)})"


def retrieval_line(
    n_cases: int,
    mean_overlap: float | None,
    top_changed: int,
    added: int,
    removed: int,
    moved: int,
    unchanged: int,
) -> str:
    if n_cases == 0:
        return "retrieval: no case has chunks in both runs"
    return (
        f"retrieval ({_plural(n_cases, 'case')}): mean top-k overlap {pts(mean_overlap)} pts · "
        f"top chunk changed in {top_changed} · chunks added in {added}, removed in {removed}, "
        f"moved in {moved} · unchanged in {unchanged}"
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
        f"claims ({_plural(n_cases, 'case')}): {lost} lost support ({lost_gone} with their "
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
    return f"{value:.4g}"


def cost_line(field: str, mean_a: float | None, mean_b: float | None, ratio: float | None) -> str:
    """ "latency: mean 1,144 ms → 652 ms (×0.57)"."""
    name = {"latency_ms": "latency"}.get(field, _COST_UNITS.get(field, field))
    text = f"{name}: mean {cost_figure(field, mean_a)} → {cost_figure(field, mean_b)}"
    return text + ("" if ratio is None else f" (×{ratio:.2f})")


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
        f"fails in the candidate ({short_pts(value)}; pass ≥ {short_pts(threshold)})"
    )


# ---------------------------------------------------------------- verdicts and methods
# (imported lazily by the core's to_json; plain strings for the CLI, the report and the TUI)

_METHODS = {
    Method.T: "paired t",
    Method.SIGN_FLIP: "sign-flip, mid-p",
    Method.SCORE: "Tango score / McNemar",
    Method.CLUSTER_SIGN_FLIP: "sign-flip by cluster",
    Method.CLUSTER_T: "cluster-robust t",
    Method.NO_SPREAD: "exact bound (no spread)",
    Method.NONE: "—",
}


def _need(n: int | None) -> str:
    return "—" if n is None else f"~{n:,}"


def margin_pts(margin: float) -> str:
    return f"{margin * 100:g}"


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
    return name


_SHORT_METHODS = {
    Method.T: "paired t",
    Method.SIGN_FLIP: "sign-flip",
    Method.SIGN_FLIP: "sign-flip, mid-p",
    Method.SCORE: "score",
    Method.CLUSTER_SIGN_FLIP: "by cluster",
    Method.CLUSTER_T: "by cluster",
    Method.NO_SPREAD: "no spread",
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


def verdict_reason(m: MetricResult, margin: float) -> str:
    """Why the verdict is what it is, with the cases needed where more would help."""
    band = f"±{margin_pts(margin)} points"
    need = (
        f"need {_need(m.n_detect)} cases to detect {band}, {_need(m.n_no_change)} to show no change"
    )
    v = m.verdict
    if v is Verdict.NOT_COMPARABLE:
        return (
            f"A scored it as {scale_text(m.scale_a)}, B as {scale_text(m.scale_b)}: "
            "no verdict across scales (declare one scale for both)"
        )
    if v is Verdict.NO_DATA:
        return "no case scored in both runs"
    if v is Verdict.TOO_FEW:
        if m.n and not m.spread:
            head = (
                f"all {m.n} deltas are {signed_pts(m.delta)}: no spread to tell noise from "
                "change (a cached copy, or a change this metric does not see)"
            )
        elif m.method in (Method.CLUSTER_SIGN_FLIP, Method.CLUSTER_T):
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
    out = f"CI crosses {band}; {need}"
    if m.holm_lost:
        out += f" (p {p_value(m.p)} alone, not after Holm over the metrics)"
    return out


def errors_pair(m: MetricResult) -> str:
    """Errored grades plus parse failures, A/B: shown beside the means."""
    return f"{m.errors_a + m.parse_failures_a}/{m.errors_b + m.parse_failures_b}"


# ---------------------------------------------------------------- notes


def rule_text(n: RerunRule) -> str:
    state = "within it" if n.holds else "above it"
    out = (
        f"{n.metric}: reruns of {n.side} ({n.runs} runs, {n.n} cases) differ by "
        f"{n.rerun_delta * 100:.1f} points (rule of thumb: < {margin_pts(n.margin)}, {state})"
        f" · noise floor ±{n.noise_floor * 100:.1f}"
        f" · {n.runs} pure reruns at N={n.n} differ by up to {n.chance_range * 100:.1f} by chance"
    )
    if n.chance_range >= n.margin:
        out += " (so the rule fires by chance here)"
    if n.icc is not None:
        out += f" · ICC {n.icc:.2f}"
    return out + f" · {n.source} reruns"


def note_text(n: Note) -> str:
    """One sentence for any note of a comparison."""
    match n:
        case RunsDiffer(what=what, a=a, b=b):
            why = (
                "deltas mix judge and system changes"
                if what.startswith("judge")
                else "the cases may not be the same questions"
            )
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
        case IdenticalRuns():
            return "B is identical to A on every score: a cached copy, not a new run"
        case IdenticalMetric(metric=metric, n=count):
            return (
                f"{metric}: B equals A on all {count} cases: a cached grade, or a metric this "
                "change cannot move"
            )
        case RerunIdentical(side=side, run=run, twin=twin, metrics=()):
            return (
                f"rerun {run} of {side} is identical to {twin} on every score: a cache hit, "
                "not a replicate (left out)"
            )
        case RerunIdentical(side=side, run=run, twin=twin, metrics=metrics):
            return (
                f"rerun {run} of {side} is identical to {twin} on {', '.join(metrics)}: a cache "
                "hit there (left out of those metrics' means and noise floors)"
            )
        case RerunDrift(metric=metric, side=side, run=run, reference=ref, shift=shift, p=p):
            return (
                f"{metric}: rerun {run} of {side} drifted from {ref} by {shift * 100:+.1f} "
                f"points (p {p:.2g}): a systematic change, not noise"
            )
        case ErrorCounts() as e:
            counts = (
                f"{e.metric}: errors A {e.errors_a}, B {e.errors_b} · parse failures "
                f"A {e.parse_failures_a}, B {e.parse_failures_b}"
            )
            if e.differ:
                return f"{counts}: A and B differ, so part of the change may be the judge failing"
            return f"{counts} (errors are counted, not averaged; parse failures score 0)"
        case Unpaired(metric=metric, only_a=oa, only_b=ob, n=count):
            return f"{metric}: {oa} cases only in A, {ob} only in B; compared on the {count} both scored"
        case LowAgreement() as g:
            figures = ", ".join(
                f"{k} {v:.2f}" for k, v in (("κ", g.kappa), ("ρ", g.rho)) if v is not None
            )
            return f"{g.metric}: low agreement, {g.between} ({figures}; {g.flipped} of {g.n} cases flipped)"
        case JudgesDisagree(metric=metric, verdicts=verdicts):
            said = "; ".join(f"{judge}: {v}" for judge, v in verdicts)
            return f"{metric}: the verdict depends on the judge ({said})"
        case RerunRule():
            return rule_text(n)
        case RerunMean(side=side, runs=runs):
            return f"{side}'s per-case values are the mean of its {runs} reruns"
        case NoReruns():
            return (
                "no reruns of A or B with the same config: noise floor unknown "
                "(run a noise rerun of A to measure it)"
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
                f"{count} cases in {k} clusters ({', '.join(parts)}): resampled and "
                "sign-flipped by cluster, since cases of one cluster are not independent"
            )
        case SeedNote(seed=seed, resamples=count):
            return f"seed {seed} · {count:,} random sign-flips where clusters are too many to enumerate"
    return n.code


def budget_text(b: NoiseBudget) -> str:
    """ "faithfulness: per-case variance shares case .62, generation .25, judge .13 · to reach
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
        notes.append("rerun noise unknown (no reruns)")
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
        f"{b.metric}: per-case variance shares {', '.join(parts)}"
        f" · to {goal} MDE {b.target_mde * 100:.1f} pts (now {b.mde * 100:.1f}): "
        + ", or ".join(levers)
        + (f" · {'; '.join(notes)}" if notes else "")
    )


def ppi_text(p: PPIEstimate) -> str:
    what = "change" if p.side == "B - A" else f"mean of {p.side}"
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
    """κ (weighted or not), AC1 and raw agreement beside it, ρ, and the flips."""
    figures = []
    if g.kappa is not None:
        figures.append(f"{'weighted κ' if g.weighted else 'κ'} {g.kappa:.2f}")
    if g.ac1 is not None:
        figures.append(f"AC1 {g.ac1:.2f}")
    if g.raw is not None:
        figures.append(f"same grade {g.raw * 100:.0f} of 100")
    if g.rho is not None:
        figures.append(f"ρ {g.rho:.2f}")
    flips = ", ".join(g.flipped[:8]) + (", …" if len(g.flipped) > 8 else "")
    return (
        f"agreement {g.metric}, {g.between}: {', '.join(figures) or 'no figures'} on {g.n} cases; "
        f"{len(g.flipped)} flipped"
        + (f" ({flips})" if flips else "")
        + (" — LOW" if g.flagged else "")
    )


# ---------------------------------------------------------------- gate


def gate_metric_line(m: MetricResult, margin: float) -> str:
    return (
        f"{m.metric}: {signed_pts(m.delta)} points, 95% CI {interval(m.ci_low, m.ci_high)} "
        f"({method_name(m)}), {verdict_label(m)} — {verdict_reason(m, margin)}"
    )


def gate_check_text(ch: GateCheck, margin: float) -> str:
    """One gate check: "ok   ", "FAIL " or "???  " and why."""
    band = margin_pts(margin)
    tag = {"passed": "ok   ", "failed": "FAIL ", "undecided": "???  "}[ch.outcome]
    texts = {
        "non_inferior": f"shown non-inferior: 95% CI lower bound {signed_pts(ch.value)} > -{band}",
        "regressed": f"regressed by {pts(abs(ch.value or 0.0))} points (significant after Holm)",
        "not_comparable": "A and B scored it on different scales: no verdict, so no pass",
        "no_scores": "the candidate has no usable score (every case errored or failed to parse)",
        "too_few_shared": (
            f"only {ch.value:.0f} cases shared by both runs (the gate needs {ch.threshold:.0f})"
            if ch.value is not None and ch.threshold is not None
            else "too few shared cases"
        ),
        "more_errors": (
            f"the candidate has more errors and parse failures ({ch.value:.0f}) than the base "
            f"({ch.threshold:.0f})"
            if ch.value is not None and ch.threshold is not None
            else "more errors than the base"
        ),
        "undecided": (
            f"cannot tell: 95% CI lower bound {signed_pts(ch.value)} is not above -{band}"
            f" and no significant regression; need {_need(ch.n_needed)} cases to show "
            "non-inferiority"
        ),
        "floor_held": f"mean {pts(ch.value)} ≥ floor {pts(ch.threshold)}",
        "below_floor": f"candidate mean {pts(ch.value)} is below the floor {pts(ch.threshold)}",
        "no_floor_scores": f"the candidate has no scores for the floor {pts(ch.threshold)}",
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
            f"{m.metric}: worst 10% of cases average {pts(m.bottom_a)} in A, {pts(m.bottom_b)} in B"
        )
    return out


# ---------------------------------------------------------------- glossary
# One sentence per figure, verdict and diagnosis word: the Compare screen's column headers show
# them (footer line and tooltip), the Help screen and the README list them.

GLOSSARY: dict[str, str] = {
    # the columns of the verdict table
    "metric": "the metric both runs scored; the highlighted row drives the histogram and the cases",
    "verdict": "what the data says about B against A: improved / regressed, no meaningful "
    "change, inconclusive or too few cases (each with the cases it would need)",
    "A": "the baseline's mean over the cases both runs scored, in points (per case the mean "
    "of A's reruns when it has several)",
    "B": "the candidate's mean over the same cases, in points (per case the mean of B's "
    "reruns when it has several)",
    "err A/B": "scores that failed in A / in B (judge errors plus parse failures): counted, "
    "never averaged as 0",
    "Δ pts": "B minus A: the mean of the per-case differences, in points (0.05 = 5 points)",
    "95% CI": "95% confidence interval of Δ: the changes these cases are compatible with; a "
    "CI that excludes 0 is a change",
    "method": "how the CI and p were computed: paired t, sign-flip (exact for few cases), "
    "score test for yes/no metrics, or by cluster",
    "p adj": "p-value of 'no change', Holm-adjusted because several metrics are tested at "
    "once; below .05 the verdict is improved or regressed",
    "noise ±": "noise floor: how far reruns of the same config differ by chance "
    "(1.96·√Σe²/N over A's reruns); — without reruns",
    "MDE": "minimum detectable effect: the smallest Δ these cases detect 4 times in 5 at "
    "p < .05; smaller changes pass unseen",
    "why": "the reason for the verdict, in words",
    "N": "cases scored in both runs (the pairs the statistics use)",
    # verdicts
    "improved": "B is better than A: Holm-adjusted p < .05",
    "regressed": "B is worse than A: Holm-adjusted p < .05",
    "no meaningful change": "the 90% CI of Δ lies inside ±margin (TOST): any change is "
    "smaller than the margin",
    "inconclusive": "the CI crosses the margin: more cases are needed to tell (their number "
    "is given)",
    "too few cases": "no test at this N can decide, or the deltas carry no spread",
    "(< margin)": "significant, but smaller than the practical margin",
    # figures in the notes
    "5-point rule": "the rule of thumb that reruns of one config differ by less than 5 points; "
    "shown beside the measured rerun difference",
    "ICC": "rerun reliability ICC(1): the share of score variance that is between cases, "
    "not between reruns (1 = reruns agree fully)",
    "κ": "Cohen's kappa: agreement of two judges (or judge and humans) on labels beyond "
    "chance; below .6 is flagged",
    "ρ": "Spearman's rank correlation of two judges' scores; below .7 is flagged",
    # diagnosis
    "stage": "which part of the pipeline made a case worse: retrieval (the chunks) or "
    "generation (the answer), from the metrics that fell",
    "retrieval miss": "context recall fell, or a claim lost its support and its chunk left "
    "the retrieval",
    "retrieval noise": "context precision fell while faithfulness held",
    "hallucination": "new unsupported claims while the retrieval held",
    "ignored context": "faithfulness fell while the retrieval held",
    "off-intent": "answer relevance fell while every other stage metric held",
    "unattributed": "the metrics needed to tell the stage are missing",
    "top-k overlap": "the share of chunks the top k of A and of B have in common (Jaccard), "
    "in points",
    "newly broken": "passed in every baseline run, fails in the candidate",
    "newly fixed": "failed in every baseline run, passes in the candidate",
    "flaky": "passes and fails across reruns of one config",
    "stable pass": "passes in every run",
    "stable fail": "fails in every run",
    "varies by config": "passes under some configs and fails under others, steady within each",
}


def column_help(column: str, method: str | None = None) -> str:
    """The footer line for a verdict-table column: "95% CI · 95% confidence interval … · here:
    paired t"."""
    text = GLOSSARY.get(column, "")
    if column in ("95% CI", "method") and method:
        text += f" · here: {method}"
    return f"{column} · {text}" if text else column


# ---------------------------------------------------------------- diagnosis on screen


def retrieval_summary(n_cases: int, mean_overlap: float | None, top_changed: int) -> str:
    """ "retrieval: mean top-k overlap 93.8 pts · top chunk changed in 2 of 8 cases"."""
    if n_cases == 0:
        return "retrieval: no case has chunks in both runs"
    return (
        f"retrieval: mean top-k overlap {pts(mean_overlap)} pts · top chunk changed in "
        f"{top_changed} of {_plural(n_cases, 'case')}"
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


def claim_change_detail(
    change: str,
    verdict_a: str | None,
    verdict_b: str | None,
    chunks_a: tuple[str, ...],
    chunk_gone: bool | None,
) -> str:
    """What happened to one claim, after its text: "A SUPPORTED via C1 · C1 left B's
    retrieval"; "new in B, UNSUPPORTED"."""
    if change == "new":
        return f"new in B, {verdict_b or 'no verdict'}"
    if change == "dropped":
        return f"only in A ({verdict_a or 'no verdict'})"
    cited = ", ".join(printable(c) for c in chunks_a)
    out = f"{verdict_a or '?'} → {verdict_b or '?'}"
    if change == "lost support":
        if chunk_gone is True:
            out += f" · its chunk {cited} left B's retrieval"
        elif chunk_gone is False:
            out += f" · its chunk {cited} is still retrieved"
        else:
            out += " · A cited no chunk B's diff knows"
    return out


def case_class_text(
    klass: str, baseline: Iterable[float | None], value: float | None, threshold: float
) -> str:
    """ "newly broken · baseline runs 100 100 · candidate 0 · pass ≥ 50"."""
    before = " ".join(short_pts(v) for v in baseline) or "none"
    return f"{klass} · baseline runs {before} · candidate {short_pts(value)} · pass ≥ {short_pts(threshold)}"


def class_filter_caption(klass: str | None, count: int | None = None) -> str:
    if klass is None:
        return "every class"
    return klass if count is None else f"{klass} ({count})"


# The methods, agreement figures, run states and words the Help glossary adds (tui-runs).
GLOSSARY.update(
    {
        "paired t": "method: t-interval and t-test of the per-case differences (enough cases, scores with spread)",
        "sign-flip": "method: randomly flip the signs of the differences (exact for few cases, mid-p); the CI by inverting the test",
        "score": "method: binary scores, Tango's score interval and McNemar's test on the cases that flipped",
        "by cluster": "method: cases grouped by cluster (e.g. source document) are resampled or tested together",
        "no spread": "method: every difference is equal; an exact bound on how many cases could differ",
        "Holm": "Holm's step-down adjustment of p-values for testing several metrics at once",
        "power": "the chance of detecting a change as large as the margin with this many cases",
        "margin": "the practical margin in points (default 5): smaller changes do not matter",
        "TOST": "two one-sided tests: the 90% CI lies inside ±margin, so any change is too small to matter",
        "weighted κ": "quadratic-weighted kappa for 1-5 style grades: a near miss (4 vs 5) counts as partial agreement",
        "AC1": "Gwet's AC1: agreement beyond chance that stays meaningful when one label dominates (where κ collapses)",
        "no data": "no case was scored in both runs",
        "not comparable": "A and B scored the metric on different scales: declare one scale for both",
        "parse failures": "judge replies with no recognisable grade: scored 0 by the rule of the metric and counted, shown beside the mean",
        "errors": "grades that failed (judge down, bad reply): kept out of the mean and counted",
        "summary-only run": "the tool saved aggregates but no cases: listed and shown in Trends with its stated means; compare refuses it",
        "in progress": "a batch is still writing this run's file: its figures grow until it ends",
        "rerun": "the same config run again (same config key): the spread of reruns is the noise",
        "rejudge": "the same answers graded by another judge (its parent is the graded run)",
        "points": "figures are 0-100; a delta of 5 points is 0.05 on the 0-1 scale, never percent",
    }
)

# One line per column header of the Runs table and of a run's case list, shown when the column
# (or a cell in it) is focused.
RUNS_COLUMNS: dict[str, str] = {
    "mark": "A: the baseline, B: a candidate (a marks the baseline, b toggles candidates)",
    "date": "when the run was made (UTC)",
    "run": "run name; ┌├└ ×N groups the N reruns of one config (the group row shows their mean)",
    "kind": "eval, rerun (same config again), rejudge (another judge), summary, running",
    "config": "config key: runs with the same key are reruns of one config",
    "judge": "the judge model that graded the run",
    "N": "cases in the run",
    "metric": "mean in points (0-100) over the scored cases; the sparkline is this config's "
    "means so far; ! parse failures beside it",
    "err": "grades that failed or did not parse, all metrics (never counted as 0)",
    "ms": "mean latency per case in milliseconds",
    "tokens": "mean tokens per case (prompt + completion)",
    "cost": "total cost of the run's cases, as the tool reported it",
}
CASE_COLUMNS: dict[str, str] = {
    "#": "the case's line in the run file (1 = first case)",
    "case": "the case id: cases are matched across runs by it",
    "metric": "the case's score in points (0-100); error: the metric failed (not a 0)",
    "question": "the question asked (one line; untrusted text shown literally)",
    "answer": "the system's answer (one line)",
    "ms": "the case's latency in milliseconds",
}


# ---------------------------------------------------------------- Markdown (copy with `y`)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def md_inline(text: object, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown on one line: controls made visible, markup escaped."""
    flat = " ".join(printable(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", flat)


def md_table(headers: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    """A Markdown table; every cell (headers too) made inert with `md_inline`."""
    head = [md_inline(h) for h in headers]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(md_inline(c) for c in row) + " |" for row in rows]
    return out
