"""ragtui.toml: lookup order, values, and errors that name the file and the key. Judges and
commands come from the user's own files; see tests/security/test_trust.py for folder files."""

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
margin = 3
cluster = "source_doc"

[metrics.helpfulness]
scale = [1, 5]
"""


def test_load_full_config(tmp_path: Path, user_config: Path) -> None:
    user_config.write_text(GOOD)
    config = load_config(tmp_path)
    assert config.path == user_config and config.paths == (user_config,)
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
    assert config.margin == pytest.approx(0.03)  # 3 points, a fraction inside
    assert config.cluster_field == "source_doc"
    assert config.scales == {"helpfulness": (1.0, 5.0)}
    assert config.notices == ()


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path) -> None:
    """Least specific first, a later file overriding key by key: the user's, the working
    directory's, the folder's parent's, the folder's."""
    runs = tmp_path / "project" / "runs"
    runs.mkdir(parents=True)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert load_config(runs).path is None
    user_config.write_text("[compare]\nmargin = 2\ncluster = 'doc'\n")
    assert (load_config(runs).margin, load_config(runs).cluster_field) == (0.02, "doc")
    (cwd / "ragtui.toml").write_text("[compare]\nmargin = 10\n")
    assert load_config(runs).path == cwd / "ragtui.toml"
    assert load_config(runs).margin == pytest.approx(0.1)
    (runs.parent / "ragtui.toml").write_text("[compare]\nmargin = 20\n")
    assert load_config(runs).margin == pytest.approx(0.2)
    (runs / "ragtui.toml").write_text("[compare]\nmargin = 30\n")
    config = load_config(runs)
    assert config.margin == pytest.approx(0.3) and config.cluster_field == "doc"
    assert config.paths == (
        user_config,
        cwd / "ragtui.toml",
        runs.parent / "ragtui.toml",
        runs / "ragtui.toml",
    )


def test_a_later_file_overrides_a_judge_key_by_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path
) -> None:
    """The working directory's ragtui.toml names only another model for the user's judge: the
    rest is the user's (it was an error: "judges.qwen.provider: expected a string, found
    None"). A new url drops the key variable and the password: they belong to the old url."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    user_config.write_text(
        "[judges.qwen]\nprovider = 'openai'\nurl = 'http://me:pw@127.0.0.1:9/v1'\n"
        "model = 'qwen2.5:7b'\napi_key_env = 'MY_KEY'\ntemperature = 0.5\n"
    )
    (cwd / "ragtui.toml").write_text("[judges.qwen]\nmodel = 'other:1b'\n")
    judge = load_config(tmp_path / "runs").judges["qwen"]
    assert (judge.provider, judge.url, judge.model) == (
        "openai",
        "http://127.0.0.1:9/v1",
        "other:1b",
    )
    assert (judge.api_key_env, judge.temperature, judge.username, judge.password) == (
        "MY_KEY",
        0.5,
        "me",
        "pw",
    )
    (cwd / "ragtui.toml").write_text("[judges.qwen]\nurl = 'http://127.0.0.1:8/v1'\n")
    moved = load_config(tmp_path / "runs").judges["qwen"]
    assert (moved.url, moved.model, moved.temperature) == (
        "http://127.0.0.1:8/v1",
        "qwen2.5:7b",
        0.5,
    )
    assert (moved.api_key_env, moved.username, moved.password) == (None, None, None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[judges.x]\nprovider = 'ollama'\nmodel = 'm'\n", "judges.x.url: expected a string"),
        (
            "[judges.x]\nprovider = 'vllm'\nurl = 'http://h'\nmodel = 'm'\n",
            "judges.x.provider: expected one of ollama, openai, found 'vllm'",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'http://h'\nmodel = 'm'\napi_key = 'sk-1'\n",
            "judges.x.api_key: keys do not go in the file; set api_key_env",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'http://h'\nmodel = 'm'\nconcurrency = 0\n",
            "judges.x.concurrency: expected an integer from 1 to 256, found 0",
        ),
        (
            "[judges.x]\nprovider = 'ollama'\nurl = 'http://h'\nmodel = 'm'\ntimeout = 'slow'\n",
            "judges.x.timeout: expected a number from 0.001 to 3600, found 'slow'",
        ),
        ("[compare]\nmargin = 0.05\n", "compare.margin: margins are in points, from 1 to 50"),
        ("[compare]\nmargin = 75\n", "compare.margin: expected a number from 1 to 50"),
        ("[compare]\ncluster = 3\n", "compare.cluster: expected the name of a case metadata"),
        ("[metrics.h]\nscale = [5, 1]\n", "metrics.h.scale: expected [low, high]"),
        ("[metrics.h]\nscale = [1, inf]\n", "metrics.h.scale: expected [low, high]"),
        ("[metrics.h]\nscael = [1, 5]\n", "metrics.h.scael: unknown key (known: scale)"),
        ("[rerun]\ncommand = ''\n", "rerun.command: expected a command line"),
        ("[rerun]\ncommand = 'run \"x'\n", "rerun.command: cannot split the command line"),
        ("[rerun]\ncommand = 'run {cfg}'\n", "rerun.command: bad placeholder 'cfg'"),
        ("[rerun]\ncmd = 'x'\n", "rerun.cmd: unknown key (known: command, timeout)"),
        ("[rerun]\ncommand = 'x'\ntimeout = 0\n", "rerun.timeout: expected a number from 1"),
        ("[judge]\n", "unknown section [judge]"),
        ("[judges\n", "not valid TOML"),
    ],
)
def test_errors_name_file_and_key(user_config: Path, text: str, message: str) -> None:
    user_config.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert str(info.value).startswith(f"{user_config}: ") and message in str(info.value)


