"""Shared pieces of the subagent tests: a model client that routes each request to the script of the Worker that
sent it (by system prompt), so parent and children each follow their own script whatever order they run in."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TypeVar

from hookloop import ScriptedClient
from hookloop.effects import Effect
from hookloop.providers.base import LLMRequest
from hookloop.stream import StreamEvent

T = TypeVar("T")


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


class Recording:
    """Performs each effect and keeps its JSON outcome by key (occurrence-numbered), as a durable store would."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, object]] = []
        self.seen: dict[str, int] = {}

    def _name(self, key: str) -> str:
        n = self.seen.get(key, 0)
        self.seen[key] = n + 1
        return f"{key}#{n}"

    async def perform(self, effect: Effect[T]) -> T:
        name = self._name(effect.key)
        outcome = await effect.perform()
        recorded = json.loads(json.dumps(effect.encode(outcome)))
        self.log.append((effect.kind, name, recorded))
        return effect.decode(recorded)


class Replay(Recording):
    """Returns the recorded outcomes and never performs an effect."""

    def __init__(self, recorded: Recording) -> None:
        super().__init__()
        self.outcomes = {name: value for _, name, value in recorded.log}

    async def perform(self, effect: Effect[T]) -> T:
        name = self._name(effect.key)
        if name not in self.outcomes:
            raise AssertionError(f"effect {name} was not recorded")
        return effect.decode(self.outcomes[name])
