"""OpenAIResponsesClient: every output item keeps its identity across requests (full Worker runs over the
loopback wire). OpenAI answers HTTP 400 "reasoning was provided without its required following item" when
the assistant message after a reasoning item comes back without its ``msg_…`` id; that shape appears in any
second run, any on_turn_end continuation, and any preamble before a call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hookloop import (
    DocumentPart,
    Finished,
    ImagePart,
    Message,
    ProviderBlock,
    Reasoning,
    TextPart,
    ToolCall,
    ToolOutput,
    ToolResult,
    Worker,
    tool,
)
from hookloop.hooks import ContinueWithMessages, Finish, TurnEndInfo
from hookloop.providers._chat_wire import to_chat
from hookloop.providers._errors import InvalidRequestError, ProviderError, RateLimitError
from hookloop.providers.openai_chat import OpenAIChatClient
from hookloop.providers.openai_responses import OpenAIResponsesClient
from providers.wire import HookLog, Reply, WireServer, sse_events

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKJcfsj6IK"


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[OpenAIResponsesClient]:
    async with OpenAIResponsesClient("gpt-5.5", api_key="sk-test", base_url=server.base_url, max_retries=0) as c:
        yield c


def done_items(name: str) -> list[dict[str, Any]]:
    """The items of fixture ``name`` exactly as ``response.output_item.done`` delivered them."""
    found = []
    for event in sse_events(name):
        data = json.loads(event.split(b"data: ", 1)[1])
        if data["type"] == "response.output_item.done":
            found.append(data["item"])
    return found


@tool(name="get_weather")
async def weather(location: str) -> str:
    """The current weather in a city."""
    return f"{location}: 18 celsius"


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


async def test_a_preamble_before_a_call_goes_back_with_its_ids_phase_and_encrypted_reasoning(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/preamble_call")
    server.sse("responses/final_text")
    worker = Worker(client, tools=[weather])
    log = HookLog(worker)
    outcome = await worker.run("Weather in Paris?")
    assert isinstance(outcome, Finished)
    assert log.pre_tool == [("call_pre1", "get_weather", {"location": "Paris"})]
    reasoning_done, message_done, call_done = done_items("responses/preamble_call")
    assert reasoning_done["encrypted_content"] == "gAAAA-done"  # the added event carried an earlier one
    preamble = next(i for i in worker.history if isinstance(i, Message) and i.role == "assistant")
    assert dict(preamble.meta) == {"provider": "openai-responses", "id": "msg_pre1", "phase": "commentary"}
    (call,) = [i for i in worker.history if isinstance(i, ToolCall)]
    assert dict(call.meta) == {"provider": "openai-responses", "id": "fc_pre1"}
    assert server.requests[1].body["input"] == [
        user("Weather in Paris?"),
        reasoning_done,  # whole, as output_item.done delivered it
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_pre1",
            "status": "completed",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "I'll check the weather for Paris.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_pre1",
            "name": "get_weather",
            "id": "fc_pre1",
            "arguments": '{"location": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_pre1", "output": "Paris: 18 celsius"},
    ]
    assert message_done["id"] == "msg_pre1"
    assert call_done["id"] == "fc_pre1"


async def test_a_second_run_sends_the_answer_back_with_its_id_after_its_reasoning(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/reasoning_answer")
    server.sse("responses/final_text")
    worker = Worker(client)
    first = await worker.run("What is the meaning of life?")
    assert isinstance(first, Finished)
    assert first.text == "It depends on perspective."
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "Think about meaning."
    await worker.run("Anything to add?")
    reasoning_done, _ = done_items("responses/reasoning_answer")
    assert server.requests[1].body["input"] == [
        user("What is the meaning of life?"),
        reasoning_done,
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_ans1",
            "status": "completed",
            "phase": "final_answer",
            "content": [{"type": "output_text", "text": "It depends on perspective.", "annotations": []}],
        },
        user("Anything to add?"),
    ]


async def test_an_on_turn_end_continuation_sends_the_answer_back_with_its_id(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/reasoning_answer")
    server.sse("responses/final_text")
    worker = Worker(client)

    def once_more(info: TurnEndInfo) -> ContinueWithMessages | Finish:
        return Finish() if info.stop_hook_active else ContinueWithMessages("Say it in one word.")

    worker.add_on_turn_end_hook(once_more)
    await worker.run("Meaning?")
    sent = server.requests[1].body["input"]
    assert [(e["type"], e.get("id")) for e in sent] == [
        ("message", None),
        ("reasoning", "rs_ans1"),
        ("message", "msg_ans1"),
        ("message", None),
    ]


async def test_built_in_tool_items_and_refusals_round_trip_in_place(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/web_search_refusal")
    server.sse("responses/final_text")
    worker = Worker(client)
    log = HookLog(worker)
    outcome = await worker.run("Weather at my address?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Sunny, 18°C.\nI won't share the exact address."
    search_done, _ = done_items("responses/web_search_refusal")
    assert isinstance(worker.history[1], ProviderBlock)
    assert (worker.history[1].provider, worker.history[1].data) == ("openai-responses", search_done)
    assert "NativeBlock" in log.chunks
    await worker.run("Thanks")
    assert server.requests[1].body["input"] == [
        user("Weather at my address?"),
        search_done,  # verbatim, where it came
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_ws1",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Sunny, 18°C.", "annotations": []},
                {"type": "refusal", "refusal": "I won't share the exact address."},
            ],
        },
        user("Thanks"),
    ]
    # a Chat Completions client has no use for the block: it is left out, not a crash
    messages, _ = to_chat(None, list(worker.history), [])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_an_output_item_of_a_type_hookloop_does_not_know_is_kept_whole(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    item = {"id": "fx_1", "type": "frobnicate_call", "status": "completed", "payload": {"level": 3}}
    events = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": item | {"status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "item_id": "m", "delta": "ok"},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": [], "usage": None}},
    ]
    chunks = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    server.replies.append(Reply(200, {"content-type": "text/event-stream"}, chunks))
    worker = Worker(client)
    outcome = await worker.run("?")
    assert isinstance(outcome, Finished)
    block = worker.history[1]
    assert isinstance(block, ProviderBlock)
    assert block.data == item


@tool(name="get_weather")
async def weather_map(location: str, unit: str = "celsius") -> ToolOutput:
    """The current weather in a city, with its map."""
    return ToolOutput(
        parts=[
            TextPart(text=f"{location}: 18 {unit}"),
            ImagePart(media_type="image/png", data=PNG),
            DocumentPart(media_type="application/pdf", data=PDF, title="forecast.pdf"),
        ]
    )


async def test_tool_result_parts_become_function_call_output_content(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/preamble_call")
    server.sse("responses/final_text")
    worker = Worker(client, tools=[weather_map])
    await worker.run("Weather in Paris?")
    (result,) = [i for i in worker.history if isinstance(i, ToolResult)]
    assert "[image: image/png" in result.content  # what hooks saw: the text rendering
    output = server.requests[1].body["input"][-1]
    assert output == {
        "type": "function_call_output",
        "call_id": "call_pre1",
        "output": [
            {"type": "input_text", "text": "Paris: 18 celsius"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "forecast.pdf"},
        ],
    }


@pytest.mark.parametrize("images", [True, False])
async def test_chat_tool_result_images_go_in_a_user_message_after_the_tool_messages(
    server: WireServer, images: bool
) -> None:
    server.sse("chat/parallel")  # two get_weather calls
    server.sse("chat/text")
    async with OpenAIChatClient(
        "gpt-4.1", api_key="k", base_url=server.base_url, max_retries=0, tool_result_images=images
    ) as client:
        worker = Worker(client, tools=[weather_map])
        outcome = await worker.run("Paris and Tokyo?")
    assert isinstance(outcome, Finished)
    sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"] + (["user"] if images else [])
    paris = sent[2]["content"]
    assert paris.startswith("Paris: 18 celsius\n[image: image/png, 70 bytes] (")
    assert "[document 'forecast.pdf': application/pdf, 15 bytes] (omitted: not supported by this API)" in paris
    if images:
        assert "(sent in the user message after the tool results)" in paris
        content = sent[4]["content"]
        urls = [c["image_url"]["url"] for c in content if c["type"] == "image_url"]
        assert urls == [f"data:image/png;base64,{PNG}"] * 2
        labels = [c["text"] for c in content if c["type"] == "text"]
        assert labels[1:] == [
            "[image: image/png, 70 bytes] from tool call call_Paris01:",
            "[image: image/png, 70 bytes] from tool call call_Tokyo02:",
        ]
    else:
        assert paris.split("\n")[1] == "[image: image/png, 70 bytes] (omitted: images are not sent to this model)"


@pytest.mark.parametrize(
    ("event", "expected", "retryable"),
    [
        ({"type": "error", "code": "429", "message": "slow down", "param": None}, RateLimitError, True),
        ({"type": "error", "code": "invalid_prompt", "message": "bad", "param": None}, InvalidRequestError, False),
        ({"type": "error", "error": {"code": 400, "message": "no"}}, InvalidRequestError, False),
        ({"type": "error", "code": None, "message": "upstream 502", "status": 502}, ProviderError, True),
    ],
)  # fmt: skip
async def test_error_events_classify_by_their_code(
    server: WireServer,
    client: OpenAIResponsesClient,
    event: dict[str, Any],
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}}
    chunks = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (created, event)]
    server.replies.append(Reply(200, {"content-type": "text/event-stream"}, chunks))
    with pytest.raises(expected) as caught:
        await Worker(client).run("?")
    assert type(caught.value) is expected
    assert caught.value.retryable is retryable


async def test_malformed_deltas_are_dropped_not_passed_on(server: WireServer, client: OpenAIResponsesClient) -> None:
    events = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "m", "delta": None},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "m", "delta": "ok"},
        {"type": "response.reasoning_summary_text.delta", "output_index": 1, "summary_index": 0, "delta": 5},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": [], "usage": None}},
    ]  # fmt: skip
    chunks = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    server.replies.append(Reply(200, {"content-type": "text/event-stream"}, chunks))
    worker = Worker(client)
    outcome = await worker.run("?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "ok"
    assert not any(isinstance(i, Reasoning) for i in worker.history)
