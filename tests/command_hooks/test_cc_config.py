"""Issue 12, configuration side: dedup as Claude Code does it, ``hooks test`` for Cline's vocabulary,
``CLAUDE_ENV_FILE``, the settings ``env`` block, secrets withheld from hooks, installed Claude Code plugins.

Every behaviour is checked with real scripts (written for these tests in the style of public hook collections)
both through the ``hookloop hooks test`` / ``hooks list`` CLI, as a subprocess, and in a live Worker run with
the scripted model. HOME and hookloop's home are temporary folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import hookloop
from hookloop import ScriptedClient, Text, ToolResult, ToolUse, Worker, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.environment import env_allowed, is_secret, is_secret_name
from hookloop.command_hooks.runner import RunnerOptions
from hookloop.tools import Tool
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio

PY = sys.executable
FAST = RunnerOptions(kill_grace=0.2, drain_window=0.2)
SOURCE_ROOT = str(Path(hookloop.__file__).resolve().parents[1])
CLI = [PY, "-c", "from hookloop.cli import main; main()"]


@dataclass
class Setup:
    root: Path
    home: Path
    hookloop_home: Path
    project: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    workers: list[Worker] = field(default_factory=list)

    def write(self, path: Path, text: str, *, executable: bool = False) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if executable:
            path.chmod(0o755)
        return path

    def script(self, path: Path, body: str, *, python: bool = False) -> Path:
        shebang = f"#!{PY}" if python else "#!/bin/bash"
        return self.write(path, f"{shebang}\n{body.strip()}\n", executable=True)

    def user_settings(self, data: dict[str, Any]) -> None:
        self.write(self.home / ".claude" / "settings.json", json.dumps(data))

    def project_settings(self, data: dict[str, Any], name: str = "settings.json") -> None:
        self.write(self.project / ".claude" / name, json.dumps(data))

    def cli_env(self) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": SOURCE_ROOT,
            "HOME": str(self.home),
            "HOOKLOOP_HOME": str(self.hookloop_home),
            "COLUMNS": "250",
            "NO_COLOR": "1",
            **self.extra_env,
        }

    def cli(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*CLI, *args, "--cwd", str(self.project)],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.cli_env(),
            timeout=60,
            check=False,
        )
        if check:
            assert done.returncode == 0, done.stderr + done.stdout
        return done

    def hooks_test(self, event: str, payload: dict[str, Any], *extra: str) -> dict[str, Any]:
        done = self.cli("hooks", "test", event, "--input", "-", "--format", "json", *extra, stdin=json.dumps(payload))
        report: dict[str, Any] = json.loads(done.stdout)
        return report

    def load(self, *, trust_project: bool = False) -> CommandHooks:
        return CommandHooks.load(
            self.project, home=self.home, hookloop_home=self.hookloop_home, trust_project=trust_project, options=FAST
        )

    def worker(
        self, turns: Sequence[Any], tools: Sequence[Tool], *, trust_project: bool = False, **kwargs: Any
    ) -> Worker:
        worker = Worker(
            ScriptedClient(list(turns)), tools=list(tools), transcript=self.root / "transcript.jsonl", **kwargs
        )
        self.workers.append(worker)
        self.load(trust_project=trust_project).install(worker)
        return worker


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    made = Setup(tmp_path, home, tmp_path / "hookloop-home", project.resolve())
    yield made
    for worker in made.workers:
        worker.close()


def results(worker: Worker) -> list[ToolResult]:
    return [item for item in worker.history if isinstance(item, ToolResult)]


class Shell:
    """A Bash stand-in that records commands (the hooks under test are real; the tool is not the subject)."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool(name="Bash")
        async def bash(command: str, description: str = "") -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran: {command}"

        self.tool: Tool = bash


def pre_tool(command: str) -> dict[str, Any]:
    return {
        "session_id": "s-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
    }


# -- 1. dedup ---------------------------------------------------------------------------------------------------

COMMIT_PUSH_GUARD = """
import json, os, sys
data = json.load(sys.stdin)
command = data["tool_input"]["command"]
with open(os.environ["GUARD_LOG"], "a") as log:
    log.write(command + "\\n")
if "git push" in command and "--force" in command:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": "force-push is not allowed here"}}))
"""


def guard_settings(setup: Setup) -> str:
    """Anthropic's security-guidance shape: one command, twice, told apart only by ``if``."""
    guard = setup.script(setup.home / ".claude" / "hooks" / "commit_push_guard.py", COMMIT_PUSH_GUARD, python=True)
    handlers = [
        {"type": "command", "command": str(guard), "if": "Bash(git commit:*)"},
        {"type": "command", "command": str(guard), "if": "Bash(git push:*)"},
    ]
    setup.user_settings({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}})
    return str(guard)


