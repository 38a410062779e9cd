"""``skillrt doctor`` reads the config without pydantic-settings (cli/doctorconfig.py): where
the sources merge plainly, the values are the ones ``RuntimeConfig`` holds, field by field;
anywhere else (another case of a key, a list or table in a variable, an unknown key, a bad
value or file) it steps aside, and ``RuntimeConfig`` reads or reports it as before."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillrt import ConfigError, load_config
from skillrt._io.settings_fields import RuntimeFields
from skillrt.cli.doctorconfig import read_runtime_fields
from skillrt.settings import RuntimeConfig
from tests.cli_support import cli_env, skillrt_reporting_modules, write_script


def _user_file(isolated: Path, text: str) -> None:
    user = isolated.parent / "xdg" / "skillrt" / "config.toml"  # $XDG_CONFIG_HOME (conftest)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(text, encoding="utf-8")


def _same(light: RuntimeFields, full: RuntimeConfig) -> None:
    assert type(full) is RuntimeConfig and type(light) is RuntimeFields
    assert light.model_dump() == full.model_dump()  # SecretStr compares its value
    for name in RuntimeFields.model_fields:
        assert type(getattr(light, name)) is type(getattr(full, name)), name
    assert light.root == full.root and light.state_path == full.state_path
    assert light.layout == full.layout
    assert light.secret_values() == full.secret_values()
    assert light._keywords == full._keywords


# (user file, project file ./skillrt.toml, variables, keyword arguments): read here.
PLAIN: dict[str, tuple[str, str, dict[str, str], dict[str, Any]]] = {
    "the shipped defaults": ("", "", {}, {}),
    "each layer over the one below": (
        '[llm]\nprovider = "local"\nmodel = "a"\ntimeout_s = 9\n[serve]\nport = 9000\n',
        '[llm]\nmodel = "b"\n[serve]\nhost = "0.0.0.0"\n',
        {"SKILLRT_LLM__TIMEOUT_S": "5", "SKILLRT_LOG_LEVEL": "info"},
        {"posts_dir": "notes"},
    ),
    "a table, a scalar, a table": (
        '[browser]\nbackend = "chromium"\n[browser.search]\nprovider = "brave"\n',
        "browser = 5\n",
        {},
        {"browser": {"timeout_s": 3}},
    ),
    "secrets in files and variables": (
        'secrets = ["pw-user-0001", { value = "pw-entry-0002", origins = ["https://a.test"] }]\n',
        '[browser.search]\napi_key = "brave-key-0003"\n[serve]\ntoken = "tok-0004"\n',
        {"SKILLRT_LLM__API_KEY": "sk-key-0005"},
        {},
    ),
    "MCP servers": (
        '[mcp.servers.notes]\ncommand = "notes-server"\nargs = ["--x"]\n'
        '[mcp.servers.notes.env]\nAPI_TOKEN = "t-0006"\n',
        '[mcp.servers.web]\nurl = "http://127.0.0.1:3001/mcp"\n'
        '[mcp.servers.web.headers]\nAuthorization = "Bearer b-0007"\n',
        {},
        {},
    ),
    "names in any case, empty values, text for numbers and flags": (
        "",
        'state_dir = "elsewhere"\n',
        {
            "skillrt_llm__model": "lower",
            "SKILLRT_Log_Level": "debug",
            "SKILLRT_STATE_URL": "",
            "SKILLRT_CHECKPOINTS": "false",
            "SKILLRT_HISTORY_LIMIT": " 7",
            "SKILLRT_LLM__BASE_URL": "",
            "SKILLRT_EDIT__CONFIRM": "yes",
            "SKILLRT_BUDGET__MAX_COST": "1e3",
        },
        {"content_root": Path("blog")},
    ),
    "SKILLRT_CONFIG names the project file": (
        'log_level = "error"\n',
        "",
        {"SKILLRT_CONFIG": "other.toml"},
        {},
    ),
    "a shared store and keyword arguments over everything": (
        'state_url = "postgresql://u@127.0.0.1/db"\nlease_s = 3\n',
        '[queue]\nenabled = true\nlimits = { "model:x" = 2 }\n',
        {"SKILLRT_QUEUE__CONCURRENCY": "2"},
        {"lease_s": 4.5, "queue": {"poll_s": 2}, "llm": {"model": "kw"}},
    ),
}


@pytest.mark.parametrize("case", sorted(PLAIN))
def test_plain_sources_are_read_as_runtime_config_reads_them(
    case: str, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, project, env, overrides = PLAIN[case]
    if user:
        _user_file(isolated, user)
    if project:
        (isolated / "skillrt.toml").write_text(project, encoding="utf-8")
    (isolated / "other.toml").write_text('log_level = "info"\n[llm]\nmodel = "o"\n', "utf-8")
    (isolated / "blog" / "posts").mkdir(parents=True)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    light = read_runtime_fields(**overrides)
    assert light is not None, "the config should have been read without pydantic-settings"
    _same(light, load_config(**overrides))


# Read by RuntimeConfig only: what it would match or decode otherwise, and what fails.
ASIDE: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
    "a key in another case": ('Log_Level = "info"\n', {}, {}),
    "a section in another case": ('[LLM]\nmodel = "x"\n', {}, {}),
    "a keyword in another case": ("", {}, {"LOG_LEVEL": "info"}),
    "JSON for a section": ("", {"SKILLRT_LLM": '{"model": "x"}'}, {}),
    "JSON for a list": ("", {"SKILLRT_SECRETS": '["pw-0008"]'}, {}),
    "a list in a section": ("", {"SKILLRT_SERVE__CORS_ORIGINS": '["https://a.example"]'}, {}),
    "a table's key": ("", {"SKILLRT_BROWSER__BACKEND": "chromium"}, {}),
    "a table in a section": ("", {"SKILLRT_QUEUE__LIMITS": '{"model:x": 1}'}, {}),
    "one variable spelt twice": ("", {"SKILLRT_LOG_LEVEL": "info", "skillrt_log_level": "x"}, {}),
    "a variable for no field": ("", {"SKILLRT_BOGUS": "1"}, {}),
    "a variable below a plain field": ("", {"SKILLRT_LOG_LEVEL__X": "1"}, {}),
}


@pytest.mark.parametrize("case", sorted(ASIDE))
def test_other_sources_are_left_to_runtime_config(
    case: str, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, env, overrides = ASIDE[case]
    (isolated / "skillrt.toml").write_text(project, encoding="utf-8")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert read_runtime_fields(**overrides) is None
    with contextlib.suppress(ConfigError):  # some fail there, as before
        load_config(**overrides)


@pytest.mark.parametrize(
    ("project", "env", "wording"),
    [
        ("bogus = 1\n", {}, "skillrt.toml: bogus:"),
        ('[llm]\ntimeout_s = "soon"\n', {}, "skillrt.toml: llm.timeout_s:"),
        ("[llm\n", {}, "skillrt.toml: (syntax):"),
        ("", {"SKILLRT_LLM__TIMEOUT_S": "-1"}, "$SKILLRT_LLM__TIMEOUT_S: llm.timeout_s:"),
        ("", {"SKILLRT_CONFIG": "missing.toml"}, "$SKILLRT_CONFIG: path:"),
        ('[mcp.servers.x]\nurl = "ftp://a"\n', {}, "skillrt.toml: mcp.servers.x:"),
    ],
)
def test_a_bad_config_is_reported_by_runtime_config(
    project: str, env: dict[str, str], wording: str, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated / "skillrt.toml").write_text(project, encoding="utf-8")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert read_runtime_fields() is None
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert wording in str(caught.value)


def _doctor(tmp_path: Path, root: Path, **env: str) -> tuple[dict[str, Any], list[str]]:
    script = write_script(tmp_path / "script.json", [])
    done, modules = skillrt_reporting_modules(
        "doctor",
        "--no-generate",
        "--json",
        env={**cli_env(root, script, HOME=str(tmp_path)), **env},
        cwd=root,
        report=tmp_path / "modules.json",
    )
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)
    for check in found["checks"]:
        if check["name"] == "disk":
            check["value"] = "(free space)"
    return found, modules


def test_doctor_reports_the_same_through_either_reading(tmp_path: Path) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / "posts" / "hello.md").write_text("# Hello\n", encoding="utf-8")
    (root / "skillrt.toml").write_text(
        '[browser]\nbackend = "http"\ntimeout_s = 5\n[serve]\nport = 9001\n', encoding="utf-8"
    )
    light, light_modules = _doctor(tmp_path, root)
    # The same [browser] table again, from a variable: RuntimeConfig reads this config.
    full, full_modules = _doctor(tmp_path, root, SKILLRT_BROWSER__BACKEND="http")
    assert light == full
    assert "pydantic_settings" in full_modules and "skillrt.settings" in full_modules
    # The plain config is read without pydantic-settings (and its asyncio, argparse, dotenv).
    loaded = [m for m in light_modules if m.split(".")[0] in {"pydantic_settings", "dotenv"}]
    assert loaded == [] and "skillrt.settings" not in light_modules
    assert "asyncio" not in light_modules and "argparse" not in light_modules
    # ...and a bad value in that [browser] table is a finding either way, worded the same.
    (root / "skillrt.toml").write_text('[browser]\ntimeout_s = "soon"\n', encoding="utf-8")
    light, light_modules = _doctor(tmp_path, root)
    full, _ = _doctor(tmp_path, root, SKILLRT_BROWSER__BACKEND="http")
    assert light == full and "skillrt.settings" not in light_modules
    bad = [c for c in light["checks"] if c["name"] == "[browser] settings"]
    assert bad[0]["status"] == "fail" and "skillrt.toml: browser.timeout_s:" in bad[0]["value"]


def test_loading_the_config_builds_no_second_validator(tmp_path: Path) -> None:
    # RuntimeConfig builds its own validator; RuntimeFields' (doctor's) is built at its first
    # use only, so every other command pays for one, as before.
    code = (
        "import json, skillrt.settings as s; from skillrt._io.settings_fields import RuntimeFields"
        " as F; s.load_config(); print(json.dumps([s.RuntimeConfig.__pydantic_complete__,"
        " F.__pydantic_complete__]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**cli_env(tmp_path, write_script(tmp_path / "s.json", []), HOME=str(tmp_path))},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == [True, False]
