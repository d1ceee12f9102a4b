"""Anthropic ``event: error`` inside a 200 stream: classified by the error's type, through full Worker runs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hookloop import Worker
from hookloop.providers._errors import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    OverloadedError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from hookloop.providers.anthropic import AnthropicClient
from providers.wire import HookLog, Reply, WireServer

pytestmark = pytest.mark.anyio

_START = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01E","type":"message",'
    b'"role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
)
_TEXT = (
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
)


def error_stream(server: WireServer, data: bytes) -> None:
    headers = {"content-type": "text/event-stream; charset=utf-8"}
    server.replies.append(Reply(200, headers, [_START, _TEXT, b"event: error\ndata: " + data + b"\n\n"]))


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[AnthropicClient]:
    async with AnthropicClient("m", api_key="k", base_url=server.base_url, max_retries=0) as client:
        yield client


@pytest.mark.parametrize(
    ("kind", "message", "expected", "retryable"),
    [
        ("overloaded_error", "Overloaded", OverloadedError, True),
        ("api_error", "Internal server error", ProviderError, True),
        ("rate_limit_error", "Too many tokens", RateLimitError, True),
        ("timeout_error", "Stream timed out", ProviderTimeoutError, True),
        ("invalid_request_error", "messages.1.content.0: unexpected block", InvalidRequestError, False),
        ("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ContextOverflowError, False),
        ("request_too_large", "Request exceeds the maximum size", InvalidRequestError, False),
        ("not_found_error", "model: claude-x", InvalidRequestError, False),
        ("authentication_error", "invalid x-api-key", AuthenticationError, False),
        ("permission_error", "not allowed", AuthenticationError, False),
        ("billing_error", "Your credit balance is too low", ProviderError, False),
    ],
)
async def test_an_error_event_is_classified_by_its_type(
    server: WireServer,
    client: AnthropicClient,
    kind: str,
    message: str,
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    body = f'{{"type": "error", "error": {{"type": "{kind}", "message": "{message}"}}}}'
    error_stream(server, body.encode())
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(ProviderError) as caught:
        await worker.run("Hi")
    error = caught.value
    assert type(error) is expected
    assert (error.retryable, error.status_code, error.error_type) == (retryable, None, kind)
    assert message in str(error)
    assert log.aborts == [str(error)]
    assert [type(i).__name__ for i in worker.history] == ["Message"]  # the partial reply is not kept


async def test_an_error_event_that_is_not_json_is_a_retryable_provider_error(
    server: WireServer, client: AnthropicClient
) -> None:
    error_stream(server, b"upstream connect error")
    with pytest.raises(ProviderError) as caught:
        await Worker(client).run("Hi")
    assert type(caught.value) is ProviderError
    assert caught.value.retryable
    assert "upstream connect error" in str(caught.value)


async def test_an_http_rate_limit_about_tokens_stays_a_rate_limit_with_its_retry_after(
    server: WireServer, client: AnthropicClient
) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Too many tokens per minute"}}
    server.error(429, body, retry_after="3")
    with pytest.raises(RateLimitError) as caught:
        await Worker(client).run("Hi")
    assert (caught.value.retryable, caught.value.retry_after, caught.value.status_code) == (True, 3.0, 429)


async def test_an_http_error_without_a_known_type_falls_back_to_its_status(
    server: WireServer, client: AnthropicClient
) -> None:
    server.error(400, {"type": "error", "error": {"type": "some_new_error", "message": "nope"}})
    with pytest.raises(InvalidRequestError) as caught:
        await Worker(client).run("Hi")
    assert not caught.value.retryable
