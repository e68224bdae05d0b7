"""ragtui.toml: lookup order, values, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.config import ConfigError, adhoc_judge, load_config

GOOD = """
[judges.local]
provider = "ollama"
url = "http://127.0.0.1:11434"
model = "qwen2.5:7b"
temperature = 0.2
timeout = 30
concurrency = 8

[judges.cloud]
provider = "openai"
url = "https://api.example.com/v1"
model = "gpt-x"
api_key_env = "EXAMPLE_KEY"

[rerun]
command = "python eval.py --config {config} --out {out}"

[compare]
margin = 0.03
"""


def test_load_full_config(tmp_path: Path) -> None:
    (tmp_path / "ragtui.toml").write_text(GOOD)
    config = load_config(tmp_path)
    assert config.path == tmp_path / "ragtui.toml"
    local = config.judge("local")
    assert (local.provider, local.model, local.temperature, local.timeout, local.concurrency) == (
        "ollama",
        "qwen2.5:7b",
        0.2,
        30.0,
        8,
    )
    assert config.judge("cloud").api_key_env == "EXAMPLE_KEY"
    assert config.rerun_command == "python eval.py --config {config} --out {out}"
    assert config.margin == 0.03


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "project" / "runs"
    runs.mkdir(parents=True)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert load_config(runs).path is None
    (cwd / "ragtui.toml").write_text("[compare]\nmargin = 0.1\n")
    assert load_config(runs).path == cwd / "ragtui.toml"
    (runs.parent / "ragtui.toml").write_text("[compare]\nmargin = 0.2\n")
    assert load_config(runs).margin == 0.2
    (runs / "ragtui.toml").write_text("[compare]\nmargin = 0.3\n")
    assert load_config(runs).margin == 0.3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[judges.x]\nprovider = 'ollama'\nmodel = 'm'\n", "judges.x.url: expected a string"),
        (
            "[judges.x]\nprovider = 'vllm'\nurl = 'u'\nmodel = 'm'\n",
            "judges.x.provider: expected one of ollama, openai, found 'vllm'",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'u'\nmodel = 'm'\napi_key = 'sk-1'\n",
            "judges.x.api_key: keys do not go in the file; set api_key_env",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'u'\nmodel = 'm'\nconcurrency = 0\n",
            "judges.x.concurrency: expected an integer >= 1, found 0",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'u'\nmodel = 'm'\ntimeout = 'slow'\n",
            "judges.x.timeout: expected a number >= 0.001, found 'slow'",
        ),
        ("[compare]\nmargin = 5\n", "compare.margin: expected a number between 0 and 1"),
        ("[rerun]\ncommand = ''\n", "rerun.command: expected a command line"),
        ("[rerun]\ncmd = 'x'\n", "rerun.cmd: unknown key (known: command)"),
        ("[judge]\n", "unknown section [judge]"),
        ("[judges\n", "not valid TOML"),
    ],
)
def test_errors_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ragtui.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


def test_unknown_judge_lists_known(tmp_path: Path) -> None:
    (tmp_path / "ragtui.toml").write_text(GOOD)
    with pytest.raises(ConfigError, match=r"unknown judge 'nope' .*judges: cloud, local\)"):
        load_config(tmp_path).judge("nope")


def test_api_key_read_from_env_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ragtui.toml").write_text(GOOD)
    cloud = load_config(tmp_path).judge("cloud")
    monkeypatch.delenv("EXAMPLE_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"\$EXAMPLE_KEY, which is not set"):
        cloud.api_key()
    monkeypatch.setenv("EXAMPLE_KEY", "sk-abc")
    assert cloud.api_key() == "sk-abc"
    assert "sk-abc" not in repr(cloud)
    assert load_config(tmp_path).judge("local").api_key() is None


def test_adhoc_judge() -> None:
    judge = adhoc_judge("openai", " http://h:8000/v1 ", "org/model:7b", timeout=5.0)
    assert (judge.name, judge.url, judge.timeout) == (
        "openai-org_model_7b",
        "http://h:8000/v1",
        5.0,
    )
    with pytest.raises(ConfigError, match="--provider"):
        adhoc_judge("anthropic", "u", "m")
