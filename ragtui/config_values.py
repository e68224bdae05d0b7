"""Checks of single ragtui.toml values: judge URLs, numbers in range, key variable names,
the rerun command line. Each failure is one line naming the file and the key (ConfigError)."""

from __future__ import annotations

import math
import re
import shlex
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ragtui.core.errors import InputError


class ConfigError(InputError):
    """ragtui.toml is unreadable or holds a bad value; the message names the file and key."""


# (low, high, kind) for every numeric judge setting; all must also be finite.
JUDGE_NUMBERS: dict[str, tuple[float, float, type]] = {
    "temperature": (0.0, 2.0, float),
    "timeout": (0.001, 3600.0, float),  # seconds for a whole request (one deadline)
    "backoff": (0.0, 60.0, float),
    "concurrency": (1, 256, int),
    "retries": (0, 20, int),
}
RERUN_TIMEOUT = (1.0, 7 * 24 * 3600.0)
MARGIN_POINTS = (1.0, 50.0)
PLACEHOLDERS = ("config", "out", "run_id")

# Variables that hold no secret: naming one as api_key_env is a mistake (and would send, say,
# the home directory to a server as a Bearer token).
NOT_SECRETS = frozenset(
    [
        "HOME",
        "PATH",
        "USER",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "TERM",
        "COLORTERM",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "HOSTNAME",
        "DISPLAY",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MAIL",
        "SHLVL",
        "PYTHONPATH",
        "VIRTUAL_ENV",
    ]
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def number(value: Any, where: str, key: str) -> float | int:
    """A finite number (an integer where the key wants one) inside the key's range."""
    low, high, kind = JUDGE_NUMBERS[key]
    return in_range(value, where, low, high, integer=kind is int)


def in_range(value: Any, where: str, low: float, high: float, *, integer: bool = False) -> Any:
    expected = (
        f"an integer from {low:g} to {high:g}" if integer else f"a number from {low:g} to {high:g}"
    )
    ok = not isinstance(value, bool) and isinstance(value, int if integer else int | float)
    if not ok or not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"{where}: expected {expected}, found {value!r}")
    return int(value) if integer else float(value)


def margin_points(value: Any, where: str) -> float:
    """A practical margin in points, as ragtui.toml and --margin both take it: from 1 to 50;
    a value below 1 is refused as what it most likely is, a fraction (0.05 for 5 points)."""
    low, high = MARGIN_POINTS
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if ok and 0 < value < low:
        raise ConfigError(
            f"{where}: margins are in points, from 1 to 50 (5 means 5 points, not 0.05); "
            f"found {value!r}"
        )
    return in_range(value, where, low, high)


def judge_url(url: Any, where: str) -> tuple[str, str | None, str | None]:
    """(the URL without user and password, user, password) of an http(s) judge URL with a
    host and a valid port; anything else is a ConfigError. The password is percent-decoded."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{where}: expected a string, found {url!r}")
    url = url.strip()
    shown = _hide_password(url)
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise ConfigError(f"{where}: the URL holds spaces or control characters: {shown!r}")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port out of range or not a number
        host = parts.hostname
    except ValueError as exc:
        raise ConfigError(f"{where}: not a valid URL ({exc}): {shown!r}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ConfigError(
            f"{where}: expected an http:// or https:// URL, found {parts.scheme or 'no'} scheme "
            f"in {shown!r}"
        )
    if not host:
        raise ConfigError(f"{where}: the URL names no host: {shown!r}")
    if parts.query or parts.fragment:
        raise ConfigError(f"{where}: expected a base URL without ?query or #fragment: {shown!r}")
    if port == 0:
        raise ConfigError(f"{where}: port 0 is not a valid port: {shown!r}")
    hostport = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme.lower(), hostport, parts.path, "", ""))
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    return clean, user, password


def _hide_password(url: str) -> str:
    # for error messages: user:pass@ never reaches a terminal or a log
    return re.sub(r"(//[^/@]*?:)[^/@]*@", r"\1***@", url)


def key_variable(name: Any, where: str) -> str:
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name.strip()):
        raise ConfigError(f"{where}: expected an environment variable name, found {name!r}")
    name = name.strip()
    if name in NOT_SECRETS or name.startswith(("LC_", "XDG_")):
        raise ConfigError(
            f"{where}: ${name} holds no secret; name the variable that holds the judge's API "
            "key (e.g. OPENAI_API_KEY)"
        )
    return name


def command_argv(command: str, where: str, **values: str) -> list[str]:
    """The rerun command line split like a shell would (shlex) but never run by one, with
    {config}, {out} and {run_id} filled in per argument."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"{where}: cannot split the command line ({exc}): {command!r}") from None
    if not words:
        raise ConfigError(f"{where}: expected a command line, found {command!r}")
    argv = []
    for word in words:
        try:
            argv.append(word.format(**values))
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
            raise ConfigError(
                f"{where}: bad placeholder {exc} in {word!r} (known: {known}; "
                "write {{ and }} for literal braces)"
            ) from None
    return argv


def check_command(command: Any, where: str) -> str:
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: expected a command line (string), found {command!r}")
    command_argv(command, where, **{p: p for p in PLACEHOLDERS})
    return command
