"""``hookloop demo``: a whole coding-agent session, offline, in a fresh temporary project.

What it sets up, so a newcomer sees every layer once:

- the scripted model (no network, no key) and the built-in tools (Glob, Read, Bash, Write, …);
- a project settings file, ``.hookloop/settings.json``, with permission rules and three real command hooks —
  Python scripts that speak Claude Code's hook protocol on stdin/stdout:
  a Bash guard (PreToolUse) that blocks ``rm -rf``, a formatter/logger (PostToolUse on Write|Edit), and a Stop
  hook that sends the model back once until its answer is a summary;
- an application interceptor that masks secrets in tool output before the model (or any hook) sees it;
- an ``ask`` rule that pauses the run for approval: the checkpoint is written, read back, and resumed once you
  answer (``--yes`` answers "allow once"). The model reads the answer from its history, as a real one would:
  declined, the file stays and the summary says so.

The temporary project is removed at the end (also after Ctrl-C or an error) unless ``--keep``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hookloop import (
    Approve,
    Checkpoint,
    Finished,
    Paused,
    ResumeDecision,
    ScriptedClient,
    ScriptedTurn,
    Text,
    ToolCall,
    ToolResult,
    ToolUse,
    Worker,
)
from hookloop._frozen import dumps
from hookloop.cli._render import TextRenderer
from hookloop.cli._session import TerminalApprover
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.interceptors import ToolResultView
from hookloop.permissions import PermissionPolicy
from hookloop.providers.base import LLMRequest
from hookloop.timeline import HookDecision, ItemAppended, TimelineEvent, ToolEnded
from hookloop.tools.builtin import Workspace, builtin_tools

PROMPT = "Tidy up this project: drop the stale build output and scratch files, note the change, and summarise."

GUARD = """#!{python}
# PreToolUse (matcher: Bash) — Claude Code's protocol: JSON on stdin; exit 2 + stderr = block.
import json, re, sys
command = json.load(sys.stdin)["tool_input"].get("command", "")
if re.search(r"\\brm\\s+(-\\w*r\\w*f|-\\w*f\\w*r)\\b", command):
    print("rm -rf is blocked in this project; delete single files instead", file=sys.stderr)
    sys.exit(2)
"""

FORMATTER = """#!{python}
# PostToolUse (matcher: Write|Edit) — strips trailing spaces, logs the change, tells the model what it did.
import json, os, sys
data = json.load(sys.stdin)
path = data["tool_input"]["file_path"]
with open(path) as f:
    text = f.read()
tidy = "\\n".join(line.rstrip() for line in text.splitlines()) + "\\n"
changed = tidy != text
if changed:
    with open(path, "w") as f:
        f.write(tidy)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".hookloop", "changes.log"), "a") as log:
    log.write(f"{{data['tool_name']}} {{path}}\\n")
note = f"formatted {{os.path.basename(path)}} (trailing spaces removed)" if changed else "already tidy"
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PostToolUse", "additionalContext": note}}}}))
"""

STOP_CHECK = """#!{python}
# Stop — the final answer must be a summary; stop_hook_active lets the model finish on the second try.
import json, sys
data = json.load(sys.stdin)
if not data["last_assistant_message"].startswith("Summary:") and not data["stop_hook_active"]:
    print(json.dumps({{"decision": "block", "reason": "Answer as a 'Summary:' bullet list of what you changed."}}))
