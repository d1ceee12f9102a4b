"""Issue 12, environment side (items 7, 8, 9): ``CLAUDE_ENV_FILE`` reaching later Bash commands, the settings
``env`` block for hooks and Bash, secrets withheld from hooks unless ``commandHookAllowedEnvVars`` passes them.
Real scripts, through ``hookloop hooks test`` (a subprocess) and live Worker runs with the real Bash tool.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hookloop import Text, ToolUse
from hookloop.command_hooks.environment import env_allowed, is_secret, is_secret_name
from hookloop.tools.builtin import Workspace, builtin_tools

from .cc_setup import Setup, Shell, pre_tool, results, setup

pytestmark = pytest.mark.anyio
__all__ = ["setup"]  # the fixture, imported for pytest

# -- 7. CLAUDE_ENV_FILE -----------------------------------------------------------------------------------------

SESSION_SETUP = """
set -euo pipefail
input=$(cat)
echo "export PROJECT_TOOLCHAIN='node-22 (pinned)'" >> "$CLAUDE_ENV_FILE"
echo 'export PATH="$HOME/toolbin:$PATH"' >> "$CLAUDE_ENV_FILE"
echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "toolchain ready"}}'
"""


def session_env_settings(setup: Setup) -> None:
    hook = setup.script(setup.home / ".claude" / "hooks" / "session-setup.sh", SESSION_SETUP)
    setup.user_settings({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": str(hook)}]}]}})
    setup.script(setup.home / "toolbin" / "mytool", 'echo "mytool from toolbin"')


def test_hooks_test_gives_session_start_a_claude_env_file(setup: Setup) -> None:
    session_env_settings(setup)
    report = setup.hooks_test("SessionStart", {"session_id": "abc", "source": "startup"})
    (run,) = report["hooks"]
    assert run["exit_code"] == 0, run["stderr"]
    assert "unbound variable" not in run["stderr"]
    assert report["merged"]["additional_context"] == ["toolchain ready"]
    assert report["env_file"].startswith(str(setup.hookloop_home / "session-env" / "abc"))
    assert "PROJECT_TOOLCHAIN" in report["env_exports"]


async def test_session_start_exports_reach_later_bash_commands(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    session_env_settings(setup)
    monkeypatch.setenv("HOME", str(setup.home))
    turns = [
        [ToolUse("Bash", {"command": 'echo "toolchain=$PROJECT_TOOLCHAIN"; mytool'})],
        [ToolUse("Bash", {"command": "echo again=$PROJECT_TOOLCHAIN"})],
        [Text("ok")],
    ]
    worker = setup.worker(turns, builtin_tools(Workspace(setup.project)), session_id="sess-env-1")
    await worker.run("check the toolchain")
    first, second = results(worker)
    assert not first.is_error, first.content
    assert "toolchain=node-22 (pinned)" in first.content
    assert "mytool from toolbin" in first.content
    assert "again=node-22 (pinned)" in second.content
    folder = setup.hookloop_home / "session-env" / "sess-env-1"
    assert (folder.stat().st_mode & 0o777) == 0o700


def test_session_env_files_replace_per_event_and_resist_odd_ids(tmp_path: Path) -> None:
    from hookloop.command_hooks.environment import SessionEnvFiles

    files = SessionEnvFiles(tmp_path / "session-env")
    Path(files.path_for("s", "SessionStart")).write_text("export A=1\n")
    Path(files.path_for("s", "CwdChanged")).write_text("export B=2")
    Path(files.path_for("s", "Setup")).write_text("export C=3\n")
    assert files.script("s") == "export C=3\nexport A=1\nexport B=2\n"
    files.path_for("s", "CwdChanged")  # a new firing starts the file empty
    assert files.script("s") == "export C=3\nexport A=1\n"
    assert files.script("other") is None
    for odd in ("../../etc", "/abs", "a/b", "..", ""):
        assert files.folder(odd).parent == files.root


# -- 8. the settings env block ----------------------------------------------------------------------------------

TEAM_CHECK = """
input=$(cat)
if [ "${DEPLOY_TEAM:-}" != "platform" ]; then
  echo "DEPLOY_TEAM is '${DEPLOY_TEAM:-}'" >&2
  exit 2
