"""ragtui.toml + environment: judges, the rerun command, and data settings.

Trust comes from the user, not from a runs folder. Settings are read, least specific first,
from the user's own config (`$XDG_CONFIG_HOME/ragtui/ragtui.toml`, default
`~/.config/ragtui/ragtui.toml`), the working directory's `ragtui.toml`, then the runs folder's
parent and the runs folder itself; a later file overrides an earlier one key by key.

A runs folder's file (or its parent's, when that is not the working directory) is someone
else's: it may set only data settings ([compare] margin and cluster, [metrics.NAME] scale).
Its [judges] and [rerun] sections are ignored with a notice unless the user trusted that exact
file (`ragtui trust PATH` records its sha256). API keys never live in a file: a judge names
the environment variable that holds its key (`api_key_env`). A bad value raises ConfigError
naming the file and the key.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragtui.config_values import (
    RERUN_TIMEOUT,
    ConfigError,
    check_command,
    in_range,
    judge_url,
    key_variable,
    margin_points,
    number,
)
from ragtui.trust import CONFIG_NAME, is_trusted, user_config_path

__all__ = ["CONFIG_NAME", "Config", "ConfigError", "JudgeConfig", "adhoc_judge", "load_config"]

PROVIDERS = ("ollama", "openai")
DEFAULT_MARGIN = 0.05  # a fraction in the core; the file says points (margin = 5)
DEFAULT_RERUN_TIMEOUT = 3600.0
TRUSTED_SECTIONS = ("judges", "rerun")  # what only the user's own (or trusted) files may set
DATA_SECTIONS = ("compare", "metrics")
COMMAND_LINE = "command line"


@dataclass(frozen=True)
class JudgeConfig:
    """One judge. Every value is checked on construction (also by `replace`), so a judge from
    a file, the command line or code is valid or a ConfigError. A user and password in the URL
    move out of it into `username`/`password`: `url` can be shown and stored."""

    name: str
    provider: str  # one of PROVIDERS
    url: str  # base URL, e.g. http://127.0.0.1:11434 or https://api.openai.com/v1
    model: str
    api_key_env: str | None = None  # the environment variable holding the key, never the key
    temperature: float = 0.0
    timeout: float = 60.0  # seconds for a whole request, reading the reply included
    concurrency: int = 4
    retries: int = 4  # extra attempts after the first one
    backoff: float = 0.5  # first backoff in seconds; doubles per attempt, plus jitter
    source: str = COMMAND_LINE  # where it was defined, for error messages
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        def where(key: str) -> str:
            if self.source == COMMAND_LINE:
                return f"--{key}"
            return f"{self.source}: judges.{self.name}.{key}"

        if self.provider not in PROVIDERS:
            raise ConfigError(
                f"{where('provider')}: expected one of {', '.join(PROVIDERS)}, "
                f"found {self.provider!r}"
            )
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(f"{where('model')}: expected a string, found {self.model!r}")
        url, user, password = judge_url(self.url, where("url"))
        object.__setattr__(self, "url", url)
        if password is not None or user is not None:
            object.__setattr__(self, "username", user or "")
            object.__setattr__(self, "password", password or "")
        if self.api_key_env is not None:
            object.__setattr__(
                self, "api_key_env", key_variable(self.api_key_env, where("api_key_env"))
            )
        for key in ("temperature", "timeout", "backoff", "concurrency", "retries"):
            object.__setattr__(self, key, number(getattr(self, key), where(key), key))

    def api_key(self) -> str | None:
        """The key from the named environment variable; an error when it is named but unset."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"{self.source}: judges.{self.name}.api_key_env names ${self.api_key_env}, "
                "which is not set in the environment"
            )
        return key

    @property
    def label(self) -> str:
        return f"{self.name} ({self.provider} {self.model} at {self.url})"


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # the most specific file read, None when none was found
    judges: Mapping[str, JudgeConfig] = field(default_factory=dict)
    rerun_command: str | None = None
    rerun_timeout: float = DEFAULT_RERUN_TIMEOUT  # seconds for one run of the command
    margin: float = DEFAULT_MARGIN  # a fraction; the file gives points
    scales: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    cluster_field: str | None = None  # the case metadata field that names a case's cluster
    paths: tuple[Path, ...] = ()  # every file read, least specific first
    notices: tuple[str, ...] = ()  # one line per ignored section

    def judge(self, name: str) -> JudgeConfig:
        if name in self.judges:
            return self.judges[name]
        where = ", ".join(map(str, self.paths)) if self.paths else f"no {CONFIG_NAME} found"
        known = ", ".join(sorted(self.judges)) or "none"
        raise ConfigError(f"unknown judge {name!r} ({where}; configured judges: {known})")


