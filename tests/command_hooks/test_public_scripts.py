"""Hook scripts shaped like the ones people publish (GitHub collections of Claude Code and Cline hooks), run
unmodified by a real Worker with the real built-in tools: what they read from stdin and what their answers do
must be what Claude Code (or Cline) gives them. Each test names the public pattern it stands for; the scripts
are our own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookloop import Finished, Text, ToolUse
from hookloop.items import Message
from hookloop.tools.builtin import builtin_tools

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import PY, Env, group, results, worker_for

pytestmark = pytest.mark.anyio


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def contexts(worker_history: tuple[Any, ...], event: str) -> list[str]:
    return [
        item.text
        for item in worker_history
        if isinstance(item, Message) and item.role == "user" and f'event="{event}"' in item.text
    ]


# --------------------------------------------------------------------------------------------------------------
# SessionStart: one-time set-up on "startup", context on every start
# --------------------------------------------------------------------------------------------------------------

# The "install what the project needs once" hook, registered with matcher "startup" (web-session set-up scripts).
SETUP_ONCE = """
cat > /dev/null
echo "set up" >> "$CLAUDE_PROJECT_DIR/setup.log"
"""

# The plugin style that injects a skill as context on "startup|resume|clear|compact" (JSON, printf-built).
INJECT = r"""
source=$(jq -r '.source')
echo "$source" >> "$CLAUDE_PROJECT_DIR/sources.log"
printf '{\n  "hookSpecificOutput": {\n    "hookEventName": "SessionStart",\n    "additionalContext": "%s"\n  }\n}\n' \
  "You have the house rules (source: $source)."
"""


async def test_a_run_that_continues_the_conversation_is_a_resume_so_startup_set_up_runs_once(env: Env) -> None:
    env.script("setup.sh", SETUP_ONCE)
    env.script("inject.sh", INJECT)
    env.settings(
        {
            "SessionStart": [
                *group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/setup.sh', matcher="startup"),
                *group("${CLAUDE_PROJECT_DIR}/.claude/hooks/inject.sh", matcher="startup|resume|clear|compact"),
            ]
        }
    )
    worker, _, _ = worker_for(env, [[Text("one")], [Text("two")], [Text("three")]])
    for prompt in ("first", "second", "third"):
        assert isinstance(await worker.run(prompt), Finished)

    # Claude Code: the first prompt starts the session; a later one on the same conversation is `--continue`
    assert (env.project / "sources.log").read_text().split() == ["startup", "resume", "resume"]
    assert (env.project / "setup.log").read_text().splitlines() == ["set up"]
    injected = contexts(worker.history, "SessionStart")
    assert len(injected) == 3
    assert "You have the house rules (source: startup)." in injected[0]
    assert "(source: resume)" in injected[1]

    fresh, _, _ = worker_for(env, [[Text("hello")]])
    assert isinstance(await fresh.run("new session"), Finished)
    assert (env.project / "sources.log").read_text().split()[-1] == "startup"
    assert (env.project / "setup.log").read_text().splitlines() == ["set up", "set up"]


# --------------------------------------------------------------------------------------------------------------
# cwd follows the agent's cd; the hook still starts in the project
# --------------------------------------------------------------------------------------------------------------

# The monorepo hook: "after an edit, run the checks of the package the agent is working in" — it reads `cwd`
# from stdin (relative command path, as many settings files have it).
PACKAGE_CHECK = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen.jsonl"), "a") as out:
    out.write(json.dumps({"event": data["hook_event_name"], "cwd": data["cwd"], "process": os.getcwd(),
                          "file": data.get("tool_input", {}).get("file_path")}) + "\\n")
"""


