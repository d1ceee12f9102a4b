"""The scripted client: plays a script of model turns deterministically, streaming like a real provider.

It is the offline model for ``hookloop demo`` and the test double for Worker tests — yours too::

    client = ScriptedClient([
        ScriptedTurn([Text("Let me look."), ToolUse("Read", {"file_path": "README.md"})]),
        ScriptedTurn([Text("Done: it is a README.")]),
    ])

Text streams in ``chunk_size``-character deltas and tool-call JSON in ``fragment_size``-character fragments;
each turn reports usage and a stop reason. ``delay`` waits between events (cancellation tests), ``error``
injects a provider failure after a number of events, and a turn may be a function of the request.
Running past the end of the script raises a :class:`hookloop.errors.ClientError` that says so.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, get_args

import anyio

from hookloop.errors import ClientError
from hookloop.providers.base import LLMRequest
from hookloop.stream import (
    BlockStart,
    BlockStop,
    StopEvent,
    StopReason,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

__all__ = ["ScriptError", "ScriptedClient", "ScriptedTurn", "Text", "Thinking", "ToolUse"]


@dataclass(frozen=True, slots=True)
class Text:
    """Assistant text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call. ``arguments`` may be a string to play malformed JSON exactly as given."""

    name: str
    arguments: Mapping[str, object] | str = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Thinking:
    """A reasoning block with its signature."""

    text: str
    signature: str | None = "sig-scripted"


Block: TypeAlias = Text | ToolUse | Thinking


@dataclass(frozen=True, slots=True)
class ScriptError:
    """Fail the turn after ``after_events`` events: as a stream error event, or by raising ClientError."""

    message: str = "injected provider error"
    after_events: int = 0
    mode: Literal["event", "raise"] = "raise"
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One model reply."""

    blocks: Sequence[Block] = ()
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    delay: float = 0.0
    error: ScriptError | None = None


TurnSource: TypeAlias = ScriptedTurn | Callable[[LLMRequest], ScriptedTurn]


