"""Nothing sandboxed outlives its run: on cancel, on the command's end (setsid'd children too), and when the
process that started it is SIGKILLed (bwrap's --die-with-parent)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_helpers import bash, bash_tool, make_sandbox

from hookloop import Cancelled, ScriptedClient, Text, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.sandbox import BubblewrapBackend
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio

SRC = str(Path(__file__).resolve().parents[2] / "src")


def marker() -> str:
    """A sleep duration no other process uses: it names the processes of one test in /proc."""
    return f"{300 + random.randrange(10_000)}.{random.randrange(10**6):06d}"


def holders(mark: str, *, sleeps_only: bool = False) -> list[int]:
    """Live processes whose command line contains ``mark`` (only ``sleep MARK`` itself: ``sleeps_only``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        wanted = cmdline == f"sleep\0{mark}\0".encode() if sleeps_only else mark.encode() in cmdline
        if wanted and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


async def wait_for(predicate: object, *, seconds: float = 20.0) -> bool:
    assert callable(predicate)
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        if predicate():
            return True
        await asyncio.sleep(0.02)  # polling /proc: the processes are not ours to wait for
    return bool(predicate())


async def test_cancelling_a_worker_kills_the_sandboxed_command(ws: Path, backend: BubblewrapBackend) -> None:
    mark = marker()
    client = ScriptedClient([[ToolUse("Bash", {"command": f"sleep {mark}"})], [Text("done")]])
    sandbox = make_sandbox(ws, backend)
    worker = Worker(
        client,
        tools=builtin_tools(Workspace(ws), sandbox=sandbox),
        workspace=ws,
        permissions=PermissionPolicy(allow=["Bash"], workspace=ws),
    )
    task = asyncio.ensure_future(worker.run("sleep"))
    assert await wait_for(lambda: holders(mark, sleeps_only=True)), "the sandboxed sleep never started"
    worker.cancel()
    with pytest.raises(Cancelled):
        await task
    assert await wait_for(lambda: not holders(mark)), f"left running: {holders(mark)}"
    worker.close()


async def test_a_setsid_child_does_not_outlive_the_command(ws: Path, backend: BubblewrapBackend) -> None:
    mark = marker()
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, is_error = await bash(tool, f"setsid sleep {mark} > /dev/null 2>&1 < /dev/null & echo started")
    assert (content, is_error) == ("started", False)
    assert await wait_for(lambda: not holders(mark)), f"left running: {holders(mark)}"


async def test_sigkill_of_the_process_that_started_the_sandbox_takes_the_sandbox_along(
    ws: Path, backend: BubblewrapBackend
) -> None:
    mark = marker()
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {SRC!r})
        from hookloop.permissions import PermissionPolicy
        from hookloop.sandbox import Sandbox, SandboxSettings
        from hookloop.tools import ToolContext
        from hookloop.tools.builtin import BashTool, Workspace

        ws = {str(ws)!r}
        sandbox = Sandbox(SandboxSettings(enabled=True), workspace=ws, policy=PermissionPolicy(workspace=ws))
        tool = BashTool(Workspace(ws), sandbox=sandbox)
        ctx = ToolContext(run_id="r", session_id="s", call_id="c", tool_name="Bash", turn=1)
        asyncio.run(tool.execute({{"command": "setsid sleep {mark} & sleep {mark}"}}, ctx))
        """
    )
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", script, start_new_session=True)
    try:
        assert await wait_for(lambda: len(holders(mark, sleeps_only=True)) == 2), "the sandboxed sleeps never started"
        os.kill(child.pid, signal.SIGKILL)
        await child.wait()
        assert await wait_for(lambda: not holders(mark)), f"left running: {holders(mark)}"
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
async def test_the_sandbox_dies_with_hookloop_run(ws: Path, base: Path, stop: signal.Signals) -> None:
    """`hookloop run --sandbox`: SIGKILL (nothing of the CLI's own runs) and SIGTERM (the Ctrl-C path) both take
    the sandboxed command and its setsid'd child along."""
    mark = marker()
    turns = [[{"tool": "Bash", "arguments": {"command": f"setsid sleep {mark} & sleep {mark}"}}], [{"text": "x"}]]
    script = base / "model.json"
    script.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    home = base / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "HOOKLOOP_HOME": str(base / "hl"), "PYTHONPATH": SRC}
    argv = ["-c", "from hookloop.cli import main; main()", "run", "go", "--model", f"scripted:{script}"]
    cli = await asyncio.create_subprocess_exec(
        sys.executable, *argv, "--sandbox", "--yes", "--output-format", "json",
        cwd=ws, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert await wait_for(lambda: len(holders(mark, sleeps_only=True)) == 2), "the sandboxed sleeps never started"
        cli.send_signal(stop)
        assert await cli.wait() == (-signal.SIGKILL if stop == signal.SIGKILL else 143)
        assert await wait_for(lambda: not holders(mark)), f"left running: {holders(mark)}"
    finally:
        if cli.returncode is None:
            cli.kill()
            await cli.wait()
