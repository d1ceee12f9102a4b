"""Cline hooks see Cline's tool vocabulary (issue 12, item 3) and hook context has one cap and one wrapper
(item 4). Real Cline-style scripts (bash + jq, Python) run by a real Worker with the real built-in tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop import Finished, ScriptedTurn, Text, ToolUse
from hookloop.command_hooks.bridge import CommandHookCancelled
from hookloop.command_hooks.cline_tools import ClineMappingError, cline_tool, from_cline, parse_diff, render_diff
from hookloop.tools.builtin import builtin_tools

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import Env, group, request_text, results, worker_for

pytestmark = pytest.mark.anyio

# A workspace guard in the style of Cline's example hooks: log every call, cancel dangerous commands and writes
# to secrets, keyed on Cline's tool names and parameter keys.
CLINE_GUARD = r"""
input=$(cat)
tool=$(echo "$input" | jq -r '.preToolUse.toolName')
echo "$input" | jq -c '.preToolUse' >> "$CLAUDE_PROJECT_DIR/cline-calls.jsonl"
case "$tool" in
  execute_command)
    cmd=$(echo "$input" | jq -r '.preToolUse.parameters.command')
    if [[ "$cmd" == *"rm -rf"* ]]; then
      echo '{"cancel": true, "errorMessage": "rm -rf is not allowed in this workspace"}'
      exit 0
    fi ;;
  write_to_file|replace_in_file)
    path=$(echo "$input" | jq -r '.preToolUse.parameters.path')
    if [[ "$path" == *.env ]]; then
      echo '{"cancel": true, "errorMessage": "refusing to touch .env files"}'
      exit 0
    fi ;;
esac
echo '{"cancel": false}'
"""


def cline_env(env: Env) -> Path:
    env.script("PreToolUse", CLINE_GUARD, folder=".clinerules/hooks")
    return env.project / "cline-calls.jsonl"


def calls_seen(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


async def test_a_cline_guard_sees_cline_names_and_shapes_for_every_builtin_tool(env: Env) -> None:
    log = cline_env(env)
    (env.project / "notes.txt").write_text("alpha\nbeta\n")
    turns = [
        [ToolUse("Write", {"file_path": "src/app.py", "content": "print('hi')\n"})],
        [ToolUse("Edit", {"file_path": str(env.project / "notes.txt"), "old_string": "beta", "new_string": "gamma"})],
        [ToolUse("Read", {"file_path": "notes.txt", "offset": 1})],
        [ToolUse("Grep", {"pattern": "gam+a", "glob": "*.txt"})],
        [ToolUse("Glob", {"pattern": "**/*.py"})],
        [ToolUse("Bash", {"command": "echo hello", "description": "say hello"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    outcome = await worker.run("work")
    assert isinstance(outcome, Finished)
    assert (env.project / "notes.txt").read_text() == "alpha\ngamma\n"
    assert calls_seen(log) == [
        {"toolName": "write_to_file", "parameters": {"path": "src/app.py", "content": "print('hi')\n"}},
        {
            "toolName": "replace_in_file",
            "parameters": {"path": "notes.txt", "diff": "------- SEARCH\nbeta\n=======\ngamma\n+++++++ REPLACE"},
        },
        {"toolName": "read_file", "parameters": {"path": "notes.txt"}},
        {"toolName": "search_files", "parameters": {"path": ".", "regex": "gam+a", "file_pattern": "*.txt"}},
        {"toolName": "list_files", "parameters": {"path": ".", "recursive": "true", "file_pattern": "**/*.py"}},
        {"toolName": "execute_command", "parameters": {"command": "echo hello"}},
    ]


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (ToolUse("Bash", {"command": "rm -rf build"}), "rm -rf is not allowed in this workspace"),
        (ToolUse("Write", {"file_path": "config/.env", "content": "KEY=1"}), "refusing to touch .env files"),
    ],
)
async def test_a_cline_guard_on_execute_command_and_write_to_file_fires_in_a_live_run(
    env: Env, call: ToolUse, reason: str
) -> None:
    cline_env(env)
    worker, _, _ = worker_for(env, [[call], [Text("never")]], tools=builtin_tools(env.project), workspace=env.project)
    (env.project / "build").mkdir()
    with pytest.raises(CommandHookCancelled) as caught:
        await worker.run("go")
    assert caught.value.reason == reason
    assert (env.project / "build").is_dir()
    assert not (env.project / "config").exists()


REWRITE = """
import json, sys
data = json.load(sys.stdin)["preToolUse"]
params = data["parameters"]
if data["toolName"] == "execute_command" and params["command"].startswith("npm "):
    params["command"] = "pnpm " + params["command"][4:]
    print(json.dumps({"overrideInput": params}))