"""

SETTINGS = {
    "permissions": {
        "allow": ["Glob", "Read", "Write(./CHANGES.md)", "Edit(./CHANGES.md)"],
        "ask": ["Bash(rm:*)"],
        "deny": ["Read(./.env)"],
    },
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ".hookloop/hooks/guard.py"}]}],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ".hookloop/hooks/format_and_log.py"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": ".hookloop/hooks/require_summary.py"}]}],
    },
}

SECRET = re.compile(r"(api_key\s*=\s*)(\S+)")


class MaskSecrets:
    """An application interceptor: rewrites tool output before the model — or any hook — sees it."""

    async def post_tool_call(self, result: ToolResultView) -> None:
        masked = SECRET.sub(r"\1***", result.content)
        if masked != result.content:
            result.content = masked
            result.notes["masked_by"] = "MaskSecrets"


def make_project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="hookloop-demo-"))
    (root / "README.md").write_text("# Widget\nA tiny project.\n")
    (root / "config.ini").write_text("[service]\nurl = https://example.invalid\napi_key = sk-live-1234567890\n")
    (root / "build").mkdir()
    (root / "build" / "old.o").write_text("stale object file\n")
    (root / "notes.tmp").write_text("scratch\n")
    hooks = root / ".hookloop" / "hooks"
    hooks.mkdir(parents=True)
    for name, body in (("guard.py", GUARD), ("format_and_log.py", FORMATTER), ("require_summary.py", STOP_CHECK)):
        script = hooks / name
        script.write_text(body.format(python=sys.executable))
        script.chmod(0o755)
    (root / ".hookloop" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    return root


def scratch_removed(request: LLMRequest) -> bool:
    """Whether ``rm notes.tmp`` ran, as the model sees it: its call has a result that is not an error (a
    denied or declined call is answered with an error result)."""
    calls = {
        item.call_id
        for item in request.items
        if isinstance(item, ToolCall) and item.arguments.get("command") == "rm notes.tmp"
    }
    return any(isinstance(item, ToolResult) and item.call_id in calls and not item.is_error for item in request.items)


def record_change(request: LLMRequest) -> ScriptedTurn:
    line = "- removed notes.tmp" if scratch_removed(request) else "- kept notes.tmp (its removal was declined)"
    return ScriptedTurn(
        [
            Text("Recording the change."),
            ToolUse("Write", {"file_path": "CHANGES.md", "content": f"# Changes   \n{line}   \n"}),
        ]
    )


def report(request: LLMRequest) -> ScriptedTurn:
    if scratch_removed(request):
        return ScriptedTurn([Text("Done. I removed notes.tmp and wrote CHANGES.md.")])
    return ScriptedTurn([Text("Done. You declined removing notes.tmp, so it is still there; I wrote CHANGES.md.")])


def summary(request: LLMRequest) -> ScriptedTurn:
    scratch = (
        "- removed the scratch file notes.tmp (approved)"
        if scratch_removed(request)
        else "- kept the scratch file notes.tmp (you declined its removal)"
    )
    return ScriptedTurn(
        [
            Text(
                f"Summary:\n{scratch}\n- kept build/ (rm -rf is blocked here)\n- recorded the change in "
                "CHANGES.md\n- config.ini holds an API key (masked)"
            )
        ]
    )


def model() -> ScriptedClient:
    """The scripted model: the first two turns are fixed; the rest read the history (was the removal
    approved?), so what it says matches what happened."""
    return ScriptedClient(
        [
            [
                Text("I'll look around first."),
                ToolUse("Glob", {"pattern": "**/*"}),
                ToolUse("Read", {"file_path": "config.ini"}),
            ],
            [
                Text("The build folder and the scratch file are stale; cleaning up."),
                ToolUse("Bash", {"command": "rm -rf build"}),
                ToolUse("Bash", {"command": "rm notes.tmp"}),
            ],
            record_change,
            report,
            summary,
        ],
        chunk_size=6,
    )


class Tally:
    """Counts what the summary table reports, and shows the interceptor's work (it is not a hook decision)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tools: list[bool] = []
        self.decisions: Counter[str] = Counter()

    def __call__(self, event: TimelineEvent) -> None:
        if isinstance(event, ItemAppended) and isinstance(event.item, ToolResult) and "masked_by" in event.item.meta:
            self.console.print(
                f"  [cyan]interceptor[/] {event.item.meta['masked_by']} masked a secret in {event.item.name}'s output "
                "before the model or any hook saw it",
                highlight=False,
            )
        elif isinstance(event, ToolEnded):
            self.tools.append(event.is_error)
        elif (
            isinstance(event, HookDecision)
            and event.source != "command hooks"  # the bridge's merged answer: each script is counted already
            and not (event.decision in ("Continue", "Finish") and event.reason is None)
        ):
            self.decisions[event.decision] += 1


