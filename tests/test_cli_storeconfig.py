"""``skillrt tasks`` reads its few settings without pydantic-settings (cli/storeconfig.py):
source by source, the values are the ones ``RuntimeConfig`` holds, and whenever a source sets
anything else (or a bad value) it steps aside, so ``RuntimeConfig`` reads and reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillrt import ConfigError, load_config
from skillrt.cli.storeconfig import StoreConfig, read_store_config
from skillrt.settings import RuntimeConfig


def _both(**overrides: Any) -> tuple[StoreConfig, RuntimeConfig]:
    light = read_store_config(**overrides)
    assert light is not None, "the settings should have been read without RuntimeConfig"
    return light, load_config(**overrides)


def _same(light: StoreConfig, full: RuntimeConfig) -> None:
    assert light.content_root == full.content_root
    assert light.root == full.root
    assert light.state_dir == full.state_dir
    assert light.state_path == full.state_path
    assert light.state_url is full.state_url is None
    assert light.log_level == full.log_level
    assert light.log_file == full.log_file
    assert light.checkpoint_max_age_h == full.checkpoint_max_age_h
    assert light.llm.provider == full.llm.provider
    assert light.llm.script_path == full.llm.script_path
    assert light.secret_values() == full.secret_values() == []


def _user_file(isolated: Path, text: str) -> Path:
    user = isolated.parent / "xdg" / "skillrt" / "config.toml"  # $XDG_CONFIG_HOME (conftest)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(text, encoding="utf-8")
    return user


def test_the_shipped_defaults_alone(isolated: Path) -> None:
    light, full = _both()
    _same(light, full)
    assert light.state_path == (isolated / ".skillrt").resolve()
    assert light.checkpoint_max_age_h == 24 and light.log_level == "warning"


def test_each_file_and_the_environment_in_order(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _user_file(
        isolated,
        'state_dir = "user-state"\nlog_level = "info"\ncheckpoint_max_age_h = 5\n'
        '[llm]\nprovider = "local"\n',
    )
    light, full = _both()
    _same(light, full)
    assert light.state_path == (isolated / "user-state").resolve()
    assert (light.log_level, light.checkpoint_max_age_h, light.llm.provider) == ("info", 5, "local")

    # ./skillrt.toml beats the user's file
    (isolated / "skillrt.toml").write_text(
        'log_level = "error"\nlog_file = "x.log"\n[llm]\nscript_path = "s.json"\n'
    )
    light, full = _both()
    _same(light, full)
    assert (light.log_level, light.log_file, light.llm.script_path) == (
        "error",
        Path("x.log"),
        Path("s.json"),
    )
    assert light.checkpoint_max_age_h == 5  # still the user's

    # the environment beats the files, in any case, nested keys with __
    monkeypatch.setenv("SKILLRT_CHECKPOINT_MAX_AGE_H", "2.5")
    monkeypatch.setenv("skillrt_state_dir", str(isolated / "env-state"))
    monkeypatch.setenv("SKILLRT_LLM__PROVIDER", "scripted")
    light, full = _both()
    _same(light, full)
    assert light.checkpoint_max_age_h == 2.5
    assert light.state_path == isolated / "env-state"
    assert light.llm.provider == "scripted"

    # keyword arguments (--root) beat everything
    monkeypatch.setenv("SKILLRT_CONTENT_ROOT", str(isolated / "env-root"))
    light, full = _both()
    _same(light, full)
    assert light.root == isolated / "env-root"
    light, full = _both(content_root=isolated / "kw-root")
    _same(light, full)
    assert light.root == isolated / "kw-root"


def test_skillrt_config_names_the_file_instead_of_skillrt_toml(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated / "skillrt.toml").write_text('log_level = "error"\n')
    named = isolated / "elsewhere.toml"
    named.write_text('log_level = "debug"\n')
    monkeypatch.setenv("SKILLRT_CONFIG", str(named))
    light, full = _both()
    _same(light, full)
    assert light.log_level == "debug"

    monkeypatch.setenv("SKILLRT_CONFIG", str(isolated / "missing.toml"))
    with pytest.raises(ConfigError) as light_error:
        read_store_config()
    with pytest.raises(ConfigError) as full_error:
        load_config()
    assert str(light_error.value) == str(full_error.value)
    assert "SKILLRT_CONFIG" in str(light_error.value)


def test_a_file_that_is_not_toml_fails_the_same_way(isolated: Path) -> None:
    (isolated / "skillrt.toml").write_text("this is = = not toml\n")
    with pytest.raises(ConfigError) as light_error:
        read_store_config()
    with pytest.raises(ConfigError) as full_error:
        load_config()
    assert str(light_error.value) == str(full_error.value)


@pytest.mark.parametrize(
    ("text", "env"),
    [
        ("history_limit = 5\n", {}),  # a key listing does not read
        ("[bogus]\n", {}),  # an unknown (empty) table: RuntimeConfig refuses it
        ('[llm]\nmodel = "m"\n', {}),  # another key of a section read in part
        ('secrets = ["hunter22"]\n', {}),  # a secret: redacted from what is listed
        ('[llm]\napi_key = "sk-test-1234"\n', {}),
        ("", {"SKILLRT_STATE_URL": "postgresql://u@127.0.0.1/db"}),  # the shared store
        ("", {"SKILLRT_LLM": '{"provider": "openai"}'}),  # JSON: pydantic-settings decodes it
        ("", {"SKILLRT_LOG_LEVEL": "info", "skillrt_log_level": "debug"}),  # two spellings
        ("", {"SKILLRT_NOT_A_SETTING": "1"}),
    ],
)
def test_any_other_setting_leaves_it_to_runtime_config(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, text: str, env: dict[str, str]
) -> None:
    (isolated / "skillrt.toml").write_text(text)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert read_store_config() is None


@pytest.mark.parametrize(
    "text",
    [
        "checkpoint_max_age_h = -1\n",
        'log_level = "loud"\n',
        '[llm]\nprovider = "magic"\n',
        "state_dir = 3\n",
        "checkpoint_max_age_h = { h = 1 }\n",
    ],
)
def test_a_bad_value_is_reported_by_runtime_config(isolated: Path, text: str) -> None:
    (isolated / "skillrt.toml").write_text(text)
    assert read_store_config() is None  # so `skillrt tasks` fails as every command does
    with pytest.raises(ConfigError) as info:
        load_config()
    assert info.value.source.endswith("skillrt.toml")


def test_the_shipped_defaults_set_no_secret_and_no_shared_store(isolated: Path) -> None:
    # StoreConfig holds neither: were the shipped file to set one, it would be wrong.
    config = load_config()
    assert config.secret_values() == [] and config.state_url is None


# Values at the edges of what RuntimeConfig's fields take: each is either read here to the
# same value, or left to RuntimeConfig (which holds it, or reports it).
_EDGES = {
    "SKILLRT_CHECKPOINT_MAX_AGE_H": [
        "2.5",
        "3",
        "007.50",
        "1e3",
        " 3",
        "3 ",
        "+3",
        "inf",
        "nan",
        "0",
        "0.0",
        "-1",
        "3_0",
        "\u0663",
        "",
        "1" * 400,
    ],
    "SKILLRT_LOG_LEVEL": ["info", "INFO", " info", "", "error"],
    "SKILLRT_STATE_DIR": ["", " ", "~/state", "rel/state", "null", "a\udcffb"],
    "SKILLRT_LOG_FILE": ["", "x.log", "~/x.log"],
    "SKILLRT_LLM__PROVIDER": ["local", "Local", "python", ""],
    "SKILLRT_LLM__SCRIPT_PATH": ["s.json", ""],
    "SKILLRT_CONTENT_ROOT": ["", ".", "~"],
}


@pytest.mark.parametrize(
    ("name", "value"), [(name, value) for name, values in _EDGES.items() for value in values]
)
def test_an_edge_value_in_the_environment_reads_the_same_or_is_left(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    _read_the_same_or_left()


@pytest.mark.parametrize(
    "text",
    [
        "checkpoint_max_age_h = 5\n",
        "checkpoint_max_age_h = 0.5\n",
        "checkpoint_max_age_h = 0\n",
        "checkpoint_max_age_h = true\n",
        "checkpoint_max_age_h = inf\n",
        "checkpoint_max_age_h = nan\n",
        "checkpoint_max_age_h = 1e300\n",
        "checkpoint_max_age_h = 12345678901234567890123\n",
        'checkpoint_max_age_h = "6"\n',
        'checkpoint_max_age_h = "6.5"\n',
        'log_level = "WARNING"\n',
        "log_level = 1\n",
        'state_dir = ""\n',
        "state_dir = 1.5\n",
        "log_file = false\n",
        'content_root = "sub"\n',
        "content_root = []\n",
        '[llm]\nprovider = "scripted"\nscript_path = "x.json"\n',
        "[llm]\nscript_path = 3\n",
        "[llm]\n",
    ],
)
def test_an_edge_value_in_a_file_reads_the_same_or_is_left(isolated: Path, text: str) -> None:
    (isolated / "skillrt.toml").write_text(text, encoding="utf-8")
    _read_the_same_or_left()


def _read_the_same_or_left() -> None:
    light = read_store_config()
    try:
        full = load_config()
    except ConfigError:
        assert light is None  # RuntimeConfig reports it: so must skillrt tasks
        return
    if light is not None:
        _same(light, full)
        assert type(light.checkpoint_max_age_h) is type(full.checkpoint_max_age_h)
