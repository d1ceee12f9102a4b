"""Real recorded Chat Completions traffic (OpenAI, OpenRouter, Groq, DeepSeek, z.ai) replayed through the
loopback server into OpenAIChatClient, in full Worker runs: the parsed reply, and the follow-up request
hookloop sends compared with the one the recording made (call ids, tool names, arguments, results).

Collected only when the recordings folder exists (see recordings.py); test_openai_chat_traffic.py covers the
same cases with synthetic fixtures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookloop import Finished, Reasoning, Worker, tool
from hookloop.providers._errors import InvalidRequestError, ProviderError, RateLimitError
from hookloop.providers.openai_chat import OpenAIChatClient
from providers.recordings import interactions, normalised, queue
from providers.wire import HookLog, WireServer

pytestmark = pytest.mark.anyio


@tool
async def llm_version() -> str:
    """Return the installed version of llm"""
    return "0.fixed-version"


@tool
async def get_country() -> str:
    """The country."""
    return "Mexico"


@tool
async def get_product_name() -> str:
    """The product name."""
    return "Pydantic AI"


@tool
async def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


@tool
async def final_result(answers: list[dict[str, str]]) -> str:
    """The final response which ends this conversation"""
    return "done"


def conversation(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a Chat history says, whatever its message grouping: texts, calls (id, name, parsed arguments),
    results (call id, content)."""
    said: list[tuple[Any, ...]] = []
    for message in messages:
        if message["role"] == "assistant":
            if message.get("content"):
                said.append(("assistant", message["content"]))
            for call in message.get("tool_calls") or ():
                function = call["function"]
                said.append(("call", call["id"], function["name"], json.loads(function.get("arguments") or "{}")))
        elif message["role"] == "tool":
            said.append(("result", message["tool_call_id"], message["content"]))
        else:
            said.append((message["role"], message["content"]))
    return said


def streamed(interaction: dict[str, Any], field: str) -> str:
    """The concatenated ``delta[field]`` strings of a recorded stream."""
    out: list[str] = []
    for line in interaction["body"].split("\n"):
        if not line.startswith("data: {"):
            continue
        for choice in json.loads(line[6:]).get("choices") or ():
            value = (choice.get("delta") or {}).get(field)
            if isinstance(value, str):
                out.append(value)
    return "".join(out)


def chat_client(server: WireServer, model: str, **options: Any) -> OpenAIChatClient:
    return OpenAIChatClient(model, api_key="k", base_url=server.base_url, max_retries=0, **options)


@pytest.mark.parametrize(
    ("name", "sent_id"),
    [
        ("chat_openrouter_kimi_a", "0"),  # [DONE] with no finish_reason at all
        ("chat_openrouter_kimi_b", "0"),  # the same, the arguments in one piece
        ("chat_openrouter_kimi_c", "llm_version:0"),  # llm renamed this id in its follow-up; hookloop keeps it
        ("chat_openrouter_meta_d", "0"),  # "arguments": null
    ],
)
async def test_openrouter_tool_streams_and_their_follow_up(server: WireServer, name: str, sent_id: str) -> None:
    first, second = interactions(name)
    queue(server, first)
    queue(server, second)
    async with chat_client(server, first["request"]["model"]) as client:
        worker = Worker(client, tools=[llm_version])
        log = HookLog(worker)
        outcome = await worker.run(first["request"]["messages"][0]["content"])
    assert isinstance(outcome, Finished)
    assert outcome.text == streamed(second, "content")
    assert log.pre_tool == [(sent_id, "llm_version", {})]
    recorded = conversation(second["request"]["messages"])
    recorded = [(*s[:1], sent_id, *s[2:]) if s[0] in ("call", "result") else s for s in recorded]
    assert conversation(server.requests[1].body["messages"]) == recorded
    assert [t["function"]["name"] for t in server.requests[1].body["tools"]] == ["llm_version"]


async def test_gpt4o_parallel_calls_over_three_requests(server: WireServer) -> None:
    recorded = interactions("chat_gpt4o_parallel")
    for interaction in recorded:
        queue(server, interaction)
    server.sse("chat/text")  # the recording ends at the final_result call
    tools = [get_weather, get_country, get_product_name, final_result]
    async with chat_client(server, "gpt-4o") as client:
        worker = Worker(client, tools=tools)
        log = HookLog(worker)
        outcome = await worker.run(recorded[0]["request"]["messages"][0]["content"])
    assert isinstance(outcome, Finished)
    assert [name for _, name, _ in log.pre_tool] == ["get_country", "get_product_name", "get_weather", "final_result"]
    for index in (1, 2):
        assert conversation(server.requests[index].body["messages"]) == conversation(
            recorded[index]["request"]["messages"]
        )


