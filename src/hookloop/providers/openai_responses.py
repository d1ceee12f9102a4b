"""OpenAI Responses API client (``pip install 'hookloop[openai]'``).

::

    client = OpenAIResponsesClient(model="o4-mini", reasoning={"effort": "medium", "summary": "auto"})

Streams ``responses.create(stream=True)``, stateless by default (``store=False``, with
``include=["reasoning.encrypted_content"]`` so reasoning can be sent back), and normalises the events:

=====================================================  ====================================================
wire event                                             hookloop stream event
=====================================================  ====================================================
``response.output_item.added`` function_call           ``BlockStart("tool_call", call_id, name, meta={id})``
``response.function_call_arguments.delta``             ``ToolCallDelta``
``response.output_item.added`` reasoning               ``BlockStart("thinking", meta={id})``
``response.reasoning_summary_text.delta`` (and         ``ThinkingDelta(text)``
``response.reasoning_text.delta``)
``response.output_item.done`` reasoning                ``ThinkingDelta(signature=<the item as JSON>)`` + ``BlockStop``
``response.output_text.delta`` / ``refusal.delta``     ``BlockStart("text", meta={id, phase})`` on first sight,
                                                       ``TextDelta``
``response.output_item.done`` message / function_call  ``BlockStop`` for its blocks
``response.output_item.done`` any other item type      ``NativeBlock`` (the item whole: web search, file search,
                                                       code interpreter, image generation, MCP, computer calls…)
``response.completed`` / ``response.incomplete``       ``UsageEvent`` + ``StopEvent``
``response.failed``, ``error``, HTTP errors            a provider error (raised)
=====================================================  ====================================================

One block per (output item, content part), numbered in order of first appearance. A stream that ends before
``response.completed``/``response.incomplete`` raises :class:`ProviderConnectionError`.

Identity: the API needs every output item back as it was — a reasoning item is rejected (HTTP 400 "provided
without its required following item") unless the item that followed it comes back with its id. So each block's
``meta`` (hence its item's ``meta``) is ``{"provider": <this client's provider>, "id": <output item id>}`` plus
the message's ``phase`` (``commentary`` / ``final_answer``) and ``content: "refusal"`` for a refusal part;
:mod:`~hookloop.providers._responses_wire` sends them back (status ``completed``), reasoning goes back whole
from its signature (``encrypted_content`` included), built-in tool items as the :class:`ProviderBlock` they
became, all in reply order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from hookloop._frozen import EMPTY, FrozenDict, freeze_object
from hookloop.providers._common import SdkOwner, classify_error_object, map_sdk_error, require_model, split_tokens
from hookloop.providers._errors import ProviderConnectionError
from hookloop.providers._responses_wire import (
    PROVIDER,
    item_meta,
    reasoning_signature,
    reasoning_text,
    to_responses,
)
from hookloop.providers.base import LLMRequest
from hookloop.providers.openai_chat import SDK_ERRORS, build_sdk_client
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

try:
    import openai
    from openai import AsyncStream
    from openai.types.responses import ResponseStreamEvent
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("the OpenAI clients need the openai SDK: pip install 'hookloop[openai]'") from exc

__all__ = ["OpenAIResponsesClient"]

_INCOMPLETE: Mapping[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


class OpenAIResponsesClient(SdkOwner[openai.AsyncOpenAI]):
    """An :class:`hookloop.providers.LLMClient` for the OpenAI Responses API.

    Args:
        model: default model when the Worker's request names none.
        api_key / base_url: without them the SDK reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
        max_tokens: ``max_output_tokens`` when the request sets none.
        reasoning: the ``reasoning`` parameter for reasoning models, e.g. ``{"effort": "low", "summary": "auto"}``.
        store: let OpenAI store responses (default False: hookloop owns the history).
        include_encrypted_reasoning: with ``store=False``, ask for ``reasoning.encrypted_content`` so reasoning
            items can be sent back.
        max_retries / timeout / sdk_client / extra_params: as for :class:`OpenAIChatClient`.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = PROVIDER,
        max_tokens: int | None = None,
        reasoning: Mapping[str, str] | None = None,
        store: bool = False,
        include_encrypted_reasoning: bool = True,
        max_retries: int | None = None,
        timeout: float | None = None,
        sdk_client: openai.AsyncOpenAI | None = None,
        extra_params: Mapping[str, object] | None = None,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.reasoning = dict(reasoning) if reasoning is not None else None
        self.store = store
        self.include_encrypted_reasoning = include_encrypted_reasoning
        self.extra_params: dict[str, object] = dict(extra_params or {})
        self._provider = provider
        self._owned = sdk_client is None
        self._sdk = sdk_client or build_sdk_client(
            api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
        )

    def build_params(self, request: LLMRequest) -> dict[str, Any]:
        """The ``responses.create`` keyword arguments for ``request`` (without ``stream``)."""
        instructions, input_items, tools = to_responses(
            request.system, request.items, request.tools, provider=self._provider
        )
        params: dict[str, Any] = {
            "model": require_model(request, self.model, self._provider),
            "input": input_items,
            "store": self.store,
        }
        if instructions:
            params["instructions"] = instructions
        if tools:
            params["tools"] = tools
        if not self.store and self.include_encrypted_reasoning:
            params["include"] = ["reasoning.encrypted_content"]
        if self.reasoning is not None:
            params["reasoning"] = self.reasoning
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens:
            params["max_output_tokens"] = max_tokens
        params.update(self.extra_params)
        return params

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """Stream one reply as hookloop events; raises a provider error (see the module docstring)."""
        provider = self._provider
        params = self.build_params(request)
        try:
            sdk_stream: AsyncStream[ResponseStreamEvent] = await self._sdk.responses.create(stream=True, **params)
        except Exception as exc:
            mapped = map_sdk_error(exc, provider=provider, sdk=SDK_ERRORS)
            if mapped is None:
                raise
            raise mapped from exc
        parts: dict[tuple[int, int], int] = {}  # (output_index, content_index) → block; -1: the item itself
        streamed: set[int] = set()  # blocks that received a delta
        summary_at: dict[int, int] = {}  # reasoning block → last summary_index seen
        open_blocks: set[int] = set()
        messages: dict[int, dict[str, Any]] = {}  # output_index → the meta of that message item's text blocks
        calls = False
        finished: StopReason | None = None
        try:
            async for event in sdk_stream:
                if event.type == "response.output_text.delta" or event.type == "response.refusal.delta":
                    if not isinstance(event.delta, str):
                        continue  # a malformed delta carries no text
                    key = (event.output_index, event.content_index)
                    block = parts.get(key)
                    if block is None:
                        block = parts[key] = len(parts)
                        open_blocks.add(block)
                        kind = "refusal" if event.type == "response.refusal.delta" else None
                        yield BlockStart(block, "text", meta=_text_meta(messages.get(event.output_index), kind))
                    streamed.add(block)
                    yield TextDelta(block, event.delta)
                elif event.type == "response.function_call_arguments.delta":
                    block = parts.get((event.output_index, -1))
                    if block is not None and event.delta and isinstance(event.delta, str):
                        streamed.add(block)
                        yield ToolCallDelta(block, event.delta)
                elif (
                    event.type == "response.reasoning_summary_text.delta"
                    or event.type == "response.reasoning_text.delta"
                ):
                    if not isinstance(event.delta, str):
                        continue
                    key = (event.output_index, -1)
                    block = parts.get(key)
                    if block is None:  # a server that sent no output_item.added
                        block = parts[key] = len(parts)
                        open_blocks.add(block)
                        yield BlockStart(block, "thinking", meta=freeze_object(item_meta(provider, event.item_id)))
                    part: int | None = getattr(event, "summary_index", None)
                    if part is None:
                        part = getattr(event, "content_index", 0)
                    if block in summary_at and summary_at[block] != part:
                        yield ThinkingDelta(block, "\n\n")
                    summary_at[block] = part
                    streamed.add(block)
                    yield ThinkingDelta(block, event.delta)
                elif event.type == "response.output_item.added":
                    item = event.item
                    if item.type == "message":
                        messages[event.output_index] = item_meta(provider, item.id, getattr(item, "phase", None))
                    elif item.type == "function_call":
                        calls = True
                        block = parts[(event.output_index, -1)] = len(parts)
                        open_blocks.add(block)
                        meta = freeze_object(item_meta(provider, item.id)) if item.id else EMPTY
                        yield BlockStart(block, "tool_call", call_id=item.call_id, name=item.name, meta=meta)
                        if item.arguments:
                            streamed.add(block)
                            yield ToolCallDelta(block, item.arguments)
                    elif item.type == "reasoning":
                        block = parts[(event.output_index, -1)] = len(parts)
                        open_blocks.add(block)
                        yield BlockStart(block, "thinking", meta=freeze_object(item_meta(provider, item.id)))
                    else:  # a built-in tool item (web search, code interpreter, MCP …): kept whole at done
                        parts[(event.output_index, -1)] = len(parts)
                elif event.type == "response.output_item.done":
                    done_item = event.item
                    if done_item.type == "message" and event.output_index not in messages:
                        messages[event.output_index] = item_meta(
                            provider, done_item.id, getattr(done_item, "phase", None)
                        )
                    for done in _item_done(event.output_index, done_item, parts, streamed, messages, provider):
                        if isinstance(done, BlockStop):
                            open_blocks.discard(done.index)
                        yield done
                    if event.item.type == "function_call":
                        calls = True
                elif event.type == "response.completed" or event.type == "response.incomplete":
                    for index in sorted(open_blocks):
                        yield BlockStop(index)
                    open_blocks.clear()
                    response = event.response
                    if response.usage is not None:
                        u = response.usage
                        details = getattr(u, "input_tokens_details", None)
                        cached = getattr(details, "cached_tokens", None) or 0
                        written = getattr(details, "cache_write_tokens", None) or 0
                        fresh, cached, written = split_tokens(u.input_tokens, cached, written)
                        yield UsageEvent(Usage(fresh, u.output_tokens, cached, written))
                    if event.type == "response.completed":
                        finished = "tool_use" if calls else "end_turn"
                    else:
                        details_reason = getattr(response.incomplete_details, "reason", None)
                        finished = _INCOMPLETE.get(details_reason or "", "other")
                    yield StopEvent(finished)
                elif event.type == "response.failed":
                    error = event.response.error
                    raise classify_error_object(
                        error.to_dict() if error is not None else {}, provider=provider, what="response failed"
                    )
                elif event.type == "error":
                    raise classify_error_object(event.to_dict(), provider=provider)
        except Exception as exc:
            mapped = map_sdk_error(exc, provider=provider, sdk=SDK_ERRORS)
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            await sdk_stream.close()
        if finished is None:
            raise ProviderConnectionError(
                f"{provider}: the stream ended before response.completed (connection closed mid-message)",
                provider=provider,
            )


