"""The state of one run and what the parts of the turn machine share: hook dispatch, context, outcomes."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from hookloop._build import hook_decision
from hookloop._frozen import EMPTY
from hookloop._nested import current_agent
from hookloop.errors import (
    HookError,
)
from hookloop.hooks._dispatch import Handler, run_chain
from hookloop.hooks._tool_inputs import MetaSnapshot, tool_meta_snapshot
from hookloop.hooks.events import (
    HookEvent,
)
from hookloop.hooks.results import (
    Continue,
    ContinueWithMessages,
)
from hookloop.items import Message
from hookloop.outcome import Finished
from hookloop.stream import (
    Usage,
)
from hookloop.tools._base import ToolMeta

if TYPE_CHECKING:
    from hookloop._host import RunHost
    from hookloop.effects import Effects


__all__: list[str] = []

PROTOCOL_CONTEXT_SOURCE = "command hooks"
"""The hook ``source`` whose context is capped and wrapped by its own wire protocol (command hooks)."""


def cap_text(text: str, cap: int, what: str) -> str:
    """Cap ``text`` at ``cap`` characters, marking the cut (never silent)."""
    if len(text) <= cap:
        return text
    cut = len(text) - cap
    return f"{text[:cap]}\n[… {cut} characters cut by hookloop: {what} is capped at {cap} characters]"


def describe(result: object) -> tuple[str, str | None]:
    """(decision name, reason or edit summary) for the timeline and transcript."""
    name = type(result).__name__
    if isinstance(result, Continue):
        edits = [
            k
            for k, v in (
                ("updated_input", result.updated_input),
                ("additional_context", result.additional_context),
                ("replace_output", result.replace_output),
            )
            if v is not None
        ]
        return name, ", ".join(edits) or None
    if isinstance(result, ContinueWithMessages):
        return name, " / ".join(i.text for i in result.items if isinstance(i, Message)) or None
    reason = getattr(result, "reason", None)
    return name, reason if isinstance(reason, str) else None


_NO_SNAPSHOT: MetaSnapshot = ("", "", EMPTY, False, "", False, False)
"""What meta_snapshot holds before any is taken (meta_of_snapshot is None then: no tool's meta is it)."""


class _RunBase:
    """The state of one run or resume, and what every part of the turn machine shares (hook dispatch,
    hook-added context, the finished outcome)."""

    def __init__(
        self,
        worker: RunHost,
        run_id: str,
        *,
        turn: int = 0,
        forced: int = 0,
        usage: Usage | None = None,
        run_start: int = 0,
        effects: Effects | None = None,
    ) -> None:
        self.w: RunHost = worker
        """The Worker, through the one interface the turn machine may use (:mod:`hookloop._host`)."""
        self.effects = effects
        """The durable backend's effects (None: a plain run performs its effects directly)."""
        self.model_requests = 0
        """Model requests of this run segment so far (names each model effect)."""
        self.run_id = run_id
        self.session_id = worker.session_id
        self.turn = turn
        self.forced = forced
        self.forked = False
        """A resume with ``fork=True`` (a paused subagent resumes as a fork too)."""
        self.usage = usage or Usage()
        self.run_start = run_start
        self.last_text = ""
        self.stop_reason: str | None = None
        """The stop reason of the last model reply (None when the provider sent none)."""
        self.last_sent = run_start
        self.stop: tuple[str, str] | None = None
        self.cancel_requested = False
        """Worker.cancel() cancelled this run's task (it does so once)."""
        self.cancel_delivered = False
        """That cancellation was taken (surfaced as CancelledError, or settled when the run ended)."""
        self.ending = False
        """The run's body is over: on_abort / session_end may be running; further cancel() calls are ignored."""
        self.meta_of_snapshot: ToolMeta | None = None
        self.meta_snapshot: MetaSnapshot = _NO_SNAPSHOT
        """The tool metadata the last pre_tool_call hook input held, and the ToolMeta it was taken of."""
        self._snapshots: dict[int, tuple[ToolMeta, MetaSnapshot]] = {}
        frame = current_agent.get()  # a subagent's Worker runs inside its frame (agents._run)
        self.agent_id = None if frame is None else frame.agent_id
        self.agent_type = None if frame is None else frame.agent_type

    # -- hooks -----------------------------------------------------------------------------------------

    def _snapshot(self, meta: ToolMeta) -> MetaSnapshot:
        """What pre_tool_call hook inputs hold of ``meta``: taken once per ToolMeta object and run."""
        known = self._snapshots.get(id(meta))
        if known is None or known[0] is not meta:
            known = self._snapshots[id(meta)] = (meta, tool_meta_snapshot(meta))
        self.meta_of_snapshot, self.meta_snapshot = known
        return known[1]

    def _observer(self, call_id: str | None = None) -> Any:
        timeline = self.w.timeline
        if not timeline.subscribers:
            return None

        def observe(event: HookEvent[Any, Any], handler: Handler, result: object, seconds: float) -> None:
            decision, reason = describe(result)
            timeline.emit(hook_decision(event.name, handler.name, handler.source, decision, reason, seconds, call_id))

        return observe

    def hooks(
        self,
        event: HookEvent[Any, Any],
        inp: object,
        edits: list[tuple[Handler, Any]] | None = None,
        call_id: str | None = None,
        fresh: Callable[[], object] | None = None,
    ) -> Coroutine[Any, Any, tuple[Any, Handler] | None]:
        """The chain of ``event`` on ``inp`` (:func:`~hookloop.hooks._dispatch.run_chain`): await the result.

        A plain function returning run_chain's coroutine, so an event costs one coroutine, not two."""
        return run_chain(event, self.w.hooks.chains[event.index], inp, edits, self._observer(call_id), fresh)

    def _context_block(self, handler: Handler, event: HookEvent[Any, Any], text: str) -> str:
        """Hook-added context as the model sees it: capped (the cut marked) and tagged with its origin.

        Command hooks (``source == PROTOCOL_CONTEXT_SOURCE``) deliver their context already capped and wrapped
        by their protocol's rules (Claude Code 10 000 characters per hook, Cline 50 000 in Cline's block): it
        is taken as it is, so there is one cap and one wrapper."""
        if handler.source == PROTOCOL_CONTEXT_SOURCE:
            return text
        body = cap_text(text, self.w.context_cap, "additional context from a hook")
        return f'<hook-context hook="{handler.name}" event="{event.name}">\n{body}\n</hook-context>'

    def _context_item(self, handler: Handler, event: HookEvent[Any, Any], text: str) -> Message:
        return Message.user(
            self._context_block(handler, event, text),
            meta={"source": "hook_context", "hook": handler.name, "event": event.name},
        )

    # -- start ---------------------------------------------------------------------------------------------

    def _finished(self, reason: str = "end_turn") -> Finished:
        return Finished(
            run_id=self.run_id,
            text=self.last_text,
            items=tuple(self.w._history[self.run_start :]),
            usage=self.usage,
            turns=self.turn,
            reason="stopped_by_hook" if self.stop is not None else "end_turn",
            stop_reason=self.stop[1] if self.stop is not None else None,
        )

    def _reject_edits(
        self, event: HookEvent[Any, Any], handler: Handler, result: Continue, *, allowed: tuple[str, ...]
    ) -> None:
        for name in ("updated_input", "additional_context", "replace_output"):
            if name not in allowed and getattr(result, name) is not None:
                raise HookError(
                    f"Continue({name}=…) is not accepted on {event.name}", hook=handler.name, event=event.name
                )
