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
``message_start`` + ``message_delta`` usage     one ``UsageEvent`` (input, output, cache read, cache write)
``message_delta`` stop_reason, ``message_stop`` ``StopEvent``
``error`` event, HTTP errors, cut connection    a :mod:`hookloop.providers._errors` exception (raised)
==============================================  ==================================================================

Server-tool blocks (web search and other Anthropic-run tools) are not part of hookloop's history and are
skipped. A stream that ends without ``message_stop`` raises :class:`ProviderConnectionError`.

Cancel: closing the iterator (the Worker does on cancel) closes the HTTP response at once.
Retries: the SDK's policy (``max_retries``, default 2; ``retry-after`` honoured) runs before anything streams.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from hookloop.providers._anthropic_wire import PROVIDER, to_anthropic
from hookloop.providers._common import SdkErrors, SdkOwner, map_sdk_error, require_model
from hookloop.providers._errors import ProviderConnectionError, ProviderError, RateLimitError, classify_anthropic
from hookloop.providers.base import LLMRequest
from hookloop.stream import (
    BlockStart,
    BlockStop,
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
        """The ``messages.create`` keyword arguments for ``request`` (without ``stream``)."""
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
        if tools:
            params["tools"] = tools
        if self.thinking is not None:
            params["thinking"] = self.thinking
        params.update(self.extra_params)
        return params

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """Stream one reply as hookloop events; raises a provider error (see the module docstring)."""
        params = self.build_params(request)
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
        skipped: set[int] = set()
        finished = False
        try:
            async for event in sdk_stream:
                if event.type == "content_block_delta":
                    index = event.index
                    delta = event.delta
                    if delta.type == "text_delta":
                        yield TextDelta(index, delta.text)
                    elif delta.type == "input_json_delta":
                        if delta.partial_json:
                            yield ToolCallDelta(index, delta.partial_json)
                    elif delta.type == "thinking_delta":
                        yield ThinkingDelta(index, delta.thinking)
                    elif delta.type == "signature_delta":
                        yield ThinkingDelta(index, "", signature=delta.signature)
                    # citations_delta: citations are not part of hookloop's history
                elif event.type == "content_block_start":
                    index = event.index
                    block = event.content_block
                    if block.type == "text":
                        yield BlockStart(index, "text")
                        if block.text:
                            yield TextDelta(index, block.text)
                    elif block.type == "tool_use":
                        yield BlockStart(index, "tool_call", call_id=block.id, name=block.name)
                        if block.input:
                            yield ToolCallDelta(index, json.dumps(block.input))
                    elif block.type == "thinking":
                        yield BlockStart(index, "thinking")
                        if block.thinking:
                            yield ThinkingDelta(index, block.thinking)
                        if block.signature:
                            yield ThinkingDelta(index, "", signature=block.signature)
                    elif block.type == "redacted_thinking":
                        yield BlockStart(index, "thinking")
                        yield ThinkingDelta(index, "", redacted=block.data)
                    else:
                        skipped.add(index)
                elif event.type == "content_block_stop":
                    if event.index not in skipped:
                        yield BlockStop(event.index)
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
