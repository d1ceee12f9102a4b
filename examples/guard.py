"""Guard: block dangerous Bash commands with a deny rule and a ``pre_tool_call`` hook.

Two layers, and why both:

- **Permission rules** (Claude Code's syntax) are enforced inside the Worker, below every hook. ``Bash(rm:*)``
  denies ``rm`` in every subcommand of a compound command, through wrappers and ``VAR=value`` prefixes, and a
  program only known at run time (``"$(printf rm)" -rf build``) counts as matching it. No hook can loosen it.
- **A hook** decides what a rule cannot express — here: nothing may run as root, and no ``--force`` push. A
  hook's ``Deny`` always tightens; its ``Allow`` would never override a deny or ask rule.

The model is scripted (offline, deterministic): it tries five commands in one turn; the real Bash tool runs the
ones that get through, in a throw-away project (or in the directory given as the first argument).

    python examples/guard.py [PROJECT_DIR]
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Continue, Deny, PreToolCallInfo, PreToolCallResult
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import Workspace, builtin_tools

# What the scripted model will try, in one reply (the calls are planned in order, then run in parallel).
ATTEMPTS = [
    "ls",  # allowed by a rule
    "rm -rf build",  # denied by the rule Bash(rm:*)
    'cd src && "$(printf rm)" -rf ../build',  # the program is only known at run time: the rm rule still matches
    "sudo ls /root",  # denied by the hook
    "git push --force origin main",  # denied by the hook (and git is not even allowed by a rule)
]

_ROOT = re.compile(r"(^|[\s;&|(])(sudo|doas|su)\s")
_FORCE_PUSH = re.compile(r"\bgit\b.*\bpush\b.*(\s--force\b|\s-f\b|\s--force-with-lease\b)")


def guard(info: PreToolCallInfo) -> PreToolCallResult:
    """Deny root and force pushes, whatever the rules say. Hooks see every call, also ones a rule will deny."""
    if info.tool_name != "Bash":
        return Continue()
    command = str(info.arguments.get("command", ""))
    if _ROOT.search(command):
        return Deny("commands may not run as root")
    if _FORCE_PUSH.search(command):
        return Deny("force pushes are not allowed; push a new commit instead")
    return Continue()


async def main(project: Path) -> None:
    (project / "build").mkdir(exist_ok=True)
    (project / "build" / "app.bin").write_text("artifact\n")
    (project / "src").mkdir(exist_ok=True)

    policy = PermissionPolicy(
        allow=["Bash(ls:*)"],
        deny=["Bash(rm:*)", "Bash(curl:*)"],
        workspace=project,
    )
    model = ScriptedClient(
        [
            [ToolUse("Bash", {"command": command}) for command in ATTEMPTS],
            [Text("Listed the project; the clean-up and the push were refused.")],
        ]
    )
    worker = Worker(model, tools=builtin_tools(Workspace(project)), permissions=policy, workspace=project)
    worker.add_pre_tool_call_hook(guard)

    outcome = await worker.run("clean the build and push")

    # Every call got exactly one result (denied ones an error result the model reads): show each, in order.
    results = [item for item in worker.history if isinstance(item, ToolResult)]
    for command, result in zip(ATTEMPTS, results, strict=True):
        status = "RAN" if not result.is_error else "DENIED"
        first_line = result.content.strip().splitlines()[0] if result.content.strip() else "(no output)"
        print(f"{status:6} {command}\n       -> {first_line}")
    print(f"build/ still there: {(project / 'build' / 'app.bin').exists()}")
    if not isinstance(outcome, Finished):  # nothing may ask: every command is allowed or denied by a rule or hook
        raise SystemExit(f"unexpected: {outcome!r}")
    print(f"model: {outcome.text}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1]).resolve()))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp).resolve()))
