"""History items ⇄ provider payloads: grouping, round trips, cache breakpoints (pure functions, no network)."""

from __future__ import annotations

import json
from typing import Any

from helpers import shape
from hookloop import ImagePart, Item, Message, Reasoning, TextPart, ToolCall, ToolResult
from hookloop._frozen import freeze_object
from hookloop.providers._anthropic_wire import from_anthropic, to_anthropic
from hookloop.providers._chat_wire import from_chat, to_chat
from hookloop.providers._responses_wire import from_responses, reasoning_signature, to_responses
from hookloop.providers.base import ToolSpec

EPHEMERAL = {"type": "ephemeral"}
TOOL = ToolSpec(name="get_weather", description="Weather.", input_schema=freeze_object({"type": "object"}))
IMAGE = ImagePart(media_type="image/png", data="iVBORw0KGgo=")


def call(call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id=call_id, name="get_weather", arguments=freeze_object(arguments))


def result(call_id: str, content: str, *, is_error: bool = False) -> ToolResult:
    return ToolResult(call_id=call_id, name="get_weather", content=content, is_error=is_error)


def conversation(reasoning: Reasoning | None) -> list[Item]:
    """A user turn with an image, an assistant reply with reasoning, text and two calls, their results
    (one failed), a user message right after the results, a final answer and a follow-up."""
    items: list[Item] = [Message(role="user", content=(TextPart(text="Weather here?"), IMAGE))]
    if reasoning is not None:
        items.append(reasoning)
    items += [
        Message.assistant("Let me check both."),
        call("c1", location="Paris"),
        call("c2", location="Tokyo", unit="celsius"),
        result("c1", "Paris: 18"),
        result("c2", "tool 'get_weather' failed: timeout", is_error=True),
        Message.user("<hook-context>be quick</hook-context>"),
        Message.assistant("Paris is 18°C; Tokyo failed."),
        Message.user("Thanks"),
    ]
    return items


# -- Anthropic ----------------------------------------------------------------------------------------------


def test_anthropic_round_trip_is_lossless() -> None:
    items = conversation(Reasoning(text="Two cities.", signature="EqQBsig==", provider="anthropic"))
    items.insert(2, Reasoning(text="", redacted="EmwKAhgBdata", provider="anthropic"))
    system, messages, _ = to_anthropic("Be brief.", items, [TOOL])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    kinds = [b["type"] for b in messages[1]["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert messages[2]["content"][1]["is_error"] is True
    assert "is_error" not in messages[2]["content"][0]
    assert messages[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert shape(from_anthropic(system, messages)) == shape(items)


def test_anthropic_drops_reasoning_it_cannot_verify() -> None:
    foreign = Reasoning(text="openai thoughts", signature='{"type":"reasoning"}', provider="openai-responses")
    unsigned = Reasoning(text="no signature", provider="anthropic")
    _, messages, _ = to_anthropic(None, [Message.user("q"), foreign, unsigned, Message.assistant("a")], [])
    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "a"}]}


def test_anthropic_breakpoint_on_the_last_cacheable_block_of_the_locked_prefix() -> None:
    items: list[Item] = [
        Message.user("q"),
        Message.assistant("a"),
        Reasoning(text="t", signature="s", provider="anthropic"),  # prefix ends here: thinking cannot be cached
        Message.user("next"),
    ]
    system, messages, tools = to_anthropic(None, items, [TOOL], cache_prefix=3)
    assert system == []
    assert tools[0]["cache_control"] == EPHEMERAL  # no system prompt: the tools carry the first breakpoint
    assert messages[1]["content"][0] == {"type": "text", "text": "a", "cache_control": EPHEMERAL}
    assert "cache_control" not in messages[1]["content"][1]
    assert "cache_control" not in messages[2]["content"][0]
    breakpoints = json.dumps([system, messages, tools]).count("cache_control")
    assert breakpoints == 2  # of the four Anthropic allows


