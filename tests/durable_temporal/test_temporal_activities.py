"""Every effect of a durable run on Temporal is its own activity: read back from the workflow's history on a real
dev server, with real worker processes that the tests SIGKILL; model retries; continue-as-new."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.converter import default as default_converter

from durable_temporal.temporal_kit import Procs, kill_group, lines, read_ready
from hookloop.checkpoint import Approve
from hookloop.durable import PauseConsumed
from hookloop.durable.temporal import TemporalBackend, workflow_id

# Real servers and worker processes: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


@dataclass(frozen=True)
class Scheduled:
    type: str
    id: str
    queue: str
    summary: str
    run: str


async def scheduled(backend: TemporalBackend, run_id: str) -> list[Scheduled]:
    """The ActivityTaskScheduled events of every execution of the run's workflow, oldest execution first."""
    client = await backend.client()
    runs = [e.run_id async for e in client.list_workflows(f'WorkflowId = "{workflow_id(run_id)}"')]
    out: list[Scheduled] = []
    for run in reversed(runs):
        history = await client.get_workflow_handle(workflow_id(run_id), run_id=run).fetch_history()
        for event in history.events:
            if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                continue
            attrs = event.activity_task_scheduled_event_attributes
            summary = ""
            if event.user_metadata.HasField("summary"):
                summary = str(default_converter().payload_converter.from_payload(event.user_metadata.summary))
            out.append(Scheduled(attrs.activity_type.name, attrs.activity_id, attrs.task_queue.name, summary, run))
    return out


def backend_for(procs: Procs, **config: object) -> TemporalBackend:
    return TemporalBackend(procs.url, task_queue=procs.queue, heartbeat_timeout=procs.heartbeat, **config)  # type: ignore[arg-type]


def options(procs: Procs, **extra: object) -> dict[str, object]:
    return {"dir": str(procs.workdir), **extra}


def effects_of(events: list[Scheduled], kind: str) -> list[Scheduled]:
    return [e for e in events if e.type == "hookloop.effect" and e.id.split("/", 1)[1].startswith(f"{kind}:")]


async def test_each_model_call_tool_call_and_hook_firing_is_an_activity(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "finished", record
    events = await scheduled(backend, run_id)
    assert [e.type for e in events].count("hookloop.segment") == 1
    assert {e.type for e in events} == {"hookloop.segment", "hookloop.effect"}
    models, tools, hooks = effects_of(events, "model"), effects_of(events, "tool"), effects_of(events, "hook")
    assert len(models) == 3  # three model replies
    assert len(hooks) == 3  # the PreToolUse command hook fired once per call
    assert sorted(re.sub(r"^0/tool:\d+:", "", e.id) for e in tools) == ["c1#0", "c2#0", "c3#0"]
    assert len(events) == 1 + 3 + 3 + 3  # nothing else, nothing twice
    segment = next(e for e in events if e.type == "hookloop.segment")
    assert segment.queue == procs.queue
    for effect in models + tools + hooks:  # on the driver's own queue, named after the effect, described
        assert effect.queue.startswith(f"{procs.queue}/effects/"), effect
        assert effect.id.startswith("0/"), effect
        assert effect.summary, effect
    assert len({e.queue for e in models + tools + hooks}) == 1  # one driver process
    step3 = next(e for e in tools if e.id.endswith(":c3#0"))
    assert "step" in step3.summary
    assert f"{run_id}:c3" in step3.summary or "key" in step3.summary
    assert all(e.summary.startswith("model") for e in models)
    assert all("PreToolUse" in e.summary for e in hooks)
    assert len(lines(procs.workdir / "tools.log")) == 3
    assert len(lines(procs.workdir / "hooks.log")) == 3


async def test_sigkill_mid_tool_the_interrupted_tool_is_scheduled_again_on_the_new_driver(procs: Procs) -> None:
    (procs.workdir / "block-tool-3").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    ready = await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    assert ready["pid"] == first.pid
    kill_group(first)
    second = procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    runs = lines(procs.workdir / "tools.log")
    assert sorted(int(str(r["n"])) for r in runs) == [1, 2, 3, 3]
    again = [r for r in runs if r["n"] == 3]
    assert [r["pid"] for r in again] == [first.pid, second.pid]
    assert len({r["key"] for r in again}) == 1  # the same idempotency key both times
    events = await scheduled(backend, run_id)
    step3 = [e for e in effects_of(events, "tool") if ":c3#0" in e.id]
    assert len(step3) == 2, step3  # abandoned on the dead driver's queue, scheduled again on the new one
    assert step3[0].queue != step3[1].queue
    assert step3[1].id == f"{step3[0].id}/1"
    for done in ("c1#0", "c2#0"):  # completed before the crash: answered from the record, never scheduled again
        assert len([e for e in effects_of(events, "tool") if e.id.endswith(done)]) == 1
    assert len(effects_of(events, "model")) == 3  # the model calls before the crash were not scheduled again
    assert len(lines(procs.workdir / "hooks.log")) == 3


async def test_a_retryable_model_error_is_retried_by_the_activity(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, flaky=2))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "finished", record
    requests = [int(str(r["index"])) for r in lines(procs.workdir / "requests.log")]
    assert requests == [0, 1, 1, 1, 2]  # the second request failed twice (429), the third attempt answered
    events = await scheduled(backend, run_id)
    assert len(effects_of(events, "model")) == 3  # attempts of one activity, not new activities
    client = await backend.client()
    history = await client.get_workflow_handle(workflow_id(run_id)).fetch_history()
    attempts = [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]
    assert max(attempts) == 3


