"""The effect seam: the three kinds of effect a run performs, and how a durable backend wraps them.

A run does three kinds of thing whose outcome is not decided by its own code: it calls the model, it calls a tool,
and it fires an external hook (a command, HTTP, prompt, agent or MCP-tool hook from a settings file). The turn
machine performs each of them through one call, :meth:`Effects.perform`, on an :class:`Effect` that says what the
effect is (``kind``, a ``key`` that names it deterministically within the run, a JSON ``describe``), how to do it
(``perform``) and how to record its outcome (``encode`` / ``decode``, to and from JSON).

With no backend (``Worker.run(..., effects=None)``, the default) the Worker performs every effect directly; the
plain in-memory path builds no :class:`Effect` at all. A durable backend (``hookloop.durable``) passes an
:class:`Effects` whose ``perform`` makes each effect a durable step: the first time it runs ``effect.perform()``
and records ``effect.encode(outcome)``; when the run is replayed after a crash it returns
``effect.decode(recorded)`` without performing the effect again.

**What is replayed and what is recorded.** Only effects are recorded. Everything else — in-process hooks,
interceptors, permission rules, the loop itself — is plain code that runs again on replay, on the recorded
outcomes. It must therefore be *deterministic*: the same inputs give the same decisions. A hook that reads the
clock, a random number or outside state to decide is not; a backend detects the visible violation (a hook that
returns a different decision on replay than it did the first time) by comparing a digest of the decisions taken
before each effect (:class:`DecisionLog`) and reports it rather than following the new decision.

**Keys.** ``key`` names the effect the same way on replay: ``model:<turn>.<n>`` (``n`` counts the model requests of the
run segment), ``tool:<turn>:<call id>``, ``hook:<event>:<call id or ->:<hook name>``. A key
can come again in one run segment (one :meth:`~hookloop.Worker.run` or :meth:`~hookloop.Worker.resume`) only for
effects that follow one another (the same hook firing on each turn's end): a backend that needs unique names
appends the occurrence number, which is the same on replay. A tool's idempotency key
(:attr:`hookloop.tools.ToolContext.idempotency_key`) is in its ``describe``. One Effects object serves one run
segment.

**Order.** Effects start in a deterministic order except the tool calls of one batch, which run in parallel: each
starts in the model's call order, but a sequential tool's later calls (``ToolMeta.sequential``) start when the
earlier ones finish. A backend whose steps are identified by their order (DBOS) must not rely on the order in which
parallel effects *finish*.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar

from hookloop._frozen import freeze_object, thaw
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
    "DecisionLog",
    "Effect",
    "EffectKind",
    "Effects",
    "current_effects",
    "event_from_json",
    "event_to_json",
    "events_from_json",
    "events_to_json",
    "perform",
]

T = TypeVar("T")

EffectKind: TypeAlias = Literal["model", "tool", "hook"]
"""``model``: one model request (its outcome: the reply's stream events); ``tool``: one tool execution (its
outcome: the tool's answer); ``hook``: one firing of an external hook handler (its outcome: what the handler
answered, before hookloop interprets it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Effect(Generic[T]):
    """One effect of a run, handed to :meth:`Effects.perform`.

    ``perform`` does it (at most once per call; a backend that replays never calls it). ``encode`` turns its
    outcome into JSON (plain dicts, lists, strings, numbers, booleans, None) and ``decode`` turns that JSON back
    into an equal outcome. ``describe`` is JSON that says what the effect is, for logs, step names and a
    backend that performs effects elsewhere: for ``model`` ``{"turn", "model", "provider"}``; for ``tool``
    ``{"turn", "call_id", "tool", "arguments", "idempotency_key"}``; for ``hook`` ``{"turn", "event", "hook",
    "source", "call_id"}``.
    """

    kind: EffectKind
    key: str
    describe: Mapping[str, object]
    perform: Callable[[], Awaitable[T]]
    encode: Callable[[T], object]
    decode: Callable[[object], T]


class Effects(Protocol):
    """What a durable backend gives a run: how each effect is performed.

    ``perform`` must return what ``effect.perform()`` returns (or, on replay, ``effect.decode`` of what it
    returned the first time), and raise what it raises. It is called from the run's task and from the tasks of a
    parallel tool batch; a cancellation of the calling task must propagate (the run is being cancelled).
    """

    async def perform(self, effect: Effect[T]) -> T:
        """Perform ``effect`` (or return its recorded outcome) and return the outcome."""
        ...


async def perform(
    kind: EffectKind,
    key: str,
    describe: Mapping[str, object],
    fn: Callable[[], Awaitable[T]],
    encode: Callable[[T], object],
    decode: Callable[[object], T],
) -> T:
    """``fn()`` — through the current run's :class:`Effects` when it has one (see :data:`current_effects`)."""
    effects = current_effects.get()
    if effects is None:
        return await fn()
    return await effects.perform(
        Effect(kind=kind, key=key, describe=describe, perform=fn, encode=encode, decode=decode)
    )


current_effects: ContextVar[Effects | None] = ContextVar("hookloop_effects", default=None)
"""The effects of the run this task belongs to (None: a plain run). Set by the Worker for the whole run;
external hook handlers read it to make each firing an effect."""


@dataclass(slots=True)
class DecisionLog:
    """A running digest of the decisions a run took in plain code (hooks, permission rules) between effects.

    A backend records ``digest`` with each effect's outcome and compares it on replay: a different digest means
    a hook decided differently on the same recorded inputs (it is not deterministic). ``entries`` keeps the
    decisions since the last :meth:`take` for the error message."""

    digest: str = ""
    entries: list[str] = field(default_factory=list)

    def add(self, entry: str) -> None:
        """Record one decision (``"<event>/<hook>: <decision>"``)."""
        self.entries.append(entry)
        self.digest = hashlib.sha256(f"{self.digest}\n{entry}".encode()).hexdigest()[:32]

    def take(self) -> tuple[str, tuple[str, ...]]:
        """The digest so far and the entries since the last take (cleared)."""
        entries, self.entries = tuple(self.entries), []
        return self.digest, entries


# -- stream events as JSON (a model effect's outcome) ---------------------------------------------------------

_EVENT_TYPES: dict[str, type[Any]] = {
    "block_start": BlockStart,
    "native_block": NativeBlock,
    "text_delta": TextDelta,
    "tool_call_delta": ToolCallDelta,
    "thinking_delta": ThinkingDelta,
    "block_stop": BlockStop,
    "usage": UsageEvent,
    "stop": StopEvent,
    "stream_error": StreamError,
}
_EVENT_NAMES = {cls: name for name, cls in _EVENT_TYPES.items()}


def event_to_json(event: StreamEvent) -> dict[str, object]:
    """One stream event as JSON: ``{"type": <name>, <its fields>}``."""
    cls = type(event)
    name = _EVENT_NAMES.get(cls)
    if name is None:
        raise TypeError(f"not a hookloop stream event: {cls.__name__}")
    data: dict[str, object] = {"type": name}
    for slot in cls.__slots__:
        value = getattr(event, slot)
        data[slot] = _usage_json(value) if isinstance(value, Usage) else thaw(value)
    return data


def _usage_json(usage: Usage) -> dict[str, object]:
    return {slot: getattr(usage, slot) for slot in Usage.__slots__}


def event_from_json(data: object) -> StreamEvent:
    """The stream event :func:`event_to_json` made; a clear ``ValueError`` for anything else."""
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        raise ValueError(f"recorded stream event: expected an object with a 'type', got {data!r:.80}")
    cls = _EVENT_TYPES.get(str(data["type"]))
    if cls is None:
        raise ValueError(f"recorded stream event: unknown type {data['type']!r}")
    fields = {k: v for k, v in data.items() if k != "type"}
    if cls is UsageEvent:
        usage = fields.get("usage")
        if not isinstance(usage, Mapping):
            raise ValueError("recorded usage event: 'usage' must be an object")
        return UsageEvent(usage=Usage(**{str(k): int(v) for k, v in usage.items()}))
    if "meta" in fields or "data" in fields:
        for name in ("meta", "data"):
            if name in fields and isinstance(fields[name], Mapping):
                fields[name] = freeze_object(fields[name])
    try:
        event: StreamEvent = cls(**fields)
    except TypeError as exc:
        raise ValueError(f"recorded {data['type']} event: {exc}") from None
    return event


def events_to_json(events: list[StreamEvent]) -> object:
    """A model effect's outcome (the reply's events, in order) as JSON."""
    return [event_to_json(e) for e in events]


def events_from_json(data: object) -> list[StreamEvent]:
    """The events :func:`events_to_json` made."""
    if not isinstance(data, list):
        raise ValueError("recorded model reply: expected a list of stream events")
    return [event_from_json(e) for e in data]
