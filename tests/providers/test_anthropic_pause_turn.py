"""``stop_reason: "pause_turn"``: the Worker sends the paused content back at once, in the same turn, with no new
user message (full Worker runs, real SDK, loopback server)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hookloop import ClientError, Finished, ScriptedClient, ScriptedTurn, Text, ToolUse, Worker
from hookloop.hooks import Continue, Finish, PreLlmRequestInfo, TurnEndInfo
from hookloop.providers.anthropic import AnthropicClient
from hookloop.timeline import ModelRequestEnded, TimelineEvent
from providers.wire import HookLog, WireServer, get_weather

pytestmark = pytest.mark.anyio

USER = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}


@pytest.fixture
async def client(server: WireServer) -> AsyncIterator[AnthropicClient]:
    async with AnthropicClient("m", api_key="k", base_url=server.base_url, max_retries=0, caching=False) as client:
        yield client


async def test_a_paused_turn_is_continued_with_its_content_and_no_new_user_message(
    server: WireServer, client: AnthropicClient
) -> None:
    server.sse("anthropic/pause_text")
    server.sse("anthropic/text")
    worker = Worker(client)
    requests: list[tuple[int, int, list[str]]] = []
    turn_ends: list[str] = []
    stops: list[str | None] = []

    def pre_request(info: PreLlmRequestInfo) -> Continue:
        requests.append((info.turn, info.item_count, [type(i).__name__ for i in info.new_items]))
        return Continue()

    def turn_end(info: TurnEndInfo) -> Finish:
        turn_ends.append(info.last_assistant_text)
        return Finish()

    def on_event(event: TimelineEvent) -> None:
        if isinstance(event, ModelRequestEnded):
            stops.append(event.stop_reason)

    worker.add_pre_llm_request_hook(pre_request)
    worker.add_on_turn_end_hook(turn_end)
    worker.subscribe(on_event)
    outcome = await worker.run("Weather in Paris?")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Let me search for that.\nHello, world!"  # the whole turn's text, not the last part
    assert turn_ends == [outcome.text]
    assert requests == [(1, 1, ["Message"]), (1, 2, ["Message"])]  # one turn, two model requests
    assert stops == ["pause_turn", "end_turn"]
    first, second = (r.body["messages"] for r in server.requests)
    assert first == [USER]
    assert second == [USER, {"role": "assistant", "content": [{"type": "text", "text": "Let me search for that."}]}]
    assert [(i.role, i.text) for i in worker.history] == [  # type: ignore[union-attr]
        ("user", "Weather in Paris?"),
        ("assistant", "Let me search for that."),
        ("assistant", "Hello, world!"),
    ]
    assert outcome.usage.input_tokens == 50


async def test_a_provider_that_pauses_forever_ends_the_run_with_a_clear_error(
    server: WireServer, client: AnthropicClient
) -> None:
    for _ in range(4):
        server.sse("anthropic/pause_text")
    worker = Worker(client)
    worker.max_pause_continuations = 2
    log = HookLog(worker)
    with pytest.raises(ClientError, match=r"paused the turn 3 times in a row .*max_pause_continuations=2"):
        await worker.run("Weather in Paris?")
    assert len(server.requests) == 3  # the first reply and two continuations
    assert len(log.aborts) == 1
    assert "pause_turn" in log.aborts[0]
    assert len(server.replies) == 1


async def test_a_pause_followed_by_a_tool_call_runs_the_call_and_the_loop_goes_on_provider_independently() -> None:
    client = ScriptedClient(
        [
            ScriptedTurn([Text("Searching.")], stop_reason="pause_turn"),
            ScriptedTurn([ToolUse("get_weather", {"location": "Paris"})]),
            [Text("18 degrees.")],
        ]
    )
    worker = Worker(client, tools=[get_weather])
    turns: list[int] = []
    worker.add_pre_llm_request_hook(lambda info: (turns.append(info.turn), Continue())[1])
    outcome = await worker.run("Weather in Paris?")
    assert isinstance(outcome, Finished)
    assert turns == [1, 1, 2]  # the continuation is the same turn; the tool result starts the next
    assert outcome.text == "18 degrees."
    assert [type(i).__name__ for i in worker.history] == ["Message", "Message", "ToolCall", "ToolResult", "Message"]
