"""A run's Effects that record and replay, as a durable store would (``Worker.run/resume(effects=…)``): the tests of
the effect seam and of subagents under it share them."""

from __future__ import annotations

import json
from typing import TypeVar

from hookloop.effects import Effect

__all__ = ["Recording", "Replay"]

T = TypeVar("T")


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
        recorded = json.loads(json.dumps(effect.encode(outcome)))  # what a store would keep
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
