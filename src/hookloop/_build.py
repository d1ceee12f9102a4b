"""History items (and each model request, each tool call's context, the timeline events of each item and tool
call, the inputs of the per-turn and per-call hooks) built on the hot path.

The turn machine builds a few items per turn from values it already holds exactly (strings from the provider's
stream, mappings it froze itself). These functions build the same objects as the dataclass constructors (same
class, same fields, a fresh id from the same source) without the frozen ``__init__``'s per-field
``object.__setattr__`` calls. Nothing is checked or copied: callers pass exact ``str`` values and mappings that
are already ``FrozenDict`` (tests/test_build.py proves each equal to what the constructor builds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hookloop._frozen import FrozenDict
from hookloop.hooks.summaries import PostToolCallInfo, PreLlmRequestInfo
from hookloop.items import (
    _CALL,
    _MESSAGE,
    _RESULT,
    _TEXT,
    ContentPart,
    Item,
    Message,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
    _item_id,
)
from hookloop.providers.base import LLMRequest, ToolSpec
from hookloop.timeline import ItemAppended, ToolEnded, ToolStarted
from hookloop.tools._base import ReadFilter, ToolContext, ToolMeta

__all__ = [
    "item_appended",
    "llm_request",
    "post_tool_call_info",
    "pre_llm_request_info",
    "text_message",
    "tool_call",
    "tool_context",
    "tool_ended",
    "tool_result",
    "tool_started",
]

_new = object.__new__
_REQUEST = tuple(
    LLMRequest.__dict__[name].__set__
    for name in ("system", "items", "tools", "model", "max_tokens", "cache_prefix", "turn", "run_id")
)
(_APPENDED,) = (ItemAppended.__dict__["item"].__set__,)
_STARTED = tuple(ToolStarted.__dict__[name].__set__ for name in ("call_id", "tool_name", "arguments"))
_ENDED = tuple(ToolEnded.__dict__[name].__set__ for name in ("call_id", "tool_name", "is_error", "seconds"))
_CONTEXT = tuple(
    ToolContext.__dict__[name].__set__
    for name in ("run_id", "session_id", "call_id", "tool_name", "turn", "workspace", "read_filter", "emit")
)


def tool_call(call_id: str, name: str, arguments: FrozenDict, raw_arguments: str | None, meta: FrozenDict) -> ToolCall:
    """``ToolCall(call_id=…, name=…, arguments=…, raw_arguments=…, meta=…)`` with a fresh id."""
    new: Any = _new(ToolCall)
    set_call_id, set_name, set_arguments, set_raw, set_id, set_meta = _CALL
    set_call_id(new, call_id)
    set_name(new, name)
    set_arguments(new, arguments)
    set_raw(new, raw_arguments)
    set_id(new, _item_id())
    set_meta(new, meta)
    return new  # type: ignore[no-any-return]


def tool_result(
    call_id: str, name: str, content: str, is_error: bool, meta: FrozenDict, parts: tuple[ContentPart, ...]
) -> ToolResult:
    """``ToolResult(call_id=…, name=…, content=…, is_error=…, meta=…, parts=…)`` with a fresh id."""
    new: Any = _new(ToolResult)
    set_call_id, set_name, set_content, set_is_error, set_id, set_meta, set_parts = _RESULT
    set_call_id(new, call_id)
    set_name(new, name)
    set_content(new, content)
    set_is_error(new, is_error)
    set_id(new, _item_id())
    set_meta(new, meta)
    set_parts(new, parts)
    return new  # type: ignore[no-any-return]


def text_message(role: Role, text: str, meta: FrozenDict) -> Message:
    """``Message(role=…, content=(TextPart(text=…),), meta=…)`` with a fresh id."""
    part: Any = _new(TextPart)
    _TEXT(part, text)
    new: Any = _new(Message)
    set_role, set_content, set_id, set_meta = _MESSAGE
    set_role(new, role)
    set_content(new, (part,))
    set_id(new, _item_id())
    set_meta(new, meta)
    return new  # type: ignore[no-any-return]


def tool_context(
    run_id: str,
    session_id: str,
    call_id: str,
    tool_name: str,
    turn: int,
    workspace: Path | None,
    read_filter: ReadFilter | None,
    emit: Callable[[Any], None] | None,
) -> ToolContext:
    """``ToolContext(run_id=…, session_id=…, call_id=…, tool_name=…, turn=…, workspace=…, read_filter=…,
    emit=…)``."""
    new: Any = _new(ToolContext)
    set_run_id, set_session_id, set_call_id, set_tool_name, set_turn, set_workspace, set_filter, set_emit = _CONTEXT
    set_run_id(new, run_id)
    set_session_id(new, session_id)
    set_call_id(new, call_id)
    set_tool_name(new, tool_name)
    set_turn(new, turn)
    set_workspace(new, workspace)
    set_filter(new, read_filter)
    set_emit(new, emit)
    return new  # type: ignore[no-any-return]


def llm_request(
    system: str | None,
    items: Sequence[Item],
    tools: tuple[ToolSpec, ...],
    model: str | None,
    max_tokens: int | None,
    cache_prefix: int,
    turn: int,
    run_id: str,
) -> LLMRequest:
    """``LLMRequest(system=…, items=…, tools=…, model=…, max_tokens=…, cache_prefix=…, turn=…, run_id=…)``."""
    new: Any = _new(LLMRequest)
    set_system, set_items, set_tools, set_model, set_max_tokens, set_prefix, set_turn, set_run_id = _REQUEST
    set_system(new, system)
    set_items(new, items)
    set_tools(new, tools)
    set_model(new, model)
    set_max_tokens(new, max_tokens)
    set_prefix(new, cache_prefix)
    set_turn(new, turn)
    set_run_id(new, run_id)
    return new  # type: ignore[no-any-return]


def item_appended(item: Item) -> ItemAppended:
    """``ItemAppended(item=…)``."""
    new: Any = _new(ItemAppended)
    _APPENDED(new, item)
    return new  # type: ignore[no-any-return]


def tool_started(call_id: str, tool_name: str, arguments: FrozenDict) -> ToolStarted:
    """``ToolStarted(call_id=…, tool_name=…, arguments=…)``."""
    new: Any = _new(ToolStarted)
    set_call_id, set_tool_name, set_arguments = _STARTED
    set_call_id(new, call_id)
    set_tool_name(new, tool_name)
    set_arguments(new, arguments)
    return new  # type: ignore[no-any-return]


def tool_ended(call_id: str, tool_name: str, is_error: bool, seconds: float) -> ToolEnded:
    """``ToolEnded(call_id=…, tool_name=…, is_error=…, seconds=…)``."""
    new: Any = _new(ToolEnded)
    set_call_id, set_tool_name, set_is_error, set_seconds = _ENDED
    set_call_id(new, call_id)
    set_tool_name(new, tool_name)
    set_is_error(new, is_error)
    set_seconds(new, seconds)
    return new  # type: ignore[no-any-return]


def _slot_builder(cls: type) -> type:
    """A plain class with exactly ``cls``'s slots: an instance is filled with ordinary attribute stores, then
    becomes a ``cls`` by ``__class__`` assignment (same layout, so CPython allows it) — cheaper still than the
    slot setters for the hook inputs, whose classes have many fields."""
    builder = type(f"_{cls.__name__}Builder", (), {"__slots__": cls.__dict__["__slots__"], "__module__": __name__})
    probe = builder()
    probe.__class__ = cls  # TypeError here (at import) if the layouts ever differ
    return builder


_PreLlmRequestInfo = _slot_builder(PreLlmRequestInfo)
_PostToolCallInfo = _slot_builder(PostToolCallInfo)


def pre_llm_request_info(
    run_id: str,
    session_id: str,
    turn: int,
    model: str | None,
    item_count: int,
    token_estimate: int,
    new_items: tuple[Item, ...],
) -> PreLlmRequestInfo:
    """``PreLlmRequestInfo(run_id=…, session_id=…, turn=…, model=…, item_count=…, token_estimate=…,
    new_items=…)``."""
    new: Any = _PreLlmRequestInfo()
    new.run_id = run_id
    new.session_id = session_id
    new.turn = turn
    new.model = model
    new.item_count = item_count
    new.token_estimate = token_estimate
    new.new_items = new_items
    new.__class__ = PreLlmRequestInfo
    return new  # type: ignore[no-any-return]


def post_tool_call_info(
    run_id: str,
    session_id: str,
    turn: int,
    call_id: str,
    tool_name: str,
    arguments: FrozenDict,
    meta: ToolMeta,
    content: str,
    is_error: bool,
    seconds: float,
    structured: FrozenDict | None,
    agent_id: str | None,
    agent_type: str | None,
) -> PostToolCallInfo:
    """``PostToolCallInfo(run_id=…, session_id=…, turn=…, call_id=…, tool_name=…, arguments=…, meta=…,
    content=…, is_error=…, seconds=…, structured=…, agent_id=…, agent_type=…)``."""
    new: Any = _PostToolCallInfo()
    new.run_id = run_id
    new.session_id = session_id
    new.turn = turn
    new.call_id = call_id
    new.tool_name = tool_name
    new.arguments = arguments
    new.meta = meta
    new.content = content
    new.is_error = is_error
    new.seconds = seconds
    new.structured = structured
    new.agent_id = agent_id
    new.agent_type = agent_type
    new.__class__ = PostToolCallInfo
    return new  # type: ignore[no-any-return]
