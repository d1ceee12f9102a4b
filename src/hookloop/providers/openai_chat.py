"""OpenAI Chat Completions client, for OpenAI and every OpenAI-compatible server (``hookloop[openai]``).

::

    client = OpenAIChatClient(model="gpt-4.1")                                        # OPENAI_API_KEY
    local = OpenAIChatClient(model="llama3.1", base_url="http://localhost:11434/v1",  # Ollama, vLLM,
                             api_key="unused", provider="openai-compatible")            # llama.cpp, LM Studio

Streams ``chat.completions.create(stream=True, stream_options={"include_usage": True})`` and normalises the
chunks. hookloop block indices are given in order of first appearance: the text, the reasoning text some
compatible servers stream (``delta.reasoning_content`` / ``delta.reasoning``), and one block per tool call —
parallel tool calls arrive interleaved, keyed by their ``index``, and each keeps its own block. All open blocks
stop at ``finish_reason``; the usage chunk (``choices: []``) becomes one :class:`UsageEvent`; the
:class:`StopEvent` comes at the end of the stream. A stream that ends with ``[DONE]`` but no ``finish_reason``
(OpenRouter does this for some routes) ends cleanly, its stop reason inferred from what arrived (tool calls:
``tool_use``, else ``end_turn``); one that ends with neither (the connection was cut) raises
:class:`ProviderConnectionError`. An ``{"error": …}`` chunk raises the matching provider error, classified by
the HTTP-like code it carries when it has one (``{"error": {"code": 400}}`` is not retryable).

Usage: OpenAI counts cached prompt tokens inside ``prompt_tokens``; hookloop reports them apart
(``input_tokens`` is the uncached part), as for Anthropic.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from hookloop.providers._chat_wire import details_signature, to_chat
from hookloop.providers._common import SdkErrors, SdkOwner, map_sdk_error, require_model, split_tokens
from hookloop.providers._errors import ProviderConnectionError, ProviderError
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
    import openai
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("the OpenAI clients need the openai SDK: pip install 'hookloop[openai]'") from exc

__all__ = ["REASONING_FAMILIES", "OpenAIChatClient"]

REASONING_FAMILIES: Mapping[str, str] = {
    "deepseek": "reasoning_content",
    "kimi": "reasoning_content",
    "moonshot": "reasoning_content",
    "qwen": "reasoning_content",
    "qwq": "reasoning_content",
    "glm": "reasoning_content",
}
"""Model-name fragments (lower case) whose thinking models want their reasoning back in a Chat Completions
history, and the assistant-message field they read it from (``OpenAIChatClient(send_reasoning=...)`` overrides)."""

_OPENROUTER = "openrouter.ai"
# Servers that reject an unknown message field (Groq and Cerebras answer 400 "property 'reasoning_content' is
# unsupported"), whatever model family they host.
_STRICT_HOSTS = ("api.openai.com", "openai.azure.com", "groq.com", "cerebras.ai")

SDK_ERRORS = SdkErrors.of(openai)

_FINISH: Mapping[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def build_sdk_client(
    *, api_key: str | None, base_url: str | None, max_retries: int | None, timeout: float | None
) -> openai.AsyncOpenAI:
    options: dict[str, Any] = {}
    if max_retries is not None:
        options["max_retries"] = max_retries
    if timeout is not None:
        options["timeout"] = timeout
    return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, **options)


class _Call:
    __slots__ = ("block", "call_id", "name", "pending", "started")

    def __init__(self, block: int, call_id: str | None, name: str | None) -> None:
        self.block = block
        self.call_id = call_id
        self.name = name
        self.pending: list[str] = []  # argument fragments received before the name (rare servers)
        self.started = False


class _Details:
    """OpenRouter's ``reasoning_details`` of one reply, merged from their streamed pieces: pieces with the same
    ``index`` are one entry (their ``text`` / ``summary`` concatenated, other fields as last given)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[object, dict[str, Any]] = {}

    def take(self, pieces: list[Any]) -> str:
        """Merge ``pieces``; return the readable text they add."""
        said: list[str] = []
        for position, piece in enumerate(pieces):
            if not isinstance(piece, dict):
                continue
            key = piece.get("index", position)
            if not isinstance(key, (int, str)) or isinstance(key, bool):
                key = position  # a malformed index must not break the stream
            entry = self.entries.get(key)
            if entry is None:
                entry = self.entries[key] = {}
            for name, value in piece.items():
                if name in ("text", "summary") and isinstance(value, str):
                    entry[name] = entry.get(name, "") + value
                    said.append(value)
                elif (value is not None and value != "") or name not in entry:
                    entry[name] = value
        return "".join(said)

    def signature(self) -> str | None:
        """The merged entries as a Reasoning signature (None when there were none)."""
        if not self.entries:
            return None
        return details_signature(list(self.entries.values()))


