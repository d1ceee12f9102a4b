"""SPEC §4.3: declared edits are validated and applied by the Worker, and the transcript names the hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import add, echo
from hookloop import HookError, Message, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import SESSION_START, Continue, PostToolCallInfo, PreToolCallInfo, PromptSubmitInfo

pytestmark = pytest.mark.anyio


def last_result(worker: Worker) -> ToolResult:
    return [i for i in worker.history if isinstance(i, ToolResult)][-1]


async def test_updated_input_is_validated_then_executed_and_recorded(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    worker = Worker(
        ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("ok")]]), tools=[add], transcript=transcript
    )

    def double(info: PreToolCallInfo) -> Continue:
        return Continue(updated_input={"a": info.arguments["a"] * 10, "b": info.arguments["b"]})

    worker.add_hook(__import__("hookloop.hooks").hooks.PRE_TOOL_CALL, double, name="doubler")
    seen_by_later: list[Any] = []
    worker.add_pre_tool_call_hook(lambda info: (seen_by_later.append(dict(info.arguments)), Continue())[1])
    await worker.run("go")
    worker.close()
    result = last_result(worker)
    assert result.content == "12"
    assert result.meta["input_edited_by"] == "doubler"
    assert result.meta["executed_arguments"] == {"a": 10, "b": 2}
    # the model's own call stays as the model made it (valid to send back)
    call = next(i for i in worker.history if type(i).__name__ == "ToolCall")
    assert call.to_json()["arguments"] == {"a": 1, "b": 2}
    # each hook sees the input as interceptors produced it; edits apply after the chain, in order
    assert seen_by_later == [{"a": 1, "b": 2}]
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    hook_lines = [x for x in lines if x["type"] == "hook"]
    assert hook_lines[0]["hook"] == "doubler"
    assert hook_lines[0]["reason"] == "updated_input"
    items = [x["item"] for x in lines if x["type"] == "item" and x["item"]["type"] == "tool_result"]
    assert items[0]["meta"]["input_edited_by"] == "doubler"


async def test_invalid_updated_input_fails_the_call_and_nothing_executes() -> None:
    ran: list[int] = []
    from hookloop import tool

    @tool
    async def count(n: int) -> str:
        ran.append(n)
        return "ran"

    worker = Worker(ScriptedClient([[ToolUse("count", {"n": 1})], [Text("ok")]]), tools=[count])
    worker.add_pre_tool_call_hook(lambda info: Continue(updated_input={"n": "many"}))
    await worker.run("go")
    result = last_result(worker)
    assert result.is_error
    assert "field 'n': Input should be a valid integer" in result.content
    assert "after hook" in result.content
    assert ran == []


async def test_additional_context_on_prompt_submit_is_added_as_marked_context_and_capped() -> None:
    client = ScriptedClient([[Text("ok")]])
    worker = Worker(client, context_cap=50)

    def ctx(info: PromptSubmitInfo) -> Continue:
        return Continue(additional_context="x" * 80)

    worker.add_on_prompt_submit_hook(ctx)
    await worker.run("question")
    user, context = worker.history[0], worker.history[1]
    assert isinstance(context, Message)
    assert user.to_json()["content"] == [{"type": "text", "text": "question"}]
    assert context.meta["source"] == "hook_context"
    assert context.meta["hook"] == "ctx"
    assert '<hook-context hook="ctx" event="on_prompt_submit">' in context.text
    assert "x" * 50 in context.text
    assert "x" * 51 not in context.text
    assert "30 characters cut by hookloop" in context.text
    # the model saw it
    assert any(isinstance(i, Message) and "hook-context" in i.text for i in client.requests[0].items)


async def test_session_start_context_and_post_tool_call_replace_output_and_context() -> None:
    worker = Worker(
        ScriptedClient([[ToolUse("echo", {"text": "token=abc123"})], [Text("ok")]]), tools=[echo], output_cap=100
    )
    worker.add_hook(SESSION_START, lambda info: Continue(additional_context="repo uses pytest"), name="intro")

    def mask(info: PostToolCallInfo) -> Continue:
        return Continue(replace_output=info.content.replace("abc123", "***"), additional_context="masked a secret")

    worker.add_post_tool_call_hook(mask)
    await worker.run("go")
    assert "repo uses pytest" in worker.history[0].to_json()["content"][0]["text"]  # type: ignore[index]
    result = last_result(worker)
    assert result.content.startswith("token=***")
    assert "masked a secret" in result.content
    assert result.meta["output_replaced_by"] == "mask"
    assert result.meta["context_added_by"] == ("mask",)


async def test_replace_output_is_capped_with_a_marker() -> None:
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "t"})], [Text("ok")]]), tools=[echo], output_cap=10)
    worker.add_post_tool_call_hook(lambda info: Continue(replace_output="y" * 25))
    await worker.run("go")
    assert last_result(worker).content.startswith("y" * 10 + "\n[… 15 characters cut by hookloop")


@pytest.mark.parametrize(
    ("event_name", "edit"),
    [
        ("on_prompt_submit", {"updated_input": {"a": 1}}),
        ("post_tool_call", {"updated_input": {"a": 1}}),
        ("pre_tool_call", {"replace_output": "x"}),
        ("pre_tool_call", {"additional_context": "x"}),
    ],
)
async def test_an_edit_the_event_does_not_take_is_a_hook_error(event_name: str, edit: dict[str, Any]) -> None:
    from hookloop import hooks

    event = getattr(hooks, event_name.upper())
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "t"})], [Text("ok")]]), tools=[echo])
    worker.add_hook(event, lambda info: Continue(**edit), name="overreach")
    with pytest.raises(HookError, match=f"is not accepted on {event_name}") as err:
        await worker.run("go")
    assert err.value.hook == "overreach"


async def test_an_ask_may_rewrite_the_input_it_asks_about_and_post_hooks_see_how_long_the_tool_ran() -> None:
    from hookloop import Approve, Paused
    from hookloop.hooks import Ask

    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "raw"}, call_id="e1")], [Text("ok")]]), tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: Ask("check the cleaned text", updated_input={"text": "clean"}))
    durations: list[float] = []
    worker.add_post_tool_call_hook(lambda info: (durations.append(info.seconds), Continue())[1])
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    assert paused.pending[0].arguments == {"text": "clean"}  # the person is asked about the rewritten input
    await worker.resume(paused.checkpoint, {"e1": Approve()})
    assert last_result(worker).content == "clean"
    assert len(durations) == 1
    assert durations[0] >= 0.0


async def test_a_hook_raising_aborted_ends_the_run_with_that_error_not_a_hook_error() -> None:
    from hookloop import Aborted

    class PolicyStop(Aborted):
        pass

    def stopper(info: Any) -> Continue:
        raise PolicyStop("policy says stop", hook="stopper", event="pre_tool_call")

    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "x"})], [Text("ok")]]), tools=[echo])
    worker.add_pre_tool_call_hook(stopper)
    with pytest.raises(PolicyStop, match="policy says stop"):
        await worker.run("go")
