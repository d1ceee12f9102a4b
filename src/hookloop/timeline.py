"""The timeline: what happens during a run, for any number of subscribers (UIs, transcripts, telemetry).

Subscribers are plain callables invoked synchronously, in subscription order, with each
:data:`TimelineEvent`. A subscriber that raises is logged and skipped; it never breaks the run. When nobody
subscribes, emitting costs one truth test.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, TypeAlias, assert_never

from hookloop._copied import CopiedOnRead
from hookloop._frozen import FrozenDict, JSONValue, thaw
from hookloop.items import Item, detached
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

__all__ = [
    "HookDecision",
    "HookOutputLine",
    "HookStarted",
    "ItemAppended",
    "ModelRequestEnded",
    "ModelRequestStarted",
    "RunEnded",
    "RunStarted",
    "SubagentEnded",
    "SubagentEvent",
    "SubagentStarted",
    "Timeline",
    "TimelineEvent",
    "ToolEnded",
    "ToolProgress",
    "ToolServerLog",
    "ToolStarted",
    "TranscriptWriter",
    "event_to_json",
]

logger = logging.getLogger("hookloop")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    run_id: str
    session_id: str
    source: Literal["startup", "resume"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnded:
    run_id: str
    outcome: Literal["finished", "paused", "aborted", "cancelled", "error"]
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookDecision:
    """One hook ran: which, where it came from, what it returned, how long it took."""

    event: str
    hook: str
    source: str
    decision: str
    reason: str | None
    seconds: float
    call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequestStarted:
    """A model request begins (its stream events follow)."""

    run_id: str
    turn: int
    model: str | None
    provider: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequestEnded:
    """A model request ended: its usage and stop reason, or the error that ended it."""

    run_id: str
    turn: int
    usage: Usage | None
    stop_reason: str | None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HookStarted:
    """A command hook process started (its :class:`HookDecision` follows when it ends)."""

    event: str
    hook: str
    source: str
    call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutputLine:
    """One line a command hook printed, as it arrived (``stream`` is ``stdout`` or ``stderr``)."""

    event: str
    hook: str
    source: str
    stream: Literal["stdout", "stderr"]
    line: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    call_id: str
    tool_name: str
    arguments: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEnded:
    call_id: str
    tool_name: str
    is_error: bool
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    """A running tool reported progress (an MCP ``notifications/progress`` for this call): ``progress`` so far,
    of ``total`` when known, with the tool's ``message`` if any. Between the call's ToolStarted and ToolEnded."""

    call_id: str
    tool_name: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolServerLog:
    """A tool server's log message (an MCP ``notifications/message``): ``server`` as in ``ToolMeta.server``
    (``mcp__<name>``), the syslog ``level`` it gave (``debug`` … ``emergency``), its ``logger`` name if any, and
    its ``data`` (any JSON value). Emitted while a call of that server runs; one that arrives between calls is
    kept (the last 100) and emitted when the next call of that server starts."""

    server: str
    level: str
    data: JSONValue
    logger: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemAppended:
    """An item entered the history (with provenance in the item's ``meta``). ``item`` is a copy of the
    history's own, made when first read (every subscriber reads the same copy)."""

    item: Item


CopiedOnRead(ItemAppended, "item", tuple, lambda box: detached(box[0]))  # the Worker stores (its item,)


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted:
    """A subagent started (or resumed) for tool call ``call_id``: its own events follow as
    :class:`SubagentEvent`, and its own transcript, if any, is ``transcript_path``."""

    call_id: str
    agent_id: str
    agent_type: str
    description: str
    depth: int
    transcript_path: str | None = None
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentEnded:
    """The subagent of ``call_id`` ended: ``outcome`` as in :class:`RunEnded`, with the usage of its whole run."""

    call_id: str
    agent_id: str
    agent_type: str
    outcome: Literal["finished", "paused", "aborted", "cancelled", "error"]
    usage: Usage | None = None
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentEvent:
    """One event of a subagent's own timeline, on its parent's (a subagent's subagent's event arrives wrapped
    twice): how a UI shows nested progress."""

    call_id: str
    agent_id: str
    depth: int
    event: TimelineEvent


TimelineEvent: TypeAlias = (
    StreamEvent
    | RunStarted
    | RunEnded
    | ModelRequestStarted
    | ModelRequestEnded
    | HookStarted
    | HookDecision
    | HookOutputLine
    | ToolStarted
    | ToolEnded
    | ToolProgress
    | ToolServerLog
    | ItemAppended
    | SubagentStarted
    | SubagentEnded
    | SubagentEvent
)
Subscriber: TypeAlias = Callable[[TimelineEvent], object]


class Timeline:
    """Fan-out of timeline events to subscribers."""

    __slots__ = ("subscribers",)

    def __init__(self) -> None:
        self.subscribers: tuple[Subscriber, ...] = ()

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Follow the timeline; returns a function that unsubscribes."""
        self.subscribers = (*self.subscribers, fn)

        def unsubscribe() -> None:
            self.subscribers = tuple(s for s in self.subscribers if s is not fn)

        return unsubscribe

    def emit(self, event: TimelineEvent) -> None:
        for fn in self.subscribers:
            try:
                fn(event)
            except Exception:
                logger.exception("timeline subscriber %r failed on %s", fn, type(event).__name__)

    def __bool__(self) -> bool:
        return bool(self.subscribers)


class TranscriptWriter:
    """A subscriber that writes the run as JSONL: one object per line with a ``type`` field.

    Lines: ``run_started``, ``item`` (the item's JSON, with provenance such as which hook edited a tool input),
    ``hook`` (each hook decision other than a plain pass), ``tool_started``/``tool_ended``, ``tool_progress``,
    ``server_log``, ``run_ended``.
    Stream deltas are not written (the items they build are).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")

    def __call__(self, event: TimelineEvent) -> None:
        record = _transcript_record(event)
        if record is not None and self._file is not None:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _transcript_record(event: TimelineEvent) -> dict[str, JSONValue] | None:
    """What the transcript keeps: everything but stream deltas and plain passes."""
    if isinstance(event, _STREAM_EVENTS):
        return None
    if isinstance(event, HookDecision) and event.decision == "Continue" and event.reason is None:
        return None
    if isinstance(event, (HookStarted, SubagentEvent)):  # a subagent keeps its own transcript
        return None
    return event_to_json(event)


def event_to_json(event: TimelineEvent) -> dict[str, JSONValue]:
    """One timeline event as a JSON object with a ``type`` field — the schema of transcripts and of
    ``hookloop run --output-format stream-json``:

    ==================  ============================================================================
    type                fields
    ==================  ============================================================================
    run_started         run_id, session_id, source ("startup" | "resume")
    block_start         index, kind ("text" | "tool_call" | "thinking"), call_id, name
    text_delta          index, text
    tool_call_delta     index, fragment
    thinking_delta      index, text, signature
    block_stop          index
    usage               input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
    stop                reason
    stream_error        message, kind
    item                item (the history item's JSON, with provenance in its ``meta``)
    model_request_started  run_id, turn, model, provider
    model_request_ended    run_id, turn, input_tokens, output_tokens, stop_reason, error
    hook_started        event, hook, source, call_id
    hook                event, hook, source, decision, reason, call_id, seconds
    hook_output         event, hook, source, stream ("stdout" | "stderr"), line
    tool_started        call_id, tool, arguments
    tool_ended          call_id, tool, is_error, seconds
    tool_progress       call_id, tool, progress, total, message
    server_log          server, level, logger, data
    run_ended           run_id, outcome, detail
    subagent_started    call_id, agent_id, agent_type, description, depth, transcript_path, resumed
    subagent_ended      call_id, agent_id, agent_type, outcome, input_tokens, output_tokens, seconds
    subagent_event      call_id, agent_id, depth, event (the subagent's own event, this schema)
    ==================  ============================================================================
    """
    match event:
        case ItemAppended():
            return {"type": "item", "item": event.item.to_json()}
        case HookDecision():
            return {
                "type": "hook",
                "event": event.event,
                "hook": event.hook,
                "source": event.source,
                "decision": event.decision,
                "reason": event.reason,
                "call_id": event.call_id,
                "seconds": round(event.seconds, 6),
            }
        case ModelRequestStarted():
            return {
                "type": "model_request_started",
                "run_id": event.run_id,
                "turn": event.turn,
                "model": event.model,
                "provider": event.provider,
            }
        case ModelRequestEnded():
            usage = event.usage
            return {
                "type": "model_request_ended",
                "run_id": event.run_id,
                "turn": event.turn,
                "input_tokens": None if usage is None else usage.input_tokens,
                "output_tokens": None if usage is None else usage.output_tokens,
                "stop_reason": event.stop_reason,
                "error": event.error,
            }
        case HookStarted():
            return {
                "type": "hook_started",
                "event": event.event,
                "hook": event.hook,
                "source": event.source,
                "call_id": event.call_id,
            }
        case HookOutputLine():
            return {
                "type": "hook_output",
                "event": event.event,
                "hook": event.hook,
                "source": event.source,
                "stream": event.stream,
                "line": event.line,
            }
        case ToolStarted():
            return {
                "type": "tool_started",
                "call_id": event.call_id,
                "tool": event.tool_name,
                "arguments": thaw(event.arguments),
            }
        case ToolEnded():
            return {
                "type": "tool_ended",
                "call_id": event.call_id,
                "tool": event.tool_name,
                "is_error": event.is_error,
                "seconds": round(event.seconds, 6),
            }
        case ToolProgress():
            return {
                "type": "tool_progress",
                "call_id": event.call_id,
                "tool": event.tool_name,
                "progress": event.progress,
                "total": event.total,
                "message": event.message,
            }
        case ToolServerLog():
            return {
                "type": "server_log",
                "server": event.server,
                "level": event.level,
                "logger": event.logger,
                "data": event.data,
            }
        case RunStarted():
            return {
                "type": "run_started",
                "run_id": event.run_id,
                "session_id": event.session_id,
                "source": event.source,
            }
        case RunEnded():
            return {"type": "run_ended", "run_id": event.run_id, "outcome": event.outcome, "detail": event.detail}
        case SubagentStarted():
            return {
                "type": "subagent_started",
                "call_id": event.call_id,
                "agent_id": event.agent_id,
                "agent_type": event.agent_type,
                "description": event.description,
                "depth": event.depth,
                "transcript_path": event.transcript_path,
                "resumed": event.resumed,
            }
        case SubagentEnded():
            return {
                "type": "subagent_ended",
                "call_id": event.call_id,
                "agent_id": event.agent_id,
                "agent_type": event.agent_type,
                "outcome": event.outcome,
                "input_tokens": None if event.usage is None else event.usage.input_tokens,
                "output_tokens": None if event.usage is None else event.usage.output_tokens,
                "seconds": round(event.seconds, 6),
            }
        case SubagentEvent():
            return {
                "type": "subagent_event",
                "call_id": event.call_id,
                "agent_id": event.agent_id,
                "depth": event.depth,
                "event": event_to_json(event.event),
            }
        case TextDelta():
            return {"type": "text_delta", "index": event.index, "text": event.text}
        case ToolCallDelta():
            return {"type": "tool_call_delta", "index": event.index, "fragment": event.fragment}
        case ThinkingDelta():
            return {"type": "thinking_delta", "index": event.index, "text": event.text, "signature": event.signature}
        case BlockStart():
            return {
                "type": "block_start",
                "index": event.index,
                "kind": event.kind,
                "call_id": event.call_id,
                "name": event.name,
            }
        case BlockStop():
            return {"type": "block_stop", "index": event.index}
        case UsageEvent():
            u = event.usage
            return {
                "type": "usage",
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_tokens": u.cache_read_tokens,
                "cache_write_tokens": u.cache_write_tokens,
            }
        case StopEvent():
            return {"type": "stop", "reason": event.reason}
        case StreamError():
            return {"type": "stream_error", "message": event.message, "kind": event.kind}
        case NativeBlock():
            return {"type": "native_block", "index": event.index, "provider": event.provider}
        case _:
            assert_never(event)


_STREAM_EVENTS = (
    BlockStart,
    TextDelta,
    ToolCallDelta,
    ThinkingDelta,
    BlockStop,
    NativeBlock,
    UsageEvent,
    StopEvent,
    StreamError,
)
