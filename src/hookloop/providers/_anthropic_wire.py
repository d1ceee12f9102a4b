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

Provider-native blocks (:class:`~hookloop.items.ProviderBlock` of provider ``"anthropic"``: ``server_tool_use``,
``web_search_tool_result`` and every other ``*_tool_result``, any block type hookloop does not model) go back
exactly as they came, in their place among the assistant's blocks; other providers' blocks are skipped, and so
is a block claiming a type hookloop models itself (``tool_use``, ``tool_result``, ``thinking``, ``redacted_thinking``:
the client never makes one, so it was put there by hand).

Text with citations: the client keeps the text as a normal assistant :class:`Message` (hooks, ``Finished.text``
and the user see it as any other text) and, right after it, a ``ProviderBlock`` holding the whole native text
block (``{"type": "text", "text": …, "citations": [...]}``): a *citation overlay*. On the way back the overlay
replaces the text block of the Message just before it when their texts are the same; when that Message was
changed or removed (a hook, compaction) the overlay is dropped, so citations never go back for text that is not
in the history, and no text goes back that the history does not hold.

Tool results with content parts (``ToolResult.parts``) go back as Anthropic's native ``tool_result`` content:
``text`` blocks, ``image`` blocks (base64 JPEG/PNG/GIF/WebP, or a URL), ``document`` blocks (a base64 PDF, a
PDF by URL, or a ``text``-source document for ``text/*`` and JSON/XML/YAML files, decoded as UTF-8). A part
Anthropic does not take (another image or document type, undecodable text) goes as a text block with its
placeholder (:func:`hookloop.items.part_placeholder`) saying it was left out. User messages map their parts the
same way.

A ``tool_use`` block's ``caller`` other than the default ``direct`` (a call from Anthropic's code execution) is
kept in ``ToolCall.meta["anthropic_caller"]`` and goes back on the block.

Tool calls whose arguments were not a JSON object (``ToolCall.raw_arguments``) go back with an empty
``input`` (the API only takes objects); their error result quotes the raw text to the model.

Wire → items (:func:`from_anthropic`) inverts the mapping, for round-trip tests and for importing transcripts.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hookloop._frozen import EMPTY, freeze_object, thaw_object
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
    part_placeholder,
    parts_text,
)
from hookloop.providers._common import JSONDict
from hookloop.providers.base import ToolSpec

__all__: list[str] = []

PROVIDER = "anthropic"
"""Signatures are base64 and never contain ``:``, so this prefix cannot clash with a real one."""

CALLER_META = "anthropic_caller"
"""``ToolCall.meta`` key of a ``tool_use`` block's ``caller`` when it is not the default ``{"type": "direct"}``
(a call made from Anthropic's code execution): it goes back on the block."""

_EPHEMERAL: JSONDict = {"type": "ephemeral"}
_MODELLED = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
"""Block types hookloop models as its own items: a ProviderBlock claiming one is never sent (a ``tool_use`` there
would be a call without the exactly-one result the Worker guarantees; thinking must be the provider's signed
Reasoning)."""
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_PDF = "application/pdf"
_TEXT_DOCUMENTS = frozenset({"application/json", "application/xml", "application/yaml", "application/x-yaml"})


def _omitted(part: ImagePart | DocumentPart) -> JSONDict:
    return {"type": "text", "text": f"{part_placeholder(part)} (left out: Anthropic does not take this part)"}


def _image_block(part: ImagePart) -> JSONDict:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    if part.data is None or part.media_type.lower() not in _IMAGE_TYPES:
        return _omitted(part)
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type.lower(), "data": part.data}}


def _is_text_document(media_type: str) -> bool:
    kind = media_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind in _TEXT_DOCUMENTS or kind.endswith(("+json", "+xml"))


def _document_block(part: DocumentPart) -> JSONDict:
    media_type = part.media_type.split(";", 1)[0].strip().lower()
    source: JSONDict
    if part.url is not None and part.data is None:
        if media_type not in ("", _PDF):  # Anthropic fetches PDFs by URL, nothing else
            return _omitted(part)
        source = {"type": "url", "url": part.url}
    elif part.data is None:
        return _omitted(part)
    elif media_type == _PDF:
        source = {"type": "base64", "media_type": _PDF, "data": part.data}
    elif _is_text_document(media_type):
        try:
            text = base64.b64decode(part.data, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return _omitted(part)
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        return _omitted(part)
    block: JSONDict = {"type": "document", "source": source}
    if part.title:
        block["title"] = part.title
    return block


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


def _tool_result_block(item: ToolResult) -> JSONDict:
    content: str | list[JSONDict] = item.content
    if item.parts:
        content = _content_blocks(item.parts) or item.content
    result: JSONDict = {"type": "tool_result", "tool_use_id": item.call_id, "content": content}
    if item.is_error:
        result["is_error"] = True
    return result


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
            use: JSONDict = {
                "type": "tool_use",
                "id": item.call_id,
                "name": item.name,
                "input": thaw_object(item.arguments),
            }
            caller = item.meta.get(CALLER_META)
            if isinstance(caller, Mapping):
                use["caller"] = thaw_object(caller)
            new = [use]
        elif isinstance(item, ToolResult):
            item_role = "user"
            new = [_tool_result_block(item)]
        elif isinstance(item, ProviderBlock):
            if item.provider != PROVIDER:
                continue
            data = thaw_object(item.data)
            kind = data.get("type")
            if not isinstance(kind, str) or kind in _MODELLED:
                continue  # never a call, result or thinking outside hookloop's own bookkeeping
            if kind == "text":  # a citation overlay: only onto the same text just before it
                last = blocks[-1] if role == "assistant" and blocks else None
                if last is not None and last.get("type") == "text" and last.get("text") == data.get("text"):
                    last.update(data)
                continue
            item_role = "assistant"
            new = [data]
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
        if position < cache_prefix and not isinstance(item, ProviderBlock):  # native blocks keep their shape
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
        kind = block.get("type")
        source = block.get("source") or {}
        if kind == "text":
            parts.append(TextPart(text=block["text"]))
        elif kind == "image":
            if source.get("type") == "url":
                parts.append(ImagePart(media_type="", url=source["url"]))
            else:
                parts.append(ImagePart(media_type=source["media_type"], data=source["data"]))
        elif kind == "document":
            title = block.get("title")
            if source.get("type") == "url":
                parts.append(DocumentPart(media_type="", url=source["url"], title=title))
            elif source.get("type") == "text":
                data = base64.b64encode(source["data"].encode("utf-8")).decode("ascii")
                parts.append(DocumentPart(media_type=source.get("media_type", "text/plain"), data=data, title=title))
            else:
                parts.append(DocumentPart(media_type=source["media_type"], data=source["data"], title=title))
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
                parts: tuple[ContentPart, ...] = ()
                if isinstance(body, list):
                    parts = _parts(body)
                    body = parts_text(parts)
                    if all(isinstance(p, TextPart) for p in parts):
                        body, parts = "".join(p.text for p in parts if isinstance(p, TextPart)), ()
                call_id = block["tool_use_id"]
                items.append(
                    ToolResult(
                        call_id=call_id,
                        name=names.get(call_id, ""),
                        content=body,
                        is_error=bool(block.get("is_error", False)),
                        parts=parts,
                    )
                )
            elif role == "user":
                pending.append(block)
            elif kind == "text":
                items.append(Message.assistant(block["text"]))
                if block.get("citations"):
                    items.append(ProviderBlock(provider=PROVIDER, data=freeze_object(block)))
            elif kind == "thinking":
                items.append(Reasoning(text=block["thinking"], signature=block["signature"], provider=PROVIDER))
            elif kind == "redacted_thinking":
                items.append(Reasoning(text="", redacted=block["data"], provider=PROVIDER))
            elif kind == "tool_use":
                names[block["id"]] = block["name"]
                caller = block.get("caller")
                meta = freeze_object({CALLER_META: caller}) if caller and caller.get("type") != "direct" else EMPTY
                items.append(
                    ToolCall(
                        call_id=block["id"], name=block["name"], arguments=freeze_object(block["input"]), meta=meta
                    )
                )
            else:
                items.append(ProviderBlock(provider=PROVIDER, data=freeze_object(block)))
        _flush_user(items, pending)
    return items


def _flush_user(items: list[Item], pending: list[Mapping[str, Any]]) -> None:
    if pending:
        items.append(Message(role="user", content=_parts(list(pending))))
        pending.clear()
