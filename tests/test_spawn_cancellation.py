"""Regression: a task cancelled while its child is being spawned must not orphan what the child started.

asyncio's subprocess_exec returns only once the pipes are connected; the child already runs by then. Before
spawn_group, a cancellation in that window killed the leader alone and left `sleep 1000 &` running.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from hookloop import ToolContext
from hookloop._spawn import spawn_group
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def wait_gone(pid: int) -> bool:
    for _ in range(200):  # SIGKILL is asynchronous: give the kernel a moment
        if not running(pid):
            return True
        await asyncio.sleep(0.01)
    return False


async def test_cancelling_during_the_spawn_kills_the_whole_group(tmp_path: Path) -> None:
    for attempt in range(20):
        pidfile = tmp_path / f"child-{attempt}.pid"
        script = f"sleep 1000 & echo $! > {pidfile}; wait"
        task = asyncio.create_task(
            spawn_group(asyncio.SubprocessProtocol, "/bin/sh", "-c", script, stdin=None, stdout=None, stderr=None)
        )
        await asyncio.sleep(0)  # let the spawn begin, then cancel it in the middle
        task.cancel()
        try:
            transport, _ = await task
        except asyncio.CancelledError:
            pass
        else:  # the spawn had already finished: not the case under test; clean up and try again
            os.killpg(transport.get_pid(), 9)
            for _ in range(1000):
                if transport.get_returncode() is not None:
                    break
                await asyncio.sleep(0.002)
            transport.close()
            continue
        if pidfile.exists() and pidfile.read_text().strip():
            assert await wait_gone(int(pidfile.read_text()))


async def test_cancelling_a_bash_call_right_after_it_started_leaves_no_orphan(tmp_path: Path) -> None:
    fifo = tmp_path / "started"
    bash = builtin_tools(Workspace(tmp_path))[0]
    ctx = ToolContext(run_id="r", session_id="s", call_id="c", tool_name="Bash", turn=1)
    for _ in range(6):
        os.mkfifo(fifo)
        arguments = bash.validate({"command": f"sleep 1000 & echo $! > {fifo}; wait"})
        task = asyncio.create_task(bash.execute(arguments, ctx))
        pid = int((await asyncio.to_thread(fifo.read_text)).strip())  # the command is running
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await wait_gone(pid)
        fifo.unlink()
