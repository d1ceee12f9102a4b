"""A minimal model client for the benchmarks: it yields pre-built stream events and does nothing else.

So the client costs exactly what a raw async generator over the same events costs, and whatever a Worker run
costs beyond that is the Worker's. It also timestamps the start of each model request (``started``), which the
history-growth benchmark reads instead of adding a hook or subscriber of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from time import perf_counter_ns

from hookloop.stream import (
    BlockStart,
    BlockStop,
    StopEvent,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

__all__ = ["PrebuiltClient", "text_turn", "tool_turn"]


class PrebuiltClient:
    """Plays ``turns`` (lists of pre-built events) in order, one per ``stream`` call."""

    provider = "bench"

    def __init__(self, turns: Sequence[Sequence[StreamEvent]]) -> None:
        self.turns = turns
        self.position = 0
        self.started: list[int] = []

    async def stream(self, request: object) -> AsyncIterator[StreamEvent]:
        self.started.append(perf_counter_ns())
        events = self.turns[self.position]
        self.position += 1
        for event in events:
            yield event


_USAGE = UsageEvent(Usage(input_tokens=16, output_tokens=8))


def text_turn(deltas: int, text: str = "tok ") -> list[StreamEvent]:
    """A final answer streamed as ``deltas`` text deltas."""
    return [
        BlockStart(0, "text"),
        *(TextDelta(0, text) for _ in range(deltas)),
        BlockStop(0),
        _USAGE,
        StopEvent("end_turn"),
    ]


def tool_turn(turn: int, tools: Sequence[str]) -> list[StreamEvent]:
    """One reply calling each of ``tools`` once, with ``{"x": <turn>}`` as arguments (one JSON fragment)."""
    events: list[StreamEvent] = []
    for index, name in enumerate(tools):
        events += [
            BlockStart(index, "tool_call", call_id=f"call_{turn}_{index}", name=name),
            ToolCallDelta(index, f'{{"x": {turn}}}'),
            BlockStop(index),
        ]
    events += [_USAGE, StopEvent("tool_use")]
    return events
