"""What hooks receive: read-only summaries, never the Worker's own objects.

Every summary is a frozen dataclass built for the dispatch; tool arguments are deep read-only
(:data:`hookloop.FrozenDict` — a ``MappingProxyType`` — and tuples); items and tool metadata are copies that share
only immutable built-in leaves (str, numbers, tuples, FrozenDict) with what the Worker holds. A hook that tries
to change what it got gets an exception; one that forces a change anyway (``object.__setattr__``, a slot
descriptor, ``__class__`` assignment) changes its copy, never the Worker's history, calls or tools. Stream hooks
receive the (frozen) stream event itself, after the Worker has taken what it needs from it, so streaming
allocates nothing extra.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType, MemberDescriptorType
from typing import Any, Literal, TypeAlias

from hookloop._copied import CopiedOnRead
from hookloop._frozen import FrozenDict
from hookloop.hooks._tool_inputs import PreToolCallInfo, meta_view, tool_meta_view
from hookloop.items import Item, Message, detached
from hookloop.tools._base import ToolMeta

__all__ = [
    "AbortInfo",
    "BatchCallInfo",
    "NotificationInfo",
    "PostCompactInfo",
    "PostToolBatchInfo",
    "PostToolCallInfo",
    "PreCompactInfo",
    "PreLlmRequestInfo",
    "PreToolCallInfo",
    "PromptSubmitInfo",
    "SessionEndInfo",
    "SessionEndReason",
    "SessionStartInfo",
    "StreamCompleteInfo",
    "SubagentStartInfo",
    "SubagentStopInfo",
    "TurnEndInfo",
    "Undetached",
    "rebuild",
    "snapshot",
    "tool_meta_view",
]

_LEAVES = frozenset({str, int, float, bool, type(None), MappingProxyType, PreToolCallInfo})  # immutable
_new = object.__new__
_Setter: TypeAlias = Callable[[object, object], None]
_PLANS: dict[type, tuple[Callable[[object], tuple[object, ...]], tuple[_Setter, ...]]] = {}


class _Node:
    """One Python object of a snapshot: its class, how to fill a new one, and its fields' snapshots."""

    __slots__ = ("cls", "setters", "values")

    def __init__(self, cls: type, setters: tuple[_Setter, ...], values: tuple[object, ...]) -> None:
        self.cls, self.setters, self.values = cls, setters, values


def _setter(cls: type, name: str) -> _Setter:
    """The cheapest way to set field ``name`` on a new ``cls``: its slot descriptor, else object.__setattr__."""
    descriptor = cls.__dict__.get(name)
    if isinstance(descriptor, MemberDescriptorType):
        return descriptor.__set__

    def set_field(obj: object, value: object) -> None:
        object.__setattr__(obj, name, value)

    return set_field


def _plan(cls: type) -> tuple[Callable[[object], tuple[object, ...]], tuple[_Setter, ...]]:
    fields = tuple(f.name for f in dataclasses.fields(cls))
    getter = attrgetter(*fields)
    get = getter if len(fields) > 1 else lambda value: (getter(value),)
    plan = _PLANS[cls] = (get, tuple(_setter(cls, name) for name in fields))
    return plan


def snapshot(value: object) -> object:
    """A deep, private snapshot of a hook input, taken before any hook sees it; `rebuild` makes fresh copies
    from it, so what one hook of a chain does to its input by force never reaches the next hook's."""
    cls = type(value)
    if cls in _LEAVES:
        return value
    if cls is tuple:
        items = tuple([v if type(v) in _LEAVES else snapshot(v) for v in value])  # type: ignore[attr-defined]
        return _Node(tuple, (), items)
    plan = _PLANS.get(cls)
    if plan is None:
        if not dataclasses.is_dataclass(value):
            return value  # not a summary part (never expected): shared as it is
        plan = _plan(cls)
    get, setters = plan
    return _Node(cls, setters, tuple([v if type(v) in _LEAVES else snapshot(v) for v in get(value)]))


def rebuild(snap: object) -> Any:
    """A new object equal to the one `snapshot` took ``snap`` of (sharing only immutable leaves with it)."""
    if type(snap) is not _Node:
        return snap
    node: _Node = snap
    if node.cls is tuple:
        return tuple([rebuild(v) if type(v) is _Node else v for v in node.values])
    new: object = _new(node.cls)
    for set_field, value in zip(node.setters, node.values):  # noqa: B905 - built together, same length
        set_field(new, rebuild(value) if type(value) is _Node else value)
    return new


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSubmitInfo:
    """on_prompt_submit: the user's input, once per ``run``."""

    run_id: str
    session_id: str
    prompt: str
    item: Message


@dataclass(frozen=True, slots=True, kw_only=True)
class PreLlmRequestInfo:
    """pre_llm_request: what is about to be sent (after interceptors), summarised.

    ``new_items`` are the items added since the previous request of this run (the whole history is not copied).
    """

    run_id: str
    session_id: str
    turn: int
    model: str | None
    item_count: int
    token_estimate: int
    new_items: tuple[Item, ...]


class Undetached(tuple):  # type: ignore[type-arg]
    """The Worker's own items, as :func:`pre_llm_request_info <hookloop._build.pre_llm_request_info>` stores them
    in ``new_items``: :attr:`PreLlmRequestInfo.new_items` replaces them with copies on its first read (nobody reads
    the originals), so a hook that never looks at them costs no copy."""

    __slots__ = ()


