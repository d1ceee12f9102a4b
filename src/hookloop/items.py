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
from typing import Any, Literal, TypeAlias

from hookloop._frozen import EMPTY, FrozenDict, JSONValue, empty, freeze_object, plain_str, thaw_object
from hookloop.errors import ItemError

__all__ = [
    "ContentPart",
    "DocumentPart",
    "ImagePart",
    "Item",
    "Message",
    "ProviderBlock",
    "Reasoning",
    "Role",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "item_from_json",
    "new_id",
    "part_placeholder",
    "parts_text",
]

Role: TypeAlias = Literal["system", "user", "assistant"]


def new_id(prefix: str) -> str:
    """A fresh, globally unique id such as ``item_3f9a…`` (96 random bits)."""
    return f"{prefix}_{os.urandom(12).hex()}"


_SPARE_IDS: list[str] = []
"""Item ids drawn ahead, 256 from one ``os.urandom`` call (``list.pop`` is atomic, so threads never share
one; a forked child drops the parent's)."""
os.register_at_fork(after_in_child=_SPARE_IDS.clear)


def _item_id() -> str:
    """``new_id("item")``, without a system call per item."""
    try:
        return _SPARE_IDS.pop()
    except IndexError:
        block = os.urandom(12 * 256).hex()
        _SPARE_IDS.extend(["item_" + block[i : i + 24] for i in range(0, len(block), 24)])
        return _SPARE_IDS.pop()


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


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentPart:
    """A file for the model (a PDF, a text file, …), inline (base64 ``data``) or by ``url``; ``title`` names it.

    Providers that take documents get them natively; others get a text placeholder that says one was omitted.
    """

    media_type: str
    data: str | None = None
    url: str | None = None
    title: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "document",
            "media_type": self.media_type,
            "data": self.data,
            "url": self.url,
            "title": self.title,
        }


ContentPart: TypeAlias = TextPart | ImagePart | DocumentPart


def base64_size(data: str) -> int:
    """How many bytes the base64 text ``data`` decodes to (without decoding it)."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def part_placeholder(part: ContentPart) -> str:
    """The text rendering of a content part: its text, or a short bracketed note such as ``[image: image/png,
    1234 bytes]`` (what hooks and text-only providers see in place of a non-text part)."""
    if isinstance(part, TextPart):
        return part.text
    kind = "image" if isinstance(part, ImagePart) else "document"
    title = f" {part.title!r}" if isinstance(part, DocumentPart) and part.title else ""
    if part.data is not None:
        return f"[{kind}{title}: {part.media_type}, {base64_size(part.data)} bytes]"
    return f"[{kind}{title}: {part.media_type}, {part.url}]"


def parts_text(parts: tuple[ContentPart, ...] | list[ContentPart]) -> str:
    """The text rendering of several parts (see :func:`part_placeholder`), joined with newlines."""
    return "\n".join(part_placeholder(p) for p in parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A system, user or assistant message.

    ``meta`` holds provenance, e.g. ``{"source": "hook", "hook": "my_hook"}`` for context a hook added.
    """

    role: Role
    content: tuple[ContentPart, ...]
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = field(default_factory=empty)

    def __hash__(self) -> int:
        return hash((Message, self.id))

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
    arguments: FrozenDict = field(default_factory=empty)
    raw_arguments: str | None = None
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = field(default_factory=empty)

    def __hash__(self) -> int:
        return hash((ToolCall, self.id))

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
    """The answer to the tool call with the same ``call_id`` (exactly one per call).

    ``content`` is the result as text: what hooks, command hooks and text-only providers see. ``parts``, when
    not empty, is the full result for the model (text, images, documents, in order); ``content`` is then its
    text rendering (:func:`parts_text`). A hook that replaces ``content`` replaces the whole result (``parts``
    is dropped), so what the model gets is never something no hook saw.
    """

    call_id: str
    name: str
    content: str
    is_error: bool = False
    id: str = field(default_factory=_item_id)
    meta: FrozenDict = field(default_factory=empty)
    parts: tuple[ContentPart, ...] = ()

    def __hash__(self) -> int:
        return hash((ToolResult, self.id))

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "tool_result",
            "id": self.id,
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
            "meta": thaw_object(self.meta),
            "parts": [p.to_json() for p in self.parts],
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
    meta: FrozenDict = field(default_factory=empty)

    def __hash__(self) -> int:
        return hash((Reasoning, self.id))

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "type": "reasoning",
            "id": self.id,
            "text": self.text,
            "signature": self.signature,
            "provider": self.provider,
            "redacted": self.redacted,
            "meta": thaw_object(self.meta),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderBlock:
    """A provider-native block kept verbatim: Anthropic ``server_tool_use`` / ``*_tool_result`` blocks, text
    with citations, Responses built-in tool items, anything a provider needs back unchanged.

    It sits in the history where it came in the reply, among the assistant's items. The client whose
    ``provider`` name matches sends ``data`` back unchanged in the same place on the next request; other clients
    skip it. Hooks see it but cannot change it (``data`` is read-only).
    """

    provider: str
    data: FrozenDict
    id: str = field(default_factory=_item_id)

    def __hash__(self) -> int:
        return hash((ProviderBlock, self.id))

    def to_json(self) -> dict[str, JSONValue]:
        return {"type": "provider_block", "id": self.id, "provider": self.provider, "data": thaw_object(self.data)}


