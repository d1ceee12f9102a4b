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