def config_files(
    folder: str | Path | None, notices: list[str] | None = None
) -> list[tuple[Path, bool]]:
    """The existing config files, least specific first, each with whether its place alone
    makes it trusted (the user's own file and the working directory's are). A place that
    cannot be checked (a folder on its way this user may not search) is skipped, and said in
    `notices`."""
    candidates: list[tuple[Path, bool]] = [
        (user_config_path(), True),
        (Path.cwd() / CONFIG_NAME, True),
    ]
    if folder is not None:
        folder = Path(folder).resolve()
        candidates += [(folder.parent / CONFIG_NAME, False), (folder / CONFIG_NAME, False)]
    out: list[tuple[Path, bool]] = []
    for path, trusted in candidates:
        try:
            if not path.is_file():
                continue
        except OSError as exc:
            if notices is not None:
                notices.append(
                    f"{path}: cannot be checked ({exc.strerror or type(exc).__name__}): "
                    "skipped, its settings are not used"
                )
            continue
        same = [i for i, (p, _) in enumerate(out) if p.resolve() == path.resolve()]
        if same:  # one file in two roles: trusted if either role is, at its later place
            trusted = trusted or out.pop(same[0])[1]
        out.append((path, trusted))
    return out


def load_config(folder: str | Path | None = None) -> Config:
    config = Config()
    notices: list[str] = []
    for path, trusted in config_files(folder, notices):
        try:
            raw = path.read_bytes()
            data = tomllib.loads(raw.decode("utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: expected UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        trusted = trusted or is_trusted(path, raw)
        config = parse_config(data, path, base=config, trusted=trusted, notices=notices)
    return replace(config, notices=tuple(notices))


def parse_config(
    data: Mapping[str, Any],
    path: Path,
    *,
    base: Config | None = None,
    trusted: bool = True,
    notices: list[str] | None = None,
) -> Config:
    """`base` with this file's settings on top. An untrusted file's [judges] and [rerun] are
    ignored (a notice says so); everything else is checked the same for every file."""
    base = base or Config()
    known = {*TRUSTED_SECTIONS, *DATA_SECTIONS}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{path}: unknown section [{key}] (known: {', '.join(sorted(known))})"
            )
    ignored = [s for s in TRUSTED_SECTIONS if s in data and not trusted]
    if ignored and notices is not None:
        notices.append(
            f"{path}: ignored {', '.join(f'[{s}]' for s in ignored)}: a runs folder's "
            f"{CONFIG_NAME} may set only [compare] and [metrics]; if you trust this file, run "
            f"`ragtui trust {shlex.quote(str(path))}`"
        )
    judges = dict(base.judges)
    command, timeout = base.rerun_command, base.rerun_timeout
    if trusted:
        judges_table = _table(data, "judges", path, "judges")
        judges.update(
            {
                name: _judge(name, value, path, judges.get(name))
                for name, value in judges_table.items()
            }
        )
        rerun = _table(data, "rerun", path, "rerun")
        _only(rerun, {"command", "timeout"}, path, "rerun")
        if "command" in rerun:
            command = check_command(rerun["command"], f"{path}: rerun.command")
        if "timeout" in rerun:
            timeout = in_range(rerun["timeout"], f"{path}: rerun.timeout", *RERUN_TIMEOUT)
    compare = _table(data, "compare", path, "compare")
    _only(compare, {"margin", "cluster"}, path, "compare")
    margin = base.margin
    if "margin" in compare:
        margin = margin_points(compare["margin"], f"{path}: compare.margin") / 100
    cluster = base.cluster_field
    if "cluster" in compare:
        cluster = compare["cluster"]
        if not isinstance(cluster, str) or not cluster.strip():
            raise ConfigError(
                f"{path}: compare.cluster: expected the name of a case metadata field, "
                f"found {cluster!r}"
            )
        cluster = cluster.strip()
    scales = dict(base.scales)
    for name, table in _table(data, "metrics", path, "metrics").items():
        scales.update(_metric(name, table, path))
    return Config(
        path=path,
        judges=judges,
        rerun_command=command,
        rerun_timeout=timeout,
        margin=margin,
        scales=scales,
        cluster_field=cluster,
        paths=(*base.paths, path),
        notices=base.notices,
    )


def _metric(name: str, table: Any, path: Path) -> dict[str, tuple[float, float]]:
    where = f"metrics.{name}"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where}: expected a table [{where}], found {table!r}")
    _only(table, {"scale"}, path, where)
    if "scale" not in table:
        return {}
    scale = table["scale"]
    numbers = isinstance(scale, list) and len(scale) == 2
    numbers = numbers and all(
        not isinstance(x, bool) and isinstance(x, int | float) and abs(x) < float("inf")
        for x in scale
    )
    if not numbers or not scale[0] < scale[1]:
        raise ConfigError(
            f"{path}: {where}.scale: expected [low, high], two finite numbers with low < high, "
            f"found {scale!r}"
        )
    return {name: (float(scale[0]), float(scale[1]))}


