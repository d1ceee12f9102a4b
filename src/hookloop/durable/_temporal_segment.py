"""The driver of one segment of a durable run on Temporal: the activity that runs the Worker, and its Effects.

**Where hookloop code runs.** The Worker — its hooks, interceptors, permission policy, command hooks, tools, model
client — runs here, inside an ordinary activity on the worker's asyncio loop, exactly as in a plain run; the
workflow (:mod:`hookloop.durable._temporal_workflow`) only moves JSON. Running hooks as workflow code would put
them under Temporal's sandbox and its deterministic event loop: no threads, no subprocesses (command hooks), no
blocking I/O, timers that become durable timers — a hook that behaves in a plain run would fail or behave
differently. Here it behaves the same; what must still be deterministic (the decisions a hook takes on the same
recorded inputs) is checked on replay by a digest of the decisions, as with DBOS.

**Effects.** Every model call, tool call and external hook firing the Worker meets is its own activity
(``hookloop.effect``, :mod:`hookloop.durable._temporal_effects`), scheduled by the workflow: the driver registers
the effect in this process, asks the workflow to perform it (the ``perform`` update, with the digest of the
decisions taken before it) and goes on with the outcome the workflow recorded. When the driver is retried (its
worker was killed: the heartbeat times out; or the server restarted), the new attempt, on any worker, reads the
recorded outcomes (the ``recorded`` query), replays them (no model request is sent again, no completed tool runs
again) and asks for the rest: the workflow answers a completed one from its record and schedules an interrupted
one again on the new driver's queue — it runs again, a tool with the same idempotency key. An attempt that the
workflow no longer counts as current (a later attempt took over) stops where it is. The driver heartbeats every
third of the heartbeat timeout while its segment runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.client import Client, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from hookloop._frozen import thaw_object
from hookloop.checkpoint import Checkpoint
from hookloop.effects import DecisionLog, Effect
from hookloop.errors import Cancelled, HookloopError
from hookloop.items import ToolResult
from hookloop.outcome import Finished, Paused
from hookloop.timeline import HookDecision, event_to_json

from ._decisions import decision_from_json
from ._temporal_effects import EffectTable, summary
from ._temporal_workflow import SEGMENT_ACTIVITY

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["DurableEffectFailed", "NondeterministicReplay", "SegmentLost", "Segments"]

_log = logging.getLogger("hookloop.durable")
T = TypeVar("T")

_STREAM_TYPES = frozenset(
    {"block_start", "block_stop", "text_delta", "thinking_delta", "tool_call_delta", "native_block", "usage", "stop"}
)


class NondeterministicReplay(HookloopError):
    """A replay took another path than the recorded run: an in-process hook or permission rule decided
    differently on the same recorded inputs. The run fails (it does not follow the new decision)."""


class DurableEffectFailed(HookloopError):
    """A recorded effect had failed the first time; its replay raises this with the recorded error."""


class SegmentLost(Exception):
    """This driver attempt is no longer the segment's current one (a later attempt took over, the segment ended,
    or the workflow lost the effect's activity): it stops, and Temporal retries the driver if the segment still
    needs one."""


Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class RecordingEffects:
    """The :class:`~hookloop.effects.Effects` of one driver attempt: replay what the workflow recorded, have the
    workflow perform the rest as activities. ``ask(request)`` sends the ``perform`` update and returns its answer."""

    def __init__(
        self, recorded: Mapping[str, dict[str, Any]], ask: Ask, table: EffectTable, scope: tuple[str, int]
    ) -> None:
        self._recorded = dict(recorded)
        self._ask = ask
        self._table = table
        self._scope = scope
        self._seen: dict[str, int] = {}
        self._logs: dict[str, DecisionLog] = {}
        self.performed = 0
        """Effects asked of the workflow in this attempt (not replayed from the record)."""
        self.replayed = 0
        self.lost: str | None = None
        """Why this attempt stopped being the current one (then the run task is cancelled)."""
        self.on_lost: Callable[[], object] = lambda: None

    def on_decision(self, event: object) -> None:
        if isinstance(event, HookDecision):
            scope = event.call_id or ""
            self._logs.setdefault(scope, DecisionLog()).add(f"{event.event}/{event.hook}: {event.decision}")

    def _digest(self, scope: str) -> tuple[str, tuple[str, ...]]:
        if scope:
            return self._logs.setdefault(scope, DecisionLog()).take()
        digest, entries = self._logs.setdefault("", DecisionLog()).take()
        parts = [digest, *(f"{c}={log.digest}" for c, log in sorted(self._logs.items()) if c)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32], entries

    async def perform(self, effect: Effect[T]) -> T:
        n = self._seen.get(effect.key, 0)
        self._seen[effect.key] = n + 1
        name = f"{effect.key}#{n}"
        call_id = effect.describe.get("call_id")
        digest, entries = self._digest(call_id if isinstance(call_id, str) else "")
        data = self._recorded.pop(name, None)
        failure: BaseException | None = None
        if data is None:
            self.performed += 1
            data, failure = await self._perform(name, effect, digest, entries)
        else:
            self.replayed += 1
        if data.get("digest") != digest:
            was = "; ".join(data.get("entries") or []) or "(none)"
            now = "; ".join(entries) or "(none)"
            raise NondeterministicReplay(
                f"durable replay of {name}: the decisions taken before it differ from the recorded run — recorded: "
                f"{was}; on replay: {now}. An in-process hook or permission rule decided differently on the same "
                "inputs (hooks must be deterministic); the run fails instead of following the new decision"
            )
        if "error" in data:
            if failure is not None:  # it failed here, in this attempt: the run sees the error as in a plain run
                raise failure
            raise DurableEffectFailed(f"{name} (recorded): {data['error']}")
        return effect.decode(json.loads(str(data["output"]))["outcome"])

    async def _perform(
        self, name: str, effect: Effect[T], digest: str, entries: tuple[str, ...]
    ) -> tuple[dict[str, Any], BaseException | None]:
        key = (*self._scope, name)
        entry = self._table.enter(key, effect)
        request = {
            "segment": self._scope[1],
            "name": name,
            "kind": effect.kind,
            "describe": json.loads(json.dumps(thaw_object(effect.describe), default=str)),
            "summary": summary(effect),
            "digest": digest,
            "entries": list(entries),
            "queue": self._table.queue,
        }
        try:
            try:
                data = await self._ask(request)
            except SegmentLost as exc:
                self._lose(str(exc))
                raise
            except asyncio.CancelledError:
                await self._table.cancel(key, entry)
                raise
            return data, entry.failure()
        finally:
            self._table.leave(key, entry)

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = why
            self.on_lost()


class Segments:
    """What the driver activity needs in a worker process: the client, the checkpoint key, the factories, and
    this process's table of pending effects (its own effect task queue)."""

    def __init__(
        self,
        client: Client,
        key: bytes,
        factories: Mapping[str, Callable[[Mapping[str, object]], Worker]],
        table: EffectTable,
    ) -> None:
        self.client = client
        self.key = key
        self.factories = factories
        self.table = table

    @activity.defn(name=SEGMENT_ACTIVITY)
    async def segment(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one segment; returns its outcome as JSON (never raises for the run's own errors; raises to be
        retried when this attempt lost its place, see :class:`SegmentLost`)."""
        info = activity.info()
        handle = self.client.get_workflow_handle(info.workflow_id or "", run_id=info.workflow_run_id)
        segment, attempt = int(request["segment"]), info.attempt

        async def ask(body: dict[str, Any]) -> dict[str, Any]:
            body = body | {"attempt": attempt}
            delay = 0.1
            while True:
                try:
                    answer: dict[str, Any] = await handle.execute_update(
                        "perform", body, id=f"{segment}/{body['name']}/{attempt}"
                    )
                    return answer
                except WorkflowUpdateFailedError as exc:  # the segment moved on, or its activity was lost
                    raise SegmentLost(f"{body['name']}: {getattr(exc.cause, 'message', exc.cause)}") from None
                except (RPCError, WorkflowUpdateRPCTimeoutOrCancelledError) as exc:
                    if isinstance(exc.__cause__, asyncio.CancelledError):  # the SDK turns a cancel into its error
                        raise asyncio.CancelledError from None
                    await asyncio.sleep(delay)  # the server is unreachable: ask again while this attempt lives
                    delay = min(delay * 2, 2.0)

        beat = asyncio.create_task(_heartbeat(info.heartbeat_timeout.total_seconds() if info.heartbeat_timeout else 30))
        try:  # heartbeating from the start: the query waits while the workflow's last worker is found dead
            recorded: dict[str, dict[str, Any]] = await handle.query("recorded", segment)
            effects = RecordingEffects(recorded, ask, self.table, (info.workflow_id or "", segment))
            outcome = await _Run(self, request, effects).execute()
            if effects.lost is not None:
                raise ApplicationError(f"driver attempt {attempt} of segment {segment} stopped: {effects.lost}")
            return outcome
        finally:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)


async def _heartbeat(every: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(max(every / 3, 0.05))


class _Run:
    def __init__(self, segments: Segments, request: dict[str, Any], effects: RecordingEffects) -> None:
        self.segments, self.request, self.effects = segments, request, effects
        self.run_id = str(request["run_id"])
        self.events: list[dict[str, object]] = []

    async def execute(self) -> dict[str, Any]:
        request = self.request
        factory = self.segments.factories.get(str(request["worker"]))
        if factory is None:
            error = f"no Worker factory registered as {request['worker']!r} in this process (TemporalBackend.register)"
            return {"status": "failed", "error": error}
        try:
            worker = factory(request["options"])
            for grant in request["grants"]:  # "allow always" answers of earlier pauses hold for the whole run
                worker._allow_always(str(grant["tool"]), grant.get("rule"), grant.get("arguments") or {})
        except Exception as exc:
            _log.error("durable run %s: cannot build its Worker", self.run_id, exc_info=True)
            return {"status": "failed", "error": f"building the Worker: {type(exc).__name__}: {exc}"}
        worker.timeline.subscribe(self.effects.on_decision)
        worker.timeline.subscribe(self._keep)
        task = asyncio.create_task(self._drive(worker))
        self.effects.on_lost = functools.partial(task.cancel, "a later attempt took over")  # this one stops
        try:
            try:
                outcome = await asyncio.shield(task)
            except asyncio.CancelledError:
                if self.effects.lost is not None and task.done():
                    return {"status": "lost"}
                if activity.is_worker_shutdown() or task.done():
                    task.cancel()
                    raise
                worker.cancel()  # the workflow cancelled the run: on_abort once, one result per call
                outcome = await task
        except Cancelled:
            if self.effects.lost is not None:
                return {"status": "lost"}
            return {"status": "cancelled", "history": _history(worker), "events": self.events}
        except Exception as exc:
            if self.effects.lost is not None:
                return {"status": "lost"}
            _log.info("durable run %s failed", self.run_id, exc_info=True)
            error = f"{type(exc).__name__}: {exc}"
            return {"status": "failed", "error": error, "history": _history(worker), "events": self.events}
        return self._outcome(worker, outcome)

    async def _drive(self, worker: Worker, /) -> Finished | Paused:
        spec, key = self.request["spec"], self.segments.key
        if spec.get("kind") == "start":
            return await worker.run(str(self.request["prompt"]), run_id=self.run_id, effects=self.effects)
        checkpoint = Checkpoint.loads(str(self.request["checkpoint"]), key=key)
        if spec.get("kind") == "continue":
            return await worker.resume(checkpoint, messages=str(spec["messages"]), key=key, effects=self.effects)
        decisions = {cid: decision_from_json(d) for cid, d in (spec.get("decisions") or {}).items()}
        messages = spec.get("messages")
        return await worker.resume(checkpoint, decisions, messages=messages, key=key, effects=self.effects)

    def _outcome(self, worker: Worker, outcome: Finished | Paused) -> dict[str, Any]:
        key, segment = self.segments.key, int(self.request["segment"])
        base = {"history": _history(worker), "events": self.events}
        if isinstance(outcome, Paused):
            checkpoint = outcome.checkpoint
            pending = []
            for call in checkpoint.pending:
                tool = next((t for t in worker.tools if t.meta.name == call.tool_name), None)
                schema = thaw_object(tool.meta.input_schema) if tool is not None else None
                pending.append(json.loads(json.dumps(call.to_json() | {"input_schema": schema})))
            tail = []  # what closes the history if the run is cancelled while paused: one result per call
            for call in checkpoint.batch:
                answer = call.result or ToolResult(
                    call_id=call.call_id,
                    name=call.tool_name,
                    content="not executed: the run was cancelled",
                    is_error=True,
                )
                tail.append(json.loads(json.dumps(answer.to_json())))
            return base | {
                "status": "paused",
                "checkpoint": checkpoint.dumps(key=key),
                "pending": pending,
                "pause_id": f"{segment}-{checkpoint.nonce[:16]}",
                "cancel_tail": tail,
                "result": {"turns": checkpoint.turn, "usage": _usage(checkpoint.usage), "reason": outcome.reason},
            }
        final = dataclasses.replace(worker.checkpoint("finished"), run_id=self.run_id)
        reason = outcome.reason if outcome.stop_reason is None else f"{outcome.reason}: {outcome.stop_reason}"
        result = {"text": outcome.text, "turns": outcome.turns, "usage": _usage(outcome.usage), "reason": reason}
        return base | {"status": "finished", "checkpoint": final.dumps(key=key), "result": result}

    def _keep(self, event: object) -> None:
        try:
            data = event_to_json(event)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if data.get("type") not in _STREAM_TYPES:
            self.events.append(json.loads(json.dumps(data, default=str)))


def _history(worker: Worker) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(item.to_json())) for item in worker.history]


def _usage(usage: object) -> dict[str, int]:
    return {slot: int(getattr(usage, slot)) for slot in type(usage).__slots__}  # type: ignore[attr-defined]
