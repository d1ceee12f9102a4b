"""Real recorded Anthropic traffic (server tools, pause_turn, thinking and redacted thinking follow-ups, HTTP
errors) replayed through the loopback server into the real AnthropicClient in full Worker runs: the parsed
items match what the recorded replies hold, and every follow-up request hookloop sends carries the blocks
exactly as the recorded follow-up request did (rules in :mod:`providers.recorded.replay`)."""

from __future__ import annotations

from typing import Any

import pytest

from hookloop import Finished, Message, ToolResult, Usage
from hookloop.providers._errors import InvalidRequestError
from hookloop.timeline import ModelRequestEnded, TimelineEvent
from providers.recorded.replay import (
    assemble,
    described,
    expected_items,
    load,
    normalised,
    queue,
    response_chunks,
    user_prompts,
    worker_for,
)
from providers.wire import WireServer

pytestmark = pytest.mark.anyio

REPLAYED = [
    "anth_pause_turn_stream",  # thinking + 9 web searches, pause_turn, continued; citations in the answer
    "anth_web_search_stream",  # web search results and cited text
    "anth_tool_search_stream",  # tool search (deferred tools), then a client tool call and its result
    "anth_thinking_tool_followup",  # thinking + tool call, the signed thinking goes back with the result
    "anth_tool_followup",
    "anth_thinking_stream",
    "anth_adaptive_thinking",  # text, thinking, text
    "anth_redacted_stream",  # two redacted_thinking blocks
    "anth_redacted_followup_ref",  # redacted thinking back unchanged on a second user message (non-streamed)
]


@pytest.mark.parametrize("name", REPLAYED)
async def test_a_recording_replays_with_the_same_items_and_follow_up_requests(name: str, server: WireServer) -> None:
    recording = load(name)
    interactions = recording["interactions"]
    queue(server, recording)
    client, worker = worker_for(recording, server)
    stops: list[str | None] = []

    def on_event(event: TimelineEvent) -> None:
        if isinstance(event, ModelRequestEnded):
            stops.append(event.stop_reason)

    worker.subscribe(on_event)
    outcomes = []
    async with client:
        for prompt in user_prompts(recording):
            outcomes.append(await worker.run(prompt))
    assert all(isinstance(o, Finished) for o in outcomes)

    # every request, the first and each follow-up, as recorded
    assert len(server.requests) == len(interactions)
    for index, (seen, interaction) in enumerate(zip(server.requests, interactions, strict=True)):
        recorded = interaction["request"]
        body = seen.body
        assert normalised(body["messages"]) == normalised(recorded["messages"]), f"request {index}: messages"
        assert normalised(body.get("tools")) == normalised(recorded.get("tools")), f"request {index}: tools"
        assert (body["model"], body["max_tokens"], body.get("thinking")) == (
            recorded["model"],
            recorded["max_tokens"],
            recorded.get("thinking"),
        )

    # the items parsed from every reply, in reply order
    expected: list[tuple[Any, ...]] = []
    recorded_stops: list[str | None] = []
    total = Usage()
    for interaction in interactions:
        blocks, stop, usage = assemble(response_chunks(interaction))
        expected += expected_items(blocks)
        recorded_stops.append(stop)
        total = total + Usage(
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
            usage.get("cache_read_input_tokens", 0),
            usage.get("cache_creation_input_tokens", 0),
        )
    replied = [
        i for i in worker.history if not isinstance(i, ToolResult) and not (isinstance(i, Message) and i.role == "user")
    ]
    assert [described(i) for i in replied] == expected
    assert stops == recorded_stops
    assert sum((o.usage for o in outcomes if isinstance(o, Finished)), Usage()) == total


@pytest.mark.parametrize(
    ("name", "error_type"),
    [("anth_400_effort", "invalid_request_error"), ("anth_404_model", "not_found_error")],
)
async def test_a_recorded_http_error_is_classified_by_its_type(name: str, error_type: str, server: WireServer) -> None:
    recording = load(name)
    (interaction,) = recording["interactions"]
    queue(server, recording)
    client, worker = worker_for(recording, server)
    async with client:
        with pytest.raises(InvalidRequestError) as caught:
            await worker.run(user_prompts(recording)[0])
    error = caught.value
    assert (error.status_code, error.error_type, error.retryable) == (interaction["status"], error_type, False)
    assert normalised(server.requests[0].body["messages"]) == normalised(interaction["request"]["messages"])
