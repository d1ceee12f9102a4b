"""The stdio transport of :class:`hookloop.tools.mcp.MCPServer`: the server as the leader of its own process group.

Why not the SDK's ``stdio_client``: it hides the process, so a crash cannot be reported with its exit status and
the end of its stderr, and it kills the process group only when the server outlives its stdin. Here the server
is started by :func:`hookloop._spawn.spawn_group` (cancellation-safe, a ``HOOKLOOP_SPAWN`` token in its
environment), its stderr is kept (the last :data:`STDERR_TAIL` bytes) instead of going to ours, and on exit the
whole group is stopped and whatever left it is reaped (:func:`hookloop._reaper.release`): when the transport
is closed, neither the server nor anything it started is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from hookloop import _reaper
from hookloop._spawn import spawn_group

__all__ = ["GRACE", "MAX_LINE", "STDERR_TAIL", "StdioTransport"]

STDERR_TAIL = 4096
"""Bytes of the server's stderr kept for error messages (the last ones)."""

GRACE = 2.0
"""Seconds the server gets to exit after its stdin closes, and again after SIGTERM, before SIGKILL."""

_AFTER_EXIT = 0.2  # seconds the output of an exited server may still arrive (from the pipe's buffer)

MAX_LINE = 64 * 1024 * 1024
"""The longest stdout line (one JSON-RPC message) accepted; a longer one is dropped as a protocol error."""


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, owner: StdioTransport) -> None:
        self._owner = owner

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        if fd == 1:
            self._owner._stdout(data)
        elif fd == 2:
            self._owner._stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._owner._stdout_closed()

    def process_exited(self) -> None:
        self._owner._process_exited()


class StdioTransport:
    """``async with StdioTransport(...) as (read, write)``: the MCP SDK's transport streams over a subprocess.

    ``lost`` is set when the server's stdout closes or the process exits (the session cannot go on);
    :attr:`exit_status` and :meth:`stderr_tail` say why. Leaving the ``async with`` closes stdin, waits
    :data:`GRACE` seconds for the server to exit, then SIGTERMs and SIGKILLs its process group, and reaps what
    left the group. Raises ``OSError`` on entry when the program cannot be started.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self._argv = [command, *args]
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self.lost = asyncio.Event()
        self._exited = asyncio.Event()
        self._transport: asyncio.SubprocessTransport | None = None
        self._pid: int | None = None
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._skipping = False
        self._tail = b""
        self._inbox: MemoryObjectSendStream[SessionMessage | Exception] | None = None
        self._read: MemoryObjectReceiveStream[SessionMessage | Exception] | None = None
        self._write_task: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """The server's pid (also its process group id) once started."""
        return self._pid

    @property
    def exit_status(self) -> int | None:
        """The server's exit status (negative: killed by that signal), or None while it runs."""
        return None if self._transport is None else self._transport.get_returncode()

    def stderr_tail(self) -> str:
        """The last :data:`STDERR_TAIL` bytes the server wrote to stderr, decoded leniently and stripped."""
        return self._tail.decode("utf-8", "replace").strip()

    def describe_exit(self) -> str:
        """``exited with status N`` / ``was killed by SIGX`` / ``closed its stdout``, plus the stderr tail."""
        status = self.exit_status
        if status is None:
            what = "closed its output"
        elif status < 0:
            try:
                what = f"was killed by {signal.Signals(-status).name}"
            except ValueError:
                what = f"was killed by signal {-status}"
        else:
            what = f"exited with status {status}"
        tail = self.stderr_tail()
        return f"{what}; stderr: {tail[-1000:]}" if tail else f"{what} (no stderr output)"

    async def wait_exit(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the process to exit (so :attr:`exit_status` is known)."""
        with anyio.move_on_after(seconds):
            await self._exited.wait()

    # -- the subprocess protocol's callbacks -------------------------------------------------------------

    def _stdout(self, data: bytes) -> None:
        if self._inbox is None:
            return
        if b"\n" not in data:  # part of a line: kept as chunks (joining on every chunk would be quadratic)
            self._partial.append(data)
            self._partial_size += len(data)
            if self._partial_size > MAX_LINE:
                self._partial, self._partial_size, self._skipping = [], 0, True
                self._deliver(ValueError(f"the server sent a line longer than {MAX_LINE} bytes; it was dropped"))
            return
        lines = data.split(b"\n")
        first = b"".join([*self._partial, lines[0]])
        tail = lines.pop()
        self._partial, self._partial_size = ([tail], len(tail)) if tail else ([], 0)
        for index, line in enumerate([first, *lines[1:]]):
            if index == 0 and self._skipping:
                self._skipping = False  # the end of the line that was too long
                continue
            if line.strip():
                self._deliver(_parse(line))

    def _deliver(self, item: SessionMessage | Exception) -> None:
        assert self._inbox is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._inbox.send_nowait(item)

    def _stderr(self, data: bytes) -> None:
        self._tail = (self._tail + data)[-STDERR_TAIL:]

    def _stdout_closed(self) -> None:
        self._end_stream()  # the session sees the end of the stream: pending requests fail
        self.lost.set()

    def _process_exited(self) -> None:
        self._exited.set()
        self.lost.set()
        # What it wrote before exiting may still be in the pipe; a child holding the pipe open must not keep
        # the session waiting for answers that cannot come: the stream ends shortly after the exit.
        asyncio.get_running_loop().call_later(_AFTER_EXIT, self._end_stream)

    def _end_stream(self) -> None:
        if self._inbox is not None:
            self._inbox.close()

    # -- the context manager ---------------------------------------------------------------------------

    async def __aenter__(
        self,
    ) -> tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]:
        send, self._read = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
        self._inbox = send
        out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](math.inf)
        try:
            self._transport, _ = await spawn_group(
                lambda: _Protocol(self),
                *self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,  # spawn_group copies it (adding the token)
            )
        except BaseException:
            for stream in (send, self._read, out_send, out_receive):
                stream.close()
            raise
        self._pid = self._transport.get_pid()
        self._write_task = asyncio.get_running_loop().create_task(self._writer(out_receive))
        return self._read, out_send

    async def _writer(self, outgoing: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert self._transport is not None
        stdin = self._transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        async with outgoing:
            async for message in outgoing:
                if stdin.is_closing():
                    continue  # the server is gone: what the session still sends goes nowhere
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                stdin.write(data)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with anyio.CancelScope(shield=True):  # every wait below is bounded: the process never leaks
            await self._shutdown()

    async def _shutdown(self) -> None:
        transport, pid = self._transport, self._pid
        if self._write_task is not None:
            self._write_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._write_task
        if transport is None or pid is None:
            return
        stdin = transport.get_pipe_transport(0)
        if stdin is not None:
            stdin.close()  # the MCP shutdown sequence: close stdin, wait, then signal
        await self.wait_exit(GRACE)
        if not self._exited.is_set():
            _signal_group(pid, signal.SIGTERM)
            await self.wait_exit(GRACE)
        _signal_group(pid, signal.SIGKILL)  # whatever of the group is left, the leader alive or not
        await self.wait_exit(GRACE)
        transport.close()
        await _reaper.release(pid)
        for stream in (self._inbox, self._read):
            if stream is not None:
                stream.close()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    # The group id is the leader's pid; the kernel hands out no pid while a group of that id has members, so
    # signalling after the leader was reaped reaches only its leftovers (an empty group: ProcessLookupError).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
