"""Pure mapping between hookloop history items and the OpenAI Chat Completions payload (both directions).

Items → wire (:func:`to_chat`): the system prompt is the first ``system`` message; consecutive assistant-side
items form one ``assistant`` message (its text — a string, or text parts when the reply had several text
blocks — and its ``tool_calls`` in order); each :class:`ToolResult` is one ``tool`` message right after it;
user and system messages map one to one (images as ``image_url`` parts). Chat Completions has no way to send
reasoning back, so :class:`Reasoning` items are left out, and no error flag on tool results, so
``ToolResult.is_error`` is carried by the content alone (hookloop's error results say what failed).

Wire → items (:func:`from_chat`) inverts the mapping (tool result names come from their calls).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hookloop._frozen import freeze_object, thaw_object
from hookloop.items import (
    ContentPart,
    ImagePart,
    Item,
    Message,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResult,
    part_placeholder,
)
from hookloop.providers._common import JSONDict, arguments_json, data_url, parse_data_url
from hookloop.providers.base import ToolSpec

__all__: list[str] = []


def _user_content(parts: Sequence[ContentPart]) -> str | list[JSONDict]:
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    out: list[JSONDict] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append({"type": "image_url", "image_url": {"url": data_url(part)}})
        else:  # Chat Completions has no portable document part
            out.append({"type": "text", "text": f"{part_placeholder(part)} (omitted: not supported by this API)"})
    return out


def to_chat(
    system: str | None, items: Sequence[Item], tools: Sequence[ToolSpec]
) -> tuple[list[JSONDict], list[JSONDict]]:
    """(messages, tools) for ``chat.completions.create``; see the module docstring for the rules."""
    messages: list[JSONDict] = [{"role": "system", "content": system}] if system else []
    texts: list[str] = []
    calls: list[JSONDict] = []

    def flush() -> None:
        if not texts and not calls:
            return
        message: JSONDict = {"role": "assistant"}
        if len(texts) == 1:
            message["content"] = texts[0]
        elif texts:
            message["content"] = [{"type": "text", "text": t} for t in texts]
        else:
            message["content"] = None
        if calls:
            message["tool_calls"] = list(calls)
        messages.append(message)
        texts.clear()
        calls.clear()

    for item in items:
        if isinstance(item, Message):
            if item.role == "assistant":
                if item.text:
                    texts.append(item.text)
                continue
            flush()
            content = _user_content(item.content)
            messages.append({"role": item.role, "content": content})
        elif isinstance(item, ToolCall):
            calls.append(
                {
                    "id": item.call_id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": arguments_json(item)},
                }
            )
        elif isinstance(item, ToolResult):
            flush()
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.content})
        else:
            assert isinstance(item, Reasoning)
    flush()
    tool_params: list[JSONDict] = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": thaw_object(t.input_schema)},
        }
        for t in tools
    ]
    return messages, tool_params


def _parts(content: object) -> tuple[ContentPart, ...]:
    if isinstance(content, str):
        return (TextPart(text=content),)
    parts: list[ContentPart] = []
    for part in content if isinstance(content, list) else []:
        if part["type"] == "text":
            parts.append(TextPart(text=part["text"]))
        elif part["type"] == "image_url":
            parts.append(parse_data_url(part["image_url"]["url"]))
    return tuple(parts)


def from_chat(messages: Sequence[Mapping[str, Any]]) -> tuple[str | None, list[Item]]:
    """(system prompt, history items) from a Chat Completions payload (inverse of :func:`to_chat`)."""
    system: str | None = None
    items: list[Item] = []
    names: dict[str, str] = {}
    for position, message in enumerate(messages):
        role = message["role"]
        content = message.get("content")
        if role == "system" and position == 0 and isinstance(content, str):
            system = content
        elif role in ("system", "user", "developer"):
            items.append(Message(role="system" if role == "developer" else role, content=_parts(content)))
        elif role == "assistant":
            if isinstance(content, str):
                items.append(Message.assistant(content))
            elif isinstance(content, list):
                items.extend(Message.assistant(p["text"]) for p in content if p.get("type") == "text")
            for call in message.get("tool_calls") or ():
                function = call["function"]
                names[call["id"]] = function["name"]
                raw = function.get("arguments") or ""
                items.append(parse_call(call["id"], function["name"], raw))
        elif role == "tool":
            call_id = message["tool_call_id"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or ())
            items.append(ToolResult(call_id=call_id, name=names.get(call_id, ""), content=text))
    return system, items


def parse_call(call_id: str, name: str, raw: str) -> ToolCall:
    """A ToolCall from its JSON arguments text (kept raw when it is not a JSON object)."""
    if not raw.strip():
        return ToolCall(call_id=call_id, name=name)
    try:
        value = json.loads(raw)
    except ValueError:
        return ToolCall(call_id=call_id, name=name, raw_arguments=raw)
    if not isinstance(value, dict):
        return ToolCall(call_id=call_id, name=name, raw_arguments=raw)
    return ToolCall(call_id=call_id, name=name, arguments=freeze_object(value))
