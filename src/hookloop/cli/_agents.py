"""The CLI's subagents: ``hookloop run`` offers the ``Agent`` tool when ``.claude/agents/*.md`` or
``~/.claude/agents/*.md`` define subagents, and the text display shows their progress nested under the call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookloop._frozen import dumps
from hookloop.timeline import HookDecision, SubagentEnded, SubagentEvent, SubagentStarted, ToolEnded, ToolStarted

if TYPE_CHECKING:
    from pathlib import Path

    from hookloop.worker import Worker

__all__ = ["SUBAGENT_EVENTS", "add_agent_tool", "render_subagent"]

SUBAGENT_EVENTS = (SubagentStarted, SubagentEnded, SubagentEvent)


def add_agent_tool(worker: Worker, cwd: Path, *, include_claude: bool = True) -> list[str]:
    """Give ``worker`` the Agent tool over the subagents defined for ``cwd`` (none defined: nothing changes).
    Returns a warning for each definition file that was refused."""
    if not include_claude:
        return []
    from hookloop.agents import AgentTool, load_agents

    loaded = load_agents(cwd)
    notes = [f"warning: subagent definition refused: {e}" for e in loaded.errors]
    if loaded.agents and all(t.meta.name != "Agent" for t in worker.tools):
        worker.add_tool(AgentTool(loaded.agents))
    return notes


def render_subagent(renderer: Any, event: object, names: dict[str, str] | None = None) -> None:
    """Print one subagent event of the text display (``renderer`` is the CLI's TextRenderer), indented by depth."""
    types: dict[str, str] = renderer.__dict__.setdefault("subagent_types", {}) if names is None else names
    err = renderer.err
    if isinstance(event, SubagentStarted):
        renderer._end_text()
        types[event.agent_id] = event.agent_type
        pad = "  " * (event.depth - 1)
        what = f": {event.description}" if event.description else ""
        verb = "resumes" if event.resumed else "starts"
        err.print(f"{pad}[cyan]◆[/] subagent {event.agent_type} {verb}{what}", highlight=False, markup=True)
    elif isinstance(event, SubagentEnded):
        tokens = "" if event.usage is None else f", {event.usage.input_tokens}+{event.usage.output_tokens} tokens"
        colour = "green" if event.outcome == "finished" else "yellow" if event.outcome == "paused" else "red"
        err.print(
            f"[cyan]◆[/] subagent {event.agent_type} [{colour}]{event.outcome}[/] ({event.seconds:.2f}s{tokens})",
            highlight=False,
        )
    elif isinstance(event, SubagentEvent):
        inner = event.event
        if isinstance(inner, SUBAGENT_EVENTS):
            render_subagent(renderer, inner, types)
            return
        pad = "  " * event.depth + "│ "
        label = types.get(event.agent_id, "subagent")
        if isinstance(inner, ToolStarted):
            renderer._end_text()
            args = dumps(inner.arguments, ensure_ascii=False)
            err.print(f"{pad}[yellow]●[/] [dim]{label}[/] {inner.tool_name} {args[:160]}", highlight=False)
        elif isinstance(inner, ToolEnded):
            mark = "[red]error[/]" if inner.is_error else "[green]ok[/]"
            err.print(f"{pad}  └ {inner.tool_name} {mark} ({inner.seconds:.2f}s)", highlight=False)
        elif (
            isinstance(inner, HookDecision)
            and not (inner.decision in ("Continue", "Finish") and inner.reason is None)
            and inner.source != "command hooks"
        ):
            reason = f": {inner.reason}" if inner.reason else ""
            err.print(f"{pad}  hook {inner.hook} on {inner.event} → {inner.decision}{reason}", highlight=False)
