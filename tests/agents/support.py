"""Shared pieces of the subagent tests: a model client that routes each request to the script of the Worker that
sent it (by system prompt), so parent and children each follow their own script whatever order they run in."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from effects_kit import Recording, Replay
from hookloop import ScriptedClient
from hookloop.providers.base import LLMRequest
from hookloop.stream import StreamEvent

__all__ = ["Recording", "Replay", "Routed", "request_texts", "tool_names"]  # Recording, Replay: from effects_kit


class Routed:
    """An LLMClient: ``scripts[system prompt or ""]`` answers the request."""

    def __init__(self, scripts: Mapping[str, ScriptedClient], provider: str = "scripted") -> None:
        self.scripts = dict(scripts)
        self._provider = provider

    @property
    def provider(self) -> str:
        return self._provider

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        script = self.scripts.get(request.system or "")
        if script is None:
            raise AssertionError(f"no script for system prompt {request.system!r}")
        return script.stream(request)


def tool_names(request: LLMRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def request_texts(request: LLMRequest) -> list[str]:
    return [
        str(getattr(item, "content", ""))
        if hasattr(item, "call_id") and hasattr(item, "is_error")
        else getattr(item, "text", "")
        for item in request.items
    ]
