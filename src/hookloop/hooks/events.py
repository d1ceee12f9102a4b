"""Hook events: each declared once, with its input type and the results it accepts.

An event object is generic in its input ``I`` and output ``O``, so a type checker rejects a hook with the
wrong signature: ``worker.hooks.add(PRE_TOOL_CALL, fn)`` requires ``fn: (PreToolCallInfo) -> PreToolCallResult``
(or an ``async def`` returning it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from hookloop.hooks.results import (
    Abort,
    Allow,
    Ask,
    Cancel,
    Continue,
    ContinueWithMessages,
    Deny,
    Finish,
    OnTurnEndResult,
    Pause,
    PostToolBatchResult,
    PostToolCallResult,
    PreCompactResult,
    PreLlmRequestResult,
    PreToolCallResult,
    PromptSubmitResult,
    SessionStartResult,
    Skip,
    Stop,
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

__all__ = [
    "ALL_EVENTS",
    "NOTIFICATION",
    "ON_ABORT",
    "ON_PROMPT_SUBMIT",
    "ON_STREAM_CHUNK",
    "ON_STREAM_COMPLETE",
    "ON_TEXT_DELTA",
    "ON_TOOL_CALL_DELTA",
    "ON_TURN_END",
    "POST_COMPACT",
    "POST_TOOL_BATCH",
    "POST_TOOL_CALL",
    "PRE_COMPACT",
    "PRE_LLM_REQUEST",
    "PRE_TOOL_CALL",
    "SESSION_END",
    "SESSION_START",
    "SUBAGENT_START",
    "SUBAGENT_STOP",
    "HookEvent",
    "HookFn",
]

I = TypeVar("I")  # noqa: E741 - the conventional name for an event's input type
O = TypeVar("O")  # noqa: E741

HookFn: TypeAlias = Callable[[I], O | Awaitable[O]]
"""A hook: a plain function or a coroutine function taking the event's input and returning its result."""


@dataclass(frozen=True, slots=True, eq=False)
class HookEvent(Generic[I, O]):
    """One point of the loop where hooks run.

    ``passes``: results that pass on to the next hook. ``decides``: results that end the chain.
    ``observer``: fire-and-forget; hooks return None and cannot change the run.
    """

    name: str
    index: int
    input_type: type
    passes: frozenset[type]
    decides: frozenset[type]
    observer: bool
    doc: str

    def __repr__(self) -> str:
        return f"<HookEvent {self.name}>"

    @property
    def accepts(self) -> frozenset[type]:
        return self.passes | self.decides


def _event(
    name: str,
    index: int,
    input_type: type,
    passes: tuple[type, ...],
    decides: tuple[type, ...],
    doc: str,
    *,
    observer: bool = False,
) -> HookEvent[Any, Any]:
    return HookEvent(name, index, input_type, frozenset(passes), frozenset(decides), observer, doc)


_N = type(None)

