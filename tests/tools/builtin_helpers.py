"""Helpers for the built-in tool tests: call a tool like the Worker does, and check that a process is gone."""

from __future__ import annotations

import os
import select
from collections.abc import Mapping
from pathlib import Path

from hookloop.tools import Tool, ToolContext, ToolFailure, ToolInputError, ToolOutput

CTX = ToolContext(run_id="run_1", session_id="session_1", call_id="call_1", tool_name="test", turn=1)


async def call(tool: Tool, arguments: Mapping[str, object], ctx: ToolContext = CTX) -> tuple[str, bool]:
    """Validate and execute like the Worker does: (content, is_error). Input errors and ToolFailure become error
    results; anything else propagates (a bug)."""
    try:
        validated = tool.validate(arguments)
        value = await tool.execute(validated, ctx)
    except (ToolInputError, ToolFailure) as exc:
        return str(exc), True
    if isinstance(value, ToolOutput):
        return value.content, value.is_error
    assert isinstance(value, str), value
    return value, False


async def ok(tool: Tool, arguments: Mapping[str, object]) -> str:
    content, is_error = await call(tool, arguments)
    assert not is_error, content
    return content


async def fails(tool: Tool, arguments: Mapping[str, object]) -> str:
    content, is_error = await call(tool, arguments)
    assert is_error, content
    return content


def assert_gone(pid: int) -> None:
    """The process has exited. Waits on a pidfd (an event, not a sleep) at most 5 s, and accepts a zombie:
    an orphan's new parent may not reap it (here PID 1 does not)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], 5)
        assert ready, f"process {pid} is still running"
    finally:
        os.close(fd)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    assert _state(pid) in {"Z", "X", None}, f"process {pid} is in state {_state(pid)}"


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]
