"""History items (and each model request, each tool call's context, the timeline events of each turn, item and
tool call, the inputs of the per-turn and per-call hooks) built on the hot path.

The turn machine builds a few of these per turn from values it already holds exactly (strings from the
provider's stream, mappings it froze itself). These functions build the same objects as the dataclass
constructors (same class, same fields; items get a fresh id from the same source) without the frozen
``__init__``'s one ``object.__setattr__`` a field: each is filled as an instance of a plain class with the same
slots (:func:`hookloop.items.slot_builder`), then given its class. Nothing is checked or copied: callers pass
exact ``str`` values and mappings that are already ``FrozenDict`` (tests/test_loop_fast_paths.py proves each
equal to what the constructor builds, with every field set).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hookloop._frozen import FrozenDict
from hookloop.hooks._tool_inputs import MetaSnapshot
from hookloop.hooks.summaries import PendingTokens, PostToolCallInfo, PreLlmRequestInfo
from hookloop.items import (
    ContentPart,
    Item,
    Message,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
    _item_id,
    slot_builder,
)
from hookloop.providers.base import LLMRequest, ToolSpec
from hookloop.stream import Usage
from hookloop.timeline import (
    HookDecision,
    ItemAppended,
    ModelRequestEnded,
    ModelRequestStarted,
    ToolEnded,
    ToolStarted,
)
from hookloop.tools._base import ReadFilter, ToolContext, ToolMeta

__all__ = [
    "hook_decision",
    "item_appended",
    "llm_request",
    "model_request_ended",
    "model_request_started",
    "post_tool_call_info",
    "pre_llm_request_info",
    "text_message",
    "tool_call",
    "tool_context",
    "tool_ended",
    "tool_result",
    "tool_started",
    "usage_sum",
]

_ToolCall = slot_builder(ToolCall)
_ToolResult = slot_builder(ToolResult)
_Message = slot_builder(Message)
_TextPart = slot_builder(TextPart)
_ToolContext = slot_builder(ToolContext)
_LLMRequest = slot_builder(LLMRequest)
_ItemAppended = slot_builder(ItemAppended)
_ToolStarted = slot_builder(ToolStarted)
_HookDecision = slot_builder(HookDecision)
_ToolEnded = slot_builder(ToolEnded)
_ModelRequestStarted = slot_builder(ModelRequestStarted)
_ModelRequestEnded = slot_builder(ModelRequestEnded)
_PreLlmRequestInfo = slot_builder(PreLlmRequestInfo)
_PostToolCallInfo = slot_builder(PostToolCallInfo)
_Usage = slot_builder(Usage)


def tool_call(call_id: str, name: str, arguments: FrozenDict, raw_arguments: str | None, meta: FrozenDict) -> ToolCall:
    """``ToolCall(call_id=…, name=…, arguments=…, raw_arguments=…, meta=…)`` with a fresh id."""
    new: Any = _ToolCall()
    new.call_id = call_id
    new.name = name
    new.arguments = arguments
    new.raw_arguments = raw_arguments
    new.id = _item_id()
    new.meta = meta
    new.__class__ = ToolCall
    return new  # type: ignore[no-any-return]


def tool_result(
    call_id: str, name: str, content: str, is_error: bool, meta: FrozenDict, parts: tuple[ContentPart, ...]
) -> ToolResult:
    """``ToolResult(call_id=…, name=…, content=…, is_error=…, meta=…, parts=…)`` with a fresh id."""
    new: Any = _ToolResult()
    new.call_id = call_id
    new.name = name
    new.content = content
    new.is_error = is_error
    new.id = _item_id()
    new.meta = meta
    new.parts = parts
    new.__class__ = ToolResult
    return new  # type: ignore[no-any-return]


def text_message(role: Role, text: str, meta: FrozenDict) -> Message:
    """``Message(role=…, content=(TextPart(text=…),), meta=…)`` with a fresh id."""
    part: Any = _TextPart()
    part.text = text
    part.__class__ = TextPart
    new: Any = _Message()
    new.role = role
    new.content = (part,)
    new.id = _item_id()
    new.meta = meta
    new.__class__ = Message
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
    new: Any = _ToolContext()
    new.run_id = run_id
    new.session_id = session_id
    new.call_id = call_id
    new.tool_name = tool_name
    new.turn = turn
    new.workspace = workspace
    new.read_filter = read_filter
    new.emit = emit
    new.__class__ = ToolContext
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
    new: Any = _LLMRequest()
    new.system = system
    new.items = items
    new.tools = tools
    new.model = model
    new.max_tokens = max_tokens
    new.cache_prefix = cache_prefix
    new.turn = turn
    new.run_id = run_id
    new.__class__ = LLMRequest
    return new  # type: ignore[no-any-return]


def item_appended(item: Item | tuple[Item]) -> ItemAppended:
    """``ItemAppended(item=…)``; ``(item,)``: the history's own item, copied when first read."""
    new: Any = _ItemAppended()
    new.item = item
    new.__class__ = ItemAppended
    return new  # type: ignore[no-any-return]