def test_handlers_differing_only_in_if_both_run_each_when_its_rule_matches(setup: Setup) -> None:
    guard_settings(setup)
    log = setup.root / "guard.log"
    setup.extra_env["GUARD_LOG"] = str(log)
    commit = setup.hooks_test("PreToolUse", pre_tool("git commit -m wip"))
    assert len(commit["hooks"]) == 1
    assert commit["merged"]["decision"] == "continue"
    push = setup.hooks_test("PreToolUse", pre_tool("git push --force origin main"))
    assert len(push["hooks"]) == 1
    assert push["merged"]["decision"] == "deny"
    assert push["merged"]["reason"] == "force-push is not allowed here"
    assert setup.hooks_test("PreToolUse", pre_tool("ls"))["hooks"] == []
    assert log.read_text().splitlines() == ["git commit -m wip", "git push --force origin main"]


async def test_if_variants_in_a_live_run(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    guard_settings(setup)
    log = setup.root / "guard.log"
    monkeypatch.setenv("GUARD_LOG", str(log))
    shell = Shell()
    turns = [
        [ToolUse("Bash", {"command": "git commit -m wip"}), ToolUse("Bash", {"command": "git push --force"})],
        [Text("done")],
    ]
    worker = setup.worker(turns, [shell.tool])
    await worker.run("ship it")
    assert shell.ran == ["git commit -m wip"]
    denied = results(worker)[1]
    assert denied.is_error
    assert "force-push is not allowed here" in denied.content
    assert sorted(log.read_text().splitlines()) == ["git commit -m wip", "git push --force"]


def test_the_same_handler_in_two_settings_files_runs_once_and_plugin_copies_stay(setup: Setup) -> None:
    counter = setup.script(setup.home / "bin" / "count", 'echo x >> "$COUNT_FILE"')
    group = [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(counter)}]}]
    setup.user_settings({"hooks": {"PreToolUse": group}})
    setup.project_settings({"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": group[0]["hooks"]}]}})
    count = setup.root / "count.txt"
    setup.extra_env["COUNT_FILE"] = str(count)
    report = setup.hooks_test("PreToolUse", pre_tool("ls"), "--trust-project-hooks")
    assert [h["source"] for h in report["hooks"]] == [str(setup.project / ".claude" / "settings.json")]
    assert count.read_text() == "x\n"
    listed = json.loads(setup.cli("hooks", "list", "--format", "json").stdout)["hooks"]
    assert len(listed) == 2  # both definitions are listed; a firing runs one


# -- 2. hooks test with Cline scripts ---------------------------------------------------------------------------

CLINE_LOGGER = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["CLINE_LOG"], "a") as log:
    log.write(json.dumps(data) + "\\n")
