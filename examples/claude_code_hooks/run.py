"""Claude Code hooks: a project's ``.claude/settings.json`` and its hook scripts, run unmodified by hookloop.

``project/`` is an ordinary Claude Code project: the same settings file and scripts work under ``claude``.
hookloop reads Claude Code's settings shape (``permissions`` and ``hooks``), gives each script exactly Claude
Code's stdin payload and environment (``CLAUDE_PROJECT_DIR``; secrets withheld), and reads the answer as Claude
Code does (exit 2 + stderr blocks; JSON ``decision``/``hookSpecificOutput``; plain stdout of UserPromptSubmit
is context). A script's allow never bypasses a deny or ask rule.

Project hooks are code from a repository, so they run only once you trust the configuration
(``hookloop hooks trust`` records it). This program runs a throw-away copy of ``project/`` and passes
``trust_project=True`` — the explicit, non-interactive trust (``--trust-project-hooks`` on the command line).

    python examples/claude_code_hooks/run.py [WORK_DIR]     (the copy goes there; default: a temporary folder)
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.command_hooks import CommandHooks
from hookloop.settings import load_permission_policy
from hookloop.tools.builtin import Workspace, builtin_tools

PROJECT = Path(__file__).with_name("project")


async def main(work: Path) -> None:
    project = work / "project"
    shutil.copytree(PROJECT, project)  # copy2: the scripts stay executable
    model = ScriptedClient(
        [
            [
                ToolUse("Bash", {"command": "ls notes"}),  # allowed by a rule; the hook lets it through
                ToolUse("Bash", {"command": "rm -rf notes"}),  # blocked by block_destructive.py (exit 2)
                ToolUse("Read", {"file_path": ".env"}),  # denied by the rule Read(./.env)
                ToolUse("Write", {"file_path": "notes/todo.md", "content": "- water the plants\n"}),
            ],
            [Text("I listed the notes and wrote notes/todo.md.")],  # the Stop hook sends this back
            [Text("I listed the notes and wrote notes/todo.md.\nSUMMARY: one note added, nothing deleted.")],
        ]
    )
    policy = load_permission_policy(project)  # permissions from .claude/settings.json (and the user's files)
    worker = Worker(model, tools=builtin_tools(Workspace(project)), permissions=policy, workspace=project)
    hooks = CommandHooks.load(project, trust_project=True)
    for diagnostic in hooks.diagnostics:
        print(f"config: {diagnostic}")
    hooks.install(worker)  # what `hookloop run` does
    outcome = await worker.run("add a todo to my notes, and clean up")

    # The first request carried the UserPromptSubmit hook's context.
    first = model.requests[0]
    print("context from UserPromptSubmit:", "SUMMARY" in str([getattr(i, "text", "") for i in first.items]))
    for item in worker.history:
        if isinstance(item, ToolResult):
            status = "ERROR" if item.is_error else "ok"
            print(f"{item.name:5} {status:5} {item.content.strip().splitlines()[0] if item.content.strip() else ''}")
    print(f"model requests: {len(model.requests)} (the Stop hook sent the model back once)")
    if isinstance(outcome, Finished):
        print(f"final answer: {outcome.text.splitlines()[-1]}")
    print("writes.log:", (project / ".claude" / "writes.log").read_text(encoding="utf-8").strip())
    print(f"notes/ still there: {(project / 'notes' / 'README.md').exists()}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1]).resolve()))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp).resolve()))