Item: TypeAlias = Message | ToolCall | ToolResult | Reasoning | ProviderBlock


# -- isolation -----------------------------------------------------------------------------------------
#
# Items are frozen dataclasses, but ``object.__setattr__`` (or a slot descriptor, or ``__class__`` assignment)
# still writes through any Python object. So the Worker never hands out the items it holds: hooks and timeline
# subscribers get `detached` copies, and items that come in from outside (a hook's ContinueWithMessages, a
# caller's prompt) are `adopt`-ed into fresh, exact objects before they enter the history. What both share with
# the original are immutable built-in leaves only: str, int, bool, None, tuples and FrozenDict.


def slot_builder(cls: type) -> type:
    """A plain class with exactly ``cls``'s slots (a slotted dataclass): an instance is filled with ordinary
    attribute stores, then becomes a ``cls`` by ``__class__`` assignment (same layout, so CPython allows it) —
    several times cheaper than a frozen ``__init__`` (one ``object.__setattr__`` a field) or slot setters."""
    builder = type(f"_{cls.__name__}Builder", (), {"__slots__": cls.__dict__["__slots__"], "__module__": __name__})
    probe = builder()
    probe.__class__ = cls  # TypeError here (at import) if the layouts ever differ
    return builder


_CallBuilder, _ResultBuilder, _MessageBuilder, _TextBuilder, _ReasoningBuilder, _BlockBuilder = (
    slot_builder(cls) for cls in (ToolCall, ToolResult, Message, TextPart, Reasoning, ProviderBlock)
)


