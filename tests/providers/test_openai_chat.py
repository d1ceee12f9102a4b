"""OpenAIChatClient against the Chat Completions wire format, through full Worker runs (real SDK, loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from hookloop import Cancelled, Finished, Reasoning, ToolResult, Usage, Worker
from hookloop.providers._errors import (
    AuthenticationError,
    ContextOverflowError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
)
from hookloop.providers.openai_chat import OpenAIChatClient
from hookloop.stream import TextDelta
from providers.wire import HookLog, WireServer, get_weather

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[OpenAIChatClient]:
    async with OpenAIChatClient("gpt-4.1", api_key="sk-test", base_url=f"{server.base_url}/v1", max_retries=0) as c:
        yield c


def error_body(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


async def test_text_reply_with_usage_and_cached_tokens(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/text")
    worker = Worker(client, system="Be brief.", max_tokens=256)
    log = HookLog(worker)
    outcome = await worker.run("Hi")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Hello, world!"
    assert log.text == ["Hello", ", world", "!"]  # the empty role chunk starts no block
    assert log.chunks == ["BlockStart", "TextDelta", "TextDelta", "TextDelta", "BlockStop", "UsageEvent", "StopEvent"]
    # prompt_tokens counts the cached ones; hookloop reports them apart
    assert outcome.usage == Usage(input_tokens=1290 - 1152, output_tokens=4, cache_read_tokens=1152)
    (seen,) = server.requests
    assert (seen.path, seen.headers["authorization"]) == ("/v1/chat/completions", "Bearer sk-test")
    assert seen.body == {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 256,
    }


async def test_parallel_tool_calls_interleaved_by_index_each_keep_their_arguments(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/parallel")
    server.sse("chat/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    outcome = await worker.run("Paris and Tokyo?")
    assert isinstance(outcome, Finished)
    assert log.pre_tool == [
        ("call_Paris01", "get_weather", {"location": "Paris"}),
        ("call_Tokyo02", "get_weather", {"location": "Tokyo", "unit": "celsius"}),
    ]
    assert outcome.usage == Usage(95, 40) + Usage(1290 - 1152, 4, 1152)
    second = server.requests[1].body
    assert second["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The current weather in a city.",
                "parameters": second["tools"][0]["function"]["parameters"],
            },
        }
    ]
    assert second["tools"][0]["function"]["parameters"]["required"] == ["location"]
    assert second["messages"] == [
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Paris01",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
                },
                {
                    "id": "call_Tokyo02",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Tokyo", "unit": "celsius"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_Paris01", "content": "Paris: 18 celsius"},
        {"role": "tool", "tool_call_id": "call_Tokyo02", "content": "Tokyo: 18 celsius"},
    ]


async def test_one_tool_call_streamed_in_fragments(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/tool")
    server.sse("chat/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    await worker.run("Paris?")
    assert log.fragments == ['{"', "location", '":"', "Paris", '"}']
    assert [i.content for i in worker.history if isinstance(i, ToolResult)] == ["Paris: 18 celsius"]


async def test_ollama_style_complete_tool_call_with_finish_reason_stop(server: WireServer) -> None:
    server.sse("chat/ollama_tool")
    server.sse("chat/text")
    async with OpenAIChatClient(
        "llama3.1:8b", api_key="unused", base_url=f"{server.base_url}/v1", provider="openai-compatible"
    ) as client:
        worker = Worker(client, tools=[get_weather])
        log = HookLog(worker)
        outcome = await worker.run("Paris?")
    assert isinstance(outcome, Finished)
    assert log.pre_tool == [("call_ym6jdgi5", "get_weather", {"location": "Paris"})]
    assert log.chunks[:4] == ["BlockStart", "ToolCallDelta", "BlockStop", "UsageEvent"]
    assert server.requests[0].body.get("max_tokens") is None  # nothing sent the server did not ask for


async def test_reasoning_content_of_compatible_servers_becomes_thinking(server: WireServer) -> None:
    server.sse("chat/reasoning_text")
    async with OpenAIChatClient(
        "deepseek-r1", api_key="k", base_url=server.base_url, provider="openai-compatible"
    ) as c:
        worker = Worker(c)
        log = HookLog(worker)
        outcome = await worker.run("2+2?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "4"
    assert log.text == ["4"]
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert (reasoning.text, reasoning.provider) == ("Two plus two is four.", "openai-compatible")


async def test_error_chunk_mid_stream_raises_and_fires_on_abort(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/error_midstream")
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(ProviderError) as caught:
        await worker.run("Hi")
    assert (caught.value.error_type, caught.value.retryable, caught.value.status_code) == ("server_error", True, None)
    assert "The server had an error" in str(caught.value)
    assert log.text == ["Let me"]
    assert log.aborts == [str(caught.value)]


@pytest.mark.parametrize(
    ("status", "body", "expected", "retryable"),
    [
        (503, error_body("The engine is currently overloaded", "server_error", None), OverloadedError, True),
        (
            401,
            error_body("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key"),
            AuthenticationError,
            False,
        ),
        (
            400,
            error_body(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 "
                "tokens. Please reduce the length of the messages.",
                "invalid_request_error",
                "context_length_exceeded",
            ),
            ContextOverflowError,
            False,
        ),
    ],
)
async def test_http_errors_map_to_provider_errors(
    server: WireServer,
    client: OpenAIChatClient,
    status: int,
    body: dict[str, Any],
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    server.error(status, body)
    with pytest.raises(expected) as caught:
        await Worker(client).run("Hi")
    assert (caught.value.status_code, caught.value.retryable) == (status, retryable)
    assert body["error"]["message"] in str(caught.value)


async def test_http_429_with_retry_after(server: WireServer, client: OpenAIChatClient) -> None:
    server.error(429, error_body("Rate limit reached for gpt-4.1", "requests", "rate_limit_exceeded"), retry_after="20")
    with pytest.raises(RateLimitError) as caught:
        await Worker(client).run("Hi")
    assert (caught.value.retry_after, caught.value.retryable, caught.value.request_id) == (20.0, True, "req_test")


async def test_the_sdk_retries_a_503(server: WireServer) -> None:
    server.error(503, error_body("overloaded", "server_error", None), retry_after_ms="1")
    server.sse("chat/text")
    async with OpenAIChatClient("m", api_key="k", base_url=server.base_url, max_retries=2) as client:
        outcome = await Worker(client).run("Hi")
    assert isinstance(outcome, Finished)
    assert len(server.requests) == 2


async def test_a_cut_stream_is_a_connection_error(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/parallel", mode="cut", keep=4)
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    with pytest.raises(ProviderConnectionError):
        await worker.run("Paris and Tokyo?")
    assert log.pre_tool == []


async def test_a_stream_without_finish_reason_is_a_connection_error(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/text", keep=3)
    with pytest.raises(ProviderConnectionError, match="before a finish_reason"):
        await Worker(client).run("Hi")


async def test_cancelling_the_run_closes_the_http_stream(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/text", mode="hang", keep=2)
    worker = Worker(client)

    def cancel(delta: TextDelta) -> None:
        worker.cancel()

    worker.add_on_text_delta_hook(cancel)  # type: ignore[arg-type]
    with pytest.raises(Cancelled):
        await worker.run("Hi")
    with anyio.fail_after(5):
        await server.client_closed.wait()


async def test_a_tool_call_that_never_got_a_name_is_answered_not_lost(server: WireServer) -> None:
    server.sse("chat/nameless_tool")
    server.sse("chat/text")
    async with OpenAIChatClient("local", api_key="k", base_url=server.base_url, stream_usage=False) as client:
        worker = Worker(client, tools=[get_weather])
        await worker.run("?")
    (result,) = [i for i in worker.history if isinstance(i, ToolResult)]
    assert (result.call_id, result.is_error) == ("call_nameless", True)
    assert "unknown tool" in result.content
    assert "stream_options" not in server.requests[0].body
