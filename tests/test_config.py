"""Config layering and clear errors for malformed files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from skillrt import ConfigError, load_config
from skillrt._io.logs import Redactor, make_logger
from skillrt.settings import config_files


def test_defaults_come_from_the_packaged_file(isolated: Path) -> None:
    config = load_config()
    assert config.watchdog_timeout_s == 300
    assert config.intent_cache_size == 50
    assert config.state_path == (isolated / ".skillrt").resolve()
    assert config_files()[0].name == "default.toml"


def test_layers_override_in_order(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = isolated.parent / "xdg" / "skillrt" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('watchdog_timeout_s = 100\nposts_dir = "blog"\n[llm]\nmodel = "user"\n')
    (isolated / "skillrt.toml").write_text("watchdog_timeout_s = 50\n[llm]\ntimeout_s = 5\n")
    monkeypatch.setenv("SKILLRT_LLM__MODEL", "from-env")
    config = load_config(history_limit=7)
    assert config.watchdog_timeout_s == 50  # ./skillrt.toml beats the user file
    assert config.posts_dir == "blog"  # the user file beats the default
    assert config.llm.model == "from-env"  # the environment beats files
    assert config.llm.timeout_s == 5  # sections merge key by key
    assert config.history_limit == 7  # keywords beat everything


def test_malformed_value_names_file_key_and_expectation(isolated: Path) -> None:
    (isolated / "skillrt.toml").write_text('[llm]\ntimeout_s = "soon"\n')
    with pytest.raises(ConfigError) as info:
        load_config()
    assert info.value.source.endswith("skillrt.toml")
    assert info.value.key == "llm.timeout_s"
    assert "number" in info.value.expected
    assert "skillrt.toml: llm.timeout_s: expected" in str(info.value)


def test_unknown_key_is_refused(isolated: Path) -> None:
    (isolated / "skillrt.toml").write_text("watchdog_timeuot_s = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert info.value.key == "watchdog_timeuot_s"


def test_toml_syntax_error(isolated: Path) -> None:
    (isolated / "skillrt.toml").write_text("this is = = not toml\n")
    with pytest.raises(ConfigError, match=r"skillrt.toml: \(syntax\): expected valid TOML"):
        load_config()


def test_bad_environment_variable(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLRT_WATCHDOG_TIMEOUT_S", "-1")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert info.value.source == "$SKILLRT_WATCHDOG_TIMEOUT_S"


def test_logs_are_json_lines_and_secrets_are_redacted(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-envkey-0123456789abcdef")
    config = load_config(log_format="json", log_level="info", secrets=["hunter2-secret"])
    out = io.StringIO()
    logger = make_logger(config, Redactor(config.secret_values()), stream=out)
    logger.info(
        "agent.input.received",
        input="my password is hunter2-secret and key sk-envkey-0123456789abcdef",
        api_key="plain",
        nested={"authorization": "Bearer abcdefghijklmnopqrstuvwxyz"},
    )
    logger.debug("agent.state.changed")  # below the level: dropped
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["event"] == "agent.input.received"
    assert entry["level"] == "info"
    text = lines[0]
    assert "hunter2-secret" not in text and "sk-envkey" not in text and "plain" not in text
    assert "abcdefghijklmnop" not in text
    assert entry["input"].count("***") == 2


def test_the_design_names_of_the_embedded_models_settings_work(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DESIGN.md names ``llm.local.safe`` (``SKILLRT_LLM__LOCAL__SAFE``) and
    ``llm.route_with_model``; both were refused as unknown keys (exit 2)."""
    config = load_config(llm={"local": {"safe": True}, "route_with_model": True})
    assert config.llm.local_mode == "no-extra-bufts" and config.llm.route_with_embedded is True
    monkeypatch.setenv("SKILLRT_LLM__LOCAL__SAFE", "false")
    monkeypatch.setenv("SKILLRT_LLM__ROUTE_WITH_MODEL", "false")
    config = load_config()
    assert config.llm.local_mode == "default" and config.llm.route_with_embedded is False
    monkeypatch.setenv("SKILLRT_LLM__LOCAL__SAFE", "auto")
    assert load_config().llm.local_mode == "auto"
    monkeypatch.setenv("SKILLRT_LLM__LOCAL__SAFE", "maybe")
    with pytest.raises(ConfigError, match="SKILLRT_LLM__LOCAL__SAFE"):
        load_config()


@pytest.mark.parametrize(
    ("name", "value", "key"),
    [
        ("SKILLRT_SECRETS", "pw-0123456789", "secrets"),
        ("SKILLRT_SERVE__CORS_ORIGINS", "http://x.example", "serve.cors_origins"),
        ("SKILLRT_QUEUE__LIMITS", "model-x", "queue.limits"),
    ],
)
def test_a_list_variable_that_is_no_json_is_a_config_error(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, key: str
) -> None:
    """``SKILLRT_SECRETS=pw1`` gave every command a 58-line traceback and exit 1."""
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert str(raised.value).startswith(f"${name}: {key}: expected JSON")
    assert value not in str(raised.value)  # (a secret is not shown)