_JUDGE_KEYS = {
    "provider",
    "url",
    "model",
    "api_key_env",
    "temperature",
    "timeout",
    "concurrency",
    "retries",
    "backoff",
}


def _judge(name: str, value: Any, path: Path, earlier: JudgeConfig | None = None) -> JudgeConfig:
    """A judge from its table; over an `earlier` file's judge of that name, key by key. A new
    url drops the earlier key variable, user and password: credentials go to the server they
    were set for, never on to another that a later file names."""
    where = f"judges.{name}"
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where}: expected a table [{where}], found {value!r}")
    if "api_key" in value:  # a key in a file ends up in backups and repos
        raise ConfigError(
            f"{path}: {where}.api_key: keys do not go in the file; set api_key_env to the name "
            "of an environment variable holding it"
        )
    _only(value, _JUDGE_KEYS, path, where)
    fields: dict[str, Any] = {"name": name, "source": str(path)}
    if earlier is not None:
        kept = {k: getattr(earlier, k) for k in _JUDGE_KEYS if k not in value}
        if "url" in value:
            kept.pop("api_key_env", None)
        else:
            kept |= {"username": earlier.username, "password": earlier.password}
        value = {**kept, **value}
        fields |= {k: value.pop(k) for k in ("username", "password") if k in value}
    for key in ("provider", "url", "model"):
        item = value.get(key)
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{path}: {where}.{key}: expected a string, found {item!r}")
        fields[key] = item.strip()
    fields.update({k: value[k] for k in _JUDGE_KEYS if k in value and k not in fields})
    return JudgeConfig(**fields)


def adhoc_judge(provider: str, url: str, model: str, **options: Any) -> JudgeConfig:
    """A judge given on the command line (--provider --url --model)."""
    name = f"{provider}-{model}".replace("/", "_").replace(":", "_")
    judge = JudgeConfig(name=name, provider=provider, url=url.strip(), model=model.strip())
    return replace(judge, **{k: v for k, v in options.items() if v is not None})


def _table(data: Mapping[str, Any], key: str, path: Path, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where}: expected a table, found {value!r}")
    return value


def _only(table: Mapping[str, Any], allowed: set[str], path: Path, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{path}: {where}.{key}: unknown key (known: {', '.join(sorted(allowed))})"
            )
