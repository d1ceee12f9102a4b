"""PostToolUse ``tool_response`` is each built-in tool's structured object in Claude Code's shape (issue 12,
item 6); MCP tools send their content. Real PostToolUse scripts in the public style (jq one-liners, a Python
"after edit" hook) run by a real Worker with the real built-in tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookloop import Text, ToolUse, tool
from hookloop.tools.builtin import builtin_tools
from hookloop.tools.builtin._structured import structured_patch

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import Env, group, results, worker_for

pytestmark = pytest.mark.anyio

DUMP_RESPONSE = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "responses.jsonl"), "a") as out:
    out.write(json.dumps({"tool": data["tool_name"], "response": data["tool_response"]}) + "\\n")
"""

# The common "log what the command printed" hook, with jq.
BASH_LOGGER = r"""
jq -r '"exit-output: " + .tool_response.stdout + " interrupted=" + (.tool_response.interrupted|tostring)' \
  >> "$CLAUDE_PROJECT_DIR/bash.log"
"""

# The common "after an edit, look at the file that changed" hook.
AFTER_EDIT = """
import json, sys
data = json.load(sys.stdin)
path = data["tool_response"]["filePath"]
added = sum(1 for hunk in data["tool_response"].get("structuredPatch", []) for line in hunk["lines"]
            if line.startswith("+"))
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                         "additionalContext": f"checked {path}: {added} line(s) added"}}))
"""


def responses(project: Path) -> dict[str, Any]:
    lines = [json.loads(line) for line in (project / "responses.jsonl").read_text().splitlines()]
    return {line["tool"]: line["response"] for line in lines}


