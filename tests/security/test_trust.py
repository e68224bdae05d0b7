"""Which ragtui.toml may define judges, key variables and commands: the user's own, the working
directory's, and a folder's only once the user trusted that exact content."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.config import load_config
from ragtui.trust import record_trust, trusted_files, user_config_dir

FOLDER_TOML = """
[judges.gpt]
provider = "openai"
url = "http://127.0.0.1:9/v1"
model = "evil"
api_key_env = "GITHUB_TOKEN"

[rerun]
command = "sh -c 'touch /tmp/PWNED'"

[compare]
margin = 3
cluster = "doc"

[metrics.helpfulness]
scale = [1, 5]
"""
USER_TOML = """
[judges.gpt]
provider = "openai"
url = "https://api.example.com/v1"
model = "gpt-x"
api_key_env = "OPENAI_API_KEY"
"""


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path) -> Path:
    runs = tmp_path / "download" / "runs"
    runs.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    user_config.write_text(USER_TOML)
    return runs


def test_a_folder_sets_data_settings_only(layout: Path, user_config: Path) -> None:
    (layout / "ragtui.toml").write_text(FOLDER_TOML)
    config = load_config(layout)
    assert config.judge("gpt").url == "https://api.example.com/v1"  # the user's, not the folder's
    assert config.judge("gpt").api_key_env == "OPENAI_API_KEY"
    assert config.rerun_command is None
    assert config.margin == pytest.approx(0.03) and config.cluster_field == "doc"
    assert config.scales == {"helpfulness": (1.0, 5.0)}
    [notice] = config.notices
    assert notice.startswith(f"{layout / 'ragtui.toml'}: ignored [judges], [rerun]")
    assert f"ragtui trust {layout / 'ragtui.toml'}" in notice


def test_the_parent_of_the_folder_is_not_trusted_either(layout: Path) -> None:
    (layout.parent / "ragtui.toml").write_text(FOLDER_TOML)
    config = load_config(layout)
    assert config.judge("gpt").model == "gpt-x" and config.rerun_command is None
    assert "ignored [judges], [rerun]" in config.notices[0]


def test_the_working_directory_is_the_users_choice(
    layout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (layout / "ragtui.toml").write_text(FOLDER_TOML)
    monkeypatch.chdir(layout)  # the user runs ragtui from inside the folder
    config = load_config(layout)
    assert config.judge("gpt").model == "evil" and config.rerun_command is not None
    assert config.notices == ()


def test_trust_is_by_content_hash(layout: Path) -> None:
    toml = layout / "ragtui.toml"
    toml.write_text(FOLDER_TOML)
    record_trust(toml, toml.read_bytes())
    assert (user_config_dir() / "trusted.json").is_file()
    assert load_config(layout).judge("gpt").model == "evil"
    toml.write_text(FOLDER_TOML.replace("evil", "eviler"))  # changed: untrusted again
    config = load_config(layout)
    assert config.judge("gpt").model == "gpt-x" and config.notices
    record_trust(toml, None)
    assert str(toml.resolve()) not in trusted_files()


def test_a_broken_trust_record_trusts_nothing(layout: Path) -> None:
    (layout / "ragtui.toml").write_text(FOLDER_TOML)
    (user_config_dir() / "trusted.json").write_text("{not json")
    assert load_config(layout).judge("gpt").model == "gpt-x"


def test_an_untrusted_folder_cannot_break_the_users_judges(layout: Path) -> None:
    """Bad values in an ignored section are not even read."""
    (layout / "ragtui.toml").write_text("[judges.x]\nurl = 'file:///etc/passwd'\n")
    assert load_config(layout).judge("gpt").model == "gpt-x"
