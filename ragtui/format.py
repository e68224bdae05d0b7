"""One formatting for the CLI, the Markdown report and the TUI (plain strings: no rich here).

Figures are fractions in the core and in --json; every text shows points (x 100), never percent.
Untrusted text (anything from a run file, a file name or a judge server) goes through
`printable()` before it reaches any output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# C0/C1 control characters (ESC starts ANSI and OSC sequences) except tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str | None) -> str:
    """Untrusted text with control characters made visible (ESC -> "\\x1b"), so a terminal
    never interprets them. Markup characters stay as they are; renderers must not parse them."""
    if text is None:
        return ""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


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
