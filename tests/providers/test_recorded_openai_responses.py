"""Real recorded Responses API traffic (OpenAI, Bedrock, DeepSeek) replayed through the loopback server into
OpenAIResponsesClient, in full Worker runs: the parsed reply, and the follow-up request hookloop sends compared
with the recorded one — every item the recording sent back is in hookloop's request, with the same fields
(hookloop may keep more: the output item ids some recorders drop).

Collected only when the recordings folder exists (see recordings.py); test_openai_responses_traffic.py covers
the same cases with synthetic fixtures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookloop import Finished, Message, Reasoning, ToolCall, Worker, tool
from hookloop.providers._errors import InvalidRequestError
from hookloop.providers._responses_wire import from_responses, to_responses
from hookloop.providers.openai_responses import OpenAIResponsesClient
from providers.recordings import interactions, normalised, queue, queue_response_as_stream
from providers.wire import HookLog, WireServer

pytestmark = pytest.mark.anyio


@tool
async def get_capital(country: str) -> str:
    """The capital of a country."""
    return "Potato City"


@tool
async def multiply(a: int, b: int) -> str:
    """Multiply two numbers."""
    return str(a * b)


@tool
async def first_tool() -> str:
    """The first tool."""
    return "first result"


@tool
async def second_tool() -> str:
    """The second tool."""
    return "second result"


@tool
async def get_temperature(city: str) -> str:
    """Get the current temperature in a city."""
    return "21.0"


@tool
async def final_result(result: int) -> str:
    """The final result."""
    return "ok"


def canonical(entry: dict[str, Any]) -> dict[str, Any]:
    """One input item in a comparable form: user text as text, arguments parsed, no null or empty fields,
    no logprobs, a Bedrock call id without the ``resp_…:`` prefix pydantic-ai gave re-used ids."""
    entry = dict(entry)
    entry.setdefault("type", "message")
    if entry["type"] == "message" and entry["role"] != "assistant":
        content = entry["content"]
        text = content if isinstance(content, str) else "".join(p["text"] for p in content)
        return normalised({"role": entry["role"], "text": text})  # type: ignore[no-any-return]
    if "arguments" in entry:
        entry["arguments"] = json.loads(entry["arguments"] or "{}")
    if isinstance(entry.get("call_id"), str) and entry["call_id"].startswith("resp_"):
        entry["call_id"] = entry["call_id"].rsplit(":", 1)[-1]
    if isinstance(entry.get("content"), list):
        entry["content"] = [{k: v for k, v in p.items() if k != "logprobs"} for p in entry["content"]]
    return normalised({k: v for k, v in entry.items() if v not in (None, [], "")})  # type: ignore[no-any-return]


def assert_sends_what_was_recorded(sent: list[dict[str, Any]], recorded: list[dict[str, Any]]) -> None:
    ours = [canonical(e) for e in sent]
    theirs = [canonical(e) for e in recorded]
    assert len(ours) == len(theirs), (ours, theirs)
    for mine, recorded_item in zip(ours, theirs, strict=True):
        assert {k: mine.get(k) for k in recorded_item} == recorded_item


def responses_client(server: WireServer, model: str) -> OpenAIResponsesClient:
    return OpenAIResponsesClient(model, api_key="k", base_url=server.base_url, max_retries=0)


async def test_the_recorded_http_400_shape_is_never_sent(server: WireServer) -> None:
    """pydantic-ai's recording: after a reasoning item, the assistant message went back without its msg_ id and
    OpenAI answered HTTP 400. hookloop sends it back with its id, status and content."""
    first, rejected, accepted = interactions("resp_400_reasoning_without_following")
    queue_response_as_stream(server, first)
    queue_response_as_stream(server, accepted)
    async with responses_client(server, "gpt-5") as client:
        worker = Worker(client)
        outcome = await worker.run(first["request"]["input"][0]["content"])
        assert isinstance(outcome, Finished)
        await worker.run("Anything to add?")
    reasoning_out, message_out = json.loads(first["body"])["output"]
    reasoning = next(i for i in worker.history if isinstance(i, Reasoning))
    assert reasoning.text == reasoning_out["summary"][0]["text"]
    assert outcome.text == message_out["content"][0]["text"]
    sent = server.requests[1].body["input"]
    assert sent[1] == reasoning_out  # with its encrypted_content
    assert sent[2] == {
        "type": "message",
        "role": "assistant",
        "id": message_out["id"],
        "status": "completed",
        "content": [{"type": "output_text", "text": message_out["content"][0]["text"], "annotations": []}],
    }
    # what the rejected request had instead: the reasoning's following item without an id
    assert rejected["request"]["input"][2] == {"content": "The meaning of life is 42", "role": "assistant"}


async def test_the_recorded_rejected_history_goes_out_without_the_orphaned_reasoning(server: WireServer) -> None:
    _, rejected, _ = interactions("resp_400_reasoning_without_following")
    _, items = from_responses(None, rejected["request"]["input"])
    assert [type(i).__name__ for i in items] == ["Message", "Reasoning", "Message", "Message"]
    _, sent, _ = to_responses(None, items, [])
    assert [(e["type"], e["role"]) for e in sent] == [
        ("message", "user"),
        ("message", "assistant"),
        ("message", "user"),
    ]
    # and the 400 itself, had it been sent, is a non-retryable invalid request
    queue(server, rejected)
    async with responses_client(server, "gpt-5") as client:
        with pytest.raises(InvalidRequestError, match="without its required following item") as caught:
            await Worker(client).run("Anything to add?")
    assert (caught.value.retryable, caught.value.status_code) == (False, 400)


async def test_phase_and_ids_of_a_preamble_before_a_call(server: WireServer) -> None:
    first, second = interactions("resp_phase_reasoning_text_call")
    queue(server, first)
    queue(server, second)
    async with responses_client(server, first["request"]["model"]) as client:
        worker = Worker(client, system=first["request"]["instructions"], tools=[get_capital])
        log = HookLog(worker)
        outcome = await worker.run(first["request"]["input"][0]["content"])
    assert isinstance(outcome, Finished)
    assert outcome.text == "The capital of PotatoLand is **Potato City**."
    assert log.pre_tool == [("call_LabG58Uhrq9kZvR52BYKjToD", "get_capital", {"country": "PotatoLand"})]
    preamble = next(i for i in worker.history if isinstance(i, Message) and i.role == "assistant")
    assert preamble.meta["phase"] == "commentary"
    assert_sends_what_was_recorded(server.requests[1].body["input"], second["request"]["input"])


@pytest.mark.parametrize(
    ("name", "tools"),
    [
        ("resp_llm_tool_stream", [multiply]),
        ("resp_bedrock_reasoning_tools", [first_tool, second_tool]),
        ("resp_deepseek_reasoning_tool", [get_temperature]),
    ],
)
async def test_recorded_tool_conversations_follow_up_with_the_recorded_items(
    server: WireServer, name: str, tools: list[Any]
) -> None:
    recorded = interactions(name)
    for interaction in recorded:
        queue(server, interaction)
    request = recorded[0]["request"]
    async with responses_client(server, request["model"]) as client:
        worker = Worker(client, system=request.get("instructions"), tools=tools)
        outcome = await worker.run(request["input"][0]["content"])
    assert isinstance(outcome, Finished)
    assert len(server.requests) == len(recorded)
    for index in range(1, len(recorded)):
        assert_sends_what_was_recorded(server.requests[index].body["input"], recorded[index]["request"]["input"])
    calls = [i for i in worker.history if isinstance(i, ToolCall)]
    assert all(c.meta.get("id") for c in calls)  # every function_call kept its output item id


async def test_streamed_usage_with_reasoning_and_a_call(server: WireServer) -> None:
    (interaction,) = interactions("resp_usage_reasoning_call")
    queue(server, interaction)
    server.sse("responses/final_text")
    async with responses_client(server, "gpt-5") as client:
        worker = Worker(client, tools=[final_result])
        log = HookLog(worker)
        outcome = await worker.run(interaction["request"]["input"][0]["content"])
    assert log.pre_tool == [("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666})]
    assert outcome.usage.output_tokens == 469 + 12  # the recorded reply, then the fixture's
    reasoning_id = server.requests[1].body["input"][1]["id"]
    assert reasoning_id.startswith("rs_0050471a34b36ae6")


async def test_a_long_reasoning_summary_stream(server: WireServer) -> None:
    (interaction,) = interactions("resp_summary_stream")
    queue(server, interaction)
    async with responses_client(server, "o3-mini") as client:
        worker = Worker(client)
        outcome = await worker.run(interaction["request"]["input"][0]["content"])
    assert isinstance(outcome, Finished)
    completed = next(
        json.loads(line[6:])
        for line in interaction["body"].split("\n")
        if line.startswith("data: ") and '"response.completed"' in line
    )["response"]
    reasoning_out = next(o for o in completed["output"] if o["type"] == "reasoning")
    message_out = next(o for o in completed["output"] if o["type"] == "message")
    (reasoning,) = [i for i in worker.history if isinstance(i, Reasoning)]
    assert reasoning.text == "\n\n".join(p["text"] for p in reasoning_out["summary"])
    assert outcome.text == message_out["content"][0]["text"]
    assert dict(worker.history[2].meta) == {"provider": "openai-responses", "id": message_out["id"]}  # type: ignore[union-attr]


async def test_recorded_http_400(server: WireServer) -> None:
    (interaction,) = interactions("resp_400_http_error")
    queue(server, interaction)
    async with responses_client(server, "gpt-4o") as client:
        with pytest.raises(InvalidRequestError, match="decimal below minimum value") as caught:
            await Worker(client).run("What is the capital of France?")
    assert (caught.value.retryable, caught.value.status_code, caught.value.error_type) == (
        False,
        400,
        "decimal_below_min_value",
    )
