"""``hookloop demo``: the whole loop offline — scripted model, tools, hooks — streamed to the terminal.

The story: an agent is asked to tidy a project. It reads a config file that holds a secret (a hook masks it),
tries ``rm -rf`` (a guard hook denies it), asks to delete a file (a hook asks a person: the run pauses for
approval), and first answers without the summary format the team wants (an on_turn_end hook makes it fix it).
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hookloop import (
    AllowAlways,
    Approve,
    Finished,
    Paused,
    Reject,
    ResumeDecision,
    ScriptedClient,
    Text,
    ToolContext,
    ToolUse,
    Worker,
    tool,
)
from hookloop.hooks import (
    Ask,
    Continue,
    ContinueWithMessages,
    Deny,
    Finish,
    PostToolCallInfo,
    PreToolCallInfo,
    PreToolCallResult,
    TurnEndInfo,
)
from hookloop.stream import TextDelta
from hookloop.timeline import HookDecision, RunEnded, TimelineEvent, ToolEnded, ToolStarted

SECRET = re.compile(r"(api_key\s*=\s*)(\S+)")


def _workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="hookloop-demo-"))
    (root / "README.md").write_text("# Widget\nA tiny project.\n")
    (root / "config.ini").write_text("[service]\nurl = https://example.invalid\napi_key = sk-live-1234567890\n")
    (root / "build").mkdir()
    (root / "build" / "old.o").write_text("stale object file\n")
    (root / "notes.tmp").write_text("scratch\n")
    return root


def _tools(root: Path) -> list[Any]:
    @tool(read_only=True, threaded=False)
    def list_files(ctx: ToolContext) -> str:
        """List the project's files."""
        return "\n".join(sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()))

    @tool(read_only=True, threaded=False)
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return (root / path).read_text()

    @tool(threaded=False)
    def run_command(command: str) -> str:
        """Run a shell command (the demo only pretends)."""
        return f"(pretended to run: {command})"

    @tool(threaded=False)
    def delete_file(path: str) -> str:
        """Delete one file of the project."""
        (root / path).unlink()
        return f"deleted {path}"

    return [list_files, read_file, run_command, delete_file]


def _script() -> ScriptedClient:
    return ScriptedClient(
        [
            [Text("I'll look around first."), ToolUse("list_files", {}), ToolUse("read_file", {"path": "config.ini"})],
            [
                Text("The build folder is stale; cleaning up."),
                ToolUse("run_command", {"command": "rm -rf build"}),
                ToolUse("delete_file", {"path": "notes.tmp"}),
            ],
            [Text("Done. I removed notes.tmp and left the build folder alone.")],
            [
                Text(
                    "Summary:\n- removed notes.tmp\n- kept build/ (rm -rf was blocked)\n- config.ini holds a masked key"
                )
            ],
        ],
        chunk_size=6,
    )


# -- the hooks a team would write ----------------------------------------------------------------------


