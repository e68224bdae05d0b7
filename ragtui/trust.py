"""Where the user's own settings live, and which other ragtui.toml files the user trusts.

A runs folder is someone else's data: its ragtui.toml may set data settings only, unless the
user ran `ragtui trust PATH`, which records the file's sha256 here. A file that changed since
is untrusted again (its hash no longer matches).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ragtui.config_values import ConfigError

CONFIG_NAME = "ragtui.toml"
TRUST_NAME = "trusted.json"


def user_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/ragtui`, else `~/.config/ragtui` (a relative XDG path is ignored,
    as the XDG spec says)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "ragtui"


def user_config_path() -> Path:
    return user_config_dir() / CONFIG_NAME


def _trust_path() -> Path:
    return user_config_dir() / TRUST_NAME


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trusted_files() -> dict[str, str]:
    """{resolved path: sha256} of every file the user trusted; {} when none or unreadable."""
    try:
        data = json.loads(_trust_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def is_trusted(path: Path, data: bytes) -> bool:
    """Whether the user trusted this file with exactly this content."""
    return trusted_files().get(str(path.resolve())) == sha256_hex(data)


def record_trust(path: Path, data: bytes | None) -> str:
    """Trust `path` with content `data` (None: forget it); returns the sha256 recorded."""
    files = trusted_files()
    key = str(path.resolve())
    sha = "" if data is None else sha256_hex(data)
    if data is None:
        files.pop(key, None)
    else:
        files[key] = sha
    target = _trust_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".trusted-", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "files": files}, out, indent=2, sort_keys=True)
        os.replace(tmp, target)
    except OSError as exc:
        raise ConfigError(f"{target}: cannot record the trust ({exc.strerror})") from None
    return sha
