"""Durable runs on DBOS Transact (``pip install 'hookloop[dbos]'``): a run survives a crash, pauses for days
without holding a process, and continues in any worker process attached to the same database.

Usage::

    backend = DBOSBackend()                      # sqlite:///$HOOKLOOP_HOME/durable.sqlite, or a postgresql:// URL
    backend.register("default", lambda options: Worker(client, tools=[...]))   # in every process that runs runs
    run_id = await backend.start("fix the tests")    # queued; any process running `await backend.serve()` runs it
    record = await backend.wait(run_id)              # until it finishes, fails, is cancelled or pauses
    # or: executed here, and only it (what `hookloop run --durable` does)
    run_id = await backend.start("fix the tests", queue=False)
    record = await backend.execute(run_id)
    await backend.approve(run_id, {call_id: Approve()}, pause_id=record.pause_id)   # from any process

**Model.** One run segment (the first :meth:`~hookloop.Worker.run`, or each continuation after a decision) is one
DBOS workflow with the id ``hookloop:<run id>:<segment>``, executed from a DBOS queue by whichever worker process
dequeues it. Each effect (:mod:`hookloop.effects`) — a model call, a tool call, an external hook firing — is one
DBOS step named by the effect's key and occurrence (``tool:1:call_7#0``): after a crash the workflow is executed
again, the recorded steps return their recorded outcomes (model calls are not sent again, completed tools do not
run again), and the step that was interrupted runs again — a tool with the same
:attr:`~hookloop.tools.ToolContext.idempotency_key`. In-process hooks, interceptors and permission rules run again
on the recorded outcomes; they must be deterministic: the digest of their decisions is recorded with each step and
a replay that decides differently fails the run with :class:`~hookloop.durable.NondeterministicReplay` naming the
decisions. Background (``async: true``) command hooks are not steps: they fire again on a replay (at least once).

**Pause.** A run that pauses ends its workflow: its checkpoint (MAC'd) and its pending calls (with each tool's input
schema) are stored in the ``hookloop_runs`` table; no process waits. :meth:`DBOSBackend.approve` from any process
validates the decisions (an edited input against the tool's schema), consumes the pause with a conditional UPDATE
(of two approvals exactly one wins; the other gets :class:`~hookloop.durable.PauseConsumed`) and enqueues the
continuation in the same transaction; any serving process picks it up. The continuation plans every call again
against its Worker's current permission policy, as :meth:`~hookloop.Worker.resume` does.

**Checkpoint key.** Checkpoints are MAC'd with a key kept in the database (``hookloop_keys``, created on first use),
so every machine attached to it verifies them: the MAC detects a corrupted or truncated row and a checkpoint copied
from another database, not a writer who holds the database credentials. Pass ``checkpoint_key`` (the same on every
machine, from your secret store) to keep the key out of the database.

**Cancel.** :meth:`DBOSBackend.cancel` from any process: a queued or paused run ends at once as cancelled (a paused
run's waiting calls get a "not executed" result); a running one is cancelled where it runs (the executing process
watches the run's cancel flag): on_abort fires once and every tool call gets one result, as in-process.

**Crash recovery across processes.** Every serving process writes a heartbeat (``hookloop_executors``). A serving
process recovers the workflows of an executor that is dead: on the same host, its process is gone; elsewhere, its
heartbeat is older than ``lease_seconds``. A process started with the same ``executor_id`` recovers its own at once.
A run started with ``queue=False`` is executed by its own process (:meth:`DBOSBackend.execute`), which keeps a
heartbeat meanwhile: if that process dies, a serving process recovers the run, or queues it when it had not begun.

**Secrets.** The database holds the runs' prompts, histories (messages, tool calls and results), timelines (hook
and permission decisions), pending calls and checkpoints, and the Worker factory's name and JSON ``options``. It
never holds API keys, provider clients, hook environments or settings files: Workers are built in each process by
its registered factory, from its own configuration. Tool results and prompts are stored as they are — a tool that
prints a secret puts it in the history, as in a transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, SetWorkflowID
from dbos._serialization import DBOSPortableJSON

from hookloop.checkpoint import AllowAlways, Approve, Checkpoint, Reject, ResumeDecision
from hookloop.items import ToolResult, new_id

from . import _dbos_run as engine_run
from . import _dbos_tables as tables
from ._dbos_read import DBOSRuns, default_url, record_of
from ._dbos_steps import DurableEffectFailed, NondeterministicReplay
from ._decisions import check_decisions, decision_to_json
from ._store import PauseConsumed, RunNotFound, RunRecord, StaleDecision

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["DBOSBackend", "DBOSRuns", "DurableEffectFailed", "NondeterministicReplay", "default_url"]

APP_VERSION = "hookloop-durable-1"
"""The DBOS application version every hookloop process uses (recovery only runs a workflow in the same version)."""

_ENDED = frozenset({"finished", "failed", "cancelled"})
_log = logging.getLogger("hookloop.durable")


class DBOSBackend(DBOSRuns):
    """Durable runs in a DBOS database; also a :class:`~hookloop.durable.RunStore` (list, show, approve, cancel).

    ``url``: ``sqlite:///path`` or ``postgresql://…`` (default :func:`default_url`). ``executor_id`` names this
    process to DBOS (default: host, pid and a random suffix). Constructing it connects and creates the tables.
    Only :meth:`serve` executes runs; every other method works from any process without executing anything.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        executor_id: str | None = None,
        checkpoint_key: bytes | None = None,
        lease_seconds: float = 30.0,
    ) -> None:
        self.url = url or default_url()
        if not self.url.startswith(("sqlite:///", "postgresql://", "postgres://", "postgresql+psycopg://")):
            raise ValueError(f"DBOSBackend url: expected sqlite:///… or postgresql://…, got {self.url!r}")
        self._dbos_url = self.url.replace("postgresql+psycopg://", "postgresql://", 1)
        DBOS.migrate(self._dbos_url)
        super().__init__(self.url)
        self._client = DBOSClient(system_database_url=self._dbos_url, serializer=DBOSPortableJSON)
        self._key = checkpoint_key if checkpoint_key is not None else tables.shared_key(self._engine)
        self.executor_id = executor_id or f"{socket.gethostname()}-{os.getpid()}-{os.urandom(3).hex()}"
        self.lease_seconds = lease_seconds
        self._runtime = engine_run.Runtime(self._engine, self._client, self._key, self.executor_id)
        self._closed = False

    # -- configuration -------------------------------------------------------------------------------------------

    def register(self, name: str, factory: Callable[[Mapping[str, object]], Worker]) -> None:
        """Register a Worker factory under ``name``: every process that executes runs registers the same names.
        It gets the run's ``options`` and returns a fresh Worker (its tools, hooks, permissions, client)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"register: name must be a non-empty string, got {name!r}")
        self._runtime.factories[name] = factory

    # -- starting and waiting ----------------------------------------------------------------------------------

    async def start(
        self,
        prompt: str,
        *,
        worker: str = "default",
        options: Mapping[str, object] = {},
        run_id: str | None = None,
        queue: bool = True,
    ) -> str:
        """Queue a run of ``prompt`` on the Worker factory ``worker`` (``options`` are JSON, handed to it);
        returns its run id. A process running :meth:`serve` executes it. ``queue=False``: no serving process
        takes it; this process executes it with :meth:`execute` (should this process die first, a serving
        process queues it once this one's heartbeat is dead)."""
        if not isinstance(prompt, str):
            raise TypeError(f"start: prompt must be a string, got {type(prompt).__name__}")
        try:
            json.dumps(dict(options))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"start: options must be JSON: {exc}") from None
        run_id = run_id or new_id("run")
        if not run_id.strip() or len(run_id) > 150:
            raise ValueError(f"start: run_id must be a non-empty string of at most 150 characters, got {run_id!r}")

        def work() -> None:
            if not queue:
                self._beat()  # alive before the run names this process as the one to execute it
            with self._engine.begin() as conn:
                try:
                    executor = None if queue else self.executor_id
                    tables.insert_run(conn, run_id, worker=worker, options=options, prompt=prompt, executor=executor)
                except sa.exc.IntegrityError:
                    raise ValueError(f"start: a run {run_id!r} already exists") from None
                if queue:
                    self._enqueue(conn, run_id, 0)

        await asyncio.to_thread(work)
        return run_id

    def _enqueue(self, conn: sa.Connection, run_id: str, segment: int) -> None:
        self._client.enqueue_in_transaction(
            conn,
            {
                "queue_name": engine_run.QUEUE_NAME,
                "workflow_name": engine_run.WORKFLOW_NAME,
                "workflow_id": engine_run.workflow_id(run_id, segment),
                "app_version": APP_VERSION,
            },
            run_id,
            segment,
        )

    async def wait(self, run_id: str, *, timeout: float | None = None) -> RunRecord:  # noqa: ASYNC109
        """Wait until the run is neither queued nor running; returns its record. ``TimeoutError`` after
        ``timeout`` seconds; :class:`RunNotFound` for an unknown run."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            row = await asyncio.to_thread(tables.get_row, self._engine, run_id, light=True)
            if row is None:
                raise RunNotFound(f"no run {run_id!r}")
            if row.status not in ("queued", "running"):
                return record_of(row)
            if deadline is not None and loop.time() >= deadline:
                raise TimeoutError(f"run {run_id} is still {row.status} after {timeout} s")
            await asyncio.sleep(0.05)

    async def continue_run(self, run_id: str, messages: str) -> None:
        """Queue a new prompt on a finished run (a new segment that continues its conversation)."""
        if not isinstance(messages, str) or not messages.strip():
            raise ValueError("continue_run: messages must be a non-empty string")

        def work() -> None:
            with self._engine.begin() as conn:
                row = _get_or_raise(self._engine, run_id, conn)
                if row.status != "finished" or row.checkpoint is None:
                    raise StaleDecision(f"run {run_id} is {row.status}: only a finished run takes a new prompt")
                spec = {"kind": "continue", "messages": messages}
                where = [tables.RUNS.c.status == "finished", tables.RUNS.c.segment == row.segment]
                if not tables.update(conn, run_id, where, status="queued", segment=row.segment + 1, input=spec):
                    raise StaleDecision(f"run {run_id} changed while continuing it; try again")
                self._enqueue(conn, run_id, row.segment + 1)

        await asyncio.to_thread(work)

    # -- executing ----------------------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Execute queued runs in this process — and recover the runs of crashed processes — until cancelled.
        One DBOSBackend per process serves. Afterwards the event loop's default executor (which DBOS replaces
        with its own and shuts down) is a fresh one: the loop's ``asyncio.to_thread`` works on."""
        self._install("serve")
        try:
            await self._launch(listen=True)
            await asyncio.to_thread(
                DBOS.register_queue,
                engine_run.QUEUE_NAME,
                polling_interval_sec=engine_run.QUEUE_POLL_SECONDS,
                on_conflict="always_update",
            )
            while True:
                await asyncio.to_thread(self._beat)
                await asyncio.to_thread(self._recover_dead)
                await asyncio.to_thread(self._adopt_orphans)
                await asyncio.sleep(0.25)
        finally:
            await self._shutdown()

    async def execute(self, run_id: str) -> RunRecord:
        """Execute the run :meth:`start` made with ``queue=False`` here, and nothing else: this process takes no
        queued run and recovers no other process's. Returns the run's record once it finishes, pauses, fails or is
        cancelled (a decision on a pause then queues the continuation for a serving process). Meanwhile this
        process keeps a heartbeat: if it dies, a serving process recovers the run. Not while this process
        serves; the event loop's default executor is left as :meth:`serve` leaves it."""
        row = await asyncio.to_thread(tables.get_row, self._engine, run_id, light=True)
        if row is None:
            raise RunNotFound(f"no run {run_id!r}")
        if (row.status, row.segment, row.executor) != ("queued", 0, self.executor_id):
            raise ValueError(f"execute: run {run_id} is not one this backend started with queue=False ({row.status})")
        self._install("execute")
        beating: asyncio.Task[None] | None = None
        try:
            await self._launch(listen=False)
            beating = asyncio.create_task(self._keep_beating())
            with SetWorkflowID(engine_run.workflow_id(run_id, 0)):
                handle = await DBOS.start_workflow_async(engine_run.run_segment, run_id, 0)
            try:
                await handle.get_result()
            except Exception:
                ended = await asyncio.to_thread(tables.get_row, self._engine, run_id, light=True)
                if ended is None or ended.status in ("queued", "running"):
                    raise  # not a run that ended (cancelled before it began, say): a failure of the execution
        finally:
            if beating is not None:
                beating.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beating
            await self._shutdown()
        ended = await asyncio.to_thread(tables.get_row, self._engine, run_id, light=True)
        assert ended is not None
        return record_of(ended)

    def _install(self, what: str) -> None:
        if engine_run._runtime is not None:
            raise RuntimeError(f"{what}: another DBOSBackend already serves or executes in this process")
        engine_run.install(self._runtime)

    async def _launch(self, *, listen: bool) -> None:
        """Launch DBOS in this process (``listen``: dequeue from the run queue; else from no queue)."""
        await asyncio.to_thread(self._beat)
        DBOS(
            config={
                "name": "hookloop",
                "system_database_url": self._dbos_url,
                "executor_id": self.executor_id,
                "application_version": APP_VERSION,
                "serializer": DBOSPortableJSON,
                "enable_otlp": False,
                "log_level": os.environ.get("HOOKLOOP_DBOS_LOG_LEVEL", "WARNING"),
            }
        )
        if not listen:
            DBOS.listen_queues([])
        await asyncio.to_thread(DBOS.launch)

    async def _keep_beating(self) -> None:
        while True:
            await asyncio.to_thread(self._beat)
            await asyncio.sleep(0.25)

    async def _shutdown(self) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            await asyncio.to_thread(DBOS.destroy)
        _reclaim_default_executor(loop)
        engine_run.install(None)
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self._forget)

    def _beat(self) -> None:
        values = {"host": socket.gethostname(), "pid": os.getpid(), "seen_at": time.time()}
        with self._engine.begin() as conn:
            changed = conn.execute(
                sa.update(tables.EXECUTORS).where(tables.EXECUTORS.c.executor_id == self.executor_id).values(**values)
            ).rowcount
            if not changed:
                conn.execute(sa.insert(tables.EXECUTORS).values(executor_id=self.executor_id, **values))

    def _forget(self) -> None:
        with self._engine.begin() as conn:
            conn.execute(sa.delete(tables.EXECUTORS).where(tables.EXECUTORS.c.executor_id == self.executor_id))

    def _recover_dead(self) -> None:
        pending = self._client.list_workflows(
            status="PENDING", name=engine_run.WORKFLOW_NAME, load_input=False, load_output=False
        )
        owners = {w.executor_id for w in pending if w.executor_id and w.executor_id != self.executor_id}
        if not owners:
            return
        with self._engine.connect() as conn:
            beats = {
                r.executor_id: r
                for r in conn.execute(sa.select(tables.EXECUTORS).where(tables.EXECUTORS.c.executor_id.in_(owners)))
            }
        host, now = socket.gethostname(), time.time()
        dead = [o for o in owners if o not in beats or _dead(beats[o], host, now, self.lease_seconds)]
        if dead:
            DBOS._recover_pending_workflows(dead)

    def _adopt_orphans(self) -> None:
        """Queue the runs started with ``queue=False`` by a process that died before it began them (DBOS has no
        workflow of theirs to recover)."""
        runs = tables.RUNS.c
        waiting = [runs.status == "queued", runs.segment == 0, runs.executor.is_not(None)]
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(runs.run_id, runs.executor).where(*waiting)).all()
            owners = {r.executor for r in rows} - {self.executor_id}
            if not owners:
                return
            beats = {
                b.executor_id: b
                for b in conn.execute(sa.select(tables.EXECUTORS).where(tables.EXECUTORS.c.executor_id.in_(owners)))
            }
        host, now = socket.gethostname(), time.time()
        for run_id, owner in rows:
            if owner not in owners or (owner in beats and not _dead(beats[owner], host, now, self.lease_seconds)):
                continue
            started = self._client.list_workflows(
                workflow_ids=[engine_run.workflow_id(run_id, 0)], load_input=False, load_output=False
            )
            if started:
                continue  # it had begun: recovered as a dead executor's workflow
            with self._engine.begin() as conn:
                if tables.update(conn, run_id, [*waiting, runs.executor == owner], executor=None):
                    self._enqueue(conn, run_id, 0)

    # -- the store ----------------------------------------------------------------------------------------------

    async def approve(
        self,
        run_id: str,
        decisions: Mapping[str, ResumeDecision],
        *,
        pause_id: str | None = None,
        messages: str | None = None,
    ) -> None:
        """Decide the run's current pause and queue its continuation (see :class:`~hookloop.durable.RunStore`)."""
        for call_id, decision in decisions.items():
            if not isinstance(decision, (Approve, AllowAlways, Reject)):
                raise TypeError(f"approve: the decision for {call_id} is not Approve/AllowAlways/Reject: {decision!r}")
        await asyncio.to_thread(self._approve, run_id, dict(decisions), pause_id, messages)

    def _approve(
        self, run_id: str, decisions: dict[str, ResumeDecision], pause_id: str | None, messages: str | None
    ) -> None:
        with self._engine.begin() as conn:
            row = _get_or_raise(self._engine, run_id, conn)
            consumed = row.consumed_pause is not None and pause_id in (None, row.consumed_pause)
            if row.status != "paused":
                if consumed and row.status != "cancelled":
                    raise PauseConsumed(f"run {run_id}: the pause {row.consumed_pause} was already decided")
                raise StaleDecision(f"run {run_id} is {row.status}, not paused")
            if pause_id is not None and pause_id != row.pause_id:
                if pause_id == row.consumed_pause:
                    raise PauseConsumed(f"run {run_id}: the pause {pause_id} was already decided")
                raise StaleDecision(f"run {run_id}: pause {pause_id} is not the current one ({row.pause_id})")
            check_decisions(run_id, row.pending, decisions)
            spec: dict[str, object] = {
                "kind": "resume",
                "decisions": {cid: decision_to_json(d) for cid, d in decisions.items()},
                "messages": messages,
            }
            waiting = {str(p["call_id"]): p for p in row.pending}
            grants = row.grants + [
                {"tool": waiting[cid]["tool_name"], "rule": d.rule, "arguments": waiting[cid].get("arguments") or {}}
                for cid, d in decisions.items()
                if isinstance(d, AllowAlways)
            ]
            where = [tables.RUNS.c.status == "paused", tables.RUNS.c.pause_id == row.pause_id]
            changed = tables.update(
                conn,
                run_id,
                where,
                grants=grants,
                status="queued",
                segment=row.segment + 1,
                input=spec,
                consumed_pause=row.pause_id,
                pause_id=None,
                pending=[],
            )
            if not changed:
                raise PauseConsumed(f"run {run_id}: the pause {row.pause_id} was already decided")
            self._enqueue(conn, run_id, row.segment + 1)

    async def cancel(self, run_id: str) -> None:
        """Cancel the run from any process (see :class:`~hookloop.durable.RunStore`)."""
        segment = await asyncio.to_thread(self._cancel, run_id)
        if segment is not None:
            with contextlib.suppress(Exception):
                await self._client.cancel_workflow_async(engine_run.workflow_id(run_id, segment))

    def _cancel(self, run_id: str) -> int | None:
        """Flag the run; end it at once when queued or paused. Returns the segment whose queued workflow to drop."""
        with self._engine.begin() as conn:
            row = _get_or_raise(self._engine, run_id, conn)
            if row.status in _ENDED:
                return None
            open_states = ["queued", "running", "paused"]
            tables.update(conn, run_id, [tables.RUNS.c.status.in_(open_states)], cancel=1)
            if row.status == "paused":
                history = _close_pending(row, self._key)
                tables.update(
                    conn,
                    run_id,
                    [tables.RUNS.c.status == "paused"],
                    status="cancelled",
                    history=history,
                    pause_id=None,
                    pending=[],
                    consumed_pause=row.pause_id,
                )
                return None
            if row.status == "queued" and tables.update(
                conn, run_id, [tables.RUNS.c.status == "queued"], status="cancelled"
            ):
                return row.segment
            return None

    async def close(self) -> None:
        """Release the database connections (cancel a :meth:`serve` task first). Never raises — what cannot be
        released is logged — and does not depend on the event loop's default executor, so it is safe in a
        ``finally`` after :meth:`serve` or :meth:`execute` in the same loop, and a second call does nothing."""
        if self._closed:
            return
        self._closed = True

        def release() -> None:
            for what, action in (("DBOS client", self._client.destroy), ("database engine", self._engine.dispose)):
                try:
                    action()
                except Exception as exc:
                    _log.warning("DBOSBackend.close: the %s was not released: %s", what, exc)

        threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hookloop-dbos-close")
        try:
            await asyncio.get_running_loop().run_in_executor(threads, release)
        except Exception as exc:  # the loop refuses work (it is closing): release here
            _log.debug("DBOSBackend.close: releasing in the loop's thread (%s)", exc)
            release()
        finally:
            threads.shutdown(wait=False)


