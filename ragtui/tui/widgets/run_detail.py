"""What the Runs screen says about the highlighted line: the detail panel (ids, config,
judge, file, per-metric counts, cost and latency, how far reruns spread) and the same as
Markdown for `y`."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from ragtui.core.queries import RunRow
from ragtui.format import (
    cost_figure,
    md_code,
    md_inline,
    md_table,
    printable,
    pts,
    stated_figure,
)
from ragtui.tui.widgets.runs_model import RunLine, RunsModel


def _field(out: Text, label: str, value: object, end: str = "\n") -> None:
    out.append(f"{label} ", style="dim")
    out.append(printable("—" if value in (None, "") else str(value)))
    out.append(end)


def line_detail(line: RunLine, model: RunsModel, folder: Path) -> Text:
    """The highlighted line in full: a run's ids, config, judge, dataset, file, per-metric
    counts, cost and latency; a group's means over its reruns and how far the reruns spread."""
    out = Text(no_wrap=True, overflow="ellipsis")
    run = line.run
    if line.is_group:
        _field(out, "config", run.config_key, "   ")
        _field(out, "reruns", line.size, "   ")
        _field(out, "cases", line.n_cases)
        out.append("means over the reruns (per case, then averaged): ", style="dim")
    else:
        _field(out, "run", run.id, "   ")
        _field(out, "name", run.name, "   ")
        state = (
            " (in progress)" if run.in_progress else " (summary only)" if run.summary_only else ""
        )
        _field(out, "kind", run.kind + state, "   ")
        _field(out, "created", run.created_at, "   ")
        _field(out, "parent", run.parent)
        _field(out, "config", run.config_key, "   ")
        _field(out, "", ", ".join(f"{k}={v}" for k, v in sorted(run.config.items())))
        _field(out, "judge", run.judge, "   ")
        _field(out, "provider", run.judge_provider, "   ")
        _field(out, "prompt", run.judge_prompt_hash, "   ")
        _field(out, "dataset", " ".join(x for x in (run.dataset, run.dataset_version) if x))
        # relative to the folder: shorter, and the same on every machine
        path, root = run.file.resolve(), folder.resolve()
        _field(out, "file", path.relative_to(root) if path.is_relative_to(root) else path)
    for m in model.metrics:
        mean = line.means.get(m)
        errors = sum(r.errors.get(m, 0) for r in line.runs)
        parse = line.parse_failures(m)
        out.append(f"{printable(m)} ", style="bold")
        out.append(pts(mean))
        if parse:
            out.append(f" ({parse} parse failures)", style="bold yellow")
        if errors:
            out.append(f" ({errors} errors)", style="bold red")
        out.append("   ")
    if not line.is_group and run.stated:  # the tool's own figures (all a summary-only run has)
        out.append("stated ", style="dim")
        out.append(printable(stated_line(run)))
        out.append("   ")
    costs = cost_text(line, model)
    if costs:
        out.append("\n")
        out.append_text(costs)
    if any(r.id in model.unread for r in line.runs):
        out.append("\ntokens and cost not read: a big run file (latency from the index)", "dim")
    if line.size > 1:
        group = line.members
        out.append(f"\nreruns of this config ({len(group)}) differ by: ", style="dim")
        first = True
        for m in model.metrics:
            means = [r.means[m] for r in group if r.means.get(m) is not None]
            if len(means) < 2:
                continue
            spread = 100 * (max(means) - min(means))
            out.append("" if first else " · ")
            out.append(f"{printable(m)} ")
            # the classic 5% rule: reruns that far apart make small deltas meaningless
            out.append(f"{spread:.1f}", style="bold yellow" if spread >= 5 else "bold")
            first = False
        out.append(" pts (rule: < 5)", style="dim")
    return out


def cost_text(line: RunLine, model: RunsModel) -> Text:
    """ "latency mean 812 ms · tokens mean 1,204.0 · cost total 0.1234" (a group: per run)."""
    out = Text()
    for _, _, name, figure in model.cost_columns:
        value = model.cost_value(line, name, figure)
        missing, unreadable, cases = model.cost_gaps(line, name)
        if value is None and (not missing or (missing == cases and not unreadable)):
            continue  # nothing to say: no case of this line carries the figure
        if out:
            out.append(" · ")
        label = {"latency_ms": "latency", "total_tokens": "tokens"}.get(name, name)
        if unreadable == missing:
            how = "unreadable"
        else:
            how = f"without it ({unreadable} unreadable)" if unreadable else "without it"
        gaps = f"{missing} of {cases} cases {how}"
        if value is None:  # a total with cases missing is no total
            out.append(f"{label} {figure} unknown: {gaps}", style="yellow")
            continue
        out.append(f"{label} {figure} per {'case' if figure == 'mean' else 'run'} ", style="dim")
        out.append(cost_figure(name, value))
        if missing:
            out.append(f" (over {cases - missing} of {cases} cases: {gaps})", style="dim")
    return out


def stated_line(run: RunRow) -> str:
    """Every figure the run's tool stated, in the file's order (plain text, untrusted)."""
    return " · ".join(stated_figure(f) for f in run.stated)


def line_markdown(line: RunLine, model: RunsModel) -> str:
    """The highlighted line as Markdown (the `y` copy): what the detail panel says."""
    run = line.run
    if line.is_group:
        out = [f"## config {md_code(run.config_key)}: {md_inline(run.name)} ×{line.size}", ""]
        out += md_table(
            ["run", "created", "kind", *model.metrics],
            [
                [r.id, r.created_at, r.kind, *(pts(r.listed_means.get(m)) for m in model.metrics)]
                for r in line.members
            ],
        )
        out += ["", "Means over the reruns (each case's mean over the runs, then averaged):", ""]
    else:
        out = [f"## run {md_code(run.id)}: {md_inline(run.name)}", ""]
        out += md_table(
            ["field", "value"],
            [
                ["created", run.created_at],
                ["kind", run.kind + (" (in progress)" if run.in_progress else "")],
                ["config", run.config_key],
                ["settings", ", ".join(f"{k}={v}" for k, v in sorted(run.config.items()))],
                ["judge", run.judge or "—"],
                ["dataset", " ".join(x for x in (run.dataset, run.dataset_version) if x) or "—"],
                ["cases", run.n_cases],
                ["file", run.file.name],
            ],
        )
        out += [""]
    out += md_table(
        ["metric", "mean (points)", "errors", "parse failures"],
        [
            [
                m,
                pts(line.means.get(m)),
                sum(r.errors.get(m, 0) for r in line.runs),
                line.parse_failures(m),
            ]
            for m in model.metrics
        ],
    )
    if not line.is_group and run.stated:
        out += ["", f"Stated by the tool: {md_inline(stated_line(run))}"]
    costs = cost_text(line, model)
    if costs:
        out += ["", md_inline(costs.plain)]
    return "\n".join(out) + "\n"
