"""Starting a child as the leader of its own process group, safely under cancellation.

``loop.subprocess_exec`` returns only after the child is running *and* its pipes are connected. A task
cancelled in between gets CancelledError while the child already runs; asyncio then kills the leader alone, and
anything the child started (``sleep 1000 &``) is orphaned. :func:`spawn_group` finishes the spawn, kills the
whole group, waits for it, and only then lets the cancellation through.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["spawn_group"]

P = TypeVar("P", bound=asyncio.SubprocessProtocol)


async def spawn_group(
    protocol_factory: Callable[[], P], *argv: str, **kwargs: Any
) -> tuple[asyncio.SubprocessTransport, P]:
    """``loop.subprocess_exec(protocol_factory, *argv, start_new_session=True, **kwargs)``, cancellation-safe."""
    loop = asyncio.get_running_loop()
    spawning = asyncio.ensure_future(loop.subprocess_exec(protocol_factory, *argv, start_new_session=True, **kwargs))
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        try:
            transport, _ = await spawning
        except Exception:
            raise asyncio.CancelledError from None  # it never started: nothing to clean up
        pid = transport.get_pid()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        for _ in range(1000):  # reap the leader before letting go of the transport (bounded: SIGKILL is final)
            if transport.get_returncode() is not None:
                break
            await asyncio.sleep(0.002)
        transport.close()
        raise
