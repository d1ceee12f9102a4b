"""Shared test helpers: small tools and a recorder that logs every hook event in order."""

from __future__ import annotations

import asyncio
from typing import Any

from hookloop import Item, ToolContext, tool
from hookloop.hooks import ALL_EVENTS, Continue, Finish, HookEvent


@tool(threaded=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def boom(reason: str = "kaput") -> str:
    """Always fails."""
    raise RuntimeError(reason)


@tool
async def whoami(ctx: ToolContext) -> str:
    """Report the execution context."""
    return f"{ctx.run_id}|{ctx.call_id}|{ctx.idempotency_key}"


class Rendezvous:
    """Two tool calls that can only finish if they run at the same time (proves parallelism without sleeps)."""

    def __init__(self, parties: int = 2) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = asyncio.Event()

    async def meet(self) -> str:
        self.arrived += 1
        if self.arrived >= self.parties:
            self.event.set()
        await asyncio.wait_for(self.event.wait(), timeout=5)
        return f"met {self.arrived}"


PASS_RESULTS: dict[str, object] = {
    "on_prompt_submit": Continue(),
    "pre_llm_request": Continue(),
    "pre_tool_call": Continue(),
    "post_tool_call": Continue(),
    "on_turn_end": Finish(),
    "on_abort": None,
    "on_text_delta": Continue(),
    "on_tool_call_delta": Continue(),
    "on_stream_chunk": Continue(),
    "on_stream_complete": Continue(),
    "session_start": None,
    "session_end": None,
    "notification": None,
    "pre_compact": Continue(),
    "post_compact": None,
    "post_tool_batch": Continue(),
    "subagent_start": None,
    "subagent_stop": Finish(),
}


class Recorder:
    """Registers a passing hook on every event and records (event name, input) in call order."""

    def __init__(self, worker: Any, *, events: tuple[HookEvent[Any, Any], ...] = ALL_EVENTS) -> None:
        self.log: list[tuple[str, Any]] = []
        for event in events:
            worker.add_hook(event, self._make(event.name), name=f"rec:{event.name}")

    def _make(self, name: str) -> Any:
        def hook(info: Any) -> Any:
            self.log.append((name, info))
            return PASS_RESULTS[name]

        return hook

    def names(self, *, stream: bool = True) -> list[str]:
        skip = set() if stream else {"on_stream_chunk", "on_text_delta", "on_tool_call_delta"}
        return [n for n, _ in self.log if n not in skip]


def shape(items: tuple[Item, ...] | list[Item]) -> list[dict[str, Any]]:
    """Items as JSON without their random ids (to compare histories of two runs)."""
    out = []
    for item in items:
        data = item.to_json()
        data.pop("id", None)
        out.append(data)
    return out


def assert_valid_history(items: tuple[Item, ...] | list[Item]) -> None:
    """Every tool call has exactly one result, after it (an id may be reused once its call is answered)."""
    from hookloop import ToolCall, ToolResult

    calls = [i.call_id for i in items if isinstance(i, ToolCall)]
    results = [i.call_id for i in items if isinstance(i, ToolResult)]
    assert sorted(calls) == sorted(results), (calls, results)
    open_calls: set[str] = set()
    for item in items:
        if isinstance(item, ToolCall):
            assert item.call_id not in open_calls, f"call {item.call_id} while an earlier one is unanswered"
            open_calls.add(item.call_id)
        elif isinstance(item, ToolResult):
            assert item.call_id in open_calls, f"result {item.call_id} before its call, or a second result"
            open_calls.discard(item.call_id)
