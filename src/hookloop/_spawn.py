"""Starting a child as the leader of its own process group, safely under cancellation.

``loop.subprocess_exec`` returns only after the child is running *and* its pipes are connected. A task
cancelled in between gets CancelledError while the child already runs; asyncio then kills the leader alone, and
anything the child started (``sleep 1000 &``) is orphaned. :func:`spawn_group` finishes the spawn, kills the
whole group, waits for it, and only then lets the cancellation through.

Every child also gets a token in its environment (``HOOKLOOP_SPAWN``, see :mod:`hookloop._reaper`): when its call
ends, the caller hands the leader's pid to :func:`hookloop._reaper.release`, which kills and reaps whatever of
the call left the process group. The first spawn makes this process a child subreaper on Linux.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any, TypeVar

from hookloop import _reaper

__all__ = ["spawn_group"]

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
        _reaper.release_now(pid)
        raise