print(json.dumps({"cancel": False, "contextModification": "seen " + data["hookName"]}))
"""


def cline_scripts(setup: Setup, *names: str) -> Path:
    folder = setup.home / "Documents" / "Cline" / "Hooks"
    for name in names:
        setup.script(folder / name, CLINE_LOGGER, python=True)
    log = setup.root / "cline.log"
    setup.extra_env["CLINE_LOG"] = str(log)
    return log


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(
    ("event", "payload", "key"),
    [
        (
            "PostToolUse",
            {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a\nb", "tool_use_id": "t"},
            "postToolUse",
        ),
        (
            "Notification",
            {"message": "Claude needs your permission", "notification_type": "permission_prompt"},
            "notification",
        ),
        ("PreCompact", {"trigger": "manual", "custom_instructions": ""}, "preCompact"),
        ("TaskStart", {"source": "startup", "prompt": "fix the build"}, "taskStart"),
        ("SessionStart", {"source": "resume"}, "taskResume"),
    ],
)
def test_hooks_test_runs_cline_scripts_built_from_a_claude_payload(
    setup: Setup, event: str, payload: dict[str, Any], key: str
) -> None:
    log = cline_scripts(setup, "PostToolUse", "Notification", "PreCompact", "TaskStart", "TaskResume")
    report = setup.hooks_test(event, {"session_id": "s-7", **payload})
    assert len(report["hooks"]) == 1, report
    assert report["hooks"][0]["outcome"] == "ok"
    (received,) = logged(log)
    assert key in received
    assert received["taskId"] == "s-7"
    if event != "Notification":  # fire-and-forget: its answer is not used
        (context,) = report["merged"]["additional_context"]
        assert f"seen {received['hookName']}" in context


def test_hooks_test_sends_a_verbatim_cline_payload_and_knows_cline_names(setup: Setup) -> None:
    log = cline_scripts(setup, "TaskStart", "TaskCancel")
    verbatim = {
        "clineVersion": "3.38.0",
        "hookName": "TaskStart",
        "timestamp": "1736654400000",
        "taskId": "task-42",
        "workspaceRoots": [str(setup.project)],
        "userId": "u-1",
        "taskStart": {"taskMetadata": {"taskId": "task-42", "ulid": "01J", "initialTask": "hello"}},
    }
    report = setup.hooks_test("TaskStart", verbatim)
    assert len(report["hooks"]) == 1
    assert logged(log) == [verbatim]
    assert setup.hooks_test("TaskCancel", {**verbatim, "hookName": "TaskCancel"})["hooks"][0]["outcome"] == "ok"
    bad = setup.cli("hooks", "test", "TaskStrat", "--input", "-", stdin="{}", check=False)
    assert bad.returncode == 2
    assert "TaskStart" in bad.stderr


def test_hooks_test_timeout_applies_to_cline_and_claude_hooks(setup: Setup) -> None:
    folder = setup.home / "Documents" / "Cline" / "Hooks"
    setup.script(folder / "PreToolUse", "sleep 30")
    slow = setup.script(setup.home / "bin" / "slow", "sleep 30")
    setup.user_settings({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(slow)}]}]}})
    report = setup.hooks_test("PreToolUse", pre_tool("ls"), "--timeout", "0.5")
    assert [h["timed_out"] for h in report["hooks"]] == [True, True]
    assert all(h["duration_ms"] < 20_000 for h in report["hooks"])
    assert setup.cli("hooks", "test", "Stop", "--input", "-", "--timeout", "0", stdin="{}", check=False).returncode == 2


async def test_the_same_cline_scripts_fire_in_a_live_run(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    log = cline_scripts(setup, "PostToolUse", "TaskStart")
    monkeypatch.setenv("CLINE_LOG", str(log))
    shell = Shell()
    worker = setup.worker([[ToolUse("Bash", {"command": "ls"})], [Text("ok")]], [shell.tool])
    await worker.run("list files")
    names = [entry["hookName"] for entry in logged(log)]
    assert names == ["TaskStart", "PostToolUse"]


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


# -- 10. plugins --------------------------------------------------------------------------------------------------

SAFETY_NET = """
import json, os, re, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
os.makedirs(os.environ["CLAUDE_PLUGIN_DATA"], exist_ok=True)
with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "seen.log"), "a") as log:
    log.write(command + "\\n")
if re.search(r"\\bgit\\s+reset\\s+--hard\\b|\\brm\\s+-[a-z]*r[a-z]*f", command):
    print("safety-net: destructive command blocked: " + command, file=sys.stderr)
    sys.exit(2)
