"""The `ragtui` command: a thin shell over ragtui.services, core, importers and judge.

Commands load lazily: `ragtui --help` imports only click, so it answers at once, and each
command imports just what it needs (scipy only for the ones that compute statistics).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

# name -> (module under ragtui.commands, attribute, one-line help shown by `ragtui --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "open": (
        "browse",
        "open_command",
        "Open the dashboard on PATH (default ./runs, else the demo).",
    ),
    "runs": ("browse", "runs_command", "List the runs with their per-metric means."),
    "show": ("browse", "show_command", "Print a run, or one case of it in full."),
    "compare": (
        "compare",
        "compare_command",
        "Compare run B against run A (or several candidates against a base).",
    ),
    "gate": (
        "compare",
        "gate_command",
        "For CI: fail when the candidate regressed or is undecided.",
    ),
    "report": ("compare", "report_command", "Write a Markdown report of A vs B."),
    "diagnose": ("diagnose", "diagnose_command", "Why B got worse: stage, chunks, claims, cases."),
    "history": ("diagnose", "history_command", "Case classes: newly broken, flaky, stable."),
    "compare-many": (
        "compare",
        "compare_many_command",
        "Alias of `compare BASE C1 C2 ...`: candidates x metrics in one table.",
    ),
    "import": ("importing", "import_command", "Import result files of other eval tools."),
    "rejudge": ("judge", "rejudge_command", "Re-judge a run (or one case) with another judge."),
    "judges": ("judge", "judges_command", "List the configured judges and check each one."),
    "noise": ("judge", "noise_command", "Measure judge (or pipeline) noise by rerunning it."),
    "bench": ("bench", "bench_command", "Speed figures on a synthetic history, beside baselines."),
    "trust": ("trust", "trust_command", "Trust one runs folder's ragtui.toml (judges, commands)."),
}


class LazyGroup(click.Group):
    """Loads a command's module only when that command runs (or its own --help is asked)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(f"ragtui.commands.{spec[0]}")
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # the short help is stored here, so listing commands imports none of them
        with formatter.section("Commands"):
            formatter.write_dl([(name, spec[2]) for name, spec in COMMANDS.items()])

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `ragtui PATH` is `ragtui open PATH`: a first argument that is a folder, not a command
        first = args[0] if args else ""
        if first and first not in COMMANDS and not first.startswith("-") and Path(first).is_dir():
            args = ["open", *args]
        return super().parse_args(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """As click's, but a usage error (an unknown option, a bad value) is one line on stderr
        naming the command's --help, as every other error is, instead of click's usage block."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as err:
            where = err.ctx.command_path if err.ctx is not None else "ragtui"
            message = err.format_message().rstrip(".")
            click.echo(f"Error: {message} (see {where} --help)", err=True)
            sys.exit(err.exit_code)
        except click.ClickException as err:
            err.show()
            sys.exit(err.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        from ragtui.core.errors import IndexFault, RagtuiError

        try:
            return super().invoke(ctx)
        except RagtuiError as err:
            from ragtui.format import error_text

            click.echo(f"Error: {error_text(err)}", err=True)
            # the index failing itself (a full disk) is no bad input: a failure, exit 1
            ctx.exit(1 if isinstance(err, IndexFault) else 2)
        except KeyboardInterrupt:
            # Ctrl-C (or a CI job cancelled): 130, as shells report SIGINT. Click would say
            # "Aborted!" and exit 1, which `ragtui gate` uses for "failed".
            click.echo("\ninterrupted", err=True)
            ctx.exit(130)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(package_name="ragtui")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Compare RAG evaluation runs: noise-aware verdicts, case drill-down, re-judging.

    `ragtui [PATH]` opens the dashboard on PATH (default ./runs, else the bundled demo history).
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(cli.get_command(ctx, "open"), path=None)  # type: ignore[union-attr]


def main() -> None:
    cli(standalone_mode=True)
