"""Pure mapping between hookloop history items and the OpenAI Responses API ``input`` (both directions).

Items → wire (:func:`to_responses`): the system prompt is ``instructions``; every item is one input item —
user/system messages (``input_text`` / ``input_image`` parts), assistant messages (``output_text``),
``function_call`` (arguments text as the model wrote it), ``function_call_output``, and ``reasoning`` items.

Reasoning: the Worker builds :class:`Reasoning` from stream events (text + signature). The client streams a
reasoning item's summary (or reasoning text) as thinking text and, when the item is done, the whole item as
JSON in the signature. That JSON is sent back unchanged (id, summary, ``encrypted_content``), which is what a
stateless (``store=False``) conversation with a reasoning model needs. Reasoning from another provider, or
without that signature, is left out. ``ToolResult.is_error`` has no wire field; the content carries it.

Wire → items (:func:`from_responses`) inverts the mapping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hookloop._frozen import thaw_object
from hookloop.items import (
    ContentPart,
    ImagePart,
    Item,
    Message,
    ProviderBlock,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResult,
)
from hookloop.providers._chat_wire import parse_call
from hookloop.providers._common import JSONDict, arguments_json, data_url, parse_data_url
from hookloop.providers.base import ToolSpec

__all__: list[str] = []

PROVIDER = "openai-responses"


def reasoning_signature(item: Mapping[str, Any]) -> str:
    """The signature that carries a streamed reasoning item back to the API unchanged."""
    kept = {k: item[k] for k in ("type", "id", "summary", "content", "encrypted_content") if item.get(k) is not None}
    kept.setdefault("summary", [])
    return json.dumps(kept, separators=(",", ":"), ensure_ascii=False)


def reasoning_text(item: Mapping[str, Any]) -> str:
    """The readable text of a reasoning item: its summary parts, else its reasoning text."""
    parts = item.get("summary") or item.get("content") or ()
    return "\n\n".join(p.get("text", "") for p in parts)


def _reasoning_item(item: Reasoning, provider: str) -> JSONDict | None:
    if item.provider not in (None, provider) or not item.signature:
        return None
    try:
        value = json.loads(item.signature)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("type") != "reasoning" or "id" not in value:
        return None
    return value


def _input_parts(parts: Sequence[ContentPart]) -> list[JSONDict]:
    out: list[JSONDict] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append({"type": "input_image", "image_url": data_url(part), "detail": "auto"})
        elif part.url is not None:
            out.append({"type": "input_file", "file_url": part.url})
        else:
            file: JSONDict = {"type": "input_file", "file_data": f"data:{part.media_type};base64,{part.data or ''}"}
            file["filename"] = part.title or "document"
            out.append(file)
    return out


def to_responses(
    system: str | None, items: Sequence[Item], tools: Sequence[ToolSpec], *, provider: str = PROVIDER
) -> tuple[str | None, list[JSONDict], list[JSONDict]]:
    """(instructions, input items, tools) for ``responses.create``."""
    out: list[JSONDict] = []
    for item in items:
        if isinstance(item, Message):
            if item.role == "assistant":
                if item.text:
                    out.append(
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": item.text}],
                        }
                    )
            else:
                out.append({"type": "message", "role": item.role, "content": _input_parts(item.content)})
        elif isinstance(item, ToolCall):
            out.append(
                {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": arguments_json(item)}
            )
        elif isinstance(item, ToolResult):
            out.append({"type": "function_call_output", "call_id": item.call_id, "output": item.content})
        elif isinstance(item, ProviderBlock):
            if item.provider == provider:
                out.append(thaw_object(item.data))
        else:
            reasoning = _reasoning_item(item, provider)
            if reasoning is not None:
                out.append(reasoning)
    tool_params: list[JSONDict] = [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": thaw_object(t.input_schema),
            "strict": False,
        }
        for t in tools
    ]
    return system, out, tool_params


def _parts(content: object) -> tuple[ContentPart, ...]:
    if isinstance(content, str):
        return (TextPart(text=content),)
    parts: list[ContentPart] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextPart(text=part["text"]))
        elif kind == "input_image":
            image = parse_data_url(part["image_url"])
            parts.append(image if image.media_type or image.url else ImagePart(media_type="", url=part["image_url"]))
    return tuple(parts)


def from_responses(
    instructions: str | None, input_items: Sequence[Mapping[str, Any]], *, provider: str = PROVIDER
) -> tuple[str | None, list[Item]]:
    """(system prompt, history items) from a Responses ``input`` list (inverse of :func:`to_responses`)."""
    items: list[Item] = []
    names: dict[str, str] = {}
    for entry in input_items:
        kind = entry.get("type", "message")
        if kind == "message":
            role = entry["role"]
            items.append(Message(role="system" if role == "developer" else role, content=_parts(entry["content"])))
        elif kind == "function_call":
            names[entry["call_id"]] = entry["name"]
            items.append(parse_call(entry["call_id"], entry["name"], entry.get("arguments") or ""))
        elif kind == "function_call_output":
            call_id = entry["call_id"]
            output = entry["output"]
            text = output if isinstance(output, str) else "".join(p.get("text", "") for p in output)
            items.append(ToolResult(call_id=call_id, name=names.get(call_id, ""), content=text))
        elif kind == "reasoning":
            items.append(Reasoning(text=reasoning_text(entry), signature=reasoning_signature(entry), provider=provider))
    return instructions, items
