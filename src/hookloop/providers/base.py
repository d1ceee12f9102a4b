"""The model client protocol: what the Worker asks of a provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hookloop._frozen import FrozenDict
from hookloop.items import Item
from hookloop.stream import StreamEvent

__all__ = ["LLMClient", "LLMRequest", "ToolSpec"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMRequest:
    """One model request.

    ``items`` is a read-only view of the history (not a copy); ``cache_prefix`` counts the leading items the
    Worker has frozen (CacheLocked state), where a provider may place its cache breakpoint.
    """

    system: str | None
    items: Sequence[Item]
    tools: tuple[ToolSpec, ...]
    model: str | None = None
    max_tokens: int | None = None
    cache_prefix: int = 0
    turn: int = 0
    run_id: str = ""


@runtime_checkable
class LLMClient(Protocol):
    """Streams normalised :mod:`hookloop.stream` events for a request.

    Implementations raise :class:`hookloop.errors.ClientError` (or a subclass) for provider failures, and
    must stop promptly and release the connection when the iterator is closed (run cancelled).
    """

    @property
    def provider(self) -> str:
        """A short provider name for errors and telemetry (``"anthropic"``, ``"scripted"``, …)."""
        ...

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...
