"""Durable runs on Temporal (``pip install 'hookloop[temporal]'``): a run survives a crash of its worker or of the
server, pauses for days without holding a worker, and continues on any worker polling the same task queue.

Usage::

    backend = TemporalBackend("temporal://localhost:7233/default")
    backend.register("default", lambda options: Worker(client, tools=[...]))   # in every worker process
    run_id = await backend.start("fix the tests")     # a workflow; any process running `await backend.serve()` runs it
    record = await backend.wait(run_id)               # until it finishes, fails, is cancelled or pauses
    await backend.approve(run_id, {call_id: Approve()}, pause_id=record.pause_id)   # from any process

**Model.** A run is one workflow (id ``hookloop-<run id>``, type ``hookloop.run``). Each run segment — the first
run, each continuation after a decision — is one *driver* activity (``hookloop.segment``) that runs the Worker:
its hooks, interceptors and permission policy behave exactly as in a plain run, because they run in an ordinary
activity and not as workflow code under Temporal's sandbox (no subprocesses, threads or blocking I/O there; see
:mod:`hookloop.durable._temporal_segment`). Each effect the driver meets — a model call, a tool call, an external
hook firing — is its own activity (``hookloop.effect``, id ``<segment>/<effect name>``, summary saying what it is),
scheduled by the workflow when the driver asks (the ``perform`` update, with the digest of the decisions taken
before it) on the driver's own task queue ``<task_queue>/effects/<uuid>``, because only that process holds the live
client, tools and hook processes (:mod:`hookloop.durable._temporal_effects`). Its outcome is recorded in the
workflow; a retried driver replays the recorded ones and asks only for the rest. Activities heartbeat (a long tool
included); a killed worker is noticed after ``heartbeat_timeout``: the driver is retried on any worker and the
interrupted effect is scheduled again on the new driver's queue (a tool with the same idempotency key); completed
effects never run again. A model call that fails with a retryable provider error is retried by its activity up to
``model_attempts`` times; a tool's or hook's own failure is its outcome, as in a plain run. Decisions are an update
(``approve``: checked and consumed inside the workflow, so of two approvals of one pause exactly one wins; it
needs a worker polling the task queue to answer); cancel is a signal. The run's record (status, pending calls,
timeline, history) is the workflow's memo, so ``list_runs`` / ``get_run`` / ``wait`` need no worker. Between
segments the workflow continues as new when Temporal suggests it (or after ``continue_as_new_after`` history
events); everything addresses the run by workflow id, so it follows.

**Command line.** ``hookloop run --durable temporal://HOST:PORT/NAMESPACE``, ``hookloop worker temporal://…`` and
``hookloop runs … --db temporal://…`` use this backend with the default task queue ``hookloop``; a CLI process that
connected leaves through :func:`exit_now` (temporalio/sdk-python#300).

**A finished run** closes its workflow; :meth:`TemporalBackend.continue_run` starts it again (same workflow id, a
new execution) from its final state.

**Checkpoint key.** Checkpoints in the workflow state are MAC'd with ``checkpoint_key`` (default: this user's key,
``$HOOKLOOP_HOME``); every worker process of a deployment must use the same key.

**Paused runs** hold no activity and no slot: the workflow waits for the ``approve`` update or the ``cancel``
signal on the server. A serving worker may keep a paused workflow in its workflow cache (at most
``max_cached_workflows`` runs, least recently used evicted; 0 keeps none, and any worker rebuilds a run from its
history when the decision comes). A cached paused run holds its small JSON state, its checkpoint and its memo's
encoded bytes (the history and timeline are not kept decoded) besides the SDK's own state of a cached workflow;
``python -m bench --only temporal`` measures it (about 90 KB per run on CPython 3.11, so at most ~9 MB with the
default 100; nothing once evicted or with 0).

**Limits.** A segment's outcome (history, timeline) travels as one activity result and the record as the memo:
Temporal's payload limit (2 MB by default) bounds them. Each effect adds an update and an activity to the
workflow's history; the workflow continues as new only between segments, so one segment has a Temporal
history-length bound (thousands of effects).

**Secrets.** The workflow history holds the runs' prompts, histories, timelines, pending calls, checkpoints and
the factory's name and JSON ``options`` — never API keys, clients or settings files: Workers are built in each
worker process by its registered factory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker import Worker as TemporalWorker

from hookloop._checkpoint_auth import resolve_key
from hookloop._frozen import freeze_object
from hookloop.checkpoint import AllowAlways, Approve, PendingCall, Reject, ResumeDecision
from hookloop.items import new_id
from hookloop.stream import Usage

from ._decisions import decision_to_json, validate_input
from ._store import PauseConsumed, RunDetail, RunNotFound, RunRecord, RunStatus, RunStore, StaleDecision
from ._temporal_effects import EffectTable
from ._temporal_segment import DurableEffectFailed, NondeterministicReplay, Segments
from ._temporal_workflow import EVENTS_KEY, HISTORY_KEY, MEMO_KEY, WORKFLOW_NAME, RunWorkflow, initial_state

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["DurableEffectFailed", "NondeterministicReplay", "TemporalBackend", "connected", "exit_now", "parse_url"]

DEFAULT_URL = "temporal://localhost:7233/default"


def parse_url(url: str) -> tuple[str, str]:
    """``temporal://HOST:PORT/NAMESPACE`` → ``("HOST:PORT", NAMESPACE)`` (port 7233 and namespace ``default``
    when left out); ``ValueError`` naming what is wrong otherwise."""
    parts = urlsplit(url)
    if parts.scheme != "temporal" or not parts.hostname:
        raise ValueError(f"TemporalBackend url: expected temporal://HOST:PORT/NAMESPACE, got {url!r}")
    try:
        port = parts.port or 7233
    except ValueError:
        raise ValueError(f"TemporalBackend url: the port of {url!r} is not a number from 1 to 65535") from None
    namespace = parts.path.strip("/") or "default"
    if "/" in namespace or parts.query or parts.fragment:
        raise ValueError(f"TemporalBackend url: expected one namespace after the port, got {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}", namespace


def workflow_id(run_id: str) -> str:
    """The workflow id of a run."""
    return f"hookloop-{run_id}"


_connected = False


def connected() -> bool:
    """Whether this process connected a Temporal client (so it should leave with :func:`exit_now`)."""
    return _connected


def exit_now(code: int) -> NoReturn:
    """End a short-lived client process (a CLI verb) with ``code`` once its calls returned: stdout and stderr are
    flushed, then the process exits without the interpreter's shutdown, where the SDK's native runtime can abort
    the process after the call succeeded (temporalio/sdk-python#300) and turn a success into a crash."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


class TemporalBackend:
    """Durable runs on a Temporal server; also a :class:`~hookloop.durable.RunStore` (list, show, approve, cancel).

    ``url``: ``temporal://HOST:PORT/NAMESPACE`` (default ``temporal://localhost:7233/default``). ``task_queue``:
    the queue the workers poll (the same on every process of a deployment). ``heartbeat_timeout``: after how
    long without a heartbeat a segment's worker counts as dead and the segment is retried elsewhere.
    ``max_cached_workflows``: how many workflows a serving worker keeps in memory between tasks (a paused run in
    the cache holds only its small JSON state, its checkpoint and its memo's bytes; 0 keeps none, and every
    workflow task then replays the run's history). ``decision_timeout``: how long :meth:`approve` waits for a
    worker to check and record a decision. ``model_attempts``: how many times a model call that failed with a
    retryable provider error is tried in all (its activity's retry policy; ``retry_after`` honoured).
    ``continue_as_new_after``: continue a run's workflow as new between segments once its history has this many
    events (None: when Temporal suggests it). The client connects on first use.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        executor_id: str | None = None,
        task_queue: str = "hookloop",
        checkpoint_key: bytes | None = None,
        heartbeat_timeout: float = 10.0,
        max_cached_workflows: int = 100,
        decision_timeout: float = 30.0,
        model_attempts: int = 3,
        continue_as_new_after: int | None = None,
    ) -> None:
        self.url = url or DEFAULT_URL
        self.target, self.namespace = parse_url(self.url)
        if not task_queue:
            raise ValueError("TemporalBackend task_queue: must be a non-empty string")
        if heartbeat_timeout <= 0:
            raise ValueError(f"TemporalBackend heartbeat_timeout: must be positive, got {heartbeat_timeout!r}")
        for option, value, least in (
            ("model_attempts", model_attempts, 1),
            ("continue_as_new_after", 1 if continue_as_new_after is None else continue_as_new_after, 1),
            ("max_cached_workflows", max_cached_workflows, 0),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"TemporalBackend {option}: must be an integer of at least {least}, got {value!r}")
        self.model_attempts = model_attempts
        self.continue_as_new_after = continue_as_new_after
        self.executor_id = executor_id
        self.task_queue = task_queue
        self.heartbeat_timeout = heartbeat_timeout
        self.max_cached_workflows = max_cached_workflows
        self.decision_timeout = decision_timeout
        self._key = resolve_key(checkpoint_key)
        self._factories: dict[str, Callable[[Mapping[str, object]], Worker]] = {}
        self._client: Client | None = None

    async def client(self) -> Client:
        """The connected Temporal client (connected on first use)."""
        if self._client is None:
            global _connected
            _connected = True  # from the first attempt: the native runtime exists once it was tried
            try:
                self._client = await Client.connect(self.target, namespace=self.namespace, identity=self.executor_id)
            except RuntimeError as exc:
                raise ConnectionError(f"TemporalBackend: cannot connect to {self.url}: {exc}") from None
        return self._client

    # -- configuration -------------------------------------------------------------------------------------------

    def register(self, name: str, factory: Callable[[Mapping[str, object]], Worker]) -> None:
        """Register a Worker factory under ``name``: every worker process registers the same names. It gets the
        run's ``options`` and returns a fresh Worker (its tools, hooks, permissions, client)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"register: name must be a non-empty string, got {name!r}")
        self._factories[name] = factory

    # -- starting and waiting ------------------------------------------------------------------------------------

    async def start(
        self, prompt: str, *, worker: str = "default", options: Mapping[str, object] = {}, run_id: str | None = None
    ) -> str:
        """Start a run of ``prompt`` on the Worker factory ``worker`` (``options`` are JSON, handed to it);
        returns its run id. A process running :meth:`serve` executes it."""
        if not isinstance(prompt, str):
            raise TypeError(f"start: prompt must be a string, got {type(prompt).__name__}")
        try:
            opts = json.loads(json.dumps(dict(options)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"start: options must be JSON: {exc}") from None
        run_id = run_id or new_id("run")
        if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 150:
            raise ValueError(f"start: run_id must be a non-empty string of at most 150 characters, got {run_id!r}")
        config = {
            "task_queue": self.task_queue,
            "heartbeat_timeout": self.heartbeat_timeout,
            "model_attempts": self.model_attempts,
            "continue_as_new_after": self.continue_as_new_after,
        }
        state = initial_state(
            run_id=run_id, prompt=prompt, worker=worker, options=opts, created_at=time.time(), config=config
        )
        await self._start(state, WorkflowIDReusePolicy.REJECT_DUPLICATE, f"start: a run {run_id!r} already exists")
        return run_id

    async def _start(self, state: dict[str, Any], reuse: WorkflowIDReusePolicy, exists: str) -> None:
        client = await self.client()
        memo = {MEMO_KEY: {k: state[k] for k in _MEMO_KEYS}}
        try:
            await client.start_workflow(
                WORKFLOW_NAME,
                state,
                id=workflow_id(state["run_id"]),
                task_queue=self.task_queue,
                id_reuse_policy=reuse,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                memo=memo,
            )
        except WorkflowAlreadyStartedError:
            if reuse == WorkflowIDReusePolicy.ALLOW_DUPLICATE:
                raise StaleDecision(exists) from None
            raise ValueError(exists) from None

    async def wait(self, run_id: str, *, timeout: float | None = None) -> RunRecord:  # noqa: ASYNC109
        """Wait until the run is neither queued nor running; returns its record. ``TimeoutError`` after
        ``timeout`` seconds; :class:`RunNotFound` for an unknown run."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            data = await self._memo(run_id)
            if data["status"] not in ("queued", "running"):
                return _record(data)
            if deadline is not None and loop.time() >= deadline:
                raise TimeoutError(f"run {run_id} is still {data['status']} after {timeout} s")
            await asyncio.sleep(0.05)  # the memo changes on the server; no event tells a client

    async def continue_run(self, run_id: str, messages: str) -> None:
        """Start a new segment on a finished run with a new prompt (the same workflow id, a new execution)."""
        if not isinstance(messages, str) or not messages.strip():
            raise ValueError("continue_run: messages must be a non-empty string")
        handle = await self._handle(run_id)
        desc = await handle.describe()
        if desc.status != WorkflowExecutionStatus.COMPLETED:
            data = await self._memo(run_id)
            raise StaleDecision(f"run {run_id} is {data['status']}: only a finished run takes a new prompt")
        state: dict[str, Any] = await handle.result()
        if state.get("status") != "finished" or not state.get("checkpoint"):
            raise StaleDecision(f"run {run_id} is {state.get('status')}: only a finished run takes a new prompt")
        state = state | {
            "status": "queued",
            "segment": int(state["segment"]) + 1,
            "spec": {"kind": "continue", "messages": messages},
            "error": None,
        }
        await self._start(state, WorkflowIDReusePolicy.ALLOW_DUPLICATE, f"run {run_id} changed while continuing it")

    # -- executing ------------------------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Execute runs in this process until cancelled: workflow tasks and driver activities of the task queue,
        and the effect activities of the runs it drives, on its own queue ``<task_queue>/effects/<uuid>``. Runs of
        a crashed worker are retried here once their heartbeat times out."""
        client = await self.client()
        table = EffectTable(f"{self.task_queue}/effects/{uuid.uuid4().hex}")
        segments = Segments(client, self._key, self._factories, table)
        identity = self.executor_id or f"{os.getpid()}@{socket.gethostname()}"
        main = TemporalWorker(
            client,
            task_queue=self.task_queue,
            workflows=[RunWorkflow],
            activities=[segments.segment],
            workflow_runner=_runner(),
            max_cached_workflows=self.max_cached_workflows,
            graceful_shutdown_timeout=_SHUTDOWN,
            # a run's next workflow task goes to the worker that has it cached; when that worker is dead, to any
            # worker after this long (the SDK's 10 s would delay every recovery)
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=min(max(self.heartbeat_timeout, 1.0), 10.0)),
            identity=identity,
        )
        effects = TemporalWorker(
            client,
            task_queue=table.queue,
            activities=[table.perform],
            # an effect activity only waits for the effect its driver registered: as many as the drivers ask for
            max_concurrent_activities=10_000,
            graceful_shutdown_timeout=_SHUTDOWN,
            identity=f"{identity} effects",
        )
        async with asyncio.TaskGroup() as group:
            group.create_task(main.run())
            group.create_task(effects.run())

    # -- the store ------------------------------------------------------------------------------------------------

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The newest runs first (at most ``limit``), optionally only those with ``status``."""
        client = await self.client()
        seen: dict[str, RunRecord] = {}
        async for execution in client.list_workflows(f'WorkflowType = "{WORKFLOW_NAME}"'):
            if execution.id in seen or execution.status == WorkflowExecutionStatus.CONTINUED_AS_NEW:
                continue  # an older execution of a continued run (its memo is not the run's record any more)
            memo = await execution.memo()
            data = memo.get(MEMO_KEY)
            if not isinstance(data, dict) or "run_id" not in data:
                continue
            seen[execution.id] = _record(_ended(data, execution.status))
        records = sorted(seen.values(), key=lambda r: r.created_at, reverse=True)
        return [r for r in records if status is None or r.status == status][:limit]

    async def get_run(self, run_id: str) -> RunDetail:
        """One run, whole; :class:`RunNotFound` if there is none."""
        data = await self._memo(run_id)
        base = _record(data)
        fields = {name: getattr(base, name) for name in RunRecord.__dataclass_fields__}
        return RunDetail(
            **fields,
            events=tuple(data.get("events") or ()),
            history=tuple(data.get("history") or ()),
            text=str((data.get("result") or {}).get("text", "")),
        )

    async def approve(
        self,
        run_id: str,
        decisions: Mapping[str, ResumeDecision],
        *,
        pause_id: str | None = None,
        messages: str | None = None,
    ) -> None:
        """Decide the run's current pause and continue it (see :class:`~hookloop.durable.RunStore`). The decision
        is checked and consumed by the workflow: a worker must be polling the task queue to answer."""
        for call_id, decision in decisions.items():
            if not isinstance(decision, (Approve, AllowAlways, Reject)):
                raise TypeError(f"approve: the decision for {call_id} is not Approve/AllowAlways/Reject: {decision!r}")
        if messages is not None and not isinstance(messages, str):
            raise TypeError("approve: messages must be a string")
        data = await self._memo(run_id)
        waiting = {str(p["call_id"]): p for p in data.get("pending") or []}
        if data["status"] == "paused":
            for call_id, decision in decisions.items():
                if call_id in waiting and isinstance(decision, Approve) and decision.updated_input is not None:
                    validate_input(run_id, call_id, waiting[call_id], decision.updated_input)
        request = {
            "pause_id": pause_id,
            "decisions": {cid: decision_to_json(d) for cid, d in decisions.items()},
            "messages": messages,
            "grants": [
                {"tool": waiting[cid]["tool_name"], "rule": d.rule, "arguments": waiting[cid].get("arguments") or {}}
                for cid, d in decisions.items()
                if isinstance(d, AllowAlways) and cid in waiting
            ],
        }
        handle = await self._handle(run_id)
        if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
            consumed = data.get("consumed") or []
            if consumed and pause_id in (None, *consumed) and data["status"] != "cancelled":
                raise PauseConsumed(f"run {run_id}: the pause {pause_id or consumed[-1]} was already decided")
            raise StaleDecision(f"run {run_id} is {data['status']}, not paused")
        try:
            await asyncio.wait_for(handle.execute_update("approve", request), self.decision_timeout)
        except TimeoutError:
            raise TimeoutError(
                f"run {run_id}: no worker answered the decision within {self.decision_timeout} s (a worker polling "
                f"the task queue {self.task_queue!r} checks and records it); it may still be taken when one does"
            ) from None
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            message = f"run {run_id}: {getattr(cause, 'message', cause)}"
            if isinstance(cause, ApplicationError) and cause.type == "PauseConsumed":
                raise PauseConsumed(message) from None
            raise StaleDecision(message) from None

    async def cancel(self, run_id: str) -> None:
        """Cancel the run from any process (a signal: the workflow ends a paused run as cancelled and cancels a
        running segment where it runs, on_abort once and one result per tool call). An ended run is left as is."""
        handle = await self._handle(run_id)
        if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
            return
        try:
            await handle.signal("cancel")
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:  # it ended meanwhile
                raise

    async def close(self) -> None:
        """Forget the client (the SDK's client holds no resources that need closing; a serving task must be
        cancelled first)."""
        self._client = None

    # -- helpers --------------------------------------------------------------------------------------------------

    async def _handle(self, run_id: str) -> WorkflowHandle[Any, Any]:
        if not isinstance(run_id, str) or not run_id:
            raise RunNotFound(f"no run {run_id!r}")
        client = await self.client()
        return client.get_workflow_handle(workflow_id(run_id))

    async def _memo(self, run_id: str) -> dict[str, Any]:
        handle = await self._handle(run_id)
        try:
            desc = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFound(f"no run {run_id!r}") from None
            raise
        memo = await desc.memo()
        data = memo.get(MEMO_KEY)
        if not isinstance(data, dict):
            raise RunNotFound(f"no run {run_id!r} (workflow {handle.id} is not a hookloop run)")
        big = {"history": memo.get(HISTORY_KEY) or [], "events": memo.get(EVENTS_KEY) or []}
        return _ended(data | big, desc.status)


def _runner() -> WorkflowRunner:
    """The workflow runs outside Temporal's sandbox: the sandbox re-creates a module namespace per workflow
    instance, and that was most of what a paused run in the cache cost a worker. It is safe here because the
    workflow (:mod:`hookloop.durable._temporal_workflow`) imports only ``temporalio`` and the standard library,
    keeps no module-level state, does no I/O and takes time only from ``workflow.now()``; hookloop code never runs
    as workflow code. Temporal still checks every replay against the history (a changed command fails it)."""
    return UnsandboxedWorkflowRunner()


_MEMO_KEYS = ("run_id", "status", "segment", "prompt", "worker", "created_at", "updated_at", "pending", "pause_id")
_SHUTDOWN = timedelta(seconds=1)


def _ended(data: dict[str, Any], status: WorkflowExecutionStatus | None) -> dict[str, Any]:
    """The memo's record, corrected when the workflow ended outside hookloop (terminated, timed out, failed)."""
    if status in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.COMPLETED, None):
        return data
    ended = "cancelled" if status == WorkflowExecutionStatus.CANCELED else "failed"
    return data | {"status": ended, "error": data.get("error") or f"the workflow ended {status.name}"}


