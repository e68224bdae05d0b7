"""One sentence per figure, verdict, diagnosis word and column: Help, the column help lines
and the README read them here."""

from __future__ import annotations

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
    "err A/B": "bad grades in run A / run B, each counted once: errors (a judge that failed, "
    "a reply recorded as an error) are left out, never averaged as 0; a label metric's "
    "unreadable reply scores 0, as the tools do, and stays in; a grade failed in a rerun only "
    "thins that case's mean (a note says so)",
    "Δ pts": "B minus A: the mean of the per-case differences, in points (0.05 = 5 points)",
    "95% CI": "95% confidence interval of Δ: the changes these cases are compatible with; a "
    "CI that excludes 0 is a change",
    "method": "how the CI and p were computed: paired t, sign-flip (exact for few cases), "
    "score test (yes/no metrics, or some cases unmoved), or by cluster",
    "p adj": "p-value of 'no change', Holm-adjusted because several metrics are tested at "
    "once; below .05 the verdict is improved or regressed",
    "noise ±": "noise floor: how far reruns of the same config differ by chance "
    "(1.96·√Σe²/N over A's reruns); — without reruns",
    "MDE": "minimum detectable effect: the smallest Δ these cases detect 4 times in 5 at "
    "p < .05; smaller changes pass unseen; — when no change the scale allows would be",
    "why": "the reason for the verdict, in words",
    "N": "cases scored in both runs (the pairs the statistics use)",
    # verdicts
    "improved": "B is better than A: Holm-adjusted p < .05",
    "regressed": "B is worse than A: Holm-adjusted p < .05",
    "no meaningful change": "the 90% CI of Δ lies inside ±margin (TOST): any change is "
    "smaller than the margin",
    "inconclusive": "the CI crosses the margin, or a change clear on its own is not "
    "significant after Holm over the tests: more cases are needed to tell (their number is "
    "given)",
    "too few cases": "no test at this N can decide, the deltas carry no spread, or only 1-5 "
    "cases (clusters) moved and their exact bounds cross the margin",
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
    "stage": "which part of the pipeline made a case worse: retrieval (the chunks), "
    "generation (the answer), or the judge when A and B gave the same answers and chunks "
    "(a re-judge), from the metrics that fell",
    "fell": "a case fell when B's value (the mean of B's reruns) is below every one of A's "
    "reruns, or, when A has no reruns (or its reruns are identical on that metric), at least "
    "10 points (--min-drop) below A",
    "regraded": "A and B gave the same answers and chunks, or a context recall or precision "
    "fell on the very same chunks: the judge graded the same thing differently",
    "retrieval miss": "the chunks changed and context recall fell, B retrieved nothing where A "
    "retrieved chunks, or a claim lost its support and its chunk left the retrieval",
    "retrieval noise": "the chunks changed and context precision fell while faithfulness held",
    "hallucination": "a claim lost its support, or B makes more unsupported claims than A, "
    "while the retrieval held",
    "ignored context": "faithfulness fell while the retrieval held",
    "off-intent": "answer relevance fell while the other stage metrics scored held (each named)",
    "unattributed": "the metrics needed to tell the stage are missing, or their grade of the "
    "case failed on a side (named)",
    "top-k overlap": "the share of chunks the top k of A and of B have in common (Jaccard), "
    "in points",
    "newly broken": "passed in every baseline run, fails in the candidate and its reruns",
    "newly fixed": "failed in every baseline run, passes in the candidate and its reruns",
    "flaky": "passes and fails across reruns of one config (the candidate's own reruns first: "
    "a case they disagree on is never newly broken or fixed)",
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


# The methods, agreement figures, run states and words the Help glossary adds (tui-runs).
GLOSSARY.update(
    {
        "paired t": "method: t-interval and t-test of the per-case differences (enough cases, scores with spread)",
        "sign-flip": "method: randomly flip the signs of the differences (exact for few cases, mid-p); the CI by inverting the test",
        "score": "method: binary scores, Tango's score interval and McNemar's test on the cases that flipped; where some cases did not move at all, a score test whose variance comes from the changes seen and their mirror images",
        "by cluster": "method: cases grouped by cluster (e.g. source document) are tested together, a cluster's total one unit",
        "no spread": "method: every difference is equal; an exact bound on how many cases could differ",
        "few moved": "method: only 1-5 cases (clusters) moved, too few to test; exact bounds, each side the share of cases that could have moved that way times the whole scale, and the sign test",
        "Holm": "Holm's step-down adjustment of p-values for testing several metrics at once",
        "power": "the chance of detecting a change as large as the margin with this many cases",
        "margin": "the practical margin in points (default 5): smaller changes do not matter",
        "TOST": "two one-sided tests: the 90% CI lies inside ±margin, so any change is too small to matter",
        "weighted κ": "quadratic-weighted kappa for 1-5 style grades: a near miss (4 vs 5) counts as partial agreement",
        "AC1": "Gwet's AC1: agreement beyond chance that stays meaningful when one label dominates (where κ collapses)",
        "no data": "no case was scored in both runs",
        "not comparable": "A and B scored the metric on different scales: declare one scale for both",
        "parse failures": "judge replies with no recognisable grade: a label metric scores them 0 (as the tools do), other metrics record an error; counted once either way and shown beside the mean",
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
    "means so far; !n: n unreadable judge replies (a label metric scores them 0, as the "
    "tools do; other metrics record them as errors); ✗n, where the err column does not fit: "
    "n grades failed, left out of the mean",
    "err": "grades that failed, all metrics: left out of the means, never counted as 0",
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
