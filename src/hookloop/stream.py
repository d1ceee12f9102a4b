"""Normalised provider stream events.

Every provider client turns its wire stream into this sequence, per content block ``index``::

    BlockStart(index, kind[, call_id, name, meta]) → TextDelta* | ToolCallDelta* | ThinkingDelta* → BlockStop(index)

or, for a block only the provider itself understands (server tool use and results, citations, built-in tool
items), one :class:`NativeBlock` (index, provider, data) holding it whole, which becomes a
:class:`~hookloop.items.ProviderBlock` in the history at that position;

followed (anywhere, usually last) by :class:`UsageEvent` and one :class:`StopEvent`. A provider failure inside a
stream is raised by the client as a typed :class:`hookloop.errors.ClientError` subclass (keeping e.g.
``retry_after``); a client that can only report it as data yields a :class:`StreamError` event, which the Worker
turns into a plain ``ClientError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from hookloop._frozen import FrozenDict, empty

__all__ = [
    "BlockKind",
    "BlockStart",
    "BlockStop",
    "NativeBlock",
    "StopEvent",
    "StopReason",
    "StreamError",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "Usage",
    "UsageEvent",
]

BlockKind: TypeAlias = Literal["text", "tool_call", "thinking"]
StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts. Adding two usages sums every field."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class BlockStart:
    """A content block begins. Tool-call blocks carry the provider's ``call_id`` and the tool ``name``.

    ``meta`` holds what the provider must get back with the block on the next request (its native item id,
    ``status``, ``phase``…); it becomes the built item's ``meta`` (merged, the item's own keys first).
    """

    index: int
    kind: BlockKind
    call_id: str | None = None
    name: str | None = None
    meta: FrozenDict = field(default_factory=empty)


@dataclass(frozen=True, slots=True)
class NativeBlock:
    """A whole provider-native block at position ``index`` (``data`` as the provider sent it, read-only)."""

    index: int
    provider: str
    data: FrozenDict


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text for block ``index``."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call's JSON arguments for block ``index`` (fragments concatenate to the JSON)."""

    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning text for block ``index`` — or, with ``signature``, the block's signature; or, with
    ``redacted``, opaque encrypted reasoning the provider wants back unchanged."""

    index: int
    text: str = ""
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class BlockStop:
    """Block ``index`` is complete."""

    index: int


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Token usage reported by the provider for this request (summed if reported more than once)."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class StopEvent:
    """Why the model stopped."""

    reason: StopReason


@dataclass(frozen=True, slots=True)
class StreamError:
    """The provider reported an error inside the stream."""

    message: str
    kind: str = "error"
    retryable: bool = False


StreamEvent: TypeAlias = (
    BlockStart
    | TextDelta
    | ToolCallDelta
    | ThinkingDelta
    | BlockStop
    | NativeBlock
    | UsageEvent
    | StopEvent
    | StreamError
)
