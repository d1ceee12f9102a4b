"""AnthropicClient against the Messages API wire format, through full Worker runs (real SDK, loopback server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from hookloop import Cancelled, Finished, Message, Reasoning, ToolCall, ToolResult, Usage, Worker
from hookloop._frozen import thaw_object
from hookloop.providers._errors import (
    AuthenticationError,
    ContextOverflowError,
    OverloadedError,
    ProviderConnectionError,
    RateLimitError,
)
from hookloop.providers.anthropic import AnthropicClient
from hookloop.providers.base import LLMRequest
from hookloop.stream import TextDelta
from providers.wire import HookLog, WireServer, get_weather

pytestmark = pytest.mark.anyio

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[AnthropicClient]:
    async with AnthropicClient(
        "claude-sonnet-4-6", api_key="sk-ant-test", base_url=server.base_url, max_retries=0
    ) as client:
        yield client


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}


async def test_text_reply_streams_every_delta_through_the_hooks(server: WireServer, client: AnthropicClient) -> None:
    server.sse("anthropic/text")
    worker = Worker(client, system="Be brief.")
    log = HookLog(worker)
    outcome = await worker.run("Hi")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Hello, world!"
    assert log.text == ["Hello", ", world", "!"]
    assert log.chunks == ["BlockStart", "TextDelta", "TextDelta", "TextDelta", "BlockStop", "UsageEvent", "StopEvent"]
    assert outcome.usage == Usage(25, 15, 0, 0)
    (seen,) = server.requests
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert "sk-ant-test" in (
        seen.headers.get("x-api-key"),
        seen.headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert seen.body == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 8192,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    }


async def test_tool_call_runs_and_its_result_goes_back_in_the_next_request(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/tool")
    server.sse("anthropic/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    outcome = await worker.run("Weather in SF?")
    assert isinstance(outcome, Finished)
    call_id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    args = {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert log.pre_tool == [(call_id, "get_weather", args)]
    assert "".join(log.fragments) == '{"location": "San Francisco, CA", "unit": "fahrenheit"}'
    assert "" not in log.fragments  # the empty first input_json_delta fires no hook
    history = worker.history
    assert [type(i).__name__ for i in history] == ["Message", "Message", "ToolCall", "ToolResult", "Message"]
    assert history[2] == ToolCall(call_id=call_id, name="get_weather", arguments=history[2].arguments, id=history[2].id)
    assert dict(history[2].arguments) == args
    assert outcome.usage == Usage(472 + 25, 89 + 15)
    second = server.requests[1].body
    assert second["tools"] == [
        {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "input_schema": thaw_object(get_weather.meta.input_schema),
            "cache_control": EPHEMERAL,  # no system prompt: the breakpoint caches the tools
        }
    ]
    assert second["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Okay, let's check the weather for San Francisco, CA:"},
                {"type": "tool_use", "id": call_id, "name": "get_weather", "input": args},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "San Francisco, CA: 18 fahrenheit"}],
        },
    ]


async def test_parallel_tool_calls_run_and_come_back_as_one_user_message(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/parallel")
    server.sse("anthropic/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    await worker.run("Paris and Tokyo?")
    assert [(c, a["location"]) for c, _, a in log.pre_tool] == [("toolu_01Paris", "Paris"), ("toolu_01Tokyo", "Tokyo")]
    results = [i for i in worker.history if isinstance(i, ToolResult)]
    assert [r.content for r in results] == ["Paris: 18 celsius", "Tokyo: 18 celsius"]
    user_turn = server.requests[1].body["messages"][2]
    assert user_turn == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01Paris", "content": "Paris: 18 celsius"},
            {"type": "tool_result", "tool_use_id": "toolu_01Tokyo", "content": "Tokyo: 18 celsius"},
        ],
    }


async def test_thinking_and_redacted_thinking_are_kept_and_sent_back_unchanged(server: WireServer) -> None:
    server.sse("anthropic/thinking_tool")
    server.sse("anthropic/text")
    signature = (
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2T7rJ9X9q6c2sQ0mqMJHjNQ7f6vjrf2PvP3ndLAjj8tnwGdn1oA3A+"
        "PKlVvf8ibfIfnr0bSoHrPlW4Eq7yHtqz1agv0Z7SaiGvtQ=="
    )
    redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN4Hp"
    async with AnthropicClient(
        "claude-sonnet-4-6", api_key="k", base_url=server.base_url, thinking_budget=2048, max_tokens=16000
    ) as client:
        worker = Worker(client, tools=[get_weather])
        log = HookLog(worker)
        outcome = await worker.run("Weather in Paris?")
    assert isinstance(outcome, Finished)
    assert log.text == ["Hello", ", world", "!"]  # thinking fires no on_text_delta
    reasoning = [i for i in worker.history if isinstance(i, Reasoning)]
    assert [(r.text, r.provider) for r in reasoning] == [
        ("The user wants the weather in Paris. I should call get_weather.", "anthropic"),
        ("", "anthropic"),
    ]
    assert reasoning[0].signature == signature
    assert reasoning[1].redacted == redacted
    assert reasoning[1].signature is None
    first, second = (r.body for r in server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == 16000
    assert second["messages"][1]["content"] == [
        {
            "type": "thinking",
            "thinking": "The user wants the weather in Paris. I should call get_weather.",
            "signature": signature,
        },
        {"type": "redacted_thinking", "data": redacted},
        {"type": "tool_use", "id": "toolu_01ThinkParis", "name": "get_weather", "input": {"location": "Paris"}},
    ]


async def test_cache_breakpoints_sit_on_the_system_prompt_and_the_locked_prefix(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/text")
    server.sse("anthropic/cached_text")
    worker = Worker(client, system="You are a weather bot.", tools=[get_weather])
    await worker.run("Hi")
    worker.lock_cache()
    outcome = await worker.run("Weather in Paris?")
    assert isinstance(outcome, Finished)
    assert outcome.usage == Usage(input_tokens=12, output_tokens=11, cache_read_tokens=1800, cache_write_tokens=248)
    body = server.requests[1].body
    assert body["system"] == [{"type": "text", "text": "You are a weather bot.", "cache_control": EPHEMERAL}]
    assert "cache_control" not in body["tools"][0]  # the system breakpoint already covers the tools
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello, world!", "cache_control": EPHEMERAL}]},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    ]


async def test_caching_can_be_turned_off(server: WireServer) -> None:
    server.sse("anthropic/text")
    async with AnthropicClient("m", api_key="k", base_url=server.base_url, caching=False) as client:
        await Worker(client, system="S").run("Hi")
    assert server.requests[0].body["system"] == [{"type": "text", "text": "S"}]


async def test_error_event_mid_stream_raises_overloaded_and_fires_on_abort(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/error_midstream")
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(OverloadedError) as caught:
        await worker.run("Hi")
    error = caught.value
    assert (error.provider, error.retryable, error.status_code, error.error_type) == (
        "anthropic",
        True,
        None,
        "overloaded_error",
    )
    assert "Overloaded" in str(error)
    assert log.text == ["Let me"]
    assert log.aborts == [str(error)]
    assert [type(i).__name__ for i in worker.history] == ["Message"]  # the partial reply is not kept


async def test_http_429_becomes_rate_limit_error_with_retry_after(server: WireServer, client: AnthropicClient) -> None:
    server.error(
        429, error_body("rate_limit_error", "Number of request tokens has exceeded your rate limit"), retry_after="7"
    )
    with pytest.raises(RateLimitError) as caught:
        await Worker(client).run("Hi")
    error = caught.value
    assert (error.status_code, error.retry_after, error.retryable, error.request_id) == (429, 7.0, True, "req_test")
    assert "rate limit" in str(error)
    assert len(server.requests) == 1  # max_retries=0


async def test_the_sdk_retries_a_429_after_the_time_it_asks_for(server: WireServer) -> None:
    server.error(429, error_body("rate_limit_error", "slow down"), retry_after_ms="1", retry_after="1")
    server.sse("anthropic/text")
    async with AnthropicClient("m", api_key="k", base_url=server.base_url, max_retries=1) as client:
        outcome = await Worker(client).run("Hi")
    assert isinstance(outcome, Finished)
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1"]


@pytest.mark.parametrize(
    ("status", "kind", "message", "expected", "retryable"),
    [
        (529, "overloaded_error", "Overloaded", OverloadedError, True),
        (401, "authentication_error", "invalid x-api-key", AuthenticationError, False),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum",
            ContextOverflowError,
            False,
        ),
    ],
)
async def test_http_errors_map_to_provider_errors(
    server: WireServer,
    client: AnthropicClient,
    status: int,
    kind: str,
    message: str,
    expected: type[Exception],
    retryable: bool,
) -> None:
    server.error(status, error_body(kind, message))
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(expected) as caught:
        await worker.run("Hi")
    assert caught.value.retryable is retryable  # type: ignore[attr-defined]
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert message in str(caught.value)
    assert isinstance(caught.value.__cause__, Exception)  # the SDK error, kept by raise … from
    assert log.aborts == [str(caught.value)]


async def test_a_connection_cut_mid_message_is_a_connection_error(server: WireServer, client: AnthropicClient) -> None:
    server.sse("anthropic/tool", mode="cut", keep=8)
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    with pytest.raises(ProviderConnectionError) as caught:
        await worker.run("Weather?")
    assert caught.value.retryable
    assert log.pre_tool == []  # a half-streamed tool call never runs


async def test_a_stream_that_ends_before_message_stop_is_a_connection_error(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/text", keep=5)  # a complete HTTP body that stops mid-message
    with pytest.raises(ProviderConnectionError, match="before message_stop"):
        await Worker(client).run("Hi")


async def test_cancelling_the_run_closes_the_http_stream(server: WireServer, client: AnthropicClient) -> None:
    server.sse("anthropic/text", mode="hang", keep=4)
    worker = Worker(client)

    def cancel_on_first_delta(delta: TextDelta) -> None:
        worker.cancel()

    worker.add_on_text_delta_hook(cancel_on_first_delta)  # type: ignore[arg-type]
    with pytest.raises(Cancelled):
        await worker.run("Hi")
    with anyio.fail_after(5):
        await server.client_closed.wait()


async def test_closing_the_event_iterator_closes_the_http_stream(server: WireServer, client: AnthropicClient) -> None:
    server.sse("anthropic/text", mode="hang", keep=4)
    request = LLMRequest(system=None, items=(Message.user("Hi"),), tools=())
    events = client.stream(request)
    async for event in events:
        if isinstance(event, TextDelta):
            break
    await events.aclose()  # type: ignore[attr-defined]
    with anyio.fail_after(5):
        await server.client_closed.wait()