def _close(calls: dict[int, _Call], open_blocks: list[int], thinking: int, details: _Details) -> list[StreamEvent]:
    """The events that end a reply: calls that never got a name start now (the Worker answers them as unknown
    tools), the reasoning block gets its reasoning_details, then every open block stops."""
    events: list[StreamEvent] = []
    if thinking in open_blocks:
        signature = details.signature()
        if signature is not None:
            events.append(ThinkingDelta(thinking, "", signature=signature))
    for call in calls.values():
        if not call.started:
            call.started = True
            open_blocks.append(call.block)
            events.append(BlockStart(call.block, "tool_call", call_id=call.call_id, name=call.name or ""))
            events.extend(ToolCallDelta(call.block, earlier) for earlier in call.pending)
    events.extend(BlockStop(index) for index in sorted(open_blocks))
    open_blocks.clear()
    return events


def _content_parts(content: object) -> tuple[str, str]:
    """(text, reasoning) of a delta whose content is a list of parts instead of a string: ``{"type": "text"}``
    parts are text, ``{"type": "thinking", "thinking": [text parts] | str}`` parts (Mistral) reasoning; anything
    else is dropped, never passed on as if it were text."""
    if not isinstance(content, list):
        return "", ""
    text: list[str] = []
    thought: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "thinking":
            inner = part.get("thinking")
            if isinstance(inner, str):
                thought.append(inner)
            elif isinstance(inner, list):
                thought.extend(p["text"] for p in inner if isinstance(p, dict) and isinstance(p.get("text"), str))
        elif isinstance(part.get("text"), str):
            text.append(part["text"])
    return "".join(text), "".join(thought)


class _DoneWatch:
    """Whether the event stream carried its ``data: [DONE]`` terminator, which the SDK consumes unseen.

    It wraps the SDK stream's SSE event iterator (``AsyncStream._iter_events``, read once when iteration
    starts); on an SDK without it, ``seen`` stays False and a reply without a finish_reason stays an error.
    """

    __slots__ = ("seen",)

    def __init__(self, stream: object) -> None:
        self.seen = False
        events = getattr(stream, "_iter_events", None)
        if events is None:  # pragma: no cover - another SDK layout
            return

        async def watched() -> AsyncIterator[Any]:
            async for sse in events():
                if sse.data.startswith("[DONE]"):
                    self.seen = True
                yield sse

        stream._iter_events = watched  # type: ignore[attr-defined]


