"""OpenAIChatClient against what real compatible servers do (OpenRouter, Groq, DeepSeek, Kimi, GLM), through
full Worker runs over the loopback wire: a ``[DONE]`` without a ``finish_reason``, errors inside the stream
that carry an HTTP-like code, and reasoning that thinking models want back in the follow-up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hookloop import Finished, Message, Reasoning, ToolCall, Worker
from hookloop.providers._chat_wire import details_signature, from_chat, to_chat
from hookloop.providers._errors import (
    AuthenticationError,
    InvalidRequestError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
)
from hookloop.providers.openai_chat import OpenAIChatClient
from providers.wire import HookLog, Reply, WireServer, get_weather

pytestmark = pytest.mark.anyio


def stops(worker: Worker) -> list[str]:
    seen: list[str] = []
    worker.subscribe(lambda e: seen.append(e.reason) if type(e).__name__ == "StopEvent" else None)  # type: ignore[attr-defined]
    return seen


def queue_events(server: WireServer, *events: object) -> None:
    """Queue an event stream built here (dicts become ``data:`` lines; strings are sent as they are)."""
    chunks = [(e if isinstance(e, str) else f"data: {json.dumps(e)}").encode() + b"\n\n" for e in events]
    server.replies.append(Reply(200, {"content-type": "text/event-stream"}, chunks))


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[OpenAIChatClient]:
    async with OpenAIChatClient(
        "moonshotai/kimi-k2", api_key="k", base_url=server.base_url, provider="openrouter", max_retries=0
    ) as c:
        yield c


# -- [DONE] without a finish_reason ---------------------------------------------------------------------------


async def test_done_without_finish_reason_after_a_tool_call_is_a_tool_use(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/done_without_finish_tool")
    server.sse("chat/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    reasons = stops(worker)
    outcome = await worker.run("Paris?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Hello, world!"
    assert reasons == ["tool_use", "end_turn"]
    assert log.pre_tool == [("call_or_1", "get_weather", {"location": "Paris"})]
    assert log.chunks[:6] == ["BlockStart", "TextDelta", "BlockStart", "ToolCallDelta", "BlockStop", "BlockStop"]
    assert server.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_or_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_or_1", "content": "Paris: 18 celsius"},
    ]


async def test_done_without_finish_reason_after_text_ends_the_turn(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/done_without_finish_text")
    worker = Worker(client)
    reasons = stops(worker)
    outcome = await worker.run("Weather?")
    assert isinstance(outcome, Finished)
    assert (outcome.text, reasons) == ("Paris is sunny.", ["end_turn"])
    assert outcome.usage.output_tokens == 17


async def test_a_stream_that_ends_without_done_or_finish_reason_stays_a_connection_error(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/no_done_no_finish")  # a clean end of the HTTP body, but neither terminator
    with pytest.raises(ProviderConnectionError, match=r"before a finish_reason or \[DONE\]") as caught:
        await Worker(client).run("Weather?")
    assert caught.value.retryable


async def test_a_stream_cut_before_done_stays_a_retryable_connection_error(
    server: WireServer, client: OpenAIChatClient
) -> None:
    server.sse("chat/done_without_finish_tool", mode="cut", keep=4)
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    with pytest.raises(ProviderConnectionError) as caught:
        await worker.run("Paris?")
    assert caught.value.retryable
    assert log.pre_tool == []


# -- errors inside the stream ------------------------------------------------------------------------------


async def test_an_error_chunk_with_code_400_is_not_retryable(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/error_code_400")
    worker = Worker(client)
    log = HookLog(worker)
    with pytest.raises(InvalidRequestError, match="Token limit reached") as caught:
        await worker.run("Hello there")
    assert (caught.value.retryable, caught.value.status_code) == (False, 400)
    assert log.aborts == [str(caught.value)]


async def test_groq_tool_use_failed_event_is_an_invalid_request(server: WireServer, client: OpenAIChatClient) -> None:
    server.sse("chat/groq_tool_use_failed")
    with pytest.raises(InvalidRequestError, match="Tool call validation failed") as caught:
        await Worker(client, tools=[get_weather]).run("Call it wrong")
    error = caught.value
    assert (error.retryable, error.status_code, error.error_type) == (False, 400, "tool_use_failed")


@pytest.mark.parametrize(
    ("error", "expected", "retryable"),
    [
        ({"code": 429, "message": "Provider returned error"}, RateLimitError, True),
        ({"code": "503", "message": "upstream unavailable"}, OverloadedError, True),
        ({"code": 502, "message": "Bad gateway"}, ProviderError, True),
        ({"code": 400, "type": "overloaded_error", "message": "busy"}, OverloadedError, True),
        ({"code": 401, "message": "No auth credentials found"}, AuthenticationError, False),
        ({"message": "tool failed", "type": "invalid_request_error", "status_code": 422}, InvalidRequestError, False),
        ({"code": True, "message": "a boolean is no status"}, ProviderError, True),
    ],
)
async def test_in_stream_error_codes_classify_like_http_statuses(
    server: WireServer, client: OpenAIChatClient, error: dict[str, Any], expected: type[ProviderError], retryable: bool
) -> None:
    queue_events(
        server,
        {
            "id": "g",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}],
        },
        {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "error": error},
        "data: [DONE]",
    )
    with pytest.raises(expected) as caught:
        await Worker(client).run("Hi")
    assert type(caught.value) is expected
    assert caught.value.retryable is retryable
    assert error["message"] in str(caught.value)


# -- reasoning back to thinking models ------------------------------------------------------------------------


async def run_reasoning_tool(server: WireServer, model: str, **options: Any) -> tuple[Worker, dict[str, Any]]:
    server.sse("chat/reasoning_tool")
    server.sse("chat/text")
    async with OpenAIChatClient(
        model, api_key="k", base_url=server.base_url, provider="openai-compatible", max_retries=0, **options
    ) as client:
        worker = Worker(client, tools=[get_weather])
        outcome = await worker.run("Paris?")
    assert isinstance(outcome, Finished)
    assistant: dict[str, Any] = server.requests[1].body["messages"][1]
    return worker, assistant


THOUGHT = "The user wants Paris. Call get_weather."


async def test_deepseek_gets_its_reasoning_content_back_with_the_tool_follow_up(server: WireServer) -> None:
    worker, assistant = await run_reasoning_tool(server, "deepseek-v4-flash")
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert (reasoning.text, reasoning.provider, reasoning.signature) == (THOUGHT, "openai-compatible", None)
    assert assistant == {
        "role": "assistant",
        "content": None,
        "reasoning_content": THOUGHT,
        "tool_calls": [
            {
                "id": "call_00_ds",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
            }
        ],
    }


@pytest.mark.parametrize(
    ("model", "options", "field"),
    [
        ("kimi-k2-thinking", {}, "reasoning_content"),
        ("Qwen/Qwen3-235B-A22B-Thinking", {}, "reasoning_content"),
        ("glm-4.7", {}, "reasoning_content"),
        ("llama3.1:8b", {}, None),  # not a family known to want it: nothing a strict server could reject
        ("deepseek-v4-flash", {"send_reasoning": False}, None),  # the user's override wins
        ("llama3.1:8b", {"send_reasoning": True}, "reasoning_content"),
        ("llama3.1:8b", {"send_reasoning": "reasoning"}, "reasoning"),
    ],
)
async def test_reasoning_goes_back_per_model_family_and_the_override_wins(
    server: WireServer, model: str, options: dict[str, Any], field: str | None
) -> None:
    _, assistant = await run_reasoning_tool(server, model, **options)
    sent = {k: v for k, v in assistant.items() if k.startswith("reasoning")}
    assert sent == ({} if field is None else {field: THOUGHT})


async def test_openrouter_reasoning_details_are_merged_and_sent_back_unchanged(server: WireServer) -> None:
    server.sse("chat/openrouter_reasoning_details_tool")
    server.sse("chat/text")
    async with OpenAIChatClient(
        "anthropic/claude-sonnet-4.5", api_key="k", base_url=server.base_url, send_reasoning="reasoning"
    ) as client:
        worker = Worker(client, tools=[get_weather])
        log = HookLog(worker)
        await worker.run("Paris?")
    details = [
        {
            "type": "reasoning.text",
            "text": "Paris weather: use the tool.",
            "signature": "EtwBCkgIChACsig==",
            "format": "anthropic-claude-v1",
            "index": 0,
        },
        {"type": "reasoning.encrypted", "data": "EmwKAhgBenc==", "format": "anthropic-claude-v1", "index": 1},
    ]
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "Paris weather: use the tool."
    assert reasoning.signature is not None
    assert json.loads(reasoning.signature) == {"reasoning_details": details}
    assert log.pre_tool == [("toolu_or_1", "get_weather", {"location": "Paris"})]
    assistant = server.requests[1].body["messages"][1]
    assert assistant["reasoning_details"] == details  # OpenRouter's own record wins over the text field
    assert "reasoning" not in assistant


def test_the_reasoning_field_is_chosen_by_model_family_and_base_url() -> None:
    def field(model: str, base_url: str = "https://api.example.com/v1", **options: Any) -> str | None:
        client = OpenAIChatClient(model, api_key="k", base_url=base_url, **options)
        return client.reasoning_field(model)

    assert field("deepseek-reasoner") == "reasoning_content"
    assert field("moonshotai/Kimi-K2-Thinking") == "reasoning_content"
    assert field("qwq-32b") == "reasoning_content"
    assert field("gpt-4.1", "https://api.openai.com/v1") is None
    assert field("openai/gpt-5", "https://openrouter.ai/api/v1") == "reasoning"
    assert field("openai/gpt-5", "https://openrouter.ai/api/v1", send_reasoning=False) is None
    # Groq and Cerebras reject the unknown field, whatever family they host
    assert field("deepseek-r1-distill-llama-70b", "https://api.groq.com/openai/v1") is None
    assert field("qwen-3-32b", "https://api.cerebras.ai/v1") is None
    assert field("qwen-3-32b", "https://api.cerebras.ai/v1", send_reasoning=True) == "reasoning_content"
    assert field("deepseek-r1", "https://evil.example/groq.com/v1") == "reasoning_content"  # the host decides


def test_only_this_clients_own_reasoning_goes_back() -> None:
    items = [
        Message.user("q"),
        Reasoning(text="anthropic thoughts", signature="EqQB", provider="anthropic"),
        Reasoning(
            text="mine", signature=details_signature([{"type": "reasoning.text", "text": "mine"}]), provider="me"
        ),
        ToolCall(call_id="c1", name="get_weather"),
    ]
    messages, _ = to_chat(None, items, [], reasoning_field="reasoning_content", reasoning_provider="me")
    assert messages[1]["reasoning_details"] == [{"type": "reasoning.text", "text": "mine"}]
    assert "anthropic" not in json.dumps(messages)
    plain, _ = to_chat(None, items, [])
    assert set(plain[1]) == {"role", "content", "tool_calls"}
    _, back = from_chat(messages, reasoning_provider="me")
    assert isinstance(back[1], Reasoning)
    assert back[1].signature == details_signature([{"type": "reasoning.text", "text": "mine"}])


def test_reasoning_of_a_reply_without_text_or_calls_does_not_leak_into_the_next_message() -> None:
    items = [
        Message.user("q"),
        Reasoning(text="cut short", provider="me"),
        Message.user("again"),
        Message.assistant("a"),
    ]
    messages, _ = to_chat(None, items, [], reasoning_field="reasoning_content", reasoning_provider="me")
    assert messages == [
        {"role": "user", "content": "q"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "a"},
    ]


async def test_malformed_reasoning_details_neither_break_the_stream_nor_leak(
    server: WireServer, client: OpenAIChatClient
) -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}
        ]}  # fmt: skip

    queue_events(
        server,
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "a", "index": [0]}, "junk", 7]}),
        chunk({"reasoning_details": {"not": "a list"}, "reasoning": ["not", "text"]}),
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "b", "index": True}]}),
        chunk({"content": "done"}, "stop"),
        "data: [DONE]",
    )
    worker = Worker(client)
    outcome = await worker.run("?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "done"
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "ab"
    assert reasoning.signature is not None
    kept = json.loads(reasoning.signature)["reasoning_details"]
    assert [d["text"] for d in kept] == ["ab"]  # both pieces at position 0: one entry


async def test_finish_reason_error_without_an_error_object_is_a_retryable_provider_error(
    server: WireServer, client: OpenAIChatClient
) -> None:
    queue_events(
        server,
        {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"content": "Half an ans"}, "finish_reason": None}
        ]},
        {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"content": ""}, "finish_reason": "error"}
        ]},
        "data: [DONE]",
    )  # fmt: skip
    with pytest.raises(ProviderError, match="finish_reason 'error'") as caught:
        await Worker(client).run("?")
    assert type(caught.value) is ProviderError
    assert caught.value.retryable


async def test_content_given_as_parts_is_read_as_its_text(server: WireServer, client: OpenAIChatClient) -> None:
    def chunk(content: object, finish: str | None = None) -> dict[str, Any]:
        return {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"content": content}, "finish_reason": finish}
        ]}  # fmt: skip

    queue_events(
        server,
        chunk([{"type": "text", "text": "Bon"}, {"type": "image", "data": "x"}]),
        chunk([{"type": "text", "text": "jour"}, "junk", {"type": "text", "text": 7}]),
        chunk({"an": "object"}),
        chunk("", "stop"),
        "data: [DONE]",
    )
    outcome = await Worker(client).run("?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Bonjour"


async def test_arguments_sent_as_an_object_are_read_as_their_json(server: WireServer, client: OpenAIChatClient) -> None:
    call = {
        "index": 0,
        "id": "call_obj",
        "type": "function",
        "function": {"name": "get_weather", "arguments": {"location": "Oslo"}},
    }
    queue_events(
        server,
        {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}
        ]},
        "data: [DONE]",
    )  # fmt: skip
    server.sse("chat/text")
    worker = Worker(client, tools=[get_weather])
    log = HookLog(worker)
    await worker.run("Oslo?")
    assert log.pre_tool == [("call_obj", "get_weather", {"location": "Oslo"})]


async def test_mistral_thinking_chunks_become_reasoning(server: WireServer, client: OpenAIChatClient) -> None:
    def chunk(content: object, finish: str | None = None) -> dict[str, Any]:
        return {"id": "g", "object": "chat.completion.chunk", "created": 1, "model": "magistral-medium-latest",
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}  # fmt: skip

    queue_events(
        server,
        chunk([{"type": "thinking", "thinking": [{"type": "text", "text": "Look "}]}]),
        chunk([{"type": "thinking", "thinking": [{"type": "text", "text": "both ways."}, {"type": "x"}]}]),
        chunk([{"type": "thinking", "thinking": "Then go."}, {"type": "text", "text": "Look"}]),
        chunk(" left and right.", "stop"),
        "data: [DONE]",
    )
    worker = Worker(client)
    log = HookLog(worker)
    outcome = await worker.run("How do I cross the street?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Look left and right."
    assert "".join(log.text) == outcome.text
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "Look both ways.Then go."
