"""Issue 12, configuration side (items 1, 2, 10): dedup as Claude Code does it, ``hooks test`` for Cline's
vocabulary, installed Claude Code plugins and project trust. Real scripts (written for these tests in the style
of public hook collections) run both through the ``hookloop hooks test`` / ``hooks list`` CLI, as a subprocess,
and in live Worker runs with the scripted model. HOME and hookloop's home are temporary folders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookloop import Text, ToolUse

from .cc_setup import Setup, Shell, pre_tool, results, setup

pytestmark = pytest.mark.anyio
__all__ = ["setup"]  # the fixture, imported for pytest

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
    listed = json.loads(setup.cli("hooks", "list", "--format", "json").stdout)["hooks"]
    assert [h["if"] for h in listed] == ["Bash(git commit:*)", "Bash(git push:*)"]
    assert "Bash if Bash(git push:*)" in setup.cli("hooks", "list").stdout
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


def test_one_settings_file_read_as_two_layers_runs_its_hooks_once(setup: Setup) -> None:
    # The project's .hookloop/ is also the hookloop home (as `hookloop demo` and a project in $HOME have it).
    counter = setup.script(setup.home / "bin" / "count", 'echo x >> "$COUNT_FILE"')
    group = [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(counter)}]}]
    setup.write(setup.project / ".hookloop" / "settings.json", json.dumps({"hooks": {"PreToolUse": group}}))
    shared = Setup(setup.root, setup.home, setup.project / ".hookloop", setup.project)
    count = setup.root / "count.txt"
    shared.extra_env["COUNT_FILE"] = str(count)
    report = shared.hooks_test("PreToolUse", pre_tool("ls"), "--trust-project-hooks")
    assert len(report["hooks"]) == 1
    assert count.read_text() == "x\n"


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
    assert [(h["plugin"], h["layer"]) for h in blocked["hooks"]] == [("safety-net@community", "Plugin")]
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