def detached(item: Item) -> Item:
    """A new item equal to ``item`` that shares only immutable leaves with it (what the Worker hands out).

    ``item`` must be one the Worker built or adopted (its strings exact, its mappings FrozenDict); anything
    else is `adopt`-ed.
    """
    cls = type(item)
    new: Any
    if cls is ToolCall:
        new = _CallBuilder()
        new.call_id = item.call_id  # type: ignore[union-attr]
        new.name = item.name  # type: ignore[union-attr]
        new.arguments = item.arguments  # type: ignore[union-attr]
        new.raw_arguments = item.raw_arguments  # type: ignore[union-attr]
        new.id = item.id
        new.meta = item.meta  # type: ignore[union-attr]
        new.__class__ = ToolCall
        return new  # type: ignore[no-any-return]
    if cls is ToolResult:
        new = _ResultBuilder()
        new.call_id = item.call_id  # type: ignore[union-attr]
        new.name = item.name  # type: ignore[union-attr]
        new.content = item.content  # type: ignore[union-attr]
        new.is_error = item.is_error  # type: ignore[union-attr]
        new.id = item.id
        new.meta = item.meta  # type: ignore[union-attr]
        rich = item.parts  # type: ignore[union-attr]
        new.parts = tuple([_detached_part(p) for p in rich]) if rich else ()
        new.__class__ = ToolResult
        return new  # type: ignore[no-any-return]
    if cls is Message:
        new = _MessageBuilder()
        new.role = item.role  # type: ignore[union-attr]
        new.content = tuple([_detached_part(p) for p in item.content])  # type: ignore[union-attr, arg-type]
        new.id = item.id
        new.meta = item.meta  # type: ignore[union-attr]
        new.__class__ = Message
        return new  # type: ignore[no-any-return]
    if cls is Reasoning:
        new = _ReasoningBuilder()
        new.text = item.text  # type: ignore[union-attr]
        new.signature = item.signature  # type: ignore[union-attr]
        new.provider = item.provider  # type: ignore[union-attr]
        new.redacted = item.redacted  # type: ignore[union-attr]
        new.id = item.id
        new.meta = item.meta  # type: ignore[union-attr]
        new.__class__ = Reasoning
        return new  # type: ignore[no-any-return]
    if cls is ProviderBlock:
        new = _BlockBuilder()
        new.provider = item.provider  # type: ignore[union-attr]
        new.data = item.data  # type: ignore[union-attr]
        new.id = item.id
        new.__class__ = ProviderBlock
        return new  # type: ignore[no-any-return]
    return adopt(item)


def _detached_part(part: ContentPart) -> ContentPart:
    if type(part) is TextPart:
        new: Any = _TextBuilder()
        new.text = part.text
        new.__class__ = TextPart
        return new  # type: ignore[no-any-return]
    return _adopt_part(part, "item.content")


def _opt(value: object, where: str) -> str | None:
    return None if value is None else _plain(value, where)


