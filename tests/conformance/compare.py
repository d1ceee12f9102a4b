"""How a request hookloop sent is compared with the recorded one, and with the reply it answers.

Only the conversation is compared — the ``messages`` (Anthropic, Chat) or ``input`` items (Responses), and the
system prompt — never framework parameters (model, max_tokens, temperature, stream options, ``include``,
``store``, tool definitions, cache breakpoints). Both sides are first put in a canonical form:

1. Every string is normalised as pydantic-ai normalised its recorded bodies (typographic punctuation to ASCII,
   NFKC), on both sides.
2. Anthropic: a string ``content`` is one text block; consecutive messages of one role are one message (the API
   reads them as one turn); empty text blocks and ``cache_control`` are dropped; a ``tool_result`` whose
   content is text blocks only is that text.
3. Chat: consecutive ``assistant`` messages are one (texts joined, tool calls in order); text parts are their
   joined text, ``None`` content is ``""``; a leading ``<think>…</think>`` in an assistant text is reasoning
   (a raw reasoning format, or a framework's way of keeping it) and is removed on both sides — whether reasoning
   goes back is the round-trip rule's business; tool-call arguments are parsed JSON.
4. Responses: a string ``content`` is one text part; ``type`` defaults to ``message``; function-call
   arguments are parsed JSON.

Then, element by element and in order (block order counts): the same number of messages / items, the same
kind, and for every key the **recorded** element has, an equal value in hookloop's (keys only hookloop sends
are not errors: frameworks differ in optional fields; a recorded ``null`` is an absent key). This is how ids,
call ids, signatures, encrypted reasoning, redacted thinking data and server-tool blocks are compared wherever
the recording has them.

Round-trip rules, checked against the recorded *reply* rather than the recorded request (the next request
hookloop sends after a reply must carry it back):

- Anthropic: the assistant turn holds every block of the reply in order — text, ``thinking`` with its
  signature, ``redacted_thinking`` with its data, ``tool_use`` with id, name and input, and any other block
  (``server_tool_use``, ``*_tool_result``) verbatim, ``citations`` aside.
- Responses: every output item of the reply comes back in order with its ``id`` (issue 11 item 3), reasoning
  items with their ``encrypted_content``, messages with their ``phase`` when the reply had one, function
  calls with their ``call_id``.
- Chat: the assistant message carries the tool calls with their ids; for DeepSeek / Kimi / Qwen models it
  carries the reply's reasoning as ``reasoning_content`` (issue 11 item 5).
"""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.oracle import Reply
from conformance.recording import API, normalise

__all__ = ["canonical", "diff_conversation", "round_trip", "system_prompt"]

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
_REASONING_FAMILIES = re.compile(r"deepseek|kimi|moonshot|qwen|qwq", re.IGNORECASE)


