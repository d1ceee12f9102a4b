"""Anthropic Messages API client (``pip install 'hookloop[anthropic]'``).

::

    client = AnthropicClient(model="claude-sonnet-4-6", thinking={"type": "adaptive"})
    worker = Worker(client, tools=[...])
    ...
    await client.aclose()            # or: async with AnthropicClient(...) as client:

Streams through the official SDK (``messages.create(stream=True)``) and normalises the server-sent events:

==============================================  ==================================================================
wire event                                      hookloop stream event
==============================================  ==================================================================
``content_block_start`` text / tool_use         ``BlockStart(kind="text")`` / ``BlockStart("tool_call", id, name)``
``content_block_start`` thinking                ``BlockStart(kind="thinking")``
``content_block_start`` redacted_thinking       ``BlockStart("thinking")``, ``ThinkingDelta(redacted=data)``
``text_delta`` / ``input_json_delta``           ``TextDelta`` / ``ToolCallDelta``
``thinking_delta`` / ``signature_delta``        ``ThinkingDelta(text)`` / ``ThinkingDelta(signature=...)``
``content_block_stop``                          ``BlockStop``
any other block (``server_tool_use``,           nothing while it streams; at its ``content_block_stop`` one
``web_search_tool_result``, ``*_tool_result``,  ``NativeBlock`` with the whole block (input JSON and citations
unknown types)                                  merged in), which the Worker keeps as a ``ProviderBlock``
text block with ``citations``                   ``BlockStart("text")`` / ``TextDelta`` / ``BlockStop`` as any
                                                text, then a ``NativeBlock`` citation overlay (next index)
``stop_reason: "pause_turn"``                   ``StopEvent("pause_turn")``: the Worker continues the turn
``message_start`` + ``message_delta`` usage     one ``UsageEvent`` (input, output, cache read, cache write)
``message_delta`` stop_reason, ``message_stop`` ``StopEvent``
``error`` event, HTTP errors, cut connection    a :mod:`hookloop.providers._errors` exception (raised)
==============================================  ==================================================================

Server-tool blocks (web search, tool search, code execution and other Anthropic-run tools) and block types
hookloop does not know are kept whole and sent back unchanged in their place (see
:mod:`hookloop.providers._anthropic_wire` for citations). Event indices are the wire's until the first citation
overlay, which takes the index after its text block; later blocks move up by one. A stream that ends without
``message_stop`` raises :class:`ProviderConnectionError`.

Cancel: closing the iterator (the Worker does on cancel) closes the HTTP response at once.
Retries: the SDK's policy (``max_retries``, default 2; ``retry-after`` honoured) runs before anything streams.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from hookloop._frozen import EMPTY, freeze_object
from hookloop.providers._anthropic_wire import CALLER_META, PROVIDER, to_anthropic
from hookloop.providers._common import SdkErrors, SdkOwner, map_sdk_error, require_model
from hookloop.providers._errors import ProviderConnectionError, ProviderError, RateLimitError, classify_anthropic
from hookloop.providers.base import LLMRequest
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
    import anthropic
    from anthropic import AsyncStream
    from anthropic.resources.messages import AsyncMessages
    from anthropic.types import RawMessageStreamEvent
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Anthropic client needs the anthropic SDK: pip install 'hookloop[anthropic]'") from exc

__all__ = ["AnthropicClient"]

_SDK_ERRORS = SdkErrors.of(anthropic)

_STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    "model_context_window_exceeded": "max_tokens",
}

_OWN_TOOL_KEYS = frozenset({"name", "description", "input_schema"})


class AnthropicClient(SdkOwner[anthropic.AsyncAnthropic]):
    """An :class:`hookloop.providers.LLMClient` for the Anthropic Messages API.

    Args:
        model: default model when the Worker's request names none.
        api_key: the key; without one the SDK reads ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``).
        auth_token: a bearer token instead of an API key (gateways, ``ANTHROPIC_AUTH_TOKEN``).
        base_url: API root; without one ``ANTHROPIC_BASE_URL`` or the public endpoint.
        max_tokens: output cap when the request sets none (the API requires one).
        thinking_budget: enable extended thinking with this many budget tokens (≥ 1024, < max_tokens).
        thinking: the ``thinking`` parameter as the API takes it, e.g. ``{"type": "adaptive"}`` for models
            that think adaptively (instead of ``thinking_budget``).
        caching: place prompt-cache breakpoints (system prompt/tools and the CacheLocked prefix).
        max_retries: the SDK's retry count for failed requests (default 2); ``timeout``: seconds per request.
        sdk_client: use this ``anthropic.AsyncAnthropic`` instead of building one (it is then not closed by
            :meth:`aclose`, its owner closes it).
        extra_params: more ``messages.create`` parameters sent as they are (``temperature``, ``metadata``, …).
        server_tools: Anthropic-run tools sent after the Worker's tools, as the API takes them, e.g.
            ``[{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]`` or a tool-search tool.
            Their blocks come back as :class:`~hookloop.items.ProviderBlock` items (never run by hookloop, no
            hooks or permission rules apply: Anthropic runs them) and go back unchanged.
        tool_options: more keys for the Worker's tools by tool name, e.g. ``{"get_rate": {"defer_loading":
            True}}`` for tool search. The keys hookloop sets (``name``, ``description``, ``input_schema``) stay.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        thinking_budget: int | None = None,
        thinking: Mapping[str, object] | None = None,
        caching: bool = True,
        max_retries: int | None = None,
        timeout: float | None = None,
        sdk_client: anthropic.AsyncAnthropic | None = None,
        extra_params: Mapping[str, object] | None = None,
        server_tools: Sequence[Mapping[str, object]] = (),
        tool_options: Mapping[str, Mapping[str, object]] | None = None,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        if thinking is not None and thinking_budget is not None:
            raise ValueError("pass thinking_budget= or thinking=, not both")
        self.thinking: dict[str, object] | None = (
            dict(thinking)
            if thinking is not None
            else {"type": "enabled", "budget_tokens": thinking_budget}
            if thinking_budget is not None
            else None
        )
        self.caching = caching
        self.extra_params: dict[str, object] = dict(extra_params or {})
        self.server_tools: list[dict[str, object]] = [dict(t) for t in server_tools]
        self.tool_options: dict[str, dict[str, object]] = {k: dict(v) for k, v in (tool_options or {}).items()}
        if sdk_client is not None:
            self._sdk = sdk_client
            self._owned = False
        else:
            options: dict[str, Any] = {}
            if max_retries is not None:
                options["max_retries"] = max_retries
            if timeout is not None:
                options["timeout"] = timeout
            if auth_token is not None:
                options["auth_token"] = auth_token
            self._sdk = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, **options)
            self._owned = True
        self._provider = PROVIDER

    def build_params(self, request: LLMRequest) -> dict[str, Any]:
        """The request body for ``request`` (without ``stream``): the ``messages.create`` keyword arguments, except
        that a key the installed SDK does not take as an argument is sent through ``extra_body``."""
        system, messages, tools = to_anthropic(
            request.system, request.items, request.tools, cache_prefix=request.cache_prefix, caching=self.caching
        )
        params: dict[str, Any] = {
            "model": require_model(request, self.model, PROVIDER),
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": messages,
        }
        if system:
            params["system"] = system
        if self.tool_options:
            for spec in tools:
                extra = self.tool_options.get(spec["name"])
                if extra:
                    spec.update({k: v for k, v in extra.items() if k not in _OWN_TOOL_KEYS})
        tools = [*tools, *(dict(t) for t in self.server_tools)]
        if tools:
            params["tools"] = tools
        if self.thinking is not None:
            params["thinking"] = self.thinking
        params.update(self.extra_params)
        return params

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """Stream one reply as hookloop events; raises a provider error (see the module docstring)."""
        params = _sdk_arguments(self.build_params(request))
        try:
            sdk_stream: AsyncStream[RawMessageStreamEvent] = await self._sdk.messages.create(stream=True, **params)
        except Exception as exc:
            mapped = _map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        # Usage: message_start carries input and cache counts, message_delta the cumulative output (and, on
        # newer API versions, cumulative input/cache counts too).
        input_tokens = output_tokens = cache_read = cache_write = 0
        stop: StopReason = "end_turn"
        # wire index → the provider-native block streaming there. Blocks are read with to_dict(warnings=False): the
        # raw keys and values as sent, even where they do not match the SDK's own types (kept verbatim, no warning)
        native: dict[int, _Native] = {}
        shift = 0  # hookloop index = wire index + shift (+1 after each citation overlay, which takes an index)
        finished = False
        try:
            async for event in sdk_stream:
                if event.type == "content_block_delta":
                    index = event.index
                    delta = event.delta
                    if delta.type == "text_delta":
                        if native:
                            open_block = native.get(index)
                            if open_block is not None:
                                open_block.text.append(delta.text)
                                if not open_block.cited:
                                    continue
                        yield TextDelta(index + shift, delta.text)
                    elif delta.type == "input_json_delta":
                        if native and index in native:
                            native[index].json.append(delta.partial_json)
                        elif delta.partial_json:
                            yield ToolCallDelta(index + shift, delta.partial_json)
                    elif delta.type == "thinking_delta":
                        yield ThinkingDelta(index + shift, delta.thinking)
                    elif delta.type == "signature_delta":
                        yield ThinkingDelta(index + shift, "", signature=delta.signature)
                    elif delta.type == "citations_delta" and native and index in native:
                        native[index].citations.append(delta.citation.to_dict(warnings=False))
                    # other delta types: nothing hookloop can merge (a native block goes back as it started)
                elif event.type == "content_block_start":
                    index = event.index
                    block = event.content_block
                    if block.type == "text":
                        if block.citations is not None:  # cited text: a Message, plus an overlay (see module doc)
                            native[index] = _Native(block.to_dict(warnings=False), cited=True)
                        yield BlockStart(index + shift, "text")
                        if block.text:
                            yield TextDelta(index + shift, block.text)
                    elif block.type == "tool_use":
                        meta = EMPTY
                        if getattr(block, "caller", None) is not None:  # a call from code execution, say
                            caller = block.to_dict(warnings=False).get("caller")
                            if isinstance(caller, dict) and caller.get("type") != "direct":
                                meta = freeze_object({CALLER_META: caller})
                        yield BlockStart(index + shift, "tool_call", call_id=block.id, name=block.name, meta=meta)
                        if block.input:
                            yield ToolCallDelta(index + shift, json.dumps(block.input))
                    elif block.type == "thinking":
                        yield BlockStart(index + shift, "thinking")
                        if block.thinking:
                            yield ThinkingDelta(index + shift, block.thinking)
                        if block.signature:
                            yield ThinkingDelta(index + shift, "", signature=block.signature)
                    elif block.type == "redacted_thinking":
                        yield BlockStart(index + shift, "thinking")
                        yield ThinkingDelta(index + shift, "", redacted=block.data)
                    else:  # server_tool_use, *_tool_result, any block type hookloop does not know: kept whole
                        native[index] = _Native(block.to_dict(warnings=False))
                elif event.type == "content_block_stop":
                    index = event.index
                    done = native.pop(index, None) if native else None
                    if done is None:
                        yield BlockStop(index + shift)
                        continue
                    data = done.data(index)
                    if done.cited:
                        yield BlockStop(index + shift)
                        if not data.get("citations"):
                            continue  # no citation came: plain text
                        shift += 1
                    yield NativeBlock(index + shift, PROVIDER, freeze_object(data))
                elif event.type == "message_start":
                    usage = event.message.usage
                    input_tokens = usage.input_tokens or 0
                    output_tokens = usage.output_tokens or 0
                    cache_read = usage.cache_read_input_tokens or 0
                    cache_write = usage.cache_creation_input_tokens or 0
                elif event.type == "message_delta":
                    if event.delta.stop_reason is not None:
                        stop = _STOP_REASONS.get(event.delta.stop_reason, "other")
                    delta_usage = event.usage
                    output_tokens = delta_usage.output_tokens
                    if delta_usage.input_tokens is not None:
                        input_tokens = delta_usage.input_tokens
                    if delta_usage.cache_read_input_tokens is not None:
                        cache_read = delta_usage.cache_read_input_tokens
                    if delta_usage.cache_creation_input_tokens is not None:
                        cache_write = delta_usage.cache_creation_input_tokens
                elif event.type == "message_stop":
                    finished = True
                    yield UsageEvent(Usage(input_tokens, output_tokens, cache_read, cache_write))
                    yield StopEvent(stop)
        except Exception as exc:
            mapped = _map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            await sdk_stream.close()
        if not finished:
            raise ProviderConnectionError(
                f"{PROVIDER}: the stream ended before message_stop (connection closed mid-message)",
                provider=PROVIDER,
            )