CopiedOnRead(PreLlmRequestInfo, "new_items", Undetached, lambda items: tuple([detached(item) for item in items]))


class PendingTokens(tuple):  # type: ignore[type-arg]
    """``(count, n)``, as :func:`pre_llm_request_info <hookloop._build.pre_llm_request_info>` stores it in
    ``token_estimate``: the estimate of the first ``n`` items of the history ``count`` (a
    ``hookloop.worker.TokenCount``) counts, which :attr:`PreLlmRequestInfo.token_estimate` counts on its first read
    (a hook that never reads it costs no count)."""

    __slots__ = ()


CopiedOnRead(PreLlmRequestInfo, "token_estimate", PendingTokens, lambda pending: pending[0].upto(pending[1]))


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolCallInfo:
    """post_tool_call: one finished call and its result (after interceptors), in call order."""

    run_id: str
    session_id: str
    turn: int
    call_id: str
    tool_name: str
    arguments: FrozenDict
    meta: ToolMeta
    content: str
    is_error: bool
    seconds: float = 0.0
    """How long the tool ran."""
    structured: FrozenDict | None = None
    """The tool's structured result (:attr:`hookloop.tools.ToolOutput.structured`; the built-in tools give
    Claude Code's ``tool_response`` shapes), or ``None`` when it gave none — or when an interceptor changed the
    content, so it would no longer describe the result."""
    agent_id: str | None = None
    """Inside a subagent: its id; None in the top-level Worker."""
    agent_type: str | None = None


CopiedOnRead(PostToolCallInfo, "meta", tuple, meta_view)  # the Worker stores its snapshot of the tool's metadata
"""(An exact tuple: nothing can change it, not even its class.)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEndInfo:
    """on_turn_end: the model answered without tool calls.

    ``stop_hook_active`` is true when the previous on_turn_end forced this continuation; a hook should then
    usually let the run finish. ``forced_continuations`` counts them in a row.
    """

    run_id: str
    session_id: str
    turn: int
    last_assistant_text: str
    stop_hook_active: bool
    forced_continuations: int
    item_count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamCompleteInfo:
    """on_stream_complete: one model stream finished."""

    turn: int
    event_count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AbortInfo:
    """on_abort: the run/resume is ending in an error; fires exactly once per failed run."""

    run_id: str
    session_id: str
    reason: str
    error_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStartInfo:
    """session_start: a run starts (``startup``) or a paused run continues (``resume``)."""

    run_id: str
    session_id: str
    source: Literal["startup", "resume"]
    prompt: str | None = None
    """The user's prompt of a starting run (None on resume)."""


SessionEndReason: TypeAlias = Literal["finished", "paused", "aborted", "cancelled", "error"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEndInfo:
    """session_end: a run or resume ended, for whatever reason."""

    run_id: str
    session_id: str
    reason: SessionEndReason


@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationInfo:
    """notification (fire-and-forget): a notification was delivered — ``kind`` ``"injected"`` when
    ``worker.notify`` text reached the model, ``"permission_prompt"`` when the run paused for approval."""

    run_id: str
    session_id: str
    text: str
    source: str
    kind: Literal["injected", "permission_prompt"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PreCompactInfo:
    """pre_compact: the history is about to be compacted. ``Cancel`` keeps it as it is."""

    run_id: str
    session_id: str
    trigger: Literal["auto", "manual"]
    item_count: int
    token_estimate: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PostCompactInfo:
    """post_compact: the history was compacted; ``summary`` is what replaced the older part ("" if dropped)."""

    run_id: str
    session_id: str
    trigger: Literal["auto", "manual"]
    summary: str
    items_before: int
    items_after: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchCallInfo:
    """One call of a finished tool batch, with the model-facing result."""

    call_id: str
    tool_name: str
    arguments: FrozenDict
    content: str
    is_error: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolBatchInfo:
    """post_tool_batch: every call of one model reply has its result (after post_tool_call), before the next
    model request. ``calls`` are in call order, skipped and denied calls included."""

    run_id: str
    session_id: str
    turn: int
    calls: tuple[BatchCallInfo, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStartInfo:
    """subagent_start (on the parent Worker): a subagent is about to run the task ``prompt`` for tool call
    ``call_id``. ``agent_id`` names this subagent run (stable across a pause and resume), ``agent_type`` its
    definition (the Agent tool's ``subagent_type``, or the name given to ``Worker.as_tool``); ``depth`` is 1 for
    a subagent of the top-level Worker, 2 for a subagent of a subagent, …"""

    run_id: str
    session_id: str
    call_id: str
    agent_id: str
    agent_type: str
    description: str
    prompt: str
    depth: int
    transcript_path: str | None = None
    """The subagent's own JSONL transcript, when the parent keeps one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStopInfo:
    """subagent_stop (on the parent Worker): the subagent answered without tool calls. ``ContinueWithMessages``
    sends it back to work (the subagent's own loop cap, ``max_forced_continuations``, applies);
    ``stop_hook_active`` is true when the previous subagent_stop forced this continuation."""

    run_id: str
    session_id: str
    call_id: str
    agent_id: str
    agent_type: str
    last_assistant_text: str
    stop_hook_active: bool
    forced_continuations: int
    depth: int
    transcript_path: str | None = None
