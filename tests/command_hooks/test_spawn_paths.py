"""Both ways the runner starts a command hook give the same outcomes: the pidfd spawn watched by the event loop
(Linux 5.3+) and asyncio's own subprocess machinery (elsewhere, or where pidfd is not allowed). Real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hookloop import _spawn
from hookloop.command_hooks.runner import run_hook

from .conftest import FAST, WriteScript, command_hook, is_alive, live_group_members

pytestmark = pytest.mark.anyio

PAYLOAD = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


@pytest.fixture(params=["default", "asyncio"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``default``: the pidfd spawn where the system allows it; ``asyncio``: asyncio's machinery, as without."""
    if request.param == "asyncio":
        monkeypatch.setattr(_spawn, "_PIDFD", False)
    return str(request.param)


async def test_a_large_payload_is_written_whole_and_the_answer_read(
    spawn_path: str, project: Path, write_script: WriteScript, tmp_path: Path
) -> None:
    received = tmp_path / "stdin.json"
    script = write_script("echo-stdin", f'cat > "{received}"; echo done; echo note >&2; exit 3')
    payload = {**PAYLOAD, "big": "é" * 400_000}  # far more than a pipe holds: written as the hook reads
    outcome = await run_hook(command_hook(str(script)), payload, project_dir=project, options=FAST)
    assert outcome.ok
    assert outcome.exit_code == 3
    assert outcome.stdout == b"done\n"
    assert outcome.stderr == b"note\n"
    assert json.loads(received.read_bytes()) == payload


async def test_a_hook_that_does_not_read_its_input_is_not_waited_for(
    spawn_path: str, project: Path, write_script: WriteScript
) -> None:
    script = write_script("no-read", "echo ignored")
    outcome = await run_hook(command_hook(str(script)), b"{" + b" " * (4 << 20) + b"}", project_dir=project)
    assert outcome.ok
    assert outcome.stdout == b"ignored\n"


async def test_a_timeout_kills_the_whole_group_and_leaves_no_zombie(
    spawn_path: str, project: Path, write_script: WriteScript, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    script = write_script("hang", f'sleep 1000 & echo $! > "{pids}"; exec sleep 1000')
    outcome = await run_hook(command_hook(str(script), timeout=0.5), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == "timeout"
    assert outcome.pid is not None
    assert live_group_members(outcome.pid) == []
    assert not is_alive(int(pids.read_text()))
    with pytest.raises(ChildProcessError):  # the leader was reaped
        os.waitpid(outcome.pid, os.WNOHANG)  # noqa: ASYNC222 -- WNOHANG: never blocks


async def test_a_signal_and_a_missing_program_are_told_apart(spawn_path: str, project: Path) -> None:
    killed = await run_hook(command_hook("kill -SEGV $$"), PAYLOAD, project_dir=project, options=FAST)
    assert killed.error_kind == "crashed"
    assert killed.signal == 11
    missing = await run_hook(command_hook("/no/such/program", args=()), PAYLOAD, project_dir=project, options=FAST)
    assert missing.error_kind == "not_found"
    gone = await run_hook(command_hook("true"), PAYLOAD, project_dir=project / "gone", options=FAST)
    assert gone.error_kind == "spawn_failed"
    assert "no directory" in (gone.error or "")