"""


def install_plugin(setup: Setup, *, scope: str = "user", project_path: str | None = None) -> Path:
    root = setup.home / ".claude" / "plugins" / "cache" / "community" / "safety-net" / "1.0.0"
    setup.script(root / "scripts" / "guard.py", SAFETY_NET, python=True)
    setup.write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": "safety-net", "version": "1.0.0"}))
    hooks = {
        "description": "Blocks destructive shell commands",
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/scripts/guard.py"}],
                }
            ]
        },
    }
    setup.write(root / "hooks" / "hooks.json", json.dumps(hooks))
    entry: dict[str, Any] = {"scope": scope, "installPath": str(root), "version": "1.0.0"}
    if project_path is not None:
        entry["projectPath"] = project_path
    installed = {"version": 2, "plugins": {"safety-net@community": [entry]}}
    setup.write(setup.home / ".claude" / "plugins" / "installed_plugins.json", json.dumps(installed))
    return root


def test_an_installed_plugin_runs_in_hooks_test_and_list_shows_its_origin(setup: Setup) -> None:
    root = install_plugin(setup)
    setup.user_settings({"enabledPlugins": {"safety-net@community": True}})
    listed = json.loads(setup.cli("hooks", "list", "--format", "json").stdout)["hooks"]
    assert [(h["plugin"], h["layer"], h["plugin_root"]) for h in listed] == [
        ("safety-net@community", "Plugin", str(root.resolve()))
    ]
    assert "plugin safety-net@community" in setup.cli("hooks", "list").stdout
    blocked = setup.hooks_test("PreToolUse", pre_tool("git reset --hard HEAD~3"))
    assert blocked["merged"]["decision"] == "deny"
    assert "destructive command blocked" in blocked["merged"]["reason"]
    assert setup.hooks_test("PreToolUse", pre_tool("git status"))["merged"]["decision"] == "continue"
    data = setup.home / ".claude" / "plugins" / "data" / "safety-net-community" / "seen.log"
    assert data.read_text().splitlines() == ["git reset --hard HEAD~3", "git status"]


async def test_an_installed_plugin_guards_a_live_run(setup: Setup) -> None:
    install_plugin(setup)
    setup.user_settings({"enabledPlugins": {"safety-net@community": True}})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "rm -rf build"}), ToolUse("Bash", {"command": "make"})], [Text("ok")]]
    worker = setup.worker(turns, [shell.tool])
    await worker.run("clean and build")
    assert shell.ran == ["make"]
    assert "destructive command blocked" in results(worker)[0].content


def test_plugin_enabling_rules(setup: Setup) -> None:
    install_plugin(setup)
    assert setup.load().hooks == ()  # installed, not enabled
    setup.user_settings({"enabledPlugins": {"safety-net@community": True}})
    setup.project_settings({"enabledPlugins": {"safety-net@community": False}}, "settings.local.json")
    assert setup.load(trust_project=True).hooks == ()  # the project turned it off: the higher layer decides
    (setup.project / ".claude" / "settings.local.json").unlink()
    setup.user_settings({})
    setup.project_settings({"enabledPlugins": {"safety-net@community": True}})
    untrusted = setup.load()
    assert untrusted.hooks == ()  # enabled only by a project file: project-level, needs trust
    (hook,) = setup.load(trust_project=True).hooks
    assert hook.source.project_level
    assert hook.source.plugin == "safety-net@community"


def test_a_project_scoped_install_applies_only_to_its_project(setup: Setup, tmp_path: Path) -> None:
    install_plugin(setup, scope="project", project_path=str(tmp_path / "elsewhere"))
    setup.user_settings({"enabledPlugins": {"safety-net@community": True}})
    loaded = setup.load()
    assert loaded.hooks == ()
    assert any("not installed for this project" in d.message for d in loaded.diagnostics)
    install_plugin(setup, scope="project", project_path=str(setup.project))
    assert len(setup.load().hooks) == 1


def test_a_cline_name_also_runs_the_claude_hooks_of_the_same_moment(setup: Setup) -> None:
    log = cline_scripts(setup, "TaskStart")
    banner = setup.script(setup.home / "bin" / "banner", 'cat >/dev/null; echo "session banner"')
    group = [{"matcher": "startup", "hooks": [{"type": "command", "command": str(banner)}]}]
    setup.user_settings({"hooks": {"SessionStart": group}})
    report = setup.hooks_test("TaskStart", {"session_id": "s-9", "prompt": "hi"})
    assert [h["command"] for h in report["hooks"]] == [str(banner), str(setup.home / "Documents/Cline/Hooks/TaskStart")]
    assert report["target"] == "startup"
    assert "session banner" in report["merged"]["additional_context"][0]
    (received,) = logged(log)
    assert received["taskStart"]["initialTask"] == "hi"


def test_plugin_manifest_hook_files_stay_inside_the_plugin(setup: Setup) -> None:
    root = install_plugin(setup)
    (root / "hooks" / "hooks.json").unlink()
    extra = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]}}
    setup.write(root / "config" / "more.json", json.dumps(extra))
    setup.write(setup.root / "outside.json", json.dumps(extra))
    manifest = {"name": "safety-net", "hooks": ["./config/more.json", "../../../../../../outside.json"]}
    setup.write(root / ".claude-plugin" / "plugin.json", json.dumps(manifest))
    setup.user_settings({"enabledPlugins": {"safety-net@community": True}})
    loaded = setup.load()
    assert [(h.event, h.source.path) for h in loaded.hooks] == [("Stop", str(root / "config" / "more.json"))]
    assert any("outside the plugin folder" in d.message for d in loaded.diagnostics)


def test_an_untrusted_project_cannot_switch_off_the_users_hooks_or_plugins(setup: Setup) -> None:
    install_plugin(setup)
    guard = setup.script(setup.home / "bin" / "guard", "exit 0")
    setup.user_settings(
        {
            "enabledPlugins": {"safety-net@community": True},
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(guard)}]}]},
        }
    )
    setup.project_settings({"disableAllHooks": True, "enabledPlugins": {"safety-net@community": False}})
    untrusted = setup.load()
    assert sorted(h.source.kind for h in untrusted.hooks) == ["claude-plugin", "claude-user"]
    assert any("not trusted" in d.message for d in untrusted.diagnostics)
    trusted = setup.load(trust_project=True)
    assert trusted.hooks == ()
    assert trusted.config.disabled
    setup.project_settings({"enabledPlugins": {"safety-net@community": False}})
    assert [h.source.kind for h in setup.load(trust_project=True).hooks] == ["claude-user"]
    assert sorted(h.source.kind for h in setup.load().hooks) == ["claude-plugin", "claude-user"]