JUDGE = "[judges.x]\nprovider = 'openai'\nmodel = 'm'\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('url = "http://[::1"', "judges.x.url: not a valid URL"),
        ('url = "http://127.0.0.1:99999"', "judges.x.url: not a valid URL"),
        ('url = "http://127.0.0.1:0"', "judges.x.url: port 0 is not a valid port"),
        ('url = "file:///etc/passwd"', "judges.x.url: expected an http:// or https:// URL"),
        ('url = "ftp://h/"', "judges.x.url: expected an http:// or https:// URL"),
        ('url = "127.0.0.1:8000"', "judges.x.url: expected an http:// or https:// URL"),
        ('url = "http:///v1"', "judges.x.url: the URL names no host"),
        ('url = "http://h/v1?x=1"', "judges.x.url: expected a base URL without ?query"),
        ('url = "http://h /v1"', "judges.x.url: the URL holds spaces or control characters"),
        ('url = "http://h"\ntimeout = nan', "judges.x.timeout: expected a number from 0.001"),
        ('url = "http://h"\ntimeout = inf', "judges.x.timeout: expected a number from 0.001"),
        ('url = "http://h"\ntemperature = nan', "judges.x.temperature: expected a number"),
        ('url = "http://h"\ntemperature = 3', "judges.x.temperature: expected a number from 0"),
        ('url = "http://h"\nbackoff = nan', "judges.x.backoff: expected a number from 0 to 60"),
        ('url = "http://h"\nretries = 1000000000', "judges.x.retries: expected an integer"),
        ('url = "http://h"\nretries = 1.5', "judges.x.retries: expected an integer"),
        ('url = "http://h"\nconcurrency = true', "judges.x.concurrency: expected an integer"),
        ('url = "http://h"\napi_key_env = "HOME"', "judges.x.api_key_env: $HOME holds no secret"),
        ('url = "http://h"\napi_key_env = "A B"', "judges.x.api_key_env: expected an environment"),
    ],
)
def test_judge_values_are_checked(user_config: Path, line: str, message: str) -> None:
    """Issue 16: bad URLs and non-finite or out-of-range numbers are one line, no traceback."""
    user_config.write_text(JUDGE + line + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert str(info.value).startswith(f"{user_config}: ") and message in str(info.value)
    assert "\n" not in str(info.value)


def test_url_password_moves_out_of_the_url(user_config: Path) -> None:
    user_config.write_text(JUDGE + 'url = "HTTP://bob:s%40cret@[::1]:8000/v1"\n')
    judge = load_config(None).judge("x")
    assert judge.url == "http://[::1]:8000/v1"
    assert (judge.username, judge.password) == ("bob", "s@cret")
    assert "cret" not in repr(judge) and "cret" not in judge.label


def test_bad_url_error_hides_the_password(user_config: Path) -> None:
    user_config.write_text(JUDGE + 'url = "http://bob:hunter2@h:99999/v1"\n')
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert "hunter2" not in str(info.value) and "bob:***@h" in str(info.value)


def test_unknown_judge_lists_known(tmp_path: Path, user_config: Path) -> None:
    user_config.write_text(GOOD)
    with pytest.raises(ConfigError, match=r"unknown judge 'nope' .*judges: cloud, local\)"):
        load_config(tmp_path).judge("nope")


def test_api_key_read_from_env_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path
) -> None:
    user_config.write_text(GOOD)
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
        adhoc_judge("anthropic", "http://h", "m")
    with pytest.raises(ConfigError, match="--url: expected an http"):
        adhoc_judge("ollama", "gopher://h", "m")
    with pytest.raises(ConfigError, match=r"--timeout: expected a number from 0\.001 to 3600"):
        adhoc_judge("ollama", "http://h", "m", timeout=float("nan"))


def test_a_config_place_that_cannot_be_checked_is_skipped_with_a_notice(
    world_readable_dir: Path,
) -> None:
    """A home folder this user may not search: Path.is_file() raised PermissionError and the
    command ended in a traceback. Now that place is skipped and said; the folder's own
    ragtui.toml still applies."""
    import os

    from tests.core.as_reader import run_as_reader

    locked = world_readable_dir / "locked"
    (locked / "ragtui").mkdir(parents=True)
    (locked / "ragtui" / "ragtui.toml").write_text("[compare]\nmargin = 9\n")
    runs = world_readable_dir / "runs"
    runs.mkdir()
    (runs / "ragtui.toml").write_text("[compare]\nmargin = 3\n")
    locked.chmod(0o700 if os.geteuid() == 0 else 0o000)  # (root's: nobody cannot search it)
    try:
        result = run_as_reader(
            world_readable_dir,
            f"""
            import os
            os.environ["XDG_CONFIG_HOME"] = {str(locked)!r}
            from ragtui.config import load_config
            config = load_config({str(runs)!r})
            print(config.margin)
            print(*config.notices, sep="\\n")
            """,
        )
    finally:
        locked.chmod(0o755)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.splitlines() == [
        "0.03",
        f"{locked}/ragtui/ragtui.toml: cannot be checked (Permission denied): skipped, its "
        "settings are not used",
    ]