fi
printf '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "team %s"}}' "$DEPLOY_TEAM"
"""


def team_settings(setup: Setup) -> None:
    check = setup.script(setup.home / ".claude" / "hooks" / "team-check.sh", TEAM_CHECK)
    setup.user_settings(
        {
            "env": {"DEPLOY_TEAM": "platform", "BUILD_LEVEL": 3},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(check)}]}]},
        }
    )


def test_the_env_block_reaches_hooks_in_hooks_test(setup: Setup) -> None:
    team_settings(setup)
    report = setup.hooks_test("PreToolUse", pre_tool("make deploy"))
    assert report["merged"]["decision"] == "continue", report["hooks"][0]["stderr"]
    assert report["merged"]["additional_context"] == ["team platform"]


async def test_the_env_block_reaches_hooks_and_bash_in_a_live_run(setup: Setup) -> None:
    team_settings(setup)
    turns = [[ToolUse("Bash", {"command": "echo team=$DEPLOY_TEAM level=$BUILD_LEVEL"})], [Text("ok")]]
    worker = setup.worker(turns, builtin_tools(Workspace(setup.project)))
    await worker.run("deploy")
    (result,) = results(worker)
    assert "team=platform level=3" in result.content
    assert "DEPLOY_TEAM" not in os.environ


def test_a_project_env_block_needs_trust(setup: Setup) -> None:
    setup.project_settings({"env": {"BASH_ENV": "/tmp/evil.sh", "SAFE": "1"}})
    untrusted = setup.load()
    assert "BASH_ENV" not in untrusted.config.env
    assert any("env block" in d.message for d in untrusted.diagnostics)
    assert setup.load(trust_project=True).config.env == {"BASH_ENV": "/tmp/evil.sh", "SAFE": "1"}
    from hookloop.command_hooks.trust import project_config_digest

    before = project_config_digest(setup.project)
    setup.project_settings({"env": {"BASH_ENV": "/tmp/other.sh"}})
    assert project_config_digest(setup.project) != before


# -- 9. secrets are withheld from hooks --------------------------------------------------------------------------

ENV_DUMP = """
import json, os, sys
sys.stdin.read()
with open(os.environ["DUMP_TO"], "w") as out:
    json.dump(sorted(os.environ), out)
"""

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-x",
    "OPENAI_API_KEY": "sk-x",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "GITHUB_TOKEN": "ghp_x",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer x",
    "DATABASE_URL": "postgres://app:hunter2@db:5432/app",
    "NPM_AUTH": "x",
    "MYSERVICEAPIKEY": "x",
    "CI_HELPER_VALUE": "github_pat_" + "A1b2" * 10,
}


def dump_settings(setup: Setup, **extra: Any) -> Path:
    dump = setup.script(setup.home / ".claude" / "hooks" / "dump-env.py", ENV_DUMP, python=True)
    out = setup.root / "env.json"
    setup.user_settings({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(dump)}]}]}, **extra})
    return out


def test_hooks_test_withholds_secrets_and_passes_allowed_ones(setup: Setup) -> None:
    out = dump_settings(setup, commandHookAllowedEnvVars=["GITHUB_TOKEN"])
    setup.extra_env.update({**SECRETS, "DUMP_TO": str(out), "PLAIN_SETTING": "ok", "DATABASE_HOST": "db"})
    setup.hooks_test("PreToolUse", pre_tool("ls"))
    names = set(json.loads(out.read_text()))
    assert {"PLAIN_SETTING", "DATABASE_HOST", "PATH", "HOME", "CLAUDE_PROJECT_DIR", "GITHUB_TOKEN"} <= names
    assert names.isdisjoint(set(SECRETS) - {"GITHUB_TOKEN"})


async def test_live_hooks_never_see_provider_keys(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    out = dump_settings(setup)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DUMP_TO", str(out))
    shell = Shell()
    worker = setup.worker([[ToolUse("Bash", {"command": "ls"})], [Text("ok")]], [shell.tool])
    await worker.run("go")
    names = set(json.loads(out.read_text()))
    assert names.isdisjoint(SECRETS)
    assert "DUMP_TO" in names


def test_a_project_file_cannot_pass_secrets(setup: Setup) -> None:
    setup.project_settings({"commandHookAllowedEnvVars": ["ANTHROPIC_*"]})
    config = setup.load(trust_project=True).config
    assert config.env_allowlist == ()
    assert any(d.path == "commandHookAllowedEnvVars" and d.severity == "warning" for d in config.diagnostics)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_BASE_URL", True),
        ("OPENAI_ORG_ID", True),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", True),
        ("GH_TOKEN", True),
        ("SSH_AUTH_SOCK", True),
        ("db_password", True),
        ("STRIPE_SECRET", True),
        ("SENTRY_DSN", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("HOOKLOOP_CHECKPOINT_KEY", True),
        ("PATH", False),
        ("HOME", False),
        ("TERM", False),
        ("LANG", False),
        ("DBUS_SESSION_BUS_ADDRESS", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("KEYBOARD_LAYOUT", False),
        ("HOOKLOOP_SPAWN", False),
        ("CLAUDE_PROJECT_DIR", False),
    ],
)
def test_the_secret_rule(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_secret_values_and_allowlist_patterns() -> None:
    assert is_secret("REDIS", "redis://:pw@cache:6379/0")
    assert is_secret("UPSTREAM", "https://user:pw@example.com/x")
    assert not is_secret("UPSTREAM", "https://example.com/a:b@c")  # the @ is in the path, not the authority
    assert not is_secret("HOMEPAGE", "https://example.com")
    assert is_secret("LLM", "sk-ant-api03-" + "x" * 40)
    assert is_secret("CI_THING", "ghp_" + "a" * 36)
    assert is_secret("AWS", "AKIA" + "A" * 16)
    assert is_secret("KEYFILE_TEXT", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc")
    assert not is_secret("EDITOR", "vim")
    assert not is_secret("SHORT", "sk-1")
    assert env_allowed("AWS_PROFILE", ["AWS_*"])
    assert not env_allowed("XAWS_PROFILE", ["AWS_*"])
    assert not env_allowed("GITHUB_TOKEN", ["github_token"])
