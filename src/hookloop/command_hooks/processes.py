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
answers may come in any order: the id pairs them. The process's stderr is logged (logger
``hookloop.command_hooks.processes``, level INFO), line by line.

Lifecycle: the process is started in its own process group with the environment a command hook gets (secrets
withheld, ``CLAUDE_PROJECT_DIR`` …) in the project directory. A firing whose answer does not come within the
hook's timeout is a timeout of that firing only (a late answer is dropped). If the process exits or writes a line
that is not an answer, every firing waiting on it is a hook error ("crashed"), and the next firing starts it again.
It is killed with its whole process group at the run's end (session_end) and when a firing waiting on it is
cancelled (the run is being cancelled). Per-firing variables (``CLAUDE_ENV_FILE``, the session id) are not in
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
from collections.abc import Mapping, Sequence
from typing import Any

from hookloop import _reaper
from hookloop._spawn import spawn_group

from .model import ConfiguredHook, HookOutcome

__all__ = ["HookProcess", "ProcessPool"]

_log = logging.getLogger("hookloop.command_hooks.processes")
_LINE_SLACK = 1 << 16


class HookProcess:
    """One running hook process and the firings waiting on its answers."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[bytes, bytes] | Mapping[str, str] | None,
        output_cap: int,
        kill_grace: float,
    ) -> None:
        self.name = name
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = env
        self.output_cap = output_cap
        self.kill_grace = kill_grace
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[str, asyncio.Future[HookOutcome]] = {}
        self.ids = itertools.count(1)
        self.tasks: list[asyncio.Task[None]] = []
        self.starting = asyncio.Lock()
        self.starts = 0
        """How many times the process was started (a restart after a crash counts)."""

    @property
    def pid(self) -> int | None:
        process = self.process
        return None if process is None or process.returncode is not None else process.pid

    async def _ensure(self) -> asyncio.subprocess.Process:
        async with self.starting:
            process = self.process
            if process is not None and process.returncode is None:
                return process
            await self._reap()
            loop = asyncio.get_running_loop()
            limit = self.output_cap + _LINE_SLACK
            transport, protocol = await spawn_group(
                lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=limit, loop=loop),
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
            )
            process = asyncio.subprocess.Process(transport, protocol, loop)
            self.process = process
            self.starts += 1
            self.tasks = [
                loop.create_task(self._read_answers(process)),
                loop.create_task(self._read_stderr(process)),
            ]
            return process

    async def request(self, event: str, body: bytes, *, timeout: float) -> HookOutcome:  # noqa: ASYNC109
        """Send one firing's request and wait for its answer (at most ``timeout`` seconds)."""
        started = time.perf_counter()
        try:
            process = await self._ensure()
        except OSError as exc:
            return HookOutcome(
                name=self.name,
                error_kind="not_found" if isinstance(exc, FileNotFoundError) else "spawn_failed",
                error=f"hook {self.name} could not start: {exc.strerror or exc}",
                timeout=timeout,
            )
        request_id = str(next(self.ids))
        future: asyncio.Future[HookOutcome] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        line = b'{"id":"%s","event":%s,"input":%s}\n' % (request_id.encode(), json.dumps(event).encode(), body)
        try:
            async with asyncio.timeout(timeout):
                assert process.stdin is not None
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the reader reports the exit
                    process.stdin.write(line)
                    await process.stdin.drain()
                outcome = await asyncio.shield(future)
        except TimeoutError:
            return HookOutcome(
                name=self.name,
                error_kind="timeout",
                error=f"hook {self.name} did not answer within {timeout:g} seconds",
                timed_out=True,
                timeout=timeout,
                duration=time.perf_counter() - started,
                pid=process.pid,
            )
        except asyncio.CancelledError:
            await asyncio.shield(self.close())  # the run is being cancelled: the process goes with it
            raise
        finally:
            self.pending.pop(request_id, None)
        return _timed(outcome, timeout, time.perf_counter() - started, process.pid)

    def _crashed(self, process: asyncio.subprocess.Process, why: str | None = None) -> HookOutcome:
        status = process.returncode
        detail = why or (f"exited with status {status}" if status is not None else "stopped answering")
        return HookOutcome(
            name=self.name,
            error_kind="crashed",
            error=f"hook {self.name} {detail} before answering",
            exit_code=None,
            signal=-status if status is not None and status < 0 else None,
        )

    async def _read_answers(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        why: str | None = None
        try:
            while True:
                try:
                    raw = await process.stdout.readline()
                except ValueError:  # a line over the limit
                    why = f"wrote an answer longer than {self.output_cap} bytes"
                    break
                if not raw:
                    break
                answer = _parse_answer(raw)
                if isinstance(answer, str):
                    why = f"wrote a line that is not an answer ({answer})"
                    break
                request_id, outcome = answer
                future = self.pending.get(request_id)
                if future is None or future.done():
                    _log.info("hook %s: answer to %r, which no firing waits for; dropped", self.name, request_id)
                    continue
                future.set_result(HookOutcome(name=self.name, **outcome))
        finally:
            if why is not None:
                _log.warning("hook %s %s; stopping it", self.name, why)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), self.kill_grace + 1)
            for future in list(self.pending.values()):
                if not future.done():
                    future.set_result(self._crashed(process, why))

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        with contextlib.suppress(ValueError):
            async for raw in process.stderr:
                _log.info("hook %s: %s", self.name, raw.decode("utf-8", "replace").rstrip())

    async def close(self) -> None:
        """Stop the process and its whole group (SIGTERM, then SIGKILL after the grace), and wait for it."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), self.kill_grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        await self._reap()

    async def _reap(self) -> None:
        process, self.process = self.process, None
        tasks, self.tasks = self.tasks, []
        if process is None:
            return
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await _reaper.release(process.pid)


class ProcessPool:
    """The hook processes of one Worker's command hooks, one per distinct command line."""

    def __init__(self, *, output_cap: int, kill_grace: float) -> None:
        self.output_cap = output_cap
        self.kill_grace = kill_grace
        self.processes: dict[tuple[str, ...], HookProcess] = {}

    def get(self, hook: ConfiguredHook, argv: Sequence[str], *, cwd: str, env: Mapping[Any, Any] | None) -> HookProcess:
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


def _timed(outcome: HookOutcome, timeout: float, duration: float, pid: int) -> HookOutcome:
    from dataclasses import replace

    return replace(outcome, timeout=timeout, duration=duration, pid=outcome.pid or pid)


def _parse_answer(raw: bytes) -> tuple[str, dict[str, Any]] | str:
    """(request id, HookOutcome fields) of one answer line, or why it is not one."""
    try:
        data = json.loads(raw)
    except ValueError:
        return f"not JSON: {raw[:60]!r}"
    if not isinstance(data, dict) or not isinstance(data.get("id"), (str, int)) or isinstance(data["id"], bool):
        return 'expected an object with an "id"'
    exit_code = data.get("exit_code", 0)
    if isinstance(exit_code, bool) or not isinstance(exit_code, int):
        return '"exit_code" must be an integer'
    stdout = data.get("stdout", "")
    if isinstance(stdout, (dict, list)):
        stdout = json.dumps(stdout)
    stderr = data.get("stderr", "")
    if not isinstance(stdout, str) or not isinstance(stderr, str):
        return '"stdout" and "stderr" must be text (stdout may be a JSON object)'
    fields = {"exit_code": exit_code, "stdout": stdout.encode(), "stderr": stderr.encode()}
    return str(data["id"]), fields
