"""SPEC §2: every hook event fires at its point, in order, with the inputs the spec names."""

from __future__ import annotations

import pytest

from helpers import Recorder, add, assert_valid_history, echo
from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker
from hookloop.hooks import Continue, PreLlmRequestInfo, PreToolCallInfo, StreamCompleteInfo, TurnEndInfo
from hookloop.stream import BlockStart, BlockStop, StopEvent, TextDelta, ToolCallDelta, UsageEvent

pytestmark = pytest.mark.anyio


async def test_full_call_order_for_a_tool_turn_then_a_final_turn() -> None:
    client = ScriptedClient(
        [
            [Text("hi"), ToolUse("echo", {"text": "a"}), ToolUse("add", {"a": 1, "b": 2})],
            [Text("done")],
        ],
        chunk_size=100,
        fragment_size=1000,
    )
    worker = Worker(client, tools=[echo, add])
    rec = Recorder(worker)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    expected_stream_1 = [
        "on_stream_chunk",  # BlockStart text
        "on_stream_chunk", "on_text_delta",
        "on_stream_chunk",  # BlockStop
        "on_stream_chunk",  # BlockStart tool
        "on_stream_chunk", "on_tool_call_delta",
        "on_stream_chunk",
        "on_stream_chunk",
        "on_stream_chunk", "on_tool_call_delta",
        "on_stream_chunk",
        "on_stream_chunk",  # usage
        "on_stream_chunk",  # stop
    ]  # fmt: skip
    expected_stream_2 = [
        "on_stream_chunk",
        "on_stream_chunk", "on_text_delta",
        "on_stream_chunk",
        "on_stream_chunk",
        "on_stream_chunk",
    ]  # fmt: skip
    assert rec.names() == [
        "session_start",
        "on_prompt_submit",
        "pre_llm_request",
        *expected_stream_1,
        "on_stream_complete",
        "pre_tool_call",
        "pre_tool_call",
        "post_tool_call",
        "post_tool_call",
        "post_tool_batch",
        "pre_llm_request",
        *expected_stream_2,
        "on_stream_complete",
        "on_turn_end",
        "session_end",
    ]
    pre = [info for name, info in rec.log if name == "pre_tool_call"]
    assert all(isinstance(i, PreToolCallInfo) for i in pre)
    assert [i.tool_name for i in pre] == ["echo", "add"]
    assert pre[1].arguments == {"a": 1, "b": 2}
    post = [info for name, info in rec.log if name == "post_tool_call"]
    assert [(p.tool_name, p.content, p.is_error) for p in post] == [("echo", "a", False), ("add", "3", False)]
    complete = [info for name, info in rec.log if name == "on_stream_complete"]
    assert complete == [StreamCompleteInfo(turn=1, event_count=11), StreamCompleteInfo(turn=2, event_count=5)]
    chunks = [info for name, info in rec.log if name == "on_stream_chunk"]
    assert [type(c) for c in chunks[:4]] == [BlockStart, TextDelta, BlockStop, BlockStart]
    assert [type(c) for c in chunks[4:6]] == [ToolCallDelta, BlockStop]
    assert type(chunks[9]) is UsageEvent
    assert type(chunks[10]) is StopEvent
    turn_end = [info for name, info in rec.log if name == "on_turn_end"]
    assert isinstance(turn_end[0], TurnEndInfo)
    assert turn_end[0].last_assistant_text == "done"
    assert turn_end[0].stop_hook_active is False
    assert outcome.text == "done"
    assert outcome.turns == 2
    assert_valid_history(worker.history)


async def test_pre_llm_request_summary_carries_counts_and_only_new_items() -> None:
    client = ScriptedClient([[ToolUse("echo", {"text": "x"})], [Text("ok")]])
    worker = Worker(client, tools=[echo], model="m-1")
    seen = []

    def spy(info: PreLlmRequestInfo) -> Continue:
        seen.append(info)
        return Continue()

    worker.add_pre_llm_request_hook(spy)
    await worker.run("hello")
    first, second = seen
    assert (first.turn, first.item_count, first.model) == (1, 1, "m-1")
    assert [type(i).__name__ for i in first.new_items] == ["Message"]
    assert [type(i).__name__ for i in second.new_items] == ["ToolCall", "ToolResult"]
    assert second.item_count == 3
    assert second.token_estimate > first.token_estimate > 0


async def test_thinking_deltas_fire_no_delta_hook_but_are_kept_with_signature() -> None:
    from hookloop import Reasoning, Thinking

    client = ScriptedClient([[Thinking("ponder", signature="sig-1"), Text("answer")]])
    worker = Worker(client)
    rec = Recorder(worker)
    await worker.run("q")
    assert "on_text_delta" in rec.names()
    texts = [info.text for name, info in rec.log if name == "on_text_delta"]
    assert "".join(texts) == "answer"
    reasoning = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning[0].text == "ponder"
    assert reasoning[0].signature == "sig-1"
