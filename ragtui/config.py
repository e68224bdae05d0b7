"""`ragtui.toml` + environment: judges, the rerun command, the comparison margin.

Looked up in the runs folder, then its parent, then the working directory; the first found wins.
A bad value raises ConfigError naming the file and the key. API keys never live in the file:
a judge names the environment variable that holds its key (`api_key_env`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragtui.core.errors import RagtuiError

CONFIG_NAME = "ragtui.toml"
PROVIDERS = ("ollama", "openai")
DEFAULT_MARGIN = 0.05


class ConfigError(RagtuiError):
    """ragtui.toml is unreadable or holds a bad value; the message names the file and key."""


@dataclass(frozen=True)
class JudgeConfig:
    name: str
    provider: str  # one of PROVIDERS
    url: str  # base URL, e.g. http://127.0.0.1:11434 or https://api.openai.com/v1
    model: str
    api_key_env: str | None = None  # the environment variable holding the key, never the key
    temperature: float = 0.0
    timeout: float = 60.0  # seconds per request
    concurrency: int = 4
    retries: int = 4  # extra attempts after the first one
    backoff: float = 0.5  # first backoff in seconds; doubles per attempt, plus jitter
    source: str = "command line"  # where it was defined, for error messages

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
    path: Path | None = None  # the file read, None when no ragtui.toml was found
    judges: Mapping[str, JudgeConfig] = field(default_factory=dict)
    rerun_command: str | None = None
    margin: float = DEFAULT_MARGIN

    def judge(self, name: str) -> JudgeConfig:
        if name in self.judges:
            return self.judges[name]
        where = str(self.path) if self.path else f"no {CONFIG_NAME} found"
        known = ", ".join(sorted(self.judges)) or "none"
        raise ConfigError(f"unknown judge {name!r} ({where}; configured judges: {known})")


def find_config(folder: str | Path | None) -> Path | None:
    candidates: list[Path] = []
    if folder is not None:
        folder = Path(folder).resolve()
        candidates += [folder / CONFIG_NAME, folder.parent / CONFIG_NAME]
    candidates.append(Path.cwd() / CONFIG_NAME)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def load_config(folder: str | Path | None = None) -> Config:
    path = find_config(folder)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: expected UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(data, path)


def parse_config(data: Mapping[str, Any], path: Path) -> Config:
    known = {"judges", "rerun", "compare"}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{path}: unknown section [{key}] (known: {', '.join(sorted(known))})"
            )
    judges_table = _table(data, "judges", path, "judges")
    judges = {name: _judge(name, value, path) for name, value in judges_table.items()}
    rerun = _table(data, "rerun", path, "rerun")
    _only(rerun, {"command"}, path, "rerun")
    command = rerun.get("command")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ConfigError(
            f"{path}: rerun.command: expected a command line (string), found {command!r}"
        )
    compare = _table(data, "compare", path, "compare")
    _only(compare, {"margin"}, path, "compare")
    margin = compare.get("margin", DEFAULT_MARGIN)
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 < margin < 1:
        raise ConfigError(
            f"{path}: compare.margin: expected a number between 0 and 1 (0.05 = 5 points), "
            f"found {margin!r}"
        )
    return Config(path=path, judges=judges, rerun_command=command, margin=float(margin))


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


def _judge(name: str, value: Any, path: Path) -> JudgeConfig:
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
    for key in ("provider", "url", "model"):
        item = value.get(key)
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{path}: {where}.{key}: expected a string, found {item!r}")
        fields[key] = item.strip()
    if fields["provider"] not in PROVIDERS:
        raise ConfigError(
            f"{path}: {where}.provider: expected one of {', '.join(PROVIDERS)}, "
            f"found {fields['provider']!r}"
        )
    env = value.get("api_key_env")
    if env is not None and (not isinstance(env, str) or not env.strip()):
        raise ConfigError(
            f"{path}: {where}.api_key_env: expected an environment variable name, found {env!r}"
        )
    fields["api_key_env"] = env
    for key, kind, low in (
        ("temperature", float, 0.0),
        ("timeout", float, 0.001),
        ("backoff", float, 0.0),
        ("concurrency", int, 1),
        ("retries", int, 0),
    ):
        if key not in value:
            continue
        item = value[key]
        ok = not isinstance(item, bool) and isinstance(item, int if kind is int else int | float)
        if not ok or item < low:
            expected = "an integer" if kind is int else "a number"
            raise ConfigError(
                f"{path}: {where}.{key}: expected {expected} >= {low}, found {item!r}"
            )
        fields[key] = kind(item)
    return JudgeConfig(**fields)


def adhoc_judge(provider: str, url: str, model: str, **options: Any) -> JudgeConfig:
    """A judge given on the command line (--provider --url --model)."""
    if provider not in PROVIDERS:
        raise ConfigError(f"--provider: expected one of {', '.join(PROVIDERS)}, found {provider!r}")
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
