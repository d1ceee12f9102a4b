"""cancel() from a task or a thread; loop guards (max_turns, the stop-hook guard); Worker states."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from helpers import assert_valid_history, echo
from hookloop import (
    Cancelled,
    ClientError,
    Finished,
    MaxTurnsExceeded,
    Message,
    ScriptedClient,
    ScriptedTurn,
    ScriptError,
    StopHookLoopError,
    Text,
    ToolResult,
    ToolUse,
    Worker,
    WorkerStateError,
    tool,
)
from hookloop.hooks import AbortInfo, Continue, ContinueWithMessages, Finish, TurnEndInfo

pytestmark = pytest.mark.anyio


def abort_reasons(worker: Worker) -> list[str]:
    reasons: list[str] = []

    def on_abort(info: AbortInfo) -> None:
        reasons.append(info.reason)

    worker.add_on_abort_hook(on_abort)
    return reasons


async def test_cancel_during_the_model_stream_from_another_task() -> None:
    started = asyncio.Event()
    worker = Worker(ScriptedClient([ScriptedTurn([Text("a" * 1000)], delay=0.01)], chunk_size=1))
    worker.add_on_text_delta_hook(lambda d: (started.set(), Continue())[1])
    reasons = abort_reasons(worker)
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    assert reasons == ["Cancelled"]
    assert [type(i).__name__ for i in worker.history] == ["Message"]  # partial reply discarded
    assert not worker.running


async def test_cancel_while_tools_run_from_another_thread_leaves_one_result_per_call() -> None:
    entered = threading.Event()
    finished: list[str] = []

    @tool
    async def forever() -> str:
        entered.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.append("cleaned up")
        return "unreachable"

    worker = Worker(
        ScriptedClient([[ToolUse("forever", {}), ToolUse("echo", {"text": "quick"})], [Text("x")]]),
        tools=[forever, echo],
    )
    reasons = abort_reasons(worker)

    def canceller() -> None:
        assert entered.wait(5)
        worker.cancel()

    thread = threading.Thread(target=canceller)
    thread.start()
    with pytest.raises(Cancelled):
        await worker.run("go")
    thread.join()
    assert reasons == ["Cancelled"]
    assert finished == ["cleaned up"]
    assert_valid_history(worker.history)
    results = {r.call_id: r for r in worker.history if isinstance(r, ToolResult)}
    assert "cancelled" in results["call_0001"].content
    # the worker is reusable afterwards
    worker.client = ScriptedClient([[Text("again")]])
    assert isinstance(await worker.run("again?"), Finished)


async def test_cancelling_the_callers_task_is_not_swallowed_and_fires_on_abort() -> None:
    worker = Worker(ScriptedClient([ScriptedTurn([Text("z" * 100)], delay=0.01)], chunk_size=1))
    started = asyncio.Event()
    worker.add_on_text_delta_hook(lambda d: (started.set(), Continue())[1])
    reasons = abort_reasons(worker)
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert reasons == ["Cancelled"]


async def test_cancel_with_no_run_in_flight_does_nothing() -> None:
    worker = Worker(ScriptedClient([[Text("ok")]]))
    worker.cancel()
    assert isinstance(await worker.run("q"), Finished)


async def test_provider_errors_end_the_run_with_client_error_and_on_abort() -> None:
    for mode in ("raise", "event"):
        worker = Worker(
            ScriptedClient(
                [ScriptedTurn([Text("partial answer")], error=ScriptError("overloaded", after_events=2, mode=mode))]
            )
        )  # type: ignore[arg-type]
        reasons = abort_reasons(worker)
        with pytest.raises(ClientError, match="overloaded"):
            await worker.run("q")
        assert len(reasons) == 1
        assert [type(i).__name__ for i in worker.history] == ["Message"]


async def test_max_turns() -> None:
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": str(i)})] for i in range(10)]), tools=[echo], max_turns=3)
    reasons = abort_reasons(worker)
    with pytest.raises(MaxTurnsExceeded, match="max_turns=3"):
        await worker.run("loop")
    assert len(reasons) == 1
    assert_valid_history(worker.history)


async def test_on_turn_end_retry_sets_stop_hook_active_and_lets_the_hook_end_the_run() -> None:
    worker = Worker(ScriptedClient([[Text("not json")], [Text('{"ok": true}')]]))
    seen: list[tuple[bool, int]] = []

    def validate(info: TurnEndInfo) -> Finish | ContinueWithMessages:
        seen.append((info.stop_hook_active, info.forced_continuations))
        import json

        try:
            json.loads(info.last_assistant_text)
        except ValueError:
            return ContinueWithMessages("Invalid JSON. Please fix and try again.")
        return Finish()

    worker.add_on_turn_end_hook(validate)
    outcome = await worker.run("answer in JSON")
    assert isinstance(outcome, Finished)
    assert outcome.text == '{"ok": true}'
    assert seen == [(False, 0), (True, 1)]
    retry = [i for i in worker.history if isinstance(i, Message) and i.role == "user"][-1]
    assert retry.text == "Invalid JSON. Please fix and try again."


async def test_a_stop_hook_that_never_lets_go_is_capped_with_a_clear_error() -> None:
    worker = Worker(ScriptedClient([[Text(f"try {i}")] for i in range(10)]), max_forced_continuations=3)
    reasons = abort_reasons(worker)
    worker.add_on_turn_end_hook(lambda info: ContinueWithMessages("again"))
    with pytest.raises(StopHookLoopError, match="forced 3 continuations in a row") as err:
        await worker.run("q")
    assert err.value.hook == "<lambda>"
    assert len(reasons) == 1


async def test_cache_locked_state_freezes_the_prefix_but_runs_append_and_hooks_register() -> None:
    client = ScriptedClient([[Text("one")], [Text("two")]])
    worker = Worker(client, system="be brief")
    await worker.run("first")
    worker.lock_cache()
    assert worker.state == "cache_locked"
    with pytest.raises(WorkerStateError, match="cache_locked"):
        worker.system_prompt = "be verbose"
    with pytest.raises(WorkerStateError):
        worker.set_history([])
    with pytest.raises(WorkerStateError):
        worker.add_tool(echo)
    worker.add_on_turn_end_hook(lambda info: Finish())  # registration works in both states
    await worker.run("second")
    assert client.requests[1].cache_prefix == 2
    assert len(worker.history) == 4
    worker.unlock_cache()
    worker.system_prompt = "be verbose"
    worker.set_history([])
    assert worker.history == ()
    assert worker.token_estimate == 0


async def test_one_run_at_a_time() -> None:
    worker = Worker(ScriptedClient([ScriptedTurn([Text("slow")], delay=0.01)]))
    gate = asyncio.Event()
    worker.add_on_text_delta_hook(lambda d: (gate.set(), Continue())[1])
    first = asyncio.create_task(worker.run("a"))
    await gate.wait()
    with pytest.raises(WorkerStateError, match="already running"):
        await worker.run("b")
    await first


async def test_iter_run_yields_timeline_events_and_keeps_the_outcome() -> None:
    worker = Worker(ScriptedClient([[Text("hi"), ToolUse("echo", {"text": "x"})], [Text("bye")]]), tools=[echo])
    kinds: list[str] = []
    async for event in worker.iter_run("go"):
        kinds.append(type(event).__name__)
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "RunEnded"
    assert {"TextDelta", "ToolStarted", "ToolEnded", "ItemAppended"} <= set(kinds)
    assert isinstance(worker.last_outcome, Finished)
    assert worker.last_outcome.text == "bye"


@pytest.mark.parametrize("delay", [0.0, 0.002], ids=["at once", "waiting between deltas"])
async def test_iter_run_yields_every_event_a_subscriber_sees_in_the_same_order(delay: float) -> None:
    """Whether the consumer keeps up or waits on an empty buffer (its subscriber changes place then), it is
    given exactly the events another subscriber gets, in order; afterwards it no longer follows the timeline."""
    script = [
        ScriptedTurn(
            [Text("hello there"), ToolUse("echo", {"text": "x"}), ToolUse("echo", {"text": "y"})], delay=delay
        ),
        ScriptedTurn([Text("bye now")], delay=delay),
    ]
    worker = Worker(ScriptedClient(script, chunk_size=2), tools=[echo])
    heard: list[object] = []
    worker.subscribe(heard.append)
    given = [event async for event in worker.iter_run("go")]
    assert len(given) > 20
    assert [id(e) for e in given] == [id(e) for e in heard]
    assert type(given[-1]).__name__ == "RunEnded"
    assert len(worker.timeline.subscribers) == 1
    assert isinstance(worker.last_outcome, Finished)


async def test_leaving_iter_run_early_cancels_the_run() -> None:
    worker = Worker(ScriptedClient([ScriptedTurn([Text("x" * 200)], delay=0.005)], chunk_size=1))
    reasons = abort_reasons(worker)
    events: Any = worker.iter_run("go")
    async for event in events:
        if type(event).__name__ == "TextDelta":
            break
    await events.aclose()
    assert reasons == ["Cancelled"]
    assert not worker.running


async def test_a_checkpoint_after_a_cancelled_run_resumes_the_conversation_elsewhere() -> None:
    worker = Worker(ScriptedClient([ScriptedTurn([Text("x" * 500)], delay=0.005)], chunk_size=1))
    started = asyncio.Event()
    worker.add_on_text_delta_hook(lambda d: (started.set(), Continue())[1])
    run = asyncio.create_task(worker.run("long answer please"))
    await started.wait()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    checkpoint = worker.checkpoint("cancelled by the user")
    assert checkpoint.reason == "cancelled by the user"
    fresh = Worker(ScriptedClient([[Text("short answer")]]))
    outcome = await fresh.resume(checkpoint.dumps(), messages="make it short")
    assert isinstance(outcome, Finished)
    assert outcome.text == "short answer"
    assert [i.text for i in fresh.history if isinstance(i, Message)] == [
        "long answer please",
        "make it short",
        "short answer",
    ]
