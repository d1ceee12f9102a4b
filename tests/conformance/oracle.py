"""What a recorded reply says, read straight from its bytes, independently of hookloop's clients.

For each API an own small parser turns the recorded body (an event stream, or a JSON document for a
non-streamed reply) into a :class:`Reply`: the reply text, the reasoning texts, the tool calls, the stop
reason in hookloop's vocabulary, the usage (hookloop's split: uncached input, output, cache read, cache
write), the output exactly as the API would hand it back (Anthropic content blocks, Responses output items) —
or, when the reply is an error (an HTTP error status, an error event or error chunk inside a 200 stream), the
:class:`ExpectedError` hookloop must raise.

Error expectations (issue 11 item 6 and the provider error tree): the HTTP status decides — or, inside a 200
stream, an HTTP-like ``code``/``status_code`` the error carries — then the error type:

====================================================  ========================  =========
status / type                                         hookloop error            retryable
====================================================  ========================  =========
503, 529, ``overloaded_error``                        OverloadedError           yes
429, ``rate_limit_error``, ``rate_limit_exceeded``    RateLimitError            yes
401, 403, ``authentication_error``                    AuthenticationError       no
408, 504, ``timeout_error``                           ProviderTimeoutError      yes
other 4xx, ``invalid_request_error``, ``not_found``   InvalidRequestError       no
  (the prompt did not fit: ContextOverflowError)
anything else (5xx, ``api_error``, unknown)           ProviderError             yes
====================================================  ========================  =========

Chat content may be a list of typed parts (Mistral): ``text`` parts are reply text, ``thinking`` parts (holding
text parts) are reasoning.

Stop reasons: Anthropic's own names (``pause_turn`` kept as is: hookloop must continue the turn), Chat
``stop``/``tool_calls``/``length``/``content_filter`` → ``end_turn``/``tool_use``/``max_tokens``/``refusal``
(a ``[DONE]`` without any ``finish_reason`` is a clean end: ``tool_use`` when calls arrived, else
``end_turn`` — issue 11 item 4), Responses ``completed`` → ``tool_use`` when a function call is in the output,
else ``end_turn``; ``incomplete`` → its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.recording import API, Interaction

__all__ = ["ExpectedError", "Reply", "SeenCall", "expected_error", "read_reply", "sse_events"]


@dataclass(frozen=True, slots=True)
class SeenCall:
    call_id: str
    name: str
    arguments: Any  # the parsed JSON, or the raw text when it is not JSON


@dataclass(frozen=True, slots=True)
class ExpectedError:
    kind: str
    retryable: bool
    said: str

    def describe(self) -> str:
        return f"{self.kind}(retryable={self.retryable})"


@dataclass(slots=True)
class Reply:
    text: str = ""
    reasoning: list[str] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)  # Anthropic signatures / redacted data, in order
    tool_calls: list[SeenCall] = field(default_factory=list)
    stop: str = "end_turn"
    usage: tuple[int, int, int, int] | None = None
    output: list[dict[str, Any]] = field(default_factory=list)  # content blocks / output items, complete
    error: ExpectedError | None = None


def sse_events(body: str) -> list[tuple[str | None, str]]:
    """(event name, data) of each event of a server-sent-event body; comments and empty events left out."""
    events: list[tuple[str | None, str]] = []
    for raw in body.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in raw.split("\n"):
            line = line.lstrip(" ") if not data and not name else line
            if not line or line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        if data:
            events.append((name, "\n".join(data)))
    return events


_OVERFLOW = ("context_length_exceeded", "prompt is too long", "maximum context length", "context window")


def _http_like(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
        return value
    if isinstance(value, str) and value.isdigit() and 100 <= int(value) < 600:
        return int(value)
    return None


def expected_error(status: int, error: object) -> ExpectedError:
    """The error hookloop must raise for an HTTP ``status`` (200 for an in-stream error) and error object."""
    inner = error.get("error", error) if isinstance(error, dict) else error
    inner = inner if isinstance(inner, dict) else {"message": str(inner)}
    kind = str(inner.get("type") or "").lower()
    code = inner.get("code")
    message = str(inner.get("message") or "")
    http = status if status >= 400 else _http_like(code) or _http_like(inner.get("status_code"))
    names = {kind, str(code).lower() if code is not None else ""}
    said = f"HTTP {status}" if status >= 400 else "in-stream error"
    said += f" {kind or code or ''}: {message[:80]}"
    if http in (503, 529) or names & {"overloaded_error", "overloaded"}:
        return ExpectedError("OverloadedError", True, said)
    if http == 429 or names & {"rate_limit_error", "rate_limit_exceeded"}:
        return ExpectedError("RateLimitError", True, said)
    if http in (401, 403) or names & {"authentication_error", "permission_error", "invalid_api_key"}:
        return ExpectedError("AuthenticationError", False, said)
    if http in (408, 504) or names & {"timeout_error"}:
        return ExpectedError("ProviderTimeoutError", True, said)
    if (http is not None and 400 <= http < 500) or names & {"invalid_request_error", "not_found_error"}:
        if any(marker in message.lower() for marker in _OVERFLOW):
            return ExpectedError("ContextOverflowError", False, said)
        return ExpectedError("InvalidRequestError", False, said)
    return ExpectedError("ProviderError", True, said)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def read_reply(api: API, interaction: Interaction) -> Reply:
    """The :class:`Reply` a recorded response holds."""
    if interaction.status >= 400:
        return Reply(error=expected_error(interaction.status, _json(interaction.body)))
    if api == "anthropic":
        return _anthropic(interaction)
    if api == "chat":
        return _chat(interaction)
    return _responses(interaction)


# -- Anthropic Messages -----------------------------------------------------------------------------------

_ANTHROPIC_STOP = {"model_context_window_exceeded": "max_tokens"}


def anthropic_message_events(body: str) -> list[dict[str, Any]]:
    return [json.loads(data) for _, data in sse_events(body)]


def _anthropic(interaction: Interaction) -> Reply:
    reply = Reply()
    if not interaction.streamed:
        message = json.loads(interaction.body)
        reply.output = list(message["content"])
        reply.stop = _ANTHROPIC_STOP.get(message["stop_reason"], message["stop_reason"])
        u = message["usage"]
        reply.usage = (
            u.get("input_tokens") or 0,
            u.get("output_tokens") or 0,
            u.get("cache_read_input_tokens") or 0,
            u.get("cache_creation_input_tokens") or 0,
        )
        return _anthropic_summary(reply)
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    usage = [0, 0, 0, 0]
    for event in anthropic_message_events(interaction.body):
        kind = event.get("type")
        if kind == "message_start":
            u = event["message"]["usage"]
            usage = [
                u.get("input_tokens") or 0,
                u.get("output_tokens") or 0,
                u.get("cache_read_input_tokens") or 0,
                u.get("cache_creation_input_tokens") or 0,
            ]
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            dk = delta["type"]
            if dk == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif dk == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
            elif dk == "signature_delta":
                block["signature"] = delta["signature"]
            elif dk == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
            elif dk == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
        elif kind == "content_block_stop":
            index = event["index"]
            if index in partial:
                blocks[index]["input"] = _json(partial.pop(index)) if partial.get(index, "").strip() else {}
        elif kind == "message_delta":
            stop = event["delta"].get("stop_reason")
            if stop is not None:
                reply.stop = _ANTHROPIC_STOP.get(stop, stop)
            u = event.get("usage") or {}
            usage[1] = u.get("output_tokens", usage[1]) or 0
            for slot, key in ((0, "input_tokens"), (2, "cache_read_input_tokens"), (3, "cache_creation_input_tokens")):
                if u.get(key) is not None:
                    usage[slot] = u[key]
        elif kind == "error":
            return Reply(error=expected_error(200, event))
    reply.output = [blocks[i] for i in sorted(blocks)]
    reply.usage = (usage[0], usage[1], usage[2], usage[3])
    return _anthropic_summary(reply)


def _anthropic_summary(reply: Reply) -> Reply:
    for block in reply.output:
        kind = block["type"]
        if kind == "text":
            reply.text += block["text"]
        elif kind == "thinking":
            reply.reasoning.append(block.get("thinking", ""))
            reply.signatures.append(block.get("signature", ""))
        elif kind == "redacted_thinking":
            reply.reasoning.append("")
            reply.signatures.append(block["data"])
        elif kind == "tool_use":
            reply.tool_calls.append(SeenCall(block["id"], block["name"], block.get("input", {})))
    return reply


# -- Chat Completions -------------------------------------------------------------------------------------

_CHAT_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}
_CHAT_STOP |= {"content_filter": "refusal"}


def _chat(interaction: Interaction) -> Reply:
    if not interaction.streamed:
        return _chat_completion(json.loads(interaction.body))
    reply = Reply()
    calls: list[dict[str, Any]] = []
    by_index: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    for _, data in sse_events(interaction.body):
        if data.strip() == "[DONE]":
            break
        chunk = json.loads(data)
        if chunk.get("error"):
            return Reply(error=expected_error(200, chunk))
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                if not reply.reasoning:
                    reply.reasoning.append("")
                reply.reasoning[0] += reasoning
            text = delta.get("content") or delta.get("refusal")
            if isinstance(text, list):
                # Mistral's typed chunks: text parts, and thinking parts holding text parts.
                for part in text:
                    if part.get("type") == "text":
                        reply.text += part.get("text", "")
                    elif part.get("type") == "thinking":
                        if not reply.reasoning:
                            reply.reasoning.append("")
                        reply.reasoning[0] += "".join(t.get("text", "") for t in part.get("thinking") or ())
            elif text:
                reply.text += text
            for position, part in enumerate(delta.get("tool_calls") or ()):
                index = part.get("index", position)
                call = by_index.get(index)
                if call is None or (part.get("id") and call["id"] and part["id"] != call["id"]):
                    call = by_index[index] = {"id": part.get("id"), "name": None, "arguments": ""}
                    calls.append(call)
                function = part.get("function") or {}
                call["id"] = call["id"] or part.get("id")
                call["name"] = call["name"] or function.get("name")
                call["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    for call in calls:
        raw = call["arguments"]
        reply.tool_calls.append(SeenCall(call["id"] or "", call["name"] or "", _json(raw) if raw.strip() else {}))
    if finish is None:
        reply.stop = "tool_use" if calls else "end_turn"
    else:
        stop = _CHAT_STOP.get(finish, "other")
        reply.stop = "tool_use" if calls and stop == "end_turn" else stop
    if usage is not None:
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        total = usage.get("prompt_tokens") or 0
        reply.usage = (max(0, total - cached - written), usage.get("completion_tokens") or 0, cached, written)
    return reply


def _chat_completion(completion: dict[str, Any]) -> Reply:
    """A non-streamed Chat Completions reply."""
    if completion.get("error"):
        return Reply(error=expected_error(200, completion))
    reply = Reply()
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        reply.reasoning.append(reasoning)
    reply.text = message.get("content") or message.get("refusal") or ""
    for call in message.get("tool_calls") or ():
        raw = (call.get("function") or {}).get("arguments") or ""
        reply.tool_calls.append(SeenCall(call.get("id") or "", call["function"]["name"], _json(raw) if raw else {}))
    stop = _CHAT_STOP.get(choice.get("finish_reason") or "stop", "other")
    reply.stop = "tool_use" if reply.tool_calls and stop == "end_turn" else stop
    usage = completion.get("usage")
    if usage:
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        total = usage.get("prompt_tokens") or 0
        reply.usage = (max(0, total - cached - written), usage.get("completion_tokens") or 0, cached, written)
    return reply


# -- Responses --------------------------------------------------------------------------------------------

_INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


def _responses(interaction: Interaction) -> Reply:
    response: dict[str, Any] | None = None
    if not interaction.streamed:
        response = json.loads(interaction.body)
        status = response.get("status", "completed")
    else:
        status = "cut"
        done: dict[int, dict[str, Any]] = {}
        for name, data in sse_events(interaction.body):
            if data.strip() == "[DONE]":
                break  # some compatible servers end a Responses stream as a Chat one
            event = json.loads(data)
            kind = event.get("type", name)
            if kind == "response.output_item.done":
                done[event["output_index"]] = event["item"]
            elif kind in ("response.completed", "response.incomplete"):
                response, status = event["response"], kind.removeprefix("response.")
            elif kind == "response.failed":
                return Reply(error=expected_error(200, event["response"].get("error") or {}))
            elif kind == "error":
                return Reply(error=expected_error(200, event.get("error", event)))
    reply = Reply()
    if response is None:
        reply.stop = "cut"
        return reply
    reply.output = list(response.get("output") or ())
    if interaction.streamed and done:
        # What a streaming client keeps: the items as each output_item.done gave them (the encrypted reasoning
        # in response.completed may be encrypted anew).
        reply.output = [done[i] for i in sorted(done)]
    for item in reply.output:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                reply.text += part.get("text") or part.get("refusal") or ""
        elif kind == "reasoning":
            parts = item.get("summary") or item.get("content") or ()
            reply.reasoning.append("".join(p.get("text", "") for p in parts))
        elif kind == "function_call":
            raw = item.get("arguments") or ""
            reply.tool_calls.append(SeenCall(item["call_id"], item["name"], _json(raw) if raw.strip() else {}))
    if status == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason") or ""
        reply.stop = _INCOMPLETE.get(reason, "other")
    else:
        reply.stop = "tool_use" if reply.tool_calls else "end_turn"
    u = response.get("usage")
    if u:
        details = u.get("input_tokens_details") or {}
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        total = u.get("input_tokens") or 0
        reply.usage = (max(0, total - cached - written), u.get("output_tokens") or 0, cached, written)
    return reply
