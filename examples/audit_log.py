"""Audit log: every tool call of a run, one JSON line each, in a file.

``AuditLog`` is a *provider object*: its methods are named after hook events and ``worker.add_hooks`` registers
them all. Which event sees what:

- ``pre_tool_call`` sees every call the model made, before the permission decision (also calls a rule will
  deny) — it records when each call was requested;
- ``post_tool_call`` sees every call that *executed*, with its result and duration;
- ``post_tool_batch`` sees every call of the reply with the result the model gets — denied, skipped and
  unknown-tool calls included — so that is where one line per call is written;
- ``on_abort`` records a run that ended in an error or was cancelled.

Hooks only observe here (they return ``Continue()``), so the log can never change what the run does. Lines are
appended and flushed as each batch ends, so a crash loses at most the batch in flight.

    python examples/audit_log.py [LOG_FILE]          (default: audit.jsonl in the current directory)
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.hooks import (
    AbortInfo,
    Continue,
    PostToolBatchInfo,
    PostToolCallInfo,
    PreToolCallInfo,
)
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import Workspace, builtin_tools


class AuditLog:
    """Append one JSON object per tool call to ``path`` (JSON Lines)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._requested: dict[str, float] = {}  # call id -> when the model asked for it
        self._executed: dict[str, float] = {}  # call id -> seconds the tool ran

    def pre_tool_call(self, info: PreToolCallInfo) -> Continue:
        self._requested[info.call_id] = time.time()
        return Continue()

    def post_tool_call(self, info: PostToolCallInfo) -> Continue:
        self._executed[info.call_id] = info.seconds
        return Continue()

    def post_tool_batch(self, info: PostToolBatchInfo) -> Continue:
        with self.path.open("a", encoding="utf-8") as log:
            for call in info.calls:
                executed = call.call_id in self._executed
                record: dict[str, Any] = {
                    "time": self._requested.pop(call.call_id, time.time()),
                    "run_id": info.run_id,
                    "session_id": info.session_id,
                    "turn": info.turn,
                    "call_id": call.call_id,
                    "tool": call.tool_name,
                    "arguments": dict(call.arguments),  # a read-only mapping: copy it for json
                    # "ok" ran and succeeded; "error" ran and failed; "refused": never ran (a rule, a hook,
                    # an unknown tool or invalid arguments), with the reason the model was given.
                    "status": ("error" if call.is_error else "ok") if executed else "refused",
                    "seconds": round(self._executed.pop(call.call_id, 0.0), 6),
                    "result": call.content[:500],
                }
                log.write(json.dumps(record, ensure_ascii=False) + "\n")
        return Continue()

    def on_abort(self, info: AbortInfo) -> None:
        with self.path.open("a", encoding="utf-8") as log:
            log.write(json.dumps({"time": time.time(), "run_id": info.run_id, "aborted": info.reason}) + "\n")


@tool
async def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


async def main(log_path: Path, project: Path) -> None:
    (project / "notes.txt").write_text("buy milk\ncall Ada\n")
    model = ScriptedClient(
        [
            [  # one reply, four calls: a read, a count, a denied command, a tool that does not exist
                ToolUse("Read", {"file_path": "notes.txt"}),
                ToolUse("word_count", {"text": "buy milk call Ada"}),
                ToolUse("Bash", {"command": "rm notes.txt"}),
                ToolUse("Telepathy", {"to": "Ada"}),
            ],
            [ToolUse("Bash", {"command": "wc -l notes.txt"})],  # a second turn
            [Text("Your notes have two lines and four words.")],
        ]
    )
    policy = PermissionPolicy(allow=["Read", "word_count", "Bash(wc:*)"], deny=["Bash(rm:*)"], workspace=project)
    tools = [*builtin_tools(Workspace(project)), word_count]
    worker = Worker(model, tools=tools, permissions=policy, workspace=project)
    worker.add_hooks(AuditLog(log_path))

    outcome = await worker.run("summarise my notes")
    print(f"model: {outcome.text if isinstance(outcome, Finished) else outcome}")


def show(log_path: Path) -> None:
    for line in log_path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "tool" in entry:
            print(f"turn {entry['turn']}  {entry['status']:7} {entry['tool']}({json.dumps(entry['arguments'])})")
    print(f"audit log: {log_path}")


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "audit.jsonl").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(target, Path(tmp).resolve()))
    show(target)
