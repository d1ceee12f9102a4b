"""Processes that leave their call's process group (setsid, setpgid, process_group=0) die when the call ends:
the Bash tool and command hooks, on every way a call ends (issue 10, item 13). Linux: /proc and the subreaper.

Real shells and real escapees; each test learns the escapee's pid from the command's own output and then
checks /proc — the process must be gone entirely (killed *and* reaped: no zombie left behind either).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookloop import ToolContext, ToolFailure, ToolOutput, _reaper
from hookloop.command_hooks.model import CommandHandler, ConfiguredHook, HookSource
from hookloop.command_hooks.runner import RunnerOptions, run_hook
from hookloop.tools.builtin import BashTool, Workspace

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc and PR_SET_CHILD_SUBREAPER"),
]

PY = sys.executable
# Each escapee writes its pid to {ready} once it has left the group; the command then prints that pid.
ESCAPES = {
    "setsid": "setsid sh -c 'echo $$ > {ready}; exec sleep 300' &",
    "setsid-detached-from-the-pipes": "setsid sh -c 'echo $$ > {ready}; exec sleep 300' >/dev/null 2>&1 &",
    "setsid-sh-double-fork": "(setsid sh -c 'sleep 300 & echo $! > {ready}')",
    "setpgid": f'{PY} -c \'import os, time; os.setpgid(0, 0); open("{{ready}}", "w").write(str(os.getpid()));'
    " time.sleep(300)' &",
    "process_group=0": f'{PY} -c \'import subprocess; p = subprocess.Popen(["sleep", "300"], process_group=0);'
    ' open("{ready}", "w").write(str(p.pid))\'',
}
WAIT_AND_PRINT = "\nwhile [ ! -s {ready} ]; do sleep 0.01; done; cat {ready}; echo"


def escape(name: str, folder: Path) -> str:
    ready = folder / f"ready-{name}"
    return (ESCAPES[name] + WAIT_AND_PRINT).format(ready=ready)


CTX = ToolContext(run_id="r", session_id="s", call_id="c", tool_name="Bash", turn=1)


def state(pid: int) -> str | None:
    """The process state letter, None once the pid is gone from /proc."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
    except (FileNotFoundError, ProcessLookupError):
        return None


async def wait_gone(pid: int) -> bool:
    """True once ``pid`` is gone entirely — neither running nor a zombie (bounded: up to 5 s)."""
    for _ in range(500):
        if state(pid) is None:
            return True
        await asyncio.sleep(0.01)
    return False


def pids_in(text: str) -> list[int]:
    assert "Exit code" not in text, text
    return [int(word) for word in text.split() if word.isdigit()]


