"""PermissionDenied, CwdChanged, FileChanged and ConfigChange: real scripts in the style of public hook
collections (an audit logger, a direnv-style reloader, a settings guard), a real Worker with the real built-in
Bash tool driven by the scripted model, and `hookloop hooks test` / `hooks list` / `hooks validate` as
subprocesses. No sleeps: every change is made by a tool call the test scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hookloop
from hookloop import Finished, Text, ToolUse
from hookloop.command_hooks.model import NEVER_FIRED_EVENTS, SUPPORTED_EVENTS
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import BashTool, Workspace

from .test_worker_command_hooks import (
    PY,
    Env,
    Shell,
    env,
    group,
    hook_decisions,
    request_text,
    results,
    worker_for,
)

__all__ = ["env"]  # the fixture, imported for these tests

pytestmark = pytest.mark.anyio

# An audit hook as public collections write them: append the whole stdin as one JSON line to a log.
AUDIT = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["CLAUDE_PROJECT_DIR"] + "/audit.jsonl", "a") as log:
    log.write(json.dumps(data) + "\\n")
"""


def audit_log(env: Env) -> list[dict[str, Any]]:
    path = env.project / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def bash(env: Env) -> BashTool:
    return BashTool(Workspace(env.project))


# --------------------------------------------------------------------------------------------------------------
# PermissionDenied
# --------------------------------------------------------------------------------------------------------------

RETRY = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["CLAUDE_PROJECT_DIR"] + "/audit.jsonl", "a") as log:
    log.write(json.dumps(data) + "\\n")
if data["tool_input"].get("command", "").startswith("rm "):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": True}}))
"""


async def test_permissiondenied_fires_for_a_policy_denial_and_retry_reaches_the_model(env: Env) -> None:
    env.script("denied.py", RETRY, python=True)
    env.script("guard.sh", 'grep -q "curl" && { echo "no network" >&2; exit 2; }; exit 0')
    env.settings(
        {
            "PermissionDenied": group(f"{PY} .claude/hooks/denied.py", matcher="Bash"),
            "PreToolUse": group("bash .claude/hooks/guard.sh", matcher="Bash"),
        }
    )
    shell = Shell()
    policy = PermissionPolicy(allow=["Bash(ls)"], deny=["Bash(rm:*)", "Bash(git push:*)"], workspace=env.project)
    calls = [
        ToolUse("Bash", {"command": "rm -rf build"}),
        ToolUse("Bash", {"command": "git push origin main"}),
        ToolUse("Bash", {"command": "curl example.com"}),
        ToolUse("Bash", {"command": "ls"}),
    ]
    worker, client, events = worker_for(env, [calls, [Text("ok")]], tools=[shell.tool], permissions=policy)
    assert isinstance(await worker.run("tidy"), Finished)
    assert shell.ran == ["ls"]
    rm, push, curl, ls = results(worker)
    assert rm.is_error
    assert rm.content.startswith("permission denied (")
    assert rm.content.endswith("A PermissionDenied hook says this call may be retried (for example in another way).")
    assert push.is_error
    assert "may be retried" not in push.content
    assert "no network" in curl.content
    assert "may be retried" not in curl.content
    assert not ls.is_error
    logged = audit_log(env)
    assert [entry["tool_input"]["command"] for entry in logged] == ["rm -rf build", "git push origin main"]
    first = logged[0]
    assert first["hook_event_name"] == "PermissionDenied"
    assert first["tool_use_id"] == "call_0001"
    assert first["tool_name"] == "Bash"
    assert "rm" in first["reason"]
    assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= set(first)
    assert [d.event for d in hook_decisions(events)].count("PermissionDenied") == 2
    assert "may be retried" in request_text(client, 1)


# --------------------------------------------------------------------------------------------------------------
# CwdChanged and FileChanged
# --------------------------------------------------------------------------------------------------------------

# A direnv-style reloader: when the directory changes, watch its .envrc; when a watched file changes, say so.
CWD_HOOK = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["CLAUDE_PROJECT_DIR"] + "/audit.jsonl", "a") as log:
    log.write(json.dumps(data) + "\\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "CwdChanged",
                                         "watchPaths": [os.path.join(data["new_cwd"], ".envrc")]}}))
"""