_CREATE_ARGUMENTS = frozenset(inspect.signature(AsyncMessages.create).parameters) - {"self", "stream"}


def _sdk_arguments(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as ``messages.create`` takes them: a body key the installed SDK does not name as an argument
    (``temperature`` on SDKs that dropped it, a new API parameter) goes in ``extra_body``, so it is still sent."""
    unknown = [key for key in params if key not in _CREATE_ARGUMENTS]
    if not unknown:
        return params
    arguments = {k: v for k, v in params.items() if k in _CREATE_ARGUMENTS}
    extra = dict(params.get("extra_body") or {})
    extra.update({key: params[key] for key in unknown})
    arguments["extra_body"] = extra
    return arguments


class _Native:
    """A provider-native block while it streams: the block as it started, and what its deltas add (tool input
    JSON, citations, text)."""

    __slots__ = ("block", "citations", "cited", "json", "text")

    def __init__(self, block: dict[str, Any], *, cited: bool = False) -> None:
        self.block = block
        self.cited = cited
        self.json: list[str] = []
        self.citations: list[dict[str, Any]] = []
        self.text: list[str] = []

    def data(self, index: int) -> dict[str, Any]:
        """The complete block, as a non-streamed reply would hold it."""
        block = self.block
        if self.json:
            raw = "".join(self.json)
            try:
                block["input"] = json.loads(raw) if raw.strip() else {}
            except ValueError:
                raise ProviderConnectionError(
                    f"{PROVIDER}: the {block.get('type')} block {index} ended with input that is not JSON: "
                    f"{raw[:200]!r}",
                    provider=PROVIDER,
                ) from None
        if self.citations:
            block["citations"] = [*(block.get("citations") or ()), *self.citations]
        if self.text:
            block["text"] = (block.get("text") or "") + "".join(self.text)
        return block


def _map_error(exc: BaseException) -> ProviderError | None:
    """The hookloop error for an SDK exception: the shared mapping, then Anthropic's own error types decide
    the class and whether a retry may help (:func:`hookloop.providers._errors.classify_anthropic`)."""
    mapped = map_sdk_error(exc, provider=PROVIDER, sdk=_SDK_ERRORS)
    if mapped is None or mapped.error_type is None:
        return mapped  # no provider error type: a connection failure, a timeout, or a bare HTTP status
    return classify_anthropic(
        provider=PROVIDER,
        message=str(mapped),
        status_code=mapped.status_code,
        error_type=mapped.error_type,
        request_id=mapped.request_id,
        retry_after=mapped.retry_after if isinstance(mapped, RateLimitError) else None,
    )
