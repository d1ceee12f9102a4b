"""Running one subagent for one tool call of its parent: the rules that follow the child, the events, the
nesting of pauses, effects, usage, timeline and transcript. Private: the tools in ``_tools`` call it."""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

from hookloop._nested import AgentFrame, NestedCall, NestedOutcome, PrefixedEffects, current_agent
from hookloop._run_base import PROTOCOL_CONTEXT_SOURCE, cap_text
from hookloop.effects import current_effects
from hookloop.errors import WorkerError
from hookloop.hooks._dispatch import Handler, run_chain
from hookloop.hooks.events import (
    NOTIFICATION,
    ON_TURN_END,
    POST_TOOL_BATCH,
    POST_TOOL_CALL,
    PRE_TOOL_CALL,
    SUBAGENT_START,
    SUBAGENT_STOP,
)
from hookloop.hooks.registry import Chain
from hookloop.hooks.results import Continue, Finish, OnTurnEndResult
from hookloop.hooks.summaries import SubagentStartInfo, SubagentStopInfo, TurnEndInfo
from hookloop.items import Item, Message, ToolCall
from hookloop.outcome import Finished
from hookloop.timeline import SubagentEnded, SubagentEvent, SubagentStarted, TimelineEvent, TranscriptWriter
from hookloop.tools._base import ToolOutput

if TYPE_CHECKING:
    from hookloop.permissions import PermissionPolicy
    from hookloop.worker import Worker

__all__: list[str] = []

FOLLOWED = (PRE_TOOL_CALL, POST_TOOL_CALL, POST_TOOL_BATCH, NOTIFICATION, SUBAGENT_START, SUBAGENT_STOP)
"""The parent's hook events that fire for the child too (Claude Code: tool hooks fire for a subagent's calls,
and every subagent's start and stop reach the subagent hooks); the child's own handlers come after them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One subagent call: who runs it and on what."""

    agent_type: str
    description: str
    prompt: str
    outer_policies: tuple[PermissionPolicy, ...]
    """The policies every call of the child must also pass (beyond the child's own)."""


def agent_id_for(run_id: str, turn: int, call_id: str) -> str:
    """A subagent's id: the same for the same call of the same run (a resume or a durable replay), different for
    each call even where a provider numbers call ids per reply (the turn is part of it)."""
    return "a" + hashlib.sha256(f"{run_id}\0{turn}\0{call_id}".encode()).hexdigest()[:16]


def child_transcript(parent: Worker, agent_id: str) -> Path | None:
    """``<parent transcript without .jsonl>/subagents/agent-<id>.jsonl`` (Claude Code's layout), or None."""
    path = parent.transcript_path
    if path is None:
        return None
    return path.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


def depth_now() -> int:
    frame = current_agent.get()
    return 0 if frame is None else frame.depth


@contextmanager
def _wired(parent: Worker, child: Worker, task: Task, frame: AgentFrame) -> Iterator[None]:
    """The parent's rules on the child for one call (restored after): its tool and subagent hooks before the
    child's own, its approvers and denial observers, its policies as a ceiling, and subagent_stop in the
    child's on_turn_end."""
    saved_chains = list(child.hooks.chains)
    saved = (list(child.approvers), list(child.denial_observers), child._outer_policies)
    try:
        for event in FOLLOWED:
            parent_chain = parent.hooks.chains[event.index]
            if parent_chain:
                child.hooks.chains[event.index] = Chain((*parent_chain, *child.hooks.chains[event.index]))
        stop_chain = parent.hooks.chains[SUBAGENT_STOP.index]
        if stop_chain:
            bridge = _StopBridge(parent, stop_chain, frame, task.agent_type)
            handler = Handler.of(bridge, name="subagent_stop")
            child.hooks.chains[ON_TURN_END.index] = Chain((*child.hooks.chains[ON_TURN_END.index], handler))
        child.approvers[:0] = parent.approvers
        child.denial_observers[:0] = parent.denial_observers
        child._outer_policies = (*task.outer_policies, *child._outer_policies)
        yield
    finally:
        child.hooks.chains[:] = saved_chains
        child.approvers[:], child.denial_observers[:], child._outer_policies = saved


class _StopBridge:
    """The child's last on_turn_end hook: the parent's subagent_stop hooks decide whether it stops."""

    __slots__ = ("agent_type", "chain", "frame", "parent")

    def __init__(self, parent: Worker, chain: Sequence[Handler], frame: AgentFrame, agent_type: str) -> None:
        self.parent, self.chain, self.frame, self.agent_type = parent, tuple(chain), frame, agent_type

    async def __call__(self, info: TurnEndInfo) -> OnTurnEndResult:
        frame = self.frame
        stop = SubagentStopInfo(
            run_id=info.run_id,
            session_id=info.session_id,
            call_id=frame.call_id,
            agent_id=frame.agent_id,
            agent_type=self.agent_type,
            last_assistant_text=info.last_assistant_text,
            stop_hook_active=info.stop_hook_active,
            forced_continuations=info.forced_continuations,
            depth=frame.depth,
            transcript_path=frame.transcript_path,
        )
        decided = await run_chain(SUBAGENT_STOP, self.chain, stop)
        if decided is None:
            return Finish()
        result: OnTurnEndResult = decided[0]
        return result


