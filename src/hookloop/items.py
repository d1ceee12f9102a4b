"""History items: the immutable entries of a conversation.

Every item is a frozen, slotted, keyword-only dataclass with a stable ``id``. ``item.to_json()`` and
:func:`item_from_json` round-trip exactly (``item_from_json(json.loads(json.dumps(i.to_json()))) == i``).

The history is a flat sequence: an assistant reply is an assistant :class:`Message` (its text) followed by
zero or more :class:`Reasoning` blocks and :class:`ToolCall` items; each tool call is answered by exactly one
:class:`ToolResult` with the same ``call_id``. Provider clients group items into their wire messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from hookloop._frozen import EMPTY, FrozenDict, JSONValue, freeze_object, thaw_object
from hookloop.errors import ItemError

__all__ = [
    "ContentPart",
    "ImagePart",
    "Item",
    "Message",
    "Reasoning",
    "Role",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "item_from_json",
    "new_id",
]

Role: TypeAlias = Literal["system", "user", "assistant"]


def new_id(prefix: str) -> str:
    """A fresh, globally unique id such as ``item_3f9a…`` (96 random bits)."""
    return f"{prefix}_{os.urandom(12).hex()}"


def _item_id() -> str:
    return new_id("item")


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Plain text content."""

    text: str

    def to_json(self) -> dict[str, JSONValue]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """An image, inline (base64 ``data``) or by ``url``."""

    media_type: str
    data: str | None = None
    url: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        return {"type": "image", "media_type": self.media_type, "data": self.data, "url": self.url}


ContentPart: TypeAlias = TextPart | ImagePart


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A system, user or assistant message.

    ``meta`` holds provenance, e.g. ``{"source": "hook", "hook": "my_hook"}`` for context a hook added.
    """

    role: Role
    content: tuple[ContentPart, ...]
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = EMPTY

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        parts = self.content
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            return parts[0].text
        return "".join(p.text for p in parts if isinstance(p, TextPart))

    @classmethod
    def user(cls, text: str, *, meta: Mapping[str, object] | None = None) -> Message:
        return cls(role="user", content=(TextPart(text=text),), meta=freeze_object(meta) if meta else EMPTY)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=(TextPart(text=text),))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(role="assistant", content=(TextPart(text=text),))

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "message",
            "id": self.id,
            "role": self.role,
            "content": [p.to_json() for p in self.content],
            "meta": thaw_object(self.meta),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """The model asked to call tool ``name`` with ``arguments``.

    ``raw_arguments`` keeps the model's text when it was not a valid JSON object (``arguments`` is then
    empty and the call is answered with an error result). ``meta`` records provenance such as the hook
    whose declared edit replaced the arguments (``{"input_edited_by": "hook name"}``).
    """

    call_id: str
    name: str
    arguments: FrozenDict = EMPTY
    raw_arguments: str | None = None
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = EMPTY

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "tool_call",
            "id": self.id,
            "call_id": self.call_id,
            "name": self.name,
            "arguments": thaw_object(self.arguments),
            "raw_arguments": self.raw_arguments,
            "meta": thaw_object(self.meta),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The answer to the tool call with the same ``call_id`` (exactly one per call)."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = EMPTY

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "tool_result",
            "id": self.id,
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
            "meta": thaw_object(self.meta),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """A reasoning ("thinking") block, with the provider's ``signature`` to send back unchanged.

    ``redacted`` holds opaque encrypted reasoning some providers return instead of text.
    """

    text: str
    signature: str | None = None
    provider: str | None = None
    redacted: str | None = None
    id: str = field(default_factory=_item_id)

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "reasoning",
            "id": self.id,
            "text": self.text,
            "signature": self.signature,
            "provider": self.provider,
            "redacted": self.redacted,
        }


Item: TypeAlias = Message | ToolCall | ToolResult | Reasoning


# -- parsing -------------------------------------------------------------------------------------------


def _str(data: Mapping[str, object], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ItemError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return value


def _opt_str(data: Mapping[str, object], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ItemError(f"{where}.{key}: expected a string or null, got {type(value).__name__}")
    return value


def _obj(data: Mapping[str, object], key: str, where: str) -> FrozenDict:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ItemError(f"{where}.{key}: expected an object, got {type(value).__name__}")
    try:
        return freeze_object(value) if value else EMPTY
    except TypeError as exc:
        raise ItemError(f"{where}.{key}: {exc}") from exc


def _part(data: object, where: str) -> ContentPart:
    if not isinstance(data, Mapping):
        raise ItemError(f"{where}: expected an object, got {type(data).__name__}")
    kind = data.get("type")
    if kind == "text":
        return TextPart(text=_str(data, "text", where))
    if kind == "image":
        return ImagePart(
            media_type=_str(data, "media_type", where),
            data=_opt_str(data, "data", where),
            url=_opt_str(data, "url", where),
        )
    raise ItemError(f"{where}.type: unknown content part type {kind!r}")


def item_from_json(data: object, *, where: str = "item") -> Item:
    """Rebuild an item from ``item.to_json()`` output; raises `ItemError` naming the bad field."""
    if not isinstance(data, Mapping):
        raise ItemError(f"{where}: expected an object, got {type(data).__name__}")
    kind = data.get("type")
    item_id = _str(data, "id", where)
    if kind == "message":
        role = data.get("role")
        if role not in ("system", "user", "assistant"):
            raise ItemError(f"{where}.role: expected system, user or assistant, got {role!r}")
        content = data.get("content")
        if not isinstance(content, list):
            raise ItemError(f"{where}.content: expected a list")
        return Message(
            role=role,
            content=tuple(_part(p, f"{where}.content[{i}]") for i, p in enumerate(content)),
            id=item_id,
            meta=_obj(data, "meta", where),
        )
    if kind == "tool_call":
        return ToolCall(
            call_id=_str(data, "call_id", where),
            name=_str(data, "name", where),
            arguments=_obj(data, "arguments", where),
            raw_arguments=_opt_str(data, "raw_arguments", where),
            id=item_id,
            meta=_obj(data, "meta", where),
        )
    if kind == "tool_result":
        is_error = data.get("is_error", False)
        if not isinstance(is_error, bool):
            raise ItemError(f"{where}.is_error: expected a boolean")
        return ToolResult(
            call_id=_str(data, "call_id", where),
            name=_str(data, "name", where),
            content=_str(data, "content", where),
            is_error=is_error,
            id=item_id,
            meta=_obj(data, "meta", where),
        )
    if kind == "reasoning":
        return Reasoning(
            text=_str(data, "text", where),
            signature=_opt_str(data, "signature", where),
            provider=_opt_str(data, "provider", where),
            redacted=_opt_str(data, "redacted", where),
            id=item_id,
        )
    raise ItemError(f"{where}.type: unknown item type {kind!r}")