elif data["toolName"] == "replace_in_file":
    print(json.dumps({"overrideInput": {"diff": params["diff"].replace("gamma", "delta")}}))
elif data["toolName"] == "write_to_file":
    print(json.dumps({"overrideInput": {"path": "../escape.txt", "content": params["content"]}}))
"""


async def test_a_cline_hooks_rewritten_parameters_map_back_onto_the_tool_input(env: Env) -> None:
    env.script("PreToolUse", REWRITE, python=True, folder=".clinerules/hooks")
    (env.project / "notes.txt").write_text("beta\n")
    tools = builtin_tools(env.project)
    turns = [
        [ToolUse("Bash", {"command": "npm --version || true", "description": "version"})],
        [ToolUse("Edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"})],
        [ToolUse("Write", {"file_path": "inside.txt", "content": "x"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=tools, workspace=env.project)
    await worker.run("go")
    bash, edit, write = results(worker)
    assert bash.meta["executed_arguments"] == {"command": "pnpm --version || true", "description": "version"}
    assert (env.project / "notes.txt").read_text() == "delta\n"
    assert edit.meta["executed_arguments"]["new_string"] == "delta"
    # The rewrite is validated like any other: a path outside the workspace is refused by the tool.
    assert write.is_error
    assert not (env.project.parent / "escape.txt").exists()


async def test_a_rewrite_that_cannot_be_mapped_back_denies_the_call(env: Env) -> None:
    env.script(
        "PreToolUse",
        'echo \'{"overrideInput": {"diff": "no markers here"}}\'',
        folder=".clinerules/hooks",
    )
    (env.project / "notes.txt").write_text("beta\n")
    turns = [[ToolUse("Edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "x"})], [Text("ok")]]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    await worker.run("go")
    (denied,) = results(worker)
    assert denied.is_error
    assert "cannot map" in denied.content
    assert (env.project / "notes.txt").read_text() == "beta\n"


# -- pure mapping ------------------------------------------------------------------------------------------


def test_mcp_tools_map_to_use_mcp_tool_and_back() -> None:
    name, params = cline_tool("mcp__github__create_issue", {"title": "bug", "labels": ["x"]}, "/w")
    assert name == "use_mcp_tool"
    assert params == {
        "server_name": "github",
        "tool_name": "create_issue",
        "arguments": '{"title": "bug", "labels": ["x"]}',
    }
    back = from_cline("mcp__github__create_issue", {"title": "bug"}, {"arguments": '{"title": "fixed"}'}, "/w")
    assert back == {"title": "fixed"}
    with pytest.raises(ClineMappingError, match="server_name"):
        from_cline("mcp__github__create_issue", {}, {"server_name": "other", "arguments": "{}"}, "/w")
    with pytest.raises(ClineMappingError, match="JSON object"):
        from_cline("mcp__github__create_issue", {}, {"arguments": "[1]"}, "/w")


def test_paths_are_relative_inside_the_workspace_and_absolute_outside() -> None:
    assert cline_tool("Read", {"file_path": "/w/a/../b.txt"}, "/w") == ("read_file", {"path": "b.txt"})
    assert cline_tool("Read", {"file_path": "../etc/passwd"}, "/w") == ("read_file", {"path": "/etc/passwd"})
    assert cline_tool("Read", {"file_path": "/wx/f"}, "/w") == ("read_file", {"path": "/wx/f"})
    assert from_cline("Write", {"file_path": "a", "content": "c"}, {"path": "sub/../b"}, "/w") == {
        "file_path": "/w/b",
        "content": "c",
    }


def test_other_tools_keep_their_names_and_values_decode_back_to_their_types() -> None:
    name, params = cline_tool("deploy", {"target": "prod", "dry_run": True, "count": 2}, "/w")
    assert (name, params) == ("deploy", {"target": "prod", "dry_run": "true", "count": "2"})
    back = from_cline("deploy", {"target": "prod", "dry_run": True, "count": 2}, {**params, "dry_run": "false"}, "/w")
    assert back == {"target": "prod", "dry_run": False, "count": 2}


_LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)
_MARKERS = {"------- SEARCH", "<<<<<<< SEARCH", "=======", "+++++++ REPLACE", ">>>>>>> REPLACE"}


@given(old=st.lists(_LINE, max_size=4), new=st.lists(_LINE, max_size=4))
def test_a_rendered_diff_parses_back_to_its_old_and_new_text(old: list[str], new: list[str]) -> None:
    if any(line.rstrip() in _MARKERS for line in (*old, *new)):
        return
    a, b = "\n".join(old), "\n".join(new)
    assert parse_diff(render_diff(a, b)) == (a, b)


@pytest.mark.parametrize(
    "diff",
    [
        "",
        "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n------- SEARCH\nc\n=======\nd\n+++++++ REPLACE",
        "prefix\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE",
        "------- SEARCH\na\n+++++++ REPLACE",
        "=======\n------- SEARCH\na\n+++++++ REPLACE",
    ],
)
def test_a_diff_that_is_not_exactly_one_block_is_refused(diff: str) -> None:
    with pytest.raises(ClineMappingError):
        parse_diff(diff)


# -- item 4: one cap, one wrapper --------------------------------------------------------------------------


async def test_cline_context_is_capped_once_at_50000_and_wrapped_once(env: Env) -> None:
    env.script(
        "PostToolUse",
        'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"contextModification": "x" * 60000}))',
        python=True,
        folder=".clinerules/hooks",
    )
    worker, client, _ = worker_for(
        env, [[ToolUse("Bash", {"command": "true"})], [Text("ok")]], tools=builtin_tools(env.project)
    )
    await worker.run("go")
    content = results(worker)[0].content
    assert content.count("<hook_context") == 1
    assert "<hook-context" not in content  # not wrapped a second time by hookloop
    assert content.count("x") >= 50_000
    assert "[... context truncated due to size limit ...]" in content
    assert "cut by hookloop" not in content  # not cut a second time
    assert "[... context truncated due to size limit ...]" in request_text(client, 1)


async def test_a_long_pretooluse_context_does_not_push_out_the_posttooluse_context(env: Env) -> None:
    pre = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "p" * 9_990}}
    post = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "LINT: 3 warnings"}}
    env.script("pre.sh", f"cat >/dev/null; echo '{json.dumps(pre)}'")
    env.script("post.sh", f"cat >/dev/null; echo '{json.dumps(post)}'")
    env.settings(
        {
            "PreToolUse": group(".claude/hooks/pre.sh", matcher="Bash"),
            "PostToolUse": group(".claude/hooks/post.sh", matcher="Bash"),
        }
    )
    worker, _, _ = worker_for(
        env, [[ToolUse("Bash", {"command": "true"})], [Text("ok")]], tools=builtin_tools(env.project)
    )
    await worker.run("go")
    content = results(worker)[0].content
    assert "LINT: 3 warnings" in content
    assert "p" * 9_990 in content
    assert content.count("<hook-context") == 2
    assert '<hook-context hook="command hooks" event="PostToolUse">\nLINT: 3 warnings\n</hook-context>' in content
    assert "cut by hookloop" not in content


async def test_claude_context_keeps_claude_codes_own_cap_and_one_wrapper(env: Env) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "z" * 12_000}}
    env.script("ctx.py", f"import sys\nsys.stdin.read()\nprint({json.dumps(json.dumps(answer))})", python=True)
    env.settings({"UserPromptSubmit": group("python3 .claude/hooks/ctx.py")})
    worker, client, _ = worker_for(env, [ScriptedTurn([Text("ok")])])
    await worker.run("hi")
    sent = request_text(client, 0)
    assert sent.count("<hook-context") == 1
    assert "hook output truncated: 12000 characters, limit 10000" in sent
    assert "cut by hookloop" not in sent


def test_multiedit_ls_and_webfetch_get_clines_names() -> None:
    edits = {
        "file_path": "/w/a.py",
        "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
    }
    name, params = cline_tool("MultiEdit", edits, "/w")
    assert name == "replace_in_file"
    assert params["path"] == "a.py"
    assert params["diff"].count("------- SEARCH") == 2
    with pytest.raises(ClineMappingError, match="MultiEdit"):
        from_cline("MultiEdit", edits, {"diff": params["diff"]}, "/w")
    assert cline_tool("LS", {"path": "/w/src"}, "/w") == ("list_files", {"path": "src", "recursive": "false"})
    assert cline_tool("WebFetch", {"url": "https://x.test", "prompt": "p"}, "/w") == (
        "web_fetch",
        {"url": "https://x.test"},
    )
    assert from_cline("WebFetch", {"url": "https://x.test", "prompt": "p"}, {"url": "https://y.test"}, "/w") == {
        "url": "https://y.test",
        "prompt": "p",
    }