def test_anthropic_without_a_locked_prefix_caches_only_the_system_prompt() -> None:
    system, messages, tools = to_anthropic("S", [Message.user("q")], [TOOL])
    assert system == [{"type": "text", "text": "S", "cache_control": EPHEMERAL}]
    assert "cache_control" not in tools[0]
    assert "cache_control" not in json.dumps(messages)


def test_anthropic_tool_results_come_first_in_their_user_message() -> None:
    items: list[Item] = [Message.user("q"), call("c1"), Message.user("interjection"), result("c1", "r")]
    _, messages, _ = to_anthropic(None, items, [])
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]


def test_anthropic_system_messages_in_the_history_join_the_system_blocks() -> None:
    system, messages, _ = to_anthropic("S", [Message.system("extra rule"), Message.user("q")], [], caching=False)
    assert system == [{"type": "text", "text": "S"}, {"type": "text", "text": "extra rule"}]
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]


# -- Chat Completions ---------------------------------------------------------------------------------------


def test_chat_round_trip_keeps_everything_the_wire_can_carry() -> None:
    items = conversation(Reasoning(text="hidden", signature="s", provider="anthropic"))
    messages, tools = to_chat("Be brief.", items, [TOOL])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user", "assistant", "user"]
    assert messages[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{IMAGE.data}"},
    }
    function = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
    assert tools == [{"type": "function", "function": function}]
    system, back = from_chat(messages)
    assert system == "Be brief."
    # Chat Completions cannot carry reasoning back, nor a tool result's error flag (its content says it).
    expected = [i for i in items if not isinstance(i, Reasoning)]
    expected[5] = result("c2", "tool 'get_weather' failed: timeout")
    assert shape(back) == shape(expected)


def test_chat_assistant_with_several_text_blocks_uses_text_parts() -> None:
    items: list[Item] = [Message.user("q"), Message.assistant("one"), Message.assistant("two")]
    messages, _ = to_chat(None, items, [])
    parts = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert messages[1] == {"role": "assistant", "content": parts}
    assert shape(from_chat(messages)[1]) == shape(items)


def test_chat_malformed_arguments_go_back_as_the_model_wrote_them() -> None:
    bad = ToolCall(call_id="c1", name="get_weather", raw_arguments='{"location": "Par')
    messages, _ = to_chat(None, [Message.user("q"), bad, result("c1", "bad JSON")], [])
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"location": "Par'
    assert shape(from_chat(messages)[1])[1] == shape([bad])[0]


# -- Responses ----------------------------------------------------------------------------------------------


def native(item_id: str, **more: str) -> Any:
    return freeze_object({"provider": "openai-responses", "id": item_id, **more})


def test_responses_round_trip_sends_the_reasoning_item_unchanged() -> None:
    item = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Two cities."}],
        "encrypted_content": "gAAAAB",
    }
    reasoning = Reasoning(text="Two cities.", signature=reasoning_signature(item), provider="openai-responses")
    items = conversation(reasoning)
    # as the stream built them: the preamble and the calls keep their output item ids (and the phase)
    items[2] = Message(
        role="assistant", content=(TextPart(text="Let me check both."),), meta=native("msg_1", phase="commentary")
    )
    items[3] = ToolCall(
        call_id="c1", name="get_weather", arguments=freeze_object({"location": "Paris"}), meta=native("fc_1")
    )
    instructions, wire, tools = to_responses("Be brief.", items, [TOOL])
    assert instructions == "Be brief."
    assert wire[1] == item
    assert wire[2] == {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "phase": "commentary",
        "content": [{"type": "output_text", "text": "Let me check both.", "annotations": []}],
    }
    assert wire[3]["id"] == "fc_1"
    assert "id" not in wire[4]
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{IMAGE.data}", "detail": "auto"}
    assert wire[0]["content"][1] == image
    assert [w["type"] for w in wire] == [
        "message", "reasoning", "message", "function_call", "function_call",
        "function_call_output", "function_call_output", "message", "message", "message",
    ]  # fmt: skip
    assert tools[0]["strict"] is False
    _, back = from_responses(instructions, wire)
    expected = list(items)
    expected[6] = result("c2", "tool 'get_weather' failed: timeout")  # no error flag on the wire
    assert shape(back) == shape(expected)