@pytest.fixture
def bash(tmp_path: Path) -> BashTool:
    return BashTool(Workspace(tmp_path), grace=0.2)


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process of our own that left nothing: no hookloop token. It must survive every sweep."""
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("name", list(ESCAPES))
async def test_an_escapee_of_a_bash_call_dies_with_the_call(
    bash: BashTool, bystander: subprocess.Popen[bytes], tmp_path: Path, name: str
) -> None:
    result = await bash.execute(bash.validate({"command": escape(name, tmp_path)}), CTX)
    assert isinstance(result, ToolOutput)
    (pid,) = pids_in(result.content)
    assert await wait_gone(pid), f"{name}: process {pid} outlived the Bash call ({state(pid)})"
    assert bystander.poll() is None  # no token: never touched


async def test_an_escapee_the_command_waits_for_dies_when_the_call_times_out(bash: BashTool, tmp_path: Path) -> None:
    command = escape("setpgid", tmp_path) + "\nwait"
    with pytest.raises(ToolFailure) as failure:  # `wait` waits for it: the call times out, then sweeps
        await bash.execute(bash.validate({"command": command, "timeout": 1000}), CTX)
    pid = int(str(failure.value).split()[0])
    assert await wait_gone(pid), f"process {pid} survived ({state(pid)})"


async def test_an_escapee_dies_when_the_bash_call_is_cancelled(bash: BashTool, tmp_path: Path) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    command = f"setsid sh -c 'echo $$ > {fifo}; exec sleep 300' >/dev/null 2>&1 & sleep 300"
    task = asyncio.create_task(bash.execute(bash.validate({"command": command}), CTX))
    pid = int((await asyncio.to_thread(fifo.read_text)).strip())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(pid), f"process {pid} survived ({state(pid)})"


async def test_one_calls_end_leaves_a_concurrent_calls_escapee_alone(bash: BashTool, tmp_path: Path) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    os.mkfifo(started)
    os.mkfifo(release)
    other = BashTool(Workspace(tmp_path), grace=0.2)
    long_call = asyncio.create_task(
        other.execute(
            other.validate({"command": f"setsid sh -c 'echo $$ > {started}; exec sleep 300' & read x < {release}"}),
            CTX,
        )
    )
    pid = int((await asyncio.to_thread(started.read_text)).strip())
    short = await bash.execute(bash.validate({"command": escape("setsid", tmp_path)}), CTX)
    assert isinstance(short, ToolOutput)
    assert await wait_gone(pids_in(short.content)[0])
    assert state(pid) not in (None, "Z")  # the other call still runs: its escapee is its own business
    await asyncio.to_thread(release.write_text, "go\n")
    await long_call
    assert await wait_gone(pid), f"process {pid} survived ({state(pid)})"


async def test_a_bash_call_with_an_escapee_holding_the_pipe_ends_promptly(bash: BashTool, tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await bash.execute(bash.validate({"command": escape("setsid", tmp_path)}), CTX)
    assert isinstance(result, ToolOutput)
    assert loop.time() - started < 1.5  # the escapee is killed, not waited for (the drain timeout is 2 s)
    assert "output incomplete" not in result.content


# --- command hooks -------------------------------------------------------------------------------------------

FAST = RunnerOptions(kill_grace=0.2, drain_window=0.2)


def hook(command: str) -> ConfiguredHook:
    return ConfiguredHook(
        event="PreToolUse",
        matcher=None,
        handler=CommandHandler(command=command, timeout=20),
        source=HookSource(kind="hookloop-user", path="/test/settings.json"),
    )


@pytest.mark.parametrize("name", list(ESCAPES))
async def test_an_escapee_of_a_command_hook_dies_with_the_hook(
    tmp_path: Path, bystander: subprocess.Popen[bytes], name: str
) -> None:
    payload = {"hook_event_name": "PreToolUse"}
    outcome = await run_hook(hook(escape(name, tmp_path)), payload, project_dir=tmp_path, options=FAST)
    assert outcome.ok
    (pid,) = pids_in(outcome.stdout_text)
    assert await wait_gone(pid), f"{name}: process {pid} outlived the hook ({state(pid)})"
    assert bystander.poll() is None


async def test_an_escapee_dies_when_the_hook_times_out(tmp_path: Path) -> None:
    command = escape("setsid-detached-from-the-pipes", tmp_path) + "\nsleep 300"
    timed = ConfiguredHook(
        event="PreToolUse",
        matcher=None,
        handler=CommandHandler(command=command, timeout=0.3),
        source=HookSource(kind="hookloop-user", path="/test/settings.json"),
    )
    outcome = await run_hook(timed, {"hook_event_name": "PreToolUse"}, project_dir=tmp_path, options=FAST)
    assert outcome.error_kind == "timeout"
    (pid,) = pids_in(outcome.stdout_text)
    assert await wait_gone(pid), f"process {pid} survived ({state(pid)})"


async def test_children_carry_the_token_and_this_process_is_a_subreaper(bash: BashTool) -> None:
    result = await bash.execute(bash.validate({"command": f'echo "${_reaper.ENV_VAR}"'}), CTX)
    assert isinstance(result, ToolOutput)
    assert result.content.startswith(f"{os.getpid()}.")
    assert _reaper.is_subreaper()
    assert os.environ.get(_reaper.ENV_VAR) is None  # our own environment is untouched