async def test_cwd_follows_the_bash_cd_while_the_hook_process_and_file_paths_stay_anchored(env: Env) -> None:
    env.script("check.py", PACKAGE_CHECK, python=True)
    env.settings(
        {
            "PreToolUse": group(f"{PY} .claude/hooks/check.py", matcher="Write|Edit|Bash"),
            "CwdChanged": group(f"{PY} .claude/hooks/check.py"),
        }
    )
    (env.project / "packages" / "api").mkdir(parents=True)
    p = env.project
    turns = [
        [ToolUse("Bash", {"command": "pwd"})],
        [ToolUse("Bash", {"command": "cd packages/api"})],
        [ToolUse("Write", {"file_path": "notes.txt", "content": "x\n"})],
        [ToolUse("Bash", {"command": "cd /"})],  # outside the workspace: the shell is put back at the root
        [ToolUse("Bash", {"command": "pwd"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    assert isinstance(await worker.run("go"), Finished)
    assert [r.is_error for r in results(worker)] == [False] * 5
    assert (p / "notes.txt").exists()  # the file tools resolve against the root whatever the shell's cwd

    seen = lines(p / "seen.jsonl")
    api = str(p / "packages" / "api")
    assert [(s["event"], s["cwd"]) for s in seen] == [
        ("PreToolUse", str(p)),
        ("PreToolUse", str(p)),  # before the cd ran
        ("CwdChanged", api),
        ("PreToolUse", api),  # the Write: the session's directory is now the package
        ("PreToolUse", api),
        ("CwdChanged", str(p)),
        ("PreToolUse", str(p)),
    ]
    assert {s["process"] for s in seen} == {str(p)}  # a relative hook command keeps working after the cd
    assert seen[3]["file"] == str(p / "notes.txt")  # and relative file paths are absolute against the root


# --------------------------------------------------------------------------------------------------------------
# Guards in the languages people write them in (already Claude Code's behaviour: pinned here)
# --------------------------------------------------------------------------------------------------------------

# Node, CommonJS, reading the whole input with readFileSync(0) and answering with a permission decision.
NODE_GUARD = """
const fs = require('fs');
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
if ((input.tool_input.command || '').includes('rm -rf')) {
  console.log(JSON.stringify({hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: 'deny',
    permissionDecisionReason: 'recursive delete blocked'}}));
}
"""

# Node, ES module, reading /dev/stdin, answering with exit 2 and stderr.
NODE_ESM_GUARD = """
import { readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync('/dev/stdin', 'utf8'));
if (input.tool_input.command.startsWith('sudo ')) { console.error('sudo is not allowed here'); process.exit(2); }
"""

# Bash that reads one line with a timeout (the payload is one line with no newline, as Claude Code sends it).
ONE_LINE_GUARD = """
read -t 1 INPUT || true
CMD=$(echo "$INPUT" | jq -r '.tool_input.command')
if [[ "$CMD" == *"curl "* ]]; then echo "network access is blocked" >&2; exit 2; fi
exit 0
"""

# A script without a shebang, run as "bash <file>" (the common .sh registration).
NO_SHEBANG = """
INPUT=$(cat)
case "$(echo "$INPUT" | jq -r .tool_input.command)" in
  *"git push --force"*) echo '{"decision": "block", "reason": "no force pushes"}' ;;
esac
"""


async def test_node_bash_and_shebangless_guards_decide_as_in_claude_code(env: Env) -> None:
    env.script("one-line.sh", ONE_LINE_GUARD)
    hooks = env.project / ".claude" / "hooks"
    (hooks / "guard.js").write_text("#!/usr/bin/env node\n" + NODE_GUARD.lstrip())  # run by node, not executable
    (hooks / "guard.mjs").write_text(NODE_ESM_GUARD)
    (hooks / "no-shebang.sh").write_text(NO_SHEBANG)
    env.settings(
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "node $CLAUDE_PROJECT_DIR/.claude/hooks/guard.js"},
                        {"type": "command", "command": 'node "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.mjs"'},
                        {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/one-line.sh'},
                        {"type": "command", "command": "bash .claude/hooks/no-shebang.sh"},
                    ],
                }
            ]
        }
    )
    p = env.project
    commands = ["rm -rf build", "sudo ls", "curl example.org", "git push --force", "echo fine"]
    turns = [[ToolUse("Bash", {"command": c}) for c in commands], [Text("done")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    assert isinstance(await worker.run("go"), Finished)
    got = [(r.is_error, r.content) for r in results(worker)]
    assert got == [
        (True, "permission denied by hook 'command hooks': recursive delete blocked"),
        (True, "permission denied by hook 'command hooks': sudo is not allowed here"),
        (True, "permission denied by hook 'command hooks': network access is blocked"),
        (True, "permission denied by hook 'command hooks': no force pushes"),  # legacy decision "block"
        (False, "fine"),
    ]


# --------------------------------------------------------------------------------------------------------------
# A failed Bash command is PostToolUseFailure, not PostToolUse
# --------------------------------------------------------------------------------------------------------------

LOG_EVENT = """
jq -c '{event: .hook_event_name, command: .tool_input.command, error: .error,
        stdout: .tool_response.stdout}' >> "$CLAUDE_PROJECT_DIR/events.jsonl"
"""


async def test_a_failing_bash_command_fires_posttoolusefailure_only(env: Env) -> None:
    env.script("log.sh", LOG_EVENT)
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/log.sh'
    env.settings({"PostToolUse": group(command, matcher="Bash"), "PostToolUseFailure": group(command, matcher="Bash")})
    p = env.project
    turns = [[ToolUse("Bash", {"command": "echo ok"})], [ToolUse("Bash", {"command": "exit 3"})], [Text("done")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    assert isinstance(await worker.run("go"), Finished)
    logged = lines(p / "events.jsonl")
    assert [(e["event"], e["command"]) for e in logged] == [
        ("PostToolUse", "echo ok"),
        ("PostToolUseFailure", "exit 3"),
    ]
    assert logged[0]["stdout"] == "ok"
    assert "Exit code 3" in logged[1]["error"]


# --------------------------------------------------------------------------------------------------------------
# Cline: the documented jq template, run in the workspace root, debug output before the answer
# --------------------------------------------------------------------------------------------------------------

CLINE_TS_ONLY = """
input=$(cat)
echo "[PreToolUse] checking $(echo "$input" | jq -r '.preToolUse.toolName')"
tool_name=$(echo "$input" | jq -r '.preToolUse.toolName')
path=$(echo "$input" | jq -r '.preToolUse.parameters.path // ""')
if [[ "$tool_name" == "write_to_file" && "$path" == *.js && -f tsconfig.json ]]; then
  cat <<EOF
{
  "cancel": true,
  "errorMessage": "Cannot create .js files in a TypeScript project ($path)"
}
EOF
  exit 0
fi
echo '{"cancel": false, "contextModification": "WORKSPACE_RULES: checked '"$path"'"}'
"""


async def test_a_cline_write_guard_sees_cline_names_relative_paths_and_runs_in_the_workspace(env: Env) -> None:
    from hookloop.command_hooks.bridge import CommandHookCancelled

    env.script("PreToolUse", CLINE_TS_ONLY, folder=".clinerules/hooks")
    p = env.project
    (p / "tsconfig.json").write_text("{}")
    turns = [
        [ToolUse("Write", {"file_path": "src/a.ts", "content": "x\n"})],
        [ToolUse("Write", {"file_path": str(p / "src/b.js"), "content": "y\n"})],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    with pytest.raises(CommandHookCancelled) as caught:
        await worker.run("go")
    assert caught.value.reason == "Cannot create .js files in a TypeScript project (src/b.js)"
    assert (p / "src/a.ts").exists()
    assert not (p / "src/b.js").exists()
    first = results(worker)[0]
    assert '<hook_context source="PreToolUse" type="workspace_rules">' in first.content
    assert "checked src/a.ts" in first.content


# A PowerShell-style answer: UTF-8 output starts with a byte-order mark and ends with CRLF. Claude Code trims
# it away (JavaScript's trim) and reads the JSON; so must we, or the deny is read as plain text and ignored.
BOM_DENY = r"""
cat > /dev/null
printf '\xef\xbb\xbf{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
printf '"permissionDecisionReason": "blocked by policy"}}\r\n'
"""


async def test_a_json_answer_after_a_byte_order_mark_is_still_the_answer(env: Env) -> None:
    env.script("bom.sh", BOM_DENY)
    env.settings({"PreToolUse": group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/bom.sh', matcher="Bash")})
    p = env.project
    turns = [[ToolUse("Bash", {"command": "echo hi"})], [Text("done")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    assert isinstance(await worker.run("go"), Finished)
    [denied] = results(worker)
    assert (denied.is_error, denied.content) == (True, "permission denied by hook 'command hooks': blocked by policy")
