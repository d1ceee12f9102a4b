"""MCP: a Worker uses the tools of a local MCP server (``notes_server.py``, started over stdio).

The server's tools appear as ``mcp__<server>__<tool>`` — Claude Code's names — so permission rules and hook
matchers written for Claude Code apply unchanged: here ``mcp__notes__delete_note`` is denied by a rule, and the
other two are allowed. Calls to one server whose tools are not annotated read-only run one after another, in
the model's order (two ``add_note`` calls never race); leaving the ``async with`` stops the server and every
process it started.

    python examples/mcp/agent.py [NOTES.json]       (default: a temporary file)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.tools.mcp import MCPServer

SERVER = Path(__file__).with_name("notes_server.py")


async def main(store: Path) -> None:
    model = ScriptedClient(
        [
            [
                ToolUse("mcp__notes__add_note", {"title": "groceries", "body": "milk, eggs"}),
                ToolUse("mcp__notes__add_note", {"title": "call", "body": "Ada at 5"}),
            ],
            [ToolUse("mcp__notes__list_notes"), ToolUse("mcp__notes__delete_note", {"title": "call"})],
            [Text("Saved two notes; deleting is not allowed here.")],
        ]
    )
    policy = PermissionPolicy(
        allow=["mcp__notes__add_note", "mcp__notes__list_notes"],
        deny=["mcp__notes__delete_note"],
    )
    # The same Python that runs this program runs the server (it needs the `mcp` package).
    async with MCPServer.stdio("notes", sys.executable, [str(SERVER), str(store)]) as notes:
        print("server tools:", ", ".join(sorted(t.meta.name for t in notes.list_tools())))
        worker = Worker(model, tools=[notes], permissions=policy)
        outcome = await worker.run("note my groceries and the call, then tidy up")
    for item in worker.history:
        if isinstance(item, ToolResult):
            print(f"{item.name}: {'DENIED ' if item.is_error else ''}{item.content}")
    if isinstance(outcome, Finished):
        print(f"model: {outcome.text}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1]).resolve()))
        print(f"store: {Path(sys.argv[1]).read_text(encoding='utf-8')}")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "notes.json"))
            print(f"store: {(Path(tmp) / 'notes.json').read_text(encoding='utf-8')}")
