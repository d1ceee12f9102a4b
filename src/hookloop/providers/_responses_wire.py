"""Pure mapping between hookloop history items and the OpenAI Responses API ``input`` (both directions).

Items → wire (:func:`to_responses`): the system prompt is ``instructions``; every item is one input item —
user/system messages (``input_text`` / ``input_image`` / ``input_file`` parts), assistant messages
(``output_text`` / ``refusal``), ``function_call`` (arguments text as the model wrote it),
``function_call_output`` (its text, or ``input_text`` / ``input_image`` / ``input_file`` parts for a result
with ``ToolResult.parts``), ``reasoning`` items, and this provider's :class:`ProviderBlock` data verbatim.

Identity: an item whose ``meta`` says this provider made it (``{"provider": …, "id": …}``, see
:mod:`hookloop.providers.openai_responses`) goes back as the output item it was — a message with its ``id``,
``status: completed``, ``phase`` and parts (consecutive messages with one id are one item again), a
``function_call`` with its ``id``. Items without it (hook-added messages, other providers' items) go back
plain. A reasoning item with nothing of the model's after it, or an OpenAI one (``rs_``) followed by an
assistant item that lost its id, is left out: the API would reject the whole request for it.

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
from dataclasses import replace
from typing import Any

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
    parts_text,
)
from hookloop.providers._chat_wire import parse_call
from hookloop.providers._common import JSONDict, arguments_json, data_url, parse_data_url
from hookloop.providers.base import ToolSpec

__all__: list[str] = []

PROVIDER = "openai-responses"


def reasoning_signature(item: Mapping[str, Any]) -> str:
    """The signature that carries a streamed reasoning item back to the API unchanged: the item as
    ``response.output_item.done`` delivered it (id, summary, content, ``encrypted_content``, status), less
    null fields (the API's input validation rejects a null where it expects an array)."""
    kept = {k: v for k, v in item.items() if v is not None}
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


def native(meta: Mapping[str, Any], provider: str) -> Mapping[str, Any] | None:
    """The native item fields (``id``, ``phase``, ``content``) this provider put in an item's meta, or None."""
    return meta if meta and meta.get("provider") == provider and isinstance(meta.get("id"), str) else None


def item_meta(provider: str, item_id: object, phase: object = None, content: str | None = None) -> JSONDict:
    """The item meta that carries a Responses output item's identity back (see the module docstring)."""
    meta: JSONDict = {"provider": provider}
    if isinstance(item_id, str) and item_id:
        meta["id"] = item_id
    if isinstance(phase, str) and phase:
        meta["phase"] = phase
    if content is not None:
        meta["content"] = content
    return meta


def _output_part(text: str, kind: object) -> JSONDict:
    if kind == "refusal":
        return {"type": "refusal", "refusal": text}
    return {"type": "output_text", "text": text, "annotations": []}


def _result_output(item: ToolResult) -> str | list[JSONDict]:
    """A tool result as ``function_call_output.output``: its text, or its parts (input_text / input_image /
    input_file) when it has rich ones."""
    if not item.parts or all(isinstance(p, TextPart) for p in item.parts):
        return item.content
    return _input_parts(item.parts)


def _keep_reasoning(out: list[JSONDict]) -> list[JSONDict]:
    """Leave out reasoning items the API would reject for want of their following item: one followed by no
    output item of the model (it ended the reply, or a user message comes next), or an OpenAI one (``rs_``)
    followed by an assistant item that lost its id (a message rebuilt by a hook or an interceptor) — the
    request then succeeds without that reasoning instead of failing with HTTP 400."""
    kept: list[JSONDict] = []
    for position, entry in enumerate(out):
        if entry.get("type") == "reasoning":
            following = next((e for e in out[position + 1 :] if e.get("type") != "reasoning"), None)
            if following is None or following.get("type") == "function_call_output":
                continue
            if following.get("type") == "message" and following.get("role") != "assistant":
                continue
            if str(entry.get("id", "")).startswith("rs_") and "id" not in following:
                continue
        kept.append(entry)
    return kept


def to_responses(
    system: str | None, items: Sequence[Item], tools: Sequence[ToolSpec], *, provider: str = PROVIDER
) -> tuple[str | None, list[JSONDict], list[JSONDict]]:
    """(instructions, input items, tools) for ``responses.create``."""
    out: list[JSONDict] = []
    for item in items:
        if isinstance(item, Message):
            if item.role == "assistant":
                if not item.text:
                    continue
                own = native(item.meta, provider)
                if own is None:
                    part = {"type": "output_text", "text": item.text}
                    out.append({"type": "message", "role": "assistant", "content": [part]})
                    continue
                part = _output_part(item.text, own.get("content"))
                last = out[-1] if out else None
                if last is not None and last.get("type") == "message" and last.get("id") == own["id"]:
                    last["content"].append(part)  # another content part of the same output message
                    continue
                message: JSONDict = {"type": "message", "role": "assistant", "id": own["id"], "status": "completed"}
                if "phase" in own:
                    message["phase"] = own["phase"]
                message["content"] = [part]
                out.append(message)
            else:
                out.append({"type": "message", "role": item.role, "content": _input_parts(item.content)})
        elif isinstance(item, ToolCall):
            call: JSONDict = {"type": "function_call", "call_id": item.call_id, "name": item.name}
            own = native(item.meta, provider)
            if own is not None:
                call["id"] = own["id"]
            call["arguments"] = arguments_json(item)
            out.append(call)
        elif isinstance(item, ToolResult):
            out.append({"type": "function_call_output", "call_id": item.call_id, "output": _result_output(item)})
        elif isinstance(item, ProviderBlock):
            if item.provider == provider:
                out.append(thaw_object(item.data))
        else:
            reasoning = _reasoning_item(item, provider)
            if reasoning is not None:
                out.append(reasoning)
    out = _keep_reasoning(out)
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
        elif kind == "refusal":
            parts.append(TextPart(text=part["refusal"]))
        elif kind == "input_image":
            image = parse_data_url(part["image_url"])
            parts.append(image if image.media_type or image.url else ImagePart(media_type="", url=part["image_url"]))
        elif kind == "input_file":
            url = part.get("file_url")
            if url:
                parts.append(DocumentPart(media_type="", url=url))
            else:
                head, _, data = str(part.get("file_data", "")).partition(";base64,")
                parts.append(DocumentPart(media_type=head.removeprefix("data:"), data=data, title=part.get("filename")))
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
            if role == "assistant" and "id" in entry:
                for part in entry["content"]:
                    meta = item_meta(provider, entry["id"], entry.get("phase"), part.get("type"))
                    if meta.get("content") == "output_text":
                        del meta["content"]
                    items.append(Message(role="assistant", content=_parts([part]), meta=freeze_object(meta)))
                continue
            items.append(Message(role="system" if role == "developer" else role, content=_parts(entry["content"])))
        elif kind == "function_call":
            names[entry["call_id"]] = entry["name"]
            call = parse_call(entry["call_id"], entry["name"], entry.get("arguments") or "")
            if "id" in entry:
                call = replace(call, meta=freeze_object(item_meta(provider, entry["id"])))
            items.append(call)
        elif kind == "function_call_output":
            call_id = entry["call_id"]
            output = entry["output"]
            if isinstance(output, str):
                items.append(ToolResult(call_id=call_id, name=names.get(call_id, ""), content=output))
            else:
                parts = _parts(output)
                items.append(
                    ToolResult(call_id=call_id, name=names.get(call_id, ""), content=parts_text(parts), parts=parts)
                )
        elif kind == "reasoning":
            items.append(Reasoning(text=reasoning_text(entry), signature=reasoning_signature(entry), provider=provider))
        else:
            items.append(ProviderBlock(provider=provider, data=freeze_object(dict(entry))))
    return instructions, items