def test_responses_parts_of_one_output_message_go_back_as_one_message() -> None:
    items: list[Item] = [
        Message.user("q"),
        Message(role="assistant", content=(TextPart(text="Part one."),), meta=native("msg_2", phase="final_answer")),
        Message(role="assistant", content=(TextPart(text="I can't."),), meta=native("msg_2", content="refusal")),
        Message(role="assistant", content=(TextPart(text="other"),), meta=native("msg_3")),
    ]
    _, wire, _ = to_responses(None, items, [])
    assert wire[1:] == [
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_2",
            "status": "completed",
            "phase": "final_answer",
            "content": [
                {"type": "output_text", "text": "Part one.", "annotations": []},
                {"type": "refusal", "refusal": "I can't."},
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_3",
            "status": "completed",
            "content": [{"type": "output_text", "text": "other", "annotations": []}],
        },
    ]
    # ids another provider put in meta are not this API's: the message goes back without them
    foreign = Message(role="assistant", content=(TextPart(text="hi"),), meta=freeze_object({"id": "msg_x"}))
    assert "id" not in to_responses(None, [Message.user("q"), foreign], [])[1][1]


def rs(item_id: str = "rs_1") -> Reasoning:
    signature = reasoning_signature({"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": "gA"})
    return Reasoning(text="", signature=signature, provider="openai-responses")


def test_responses_leaves_out_reasoning_the_api_would_reject_without_its_following_item() -> None:
    kept_msg = Message(role="assistant", content=(TextPart(text="a"),), meta=native("msg_1"))
    cases: list[tuple[list[Item], list[str]]] = [
        # the recorded HTTP 400: an rs_ reasoning followed by an assistant message that lost its id
        ([Message.user("q"), rs(), Message.assistant("rebuilt"), Message.user("more")], ["message"] * 3),
        ([Message.user("q"), rs()], ["message"]),  # the reply ended with the reasoning
        ([Message.user("q"), rs(), Message.user("next")], ["message", "message"]),
        ([Message.user("q"), rs(), kept_msg], ["message", "reasoning", "message"]),
        ([Message.user("q"), rs(), rs("rs_2"), kept_msg], ["message", "reasoning", "reasoning", "message"]),
        # another server's reasoning (DeepSeek: uuid ids) before an id-less call is its own business: kept
        (
            [Message.user("q"), rs("fa6f3a83"), call("c1"), result("c1", "r")],
            ["message", "reasoning", "function_call", "function_call_output"],
        ),
    ]  # fmt: skip
    for items, kinds in cases:
        _, wire, _ = to_responses(None, items, [])
        assert [w["type"] for w in wire] == kinds, items


def test_responses_drops_reasoning_of_other_providers() -> None:
    anthropic = Reasoning(text="t", signature="EqQB", provider="anthropic")
    _, wire, _ = to_responses(None, [Message.user("q"), anthropic, Message.assistant("a")], [])
    assert [w["type"] for w in wire] == ["message", "message"]


def test_responses_reasoning_goes_back_whole_less_its_null_fields() -> None:
    done = {
        "id": "rs_9",
        "type": "reasoning",
        "status": "completed",
        "content": None,
        "encrypted_content": "gAAAAB",
        "summary": [{"type": "summary_text", "text": "t"}],
        "future_field": {"kept": True},
    }
    reasoning = Reasoning(text="t", signature=reasoning_signature(done), provider="openai-responses")
    answer = Message(role="assistant", content=(TextPart(text="a"),), meta=native("msg_9"))
    _, wire, _ = to_responses(None, [Message.user("q"), reasoning, answer], [])
    assert wire[1] == {k: v for k, v in done.items() if v is not None}
