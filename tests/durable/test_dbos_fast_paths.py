"""The fast paths of a durable segment give what the general paths gave: the timeline events a segment keeps (stream
events dropped by class before any JSON is made) and the decision digests recorded with each step (the run's
digest over every call kept up to date instead of rebuilt per model call). Neither needs a database."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop import ToolCall
from hookloop._frozen import freeze_object
from hookloop.durable._dbos_run import _STREAM_TYPES, _Segment
from hookloop.durable._dbos_steps import _Decisions
from hookloop.effects import DecisionLog
from hookloop.items import Message, TextPart
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from hookloop.timeline import (
    HookDecision,
    ItemAppended,
    ModelRequestEnded,
    ModelRequestStarted,
    RunEnded,
    RunStarted,
    SubagentEvent,
    ToolEnded,
    ToolStarted,
    event_to_json,
)

EVENTS: list[object] = [
    RunStarted(run_id="r", session_id="s", source="startup"),
    ModelRequestStarted(run_id="r", turn=1, model="m", provider="scripted"),
    BlockStart(0, "text"),
    TextDelta(0, "hello"),
    BlockStop(0),
    BlockStart(1, "tool_call", call_id="c1", name="noop"),
    ToolCallDelta(1, '{"x": 1}'),
    BlockStop(1),
    BlockStart(2, "thinking"),
    ThinkingDelta(2, "hm", signature="sig"),
    BlockStop(2),
    NativeBlock(3, "anthropic", freeze_object({"type": "server_tool_use", "id": "n1"})),
    UsageEvent(Usage(input_tokens=3, output_tokens=4)),
    StopEvent("tool_use"),
    StreamError("overloaded", kind="overloaded"),
    ModelRequestEnded(run_id="r", turn=1, usage=Usage(input_tokens=3, output_tokens=4), stop_reason="tool_use"),
    ItemAppended(item=Message(role="assistant", content=(TextPart(text="hello"),))),
    ItemAppended(item=ToolCall(call_id="c1", name="noop", arguments=freeze_object({"x": 1}))),
    HookDecision(event="pre_tool_call", hook="h", source="python", decision="Allow", reason=None, seconds=0.0),
    ToolStarted(call_id="c1", tool_name="noop", arguments=freeze_object({"x": 1})),
    ToolEnded(call_id="c1", tool_name="noop", is_error=False, seconds=0.001),
    SubagentEvent(call_id="c1", agent_id="a", depth=1, event=TextDelta(0, "nested")),
    RunEnded(run_id="r", outcome="finished", detail="done"),
]


def _reference_kept(events: list[object]) -> list[dict[str, object]]:
    """What a segment kept before the fast path: every event made JSON, the stream types dropped after."""
    kept = []
    for event in events:
        try:
            data = event_to_json(event)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if data.get("type") not in _STREAM_TYPES:
            kept.append(dict(data))
    return kept


def test_a_segment_keeps_the_same_events_as_before_the_stream_classes_were_dropped_first() -> None:
    segment = _Segment(None, "r", 0)  # type: ignore[arg-type]
    for event in EVENTS:
        segment._keep(event)
    assert segment.events == _reference_kept(EVENTS)
    kinds = [e["type"] for e in segment.events]
    assert "stream_error" in kinds  # a stream error is kept, as before
    assert "subagent_event" in kinds  # a subagent's stream event arrives wrapped, and is kept, as before
    assert not set(kinds) & _STREAM_TYPES


def test_every_stream_type_is_dropped_by_its_class() -> None:
    """Each class the fast path drops makes one of the dropped JSON types, and each dropped type has its class."""
    stream = [e for e in EVENTS if isinstance(e, (BlockStart, BlockStop, TextDelta, ThinkingDelta, ToolCallDelta))]
    stream += [e for e in EVENTS if isinstance(e, (NativeBlock, UsageEvent, StopEvent))]
    assert {event_to_json(e)["type"] for e in stream} == _STREAM_TYPES  # type: ignore[arg-type]
    segment = _Segment(None, "r", 0)  # type: ignore[arg-type]
    for event in stream:
        segment._keep(event)
    assert segment.events == []


# -- the decision digests ------------------------------------------------------------------------------------------


class _ReferenceDecisions:
    """The digests as recorded runs have them: per call a DecisionLog, and for a model call the run's log with
    every call's digest, sorted by call id, hashed together (rebuilt each time)."""

    def __init__(self) -> None:
        self.run = DecisionLog()
        self.calls: dict[str, DecisionLog] = {}

    def add(self, event: HookDecision) -> None:
        entry = f"{event.event}/{event.hook}: {event.decision}"
        if event.call_id:
            self.calls.setdefault(event.call_id, DecisionLog()).add(entry)
        else:
            self.run.add(entry)

    def take(self, call_id: str | None) -> tuple[str, tuple[str, ...]]:
        if call_id:
            return self.calls.setdefault(call_id, DecisionLog()).take()
        digest, entries = self.run.take()
        parts = [digest, *(f"{c}={log.digest}" for c, log in sorted(self.calls.items()))]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32], entries


_call_ids = st.sampled_from(["", "c1", "c2", "call_10", "call_9", "toolu_b", "toolu_a", "Z"])
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), _call_ids, st.sampled_from(["Allow", "Deny", "Ask", "Continue"])),
        st.tuples(st.just("take"), _call_ids, st.just("")),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_steps)
def test_the_kept_digests_equal_the_digests_rebuilt_each_time(steps: list[tuple[str, str, str]]) -> None:
    fast, reference = _Decisions({}), _ReferenceDecisions()
    for op, call_id, decision in steps:
        if op == "add":
            event = HookDecision(
                event="pre_tool_call",
                hook="h",
                source="python",
                decision=decision,
                reason=None,
                seconds=0.0,
                call_id=call_id or None,
            )
            fast.add(event)
            reference.add(event)
        else:
            assert fast.take(call_id or None) == reference.take(call_id or None)
    assert fast.take(None) == reference.take(None)
    for call_id in sorted(reference.calls):
        assert fast.take(call_id) == reference.take(call_id)


def test_a_model_call_digest_changes_when_any_call_digest_changes() -> None:
    """The kept digest is not stale: a decision on an earlier call after the last model call changes the next."""
    decisions = _Decisions({})
    decisions.take("c1")
    first, _ = decisions.take(None)
    same, _ = decisions.take(None)
    decided: dict[str, Any] = {"reason": None, "seconds": 0.0, "source": "python", "hook": "h"}
    decisions.add(HookDecision(event="post_tool_call", decision="Deny", call_id="c1", **decided))
    changed, _ = decisions.take(None)
    decisions.take("c0")  # a new call (sorted before c1) is part of the run's digest too
    newer, _ = decisions.take(None)
    assert first == same
    assert len({first, changed, newer}) == 3
