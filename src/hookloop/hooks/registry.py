"""The hook registry: per-event chains of handlers, registered by method, decorator or provider object."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hookloop.hooks._dispatch import Handler, display_name
from hookloop.hooks.events import (
    ALL_EVENTS,
    NOTIFICATION,
    ON_ABORT,
    ON_PROMPT_SUBMIT,
    ON_STREAM_CHUNK,
    ON_STREAM_COMPLETE,
    ON_TEXT_DELTA,
    ON_TOOL_CALL_DELTA,
    ON_TURN_END,
    POST_COMPACT,
    POST_TOOL_BATCH,
    POST_TOOL_CALL,
    PRE_COMPACT,
    PRE_LLM_REQUEST,
    PRE_TOOL_CALL,
    SESSION_END,
    SESSION_START,
    SUBAGENT_START,
    SUBAGENT_STOP,
    HookEvent,
    HookFn,
)
from hookloop.hooks.results import (
    OnTurnEndResult,
    PostToolBatchResult,
    PostToolCallResult,
    PreCompactResult,
    PreLlmRequestResult,
    PreToolCallResult,
    PromptSubmitResult,
    SessionStartResult,
    StreamHookResult,
    SubagentStartResult,
    SubagentStopResult,
)
from hookloop.hooks.summaries import (
    AbortInfo,
    NotificationInfo,
    PostCompactInfo,
    PostToolBatchInfo,
    PostToolCallInfo,
    PreCompactInfo,
    PreLlmRequestInfo,
    PreToolCallInfo,
    PromptSubmitInfo,
    SessionEndInfo,
    SessionStartInfo,
    StreamCompleteInfo,
    SubagentStartInfo,
    SubagentStopInfo,
    TurnEndInfo,
)
from hookloop.stream import StreamEvent, TextDelta, ToolCallDelta

__all__ = ["Chain", "HookRegistry"]

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741
F = TypeVar("F", bound=Callable[..., Any])


class Chain(tuple[Handler, ...]):
    """An immutable snapshot of one event's handlers, in registration order (registration swaps in a new one:
    copy on write, so a dispatch in flight is never affected).

    A tuple on purpose, with no instance dictionary: ``if chain:`` is a C-level length test (no Python frame on
    the hot path), and the chain is passed to the dispatch functions as is. ``all_sync`` is a class attribute
    (a chain with an async hook is a ``_MixedChain``): one cached type lookup, where an attribute in an
    instance dictionary of a tuple subclass is an uncached search on every read.
    """

    __slots__ = ()
    all_sync: bool = True
    """Every handler is sync (an empty chain too)."""

    def __new__(cls, handlers: tuple[Handler, ...] = ()) -> Chain:
        return super().__new__(Chain if all(not h.is_async for h in handlers) else _MixedChain, handlers)

    @property
    def single(self) -> Handler | None:
        """The lone handler when there is exactly one (call sites may call it inline)."""
        return self[0] if len(self) == 1 else None

    @property
    def handlers(self) -> tuple[Handler, ...]:
        return self


class _MixedChain(Chain):
    """A chain with at least one async handler."""

    __slots__ = ()
    all_sync = False


_EMPTY = Chain()


class HookRegistry:
    """All hooks of a Worker, per event, in registration order.

    Three equivalent ways to register::

        registry.add(PRE_TOOL_CALL, guard)            # typed: guard must fit the event
        @registry.pre_tool_call                       # decorator per event
        def guard(info: PreToolCallInfo) -> PreToolCallResult: ...
        registry.add_provider(MyHooks())              # methods named after events (pre_tool_call, ...)

    Registration is allowed at any time and takes effect from the next time the event fires.
    """

    __slots__ = ("chains",)

    def __init__(self) -> None:
        self.chains: list[Chain] = [_EMPTY] * len(ALL_EVENTS)

    def add(self, event: HookEvent[I, O], fn: HookFn[I, O], *, name: str | None = None, source: str = "python") -> None:
        """Append ``fn`` to ``event``'s chain (sync or async; classified now, once)."""
        if not callable(fn):
            raise TypeError(f"a hook for {event.name} must be callable, got {type(fn).__name__}")
        handler = Handler.of(fn, name=name, source=source)
        self.chains[event.index] = Chain((*self.chains[event.index], handler))

    def remove(self, event: HookEvent[I, O], fn: HookFn[I, O]) -> bool:
        """Remove the first registration of ``fn``; True if one was found."""
        old = self.chains[event.index]
        for i, handler in enumerate(old.handlers):
            if handler.fn == fn:
                rest = old.handlers[:i] + old.handlers[i + 1 :]
                self.chains[event.index] = Chain(rest) if rest else _EMPTY
                return True
        return False

    def chain(self, event: HookEvent[Any, Any]) -> Chain:
        return self.chains[event.index]

    def hook(self, event: HookEvent[I, O]) -> Callable[[F], F]:
        """Decorator: ``@registry.hook(PRE_TOOL_CALL)``."""

        def register(fn: F) -> F:
            self.add(event, fn)
            return fn

        return register

    def add_provider(self, provider: object) -> list[str]:
        """Register every method of ``provider`` named after an event (``pre_tool_call``, ``on_turn_end``, …).

        Returns the event names registered; raises ``TypeError`` if the object implements none.
        """
        found = []
        for event in ALL_EVENTS:
            method = getattr(provider, event.name, None)
            if method is not None and callable(method):
                self.add(event, method, name=f"{display_name(type(provider))}.{event.name}")
                found.append(event.name)
        if not found:
            names = ", ".join(e.name for e in ALL_EVENTS)
            raise TypeError(f"{type(provider).__qualname__} implements no hook event method ({names})")
        return found

    def __len__(self) -> int:
        return sum(len(c.handlers) for c in self.chains)

    # -- one decorator per event (typed) -------------------------------------------------------------

    def on_prompt_submit(
        self, fn: HookFn[PromptSubmitInfo, PromptSubmitResult]
    ) -> HookFn[PromptSubmitInfo, PromptSubmitResult]:
        self.add(ON_PROMPT_SUBMIT, fn)
        return fn

    def pre_llm_request(
        self, fn: HookFn[PreLlmRequestInfo, PreLlmRequestResult]
    ) -> HookFn[PreLlmRequestInfo, PreLlmRequestResult]:
        self.add(PRE_LLM_REQUEST, fn)
        return fn

    def pre_tool_call(
        self, fn: HookFn[PreToolCallInfo, PreToolCallResult]
    ) -> HookFn[PreToolCallInfo, PreToolCallResult]:
        self.add(PRE_TOOL_CALL, fn)
        return fn

    def post_tool_call(
        self, fn: HookFn[PostToolCallInfo, PostToolCallResult]
    ) -> HookFn[PostToolCallInfo, PostToolCallResult]:
        self.add(POST_TOOL_CALL, fn)
        return fn

    def on_turn_end(self, fn: HookFn[TurnEndInfo, OnTurnEndResult]) -> HookFn[TurnEndInfo, OnTurnEndResult]:
        self.add(ON_TURN_END, fn)
        return fn

    def on_abort(self, fn: HookFn[AbortInfo, None]) -> HookFn[AbortInfo, None]:
        self.add(ON_ABORT, fn)
        return fn

    def on_text_delta(self, fn: HookFn[TextDelta, StreamHookResult]) -> HookFn[TextDelta, StreamHookResult]:
        self.add(ON_TEXT_DELTA, fn)
        return fn

    def on_tool_call_delta(
        self, fn: HookFn[ToolCallDelta, StreamHookResult]
    ) -> HookFn[ToolCallDelta, StreamHookResult]:
        self.add(ON_TOOL_CALL_DELTA, fn)
        return fn

    def on_stream_chunk(self, fn: HookFn[StreamEvent, StreamHookResult]) -> HookFn[StreamEvent, StreamHookResult]:
        self.add(ON_STREAM_CHUNK, fn)
        return fn

    def on_stream_complete(
        self, fn: HookFn[StreamCompleteInfo, StreamHookResult]
    ) -> HookFn[StreamCompleteInfo, StreamHookResult]:
        self.add(ON_STREAM_COMPLETE, fn)
        return fn

    def session_start(
        self, fn: HookFn[SessionStartInfo, SessionStartResult]
    ) -> HookFn[SessionStartInfo, SessionStartResult]:
        self.add(SESSION_START, fn)
        return fn

    def session_end(self, fn: HookFn[SessionEndInfo, None]) -> HookFn[SessionEndInfo, None]:
        self.add(SESSION_END, fn)
        return fn

    def notification(self, fn: HookFn[NotificationInfo, None]) -> HookFn[NotificationInfo, None]:
        self.add(NOTIFICATION, fn)
        return fn

    def pre_compact(self, fn: HookFn[PreCompactInfo, PreCompactResult]) -> HookFn[PreCompactInfo, PreCompactResult]:
        self.add(PRE_COMPACT, fn)
        return fn

    def post_compact(self, fn: HookFn[PostCompactInfo, None]) -> HookFn[PostCompactInfo, None]:
        self.add(POST_COMPACT, fn)
        return fn

    def post_tool_batch(
        self, fn: HookFn[PostToolBatchInfo, PostToolBatchResult]
    ) -> HookFn[PostToolBatchInfo, PostToolBatchResult]:
        self.add(POST_TOOL_BATCH, fn)
        return fn

    def subagent_start(
        self, fn: HookFn[SubagentStartInfo, SubagentStartResult]
    ) -> HookFn[SubagentStartInfo, SubagentStartResult]:
        self.add(SUBAGENT_START, fn)
        return fn

    def subagent_stop(
        self, fn: HookFn[SubagentStopInfo, SubagentStopResult]
    ) -> HookFn[SubagentStopInfo, SubagentStopResult]:
        self.add(SUBAGENT_STOP, fn)
        return fn