class ScriptedClient:
    """Plays ``turns`` in order, one per model request. ``requests`` records every request received."""

    def __init__(
        self,
        turns: Sequence[TurnSource | Sequence[Block]],
        *,
        chunk_size: int = 8,
        fragment_size: int = 12,
        provider: str = "scripted",
    ) -> None:
        if chunk_size < 1 or fragment_size < 1:
            raise ValueError("chunk_size and fragment_size must be at least 1")
        self._turns: list[TurnSource] = [
            t if isinstance(t, ScriptedTurn) or callable(t) else ScriptedTurn(blocks=tuple(t)) for t in turns
        ]
        self._chunk = chunk_size
        self._fragment = fragment_size
        self._provider = provider
        self._position = 0
        self._calls = 0
        self.requests: list[LLMRequest] = []

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def position(self) -> int:
        """Turns played so far."""
        return self._position

    def advance(self, turns: int) -> None:
        """Skip ``turns`` turns (a run resumed in another process continues the script where it was)."""
        if turns < 0 or self._position + turns > len(self._turns):
            raise ValueError(f"cannot advance {turns} turns: {self.remaining} remain")
        self._position += turns

    @property
    def remaining(self) -> int:
        """Turns not yet played."""
        return len(self._turns) - self._position

    @classmethod
    def from_file(cls, path: str | Path, *, chunk_size: int = 8, fragment_size: int = 12) -> ScriptedClient:
        """Load a script from JSON: ``{"turns": [{"blocks": [{"text": …} | {"tool": name, "arguments": {…},
        "call_id": …?} | {"thinking": …, "signature": …?}], "usage": {…}?, "stop_reason": …?, "delay": s?,
        "error": {…}?}]}`` — the whole format is in ``docs/scripted-model.md``. Anything malformed (an unknown key,
        a wrong type, an unknown stop reason) raises ``ValueError`` naming the file and the JSON path."""
        where = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{where}: cannot read script: {getattr(exc, 'strerror', None) or exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            raise ValueError(f"{where}: expected an object with a 'turns' list")
        _keys(data, frozenset({"turns", "comment"}), where)
        turns: list[TurnSource | Sequence[Block]] = []
        for i, raw in enumerate(data["turns"]):
            turns.append(_turn_from_json(raw, f"{where}: turns[{i}]"))
        return cls(turns, chunk_size=chunk_size, fragment_size=fragment_size)

    def _next_turn(self, request: LLMRequest) -> ScriptedTurn:
        if self._position >= len(self._turns):
            raise ClientError(
                f"the script has no more turns (played {len(self._turns)}); the model request of turn "
                f"{request.turn} has no reply",
                provider=self._provider,
            )
        index = self._position
        self._position += 1
        source = self._turns[index]
        turn = source if isinstance(source, ScriptedTurn) else source(request)
        if not isinstance(turn, ScriptedTurn):
            raise ClientError(f"script turn {index} function returned {type(turn).__name__}", provider=self._provider)
        return turn

    def _compile(self, turn: ScriptedTurn) -> tuple[StreamEvent, ...]:
        events: list[StreamEvent] = []
        output_chars = 0
        has_tools = False
        for index, block in enumerate(turn.blocks):
            if isinstance(block, Text):
                events.append(BlockStart(index, "text"))
                text = block.text
                events.extend(TextDelta(index, text[i : i + self._chunk]) for i in range(0, len(text), self._chunk))
                output_chars += len(text)
            elif isinstance(block, ToolUse):
                has_tools = True
                self._calls += 1
                call_id = block.call_id or f"call_{self._calls:04d}"
                events.append(BlockStart(index, "tool_call", call_id=call_id, name=block.name))
                raw = block.arguments if isinstance(block.arguments, str) else json.dumps(block.arguments)
                events.extend(
                    ToolCallDelta(index, raw[i : i + self._fragment]) for i in range(0, len(raw), self._fragment)
                )
                output_chars += len(raw)
            else:
                events.append(BlockStart(index, "thinking"))
                text = block.text
                events.extend(ThinkingDelta(index, text[i : i + self._chunk]) for i in range(0, len(text), self._chunk))
                if block.signature is not None:
                    events.append(ThinkingDelta(index, "", signature=block.signature))
                output_chars += len(text)
            events.append(BlockStop(index))
        usage = turn.usage or Usage(input_tokens=16, output_tokens=max(1, output_chars // 4))
        events.append(UsageEvent(usage))
        events.append(StopEvent(turn.stop_reason or ("tool_use" if has_tools else "end_turn")))
        return tuple(events)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn = self._next_turn(request)
        events = self._compile(turn)
        error = turn.error
        stop_at = error.after_events if error is not None else -1
        delay = turn.delay
        for position, event in enumerate(events):
            if position == stop_at:
                assert error is not None
                if error.mode == "event":
                    yield StreamError(error.message, retryable=error.retryable)
                    return
                raise ClientError(error.message, provider=self._provider, retryable=error.retryable)
            if delay:
                await anyio.sleep(delay)
            yield event
        if error is not None and stop_at >= len(events):
            raise ClientError(error.message, provider=self._provider, retryable=error.retryable)


_STOP_REASONS = frozenset(get_args(StopReason))
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_TURN_KEYS = frozenset({"blocks", "usage", "stop_reason", "delay", "error", "comment"})
_BLOCK_KEYS = {
    "text": frozenset({"text", "comment"}),
    "tool": frozenset({"tool", "arguments", "call_id", "comment"}),
    "thinking": frozenset({"thinking", "signature", "comment"}),
}
_ERROR_KEYS = frozenset({"message", "after_events", "mode", "retryable", "comment"})


def _keys(raw: dict[str, object], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise ValueError(f"{where}: unknown key {names}; expected {', '.join(sorted(allowed - {'comment'}))}")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _string(raw: dict[str, object], key: str, where: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise ValueError(f"{where}.{key}: expected a string, got {_json_type(value)}")
    return value


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected a whole number >= 0, got {value!r}")
    return value


def _block_from_json(b: object, where: str) -> Block:
    if not isinstance(b, dict):
        raise ValueError(f"{where}: expected an object, got {_json_type(b)}")
    kinds = [k for k in ("text", "tool", "thinking") if k in b]
    if len(kinds) != 1:
        found = f"both {' and '.join(repr(k) for k in kinds)}" if kinds else "none"
        raise ValueError(f"{where}: expected one of 'text', 'tool', 'thinking' ({found})")
    kind = kinds[0]
    _keys(b, _BLOCK_KEYS[kind], where)
    if kind == "text":
        return Text(_string(b, "text", where))
    if kind == "thinking":
        signature = b.get("signature", "sig-scripted")
        if signature is not None and not isinstance(signature, str):
            raise ValueError(f"{where}.signature: expected a string or null, got {_json_type(signature)}")
        return Thinking(_string(b, "thinking", where), signature)
    name = _string(b, "tool", where)
    if not name:
        raise ValueError(f"{where}.tool: expected a tool name, got an empty string")
    args = b.get("arguments", {})
    if not isinstance(args, (dict, str)):
        raise ValueError(f"{where}.arguments: expected an object or a string, got {_json_type(args)}")
    call_id = b.get("call_id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise ValueError(f"{where}.call_id: expected a non-empty string, got {call_id!r}")
    return ToolUse(name, args, call_id)


def _error_from_json(raw: object, where: str) -> ScriptError:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object")
    _keys(raw, _ERROR_KEYS, where)
    message = _string(raw, "message", where) if "message" in raw else "injected provider error"
    after = _count(raw.get("after_events", 0), f"{where}.after_events")
    mode = raw.get("mode", "raise")
    if mode not in ("raise", "event"):
        raise ValueError(f"{where}.mode: expected 'raise' or 'event', got {mode!r}")
    retryable = raw.get("retryable", False)
    if not isinstance(retryable, bool):
        raise ValueError(f"{where}.retryable: expected true or false, got {retryable!r}")
    return ScriptError(message, after, "event" if mode == "event" else "raise", retryable)


def _turn_from_json(raw: object, where: str) -> ScriptedTurn:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object, got {_json_type(raw)}")
    _keys(raw, _TURN_KEYS, where)
    blocks = raw.get("blocks", [])
    if not isinstance(blocks, list):
        raise ValueError(f"{where}.blocks: expected a list, got {_json_type(blocks)}")
    usage = raw.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise ValueError(f"{where}.usage: expected an object, got {_json_type(usage)}")
        _keys(usage, frozenset(_USAGE_FIELDS), f"{where}.usage")
        usage = Usage(**{k: _count(usage[k], f"{where}.usage.{k}") for k in _USAGE_FIELDS if k in usage})
    stop_reason = raw.get("stop_reason")
    if stop_reason is not None and stop_reason not in _STOP_REASONS:
        raise ValueError(
            f"{where}.stop_reason: expected one of {', '.join(sorted(_STOP_REASONS))}, got {stop_reason!r}"
        )
    delay = raw.get("delay", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay < float("inf"):
        raise ValueError(f"{where}.delay: expected seconds (a number >= 0), got {delay!r}")
    error = raw.get("error")
    return ScriptedTurn(
        blocks=tuple(_block_from_json(b, f"{where}.blocks[{j}]") for j, b in enumerate(blocks)),
        usage=usage,
        stop_reason=stop_reason,
        delay=float(delay),
        error=_error_from_json(error, f"{where}.error") if error is not None else None,
    )