class OpenAIChatClient(SdkOwner[openai.AsyncOpenAI]):
    """An :class:`hookloop.providers.LLMClient` for Chat Completions (OpenAI or any compatible server).

    Args:
        model: default model when the Worker's request names none.
        api_key / base_url: without them the SDK reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
        provider: the name in errors, telemetry and ``Reasoning.provider`` (``"openai-compatible"`` for
            other servers).
        max_tokens: output cap when the request sets none (None: the server's default).
        max_tokens_param: ``"max_completion_tokens"`` (OpenAI) or ``"max_tokens"`` (older compatible servers);
            default: the first for ``provider="openai"``, the second otherwise.
        stream_usage: ask for the usage chunk (``stream_options.include_usage``); turn off for servers that
            reject ``stream_options``.
        max_retries / timeout: the SDK's retry count (default 2) and per-request timeout in seconds.
        sdk_client: use this ``openai.AsyncOpenAI`` (not closed by :meth:`aclose`).
        extra_params: more ``create`` parameters sent as they are (``temperature``, ``reasoning_effort``, …).
        send_reasoning: whether the reasoning a reply streamed goes back on its assistant message in later
            requests (thinking models of DeepSeek, Kimi, Qwen and GLM reject a tool follow-up without it).
            None (the default): a client whose ``base_url`` is OpenRouter's sends ``reasoning_details`` as
            received (else the text as ``reasoning``); OpenAI, Azure OpenAI, Groq and Cerebras get nothing
            (they reject unknown message fields); elsewhere a model whose name contains one of
            :data:`REASONING_FAMILIES` gets ``reasoning_content``, other models nothing. True:
            ``reasoning_content`` for every model and server; False: never; a string: that field name.
            Only reasoning this client produced (its ``provider``) is sent.
        tool_result_images: send the images of tool results (``ToolResult.parts``, e.g. an MCP screenshot) to
            the model: a ``tool`` message takes text only, so they go in a ``user`` message of ``image_url``
            parts right after the tool messages. Turn off for a model that takes no images: the tool message
            then says the image was omitted.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai",
        max_tokens: int | None = None,
        max_tokens_param: str | None = None,
        stream_usage: bool = True,
        max_retries: int | None = None,
        timeout: float | None = None,
        sdk_client: openai.AsyncOpenAI | None = None,
        extra_params: Mapping[str, object] | None = None,
        send_reasoning: bool | str | None = None,
        tool_result_images: bool = True,
    ) -> None:
        self.model = model
        self.send_reasoning = send_reasoning
        self.tool_result_images = tool_result_images
        self.max_tokens = max_tokens
        self.max_tokens_param = max_tokens_param or ("max_completion_tokens" if provider == "openai" else "max_tokens")
        self.stream_usage = stream_usage
        self.extra_params: dict[str, object] = dict(extra_params or {})
        self._provider = provider
        self._owned = sdk_client is None
        self._sdk = sdk_client or build_sdk_client(
            api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
        )

    def build_params(self, request: LLMRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` keyword arguments for ``request`` (without ``stream``)."""
        model = require_model(request, self.model, self._provider)
        field = self.reasoning_field(model)
        messages, tools = to_chat(
            request.system,
            request.items,
            request.tools,
            reasoning_field=field,
            reasoning_provider=self._provider,
            tool_images=self.tool_result_images,
        )
        params: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            params["tools"] = tools
        if self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens:
            params[self.max_tokens_param] = max_tokens
        params.update(self.extra_params)
        return params

    def reasoning_field(self, model: str) -> str | None:
        """The assistant-message field reasoning goes back in for ``model`` (see ``send_reasoning``), or None."""
        choice = self.send_reasoning
        if choice is False:
            return None
        if choice is True:
            return "reasoning_content"
        if isinstance(choice, str):
            return choice
        host = (urlsplit(str(self._sdk.base_url)).hostname or "").lower()
        if host == _OPENROUTER or host.endswith("." + _OPENROUTER):
            return "reasoning"
        if any(host == strict or host.endswith("." + strict) for strict in _STRICT_HOSTS):
            return None
        name = model.lower()
        for family, field in REASONING_FAMILIES.items():
            if family in name:
                return field
        return None

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """Stream one reply as hookloop events; raises a provider error (see the module docstring)."""
        provider = self._provider
        params = self.build_params(request)
        try:
            sdk_stream: AsyncStream[ChatCompletionChunk] = await self._sdk.chat.completions.create(
                stream=True, **params
            )
        except Exception as exc:
            mapped = map_sdk_error(exc, provider=provider, sdk=SDK_ERRORS)
            if mapped is None:
                raise
            raise mapped from exc
        done = _DoneWatch(sdk_stream)
        merged = _Details()
        blocks = 0
        text_block = -1
        thinking_block = -1
        calls: dict[int, _Call] = {}
        open_blocks: list[int] = []
        stop: StopReason | None = None
        usage: Usage | None = None
        try:
            async for chunk in sdk_stream:
                if chunk.usage is not None:
                    u = chunk.usage
                    details = u.prompt_tokens_details
                    cached = (details.cached_tokens or 0) if details is not None else 0
                    written = (getattr(details, "cache_write_tokens", None) or 0) if details is not None else 0
                    fresh, cached, written = split_tokens(u.prompt_tokens, cached, written)
                    usage = Usage(fresh, u.completion_tokens, cached, written)
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue  # n > 1 is not a hookloop concept: the first choice is the reply
                    delta = choice.delta
                    reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                    text: Any = delta.content or delta.refusal
                    if text and not isinstance(text, str):
                        # content parts (Mistral's magistral: "thinking" and "text" chunks)
                        text, thought = _content_parts(text)
                        if thought and not (isinstance(reasoning, str) and reasoning):
                            reasoning = thought
                    more = getattr(delta, "reasoning_details", None)
                    if more and isinstance(more, list):
                        said = merged.take(more)
                        if not isinstance(reasoning, str) or not reasoning:
                            reasoning = said
                        if thinking_block < 0:
                            thinking_block, blocks = blocks, blocks + 1
                            open_blocks.append(thinking_block)
                            yield BlockStart(thinking_block, "thinking")
                    if reasoning and isinstance(reasoning, str):
                        if thinking_block < 0:
                            thinking_block, blocks = blocks, blocks + 1
                            open_blocks.append(thinking_block)
                            yield BlockStart(thinking_block, "thinking")
                        yield ThinkingDelta(thinking_block, reasoning)
                    if text:
                        if text_block < 0:
                            text_block, blocks = blocks, blocks + 1
                            open_blocks.append(text_block)
                            yield BlockStart(text_block, "text")
                        yield TextDelta(text_block, text)
                    if delta.tool_calls:
                        for position, part in enumerate(delta.tool_calls):
                            index = getattr(part, "index", None)
                            call = calls.get(position if index is None else index)
                            if call is None or (part.id and call.call_id and part.id != call.call_id):
                                # A new call; some servers number every call 0 and tell them apart by id only.
                                call = calls[position if index is None else index] = _Call(blocks, part.id, None)
                                blocks += 1
                            function = part.function
                            if part.id and not call.call_id:
                                call.call_id = part.id
                            if function is not None and function.name and not call.name:
                                call.name = function.name
                            fragment: Any = function.arguments if function is not None else None
                            if fragment is not None and not isinstance(fragment, str):
                                # arguments as a JSON object (some local servers): its JSON text
                                fragment = json.dumps(fragment) if isinstance(fragment, dict) else None
                            if not call.started:
                                if call.name is None:
                                    if fragment:
                                        call.pending.append(fragment)
                                    continue
                                call.started = True
                                open_blocks.append(call.block)
                                yield BlockStart(
                                    call.block,
                                    "tool_call",
                                    call_id=call.call_id or f"call_{call.block}",
                                    name=call.name,
                                )
                                for earlier in call.pending:
                                    yield ToolCallDelta(call.block, earlier)
                            if fragment:
                                yield ToolCallDelta(call.block, fragment)
                    finish: str | None = choice.finish_reason  # servers send values the SDK does not list
                    if finish is not None:
                        if finish == "error":  # OpenRouter: the upstream failed mid-reply
                            raise ProviderError(
                                f"{provider} stream error: the reply ended with finish_reason 'error'",
                                provider=provider,
                            )
                        reason = _FINISH.get(finish, "other")
                        stop = "tool_use" if calls and reason == "end_turn" else reason
                        for event in _close(calls, open_blocks, thinking_block, merged):
                            yield event
            if stop is None and done.seen:
                # "[DONE]" without a finish_reason (OpenRouter routes do this): a clean end all the same.
                stop = "tool_use" if calls else "end_turn"
                for event in _close(calls, open_blocks, thinking_block, merged):
                    yield event
        except Exception as exc:
            mapped = map_sdk_error(exc, provider=provider, sdk=SDK_ERRORS)
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            await sdk_stream.close()
        if stop is None:
            raise ProviderConnectionError(
                f"{provider}: the stream ended before a finish_reason or [DONE] (connection closed mid-message)",
                provider=provider,
            )
        if usage is not None:
            yield UsageEvent(usage)
        yield StopEvent(stop)
