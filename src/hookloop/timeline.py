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
from typing import IO, Literal, TypeAlias

from hookloop._frozen import FrozenDict, JSONValue, thaw
from hookloop.items import Item
from hookloop.stream import StreamEvent

__all__ = [
    "HookDecision",
    "HookOutputLine",
    "ItemAppended",
    "RunEnded",
    "RunStarted",
    "Timeline",
    "TimelineEvent",
    "ToolEnded",
    "ToolStarted",
    "TranscriptWriter",
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
class ItemAppended:
    """An item entered the history (with provenance in the item's ``meta``)."""

    item: Item


TimelineEvent: TypeAlias = (
    StreamEvent | RunStarted | RunEnded | HookDecision | HookOutputLine | ToolStarted | ToolEnded | ItemAppended
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
    ``hook`` (each hook decision other than a plain pass), ``tool_started``/``tool_ended``, ``run_ended``.
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
    if isinstance(event, ItemAppended):
        return {"type": "item", "item": event.item.to_json()}
    if isinstance(event, HookDecision):
        if event.decision == "Continue" and event.reason is None:
            return None
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
    if isinstance(event, ToolStarted):
        return {
            "type": "tool_started",
            "call_id": event.call_id,
            "tool": event.tool_name,
            "arguments": thaw(event.arguments),
        }
    if isinstance(event, ToolEnded):
        return {
            "type": "tool_ended",
            "call_id": event.call_id,
            "tool": event.tool_name,
            "is_error": event.is_error,
            "seconds": round(event.seconds, 6),
        }
    if isinstance(event, RunStarted):
        return {
            "type": "run_started",
            "run_id": event.run_id,
            "session_id": event.session_id,
            "source": event.source,
        }
    if isinstance(event, RunEnded):
        return {"type": "run_ended", "run_id": event.run_id, "outcome": event.outcome, "detail": event.detail}
    return None
