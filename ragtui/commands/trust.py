"""`ragtui trust PATH`: let one runs folder's ragtui.toml define judges and commands.

A folder's ragtui.toml is someone else's file, so by default ragtui reads only its data
settings. Trusting it records its sha256 in the user's config dir; editing the file makes it
untrusted again. The command shows what the file would be allowed to do before it says done.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import click

from ragtui.commands.common import user_errors
from ragtui.config import CONFIG_NAME, Config, ConfigError, parse_config
from ragtui.format import one_line
from ragtui.trust import record_trust, trusted_files, user_config_dir


def _config_file(path: str) -> Path:
    target = Path(path)
    if target.is_dir():
        target = target / CONFIG_NAME
    if not target.is_file():
        raise ConfigError(f"{target}: no such file")
    return target


def _what_it_allows(config: Config) -> list[str]:
    lines = []
    for judge in config.judges.values():
        key = f", sends ${judge.api_key_env} as its key" if judge.api_key_env else ""
        lines.append(f"  judge {judge.name}: {judge.provider} {judge.model} at {judge.url}{key}")
    if config.rerun_command:
        lines.append(f"  runs the command: {config.rerun_command}")
    return lines or ["  (no judges and no command: nothing beyond data settings)"]


@click.command("trust")
@click.argument("path", type=click.Path(exists=True))
@click.option("--forget", is_flag=True, help="Untrust PATH again.")
@user_errors
def trust_command(path: str, forget: bool) -> None:
    """Trust a runs folder's ragtui.toml (PATH: the file or its folder) to define judges,
    API key variables and the rerun command. Recorded by content hash: an edit untrusts it."""
    target = _config_file(path)
    if forget:
        known = str(target.resolve()) in trusted_files()
        record_trust(target, None)
        click.echo(one_line(f"{target}: {'no longer trusted' if known else 'was not trusted'}"))
        return
    raw = target.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{target}: not valid TOML ({exc})") from None
    config = parse_config(data, target, trusted=True)  # a bad value: nothing is recorded
    sha = record_trust(target, raw)
    click.echo(one_line(f"trusted {target} (sha256 {sha[:16]}…); ragtui may now use:"))
    for line in _what_it_allows(config):
        click.echo(one_line(line))
    click.echo(
        one_line(f"recorded in {user_config_dir() / 'trusted.json'}; an edit untrusts the file")
    )


COMMANDS: list[click.Command] = [trust_command]
