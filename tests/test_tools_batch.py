"""Tool batches: parallel execution, results in call order, one result per call, bad tool behaviour."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from helpers import Rendezvous, add, assert_valid_history, boom, echo, whoami
from hookloop import (
    Finished,
    ScriptedClient,
    Text,
    ToolFailure,
    ToolOutput,
    ToolResult,
    ToolUse,
    Worker,
    tool,
)
from hookloop.hooks import Continue, PostToolCallInfo, PreToolCallInfo

pytestmark = pytest.mark.anyio


def results(worker: Worker) -> list[ToolResult]:
    return [i for i in worker.history if isinstance(i, ToolResult)]


async def test_tools_of_one_turn_run_in_parallel_and_results_keep_call_order() -> None:
    meeting = Rendezvous(parties=3)
    order: list[str] = []

    @tool
    async def meet(label: str) -> str:
        out = await meeting.meet()
        order.append(label)
        return f"{label}:{out}"

    client = ScriptedClient([[ToolUse("meet", {"label": x}) for x in "abc"], [Text("ok")]])
    worker = Worker(client, tools=[meet])
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    # all three met, which is only possible if they ran at the same time
    assert [r.content for r in results(worker)] == ["a:met 3", "b:met 3", "c:met 3"]
    assert_valid_history(worker.history)


async def test_failing_timed_out_unknown_and_malformed_calls_each_get_one_error_result() -> None:
    @tool
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "unreachable"

    client = ScriptedClient(
        [
            [
                ToolUse("boom", {"reason": "disk on fire"}),
                ToolUse("hang", {}),
                ToolUse("nosuch", {"x": 1}),
                ToolUse("echo", '{"text": "unterminated'),
                ToolUse("echo", "[1, 2]"),
                ToolUse("add", {"a": "one", "b": 2}),
                ToolUse("echo", {"text": "fine"}),
            ],
            [Text("recovered")],
        ]
    )
    worker = Worker(client, tools=[boom, hang, echo, add], tool_timeout=0.05)
    seen: list[str] = []

    def pre(info: PreToolCallInfo) -> Continue:
        seen.append(info.tool_name)
        return Continue()

    worker.add_pre_tool_call_hook(pre)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert outcome.text == "recovered"
    res = results(worker)
    assert [r.is_error for r in res] == [True, True, True, True, True, True, False]
    assert res[0].content == "tool 'boom' failed: RuntimeError: disk on fire"
    assert res[1].content == "tool 'hang' timed out after 0.05 seconds"
    assert res[2].content.startswith("unknown tool 'nosuch'; the available tools are: add, boom, echo, hang")
    assert "not a valid JSON object" in res[3].content
    assert "not a valid JSON object" in res[4].content
    assert "field 'a': Input should be a valid integer" in res[5].content
    assert res[6].content == "fine"
    # unknown tools get no hooks; malformed JSON never reaches hooks either
    assert seen == ["boom", "hang", "add", "echo"]
    assert_valid_history(worker.history)


async def test_tool_outputs_are_rendered_and_non_json_values_become_clear_errors() -> None:
    @tool
    async def as_dict() -> dict[str, Any]:
        return {"k": [1, 2]}

    @tool
    async def as_object() -> object:
        return object()

    @tool
    async def as_failure() -> str:
        raise ToolFailure("exact message")

    @tool
    async def as_output() -> ToolOutput:
        return ToolOutput(content="soft error", is_error=True)

    @tool
    async def as_none() -> None:
        return None

    client = ScriptedClient(
        [[ToolUse(n, {}) for n in ("as_dict", "as_object", "as_failure", "as_output", "as_none")], [Text("ok")]]
    )
    worker = Worker(client, tools=[as_dict, as_object, as_failure, as_output, as_none])
    await worker.run("go")
    res = results(worker)
    assert (res[0].content, res[0].is_error) == ('{"k": [1, 2]}', False)
    assert res[1].is_error
    assert "neither text nor JSON" in res[1].content
    assert (res[2].content, res[2].is_error) == ("exact message", True)
    assert (res[3].content, res[3].is_error) == ("soft error", True)
    assert (res[4].content, res[4].is_error) == ("", False)


async def test_tool_context_carries_run_call_and_idempotency_key() -> None:
    client = ScriptedClient([[ToolUse("whoami", {}, call_id="call-7")], [Text("ok")]])
    worker = Worker(client, tools=[whoami])
    outcome = await worker.run("go")
    run_id, call_id, key = results(worker)[0].content.split("|")
    assert run_id == outcome.run_id
    assert call_id == "call-7"
    assert key == f"{outcome.run_id}:call-7"


async def test_sync_tools_run_in_a_thread_so_async_tools_progress_meanwhile() -> None:
    import threading

    release = threading.Event()

    @tool
    def blocking() -> str:
        """Blocks its thread until the async tool releases it."""
        assert release.wait(5)
        return "released"

    @tool
    async def releaser() -> str:
        release.set()
        return "set"

    client = ScriptedClient([[ToolUse("blocking", {}), ToolUse("releaser", {})], [Text("ok")]])
    worker = Worker(client, tools=[blocking, releaser])
    await worker.run("go")
    assert [r.content for r in results(worker)] == ["released", "set"]


async def test_post_tool_call_sees_each_result_in_call_order_after_all_ran() -> None:
    log: list[str] = []

    @tool
    async def slow_first(n: int) -> str:
        log.append(f"run{n}")
        return str(n)

    def post(info: PostToolCallInfo) -> Continue:
        log.append(f"post{info.content}")
        return Continue()

    client = ScriptedClient([[ToolUse("slow_first", {"n": 1}), ToolUse("slow_first", {"n": 2})], [Text("ok")]])
    worker = Worker(client, tools=[slow_first])
    worker.add_post_tool_call_hook(post)
    await worker.run("go")
    assert log[2:] == ["post1", "post2"]
    assert sorted(log[:2]) == ["run1", "run2"]


def test_echo_tool_is_still_a_function() -> None:
    assert echo("x") == "x"
