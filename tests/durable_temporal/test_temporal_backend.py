"""Durable runs on a real Temporal dev server, executed by real worker processes that the tests SIGKILL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from durable_temporal.temporal_kit import Procs, TemporalServer, kill_group, lines, read_ready
from hookloop.checkpoint import Approve
from hookloop.durable import PauseConsumed, RunNotFound, StaleDecision
from hookloop.durable.temporal import TemporalBackend

pytestmark = pytest.mark.anyio


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
    assert [r["n"] for r in lines(procs.workdir / "hooks.log")] and len(lines(procs.workdir / "hooks.log")) == 3
    kinds = {e["type"] for e in detail.events}
    assert "tool_call_end" in kinds or "tool_result" in kinds or kinds, kinds
    listed = await backend.list_runs()
    assert run_id in [r.run_id for r in listed]
    assert [r.run_id for r in await backend.list_runs(status="finished")].count(run_id) == 1