async def test_a_model_error_that_is_not_retryable_fails_the_run_as_in_a_plain_run(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, bad_key=True))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "failed", record
    assert record.error is not None
    assert "AuthenticationError" in record.error
    assert "invalid x-api-key" in record.error
    assert [int(str(r["index"])) for r in lines(procs.workdir / "requests.log")] == [0, 1]  # one attempt


async def test_a_model_retry_budget_is_the_backends_model_attempts(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs, model_attempts=2)
    run_id = await backend.start("go", worker="app", options=options(procs, flaky=5))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "failed", record
    assert record.error is not None
    assert "RateLimitError" in record.error
    assert [int(str(r["index"])) for r in lines(procs.workdir / "requests.log")] == [0, 1, 1]
    with pytest.raises(ValueError, match="model_attempts"):
        TemporalBackend(procs.url, model_attempts=0)
    with pytest.raises(ValueError, match="max_cached_workflows"):
        TemporalBackend(procs.url, max_cached_workflows=-1)
    with pytest.raises(ValueError, match="continue_as_new_after"):
        TemporalBackend(procs.url, continue_as_new_after=0)


async def test_continue_as_new_between_segments_clients_follow_the_workflow_id(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs, continue_as_new_after=1)  # at every decision
    run_id = await backend.start("go", worker="app", options=options(procs, ask=True))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "paused", record
    first_pause = record.pause_id
    await backend.approve(run_id, {"c3": Approve()}, pause_id=first_pause)
    final = await backend.wait(run_id, timeout=40)
    assert final.status == "finished", final
    client = await backend.client()
    executions = [e async for e in client.list_workflows(f'WorkflowId = "{workflow_id(run_id)}"')]
    statuses = sorted(str(e.status.name) for e in executions if e.status is not None)
    assert statuses == ["COMPLETED", "CONTINUED_AS_NEW"], statuses
    assert [r.status for r in await backend.list_runs() if r.run_id == run_id] == ["finished"]
    detail = await backend.get_run(run_id)
    assert detail.text == "all done"
    assert detail.turns == 3
    assert sorted(int(str(r["n"])) for r in lines(procs.workdir / "tools.log")) == [1, 2, 3]
    assert sorted(int(str(r["index"])) for r in lines(procs.workdir / "requests.log")) == [0, 1, 2]
    with pytest.raises(PauseConsumed):  # the new execution still knows the pause was decided
        await backend.approve(run_id, {"c3": Approve()}, pause_id=first_pause)
    events = await scheduled(backend, run_id)
    assert len({e.run for e in events}) == 2
    assert [e.id.split("/")[0] for e in events if e.type == "hookloop.effect"].count("1") >= 2  # segment 1 ran
    desc = await client.get_workflow_handle(workflow_id(run_id)).describe()
    assert desc.status == WorkflowExecutionStatus.COMPLETED
