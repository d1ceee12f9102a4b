"""OpenAIResponsesClient against the Responses API wire format, through full Worker runs (real SDK, loopback)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import pytest

from hookloop import Cancelled, Finished, Reasoning, Usage, Worker
from hookloop.providers._errors import ProviderConnectionError, ProviderError, RateLimitError
from hookloop.providers.openai_responses import OpenAIResponsesClient
from hookloop.stream import TextDelta
from providers.wire import HookLog, WireServer, get_weather, sse_events

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[OpenAIResponsesClient]:
    async with OpenAIResponsesClient("o4-mini", api_key="sk-test", base_url=server.base_url, max_retries=0) as c:
        yield c


def reasoning_item() -> dict[str, object]:
    """The reasoning item exactly as ``response.output_item.done`` delivered it in the fixture."""
    for event in sse_events("responses/reasoning_tools"):
        data = json.loads(event.split(b"data: ", 1)[1])
        if data["type"] == "response.output_item.done" and data["item"]["type"] == "reasoning":
            item: dict[str, object] = data["item"]
            return item
    raise AssertionError("no reasoning item in the fixture")


async def test_text_reply(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/text")
    worker = Worker(client, system="Be brief.", max_tokens=300)
    log = HookLog(worker)
    outcome = await worker.run("Hi")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Hello, world!"
    assert log.text == ["Hello", ", world", "!"]
    assert log.chunks == ["BlockStart", "TextDelta", "TextDelta", "TextDelta", "BlockStop", "UsageEvent", "StopEvent"]
    assert outcome.usage == Usage(1290 - 1152, 4, 1152)
    (seen,) = server.requests
    assert seen.path == "/responses"
    assert seen.body == {
        "model": "o4-mini",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "instructions": "Be brief.",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 300,
        "stream": True,
    }


async def test_reasoning_and_parallel_function_calls_are_sent_back_unchanged(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/reasoning_tools")
    server.sse("responses/final_text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    outcome = await worker.run("Paris and Tokyo?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Paris: 18°C. Tokyo: 22°C."
    assert log.pre_tool == [
        ("call_Ba9rH3sN4pTqNUC1MGYgKy0M", "get_weather", {"location": "Paris"}),
        ("call_Kt3kqUoyN7QKfQzHCAQXn6Ho", "get_weather", {"location": "Tokyo", "unit": "celsius"}),
    ]
    assert log.fragments == ['{"location', '":"Paris"}', '{"location":"Tok', 'yo","unit":"celsius"}']
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "**Checking the weather**\n\nThe user wants Paris and Tokyo.\n\nCall the tool twice."
    assert reasoning.provider == "openai-responses"
    assert outcome.usage == Usage(320, 180) + Usage(610 - 320, 12, 320)
    second = server.requests[1].body
    assert second["tools"][0] == {
        "type": "function",
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": second["tools"][0]["parameters"],
        "strict": False,
    }
    assert second["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Paris and Tokyo?"}]},
        reasoning_item(),  # id, summary and encrypted_content, unchanged
        {
            "type": "function_call",
            "call_id": "call_Ba9rH3sN4pTqNUC1MGYgKy0M",
            "name": "get_weather",
            "id": "fc_6820f3859b8c81918e7b4ba0c0c5a51f",  # the output item id, kept
            "arguments": '{"location": "Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "call_Kt3kqUoyN7QKfQzHCAQXn6Ho",
            "name": "get_weather",
            "id": "fc_6820f385a6ac8191bc2ddf3ad3a9a1d7",
            "arguments": '{"location": "Tokyo", "unit": "celsius"}',
        },
        {"type": "function_call_output", "call_id": "call_Ba9rH3sN4pTqNUC1MGYgKy0M", "output": "Paris: 18 celsius"},
        {"type": "function_call_output", "call_id": "call_Kt3kqUoyN7QKfQzHCAQXn6Ho", "output": "Tokyo: 18 celsius"},
    ]


async def test_incomplete_response_stops_with_max_tokens(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/incomplete")
    worker = Worker(client)
    stops: list[object] = []
    worker.subscribe(lambda e: stops.append(e) if type(e).__name__ == "StopEvent" else None)
    outcome = await worker.run("Tell me everything")
    assert isinstance(outcome, Finished)
    assert outcome.text == "This answer is cut"
    assert [getattr(s, "reason", None) for s in stops] == ["max_tokens"]


async def test_error_event_mid_stream(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/error_midstream")
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(ProviderError) as caught:
        await worker.run("Hi")
    assert (caught.value.error_type, caught.value.retryable) == ("server_error", True)
    assert log.text == ["Let me"]
    assert log.aborts == [str(caught.value)]


async def test_response_failed_with_rate_limit(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/failed")
    with pytest.raises(RateLimitError, match="Rate limit reached"):
        await Worker(client).run("Hi")


async def test_http_429_with_retry_after(server: WireServer, client: OpenAIResponsesClient) -> None:
    body = {"error": {"message": "Rate limit", "type": "requests", "param": None, "code": None}}
    server.error(429, body, retry_after="3")
    with pytest.raises(RateLimitError) as caught:
        await Worker(client).run("Hi")
    assert (caught.value.retry_after, caught.value.status_code) == (3.0, 429)


async def test_a_cut_stream_is_a_connection_error(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/reasoning_tools", mode="cut", keep=14)
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    with pytest.raises(ProviderConnectionError):
        await worker.run("Hi")
    assert log.pre_tool == []


async def test_a_stream_without_response_completed_is_a_connection_error(
    server: WireServer, client: OpenAIResponsesClient
) -> None:
    server.sse("responses/text", keep=6)
    with pytest.raises(ProviderConnectionError, match=r"before response\.completed"):
        await Worker(client).run("Hi")


async def test_cancelling_the_run_closes_the_http_stream(server: WireServer, client: OpenAIResponsesClient) -> None:
    server.sse("responses/text", mode="hang", keep=5)
    worker = Worker(client)

    def cancel(delta: TextDelta) -> None:
        worker.cancel()

    worker.add_on_text_delta_hook(cancel)  # type: ignore[arg-type]
    with pytest.raises(Cancelled):
        await worker.run("Hi")
    with anyio.fail_after(5):
        await server.client_closed.wait()
