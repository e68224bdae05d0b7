"""Every test runs with its own empty user config dir, so the machine's own
~/.config/ragtui (judges, trusted files) never leaks into a test, nor a test into it."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def user_config_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
def user_config(user_config_home: Path) -> Path:
    """The user's own ragtui.toml (not yet written): judges and commands belong here."""
    folder = user_config_home / "ragtui"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "ragtui.toml"
