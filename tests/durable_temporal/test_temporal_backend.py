"""Durable runs on a real Temporal dev server, executed by real worker processes that the tests SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

import pytest

from durable_temporal.temporal_kit import Procs, TemporalServer, kill_group, lines, read_ready
from hookloop.checkpoint import AllowAlways, Approve, Reject
from hookloop.durable import PauseConsumed, RunNotFound, StaleDecision
from hookloop.durable.temporal import TemporalBackend, workflow_id

# Real servers and worker processes: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


def backend_for(procs: Procs) -> TemporalBackend:
    return TemporalBackend(procs.url, task_queue=procs.queue, heartbeat_timeout=procs.heartbeat)


def options(procs: Procs, **extra: object) -> dict[str, object]:
    return {"dir": str(procs.workdir), **extra}


def tool_runs(procs: Procs) -> list[int]:
    return sorted(int(str(r["n"])) for r in lines(procs.workdir / "tools.log"))


async def test_a_run_finishes_on_a_worker_process(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "finished", record
    assert record.turns == 3
    detail = await backend.get_run(run_id)
    assert detail.text == "all done"
    assert tool_runs(procs) == [1, 2, 3]
    assert [r["n"] for r in lines(procs.workdir / "hooks.log")]
    assert len(lines(procs.workdir / "hooks.log")) == 3
    listed = await backend.list_runs()
    assert run_id in [r.run_id for r in listed]
    assert [r.run_id for r in await backend.list_runs(status="finished")].count(run_id) == 1


def keys_by_step(procs: Procs) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for r in lines(procs.workdir / "tools.log"):
        out.setdefault(int(str(r["n"])), set()).add(str(r["key"]))
    return out


async def test_sigkill_the_worker_during_a_tool_another_worker_finishes_the_run(procs: Procs) -> None:
    (procs.workdir / "block-tool-3").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    ready = await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    assert ready["what"] == "tool-3"
    assert ready["pid"] == first.pid
    kill_group(first)
    second = procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    # the completed steps ran once; the interrupted one again, with the same idempotency key
    assert tool_runs(procs) == [1, 2, 3, 3]
    keys = keys_by_step(procs)
    assert len(keys[3]) == 1, keys
    requests = lines(procs.workdir / "requests.log")
    assert sorted(int(str(r["index"])) for r in requests) == [0, 1, 2]  # no model request was sent again
    assert {r["pid"] for r in requests if r["index"] == 2} == {second.pid}
    assert len(lines(procs.workdir / "hooks.log")) == 3  # the command hook of step 3 fired once (recorded)


async def test_sigkill_during_an_external_command_hook(procs: Procs) -> None:
    (procs.workdir / "block-hook-3").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    ready = await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    assert ready["what"] == "hook"
    kill_group(first)
    with contextlib.suppress(ProcessLookupError):  # the hook runs in a process group of its own
        os.kill(int(str(ready["pid"])), signal.SIGKILL)
    procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    assert tool_runs(procs) == [1, 2, 3]  # step 3 ran once, after its interrupted hook fired again
    assert sorted(int(str(r["n"])) for r in lines(procs.workdir / "hooks.log")) == [1, 2, 3, 3]
    assert sorted(int(str(r["index"])) for r in lines(procs.workdir / "requests.log")) == [0, 1, 2]


async def test_sigkill_during_a_model_call(procs: Procs) -> None:
    (procs.workdir / "block-model-2").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    ready = await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    assert ready["what"] == "model-2"
    assert ready["pid"] == first.pid
    kill_group(first)
    procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    assert tool_runs(procs) == [1, 2, 3]
    assert sorted(int(str(r["index"])) for r in lines(procs.workdir / "requests.log")) == [0, 1, 2, 2]


async def test_a_tool_longer_than_the_heartbeat_timeout_runs_once(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, slow=procs.heartbeat * 3))
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    assert tool_runs(procs) == [1, 2, 3]  # the segment heartbeats while the tool runs: it is not retried


async def test_permission_rules_apply_as_in_a_plain_run(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, rules={"ask": ["step"]}))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "paused", record
    assert sorted(p.call_id for p in record.pending) == ["c1", "c2"]  # the policy asks; nothing ran
    assert tool_runs(procs) == []
    await backend.approve(run_id, {"c1": AllowAlways(rule="step"), "c2": Reject("not this one")})
    record = await backend.wait(run_id, timeout=40)
    # an ask rule is more restrictive than a session's allow-always, as in a plain run: step(3) asks again
    assert record.status == "paused", record
    assert [p.call_id for p in record.pending] == ["c3"]
    await backend.approve(run_id, {"c3": Approve()}, pause_id=record.pause_id)
    final = await backend.wait(run_id, timeout=40)
    assert final.status == "finished", final
    assert tool_runs(procs) == [1, 3]
    detail = await backend.get_run(run_id)
    rejected = [h for h in detail.history if h.get("type") == "tool_result" and h.get("call_id") == "c2"]
    assert len(rejected) == 1
    assert "not this one" in json.dumps(rejected[0])

    denied = await backend.start("go", worker="app", options=options(procs, rules={"deny": ["step"]}))
    record = await backend.wait(denied, timeout=40)
    assert record.status == "finished", record
    assert tool_runs(procs) == [1, 3]  # a deny rule: no step ran


async def test_pause_then_approve_from_a_short_lived_client_process(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, ask=True))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "paused", record
    assert [p.call_id for p in record.pending] == ["c3"]
    assert record.pause_id
    assert tool_runs(procs) == [1, 2]
    done = await asyncio.to_thread(procs.client, "approve", procs.url, procs.queue, run_id, record.pause_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "approved"
    with pytest.raises(PauseConsumed):
        await backend.approve(run_id, {"c3": Approve()}, pause_id=record.pause_id)
    final = await backend.wait(run_id, timeout=40)
    assert final.status == "finished", final
    assert tool_runs(procs) == [1, 2, 3]
    with pytest.raises(PauseConsumed):
        await backend.approve(run_id, {"c3": Approve()}, pause_id=record.pause_id)


async def test_two_approvals_at_once_exactly_one_wins(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, ask=True))
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "paused"
    results = await asyncio.gather(
        *(backend.approve(run_id, {"c3": Approve()}, pause_id=record.pause_id) for _ in range(3)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1, results
    assert all(isinstance(r, PauseConsumed) for r in results if r is not None), results
    assert (await backend.wait(run_id, timeout=40)).status == "finished"
    assert tool_runs(procs) == [1, 2, 3]


async def test_bad_decisions_are_refused_and_the_run_stays_paused(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs, ask=True))
    record = await backend.wait(run_id, timeout=40)
    with pytest.raises(StaleDecision, match="not the current one"):
        await backend.approve(run_id, {"c3": Approve()}, pause_id="0-nope")
    with pytest.raises(StaleDecision, match="not pending: c9"):
        await backend.approve(run_id, {"c3": Approve(), "c9": Approve()})
    with pytest.raises(StaleDecision, match="missing: c3"):
        await backend.approve(run_id, {})
    with pytest.raises(StaleDecision, match="schema"):
        await backend.approve(run_id, {"c3": Approve(updated_input={"n": "three"})})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await backend.approve(run_id, {"c3": "yes"})  # type: ignore[dict-item]
    with pytest.raises(RunNotFound):
        await backend.approve("run-missing", {"c3": Approve()})
    assert (await backend.get_run(run_id)).status == "paused"
    assert (await backend.get_run(run_id)).pause_id == record.pause_id


async def test_cancel_a_running_run_and_a_paused_run(procs: Procs) -> None:
    (procs.workdir / "block-tool-3").touch()
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    await backend.cancel(run_id)
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "cancelled", record
    assert len(lines(procs.workdir / "aborts.log")) == 1
    detail = await backend.get_run(run_id)
    results = [h for h in detail.history if h.get("type") == "tool_result"]
    calls = [h for h in detail.history if h.get("type") == "tool_call"]
    assert len(results) == len(calls) == 3, detail.history

    paused = await backend.start("go", worker="app", options=options(procs, ask=True))
    assert (await backend.wait(paused, timeout=40)).status == "paused"
    await backend.cancel(paused)
    record = await backend.wait(paused, timeout=40)
    while record.status == "paused":  # the signal is applied by the workflow's next task
        record = await backend.wait(paused, timeout=40)
        await asyncio.sleep(0.05)
    assert record.status == "cancelled"
    detail = await backend.get_run(paused)
    results = [h for h in detail.history if h.get("type") == "tool_result"]
    assert any("not executed" in json.dumps(r) for r in results)
    with pytest.raises(StaleDecision):
        await backend.approve(paused, {"c3": Approve()})
    await backend.cancel(paused)  # an ended run is left as it is
    assert (await backend.get_run(paused)).status == "cancelled"


async def test_a_hook_that_decides_differently_on_replay_fails_the_run(procs: Procs) -> None:
    (procs.workdir / "block-tool-3").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    kill_group(first)
    (procs.workdir / "flip").touch()  # the guard now denies step(1): not what it decided the first time
    procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "failed", record
    assert record.error is not None
    assert "NondeterministicReplay" in record.error
    assert "deterministic" in record.error
    assert tool_runs(procs) == [1, 2, 3]  # nothing ran on the new path


async def test_continue_a_finished_run_with_a_new_prompt(procs: Procs) -> None:
    procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    assert (await backend.wait(run_id, timeout=40)).status == "finished"
    await backend.continue_run(run_id, "and now?")
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "finished", record
    detail = await backend.get_run(run_id)
    users = [h for h in detail.history if h.get("type") == "message" and h.get("role") == "user"]
    assert len(users) == 2, detail.history
    assert len([r for r in await backend.list_runs() if r.run_id == run_id]) == 1
    with pytest.raises(StaleDecision):
        await backend.approve(run_id, {})


async def test_unknown_runs_and_bad_input(procs: Procs) -> None:
    backend = backend_for(procs)
    with pytest.raises(RunNotFound):
        await backend.get_run("run-nope")
    with pytest.raises(RunNotFound):
        await backend.wait("run-nope", timeout=1)
    with pytest.raises(ValueError, match="JSON"):
        await backend.start("go", options={"x": object()})
    run_id = await backend.start("go", worker="app", options=options(procs), run_id="fixed-id")
    with pytest.raises(ValueError, match="already exists"):
        await backend.start("go", worker="app", options=options(procs), run_id=run_id)
    assert (await backend.get_run(run_id)).status == "queued"  # no worker yet
    procs.worker()
    assert (await backend.wait(run_id, timeout=40)).status == "finished"
    with pytest.raises(ValueError, match="temporal://"):
        TemporalBackend("http://localhost:7233")
    with pytest.raises(ValueError, match="port"):
        TemporalBackend("temporal://localhost:99999/default")


async def test_sigkill_the_worker_and_the_server_mid_tool(own_server: TemporalServer, own_procs: Procs) -> None:
    procs = own_procs
    (procs.workdir / "block-tool-3").touch()
    first = procs.worker()
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    await asyncio.to_thread(read_ready, procs.workdir / "ready.fifo")
    kill_group(first)
    own_server.kill()
    own_server.start()
    procs.worker()
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record
    assert tool_runs(procs) == [1, 2, 3, 3]
    assert len(keys_by_step(procs)[3]) == 1
    assert sorted(int(str(r["index"])) for r in lines(procs.workdir / "requests.log")) == [0, 1, 2]
    assert len(lines(procs.workdir / "hooks.log")) == 3


async def test_sigkill_the_worker_and_the_server_mid_pause(own_server: TemporalServer, own_procs: Procs) -> None:
    # the worker and the server die while the run waits; the record survives; a new worker continues it after
    # the approval
    procs = own_procs
    second = procs.worker()
    backend = backend_for(procs)
    other = procs.workdir / "b"
    other.mkdir()
    paused = await backend.start("go", worker="app", options={"dir": str(other), "ask": True})
    record = await backend.wait(paused, timeout=40)
    assert record.status == "paused", record
    kill_group(second)
    own_server.kill()
    own_server.start()
    assert (await backend.get_run(paused)).status == "paused"  # the record needs no worker
    procs.worker()
    await backend.approve(paused, {"c3": Approve()}, pause_id=record.pause_id)
    final = await backend.wait(paused, timeout=50)
    assert final.status == "finished", final
    assert sorted(int(str(r["n"])) for r in lines(other / "tools.log")) == [1, 2, 3]
    assert sorted(int(str(r["index"])) for r in lines(other / "requests.log")) == [0, 1, 2]


async def test_a_workflow_terminated_outside_hookloop_shows_as_failed(procs: Procs) -> None:
    backend = backend_for(procs)
    run_id = await backend.start("go", worker="app", options=options(procs))
    client = await backend.client()
    await client.get_workflow_handle(workflow_id(run_id)).terminate("an operator ended it")
    record = await backend.get_run(run_id)
    assert record.status == "failed"
    assert record.error is not None
    assert "TERMINATED" in record.error
    assert run_id in [r.run_id for r in await backend.list_runs(status="failed")]
    with pytest.raises(StaleDecision):
        await backend.approve(run_id, {})
    await backend.cancel(run_id)  # ended: left as it is