def hook_decision(
    event: str, hook: str, source: str, decision: str, reason: str | None, seconds: float, call_id: str | None
) -> HookDecision:
    """``HookDecision(event=…, hook=…, source=…, decision=…, reason=…, seconds=…, call_id=…)`` (one per hook that
    ran while someone watches: the constructor's frozen ``__init__`` cost more than the hook)."""
    new: Any = _HookDecision()
    new.event = event
    new.hook = hook
    new.source = source
    new.decision = decision
    new.reason = reason
    new.seconds = seconds
    new.call_id = call_id
    new.__class__ = HookDecision
    return new  # type: ignore[no-any-return]


def tool_started(call_id: str, tool_name: str, arguments: FrozenDict) -> ToolStarted:
    """``ToolStarted(call_id=…, tool_name=…, arguments=…)``."""
    new: Any = _ToolStarted()
    new.call_id = call_id
    new.tool_name = tool_name
    new.arguments = arguments
    new.__class__ = ToolStarted
    return new  # type: ignore[no-any-return]


def tool_ended(call_id: str, tool_name: str, is_error: bool, seconds: float) -> ToolEnded:
    """``ToolEnded(call_id=…, tool_name=…, is_error=…, seconds=…)``."""
    new: Any = _ToolEnded()
    new.call_id = call_id
    new.tool_name = tool_name
    new.is_error = is_error
    new.seconds = seconds
    new.__class__ = ToolEnded
    return new  # type: ignore[no-any-return]


def model_request_started(run_id: str, turn: int, model: str | None, provider: str) -> ModelRequestStarted:
    """``ModelRequestStarted(run_id=…, turn=…, model=…, provider=…)``."""
    new: Any = _ModelRequestStarted()
    new.run_id = run_id
    new.turn = turn
    new.model = model
    new.provider = provider
    new.__class__ = ModelRequestStarted
    return new  # type: ignore[no-any-return]


def model_request_ended(
    run_id: str, turn: int, usage: Usage | None, stop_reason: str | None, error: str | None
) -> ModelRequestEnded:
    """``ModelRequestEnded(run_id=…, turn=…, usage=…, stop_reason=…, error=…)``."""
    new: Any = _ModelRequestEnded()
    new.run_id = run_id
    new.turn = turn
    new.usage = usage
    new.stop_reason = stop_reason
    new.error = error
    new.__class__ = ModelRequestEnded
    return new  # type: ignore[no-any-return]


def pre_llm_request_info(
    run_id: str,
    session_id: str,
    turn: int,
    model: str | None,
    item_count: int,
    token_estimate: int | PendingTokens,
    new_items: tuple[Item, ...],
) -> PreLlmRequestInfo:
    """``PreLlmRequestInfo(run_id=…, session_id=…, turn=…, model=…, item_count=…, token_estimate=…,
    new_items=…)``; a :class:`~hookloop.hooks.summaries.PendingTokens` ``token_estimate`` is counted when first
    read, an :class:`~hookloop.hooks.summaries.Undetached` ``new_items`` copied when first read."""
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
    meta: ToolMeta | MetaSnapshot,
    content: str,
    is_error: bool,
    seconds: float,
    structured: FrozenDict | None,
    agent_id: str | None,
    agent_type: str | None,
) -> PostToolCallInfo:
    """``PostToolCallInfo(run_id=…, session_id=…, turn=…, call_id=…, tool_name=…, arguments=…, meta=…,
    content=…, is_error=…, seconds=…, structured=…, agent_id=…, agent_type=…)``; ``meta`` may be a
    :func:`~hookloop.hooks._tool_inputs.tool_meta_snapshot`, copied into a ToolMeta when first read."""
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


def usage_sum(a: Usage, b: Usage) -> Usage:
    """``a + b`` for two exact :class:`Usage` objects (``Usage.__add__``: every field summed)."""
    new: Any = _Usage()
    new.input_tokens = a.input_tokens + b.input_tokens
    new.output_tokens = a.output_tokens + b.output_tokens
    new.cache_read_tokens = a.cache_read_tokens + b.cache_read_tokens
    new.cache_write_tokens = a.cache_write_tokens + b.cache_write_tokens
    new.__class__ = Usage
    return new  # type: ignore[no-any-return]
