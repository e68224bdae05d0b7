"""One formatting for the CLI, the Markdown report and the TUI (plain strings: no rich here).

Figures are fractions in the core and in --json; every text shows points (x 100), never percent.
Untrusted text (anything from a run file, a file name or a judge server) goes through
`printable()` (or `one_line()`, `json_text()`) before it reaches any output.

    text       the neutraliser and inert Markdown
    numbers    points, deltas, p-values, intervals, metric abbreviations
    verdicts   a comparison in words: verdicts, methods, notes, gate, the table's cells
    diagnosis  stages, retrieval and claim changes, case classes, costs
    glossary   one sentence per figure, verdict and column
"""

from __future__ import annotations

from ragtui.format.diagnosis import (
    CLAIM_CHANGE_WORDS,
    attribution_line,
    case_class_text,
    case_retrieval_text,
    cause_text,
    chunk_mark,
    claim_change_detail,
    claims_line,
    claims_summary,
    class_filter_caption,
    classes_line,
    cost_figure,
    cost_line,
    diagnosis_summary_lines,
    new_failure_line,
    noise_rule_line,
    retrieval_line,
    retrieval_summary,
    word_diff,
)
from ragtui.format.glossary import (
    CASE_COLUMNS,
    GLOSSARY,
    RUNS_COLUMNS,
    column_help,
)
from ragtui.format.numbers import (
    interval,
    p_value,
    pts,
    short_metric,
    short_metrics,
    short_pts,
    signed_pts,
)
from ragtui.format.text import (
    UNSAFE_RE2,
    error_text,
    json_text,
    md_inline,
    md_table,
    one_line,
    printable,
    rescan_text,
)
from ragtui.format.verdicts import (
    COMPARE_COLUMNS,
    agreement_text,
    budget_text,
    errors_pair,
    gate_check_text,
    gate_metric_line,
    gate_summary,
    judge_verdict_text,
    margin_pts,
    method_name,
    metric_cells,
    metric_details,
    note_text,
    ppi_text,
    rule_text,
    scale_text,
    short_method,
    verdict_label,
    verdict_reason,
)

__all__ = [
    "CASE_COLUMNS",
    "CLAIM_CHANGE_WORDS",
    "COMPARE_COLUMNS",
    "GLOSSARY",
    "RUNS_COLUMNS",
    "UNSAFE_RE2",
    "agreement_text",
    "attribution_line",
    "budget_text",
    "case_class_text",
    "case_retrieval_text",
    "cause_text",
    "chunk_mark",
    "claim_change_detail",
    "claims_line",
    "claims_summary",
    "class_filter_caption",
    "classes_line",
    "column_help",
    "cost_figure",
    "cost_line",
    "diagnosis_summary_lines",
    "error_text",
    "errors_pair",
    "gate_check_text",
    "gate_metric_line",
    "gate_summary",
    "interval",
    "json_text",
    "judge_verdict_text",
    "margin_pts",
    "md_inline",
    "md_table",
    "method_name",
    "metric_cells",
    "metric_details",
    "new_failure_line",
    "noise_rule_line",
    "note_text",
    "one_line",
    "p_value",
    "ppi_text",
    "printable",
    "pts",
    "rescan_text",
    "retrieval_line",
    "retrieval_summary",
    "rule_text",
    "scale_text",
    "short_method",
    "short_metric",
    "short_metrics",
    "short_pts",
    "signed_pts",
    "verdict_label",
    "verdict_reason",
    "word_diff",
]
