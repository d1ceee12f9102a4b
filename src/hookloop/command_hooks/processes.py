"""Hook processes that stay running: hookloop's ``{"type": "process", "command": …}`` handler.

Spawning a process per firing costs milliseconds; a hook process that stays running answers in a tenth of one.
hookloop starts it the first time one of its hooks fires (lazily) and talks to it in JSON lines on its
stdin/stdout, one line per message:

- **request** (hookloop → process): ``{"id": "<id>", "event": "<Claude Code event>", "input": {…}}`` — ``input`` is
  exactly the stdin payload a command hook gets for that firing.
- **answer** (process → hookloop): ``{"id": "<id>", "exit_code": 0, "stdout": "…" | {…}, "stderr": "…"}`` — the
  fields a command hook answers with: ``exit_code`` (default 0; 2 blocks, as for a command hook), ``stdout``
  (text, or a JSON object standing for its text — Claude Code's JSON output), ``stderr`` (text).

Requests are pipelined (hookloop does not wait for one answer before sending the next firing's request) and
answers may come in any order: the id pairs them. What one firing costs hookloop: a line written to the pipe
(its tail, the event and the payload, built once for every process of the event), an entry in the process's
table of firings waiting (one deadline timer per process, set for the earliest deadline), and the answer parsed
as it is read; the firings of one event are awaited together on one future (:class:`Batch`). The process's
stderr is logged (logger ``hookloop.command_hooks.processes``, level INFO), line by line.

Lifecycle: the process is started in its own process group with the environment a command hook gets (secrets
withheld, ``CLAUDE_PROJECT_DIR`` …) in the project directory. A firing whose answer does not come within the
hook's timeout is a timeout of that firing only (a late answer is dropped). If the process exits or writes a line
that is not an answer, every firing waiting on it is a hook error ("crashed"), and the next firing starts it again.
A process that closes its stdout is stopped too (SIGTERM, then SIGKILL after the grace): it can no longer
answer. It is killed with its whole process group at the run's end (session_end) and when a firing waiting on it
is cancelled (the run is being cancelled). Its environment is computed when it starts (and again at a restart),
so a restart sees the environment of that moment. Per-firing variables (``CLAUDE_ENV_FILE``, the session id) are not in
its environment: the payload carries the session id. Processes do not run under the hook sandbox (a configuration
that sandboxes hooks refuses them, as a hook error). :mod:`hookloop.hookserver` writes the server side in Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from hookloop import _reaper
from hookloop._spawn import spawn_group, spawn_group_light

from .model import ConfiguredHook, HookOutcome

__all__ = ["Batch", "HookProcess", "ProcessPool", "Waiting", "request_tail"]

_log = logging.getLogger("hookloop.command_hooks.processes")
_LINE_SLACK = 1 << 16
_EVENT_JSON: dict[str, bytes] = {}
_CLOCK_SLACK = time.get_clock_info("monotonic").resolution
"""A timer may run this much before its time (asyncio's own rule): a deadline that close has passed."""

Env: TypeAlias = Mapping[bytes, bytes] | Mapping[str, str] | None
EnvSource: TypeAlias = Env | Callable[[], Env]
"""An environment, or a function that computes it (called at each start of the process)."""


class Waiting:
    """One firing sent to a hook process and not answered yet. Its :attr:`outcome` is set once — the answer, a
    timeout, or "crashed" — and its :class:`Batch` is told; nothing here raises."""

    __slots__ = ("batch", "deadline", "generation", "outcome", "request_id", "started", "timeout")

    def __init__(
        self, batch: Batch, request_id: str, generation: int, timeout: float, started: float, deadline: float
    ) -> None:
        self.batch = batch
        self.request_id = request_id
        self.generation = generation
        self.timeout = timeout
        self.started = started
        self.deadline = deadline
        """Loop time after which the firing is a timeout."""
        self.outcome: HookOutcome | None = None


class Batch:
    """The requests of one event firing to hook processes, awaited together: one future for the whole batch
    (not one per firing), resolved when the last of them has its outcome."""

    __slots__ = ("future", "remaining", "sent")

    def __init__(self) -> None:
        self.sent: list[tuple[HookProcess, Waiting]] = []
        self.remaining = 0
        self.future: asyncio.Future[None] | None = None

    def resolved(self) -> None:
        """One firing of the batch has its outcome."""
        self.remaining -= 1
        future = self.future
        if not self.remaining and future is not None and not future.done():
            future.set_result(None)

    async def outcomes(self) -> list[HookOutcome]:
        """Every firing's outcome, in the order they were sent. Cancelling the caller stops the processes that
        had not answered yet (the run is being cancelled: they go with it), then re-raises."""
        sent = self.sent
        if self.remaining:
            self.future = asyncio.get_running_loop().create_future()
            try:
                await self.future
            except asyncio.CancelledError:
                self.sent = []
                waiting_on = {id(p): p for p, waiting in sent if waiting.outcome is None}
                for process, waiting in sent:
                    process.forget(waiting)
                await asyncio.shield(asyncio.gather(*(p.close() for p in waiting_on.values()), return_exceptions=True))
                raise
        self.sent = []  # no cycle left (each firing points at its batch): freed without the garbage collector
        return [cast("HookOutcome", waiting.outcome) for _, waiting in sent]  # all set: nothing remains


class _Answers(asyncio.SubprocessProtocol):
    """One run of a hook process: answer lines (stdout) resolve the firings waiting on them as they arrive,
    stderr lines are logged; no reader task."""

    def __init__(self, owner: HookProcess, generation: int, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.owner = owner
        self.loop = loop
        self.generation = generation
        self.limit = limit
        self.out = bytearray()
        self.err = bytearray()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.failed = False
        self.pid = 0
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.reading = True
        """stdout is still open: what the process wrote before it exited may not have been read yet."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()
        pipe = transport.get_pipe_transport(0)
        self.stdin = pipe if isinstance(pipe, asyncio.WriteTransport) else None

    @property
    def returncode(self) -> int | None:
        return None if self.transport is None else self.transport.get_returncode()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._stdout(data)
        elif fd == 2:
            self._stderr(data)

    def _stdout(self, data: bytes) -> None:
        if self.failed:
            return
        buffer = self.out
        if b"\n" not in data:
            buffer += data
            if len(buffer) > self.limit:
                self.owner._fail(self, f"wrote an answer longer than {self.owner.output_cap} bytes")
            return
        if buffer:
            buffer += data
            lines: list[bytes] | list[bytearray] = buffer.split(b"\n")
        else:  # the usual case: whole answer lines, nothing kept from before
            lines = data.split(b"\n")
        rest = lines.pop()
        buffer[:] = rest
        owner, limit = self.owner, self.limit
        for raw in lines:
            if len(raw) > limit:
                owner._fail(self, f"wrote an answer longer than {owner.output_cap} bytes")
                return
            if not owner._answer(self, raw):
                return
        if len(buffer) > limit:
            owner._fail(self, f"wrote an answer longer than {owner.output_cap} bytes")

    def _stderr(self, data: bytes) -> None:
        buffer = self.err
        buffer += data
        if b"\n" in data:
            *lines, rest = buffer.split(b"\n")
            buffer[:] = rest
            for raw in lines:
                _log.info("hook %s: %s", self.owner.name, raw.decode("utf-8", "replace").rstrip())
        if len(buffer) > self.limit:  # a line too long to keep: logged in pieces
            _log.info("hook %s: %s", self.owner.name, bytes(buffer).decode("utf-8", "replace"))
            buffer.clear()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.reading = False
            if self.out and not self.failed:  # a last answer without its line end
                raw, self.out = bytes(self.out), bytearray()
                if not self.owner._answer(self, raw):
                    return
            self.owner._fail(self, None)  # it can no longer answer
        elif fd == 2 and self.err:
            _log.info("hook %s: %s", self.owner.name, bytes(self.err).decode("utf-8", "replace").rstrip())
            self.err.clear()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        if self.reading:
            # The exit can be seen before the answers it wrote last are read: they are still in the pipe, and
            # stdout's end (pipe_connection_lost) fails the process after reading them. A child that keeps
            # stdout open does not keep the firings waiting past the grace.
            self.loop.call_later(self.owner.kill_grace, self.owner._fail, self, None)
        else:
            self.owner._fail(self, None)


class HookProcess:
    """One running hook process and the firings waiting on its answers."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        cwd: str,
        env: EnvSource,
        output_cap: int,
        kill_grace: float,
    ) -> None:
        self.name = name
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = env
        """The process's environment, or a function computing it at each start."""
        self.output_cap = output_cap
        self.kill_grace = kill_grace
        self.pending: dict[str, Waiting] = {}
        self.ids = itertools.count(1)
        self.starting = asyncio.Lock()
        self.starts = 0
        """How many times the process was started (a restart after a crash counts)."""
        self._transport: asyncio.SubprocessTransport | None = None
        self._protocol: _Answers | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        """The deadline timer of the firings waiting (see :meth:`_expire_due`)."""

    @property
    def pid(self) -> int | None:
        """The running process's pid (``None`` when it does not run)."""
        transport = self._transport
        if transport is None or transport.get_returncode() is not None:
            return None
        return transport.get_pid()

    # -- firing ---------------------------------------------------------------------------------------------

    async def request(self, event: str, body: bytes, *, timeout: float) -> HookOutcome:  # noqa: ASYNC109
        """Send one firing's request and wait for its answer (at most ``timeout`` seconds); the process is
        started first if it does not run."""
        started = time.perf_counter()
        batch = Batch()
        tail = request_tail(event, body)
        if not self.submit(batch, tail, timeout=timeout, started=started):
            try:
                await self._ensure()
            except OSError as exc:
                return HookOutcome(
                    name=self.name,
                    error_kind="not_found" if isinstance(exc, FileNotFoundError) else "spawn_failed",
                    error=f"hook {self.name} could not start: {exc.strerror or exc}",
                    timeout=timeout,
                )
            if not self.submit(batch, tail, timeout=timeout, started=started):  # it died as it started
                return self._crashed(self._protocol, None, timeout, time.perf_counter() - started)
        return (await batch.outcomes())[0]

    def submit(self, batch: Batch, tail: bytes, *, timeout: float, started: float | None = None) -> bool:
        """Send one firing's request now if the process runs, as part of ``batch`` (False when it must be
        started first: use :meth:`request`). ``tail`` is :func:`request_tail` of the firing (the same for every
        process of one event). The answer, a timeout after ``timeout`` seconds, or a crash gives the firing its
        outcome; await them with :meth:`Batch.outcomes`."""
        protocol = self._protocol
        if protocol is None or protocol.failed:
            return False
        pipe = protocol.stdin
        if pipe is None or pipe.is_closing():
            return False
        number = next(self.ids)
        request_id = str(number)
        deadline = protocol.loop.time() + timeout
        waiting = Waiting(
            batch,
            request_id,
            protocol.generation,
            timeout,
            time.perf_counter() if started is None else started,
            deadline,
        )
        self.pending[request_id] = waiting
        batch.sent.append((self, waiting))
        batch.remaining += 1
        timer = self._timer
        if timer is None or deadline < timer.when():  # one timer per process, for the earliest deadline
            if timer is not None:
                timer.cancel()
            self._timer = protocol.loop.call_at(deadline, self._expire_due)
        try:  # noqa: SIM105 -- not contextlib.suppress: an object and two calls per firing
            pipe.write(b'{"id":"%d%s' % (number, tail))
        except (BrokenPipeError, ConnectionResetError):  # the exit is reported by the protocol
            pass
        return True

    def forget(self, waiting: Waiting) -> None:
        """The firing is no longer awaited (cancelled): drop it (its outcome is never set)."""
        if self.pending.get(waiting.request_id) is waiting:
            del self.pending[waiting.request_id]

    def _resolve(self, waiting: Waiting, outcome: HookOutcome) -> None:
        if self.pending.get(waiting.request_id) is waiting:
            del self.pending[waiting.request_id]
        if waiting.outcome is None:
            waiting.outcome = outcome
            waiting.batch.resolved()

    def _expire_due(self) -> None:
        """The deadline timer: every firing past its deadline is a timeout; the timer is set again for the
        earliest deadline left."""
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time() + _CLOCK_SLACK
        due = [waiting for waiting in self.pending.values() if waiting.deadline <= now]
        for waiting in due:
            self._expire(waiting)
        if self.pending:
            self._timer = loop.call_at(min(w.deadline for w in self.pending.values()), self._expire_due)

    def _expire(self, waiting: Waiting) -> None:
        self._resolve(
            waiting,
            HookOutcome(
                name=self.name,
                error_kind="timeout",
                error=f"hook {self.name} did not answer within {waiting.timeout:g} seconds",
                timed_out=True,
                timeout=waiting.timeout,
                duration=time.perf_counter() - waiting.started,
                pid=self.pid,
            ),
        )

    def _answer(self, protocol: _Answers, raw: bytes | bytearray) -> bool:
        """One answer line; False when it is not one (the process is then stopped)."""
        answer = _parse_answer(raw)
        if isinstance(answer, str):
            self._fail(protocol, f"wrote a line that is not an answer ({answer})")
            return False
        request_id, exit_code, stdout, stderr = answer
        waiting = self.pending.get(request_id)
        if waiting is None or waiting.generation != protocol.generation:
            _log.info("hook %s: answer to %r, which no firing waits for; dropped", self.name, request_id)
            return True
        del self.pending[request_id]
        if waiting.outcome is None:
            waiting.outcome = HookOutcome(
                name=self.name,
                exit_code=exit_code,
                stdout=stdout,
                stderr=stderr,
                timeout=waiting.timeout,
                duration=time.perf_counter() - waiting.started,
                pid=protocol.pid,
            )
            waiting.batch.resolved()
        return True

    # -- lifecycle ------------------------------------------------------------------------------------------

    async def _ensure(self) -> None:
        async with self.starting:
            protocol = self._protocol
            if protocol is not None and not protocol.failed:
                return
            await self._reap()
            loop = asyncio.get_running_loop()
            env = self.env() if callable(self.env) else self.env
            generation = self.starts + 1
            limit = self.output_cap + _LINE_SLACK
            protocol = _Answers(self, generation, limit, loop)
            # The pidfd spawn where the system has it: answers reach the protocol as they are read, without
            # asyncio's subprocess layer deferring each to the loop's next round; else asyncio's machinery.
            transport: asyncio.SubprocessTransport | None = spawn_group_light(
                protocol, *self.argv, cwd=self.cwd, env=env
            )
            if transport is None:
                transport, protocol = await spawn_group(
                    lambda: _Answers(self, generation, limit, loop),
                    *self.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    cwd=self.cwd,
                    env=env,
                )
            self.starts = generation
            self._transport, self._protocol = transport, protocol

    def _fail(self, protocol: _Answers, why: str | None) -> None:
        """The process stopped answering (exit, stdout closed, a bad line): stop it, then every firing waiting on
        it is a hook error."""
        if protocol.failed:
            return
        protocol.failed = True
        if why is not None:
            _log.warning("hook %s %s; stopping it", self.name, why)
        if protocol is self._protocol:
            self._stopping = asyncio.get_running_loop().create_task(self._stop(protocol, why))

    async def _stop(self, protocol: _Answers, why: str | None) -> None:
        exited = protocol.exited
        if why is None and not exited.done():  # stdout closed: it may be exiting on its own
            await asyncio.wait([exited], timeout=self.kill_grace)
        if not exited.done():
            _signal_group(protocol.pid, signal.SIGTERM if why is None else signal.SIGKILL)
            await asyncio.wait([exited], timeout=self.kill_grace)
            if not exited.done():
                _signal_group(protocol.pid, signal.SIGKILL)
                await asyncio.wait([exited], timeout=self.kill_grace + 1)
        self._fail_pending(protocol, why)

    def _fail_pending(self, protocol: _Answers, why: str | None) -> None:
        for waiting in [w for w in self.pending.values() if w.generation == protocol.generation]:
            self._resolve(waiting, self._crashed(protocol, why, waiting.timeout, time.perf_counter() - waiting.started))

    def _crashed(self, protocol: _Answers | None, why: str | None, timeout: float, duration: float) -> HookOutcome:
        status = protocol.returncode if protocol is not None else None
        detail = why or (f"exited with status {status}" if status is not None else "stopped answering")
        return HookOutcome(
            name=self.name,
            error_kind="crashed",
            error=f"hook {self.name} {detail} before answering",
            exit_code=None,
            signal=-status if status is not None and status < 0 else None,
            timeout=timeout,
            duration=duration,
            pid=protocol.pid if protocol is not None else None,
        )

    async def close(self) -> None:
        """Stop the process and its whole group (SIGTERM, then SIGKILL after the grace), and wait for it."""
        protocol = self._protocol
        if protocol is None:
            return
        if not protocol.exited.done():
            _signal_group(protocol.pid, signal.SIGTERM)
            await asyncio.wait([protocol.exited], timeout=self.kill_grace)
            if not protocol.exited.done():
                _signal_group(protocol.pid, signal.SIGKILL)
                await asyncio.wait([protocol.exited])
        await self._reap()

    async def _reap(self) -> None:
        protocol, transport, stopping = self._protocol, self._transport, self._stopping
        self._protocol = self._transport = self._stopping = None
        if protocol is not None and transport is not None:
            protocol.failed = True
            if stopping is not None:
                await asyncio.shield(stopping)  # the firings of this run are resolved
            self._fail_pending(protocol, None)
            transport.close()
            await _reaper.release(protocol.pid)
        if self._timer is not None and not self.pending:  # nothing left to time out
            self._timer.cancel()
            self._timer = None


def request_tail(event: str, body: bytes) -> bytes:
    """Everything of a request line after its id's digits: built once per event firing and shared by the
    processes it goes to (``body`` is the stdin payload, JSON)."""
    event_json = _EVENT_JSON.get(event)
    if event_json is None:
        event_json = _EVENT_JSON.setdefault(event, json.dumps(event).encode())
    return b'","event":%s,"input":%s}\n' % (event_json, body)


class ProcessPool:
    """The hook processes of one Worker's command hooks, one per distinct command line."""

    def __init__(self, *, output_cap: int, kill_grace: float) -> None:
        self.output_cap = output_cap
        self.kill_grace = kill_grace
        self.processes: dict[tuple[str, ...], HookProcess] = {}
        self.resolved: dict[tuple[Any, ...], tuple[object, ConfiguredHook, HookProcess, float]] = {}
        """Memo of the runner: (hook, project, …) → (its options, the hook, the process, the firing's timeout) —
        see ``runner._process_of``."""

    def get(self, hook: ConfiguredHook, argv: Sequence[str], *, cwd: str, env: EnvSource) -> HookProcess:
        """The process for ``argv`` in ``cwd`` (created, not started, the first time); ``env`` is used when the
        process is created: the first hook to ask for that command line sets it."""
        key = (cwd, *argv)
        found = self.processes.get(key)
        if found is None:
            found = HookProcess(
                hook.name, argv, cwd=cwd, env=env, output_cap=self.output_cap, kill_grace=self.kill_grace
            )
            self.processes[key] = found
        return found

    async def close(self) -> None:
        """Stop every process (they start again, lazily, when a hook fires next)."""
        processes = list(self.processes.values())
        await asyncio.gather(*(p.close() for p in processes), return_exceptions=True)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _parse_answer(raw: bytes | bytearray) -> tuple[str, int, bytes, bytes] | str:
    """(request id, exit code, stdout, stderr) of one answer line, or why it is not one."""
    try:
        if raw[:1] == b"{":  # an answer is an object: decoded here (json.loads would guess the bytes' encoding)
            text = raw.decode()
            data, end = _DECODER.raw_decode(text)
            if end != len(text) and text[end:].strip(" \t\n\r"):  # json.loads's rule: only whitespace after
                return f"not JSON: {raw[:60]!r}"
        else:
            data = json.loads(raw)
    except ValueError:  # UnicodeDecodeError too, as json.loads raises for bytes that are not UTF-8
        return f"not JSON: {raw[:60]!r}"
    if not isinstance(data, dict):
        return 'expected an object with an "id"'
    request_id = data.get("id")
    if isinstance(request_id, str):
        pass
    elif isinstance(request_id, int) and not isinstance(request_id, bool):
        request_id = str(request_id)
    else:
        return 'expected an object with an "id"'
    exit_code = data.get("exit_code", 0)
    if type(exit_code) is not int and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        return '"exit_code" must be an integer'
    stdout = data.get("stdout", "")
    if isinstance(stdout, (dict, list)):
        stdout = json.dumps(stdout)
    stderr = data.get("stderr", "")
    if not isinstance(stdout, str) or not isinstance(stderr, str):
        return '"stdout" and "stderr" must be text (stdout may be a JSON object)'
    return request_id, exit_code, stdout.encode(), stderr.encode()


_DECODER = json.JSONDecoder()
"""``json.loads``'s own decoder (no arguments: the same one ``json.loads`` uses)."""