async def decide(console: Console, paused: Paused, yes: bool, renderer: TextRenderer) -> dict[str, ResumeDecision]:
    decisions: dict[str, ResumeDecision] = {}
    approver = TerminalApprover(console, renderer.pause)
    for call in paused.pending:
        if yes:
            console.print(
                f"  [magenta]approval[/] {call.tool_name} {dumps(call.arguments)} — {call.asked_by}: "
                "[dim]--yes answers 'allow once'[/]",
                highlight=False,
            )
            decisions[call.call_id] = Approve()
        else:
            decisions[call.call_id] = await approver(call)
    return decisions


async def run_demo(console: Console, *, yes: bool, keep: bool = False) -> int:
    """Run the demo; returns the process exit code. The temporary project is removed at the end — after
    Ctrl-C or an error too — unless ``keep``."""
    root = make_project()
    try:
        return await _run(console, root, yes=yes, keep=keep)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


async def _run(console: Console, root: Path, *, yes: bool, keep: bool) -> int:
    where = "kept after the run" if keep else "removed after the run; --keep keeps it"
    console.print(f"[bold]hookloop demo[/] — an offline agent session in [dim]{root}[/] ({where})")
    console.print(
        "[dim]model: scripted · tools: built-in · hooks: .hookloop/settings.json (3 command hooks, trusted for "
        "this fresh project) · interceptor: MaskSecrets · rules: allow Glob/Read/Write(./CHANGES.md), ask "
        "Bash(rm:*)[/]\n",
        highlight=False,
    )
    layers = [(str(root / ".hookloop" / "settings.json"), SETTINGS)]
    worker = Worker(
        model(),
        tools=builtin_tools(Workspace(root)),
        system="You are a careful coding agent.",
        permissions=PermissionPolicy.from_settings(layers, workspace=root),
        interceptors=[MaskSecrets()],
        workspace=root,
        transcript=root / ".hookloop" / "transcript.jsonl",
    )
    try:
        hooks = CommandHooks.load(
            root, include_claude=False, include_cline=False, trust_project=True, home=root, log=False
        )
        hooks.install(worker)
        tally = Tally(console)
        renderer = TextRenderer(console, console)
        worker.subscribe(renderer)
        worker.subscribe(tally)
        console.print(f"[bold]user[/] {PROMPT}", highlight=False)
        started = time.perf_counter()
        outcome: Any = await worker.run(PROMPT)
        while isinstance(outcome, Paused):
            saved = outcome.checkpoint.save(root / ".hookloop" / "paused.checkpoint.json")
            console.print(f"\n[bold magenta]run paused[/] — {outcome.reason}", highlight=False)
            console.print(f"  [dim]checkpoint written to {saved}; resuming from that file[/]", highlight=False)
            decisions = await decide(console, outcome, yes, renderer)
            outcome = await worker.resume(Checkpoint.load(saved), decisions)
    finally:
        worker.close()
    assert isinstance(outcome, Finished)
    elapsed = time.perf_counter() - started

    table = Table(title="run summary", show_header=True)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("turns", str(outcome.turns))
    table.add_row("tool calls", f"{len(tally.tools)} run ({sum(tally.tools)} with an error result)")
    table.add_row("hook decisions", ", ".join(f"{n} {d}" for d, n in sorted(tally.decisions.items())) or "none")
    table.add_row(
        "files", f"build/ kept: {(root / 'build').is_dir()} · notes.tmp removed: {not (root / 'notes.tmp').exists()}"
    )
    table.add_row("hook log", (root / ".hookloop" / "changes.log").read_text().strip())
    table.add_row("tokens", f"{outcome.usage.input_tokens} in / {outcome.usage.output_tokens} out")
    table.add_row("wall time", f"{elapsed * 1000:.0f} ms")
    table.add_row("project", str(root) if keep else f"{root} (removed; --keep keeps it)")
    if keep:
        table.add_row("transcript", str(worker.transcript_path))
    console.print()
    console.print(table)
    return 0