async def test_cd_in_bash_fires_cwdchanged_and_its_watchpaths_feed_filechanged(env: Env) -> None:
    env.script("cwd.py", CWD_HOOK, python=True)
    env.script("file.py", AUDIT, python=True)
    env.settings(
        {
            "CwdChanged": group(f"{PY} .claude/hooks/cwd.py"),
            "FileChanged": group(f"{PY} .claude/hooks/file.py"),
        }
    )
    turns = [
        [ToolUse("Bash", {"command": "mkdir -p app && cd app"})],
        [ToolUse("Bash", {"command": "echo 'export A=1' > .envrc"})],
        [ToolUse("Bash", {"command": "echo 'export A=2' >> .envrc"})],
        [ToolUse("Bash", {"command": "rm .envrc && cd .."})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=[bash(env)])
    assert isinstance(await worker.run("set up"), Finished)
    app = str(env.project / "app")
    logged = [(e["hook_event_name"], e.get("old_cwd") or e.get("file_path"), e.get("new_cwd") or e.get("event"))
              for e in audit_log(env)]  # fmt: skip
    assert logged == [
        ("CwdChanged", str(env.project), app),
        ("FileChanged", app + "/.envrc", "add"),
        ("FileChanged", app + "/.envrc", "change"),
        ("CwdChanged", app, str(env.project)),  # the CwdChanged hook now watches <project>/.envrc instead
    ]


async def test_filechanged_matcher_names_build_the_watch_list_and_filter(env: Env) -> None:
    env.script("file.py", AUDIT, python=True)
    env.settings({"FileChanged": group(f"{PY} .claude/hooks/file.py", matcher=".env|package.json")})
    (env.project / "package.json").write_text("{}")
    turns = [
        [ToolUse("Bash", {"command": "echo '{\"name\": 1}' > package.json; echo x > other.txt"})],
        [ToolUse("Bash", {"command": "echo SECRET=1 > .env"})],
        [ToolUse("Bash", {"command": "rm .env package.json"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=[bash(env)])
    await worker.run("edit")
    logged = [(Path(e["file_path"]).name, e["event"]) for e in audit_log(env)]
    assert logged == [("package.json", "change"), (".env", "add"), (".env", "unlink"), ("package.json", "unlink")]
    assert all(os.path.isabs(e["file_path"]) for e in audit_log(env))


WATCH_CONFIG = """
import json, os
path = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "config", "app.yml")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "watchPaths": [path, "not-a-list-item", 7]}}))
"""


async def test_sessionstart_watchpaths_start_the_dynamic_watch_list(env: Env) -> None:
    env.script("watch.py", WATCH_CONFIG, python=True)
    env.script("file.py", AUDIT, python=True)
    env.settings(
        {"SessionStart": group(f"{PY} .claude/hooks/watch.py"), "FileChanged": group(f"{PY} .claude/hooks/file.py")}
    )
    (env.project / "config").mkdir()
    (env.project / "config" / "app.yml").write_text("a: 1\n")
    turns = [
        [ToolUse("Bash", {"command": "echo 'b: 2' >> config/app.yml"})],
        [ToolUse("Bash", {"command": "echo x > not-a-list-item"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=[bash(env)])
    await worker.run("edit the config")
    logged = [(e["file_path"], e["event"]) for e in audit_log(env)]
    assert logged == [
        (str(env.project / "config" / "app.yml"), "change"),
        (str(env.project / "not-a-list-item"), "add"),  # a relative watch path is the project's
    ]


# --------------------------------------------------------------------------------------------------------------
# ConfigChange
# --------------------------------------------------------------------------------------------------------------

# A settings guard: refuse edits to project settings during a session.
SETTINGS_GUARD = """
input=$(cat)
echo "$input" >> "$CLAUDE_PROJECT_DIR/audit.jsonl"
case "$input" in
  *'"source":"project_settings"'*) echo "project settings are frozen during a session" >&2; exit 2 ;;
esac
exit 0
"""


async def test_a_settings_file_changed_by_a_tool_fires_configchange_with_its_source(env: Env) -> None:
    env.script("settings-guard.sh", SETTINGS_GUARD)
    env.settings({"ConfigChange": group("bash .claude/hooks/settings-guard.sh")})
    edit_local = "echo '{\"permissions\": {}}' > .claude/settings.local.json"
    edit_project = (
        "sed -i 's/settings-guard/settings-guard/' .claude/settings.json && touch -d '+1 hour' .claude/settings.json"
    )
    turns = [
        [ToolUse("Bash", {"command": "ls"})],
        [ToolUse("Bash", {"command": edit_local})],
        [ToolUse("Bash", {"command": edit_project})],
        [Text("done")],
    ]
    worker, _, events = worker_for(env, turns, tools=[bash(env)])
    assert isinstance(await worker.run("configure"), Finished)
    logged = audit_log(env)
    assert [(e["source"], e["file_path"]) for e in logged] == [
        ("local_settings", str(env.project / ".claude" / "settings.local.json")),
        ("project_settings", str(env.project / ".claude" / "settings.json")),
    ]
    assert logged[0]["hook_event_name"] == "ConfigChange"
    decisions = [(d.decision, d.reason) for d in hook_decisions(events, "ConfigChange")]
    assert decisions == [("Continue", None), ("Block", "project settings are frozen during a session")]


async def test_configchange_matcher_filters_on_the_source(env: Env) -> None:
    env.script("audit.py", AUDIT, python=True)
    env.settings({"ConfigChange": group(f"{PY} .claude/hooks/audit.py", matcher="user_settings")})
    user = env.hookloop_home / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    turns = [
        [ToolUse("Bash", {"command": "echo '{}' > .claude/settings.local.json"})],
        [ToolUse("Bash", {"command": f"echo '{{}}' > {user}"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=[bash(env)])
    await worker.run("configure")
    assert [(e["source"], e["file_path"]) for e in audit_log(env)] == [("user_settings", str(user))]


# --------------------------------------------------------------------------------------------------------------
# The CLI: hooks test on the new events, hooks list / validate on events hookloop never fires
# --------------------------------------------------------------------------------------------------------------

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


def cli(*args: str, project: Path, tmp: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    home = tmp / "cli-home"
    home.mkdir(exist_ok=True)
    environ = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(Path(hookloop.__file__).resolve().parents[1]),
        "HOME": str(home),
        "HOOKLOOP_HOME": str(tmp / "cli-hookloop-home"),
        "COLUMNS": "250",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [*HOOKLOOP, *args], capture_output=True, text=True, env=environ, cwd=project, input=stdin, timeout=60
    )


def test_hooks_test_runs_a_configchange_guard_and_a_permissiondenied_hook(env: Env) -> None:
    env.script("settings-guard.sh", SETTINGS_GUARD)
    env.script("denied.py", RETRY, python=True)
    env.settings(
        {
            "ConfigChange": group("bash .claude/hooks/settings-guard.sh", matcher="project_settings"),
            "PermissionDenied": group(f"{PY} .claude/hooks/denied.py", matcher="Bash"),
        }
    )
    change = {"hook_event_name": "ConfigChange", "source": "project_settings", "file_path": "/x/.claude/settings.json"}
    ran = cli("hooks", "test", "ConfigChange", "--input", "-", "--format", "json", "--trust-project-hooks",
              project=env.project, tmp=env.root, stdin=json.dumps(change))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["merged"]["decision"] == "block"
    assert report["merged"]["reason"] == "project settings are frozen during a session"
    denied = {"hook_event_name": "PermissionDenied", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
              "tool_use_id": "t1", "reason": "deny rule Bash(rm:*)"}  # fmt: skip
    ran = cli("hooks", "test", "PermissionDenied", "--input", "-", "--format", "json", "--trust-project-hooks",
              project=env.project, tmp=env.root, stdin=json.dumps(denied))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    [hook] = json.loads(ran.stdout)["hooks"]
    assert json.loads(hook["stdout"])["hookSpecificOutput"]["retry"] is True


def test_hooks_test_matches_a_filechanged_matcher_against_the_file_name_as_live_runs_do(env: Env) -> None:
    env.script("file.py", AUDIT, python=True)
    env.settings({"FileChanged": group(f"{PY} .claude/hooks/file.py", matcher=".env|package.json")})
    for name, expected in ((".env", 1), ("other.txt", 0)):
        event = {"hook_event_name": "FileChanged", "file_path": str(env.project / name), "event": "change"}
        ran = cli("hooks", "test", "FileChanged", "--input", "-", "--format", "json", "--trust-project-hooks",
                  project=env.project, tmp=env.root, stdin=json.dumps(event))  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert len(json.loads(ran.stdout)["hooks"]) == expected, (name, ran.stdout)


def test_hooks_list_marks_and_validate_warns_about_events_hookloop_never_fires(env: Env) -> None:
    env.settings(
        {
            "InstructionsLoaded": group("echo loaded"),
            "Setup": group("echo setup"),
            "CwdChanged": group("echo cwd"),
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}, {"type": "agent", "prompt": "verify"}]}],
            "PostToolUse": [{"hooks": [{"type": "mcp_tool", "server": "lint", "tool": "check"}]}],
        }
    )
    listed = cli("hooks", "list", "--format", "json", project=env.project, tmp=env.root)
    hooks = json.loads(listed.stdout)["hooks"]
    rows = {row["event"]: row["fires"] for row in hooks}
    assert rows == {"InstructionsLoaded": False, "Setup": False, "CwdChanged": True, "Stop": True, "PostToolUse": True}
    kinds = [(row["type"], row["run"]) for row in hooks if row["event"] in ("Stop", "PostToolUse")]
    assert kinds == [("prompt", "done?"), ("agent", "verify"), ("mcp_tool", "lint/check")]
    table = cli("hooks", "list", project=env.project, tmp=env.root).stdout
    assert "InstructionsLoaded (never fired by hookloop)" in table
    assert "CwdChanged (never" not in table
    validated = cli("hooks", "validate", project=env.project, tmp=env.root)
    assert validated.returncode == 0
    assert "hookloop never fires InstructionsLoaded; this hook never runs" in validated.stdout
    assert "hookloop never fires Setup" in validated.stdout
    assert "never fires CwdChanged" not in validated.stdout


def test_the_event_sets_are_the_documented_ones() -> None:
    assert {"PermissionDenied", "ConfigChange", "CwdChanged", "FileChanged", "StopFailure"} <= set(SUPPORTED_EVENTS)
    assert {"Setup", "InstructionsLoaded"} <= NEVER_FIRED_EVENTS
    assert not NEVER_FIRED_EVENTS & set(SUPPORTED_EVENTS)