def _record(data: Mapping[str, Any]) -> RunRecord:
    result = data.get("result") or {}
    usage = result.get("usage") or {}
    pending = tuple(
        PendingCall(
            call_id=str(p["call_id"]),
            tool_name=str(p["tool_name"]),
            arguments=freeze_object(p.get("arguments") or {}),
            state=p.get("state", "approval"),
            reason=str(p.get("reason", "")),
            asked_by=str(p.get("asked_by", "")),
        )
        for p in data.get("pending") or []
    )
    status = data["status"]
    return RunRecord(
        run_id=str(data["run_id"]),
        status=status,
        created_at=datetime.fromtimestamp(float(data.get("created_at") or 0), tz=UTC),
        updated_at=datetime.fromtimestamp(float(data.get("updated_at") or data.get("created_at") or 0), tz=UTC),
        prompt=str(data.get("prompt", "")),
        turns=int(result.get("turns", 0)),
        usage=Usage(**{k: int(v) for k, v in usage.items() if k in Usage.__slots__}),
        pending=pending if status == "paused" else (),
        pause_id=data.get("pause_id") if status == "paused" else None,
        reason=str(result.get("reason", "")),
        error=data.get("error"),
        worker=str(data.get("worker", "")),
    )


if TYPE_CHECKING:

    def _is_a_run_store(backend: TemporalBackend) -> RunStore:  # mypy checks the backend keeps the interface
        return backend