# -- helpers ---------------------------------------------------------------------------------------------------


def _reclaim_default_executor(loop: asyncio.AbstractEventLoop) -> None:
    """DBOS makes its thread pool the default executor of the loop it is used from, and DBOS.destroy shuts that
    pool down: such a loop could run no ``asyncio.to_thread`` any more. Give it a fresh pool."""
    current = getattr(loop, "_default_executor", None)  # CPython's loops; another loop keeps what it has
    if current is not None and type(current).__module__.split(".")[0] == "dbos":
        loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix="asyncio"))


def _dead(beat: Any, host: str, now: float, lease: float) -> bool:
    if now - float(beat.seen_at) > lease:
        return True
    if beat.host != host:
        return False
    try:
        os.kill(int(beat.pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _get_or_raise(engine: sa.Engine, run_id: str, conn: sa.Connection | None = None) -> tables.Row:
    if conn is not None:
        raw = conn.execute(sa.select(tables.RUNS).where(tables.RUNS.c.run_id == run_id)).first()
        row = None if raw is None else tables.to_row(raw)
    else:
        row = tables.get_row(engine, run_id)
    if row is None:
        raise RunNotFound(f"no run {run_id!r}")
    return row


def _close_pending(row: tables.Row, key: bytes) -> list[dict[str, Any]]:
    """The paused run's history with a "not executed" result for every call that has none."""
    history = list(row.history)
    if row.checkpoint is None:
        return history
    checkpoint = Checkpoint.loads(row.checkpoint, key=key)
    for call in checkpoint.batch:
        result = call.result or ToolResult(
            call_id=call.call_id, name=call.tool_name, content="not executed: the run was cancelled", is_error=True
        )
        history.append(json.loads(json.dumps(result.to_json())))
    return history