def test_a_config_file_that_is_a_folder_is_a_config_error(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``skillrt.toml`` folder was skipped without a word, its settings not in force."""
    monkeypatch.chdir(isolated)
    (isolated / "skillrt.toml").mkdir()
    with pytest.raises(
        ConfigError, match=r"skillrt\.toml: \(file\): expected a file, not a folder"
    ):
        load_config()


@pytest.mark.parametrize("value", [-1, 2.5, 50])
def test_a_temperature_out_of_range_is_a_config_error(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, value: float
) -> None:
    """``llm.temperature = -1`` (or 50) was taken, and failed each model call later."""
    monkeypatch.setenv("SKILLRT_LLM__TEMPERATURE", str(value))
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.source == "$SKILLRT_LLM__TEMPERATURE"
    assert raised.value.key == "llm.temperature"
    monkeypatch.setenv("SKILLRT_LLM__TEMPERATURE", "0.7")
    assert load_config().llm.temperature == 0.7


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[llm]\ntimeout_s = inf\n", "llm.timeout_s"),
        ("[budget]\nmax_cost = inf\n", "budget.max_cost"),
        ("watchdog_timeout_s = inf\n", "watchdog_timeout_s"),
        ("[llm]\ntemperature = nan\n", "llm.temperature"),
    ],
)
def test_inf_and_nan_from_toml_are_config_errors(isolated: Path, toml: str, key: str) -> None:
    """TOML writes ``inf`` and ``nan``: ``llm.timeout_s = inf`` was taken (a limit that never
    comes), as was any other float setting with no upper bound."""
    (isolated / "skillrt.toml").write_text(toml)
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.key == key
    assert "finite" in raised.value.expected or "less than" in raised.value.expected


def test_inf_from_the_environment_is_a_config_error(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_LLM__TIMEOUT_S", "inf")
    with pytest.raises(ConfigError, match="finite") as raised:
        load_config()
    assert raised.value.source == "$SKILLRT_LLM__TIMEOUT_S"


def test_a_log_file_that_is_a_folder_is_a_config_error(isolated: Path) -> None:
    """A ``log_file`` folder was dropped by the command line without a word (no log line
    kept anywhere), and failed the runtime with ``IsADirectoryError``."""
    (isolated / "logs").mkdir()
    (isolated / "skillrt.toml").write_text('log_file = "logs"\n')
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.key == "log_file"
    assert raised.value.source.endswith("skillrt.toml")
    assert "a file, not a folder" in raised.value.expected
    (isolated / "skillrt.toml").write_text('log_file = "logs/skillrt.log"\n')
    assert load_config().log_file == Path("logs/skillrt.log")


@pytest.mark.parametrize(
    ("name", "wording"),
    [
        ("SKILLRT_WATCHDOG_TIMEOUT", "did you mean $SKILLRT_WATCHDOG_TIMEOUT_S?"),
        ("SKILLRT_POST_DIR", "did you mean $SKILLRT_POSTS_DIR?"),
        ("SKILLRT_LMM__MODEL", "expected a section: "),
    ],
)
def test_a_variable_spelt_like_a_setting_it_is_not_is_a_config_error(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, name: str, wording: str
) -> None:
    """``SKILLRT_WATCHDOG_TIMEOUT=5`` (the ``_S`` left off) was ignored without a word, while a
    misspelt key in a section (``SKILLRT_LLM__MODLE``) was refused."""
    monkeypatch.setenv(name, "5")
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.source == f"${name}"
    assert wording in str(raised.value)


def test_a_variable_of_another_tool_is_left_alone(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The prefix is shared: the HTTP client's SKILLRT_URL, the tests' SKILLRT_REQUIRE_*.
    for name in ("SKILLRT_URL", "SKILLRT_TOKEN", "SKILLRT_REQUIRE_CHROMIUM", "SKILLRT_BOGUS"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("SKILLRT_WATCHDOG_TIMEOUT_S", "5")
    assert load_config().watchdog_timeout_s == 5


@pytest.mark.parametrize("folder", ["..", "posts/../..", "/etc"])
def test_a_posts_dir_outside_the_blog_is_a_config_error(isolated: Path, folder: str) -> None:
    """``posts_dir = ".."`` (or ``/etc``) was taken: ``skillrt index`` read Markdown outside
    the blog and dropped every post of the index, while the layout read ``/etc`` as ``etc``."""
    (isolated / "skillrt.toml").write_text(f'posts_dir = "{folder}"\n')
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.key == "posts_dir"
    assert raised.value.expected.startswith(
        "a folder inside the content root"
    )  # (no "Value error")


def test_a_posts_dir_written_absolute_inside_the_blog_is_kept_relative(isolated: Path) -> None:
    (isolated / "content" / "posts").mkdir(parents=True)
    config = load_config(posts_dir=str(isolated / "content" / "posts"))
    assert config.posts_dir == "content/posts"
    assert config.layout.posts_dir == "content/posts"
    assert load_config(posts_dir="content/posts/").posts_dir == "content/posts/"  # (as given)
