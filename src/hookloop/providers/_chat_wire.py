"""Pure mapping between hookloop history items and the OpenAI Chat Completions payload (both directions).

Items → wire (:func:`to_chat`): the system prompt is the first ``system`` message; consecutive assistant-side
items form one ``assistant`` message (its text — a string, or text parts when the reply had several text
blocks — and its ``tool_calls`` in order); each :class:`ToolResult` is one ``tool`` message right after it;
user and system messages map one to one (images as ``image_url`` parts). Chat Completions has no error flag
on tool results, so ``ToolResult.is_error`` is carried by the content alone (hookloop's error results say what
failed).

Tool results with images (``ToolResult.parts``): a ``tool`` message carries text only, so with ``tool_images``
(the default) the images go in one ``user`` message of ``image_url`` parts right after the run of tool
messages (a user message between them would break the call/result pairing), each named by its call id, and the
tool message says where its image went; without it (a model that takes no images) the tool message says the
image was omitted. Documents are always a placeholder saying they were omitted.

Reasoning: standard Chat Completions has no field for it, so :class:`Reasoning` items are left out — unless
``reasoning_field`` names the field a compatible server reads it back from (``reasoning_content`` for DeepSeek,
Kimi, Qwen, GLM; ``reasoning`` for OpenRouter). Then the text of the reasoning of ``reasoning_provider`` that
precedes an assistant message goes on that message — or, when the server streamed them, OpenRouter's
``reasoning_details`` (kept whole in the signature, see :func:`details_signature`), unchanged, instead.

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


def _tool_content(item: ToolResult, images: list[JSONDict] | None) -> str:
    """A tool message's text: the result's text, each image as a placeholder that says where it went (into
    ``images``, for the user message that follows the tool messages) or that it was omitted; documents as a
    placeholder saying they were omitted (Chat Completions has no portable document part)."""
    if not item.parts or all(isinstance(p, TextPart) for p in item.parts):
        return item.content
    lines: list[str] = []
    for part in item.parts:
        if isinstance(part, TextPart):
            lines.append(part.text)
        elif isinstance(part, ImagePart) and images is not None:
            if not images:
                images.append({"type": "text", "text": "Images returned by the tool results above, in order:"})
            images.append({"type": "text", "text": f"{part_placeholder(part)} from tool call {item.call_id}:"})
            images.append({"type": "image_url", "image_url": {"url": data_url(part)}})
            lines.append(f"{part_placeholder(part)} (sent in the user message after the tool results)")
        elif isinstance(part, ImagePart):
            lines.append(f"{part_placeholder(part)} (omitted: images are not sent to this model)")
        else:
            lines.append(f"{part_placeholder(part)} (omitted: not supported by this API)")
    return "\n".join(lines)


_DETAILS = "reasoning_details"


def details_signature(details: Sequence[Mapping[str, Any]]) -> str:
    """The Reasoning signature that carries OpenRouter's ``reasoning_details`` back unchanged."""
    return json.dumps({_DETAILS: list(details)}, separators=(",", ":"), ensure_ascii=False)


def _details(signature: str | None) -> list[Any] | None:
    if not signature or not signature.startswith('{"' + _DETAILS):
        return None
    try:
        value = json.loads(signature)
    except ValueError:
        return None
    details = value.get(_DETAILS) if isinstance(value, dict) else None
    return details if isinstance(details, list) else None


def to_chat(
    system: str | None,
    items: Sequence[Item],
    tools: Sequence[ToolSpec],
    *,
    reasoning_field: str | None = None,
    reasoning_provider: str | None = None,
    tool_images: bool = True,
) -> tuple[list[JSONDict], list[JSONDict]]:
    """(messages, tools) for ``chat.completions.create``; see the module docstring for the rules."""
    messages: list[JSONDict] = [{"role": "system", "content": system}] if system else []
    texts: list[str] = []
    calls: list[JSONDict] = []
    thoughts: list[str] = []
    details: list[Any] = []
    images: list[JSONDict] = []  # tool-result images for the user message after this run of tool messages

    def flush_images() -> None:
        if images:
            messages.append({"role": "user", "content": list(images)})
            images.clear()

    def flush() -> None:
        if not texts and not calls:
            thoughts.clear()
            details.clear()
            return
        message: JSONDict = {"role": "assistant"}
        if len(texts) == 1:
            message["content"] = texts[0]
        elif texts:
            message["content"] = [{"type": "text", "text": t} for t in texts]
        else:
            message["content"] = None
        if details:  # OpenRouter's own record of the reasoning (text, signatures, encrypted parts): it wins
            message[_DETAILS] = list(details)
        elif thoughts:
            message[reasoning_field or "reasoning_content"] = "\n\n".join(thoughts)
        thoughts.clear()
        details.clear()
        if calls:
            message["tool_calls"] = list(calls)
        messages.append(message)
        texts.clear()
        calls.clear()

    for item in items:
        if not isinstance(item, ToolResult):
            flush_images()
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
            content = _tool_content(item, images if tool_images else None)
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": content})
        elif isinstance(item, Reasoning):
            if reasoning_field is None or item.provider != reasoning_provider:
                continue
            if item.text:
                thoughts.append(item.text)
            kept = _details(item.signature)
            if kept:
                details.extend(kept)
        # a ProviderBlock: Chat Completions has no native blocks to send back
    flush()
    flush_images()
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


def from_chat(
    messages: Sequence[Mapping[str, Any]], *, reasoning_provider: str | None = None
) -> tuple[str | None, list[Item]]:
    """(system prompt, history items) from a Chat Completions payload (inverse of :func:`to_chat`; reasoning
    sent back in ``reasoning_content`` / ``reasoning`` / ``reasoning_details`` becomes a :class:`Reasoning`
    of ``reasoning_provider``)."""
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
            thought = message.get("reasoning_content") or message.get("reasoning")
            kept = message.get(_DETAILS)
            if thought or kept:
                items.append(
                    Reasoning(
                        text=thought if isinstance(thought, str) else "",
                        signature=details_signature(kept) if isinstance(kept, list) and kept else None,
                        provider=reasoning_provider,
                    )
                )
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
