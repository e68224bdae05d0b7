"""`ragtui bench`: speed figures on a synthetic history, beside baselines (ragtui.bench)."""

from __future__ import annotations

import click

POSITIVE = click.IntRange(min=1, max=10_000_000)


@click.command("bench")
@click.option(
    "--runs",
    default=40,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Runs in the synthetic history (indexing, warm open).",
)
@click.option("--cases", default=1000, show_default=True, type=POSITIVE, help="Cases per run.")
@click.option("--metrics", default=4, show_default=True, type=click.IntRange(1, 8))
@click.option(
    "--big",
    default=100_000,
    show_default=True,
    type=POSITIVE,
    help="Cases per run of the A vs B comparison.",
)
@click.option(
    "--inspect-samples",
    default=10_000,
    show_default=True,
    type=click.IntRange(0, 10_000_000),
    help="Samples of the Inspect log (0 skips it).",
)
@click.option(
    "--tui-runs",
    default=2_000,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Runs on the Runs screen paint figure.",
)
@click.option(
    "--case-list",
    default=1_000_000,
    show_default=True,
    type=POSITIVE,
    help="Cases of the run whose case list is opened.",
)
@click.option("--no-tui", is_flag=True, help="Skip the headless paint figures.")
@click.option("--no-startup", is_flag=True, help="Skip the fresh-process start-up figures.")
def bench_command(
    runs: int,
    cases: int,
    metrics: int,
    big: int,
    inspect_samples: int,
    tui_runs: int,
    case_list: int,
    no_tui: bool,
    no_startup: bool,
) -> None:
    """Measure indexing, import, start-up, paint and compare speed on synthetic data.

    The history (--runs x --cases, native files, 3-5 chunks of ~400 characters per case) is
    written to a temp folder; warm open of 200 runs x 1,000 cases is `--runs 200`.
    """
    from ragtui.bench.figures import render
    from ragtui.bench.run import Sizes, measure
    from ragtui.core.errors import RagtuiError

    sizes = Sizes(
        runs,
        cases,
        metrics,
        big,
        inspect_samples,
        tui_runs,
        case_list,
        tui=not no_tui,
        startup=not no_startup,
    )
    try:
        figures = measure(sizes, lambda line: click.echo(line, err=True))
    except RagtuiError as err:
        raise click.ClickException(str(err)) from None
    click.echo(render(figures))