async def test_each_builtin_tool_sends_claude_codes_structured_tool_response(env: Env) -> None:
    env.script("dump.py", DUMP_RESPONSE, python=True)
    env.settings({"PostToolUse": group("python3 .claude/hooks/dump.py")})
    (env.project / "notes.txt").write_text("one\ntwo\nthree\n")
    p = env.project
    turns = [
        [ToolUse("Bash", {"command": "echo out; echo err >&2"})],
        [ToolUse("Read", {"file_path": "notes.txt", "offset": 2, "limit": 1})],
        [ToolUse("Write", {"file_path": "new.txt", "content": "a\n"})],
        [ToolUse("Edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})],
        [ToolUse("Glob", {"pattern": "*.txt"})],
        [ToolUse("Grep", {"pattern": "thr", "glob": "*.txt"})],
        [ToolUse("Grep", {"pattern": "thr", "glob": "*.txt", "output_mode": "content"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(p), workspace=p)
    await worker.run("go")
    got = responses(p)
    assert got["Bash"] == {"stdout": "out\nerr", "stderr": "", "interrupted": False, "isImage": False}
    assert got["Read"] == {
        "type": "text",
        "file": {"filePath": str(p / "notes.txt"), "content": "two", "numLines": 1, "startLine": 2, "totalLines": 3},
    }
    assert got["Write"] == {
        "type": "create",
        "filePath": str(p / "new.txt"),
        "content": "a\n",
        "structuredPatch": [],
        "originalFile": None,
    }
    assert got["Edit"] == {
        "filePath": str(p / "notes.txt"),
        "oldString": "two",
        "newString": "2",
        "originalFile": "one\ntwo\nthree\n",
        "structuredPatch": [
            {"oldStart": 1, "oldLines": 4, "newStart": 1, "newLines": 4, "lines": [" one", "-two", "+2", " three", " "]}
        ],
        "userModified": False,
        "replaceAll": False,
    }
    assert sorted(got["Glob"]["filenames"]) == [str(p / "new.txt"), str(p / "notes.txt")]
    assert (got["Glob"]["numFiles"], got["Glob"]["truncated"]) == (2, False)
    assert isinstance(got["Glob"]["durationMs"], int)
    # the last Grep (content mode) overwrote the files-mode entry in the dict; both shapes are Claude Code's
    assert got["Grep"]["mode"] == "content"
    assert got["Grep"]["numFiles"] == 1
    assert got["Grep"]["content"].endswith("three")
    assert got["Grep"]["numLines"] == 1
    lines = (p / "responses.jsonl").read_text().splitlines()
    files_mode = [json.loads(line)["response"] for line in lines if '"mode": "files_with_matches"' in line]
    assert files_mode == [{"mode": "files_with_matches", "numFiles": 1, "filenames": [str(p / "notes.txt")]}]


async def test_an_overwrite_gives_the_old_file_and_the_patch(env: Env) -> None:
    env.script("dump.py", DUMP_RESPONSE, python=True)
    env.settings({"PostToolUse": group("python3 .claude/hooks/dump.py", matcher="Write")})
    (env.project / "a.txt").write_text("x\n")
    turns = [[ToolUse("Write", {"file_path": "a.txt", "content": "y\n"})], [Text("done")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    await worker.run("go")
    write = responses(env.project)["Write"]
    assert (write["type"], write["originalFile"], write["content"]) == ("update", "x\n", "y\n")
    assert write["structuredPatch"] == [
        {"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2, "lines": ["-x", "+y", " "]}
    ]


async def test_public_style_posttooluse_scripts_read_the_structured_fields(env: Env) -> None:
    env.script("bash-log.sh", BASH_LOGGER)
    env.script("after-edit.py", AFTER_EDIT, python=True)
    env.settings(
        {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": ".claude/hooks/bash-log.sh"}]},
                {
                    "matcher": "Edit|Write",
                    "hooks": [{"type": "command", "command": "python3 .claude/hooks/after-edit.py"}],
                },
            ]
        }
    )
    turns = [
        [ToolUse("Bash", {"command": "printf 'built ok'"})],
        [ToolUse("Write", {"file_path": "src/m.py", "content": "x = 1\n"})],
        [ToolUse("Edit", {"file_path": "src/m.py", "old_string": "x = 1", "new_string": "x = 1\ny = 2"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    await worker.run("go")
    assert (env.project / "bash.log").read_text() == "exit-output: built ok interrupted=false\n"
    _, write, edit = results(worker)
    assert f"checked {env.project / 'src/m.py'}: 0 line(s) added" in write.content
    assert f"checked {env.project / 'src/m.py'}: 1 line(s) added" in edit.content  # y = 2


async def test_mcp_and_other_tools_send_their_content(env: Env) -> None:
    env.script("dump.py", DUMP_RESPONSE, python=True)
    env.settings({"PostToolUse": group("python3 .claude/hooks/dump.py")})

    @tool(name="mcp__tickets__lookup")
    def lookup(key: str) -> str:
        """Look a ticket up."""
        return f"ticket {key}: open"

    @tool(name="deploy")
    def deploy(target: str) -> str:
        """Deploy."""
        return f"deployed {target}"

    turns = [[ToolUse("mcp__tickets__lookup", {"key": "T-1"}), ToolUse("deploy", {"target": "prod"})], [Text("ok")]]
    worker, _, _ = worker_for(env, turns, tools=[lookup, deploy])
    await worker.run("go")
    got = responses(env.project)
    assert got["mcp__tickets__lookup"] == [{"type": "text", "text": "ticket T-1: open"}]
    assert got["deploy"] == "deployed prod"


def test_structured_patch_hunks_follow_the_diff_packages_shape() -> None:
    old = "\n".join(f"line {i}" for i in range(1, 21))
    new = old.replace("line 3", "line three").replace("line 18", "")
    hunks = structured_patch(old, new)
    assert [(h["oldStart"], h["oldLines"], h["newStart"], h["newLines"]) for h in hunks] == [  # type: ignore[index]
        (1, 6, 1, 6),
        (15, 6, 15, 6),
    ]
    assert hunks[0]["lines"][2:4] == ["-line 3", "+line three"]  # type: ignore[index]
    assert structured_patch("same", "same") == []


# The common "redact secrets from command output" hook: edit the structured response and hand it back.
REDACT = """
import json, re, sys
data = json.load(sys.stdin)
response = data["tool_response"]
response["stdout"] = re.sub(r"sk-[A-Za-z0-9]+", "[REDACTED]", response["stdout"])
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": response}}))
"""


async def test_an_updated_tool_output_in_the_tools_own_shape_replaces_the_result(env: Env) -> None:
    env.script("redact.py", REDACT, python=True)
    env.settings({"PostToolUse": group("python3 .claude/hooks/redact.py", matcher="Bash")})
    turns = [[ToolUse("Bash", {"command": "echo token=sk-abc123"})], [Text("ok")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    await worker.run("go")
    (result,) = results(worker)
    assert result.content == "token=[REDACTED]"
    assert "sk-abc123" not in result.content


def test_replacement_text_accepts_only_the_tools_shape() -> None:
    from hookloop.command_hooks.payloads import replacement_text

    assert replacement_text("Bash", {"stdout": "a", "stderr": "b", "interrupted": False}) == "a\nb"
    assert replacement_text("Bash", {"stdout": 3}) is None
    assert replacement_text("mcp__s__t", [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]) == "x\ny"
    assert replacement_text("mcp__s__t", [{"type": "image", "data": "…"}]) is None
    assert replacement_text("Read", {"type": "text", "file": {"content": "c"}}) == "c"
    assert replacement_text("Write", {"content": "c"}) is None
    assert replacement_text("Grep", {"mode": "content", "content": "hit"}) == "hit"