async def _start_context(parent: Worker, nested: NestedCall, task: Task, frame: AgentFrame) -> list[Item]:
    """subagent_start hooks on the parent; what they add is context for the child only."""
    chain = parent.hooks.chains[SUBAGENT_START.index]
    if not chain:
        return []
    info = SubagentStartInfo(
        run_id=nested.run_id,
        session_id=parent.session_id,
        call_id=nested.call_id,
        agent_id=frame.agent_id,
        agent_type=task.agent_type,
        description=task.description,
        prompt=task.prompt,
        depth=frame.depth,
        transcript_path=frame.transcript_path,
    )
    edits: list[tuple[Handler, Any]] = []
    await run_chain(SUBAGENT_START, chain, info, edits)
    items: list[Item] = []
    for handler, result in edits:
        if isinstance(result, Continue) and result.additional_context:
            text = result.additional_context
            if handler.source != PROTOCOL_CONTEXT_SOURCE:
                body = cap_text(text, parent.context_cap, "additional context from a hook")
                text = f'<hook-context hook="{handler.name}" event="subagent_start">\n{body}\n</hook-context>'
            meta = {"source": "hook_context", "hook": handler.name, "event": "subagent_start"}
            items.append(Message.user(text, meta=meta))
    return items


async def run_subagent(child: Worker, nested: NestedCall, task: Task, *, fresh: bool) -> NestedOutcome:
    """Run (or resume) ``child`` as the subagent of ``nested``'s call; see :mod:`hookloop.agents`.

    ``fresh``: the child was built for this call (else it is a Worker offered with ``as_tool``, whose history is
    replaced for each call)."""
    parent: Worker = nested.worker
    if not fresh:
        if child in _BUSY or child.running:
            message = f"the {task.agent_type} subagent is already running (a Worker runs one task at a time)"
            return NestedOutcome(output=ToolOutput(content=message, is_error=True))
        _BUSY.add(child)
    try:
        return await _run(child, parent, nested, task, fresh=fresh)
    finally:
        _BUSY.discard(child)


_BUSY: weakref.WeakSet[Worker] = weakref.WeakSet()
"""``as_tool`` Workers running as a subagent now: taken before the parent's rules are wired into one."""


async def _run(child: Worker, parent: Worker, nested: NestedCall, task: Task, *, fresh: bool) -> NestedOutcome:
    agent_id = agent_id_for(nested.run_id, nested.turn, nested.call_id)
    depth = depth_now() + 1
    transcript = child.transcript_path if not fresh and child.transcript_path else child_transcript(parent, agent_id)
    frame = AgentFrame(
        agent_id=agent_id,
        agent_type=task.agent_type,
        depth=depth,
        call_id=nested.call_id,
        transcript_path=None if transcript is None else str(transcript),
    )
    timeline = parent.timeline
    following = bool(timeline.subscribers)
    unsubscribe: list[Any] = []
    writer = TranscriptWriter(transcript) if transcript is not None and child.transcript_path is None else None
    if writer is not None:
        unsubscribe.append(child.subscribe(writer))
    if following:
        call_id = nested.call_id

        def forward(event: TimelineEvent) -> None:
            timeline.emit(SubagentEvent(call_id=call_id, agent_id=agent_id, depth=depth, event=event))

        unsubscribe.append(child.subscribe(forward))
        timeline.emit(
            SubagentStarted(
                call_id=nested.call_id,
                agent_id=agent_id,
                agent_type=task.agent_type,
                description=task.description,
                depth=depth,
                transcript_path=frame.transcript_path,
                resumed=nested.resume is not None,
            )
        )
    parent_effects = current_effects.get()
    effects = None if parent_effects is None else PrefixedEffects(parent_effects, f"agent:{nested.call_id}/")
    started = perf_counter()
    ended: Literal["finished", "paused", "aborted", "cancelled", "error"] = "cancelled"
    usage = None
    token = current_agent.set(frame)
    try:
        with _wired(parent, child, task, frame):
            if nested.resume is not None:
                if not fresh and child.history:
                    child.set_history(())
                outcome = await child.resume(
                    nested.resume, decisions=dict(nested.decisions or {}), effects=effects, fork=nested.fork
                )
            else:
                context = await _start_context(parent, nested, task, frame)
                if context or not fresh:
                    child.set_history(context)
                outcome = await child.run(task.prompt, run_id=f"{nested.run_id}/{agent_id}", effects=effects)
        if isinstance(outcome, Finished):
            ended, usage = "finished", outcome.usage
            text = outcome.text or f"(the {task.agent_type} subagent finished without a reply)"
            structured = {  # Claude Code's Agent tool_response, with hookloop's subagent fields
                "status": "completed",
                "content": [{"type": "text", "text": text}],
                "totalDurationMs": round((perf_counter() - started) * 1000),
                "totalTokens": usage.input_tokens + usage.output_tokens,
                "totalToolUseCount": sum(1 for item in outcome.items if isinstance(item, ToolCall)),
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
                "agent_id": agent_id,
                "agent_type": task.agent_type,
                "turns": outcome.turns,
                "transcript_path": frame.transcript_path,
            }
            return NestedOutcome(output=ToolOutput(content=text, structured=structured), usage=usage)
        ended = "paused"
        return NestedOutcome(paused=outcome.checkpoint)
    except WorkerError as exc:
        name = type(exc).__name__
        ended = "aborted" if name == "Aborted" else "cancelled" if name == "Cancelled" else "error"
        message = f"the {task.agent_type} subagent failed: {type(exc).__name__}: {exc}"
        return NestedOutcome(output=ToolOutput(content=message, is_error=True))
    finally:
        current_agent.reset(token)
        for undo in unsubscribe:
            undo()
        if writer is not None:
            writer.close()
        if following:
            timeline.emit(
                SubagentEnded(
                    call_id=nested.call_id,
                    agent_id=agent_id,
                    agent_type=task.agent_type,
                    outcome=ended,
                    usage=usage,
                    seconds=perf_counter() - started,
                )
            )
