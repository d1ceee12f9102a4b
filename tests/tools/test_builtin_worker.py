"""End to end: the built-in tools in a Worker driven by the scripted model, with a pre_tool_call hook that reads
the arguments exactly as a Claude Code hook reads tool_input."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Continue, Deny, PreToolCallInfo, PreToolCallResult
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio


async def test_a_scripted_session_reads_writes_edits_searches_and_a_hook_guards_bash(root: Path) -> None:
    client = ScriptedClient(
        [
            [ToolUse("Write", {"file_path": "notes/todo.txt", "content": "buy milk\nfix bike\n"})],
            [ToolUse("Edit", {"file_path": "notes/todo.txt", "old_string": "milk", "new_string": "oat milk"})],
            [ToolUse("Bash", {"command": "cd notes && wc -l < todo.txt", "description": "count lines"})],
            [ToolUse("Bash", {"command": "rm -rf /tmp/not-really", "description": "clean up"})],
            [
                ToolUse("Read", {"file_path": "notes/todo.txt"}),
                ToolUse("Grep", {"pattern": "bike", "output_mode": "content"}),
                ToolUse("Glob", {"pattern": "**/*.txt"}),
                ToolUse("Bash", {"command": "pwd"}),
            ],
            [Text("All done.")],
        ]
    )
    worker = Worker(client, tools=builtin_tools(Workspace(root)), workspace=root)
    commands: list[str] = []
    read_only: dict[str, bool] = {}

    def guard(info: PreToolCallInfo) -> PreToolCallResult:
        read_only[info.tool_name] = info.meta.read_only
        if info.tool_name == "Bash":
            command = info.arguments["command"]  # tool_input.command, as a Claude Code hook reads it
            assert isinstance(command, str)
            commands.append(command)
            if "rm -rf" in command:
                return Deny("recursive deletes are not allowed")
        return Continue()

    worker.add_pre_tool_call_hook(guard)
    outcome = await worker.run("tidy my notes")
    assert isinstance(outcome, Finished)
    assert outcome.text == "All done."

    results = [(r.name, r.content, r.is_error) for r in worker.history if isinstance(r, ToolResult)]
    todo = root / "notes" / "todo.txt"
    assert results == [
        ("Write", f"Created {todo} (18 bytes, 2 lines).", False),
        ("Edit", f"Edited {todo}: replaced 1 occurrence.", False),
        ("Bash", "2", False),
        ("Bash", "permission denied by hook 'guard': recursive deletes are not allowed", True),
        ("Read", "     1\tbuy oat milk\n     2\tfix bike", False),
        ("Grep", "notes/todo.txt:2:fix bike", False),
        ("Glob", str(todo), False),
        ("Bash", str(root / "notes"), False),  # the `cd notes` of the first command persisted
    ]
    assert commands == ["cd notes && wc -l < todo.txt", "rm -rf /tmp/not-really", "pwd"]
    assert read_only == {"Write": False, "Edit": False, "Bash": False, "Read": True, "Grep": True, "Glob": True}
    assert todo.read_text() == "buy oat milk\nfix bike\n"


async def test_a_path_outside_the_workspace_becomes_an_error_result_not_a_crash(root: Path, outside: Path) -> None:
    client = ScriptedClient(
        [[ToolUse("Read", {"file_path": str(outside / "secret.txt")})], [Text("I could not read it.")]]
    )
    worker = Worker(client, tools=builtin_tools(root), workspace=root)
    outcome = await worker.run("read the secret")
    assert isinstance(outcome, Finished)
    [result] = [r for r in worker.history if isinstance(r, ToolResult)]
    assert result.is_error
    assert "is outside the workspace" in result.content
    assert "TOP SECRET" not in result.content