def _text_meta(message: dict[str, Any] | None, kind: str | None) -> FrozenDict:
    """The meta of one text block of an output message: the message's id and phase (and ``content:
    refusal`` for a refusal part), so the message goes back with them."""
    if message is None:
        return EMPTY
    return freeze_object(message | {"content": kind} if kind else message)


def _item_done(
    output_index: int,
    item: Any,
    parts: dict[tuple[int, int], int],
    streamed: set[int],
    messages: dict[int, dict[str, Any]],
    provider: str,
) -> list[StreamEvent]:
    """Events for a finished output item: what its deltas did not carry, then its BlockStops (a built-in tool
    item: one NativeBlock holding it whole)."""
    events: list[StreamEvent] = []
    if item.type == "function_call":
        block = parts.get((output_index, -1))
        if block is None:  # a server that sent no output_item.added
            block = parts[(output_index, -1)] = len(parts)
            meta = freeze_object(item_meta(provider, item.id)) if item.id else EMPTY
            events.append(BlockStart(block, "tool_call", call_id=item.call_id, name=item.name, meta=meta))
        if block not in streamed and item.arguments:
            events.append(ToolCallDelta(block, item.arguments))
        events.append(BlockStop(block))
    elif item.type == "reasoning":
        data = item.to_dict()
        block = parts.get((output_index, -1))
        if block is None:
            block = parts[(output_index, -1)] = len(parts)
            events.append(BlockStart(block, "thinking", meta=freeze_object(item_meta(provider, item.id))))
        if block not in streamed:
            text = reasoning_text(data)
            if text:
                events.append(ThinkingDelta(block, text))
        events.append(ThinkingDelta(block, "", signature=reasoning_signature(data)))
        events.append(BlockStop(block))
    elif item.type == "message":
        for content_index, content in enumerate(item.content):
            key = (output_index, content_index)
            block = parts.get(key)
            refusal: str | None = getattr(content, "refusal", None)
            said: str | None = getattr(content, "text", None) or refusal
            if block is None:
                if not said:
                    continue
                block = parts[key] = len(parts)
                kind = "refusal" if content.type == "refusal" else None
                events.append(BlockStart(block, "text", meta=_text_meta(messages.get(output_index), kind)))
            if block not in streamed and said:
                events.append(TextDelta(block, said))
            events.append(BlockStop(block))
    else:
        block = parts.get((output_index, -1))
        if block is None:
            block = parts[(output_index, -1)] = len(parts)
        events.append(NativeBlock(block, provider, freeze_object(item.to_dict())))
    return events
