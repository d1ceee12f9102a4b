"""Starting a child as the leader of its own process group, safely under cancellation.

``loop.subprocess_exec`` returns only after the child is running *and* its pipes are connected. A task
cancelled in between gets CancelledError while the child already runs; asyncio then kills the leader alone, and
anything the child started (``sleep 1000 &``) is orphaned. :func:`spawn_group` finishes the spawn, kills the
whole group, waits for it, and only then lets the cancellation through.

Every child also gets a token in its environment (``HOOKLOOP_SPAWN``, see :mod:`hookloop._reaper`): when its call
ends, the caller hands the leader's pid to :func:`hookloop._reaper.release`, which kills and reaps whatever of
the call left the process group. The first spawn makes this process a child subreaper on Linux.

:func:`spawn_group_light` starts a short-lived child with three pipes (a command hook) more cheaply on Linux: the
exit is watched through a pidfd and the pipes are read and written by the event loop directly, where
``loop.subprocess_exec`` starts a watcher thread and connects each pipe in a task (about 20 loop iterations and
a thread per spawn). Same process group, token, errors and protocol calls; no await, so no cancellation window.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from hookloop import _reaper

__all__ = ["spawn_group", "spawn_group_light"]

P = TypeVar("P", bound=asyncio.SubprocessProtocol)


async def spawn_group(
    protocol_factory: Callable[[], P], *argv: str, **kwargs: Any
) -> tuple[asyncio.SubprocessTransport, P]:
    """``loop.subprocess_exec(protocol_factory, *argv, start_new_session=True, **kwargs)``, cancellation-safe,
    with a fresh ``HOOKLOOP_SPAWN`` token added to ``env`` (default: this process's environment). The caller
    must ``await _reaper.release(transport.get_pid())`` once the call is over (its group killed)."""
    loop = asyncio.get_running_loop()
    kwargs["env"], token = _reaper.with_token(kwargs.get("env"))
    spawning = asyncio.ensure_future(loop.subprocess_exec(protocol_factory, *argv, start_new_session=True, **kwargs))
    try:
        transport, protocol = await asyncio.shield(spawning)
        _reaper.register(transport.get_pid(), token)
        return transport, protocol
    except OSError:
        _reaper.discard(token)  # it never started
        raise
    except asyncio.CancelledError:
        try:
            transport, _ = await spawning
        except Exception:
            _reaper.discard(token)
            raise asyncio.CancelledError from None  # it never started: nothing to clean up
        pid = transport.get_pid()
        _reaper.register(pid, token)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        for _ in range(1000):  # reap the leader before letting go of the transport (bounded: SIGKILL is final)
            if transport.get_returncode() is not None:
                break
            await asyncio.sleep(0.002)
        transport.close()
        # Its escapees too, killed and reaped (the sweep goes on until they are gone: one pass kills them, but
        # an escapee's zombie is ours to reap only once its dead parent has handed it to us).
        await _reaper.release(pid)
        raise


# ---------------------------------------------------------------------------------------------------------
# A lighter spawn for short-lived children (command hooks): pidfd instead of a watcher thread
# ---------------------------------------------------------------------------------------------------------

_PIDFD: bool | None = None if sys.platform.startswith("linux") and hasattr(os, "pidfd_open") else False
_READ_SIZE = 1 << 18


def spawn_group_light(
    protocol: P, *argv: str, cwd: str | None, env: Mapping[Any, Any] | None
) -> _LightTransport | None:
    """:func:`spawn_group` for a child with three pipes, synchronously and without asyncio's child watcher: its
    exit is watched through a pidfd (Linux 5.3+) in the event loop, its pipes are read and written by the loop
    directly — no thread, no pipe-connecting tasks per spawn. ``None`` when this system cannot (no pidfd; probed
    before any child starts): use :func:`spawn_group`. Raises ``OSError`` when the program cannot start (as
    :func:`spawn_group`), or cannot be watched (then it was killed before it got its input). The protocol
    gets the same calls as from ``loop.subprocess_exec`` (``connection_made``, ``pipe_data_received``,
    ``pipe_connection_lost``, ``process_exited``, ``connection_lost``). The caller must ``await
    _reaper.release(transport.get_pid())`` once the call is over."""
    if not _pidfd_works():
        return None
    loop = asyncio.get_running_loop()
    env_, token = _reaper.with_token(env)
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env_,
            start_new_session=True,
            bufsize=0,
        )
    except OSError:
        _reaper.discard(token)
        raise
    try:
        pidfd = os.pidfd_open(popen.pid)
    except OSError:  # out of file descriptors: the hook could not be watched, so it does not run
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
        for pipe in (popen.stdin, popen.stdout, popen.stderr):
            if pipe is not None:
                pipe.close()
        popen.wait()
        _reaper.discard(token)
        raise
    _reaper.register(popen.pid, token)
    return _LightTransport(loop, protocol, popen, pidfd)


def _pidfd_works() -> bool:
    """Whether this system lets us open pidfds (Linux 5.3+, not refused by a seccomp filter): probed once, on
    this process itself, before any child is started (a child is never started twice)."""
    global _PIDFD
    if _PIDFD is None:
        try:
            os.close(os.pidfd_open(os.getpid()))
            _PIDFD = True
        except OSError:
            _PIDFD = False
    return _PIDFD


class _StdinPipe(asyncio.WriteTransport):
    """The child's stdin: writes go straight to the pipe; what does not fit waits for the loop to flush it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, pipe: Any) -> None:
        super().__init__()
        self._loop = loop
        self._pipe = pipe
        fd = pipe.fileno()
        self._fd: int | None = fd
        self._buffer = bytearray()
        self._eof = False
        os.set_blocking(fd, False)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._fd is None or self._eof or not data:
            return
        if not self._buffer:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            except OSError:  # the child closed its stdin or exited: it did not want the input
                self._close()
                return
            data = memoryview(data)[written:]
            if not data:
                return
            self._loop.add_writer(self._fd, self._flush)
        self._buffer += data

    def _flush(self) -> None:
        if self._fd is None:
            return
        try:
            written = os.write(self._fd, self._buffer)
        except BlockingIOError:
            return
        except OSError:
            self._close()
            return
        del self._buffer[:written]
        if not self._buffer:
            self._loop.remove_writer(self._fd)
            if self._eof:
                self._close()

    def write_eof(self) -> None:
        self._eof = True
        if not self._buffer:
            self._close()

    def can_write_eof(self) -> bool:
        return True

    def get_write_buffer_size(self) -> int:
        return len(self._buffer)

    def is_closing(self) -> bool:
        return self._fd is None or self._eof

    def close(self) -> None:
        self.write_eof()

    def abort(self) -> None:
        self._close()

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        self._buffer.clear()
        if fd is not None:
            self._loop.remove_writer(fd)
            self._pipe.close()


class _LightTransport(asyncio.SubprocessTransport):
    """A child started by :func:`spawn_group_light`: its pipes and its exit, watched by the event loop."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, popen: subprocess.Popen[bytes],
        pidfd: int,
    ) -> None:  # fmt: skip
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._popen = popen  # kept until it is reaped (a dropped Popen would be polled, and reaped, by subprocess)
        self._pid = popen.pid
        self._returncode: int | None = None
        self._closed = False
        assert popen.stdin is not None
        assert popen.stdout is not None
        assert popen.stderr is not None
        self._stdin = _StdinPipe(loop, popen.stdin)
        self._pipes = {1: popen.stdout, 2: popen.stderr}
        self._readers: dict[int, int] = {}  # child fd (1, 2) → our fd
        for child_fd, pipe in self._pipes.items():
            fd = pipe.fileno()
            os.set_blocking(fd, False)
            self._readers[child_fd] = fd
        self._pidfd: int | None = pidfd
        protocol.connection_made(self)
        for child_fd, fd in self._readers.items():
            loop.add_reader(fd, self._read, child_fd, fd)
        loop.add_reader(pidfd, self._exited)

    def _read(self, child_fd: int, fd: int) -> None:
        try:
            data = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(child_fd, exc)
            return
        if data:
            self._protocol.pipe_data_received(child_fd, data)
        else:
            self._lost(child_fd, None)

    def _lost(self, child_fd: int, exc: Exception | None) -> None:
        fd = self._readers.pop(child_fd, None)
        if fd is None:
            return
        self._loop.remove_reader(fd)
        self._pipes[child_fd].close()
        self._protocol.pipe_connection_lost(child_fd, exc)
        self._maybe_done()

    def _exited(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is None:
            return
        self._loop.remove_reader(pidfd)
        os.close(pidfd)
        try:
            _, status = os.waitpid(self._pid, 0)
            self._returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # reaped by someone else (a watcher reaping every child): status unknown
            self._returncode = 255
        self._popen.returncode = self._returncode
        self._protocol.process_exited()
        self._maybe_done()

    def _maybe_done(self) -> None:
        if not self._readers and self._pidfd is None and not self._closed:
            self._closed = True
            self._stdin.abort()
            self._protocol.connection_lost(None)

    def get_pid(self) -> int:
        return self._pid

    def get_returncode(self) -> int | None:
        return self._returncode

    def get_pipe_transport(self, fd: int) -> asyncio.BaseTransport | None:
        return self._stdin if fd == 0 else None

    def send_signal(self, signal: int) -> None:
        if self._returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the pipes; a child still running is killed (its exit is still watched, so it is reaped)."""
        self._stdin.abort()
        for child_fd in list(self._readers):
            self._lost(child_fd, None)
        if self._returncode is None:
            self.kill()
