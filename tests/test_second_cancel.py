"""A second cancel while a run is already ending: ignored; run() still raises Cancelled; every on_abort and
session_end hook runs exactly once and to completion, shielded from the second cancel (issue 10, item 15).

Real hooks that record their calls and await real work (a thread round trip) in the middle; no sleeps.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from helpers import assert_valid_history
from hookloop import Aborted, Cancelled, Finished, ScriptedClient, ScriptedTurn, Text, ToolResult, ToolUse, Worker, tool
from hookloop.hooks import SESSION_END, AbortInfo, Continue, SessionEndInfo
from hookloop.timeline import HookDecision, ItemAppended, TimelineEvent

pytestmark = pytest.mark.anyio


def streaming_worker() -> tuple[Worker, asyncio.Event]:
    """A Worker whose model streams slowly; the event is set once the stream is running."""
    started = asyncio.Event()
    worker = Worker(ScriptedClient([ScriptedTurn([Text("a" * 2000)], delay=0.005)], chunk_size=1))
    worker.add_on_text_delta_hook(lambda d: (started.set(), Continue())[1])
    return worker, started


async def real_work() -> None:
    """A suspension point that really waits on something (a round trip through a worker thread)."""
    await asyncio.to_thread(threading.get_ident)


async def test_cancel_again_from_inside_on_abort_and_session_end_is_ignored() -> None:
    worker, started = streaming_worker()
    calls: list[str] = []

    async def first_abort(info: AbortInfo) -> None:
        calls.append("abort-1 start")
        worker.cancel()  # the second cancel, from inside the ending run
        await real_work()
        worker.cancel()
        await real_work()
        calls.append("abort-1 end")

    async def second_abort(info: AbortInfo) -> None:
        calls.append(f"abort-2 {info.reason}")

    async def session_end(info: SessionEndInfo) -> None:
        calls.append("end start")
        worker.cancel()
        await real_work()
        calls.append(f"end {info.reason}")

    worker.add_on_abort_hook(first_abort)
    worker.add_on_abort_hook(second_abort)
    worker.add_hook(SESSION_END, session_end)
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    assert calls == ["abort-1 start", "abort-1 end", "abort-2 Cancelled", "end start", "end cancelled"]
    assert not worker.running
    assert asyncio.current_task() is not None
    assert run.cancelling() == 0  # no stray cancellation left on the task
    worker.client = ScriptedClient([[Text("again")]])
    assert isinstance(await worker.run("again?"), Finished)  # and the Worker is reusable
    assert calls[-1] == "end finished"


async def test_a_second_cancel_from_another_thread_while_on_abort_runs_is_ignored() -> None:
    worker, started = streaming_worker()
    loop = asyncio.get_running_loop()
    in_abort = threading.Event()
    released = asyncio.Event()
    calls: list[str] = []

    async def on_abort(info: AbortInfo) -> None:
        calls.append("abort start")
        in_abort.set()
        await released.wait()  # the other thread cancels again, then releases us
        await real_work()
        calls.append("abort end")

    async def session_end(info: SessionEndInfo) -> None:
        calls.append(f"end {info.reason}")

    def second_canceller() -> None:
        assert in_abort.wait(10)
        worker.cancel()  # scheduled into the loop before the release below
        loop.call_soon_threadsafe(released.set)

    worker.add_on_abort_hook(on_abort)
    worker.add_hook(SESSION_END, session_end)
    thread = threading.Thread(target=second_canceller)
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    thread.start()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    thread.join()
    assert calls == ["abort start", "abort end", "end cancelled"]


async def test_cancelling_the_task_while_on_abort_runs_lets_the_hooks_finish_then_propagates() -> None:
    worker, started = streaming_worker()
    in_abort = asyncio.Event()
    calls: list[str] = []

    async def on_abort(info: AbortInfo) -> None:
        calls.append("abort start")
        in_abort.set()
        await real_work()
        await real_work()
        calls.append("abort end")

    async def session_end(info: SessionEndInfo) -> None:
        await real_work()
        calls.append(f"end {info.reason}")

    worker.add_on_abort_hook(on_abort)
    worker.add_hook(SESSION_END, session_end)
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    worker.cancel()
    await in_abort.wait()
    run.cancel()  # a plain task cancellation, not Worker.cancel: shielded from, then honoured
    with pytest.raises(asyncio.CancelledError):
        await run
    assert calls == ["abort start", "abort end", "end cancelled"]


async def test_a_second_cancel_while_tools_clean_up_does_not_cut_their_cleanup() -> None:
    entered = asyncio.Event()
    cleaned: list[str] = []
    calls: list[str] = []

    @tool
    async def slow_cleanup() -> str:
        entered.set()
        try:
            await asyncio.Event().wait()
        finally:
            worker.cancel()  # cancelled again while the batch waits for this cleanup
            await real_work()
            cleaned.append("done")
        return "unreachable"

    worker = Worker(ScriptedClient([[ToolUse("slow_cleanup", {})], [Text("x")]]), tools=[slow_cleanup])
    worker.add_on_abort_hook(lambda info: calls.append(info.reason))
    run = asyncio.create_task(worker.run("go"))
    await entered.wait()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    assert cleaned == ["done"]
    assert calls == ["Cancelled"]
    assert_valid_history(worker.history)
    assert "cancelled" in next(i for i in worker.history if isinstance(i, ToolResult)).content


async def test_a_cancel_that_arrives_as_the_run_finishes_never_reaches_session_end() -> None:
    # cancel() from the run's own task, after its last suspension point: the run has its outcome already.
    worker = Worker(ScriptedClient([[Text("done")]]))
    calls: list[str] = []

    def last_event(event: TimelineEvent) -> None:
        if isinstance(event, ItemAppended) and getattr(event.item, "role", None) == "assistant":
            worker.cancel()

    async def session_end(info: SessionEndInfo) -> None:
        await real_work()
        calls.append(f"end {info.reason}")

    worker.subscribe(last_event)
    worker.add_hook(SESSION_END, session_end)
    try:
        outcome = await worker.run("q")
    except Cancelled:
        outcome = None
    assert calls in (["end finished"], ["end cancelled"])
    assert outcome is None or isinstance(outcome, Finished)
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_an_on_abort_hook_that_aborts_does_not_stop_the_others() -> None:
    worker, started = streaming_worker()
    calls: list[str] = []
    events: list[TimelineEvent] = []
    worker.subscribe(events.append)

    def rude(info: AbortInfo) -> None:
        calls.append("rude")
        raise Aborted("no", hook="rude")  # what a command hook's cancel raises

    worker.add_on_abort_hook(rude)
    worker.add_on_abort_hook(lambda info: calls.append("polite"))
    worker.add_hook(SESSION_END, lambda info: calls.append("end"))
    run = asyncio.create_task(worker.run("q"))
    await started.wait()
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    assert calls == ["rude", "polite", "end"]
    assert any(isinstance(e, HookDecision) and e.event == "on_abort" and e.hook == "rude" for e in events)
