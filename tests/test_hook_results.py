"""Chain semantics and each result's effect in a real Worker run (SPEC §2–§3)."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import assert_valid_history, echo
from hookloop import (
    Aborted,
    Finished,
    HookError,
    Paused,
    ScriptedClient,
    Text,
    ToolResult,
    ToolUse,
    Worker,
)
from hookloop.hooks import (
    ON_TEXT_DELTA,
    Abort,
    AbortInfo,
    Cancel,
    Continue,
    Finish,
    Pause,
    PostToolCallInfo,
    PreToolCallInfo,
    Skip,
    Stop,
)

pytestmark = pytest.mark.anyio


def two_call_client() -> ScriptedClient:
    return ScriptedClient(
        [[Text("calling"), ToolUse("echo", {"text": "1"}), ToolUse("echo", {"text": "2"})], [Text("end")]]
    )


def abort_log(worker: Worker) -> list[AbortInfo]:
    log: list[AbortInfo] = []
    worker.add_on_abort_hook(log.append)  # type: ignore[arg-type]
    return log


async def test_hooks_run_in_registration_order_and_the_first_decisive_result_ends_the_chain() -> None:
    calls: list[str] = []

    def make(name: str, result: Any) -> Any:
        def hook(info: PreToolCallInfo) -> Any:
            calls.append(f"{name}:{info.arguments['text']}")
            return result

        return hook

    worker = Worker(two_call_client(), tools=[echo])
    worker.add_pre_tool_call_hook(make("A", Continue()))
    worker.add_pre_tool_call_hook(make("B", Skip("not today")))
    worker.add_pre_tool_call_hook(make("C", Continue()))
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert calls == ["A:1", "B:1", "A:2", "B:2"]
    res = [i for i in worker.history if isinstance(i, ToolResult)]
    assert [r.content for r in res] == ["skipped by hook 'hook': not today"] * 2
    assert all(r.is_error for r in res)


async def test_abort_in_pre_tool_call_raises_aborted_fires_on_abort_once_and_keeps_history_valid() -> None:
    worker = Worker(two_call_client(), tools=[echo])
    log = abort_log(worker)

    def guard(info: PreToolCallInfo) -> Abort | Continue:
        return Abort("dangerous") if info.arguments["text"] == "2" else Continue()

    worker.add_pre_tool_call_hook(guard)
    with pytest.raises(Aborted) as err:
        await worker.run("go")
    assert err.value.reason == "dangerous"
    assert err.value.hook == "guard"
    assert err.value.run_id is not None
    assert [a.reason for a in log] == ["dangerous"]
    assert_valid_history(worker.history)
    res = [i for i in worker.history if isinstance(i, ToolResult)]
    assert all("aborted (dangerous)" in r.content for r in res)


async def test_cancel_on_prompt_submit_ends_the_run_before_any_model_request() -> None:
    client = ScriptedClient([[Text("never")]])
    worker = Worker(client)
    log = abort_log(worker)
    worker.add_on_prompt_submit_hook(lambda info: Cancel("empty input") if not info.prompt.strip() else Continue())
    with pytest.raises(Aborted, match="empty input"):
        await worker.run("   ")
    assert client.requests == []
    assert [a.reason for a in log] == ["empty input"]
    assert worker.history == ()


async def test_cancel_on_pre_llm_request_aborts() -> None:
    worker = Worker(ScriptedClient([[Text("never")]]))
    worker.add_pre_llm_request_hook(lambda info: Cancel("budget exhausted"))
    with pytest.raises(Aborted, match="budget exhausted"):
        await worker.run("q")


async def test_post_tool_call_abort_records_every_result_then_raises() -> None:
    worker = Worker(two_call_client(), tools=[echo])
    worker.add_post_tool_call_hook(lambda info: Abort("bad output") if info.content == "1" else Continue())
    with pytest.raises(Aborted, match="bad output"):
        await worker.run("go")
    res = [i for i in worker.history if isinstance(i, ToolResult)]
    assert [r.content for r in res] == ["1", "2"]
    assert_valid_history(worker.history)


async def test_post_tool_call_stop_finishes_after_the_batch_without_another_model_turn() -> None:
    client = two_call_client()
    worker = Worker(client, tools=[echo])
    worker.add_post_tool_call_hook(lambda info: Stop("enough") if info.content == "1" else Continue())
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert outcome.reason == "stopped_by_hook"
    assert outcome.stop_reason == "enough"
    assert len(client.requests) == 1
    assert outcome.text == "calling"
    assert_valid_history(worker.history)


async def test_stream_hook_abort_and_pause_end_the_run_as_aborted() -> None:
    worker = Worker(ScriptedClient([[Text("the secret is 42")]], chunk_size=4))
    worker.add_on_text_delta_hook(lambda d: Abort("leak") if "42" in d.text else Continue())
    with pytest.raises(Aborted, match="leak"):
        await worker.run("q")
    assert worker.history[-1].to_json()["role"] == "user"  # the partial reply was not committed

    worker2 = Worker(ScriptedClient([[Text("abc")]]))
    worker2.add_hook(ON_TEXT_DELTA, lambda d: Pause())
    with pytest.raises(Aborted) as err:
        await worker2.run("q")
    assert err.value.reason == "Paused by stream hook"


async def test_async_stream_hooks_and_tool_call_delta_hooks_see_fragments() -> None:
    fragments: list[str] = []

    async def watch(delta: Any) -> Continue:
        fragments.append(delta.fragment)
        return Continue()

    worker = Worker(
        ScriptedClient([[ToolUse("echo", {"text": "rm -rf /"})], [Text("ok")]], fragment_size=5), tools=[echo]
    )
    worker.add_on_tool_call_delta_hook(watch)
    await worker.run("go")
    assert "".join(fragments) == '{"text": "rm -rf /"}'
    assert len(fragments) == 4


async def test_on_turn_end_pause_returns_paused_without_pending_calls() -> None:
    worker = Worker(ScriptedClient([[Text("draft")]]))
    worker.add_on_turn_end_hook(lambda info: Pause("review the draft"))
    outcome = await worker.run("write")
    assert isinstance(outcome, Paused)
    assert outcome.reason == "review the draft"
    assert outcome.pending == ()
    assert outcome.checkpoint.pause_kind == "turn_end"


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (None, "returned NoneType (return Continue() to pass on); pre_tool_call accepts"),
        (Finish(), "returned Finish; pre_tool_call accepts Abort, Allow, Ask, Continue, Deny, Pause, Skip"),
        ("yes", "returned str"),
        (Stop(), "returned Stop"),
    ],
)
async def test_a_wrong_result_ends_the_run_with_a_hook_error_naming_hook_and_event(
    returned: object, message: str
) -> None:
    worker = Worker(two_call_client(), tools=[echo])
    log = abort_log(worker)

    def sloppy(info: PreToolCallInfo) -> Any:
        return returned

    worker.add_hook(__import__("hookloop.hooks").hooks.PRE_TOOL_CALL, sloppy, name="sloppy")
    with pytest.raises(HookError) as err:
        await worker.run("go")
    assert err.value.hook == "sloppy"
    assert err.value.event == "pre_tool_call"
    assert message in str(err.value)
    assert len(log) == 1
    assert log[0].error_type == "HookError"
    assert_valid_history(worker.history)


async def test_a_raising_hook_becomes_hook_error_with_its_cause_and_on_abort_fires_once() -> None:
    worker = Worker(two_call_client(), tools=[echo])
    log = abort_log(worker)

    def broken(info: PostToolCallInfo) -> Continue:
        raise KeyError("missing")

    worker.add_post_tool_call_hook(broken)
    with pytest.raises(HookError) as err:
        await worker.run("go")
    assert isinstance(err.value.__cause__, KeyError)
    assert "raised KeyError" in str(err.value)
    assert len(log) == 1
    assert_valid_history(worker.history)


async def test_on_abort_hook_failure_is_reported_not_raised_and_other_abort_hooks_still_run() -> None:
    worker = Worker(ScriptedClient([]))
    seen: list[str] = []

    def bad(info: AbortInfo) -> None:
        raise RuntimeError("abort hook broke")

    worker.add_on_abort_hook(bad)
    worker.add_on_abort_hook(lambda info: seen.append(info.reason))  # type: ignore[func-returns-value]
    events: list[Any] = []
    worker.subscribe(events.append)
    with pytest.raises(Exception, match="no more turns"):
        await worker.run("q")
    assert len(seen) == 1
    assert "no more turns" in seen[0]
    assert any(getattr(e, "decision", None) == "HookError" for e in events)


async def test_unknown_tool_gets_no_hooks() -> None:
    seen: list[str] = []
    worker = Worker(ScriptedClient([[ToolUse("ghost", {})], [Text("ok")]]), tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: (seen.append(info.tool_name), Continue())[1])
    worker.add_post_tool_call_hook(lambda info: (seen.append(info.tool_name), Continue())[1])
    await worker.run("go")
    assert seen == []


async def test_post_tool_batch_fires_once_with_every_call_and_its_context_follows_the_last_result() -> None:
    from hookloop.hooks import Deny, PostToolBatchInfo

    client = ScriptedClient(
        [[ToolUse("echo", {"text": "a"}), ToolUse("echo", {"text": "b"}), ToolUse("ghost", {})], [Text("end")]]
    )
    worker = Worker(client, tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: Deny("not b") if info.arguments["text"] == "b" else Continue())
    batches: list[PostToolBatchInfo] = []

    def batch(info: PostToolBatchInfo) -> Continue:
        batches.append(info)
        return Continue(additional_context="all three answered")

    worker.hooks.post_tool_batch(batch)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert len(batches) == 1
    assert [(c.tool_name, c.is_error) for c in batches[0].calls] == [("echo", False), ("echo", True), ("ghost", True)]
    results = [i for i in worker.history if isinstance(i, ToolResult)]
    assert results[-1].content.endswith("all three answered\n</hook-context>")
    assert results[-1].meta["batch_context_added_by"] == ("batch",)
    assert "all three answered" not in results[0].content
    assert_valid_history(worker.history)