@pytest.mark.parametrize(
    ("name", "index", "field", "model"),
    [
        ("chat_deepseek_reasoning", 0, "reasoning_content", "deepseek-reasoner"),
        ("chat_zai_reasoning", 0, "reasoning_content", "glm-4.7"),
        ("chat_groq_reasoning", 1, "reasoning", "deepseek-r1-distill-llama-70b"),
        ("chat_openrouter_reasoning", 0, "reasoning", "anthropic/claude-sonnet-4.5"),
    ],
)
async def test_recorded_reasoning_becomes_reasoning_and_goes_back(
    server: WireServer, name: str, index: int, field: str, model: str
) -> None:
    interaction = interactions(name)[index]
    queue(server, interaction)
    server.sse("chat/text")
    options: dict[str, Any] = {"send_reasoning": "reasoning"} if name == "chat_openrouter_reasoning" else {}
    if name == "chat_groq_reasoning":
        options["send_reasoning"] = False  # what the default does on api.groq.com (see the traffic tests)
    async with chat_client(server, model, provider="openai-compatible", **options) as client:
        worker = Worker(client)
        log = HookLog(worker)
        outcome = await worker.run("Hello")
        await worker.run("And then?")
    assert isinstance(outcome, Finished)
    assert outcome.text == streamed(interaction, "content")
    assert "".join(log.text[: len(log.text) - 3]) == outcome.text  # the reasoning never reached on_text_delta
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == streamed(interaction, field)
    assistant = server.requests[1].body["messages"][-2]
    assert assistant["role"] == "assistant"
    if name == "chat_openrouter_reasoning":
        (detail,) = assistant["reasoning_details"]
        assert detail["text"] == reasoning.text
        assert detail["signature"].startswith("Et0BCkgIChACGAIqQA2s7h7t")  # the recorded signature, whole
        assert detail["format"] == "anthropic-claude-v1"
    elif name == "chat_groq_reasoning":
        assert not any(k.startswith("reasoning") for k in assistant)
    else:
        assert assistant["reasoning_content"] == reasoning.text


async def test_groq_tool_use_failed_in_the_stream_is_not_retryable(server: WireServer) -> None:
    first = interactions("chat_groq_tool_use_failed")[0]
    queue(server, first)
    system, user = first["request"]["messages"]
    async with chat_client(server, first["request"]["model"]) as client:
        worker = Worker(client, system=system["content"])
        with pytest.raises(InvalidRequestError, match="Tool call validation failed") as caught:
            await worker.run(user["content"])
    assert (caught.value.retryable, caught.value.status_code, caught.value.error_type) == (
        False,
        400,
        "tool_use_failed",
    )
    assert normalised(server.requests[0].body["messages"]) == normalised(first["request"]["messages"])


async def test_openrouter_error_chunk_after_finish_reason_is_not_retryable(server: WireServer) -> None:
    (interaction,) = interactions("chat_openrouter_stream_error")
    queue(server, interaction)
    async with chat_client(server, interaction["request"]["model"]) as client:
        with pytest.raises(InvalidRequestError, match="Token limit reached") as caught:
            await Worker(client, max_tokens=10).run("Hello there")
    assert (caught.value.retryable, caught.value.status_code) == (False, 400)
    assert server.requests[0].body["max_completion_tokens"] == 10


@pytest.mark.parametrize(
    ("name", "expected", "retryable", "status"),
    [
        ("chat_openrouter_429", RateLimitError, True, 429),
        ("chat_openai_400_role", InvalidRequestError, False, 400),
        ("chat_openai_404_model", InvalidRequestError, False, 404),
    ],
)
async def test_recorded_http_errors(
    server: WireServer, name: str, expected: type[ProviderError], retryable: bool, status: int
) -> None:
    interaction = interactions(name)[0]
    queue(server, interaction)
    async with chat_client(server, interaction["request"]["model"]) as client:
        with pytest.raises(expected) as caught:
            await Worker(client).run("Hello")
    assert (caught.value.retryable, caught.value.status_code) == (retryable, status)
    message = json.loads(interaction["body"])["error"]["message"]
    assert message in str(caught.value)
