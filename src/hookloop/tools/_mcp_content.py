"""MCP content blocks (tool results, resources, prompts) as hookloop tool output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hookloop.items import ContentPart, DocumentPart, ImagePart, TextPart, base64_size

__all__ = ["error_lines", "field", "render", "resource_part", "summarise", "to_parts"]


def field(obj: object, snake: str, camel: str, default: Any = None) -> Any:
    """Read an SDK model field by its mcp 2.x (snake_case) or 1.x (camelCase) name."""
    value = getattr(obj, snake, None)
    if value is None:
        value = getattr(obj, camel, None)
    return default if value is None else value


def summarise(block: object) -> str:
    """One content block as text: text as is, anything else as a short bracketed note."""
    kind = getattr(block, "type", type(block).__name__)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = field(block, "mime_type", "mimeType", "?")
        return f"[{kind}: {mime}, {base64_size(str(getattr(block, 'data', '')))} bytes]"
    if kind == "resource_link":
        return f"[resource link: {getattr(block, 'uri', '?')}]"
    if kind == "resource":
        return summarise_resource(getattr(block, "resource", None))
    return f"[{kind} content]"


def summarise_resource(resource: object) -> str:
    """A resource's contents as text: its text, or a note naming its URI, type and size."""
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return text
    mime = field(resource, "mime_type", "mimeType", "?")
    blob = getattr(resource, "blob", None)
    size = f", {base64_size(blob)} bytes" if isinstance(blob, str) else ""
    return f"[resource: {getattr(resource, 'uri', '?')}, {mime}{size}]"


def render(blocks: Iterable[object]) -> str:
    """Content blocks as the text hooks and permission code see: one line (or more) per block."""
    return "\n".join(summarise(block) for block in blocks)


def to_parts(blocks: Sequence[object]) -> tuple[ContentPart, ...]:
    """Content blocks as content parts for the model, in order, or ``()`` when they are all text (the text is
    the whole answer then). Images become :class:`ImagePart`; audio and binary resources
    :class:`DocumentPart` (the provider sends what it supports, a placeholder otherwise); text resources their
    text; anything else its bracketed note."""
    if all(getattr(block, "type", None) == "text" for block in blocks):
        return ()
    parts: list[ContentPart] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        data = getattr(block, "data", None)
        mime = field(block, "mime_type", "mimeType")
        if kind == "image" and isinstance(data, str) and isinstance(mime, str):
            parts.append(ImagePart(media_type=mime, data=data))
        elif kind == "audio" and isinstance(data, str) and isinstance(mime, str):
            parts.append(DocumentPart(media_type=mime, data=data, title="audio"))
        elif kind == "resource":
            parts.append(resource_part(getattr(block, "resource", None)))
        else:
            parts.append(TextPart(text=summarise(block)))
    return tuple(parts)


def resource_part(resource: object) -> ContentPart:
    """One resource's contents as a part: text as text, an image blob as an image, another blob as a document
    titled with its URI."""
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return TextPart(text=text)
    blob = getattr(resource, "blob", None)
    mime = field(resource, "mime_type", "mimeType")
    if not isinstance(blob, str):
        return TextPart(text=summarise_resource(resource))
    media_type = mime if isinstance(mime, str) and mime else "application/octet-stream"
    if media_type.startswith("image/"):
        return ImagePart(media_type=media_type, data=blob)
    return DocumentPart(media_type=media_type, data=blob, title=str(getattr(resource, "uri", "")) or None)


def error_lines(errors: Sequence[Any]) -> list[str]:
    """``field 'x': message`` per JSON-schema error; a missing required property is named as the field."""
    lines: dict[str, None] = {}
    for err in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        path = [str(p) for p in err.absolute_path]
        if err.validator == "required" and isinstance(err.instance, Mapping):
            missing = [str(p) for p in err.validator_value if p not in err.instance]
            for name in missing:
                lines[f"field '{'.'.join([*path, name])}': required field is missing"] = None
            if missing:
                continue
        lines[f"field '{'.'.join(path) or '(arguments)'}': {err.message}"] = None
    return list(lines)
