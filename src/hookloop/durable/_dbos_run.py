"""The DBOS workflow that executes one run segment, and the registry of Worker factories it builds Workers with.

A segment is one :meth:`~hookloop.Worker.run` (segment 0), one :meth:`~hookloop.Worker.resume` after a decision,
or one continuation with a new prompt. Its workflow id is ``hookloop:<run id>:<segment>``: deterministic, so
enqueueing it twice (an approval retried, a sweep) starts it once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient

from hookloop._frozen import thaw_object
from hookloop.checkpoint import Checkpoint
from hookloop.errors import Cancelled
from hookloop.outcome import Finished, Paused
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from hookloop.timeline import event_to_json

from . import _dbos_tables as tables
from ._dbos_steps import StepEffects
from ._decisions import decision_from_json

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["QUEUE_NAME", "WORKFLOW_NAME", "Runtime", "workflow_id"]

_log = logging.getLogger("hookloop.durable")

QUEUE_NAME = "hookloop-runs"
WORKFLOW_NAME = "hookloop.run_segment"
CANCEL_POLL_SECONDS = 0.2
QUEUE_POLL_SECONDS = 0.1

_STREAM_TYPES = frozenset(
    {"block_start", "block_stop", "text_delta", "thinking_delta", "tool_call_delta", "native_block", "usage", "stop"}
)
"""The timeline events a segment does not keep (a stream error is kept): the items they build are in the history."""
_STREAM_CLASSES = (BlockStart, BlockStop, TextDelta, ThinkingDelta, ToolCallDelta, NativeBlock, UsageEvent, StopEvent)
"""The classes whose JSON ``type`` is in ``_STREAM_TYPES``: dropped before they are turned into JSON."""


def workflow_id(run_id: str, segment: int) -> str:
    return f"hookloop:{run_id}:{segment}"


class Runtime:
    """What the workflow needs in this process: the engine, the client, the factories, the checkpoint key."""

    def __init__(self, engine: sa.Engine, client: DBOSClient, key: bytes, executor_id: str) -> None:
        self.engine = engine
        self.client = client
        self.key = key
        self.executor_id = executor_id
        self.factories: dict[str, Callable[[Mapping[str, object]], Worker]] = {}


_runtime: Runtime | None = None


def install(runtime: Runtime | None) -> None:
    global _runtime
    _runtime = runtime


def _rt() -> Runtime:
    if _runtime is None:
        raise RuntimeError("hookloop durable workflow ran in a process whose DBOSBackend is not serving")
    return _runtime


@DBOS.workflow(name=WORKFLOW_NAME)
async def run_segment(run_id: str, segment: int) -> str:
    """Execute segment ``segment`` of ``run_id``; returns the status it ended with."""
    rt = _rt()
    return await _Segment(rt, run_id, segment).execute()


class _Segment:
    def __init__(self, rt: Runtime, run_id: str, segment: int) -> None:
        self.rt, self.run_id, self.segment = rt, run_id, segment
        self.events: list[dict[str, object]] = []

    async def _db(self, fn: Callable[[sa.Connection], Any]) -> Any:
        def work() -> Any:
            with self.rt.engine.begin() as conn:
                return fn(conn)

        return await asyncio.to_thread(work)

    async def execute(self) -> str:
        rt, run_id, segment = self.rt, self.run_id, self.segment
        row = await asyncio.to_thread(tables.get_row, rt.engine, run_id)
        if row is None or row.segment != segment or row.status not in ("queued", "running"):
            return row.status if row is not None else "missing"
        if row.cancel:
            await self._end("cancelled", error=None, history=row.history, extra={})
            return "cancelled"
        changed = await self._db(
            lambda c: tables.update(
                c,
                run_id,
                [tables.RUNS.c.segment == segment, tables.RUNS.c.status.in_(("queued", "running"))],
                status="running",
                executor=rt.executor_id,
            )
        )
        if not changed:
            return "stale"
        factory = rt.factories.get(row.worker)
        if factory is None:
            error = f"no Worker factory registered as {row.worker!r} in this process (DBOSBackend.register)"
            await self._end("failed", error=error, history=row.history, extra={})
            return "failed"
        try:
            steps = await asyncio.to_thread(rt.client.list_workflow_steps, workflow_id(run_id, segment))
            recorded = {int(s["function_id"]): (str(s["function_name"]), s["output"]) for s in steps}
            effects = StepEffects(recorded)
            worker = factory(row.options)
            for grant in row.grants:  # "allow always" answers of earlier pauses hold for the whole run
                worker._allow_always(str(grant["tool"]), grant.get("rule"), grant.get("arguments") or {})
        except Exception as exc:
            _log.error("durable run %s: cannot build its Worker", run_id, exc_info=True)
            await self._end(
                "failed", error=f"building the Worker: {type(exc).__name__}: {exc}", history=row.history, extra={}
            )
            return "failed"
        worker.timeline.subscribe(effects.on_decision)
        worker.timeline.subscribe(self._keep)
        watcher = asyncio.create_task(self._watch_cancel(worker))
        try:
            outcome = await self._drive(worker, row, effects)
        except Cancelled:
            await self._end("cancelled", error=None, history=_history(worker), extra={})
            return "cancelled"
        except Exception as exc:
            _log.info("durable run %s failed", run_id, exc_info=True)
            await self._end("failed", error=f"{type(exc).__name__}: {exc}", history=_history(worker), extra={})
            return "failed"
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        try:
            return await self._record(worker, outcome)
        except Exception as exc:  # the outcome cannot be stored: the run fails rather than stay "running"
            _log.error("durable run %s: storing its outcome failed", run_id, exc_info=True)
            await self._end("failed", error=f"{type(exc).__name__}: {exc}", history=_history(worker), extra={})
            return "failed"

    async def _record(self, worker: Worker, outcome: Finished | Paused) -> str:
        rt, run_id = self.rt, self.run_id
        if isinstance(outcome, Paused):
            await self._pause(worker, outcome)
            return "paused"
        final = dataclasses.replace(worker.checkpoint("finished"), run_id=run_id)
        result = {
            "text": outcome.text,
            "turns": outcome.turns,
            "usage": _usage(outcome.usage),
            "reason": outcome.reason if outcome.stop_reason is None else f"{outcome.reason}: {outcome.stop_reason}",
        }
        await self._end(
            "finished",
            error=None,
            history=_history(worker),
            extra={"checkpoint": final.dumps(key=rt.key)},
            result=result,
        )
        return "finished"

    async def _drive(self, worker: Worker, row: tables.Row, effects: StepEffects) -> Finished | Paused:
        spec = row.input
        if spec.get("kind") == "start":
            return await worker.run(row.prompt, run_id=self.run_id, effects=effects)
        if row.checkpoint is None:
            raise ValueError(f"run {self.run_id}: segment {self.segment} has no checkpoint to resume")
        checkpoint = Checkpoint.loads(row.checkpoint, key=self.rt.key)
        decisions = {cid: decision_from_json(d) for cid, d in (spec.get("decisions") or {}).items()}
        messages = spec.get("messages")
        return await worker.resume(checkpoint, decisions, messages=messages, key=self.rt.key, effects=effects)

    async def _pause(self, worker: Worker, paused: Paused) -> None:
        checkpoint = paused.checkpoint
        pending = []
        for call in checkpoint.pending:
            tool = next((t for t in worker.tools if t.meta.name == call.tool_name), None)
            schema = thaw_object(tool.meta.input_schema) if tool is not None else None
            pending.append(call.to_json() | {"input_schema": schema})
        result = {"turns": checkpoint.turn, "usage": _usage(checkpoint.usage), "reason": paused.reason}
        await self._end(
            "paused",
            error=None,
            history=_history(worker),
            extra={
                "checkpoint": checkpoint.dumps(key=self.rt.key),
                "pause_id": f"{self.segment}-{checkpoint.nonce[:16]}",
                "pending": pending,
            },
            result=result,
        )

    async def _end(
        self,
        status: str,
        *,
        error: str | None,
        history: list[dict[str, Any]],
        extra: dict[str, object],
        result: dict[str, object] | None = None,
    ) -> None:
        run_id, segment = self.run_id, self.segment

        def write(conn: sa.Connection) -> int:
            previous = conn.execute(sa.select(tables.RUNS.c.events).where(tables.RUNS.c.run_id == run_id)).scalar()
            events = [*json.loads(previous or "[]"), *self.events]
            values: dict[str, object] = {"status": status, "error": error, "history": history, "events": events}
            if result is not None:
                values["result"] = result
            return tables.update(
                conn,
                run_id,
                [tables.RUNS.c.segment == segment, tables.RUNS.c.status.in_(("queued", "running"))],
                **values,
                **extra,
            )

        await self._db(write)

    def _keep(self, event: object) -> None:
        if isinstance(event, _STREAM_CLASSES):  # most of a reply's events: not kept, not converted
            return
        try:
            data = event_to_json(event)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if data.get("type") not in _STREAM_TYPES:
            self.events.append(dict(data))

    async def _watch_cancel(self, worker: Worker) -> None:
        """Cancel the Worker where it runs when any process sets the run's cancel flag."""
        column = sa.select(tables.RUNS.c.cancel).where(tables.RUNS.c.run_id == self.run_id)

        def flag() -> bool:
            with self.rt.engine.connect() as conn:
                return bool(conn.execute(column).scalar())

        while True:
            if await asyncio.to_thread(flag):
                worker.cancel()
                return
            await asyncio.sleep(CANCEL_POLL_SECONDS)


def _history(worker: Worker) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(item.to_json())) for item in worker.history]


def _usage(usage: object) -> dict[str, int]:
    return {slot: int(getattr(usage, slot)) for slot in type(usage).__slots__}  # type: ignore[attr-defined]