def _args(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError:
            return value
    return value


def _texts(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def _anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        kept = []
        for raw_block in blocks:
            block: dict[str, Any] = {k: v for k, v in raw_block.items() if k != "cache_control"}
            if block.get("type") == "text" and not block.get("text"):
                continue
            if block.get("type") == "tool_result":
                body = block.get("content")
                if isinstance(body, list) and all(b.get("type") == "text" for b in body):
                    block["content"] = _texts(body)
                block.setdefault("is_error", False)
            if block.get("type") == "tool_use":
                block["input"] = _args(block.get("input", {}))
            kept.append(block)
        if not kept:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(kept)
        else:
            out.append({"role": message["role"], "content": kept})
    return out


def _chat(messages: list[dict[str, Any]], *, recorded: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        entry: dict[str, Any] = {"role": role, "content": _texts(message.get("content"))}
        if role == "assistant":
            entry["content"] = _THINK.sub("", entry["content"])
            entry["tool_calls"] = [
                {"id": c.get("id"), "name": c["function"]["name"], "arguments": _args(c["function"].get("arguments"))}
                for c in message.get("tool_calls") or ()
            ]
            if message.get("reasoning_content") is not None:
                entry["reasoning_content"] = message["reasoning_content"]
            if out and out[-1]["role"] == "assistant":
                last = out[-1]
                last["content"] += entry["content"]
                last["tool_calls"] += entry["tool_calls"]
                if "reasoning_content" in entry:
                    last["reasoning_content"] = last.get("reasoning_content", "") + entry["reasoning_content"]
                continue
        elif role == "tool":
            entry["tool_call_id"] = message.get("tool_call_id")
        out.append(entry)
    return out


def _responses(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        entry = dict(item)
        entry.setdefault("type", "message")
        if entry["type"] == "message":
            entry["content"] = _texts(entry.get("content"))
        elif entry["type"] == "function_call":
            entry["arguments"] = _args(entry.get("arguments"))
        elif entry["type"] == "function_call_output":
            entry["output"] = _texts(entry.get("output"))
        out.append(entry)
    return out


def canonical(api: API, request: dict[str, Any], *, recorded: bool) -> list[dict[str, Any]]:
    """The conversation of a request body in canonical form (see the module docstring)."""
    request = normalise(request)
    if api == "anthropic":
        return _anthropic(request.get("messages") or [])
    if api == "chat":
        return _chat(request.get("messages") or [], recorded=recorded)
    raw = request.get("input") or []
    return _responses([{"role": "user", "content": raw}] if isinstance(raw, str) else raw)


def system_prompt(api: API, request: dict[str, Any]) -> str | None:
    """The system prompt of a request (Anthropic ``system``, Chat leading system/developer message,
    Responses ``instructions``), normalised."""
    if api == "anthropic":
        system = request.get("system")
        text = system if isinstance(system, str) or system is None else _texts(system)
    elif api == "chat":
        messages = request.get("messages") or []
        first = messages[0] if messages else {}
        text = _texts(first.get("content")) if first.get("role") in ("system", "developer") else None
    else:
        text = request.get("instructions")
    return normalise(text) if text else None


def _label(element: dict[str, Any]) -> str:
    kind = element.get("type") or element.get("role")
    ident = element.get("id") or element.get("call_id") or element.get("tool_use_id") or element.get("tool_call_id")
    return f"{kind}{f' {ident}' if ident else ''}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 90 else text[:60] + f"…({len(text)} chars)"


def _subset(where: str, recorded: dict[str, Any], ours: dict[str, Any], ignore: frozenset[str]) -> list[str]:
    diffs = []
    for key, value in recorded.items():
        if key in ignore:
            continue
        if value is None and ours.get(key) is None:
            continue  # a null field is an absent one
        if key not in ours:
            diffs.append(f"{where}: {key} missing (recorded {_short(value)})")
        elif ours[key] != value:
            if isinstance(value, list) and isinstance(ours[key], list) and key == "content":
                diffs += _elements(f"{where}.content", value, ours[key], ignore)
            else:
                diffs.append(f"{where}: {key} differs: recorded {_short(value)}, hookloop {_short(ours[key])}")
    return diffs


def _elements(where: str, recorded: list[Any], ours: list[Any], ignore: frozenset[str] = frozenset()) -> list[str]:
    rec_kinds = [_label(e) for e in recorded]
    our_kinds = [_label(e) for e in ours]
    if [k.split(" ")[0] for k in rec_kinds] != [k.split(" ")[0] for k in our_kinds]:
        return [f"{where}: recorded [{', '.join(rec_kinds)}], hookloop [{', '.join(our_kinds)}]"]
    diffs: list[str] = []
    for n, (rec, our) in enumerate(zip(recorded, ours, strict=True)):
        diffs += _subset(f"{where}[{n}] {_label(rec)}", rec, our, ignore)
    return diffs


def diff_conversation(api: API, recorded: dict[str, Any], ours: dict[str, Any], where: str) -> list[str]:
    """Differences between a recorded request and hookloop's, under the rules of the module docstring."""
    diffs = []
    rec_system, our_system = system_prompt(api, recorded), system_prompt(api, ours)
    if rec_system != our_system:
        diffs.append(f"{where}: system prompt recorded {_short(rec_system)}, hookloop {_short(our_system)}")
    rec, our = canonical(api, recorded, recorded=True), canonical(api, ours, recorded=False)
    if api == "chat" and rec and rec[0]["role"] in ("system", "developer"):
        rec = rec[1:]
    if api == "chat" and our and our[0]["role"] == "system":
        our = our[1:]
    return diffs + _elements(where, rec, our)


def round_trip(api: API, reply: Reply, before: dict[str, Any], after: dict[str, Any], where: str) -> list[str]:
    """What the request ``after`` must carry back of ``reply``, the answer to request ``before``."""
    prior = len(canonical(api, before, recorded=False))
    following = canonical(api, after, recorded=False)
    if api == "chat" and (before.get("messages") or [{}])[0].get("role") == "system":
        pass  # system messages count on both sides alike
    if api == "anthropic":
        expected = _anthropic([{"role": "assistant", "content": [_sent_back(b) for b in reply.output]}])
        blocks: list[Any] = expected[0]["content"] if expected else []
        turn: dict[str, Any] = following[prior] if len(following) > prior else {"role": "none", "content": []}
        if turn["role"] != "assistant":
            return [f"{where}: no assistant turn after the request's messages (the reply was not sent back)"]
        sent: list[Any] = list(turn["content"][: len(blocks)])
        return _elements(f"{where} reply round-trip", blocks, sent, frozenset({"citations"}))
    if api == "responses":
        expected_items = _responses(
            [
                {k: v for k, v in item.items() if k in _KEEP.get(item.get("type", ""), ())}
                for item in reply.output
                if item.get("type") in _KEEP
            ]
        )
        expected_items = [e for e in expected_items if not (e["type"] == "message" and not e.get("content"))]
        sent_items = following[prior : prior + len(expected_items)]
        return _elements(f"{where} reply round-trip", normalise(expected_items), sent_items)
    turn = following[prior] if len(following) > prior else {"role": "none"}
    if turn["role"] != "assistant":
        return [f"{where}: no assistant message after the request's messages"]
    diffs = []
    want = [{"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
    if turn.get("tool_calls", []) != normalise(want):
        diffs.append(f"{where} reply round-trip: tool calls {_short(want)}, hookloop {_short(turn.get('tool_calls'))}")
    model = str(before.get("model", ""))
    if (
        reply.reasoning
        and _REASONING_FAMILIES.search(model)
        and turn.get("reasoning_content") != normalise(reply.reasoning[0])
    ):
        diffs.append(
            f"{where} reply round-trip: {model} wants its reasoning back as reasoning_content; hookloop sent "
            f"{_short(turn.get('reasoning_content'))}"
        )
    return diffs


# Anthropic: the keys of the reply's own blocks that must come back; any other block comes back whole.
_ANTHROPIC_KEEP: dict[str, tuple[str, ...]] = {
    "text": ("type", "text"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
    "tool_use": ("type", "id", "name", "input"),
}


def _sent_back(block: dict[str, Any]) -> dict[str, Any]:
    keep = _ANTHROPIC_KEEP.get(block.get("type", ""))
    return {k: v for k, v in block.items() if k in keep} if keep else block


# Per Responses output item type: the keys that must come back unchanged.
_KEEP: dict[str, tuple[str, ...]] = {
    "reasoning": ("type", "id", "encrypted_content"),
    "message": ("type", "id", "role", "content", "phase"),
    "function_call": ("type", "id", "call_id", "name", "arguments"),
}
