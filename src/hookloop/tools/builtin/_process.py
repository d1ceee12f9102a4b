"""Child processes in their own process group, stopped as a whole: nothing a tool started outlives its call.

``start_new_session`` makes the child the leader of a new process group (and session), so one ``killpg`` reaches
its children and grandchildren too. A process that leaves the group (``setsid``, ``setpgid``) is found by the
call's token in its environment instead, and killed and reaped when the call is stopped
(:mod:`hookloop._reaper`); :meth:`GroupProcess.stop` gives up on its output after ``drain_timeout`` instead of
hanging.

Why not ``asyncio.create_subprocess_exec``: its ``Process.wait()`` returns only once every pipe is closed, so a
background child that inherited stdout (``sleep 1000 &``) would hold the call open until it exits. The protocol
here reports the leader's exit on its own, and pushes output to sinks as it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hookloop import _reaper
from hookloop._spawn import spawn_group

__all__ = ["DRAIN", "GRACE", "GroupProcess", "spawn"]

GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL when a group is stopped while its leader still runs."""

DRAIN = 2.0
"""Seconds to wait for the output pipes to close once the group is dead."""

Sink = Callable[[bytes], object]
"""Receives output chunks; a true return means "enough": further output is dropped and waiters wake up."""


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, sinks: Mapping[int, Sink]) -> None:
        self._sinks = sinks
        self.exited = asyncio.Event()
        self.attention = asyncio.Event()  # closed, or a sink had enough or failed
        self.closed = False
        self.enough = False
        self.error: BaseException | None = None

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if self.enough or self.error is not None:
            return
        assert isinstance(data, bytes)
        try:
            if self._sinks[fd](data):
                self.enough = True
                self.attention.set()
        except Exception as exc:  # a sink's bug must reach the caller, not the loop's exception handler
            self.error = exc
            self.attention.set()

    def process_exited(self) -> None:
        self.exited.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.exited.set()
        self.attention.set()


class GroupProcess:
    """A running child that leads its own process group; its output goes to the sinks given to :func:`spawn`."""

    __slots__ = ("_protocol", "_transport")

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    @property
    def pid(self) -> int:
        return self._transport.get_pid()

    @property
    def returncode(self) -> int | None:
        """The leader's exit status (negative: killed by that signal), None while it runs."""
        return self._transport.get_returncode()

    @property
    def enough(self) -> bool:
        """A sink said it had enough output."""
        return self._protocol.enough

    async def wait_exit(self) -> int | None:
        """Wait until the leader exits (its children may still run and hold the pipes)."""
        await self._protocol.exited.wait()
        return self.returncode

    async def wait_closed(self) -> None:
        """Wait until the leader exited and every pipe reached its end, or a sink had enough; re-raise a
        sink's exception."""
        await self._protocol.attention.wait()
        if self._protocol.error is not None:
            raise self._protocol.error

    async def stop(self, *, grace: float = GRACE, drain_timeout: float = DRAIN) -> bool:
        """Stop the whole process group and wait for it.

        SIGTERM goes to the group; the leader gets ``grace`` seconds to exit; then SIGKILL goes to the group
        (always: background children may outlive a leader that exited on its own). Then the pipes get
        ``drain_timeout`` seconds to reach their end — every process of the group holding them is dead by then.
        Safe to call when everything already exited. If cancelled again while waiting, SIGKILL is still sent and
        the transport still closed.

        Processes that left the group are then killed and reaped by the call's token
        (:func:`hookloop._reaper.release`). Returns False when a pipe was still open after ``drain_timeout``
        (held by a process out of reach: one that left the group and cleared its environment); its remaining
        output is abandoned.
        """
        protocol = self._protocol
        try:
            try:
                _signal_group(self.pid, signal.SIGTERM)
                if not protocol.exited.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(protocol.exited.wait(), grace)
            finally:
                _signal_group(self.pid, signal.SIGKILL)
            await protocol.exited.wait()
            await _reaper.release(self.pid)  # processes that left the group die too, and free the pipes
            if not protocol.closed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(protocol.attention.wait(), drain_timeout)
            return protocol.closed or protocol.enough
        finally:
            # Closes the pipes even when a process outside the group still holds them open; otherwise the
            # transport would stay open until then, and leak.
            self._transport.close()
            await _reaper.release(self.pid)  # if not done above (a no-op then)


async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdout: Sink,
    stderr: Sink | None = None,
    env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> GroupProcess:
    """Start ``argv`` as the leader of a new process group, stdin from /dev/null. Output chunks go to
    ``stdout`` and ``stderr`` as they arrive; without ``stderr``, stderr is merged into stdout (interleaved as
    written). ``pass_fds`` are inherited under the same numbers (all other descriptors are closed). Raises
    ``OSError`` when the program cannot be started."""
    sinks: dict[int, Sink] = {1: stdout}
    if stderr is not None:
        sinks[2] = stderr
    transport, protocol = await spawn_group(
        lambda: _Protocol(sinks),
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr is not None else subprocess.STDOUT,
        cwd=cwd,
        env=env,  # spawn_group copies it (adding the call's token)
        pass_fds=tuple(pass_fds),
    )
    return GroupProcess(transport, protocol)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    # With start_new_session the group id is the leader's pid. The kernel does not hand out a pid while a
    # group of that id has members, so signalling after the leader was reaped reaches only our leftovers
    # (an empty group gives ProcessLookupError).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
