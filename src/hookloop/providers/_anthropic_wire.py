"""Pure mapping between hookloop history items and the Anthropic Messages API payload (both directions).

Items → wire (:func:`to_anthropic`): consecutive assistant-side items (assistant messages, reasoning, tool calls)
form one ``assistant`` message of ``thinking``/``redacted_thinking``, ``text`` and ``tool_use`` blocks, in history
order; consecutive user-side items (user messages, tool results) form one ``user`` message whose
``tool_result`` blocks come first (the API requires it). System messages in the history join the ``system``
blocks after the Worker's system prompt. Reasoning from another provider, or without a signature, is dropped:
Anthropic only accepts thinking it signed.

Prompt caching: a ``cache_control`` breakpoint on the system prompt (on the last tool when there is no system
prompt) — it caches tools + system — and one on the last cacheable block of the CacheLocked prefix
(``request.cache_prefix`` items). Thinking blocks cannot carry a breakpoint, so it moves back to the block
before. Two breakpoints of the four Anthropic allows.

Redacted thinking: the client streams a ``redacted_thinking`` block as ``ThinkingDelta(redacted=data)``; the
Worker keeps it in ``Reasoning.redacted`` and it is sent back as the same ``redacted_thinking`` block, unchanged.

Tool calls whose arguments were not a JSON object (``ToolCall.raw_arguments``) go back with an empty
``input`` (the API only takes objects); their error result quotes the raw text to the model.

Wire → items (:func:`from_anthropic`) inverts the mapping, for round-trip tests and for importing transcripts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hookloop._frozen import freeze_object, thaw_object
from hookloop.items import (
    ContentPart,
    DocumentPart,
    ImagePart,
    Item,
    Message,
    ProviderBlock,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResult,
)
from hookloop.providers._common import JSONDict
from hookloop.providers.base import ToolSpec

__all__: list[str] = []

PROVIDER = "anthropic"
"""Signatures are base64 and never contain ``:``, so this prefix cannot clash with a real one."""

_EPHEMERAL: JSONDict = {"type": "ephemeral"}
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


def _image_block(part: ImagePart) -> JSONDict:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type, "data": part.data or ""}}


def _content_blocks(parts: Sequence[ContentPart]) -> list[JSONDict]:
    blocks: list[JSONDict] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_image_block(part))
        else:
            blocks.append(_document_block(part))
    return blocks


def _document_block(part: DocumentPart) -> JSONDict:
    if part.url is not None:
        source: JSONDict = {"type": "url", "url": part.url}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": part.data or ""}
    block: JSONDict = {"type": "document", "source": source}
    if part.title:
        block["title"] = part.title
    return block


def _reasoning_block(item: Reasoning) -> JSONDict | None:
    if item.provider not in (None, PROVIDER):
        return None
    if item.redacted is not None:
        return {"type": "redacted_thinking", "data": item.redacted}
    signature = item.signature
    if signature is None:
        return None
    return {"type": "thinking", "thinking": item.text, "signature": signature}


def to_anthropic(
    system: str | None,
    items: Sequence[Item],
    tools: Sequence[ToolSpec],
    *,
    cache_prefix: int = 0,
    caching: bool = True,
) -> tuple[list[JSONDict], list[JSONDict], list[JSONDict]]:
    """(system blocks, messages, tools) for ``messages.create``; see the module docstring for the rules."""
    system_blocks: list[JSONDict] = [{"type": "text", "text": system}] if system else []
    messages: list[JSONDict] = []
    role: Literal["user", "assistant"] | None = None
    blocks: list[JSONDict] = []
    leading_results = 0  # tool_result blocks at the head of the current user message
    prefix_block: JSONDict | None = None  # last cacheable block of the CacheLocked prefix

    def flush() -> None:
        nonlocal blocks, leading_results
        if role is not None and blocks:
            messages.append({"role": role, "content": blocks})
        blocks = []
        leading_results = 0

    for position, item in enumerate(items):
        new: list[JSONDict]
        item_role: Literal["user", "assistant"]
        if isinstance(item, Message):
            if item.role == "system":
                system_blocks.append({"type": "text", "text": item.text})
                continue
            item_role = item.role
            new = _content_blocks(item.content)
        elif isinstance(item, ToolCall):
            item_role = "assistant"
            new = [{"type": "tool_use", "id": item.call_id, "name": item.name, "input": thaw_object(item.arguments)}]
        elif isinstance(item, ToolResult):
            item_role = "user"
            result: JSONDict = {"type": "tool_result", "tool_use_id": item.call_id, "content": item.content}
            if item.is_error:
                result["is_error"] = True
            new = [result]
        elif isinstance(item, ProviderBlock):
            item_role = "assistant"
            new = [thaw_object(item.data)] if item.provider == PROVIDER else []
        else:
            block = _reasoning_block(item)
            item_role = "assistant"
            new = [block] if block is not None else []
        if not new:
            continue
        if item_role != role:
            flush()
            role = item_role
        if isinstance(item, ToolResult):
            blocks.insert(leading_results, new[0])
            leading_results += 1
        else:
            blocks.extend(new)
        if position < cache_prefix:
            for block in reversed(new):
                if block["type"] not in _UNCACHEABLE:
                    prefix_block = block
                    break
    flush()

    tool_params: list[JSONDict] = [
        {"name": t.name, "description": t.description, "input_schema": thaw_object(t.input_schema)} for t in tools
    ]
    if caching:
        if system_blocks:
            system_blocks[0]["cache_control"] = _EPHEMERAL
        elif tool_params:
            tool_params[-1]["cache_control"] = _EPHEMERAL
        if prefix_block is not None:
            prefix_block["cache_control"] = _EPHEMERAL
    return system_blocks, messages, tool_params


# -- wire → items ----------------------------------------------------------------------------------------


def _parts(content: object) -> tuple[ContentPart, ...]:
    if isinstance(content, str):
        return (TextPart(text=content),)
    parts: list[ContentPart] = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            parts.append(TextPart(text=block["text"]))
        elif block.get("type") == "image":
            source = block["source"]
            if source.get("type") == "url":
                parts.append(ImagePart(media_type="", url=source["url"]))
            else:
                parts.append(ImagePart(media_type=source["media_type"], data=source["data"]))
    return tuple(parts)


def from_anthropic(system: object, messages: Sequence[Mapping[str, Any]]) -> list[Item]:
    """History items from a Messages API payload (inverse of :func:`to_anthropic`, ids aside).

    System blocks after the first become system :class:`Message` items at the head of the history.
    """
    items: list[Item] = []
    if isinstance(system, list):
        items.extend(Message.system(block["text"]) for block in system[1:])
    names: dict[str, str] = {}
    for message in messages:
        role = message["role"]
        content = message["content"]
        if isinstance(content, str):
            items.append(Message(role=role, content=(TextPart(text=content),)))
            continue
        pending: list[Mapping[str, Any]] = []  # user text/image blocks after the tool results
        for block in content:
            kind = block["type"]
            if kind == "tool_result":
                _flush_user(items, pending)
                body = block.get("content", "")
                if isinstance(body, list):
                    body = "".join(b.get("text", "") for b in body)
                call_id = block["tool_use_id"]
                items.append(
                    ToolResult(
                        call_id=call_id,
                        name=names.get(call_id, ""),
                        content=body,
                        is_error=bool(block.get("is_error", False)),
                    )
                )
            elif role == "user":
                pending.append(block)
            elif kind == "text":
                items.append(Message.assistant(block["text"]))
            elif kind == "thinking":
                items.append(Reasoning(text=block["thinking"], signature=block["signature"], provider=PROVIDER))
            elif kind == "redacted_thinking":
                items.append(Reasoning(text="", redacted=block["data"], provider=PROVIDER))
            elif kind == "tool_use":
                names[block["id"]] = block["name"]
                items.append(ToolCall(call_id=block["id"], name=block["name"], arguments=freeze_object(block["input"])))
        _flush_user(items, pending)
    return items


def _flush_user(items: list[Item], pending: list[Mapping[str, Any]]) -> None:
    if pending:
        items.append(Message(role="user", content=_parts(list(pending))))
        pending.clear()
