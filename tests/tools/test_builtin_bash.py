"""Bash with real processes: cwd persistence, environment, exit codes, output cap, and no orphans after a
timeout, a cancellation or a command that leaves background children behind."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from builtin_helpers import CTX, assert_gone, call, fails, ok

from hookloop.tools.builtin import BashTool, Workspace

pytestmark = pytest.mark.anyio


def pids(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"pid=(\d+)", text)]


async def test_output_interleaves_stdout_and_stderr(ws: Workspace) -> None:
    content = await ok(BashTool(ws), {"command": "echo out; echo err >&2; echo out2", "description": "three lines"})
    assert content == "out\nerr\nout2"


async def test_empty_output_says_so(ws: Workspace) -> None:
    assert await ok(BashTool(ws), {"command": "true"}) == "(no output)"


async def test_stdin_is_dev_null(ws: Workspace) -> None:
    assert await ok(BashTool(ws), {"command": "cat; echo done"}) == "done"


async def test_non_zero_exit_is_an_error_result_with_the_code(ws: Workspace) -> None:
    content, is_error = await call(BashTool(ws), {"command": "echo partial; exit 7"})
    assert is_error
    assert content == "partial\nExit code 7"


async def test_the_working_directory_persists_between_calls(ws: Workspace, root: Path) -> None:
    bash = BashTool(ws)
    await ok(bash, {"command": "mkdir -p a/b && cd a/b"})
    assert bash.cwd == root / "a" / "b"
    assert await ok(bash, {"command": "pwd"}) == str(root / "a" / "b")
    assert (await call(bash, {"command": "cd .. && false"}))[1]  # an error result; the cd still counts
    assert await ok(bash, {"command": "pwd"}) == str(root / "a")
    await fails(bash, {"command": "cd /; exit 3"})
    assert await ok(bash, {"command": "pwd"}) == str(root)


async def test_a_cd_outside_the_workspace_is_reset_to_the_root_with_a_note(ws: Workspace, outside: Path) -> None:
    bash = BashTool(ws)
    content = await ok(bash, {"command": f"cd {outside} && echo moved"})
    assert (
        content == f"moved\nShell cwd was reset to {ws.root}: the command left it at {outside}, outside the workspace."
    )
    assert bash.cwd == ws.root


async def test_a_deleted_working_directory_falls_back_to_the_root(ws: Workspace, root: Path) -> None:
    bash = BashTool(ws)
    await ok(bash, {"command": "mkdir gone && cd gone"})
    (root / "gone").rmdir()
    content = await ok(bash, {"command": "pwd"})
    assert (
        content == f"Note: the working directory {root / 'gone'} no longer exists; the command ran in {root}.\n{root}"
    )


async def test_environment_extra_vars_apply_and_exports_do_not_persist(ws: Workspace) -> None:
    bash = BashTool(ws, env={"HOOKLOOP_TEST_TOKEN": "42"})
    assert await ok(bash, {"command": "echo $HOOKLOOP_TEST_TOKEN; export LEFT=over"}) == "42"
    assert await ok(bash, {"command": 'echo "${LEFT-unset}"'}) == "unset"
    assert await ok(bash, {"command": 'echo "$PATH"'}) == os.environ["PATH"]


async def test_output_is_capped_keeping_head_and_tail(ws: Workspace) -> None:
    content = await ok(BashTool(ws, output_cap=1000), {"command": "seq 1 100000"})
    head, _, tail = content.partition("\n\n[… ")
    assert head.startswith("1\n2\n3\n")
    assert tail.endswith("99999\n100000")
    assert "omitted …]" in tail
    assert len(content) < 1100


async def test_default_cap_is_30000_characters(ws: Workspace) -> None:
    content = await ok(BashTool(ws), {"command": "seq 1 100000"})  # 588 895 characters
    assert "[… 558895 characters omitted …]" in content
    assert len(content) < 30_100


async def test_timeout_kills_the_whole_process_group(ws: Workspace) -> None:
    command = "echo pid=$$; sleep 1000 & echo pid=$!; (sleep 1000; echo never) & echo pid=$!; wait"
    message = await fails(BashTool(ws), {"command": command, "timeout": 300})
    assert message.endswith("Command timed out after 300 ms; it and every process it started were killed.")
    found = pids(message)
    assert len(found) == 3
    for pid in found:
        assert_gone(pid)


async def test_a_group_ignoring_sigterm_is_killed_after_the_grace(ws: Workspace) -> None:
    # The shell and its child both ignore SIGTERM (an ignored signal stays ignored across fork and exec).
    command = "trap '' TERM; echo pid=$$; sleep 1000 & echo pid=$!; wait"
    message = await fails(BashTool(ws, grace=0.1), {"command": command, "timeout": 200})
    found = pids(message)
    assert len(found) == 2
    for pid in found:
        assert_gone(pid)


async def test_background_children_do_not_outlive_the_call(ws: Workspace) -> None:
    # The background sleep keeps the output pipe open: the call must not wait for it (nor leave it running).
    content = await ok(BashTool(ws), {"command": "sleep 1000 & echo pid=$!"})
    [pid] = pids(content)
    assert_gone(pid)


async def test_run_in_background_is_accepted_and_runs_in_the_foreground(ws: Workspace) -> None:
    content = await ok(BashTool(ws), {"command": "echo hi", "run_in_background": True})
    assert content.startswith("Note: run_in_background is not supported here")
    assert content.endswith("\nhi")


async def test_cancelling_execute_kills_the_group_and_propagates(ws: Workspace, root: Path) -> None:
    fifo = root / "ready"
    os.mkfifo(fifo)
    bash = BashTool(ws)
    command = "sleep 1000 & echo $$ $! > ready; wait"
    task = asyncio.create_task(bash.execute(bash.validate({"command": command}), CTX))

    def read_ready() -> str:
        with open(fifo) as f:  # blocks until the command has written its pids
            return f.read()

    try:
        leader, grandchild = (int(p) for p in (await asyncio.wait_for(asyncio.to_thread(read_ready), 10)).split())
    finally:
        if not task.done():
            task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_gone(leader)
    assert_gone(grandchild)
    assert await ok(bash, {"command": "echo still usable"}) == "still usable"


async def test_the_shell_runs_in_its_own_process_group(ws: Workspace) -> None:
    # field 5 of /proc/PID/stat is the process group (no dependency on procps' ps)
    content = await ok(BashTool(ws), {"command": "cut -d' ' -f5 /proc/$$/stat; echo $$"})
    pgid, pid = content.split()
    assert pgid == pid
    assert int(pgid) != os.getpgrp()
