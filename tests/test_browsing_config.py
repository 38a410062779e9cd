"""The browsing settings (``[browser]``, ``[browser.search]``) live with the browsing skills:
the runtime keeps the sections as written, ``browser_config`` validates them with the same
defaults, layers and clear errors as every other setting, and ``skillrt doctor`` checks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillrt import ConfigError, load_config
from skillrt.skills.browsing.config import BrowserConfig, SearchConfig, browser_config
from skillrt.skills.browsing.skills import close_pending_browsers
from skillrt.testing import FunctionModel
from tests.browsing_support import make_runtime
from tests.cli_support import cli_env, make_blog, skillrt, write_script

BRAVE_KEY = "brave-key-5f2a9c"


def test_the_defaults_are_the_shipped_ones(isolated: Path) -> None:
    config = browser_config(load_config())
    assert config == BrowserConfig()  # default.toml and the model agree
    assert (config.backend, config.timeout_s, config.max_steps) == ("http", 20.0, 15)
    assert (config.follow_up_s, config.max_page_bytes, config.read_concurrency) == (600, 5e6, 4)
    assert config.search == SearchConfig(provider="duckduckgo", max_results=5)


def test_environment_variables_set_browser_and_search_keys(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLRT_BROWSER__TIMEOUT_S", "5")
    monkeypatch.setenv("SKILLRT_BROWSER__BACKEND", "chromium")
    monkeypatch.setenv("SKILLRT_BROWSER__ALLOW_PRIVATE", '["127.0.0.1:8000"]')
    monkeypatch.setenv("SKILLRT_BROWSER__DENY", '["evil.example"]')
    monkeypatch.setenv("SKILLRT_BROWSER__SEARCH__PROVIDER", "brave")
    monkeypatch.setenv("SKILLRT_BROWSER__SEARCH__MAX_RESULTS", "3")
    monkeypatch.setenv("SKILLRT_BROWSER__SEARCH__API_KEY", BRAVE_KEY)
    loaded = load_config()
    config = browser_config(loaded)
    assert config.timeout_s == 5 and config.backend == "chromium"
    assert config.allow_private == ["127.0.0.1:8000"] and config.deny == ["evil.example"]
    assert config.search.provider == "brave" and config.search.max_results == 3
    assert config.search.api_key == SecretStr(BRAVE_KEY)
    assert config.max_steps == 15  # what nobody set keeps its default
    assert BRAVE_KEY in loaded.secret_values()  # redacted from logs and checkpoints
    assert BRAVE_KEY not in repr(loaded) and BRAVE_KEY not in str(loaded.browser)


def test_config_files_keywords_and_the_environment_layer_key_by_key(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = isolated.parent / "xdg" / "skillrt" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[browser]\nmax_steps = 8\ndeny = ["user.example"]\n')
    (isolated / "skillrt.toml").write_text(
        "[browser]\nmax_steps = 4\nfollow_up_s = 0\n"
        '[browser.search]\nprovider = "searxng"\nurl = "http://127.0.0.1:8888"\n'
    )
    monkeypatch.setenv("SKILLRT_BROWSER__FOLLOW_UP_S", "30")
    config = browser_config(load_config(browser={"planning_interval": 2}))
    assert config.max_steps == 4  # ./skillrt.toml beats the user file
    assert config.deny == ["user.example"]  # the user file beats the default
    assert config.follow_up_s == 30  # the environment beats files
    assert config.planning_interval == 2  # keywords, merged with the rest of the section
    assert config.search.provider == "searxng" and config.search.url == "http://127.0.0.1:8888"
    assert config.search.max_results == 5 and config.timeout_s == 20  # defaults kept


def test_a_bad_value_in_a_file_names_the_file_the_key_and_what_was_expected(
    isolated: Path,
) -> None:
    (isolated / "skillrt.toml").write_text("[browser]\ntimeout_s = -1\n")
    loaded = load_config()  # the runtime starts: the section belongs to the browsing skills
    with pytest.raises(ConfigError) as info:
        browser_config(loaded)
    assert info.value.source.endswith("skillrt.toml")
    assert info.value.key == "browser.timeout_s"
    assert "greater than 0" in info.value.expected and info.value.got == -1


@pytest.mark.parametrize("key", ["timeout_s", "parse_timeout_s", "follow_up_s"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_a_float_setting_must_be_finite(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str
) -> None:
    """``[browser]`` / ``timeout_s = inf`` was taken (a fetch with no deadline), as the core
    settings no longer take it; ``nan`` compared false with every limit."""
    (isolated / "skillrt.toml").write_text(f"[browser]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as info:
        browser_config(load_config())
    assert info.value.source.endswith("skillrt.toml") and info.value.key == f"browser.{key}"
    (isolated / "skillrt.toml").unlink()
    monkeypatch.setenv(f"SKILLRT_BROWSER__{key.upper()}", value)
    with pytest.raises(ConfigError) as info:
        browser_config(load_config())
    assert info.value.key == f"browser.{key}"


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("SKILLRT_BROWSER__BACKEND", "firefox", "browser.backend"),
        ("SKILLRT_BROWSER__SEARCH__PROVIDER", "bing", "browser.search.provider"),
        ("SKILLRT_BROWSER__ALLOW", "example.org", "browser.allow"),  # a list wants JSON
        ("SKILLRT_BROWSER__MAX_STEPZ", "3", "browser.max_stepz"),  # no such key
    ],
)
def test_a_bad_environment_variable_is_named(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, key: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as info:
        browser_config(load_config())
    assert info.value.source == f"${variable}"
    assert info.value.key == key


def test_a_bad_keyword_argument_is_named(isolated: Path) -> None:
    with pytest.raises(ConfigError, match=r"keyword arguments: browser\.max_failures"):
        browser_config(load_config(browser={"max_failures": 0}))


async def test_a_browse_with_a_bad_setting_ends_with_that_error(isolated: Path) -> None:
    def never(messages: object, options: object) -> object:
        raise AssertionError("no model call with a bad setting")

    rt = make_runtime(isolated, FunctionModel(never), max_steps="many")
    try:
        msg = await rt.run_skill("Browse", {"task": "look", "url": "http://127.0.0.1:9/"})
    finally:
        await rt.close()
        await close_pending_browsers()
    assert msg.state == "ERROR"
    assert "browser.max_steps" in msg.content and "integer" in msg.content


def test_doctor_checks_the_browser_section(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    env = cli_env(blog, write_script(tmp_path / "s.json", []))
    good = skillrt("doctor", "--json", env=env, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    checks = {c["name"]: c for c in json.loads(good.stdout)["checks"]}
    assert checks["[browser] settings"]["status"] == "ok"
    assert checks["browser backend"]["value"] == "http"

    (tmp_path / "skillrt.toml").write_text('[browser]\nbackend = "chromium"\ntimeout_s = 0\n')
    bad = skillrt("doctor", "--json", env=env, cwd=tmp_path)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    checks = {c["name"]: c for c in json.loads(bad.stdout)["checks"]}
    problem = checks["[browser] settings"]
    assert problem["status"] == "fail"
    assert "skillrt.toml: browser.timeout_s: expected" in problem["value"]
    assert checks["browser backend"]["value"] == "chromium"  # read as written all the same