def block_rm_rf(info: PreToolCallInfo) -> PreToolCallResult:
    """Guard: never let the agent run rm -rf."""
    command = str(info.arguments.get("command", ""))
    if re.search(r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f|\brm\s+-[a-zA-Z]*f[a-zA-Z]*r", command):
        return Deny("rm -rf is blocked in this project")
    return Continue()


def ask_before_delete(info: PreToolCallInfo) -> PreToolCallResult:
    """Deleting a file needs a person's approval."""
    if info.tool_name == "delete_file":
        return Ask(f"delete {info.arguments.get('path')}?")
    return Continue()


def mask_secrets(info: PostToolCallInfo) -> Continue:
    """Never show a key to the model."""
    masked = SECRET.sub(r"\1***", info.content)
    return Continue(replace_output=masked) if masked != info.content else Continue()


def require_summary(info: TurnEndInfo) -> Finish | ContinueWithMessages:
    """The final answer must start with 'Summary:' (asked once; stop_hook_active prevents loops)."""
    if info.last_assistant_text.startswith("Summary:") or info.stop_hook_active:
        return Finish()
    return ContinueWithMessages("Please answer as a 'Summary:' bullet list.")


class _Printer:
    """A timeline subscriber that streams text and shows each tool call and hook decision."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.in_text = False
        self.decisions: list[HookDecision] = []
        self.tools: list[tuple[str, bool, float]] = []
        self.names: dict[str, str] = {}

    def _end_text(self) -> None:
        if self.in_text:
            self.console.print()
            self.in_text = False

    def __call__(self, event: TimelineEvent) -> None:
        if isinstance(event, TextDelta):
            if not self.in_text:
                self.console.print("[bold cyan]model[/] ", end="")
                self.in_text = True
            self.console.print(event.text, end="", markup=False, highlight=False)
        elif isinstance(event, ToolStarted):
            self._end_text()
            args = ", ".join(f"{k}={v!r}" for k, v in event.arguments.items())
            self.console.print(f"  [yellow]tool[/] {event.tool_name}({args})", highlight=False)
        elif isinstance(event, ToolEnded):
            mark = "[red]error[/]" if event.is_error else "[green]ok[/]"
            self.console.print(f"  [yellow]tool[/] {event.tool_name} → {mark} ({event.seconds * 1000:.2f} ms)")
            self.tools.append((event.tool_name, event.is_error, event.seconds))
        elif isinstance(event, HookDecision):
            self._end_text()
            self.decisions.append(event)
            if event.decision in ("Continue", "Finish") and event.reason is None:
                return
            colour = {"Deny": "red", "Ask": "magenta", "ContinueWithMessages": "blue"}.get(event.decision, "green")
            detail = f": {event.reason}" if event.reason else ""
            self.console.print(
                f"  [bold {colour}]hook[/] {event.hook} ({event.source}) on {event.event} → "
                f"[{colour}]{event.decision}[/]{detail} [dim]({event.seconds * 1e6:.0f} µs)[/]",
                highlight=False,
            )
        elif isinstance(event, RunEnded):
            self._end_text()


def _ask(console: Console, paused: Paused, yes: bool) -> dict[str, ResumeDecision]:
    decisions: dict[str, ResumeDecision] = {}
    for call in paused.pending:
        console.print(
            f"\n[bold magenta]approval needed[/] {call.tool_name}({dict(call.arguments)}) — "
            f"{call.reason} ({call.asked_by})"
        )
        if yes:
            console.print("  [dim]--yes: allowed once[/]")
            decisions[call.call_id] = Approve()
            continue
        answer = console.input("  allow? [y]es once / [a]lways / [n]o: ").strip().lower()
        if answer.startswith("a"):
            decisions[call.call_id] = AllowAlways()
        elif answer.startswith("y"):
            decisions[call.call_id] = Approve()
        else:
            decisions[call.call_id] = Reject("the person said no")
    return decisions


async def run_demo(console: Console, *, yes: bool) -> int:
    """Run the demo; returns the process exit code."""
    root = _workspace()
    console.print(f"[bold]hookloop demo[/] — an offline agent run in [dim]{root}[/]\n")
    worker = Worker(
        _script(),
        tools=_tools(root),
        system="You are a careful coding agent.",
        transcript=root / ".hookloop" / "transcript.jsonl",
    )
    worker.add_pre_tool_call_hook(block_rm_rf)
    worker.add_pre_tool_call_hook(ask_before_delete)
    worker.add_post_tool_call_hook(mask_secrets)
    worker.add_on_turn_end_hook(require_summary)
    printer = _Printer(console)
    worker.subscribe(printer)
    console.print("[bold]user[/] Tidy up this project and summarise what you did.")
    started = time.perf_counter()
    outcome = await worker.run("Tidy up this project and summarise what you did.")
    while isinstance(outcome, Paused):
        outcome = await worker.resume(outcome.checkpoint, _ask(console, outcome, yes))
    worker.close()
    assert isinstance(outcome, Finished)
    elapsed = time.perf_counter() - started

    table = Table(title="run summary", show_header=True)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("turns", str(outcome.turns))
    table.add_row("tool calls", f"{len(printer.tools)} ({sum(1 for t in printer.tools if t[1])} errors)")
    hook_calls = len(printer.decisions)
    decisive = [d for d in printer.decisions if d.decision not in ("Continue", "Finish") or d.reason]
    table.add_row("hook calls", f"{hook_calls} ({len(decisive)} changed something)")
    table.add_row("tokens", f"{outcome.usage.input_tokens} in / {outcome.usage.output_tokens} out")
    table.add_row("wall time", f"{elapsed * 1000:.1f} ms")
    table.add_row("transcript", str(root / ".hookloop" / "transcript.jsonl"))
    table.add_row("final answer", outcome.text)
    console.print()
    console.print(table)
    return 0