def _plain(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ItemError(f"{where}: expected a string, got {type(value).__name__}")
    return plain_str(value)


def _map(value: object, where: str) -> FrozenDict:
    if not isinstance(value, Mapping):
        raise ItemError(f"{where}: expected an object, got {type(value).__name__}")
    try:
        return freeze_object(value) if value else EMPTY
    except TypeError as exc:
        raise ItemError(f"{where}: {exc}") from exc


def _adopt_part(part: object, where: str) -> ContentPart:
    if isinstance(part, TextPart):
        return TextPart(text=_plain(part.text, f"{where}.text"))
    if isinstance(part, ImagePart):
        return ImagePart(
            media_type=_plain(part.media_type, f"{where}.media_type"),
            data=_opt(part.data, f"{where}.data"),
            url=_opt(part.url, f"{where}.url"),
        )
    if isinstance(part, DocumentPart):
        return DocumentPart(
            media_type=_plain(part.media_type, f"{where}.media_type"),
            data=_opt(part.data, f"{where}.data"),
            url=_opt(part.url, f"{where}.url"),
            title=_opt(part.title, f"{where}.title"),
        )
    raise ItemError(f"{where}: expected a TextPart, ImagePart or DocumentPart, got {type(part).__name__}")


def adopt_parts(parts: object, where: str) -> tuple[ContentPart, ...]:
    """Exact, read-only copies of content parts from outside the Worker; raises :class:`ItemError` naming the
    bad one."""
    if isinstance(parts, (str, bytes)) or not isinstance(parts, (tuple, list)):
        raise ItemError(f"{where}: expected a tuple of parts, got {type(parts).__name__}")
    return tuple([_adopt_part(p, f"{where}[{i}]") for i, p in enumerate(tuple(parts))])


def adopt(item: object, *, where: str = "item") -> Item:
    """A deep read-only copy of an item from outside the Worker, of the exact item class, with exact strings
    and freshly frozen mappings: whoever built ``item`` keeps no way to change the copy. Each field is read
    once. Raises :class:`ItemError` naming the bad field."""
    if isinstance(item, ToolCall):
        return ToolCall(
            call_id=_plain(item.call_id, f"{where}.call_id"),
            name=_plain(item.name, f"{where}.name"),
            arguments=_map(item.arguments, f"{where}.arguments"),
            raw_arguments=_opt(item.raw_arguments, f"{where}.raw_arguments"),
            id=_plain(item.id, f"{where}.id"),
            meta=_map(item.meta, f"{where}.meta"),
        )
    if isinstance(item, ToolResult):
        is_error = item.is_error
        if not isinstance(is_error, bool):
            raise ItemError(f"{where}.is_error: expected a boolean, got {type(is_error).__name__}")
        return ToolResult(
            call_id=_plain(item.call_id, f"{where}.call_id"),
            name=_plain(item.name, f"{where}.name"),
            content=_plain(item.content, f"{where}.content"),
            is_error=is_error,
            id=_plain(item.id, f"{where}.id"),
            meta=_map(item.meta, f"{where}.meta"),
            parts=adopt_parts(item.parts, f"{where}.parts") if item.parts else (),
        )
    if isinstance(item, Message):
        role = _plain(item.role, f"{where}.role")
        if role not in ("system", "user", "assistant"):
            raise ItemError(f"{where}.role: expected system, user or assistant, got {role!r}")
        return Message(
            role=role,  # type: ignore[arg-type]
            content=adopt_parts(item.content, f"{where}.content"),
            id=_plain(item.id, f"{where}.id"),
            meta=_map(item.meta, f"{where}.meta"),
        )
    if isinstance(item, Reasoning):
        return Reasoning(
            text=_plain(item.text, f"{where}.text"),
            signature=_opt(item.signature, f"{where}.signature"),
            provider=_opt(item.provider, f"{where}.provider"),
            redacted=_opt(item.redacted, f"{where}.redacted"),
            id=_plain(item.id, f"{where}.id"),
            meta=_map(item.meta, f"{where}.meta"),
        )
    if isinstance(item, ProviderBlock):
        return ProviderBlock(
            provider=_plain(item.provider, f"{where}.provider"),
            data=_map(item.data, f"{where}.data"),
            id=_plain(item.id, f"{where}.id"),
        )
    raise ItemError(f"{where}: expected a history item, got {type(item).__name__}")


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
    if kind == "document":
        return DocumentPart(
            media_type=_str(data, "media_type", where),
            data=_opt_str(data, "data", where),
            url=_opt_str(data, "url", where),
            title=_opt_str(data, "title", where),
        )
    raise ItemError(f"{where}.type: unknown content part type {kind!r}")


def _parts(data: Mapping[str, object], key: str, where: str) -> tuple[ContentPart, ...]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ItemError(f"{where}.{key}: expected a list")
    return tuple(_part(p, f"{where}.{key}[{i}]") for i, p in enumerate(value))


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
        if not isinstance(data.get("content"), list):
            raise ItemError(f"{where}.content: expected a list")
        return Message(
            role=role,
            content=_parts(data, "content", where),
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
            parts=_parts(data, "parts", where),
        )
    if kind == "reasoning":
        return Reasoning(
            text=_str(data, "text", where),
            signature=_opt_str(data, "signature", where),
            provider=_opt_str(data, "provider", where),
            redacted=_opt_str(data, "redacted", where),
            id=item_id,
            meta=_obj(data, "meta", where),
        )
    if kind == "provider_block":
        if "data" not in data:
            raise ItemError(f"{where}.data: missing")
        return ProviderBlock(provider=_str(data, "provider", where), data=_obj(data, "data", where), id=item_id)
    raise ItemError(f"{where}.type: unknown item type {kind!r}")