ON_PROMPT_SUBMIT: HookEvent[PromptSubmitInfo, PromptSubmitResult] = _event(
    "on_prompt_submit",
    0,
    PromptSubmitInfo,
    (Continue,),
    (Cancel,),
    "Once per run, on the user's input. Continue(additional_context=…) adds context; Cancel ends the run.",
)
PRE_LLM_REQUEST: HookEvent[PreLlmRequestInfo, PreLlmRequestResult] = _event(
    "pre_llm_request",
    1,
    PreLlmRequestInfo,
    (Continue,),
    (Cancel,),
    "Before each model request, after interceptors. Cancel ends the run.",
)
PRE_TOOL_CALL: HookEvent[PreToolCallInfo, PreToolCallResult] = _event(
    "pre_tool_call",
    2,
    PreToolCallInfo,
    (Continue, Allow, Ask),
    (Skip, Abort, Pause, Deny),
    "Before each call, sequentially. Skip/Deny: the call gets an error result; Abort ends the run; Pause "
    "pauses it; Allow/Ask vote on permission (merged with the rules, deny > ask > allow).",
)
POST_TOOL_CALL: HookEvent[PostToolCallInfo, PostToolCallResult] = _event(
    "post_tool_call",
    3,
    PostToolCallInfo,
    (Continue,),
    (Abort, Stop),
    "After each call, in call order. Continue(replace_output/additional_context); Abort ends the run; Stop "
    "finishes after this batch.",
)
ON_TURN_END: HookEvent[TurnEndInfo, OnTurnEndResult] = _event(
    "on_turn_end",
    4,
    TurnEndInfo,
    (Finish,),
    (ContinueWithMessages, Pause),
    "When the model answers without tool calls. ContinueWithMessages retries; Pause pauses.",
)
ON_ABORT: HookEvent[AbortInfo, None] = _event(
    "on_abort",
    5,
    AbortInfo,
    (_N,),
    (),
    "Exactly once for each run/resume that ends in an error.",
    observer=True,
)
ON_TEXT_DELTA: HookEvent[TextDelta, StreamHookResult] = _event(
    "on_text_delta",
    6,
    TextDelta,
    (Continue,),
    (Abort, Pause),
    "For each text delta. Abort ends the run; Pause ends it as Aborted('Paused by stream hook').",
)
ON_TOOL_CALL_DELTA: HookEvent[ToolCallDelta, StreamHookResult] = _event(
    "on_tool_call_delta",
    7,
    ToolCallDelta,
    (Continue,),
    (Abort, Pause),
    "For each tool-call JSON fragment. Abort ends the run.",
)
ON_STREAM_CHUNK: HookEvent[StreamEvent, StreamHookResult] = _event(
    "on_stream_chunk",
    8,
    object,
    (Continue,),
    (Abort, Pause),
    "For every stream event, after timeline dispatch and before the delta hooks.",
)
ON_STREAM_COMPLETE: HookEvent[StreamCompleteInfo, StreamHookResult] = _event(
    "on_stream_complete",
    9,
    StreamCompleteInfo,
    (Continue,),
    (Abort, Pause),
    "After each model stream completes.",
)
SESSION_START: HookEvent[SessionStartInfo, SessionStartResult] = _event(
    "session_start",
    10,
    SessionStartInfo,
    (Continue, _N),
    (),
    "A run starts or resumes. Continue(additional_context=…) adds context for the model.",
)
SESSION_END: HookEvent[SessionEndInfo, None] = _event(
    "session_end", 11, SessionEndInfo, (_N,), (), "A run or resume ended (any reason).", observer=True
)
NOTIFICATION: HookEvent[NotificationInfo, None] = _event(
    "notification",
    12,
    NotificationInfo,
    (_N,),
    (),
    "Fire-and-forget: a notification was delivered (injected text, or a permission prompt).",
    observer=True,
)
PRE_COMPACT: HookEvent[PreCompactInfo, PreCompactResult] = _event(
    "pre_compact",
    13,
    PreCompactInfo,
    (Continue,),
    (Cancel,),
    "Before the history is compacted (auto or manual). Cancel keeps the history uncompacted.",
)
POST_COMPACT: HookEvent[PostCompactInfo, None] = _event(
    "post_compact", 14, PostCompactInfo, (_N,), (), "After the history was compacted.", observer=True
)
POST_TOOL_BATCH: HookEvent[PostToolBatchInfo, PostToolBatchResult] = _event(
    "post_tool_batch",
    15,
    PostToolBatchInfo,
    (Continue,),
    (Abort, Stop),
    "Once per tool batch, after every post_tool_call, before the next model request. "
    "Continue(additional_context) adds context after the results; Stop finishes; Abort ends the run.",
)

SUBAGENT_START: HookEvent[SubagentStartInfo, SubagentStartResult] = _event(
    "subagent_start",
    16,
    SubagentStartInfo,
    (Continue, _N),
    (),
    "On the parent, before a subagent runs. Continue(additional_context=…) adds context for the subagent only.",
)
SUBAGENT_STOP: HookEvent[SubagentStopInfo, SubagentStopResult] = _event(
    "subagent_stop",
    17,
    SubagentStopInfo,
    (Finish,),
    (ContinueWithMessages,),
    "On the parent, when a subagent answers without tool calls. ContinueWithMessages sends it back to work.",
)

ALL_EVENTS: tuple[HookEvent[Any, Any], ...] = (
    ON_PROMPT_SUBMIT,
    PRE_LLM_REQUEST,
    PRE_TOOL_CALL,
    POST_TOOL_CALL,
    ON_TURN_END,
    ON_ABORT,
    ON_TEXT_DELTA,
    ON_TOOL_CALL_DELTA,
    ON_STREAM_CHUNK,
    ON_STREAM_COMPLETE,
    SESSION_START,
    SESSION_END,
    NOTIFICATION,
    PRE_COMPACT,
    POST_COMPACT,
    POST_TOOL_BATCH,
    SUBAGENT_START,
    SUBAGENT_STOP,
)
assert [e.index for e in ALL_EVENTS] == list(range(len(ALL_EVENTS)))
