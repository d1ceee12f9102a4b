"""MCP lifecycle against a misbehaving real server process: initialize timeout, call timeout, a crash and the
restart after it, and a shutdown that leaves nothing running (issue 11, item 10)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import anyio
import pytest
from mcp_helpers import SLOW_START, Misbehaving, alive, misbehaving, results

from hookloop import ScriptedClient, Text, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.tools import ToolFailure
from hookloop.tools.mcp import DEFAULT_INIT_TIMEOUT, MCPServer, MCPServerError, default_init_timeout

pytestmark = pytest.mark.anyio


@pytest.fixture
def mb(tmp_path: Path) -> Misbehaving:
    return misbehaving(tmp_path)


async def test_a_server_that_never_answers_initialize_fails_after_init_timeout_and_is_stopped(
    mb: Misbehaving,
) -> None:
    started = time.monotonic()
    with anyio.fail_after(30), pytest.raises(MCPServerError) as caught:
        await MCPServer.open_stdio("silent", mb.command, mb.args("silent"), init_timeout=0.5)
    assert time.monotonic() - started < 15
    message = str(caught.value)
    assert "MCP server 'silent'" in message
    assert "no answer to initialize within 0.5 seconds (init_timeout)" in message
    assert mb.running() == []


async def test_the_default_init_timeout_is_thirty_seconds_or_claude_codes_mcp_timeout(
    mb: Misbehaving, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_TIMEOUT", raising=False)
    assert default_init_timeout() == DEFAULT_INIT_TIMEOUT == 30.0
    monkeypatch.setenv("MCP_TIMEOUT", "nonsense")
    assert default_init_timeout() == 30.0
    monkeypatch.setenv("MCP_TIMEOUT", "1500")  # milliseconds, as Claude Code reads it
    started = time.monotonic()
    with anyio.fail_after(40), pytest.raises(MCPServerError, match=r"within 1\.5 seconds"):
        await MCPServer.open_stdio("silent", mb.command, mb.args("silent"))
    assert time.monotonic() - started >= 1.5


async def test_a_server_dying_during_initialize_is_reported_with_its_status_and_stderr(mb: Misbehaving) -> None:
    with anyio.fail_after(30), pytest.raises(MCPServerError) as caught:
        await MCPServer.open_stdio("dies", mb.command, mb.args("die-on-init"), init_timeout=SLOW_START)
    message = str(caught.value)
    assert "exited with status 7" in message
    assert "cannot initialize: no configuration" in message
    assert mb.running() == []


async def test_a_call_without_answer_fails_after_call_timeout_and_the_server_keeps_working(
    mb: Misbehaving,
) -> None:
    async with MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START, call_timeout=0.5) as server:
        with anyio.fail_after(20), pytest.raises(ToolFailure) as caught:
            await server.call_tool("hang", {})
        assert str(caught.value) == "MCP server 'mb', tool 'hang': no answer within 0.5 seconds (call_timeout)"
        assert await server.call_tool("look", {}) == "looked"


async def test_a_crash_is_an_error_result_naming_the_server_status_and_stderr_and_the_next_call_restarts(
    mb: Misbehaving,
) -> None:
    client = ScriptedClient(
        [
            [ToolUse("mcp__mb__crash", {}, call_id="c1")],
            [ToolUse("mcp__mb__look", {}, call_id="c2")],
            [Text("done")],
        ]
    )
    async with MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START) as server:
        first_pid = server.pid
        assert first_pid == mb.pid()
        first_child = mb.pid("child")
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("go")
        crashed, looked = results(worker)
        assert crashed.is_error
        assert "MCP server 'mb' exited with status 3" in crashed.content
        assert "boom: the crash tool was called" in crashed.content
        assert "the next call starts it again" in crashed.content
        assert (looked.content, looked.is_error) == ("looked", False)
        assert server.pid is not None
        assert server.pid != first_pid
        assert not alive(first_pid)
        assert not alive(first_child)  # the crashed server's child went with it


async def test_lines_that_are_not_json_rpc_are_dropped_and_the_session_goes_on(mb: Misbehaving) -> None:
    async with MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START, call_timeout=20) as server:
        assert await server.call_tool("garbage", {}) == "said garbage"
        assert await server.call_tool("look", {}) == "looked"


async def test_closing_stops_the_server_and_every_process_it_started(mb: Misbehaving) -> None:
    server = await MCPServer.open_stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START)
    pid, child = mb.pid(), mb.pid("child")
    assert alive(pid)
    assert alive(child)
    await server.aclose()
    assert not alive(pid)
    assert not alive(child)
    assert mb.running() == []
    with pytest.raises(ToolFailure, match="the server is closed"):
        await server.call_tool("look", {})


async def test_open_and_close_from_different_tasks(mb: Misbehaving) -> None:
    opened: list[MCPServer] = []

    async def opener() -> None:
        opened.append(await MCPServer.open_stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START))

    await asyncio.get_running_loop().create_task(opener())
    [server] = opened
    assert await server.call_tool("look", {}) == "looked"
    pid = mb.pid()
    await asyncio.get_running_loop().create_task(server.aclose())
    assert not alive(pid)


async def test_cancelling_the_opener_stops_the_process(mb: Misbehaving) -> None:
    with anyio.move_on_after(1.0) as scope:
        await MCPServer.open_stdio("silent", mb.command, mb.args("silent"), init_timeout=SLOW_START)
    assert scope.cancelled_caught
    assert mb.running() == []


async def test_bad_timeouts_are_rejected_with_the_option_named(mb: Misbehaving) -> None:
    with pytest.raises(ValueError, match="init_timeout must be a positive number of seconds, got 0"):
        await MCPServer.open_stdio("mb", mb.command, mb.args(), init_timeout=0)
    with pytest.raises(ValueError, match="call_timeout must be a positive number of seconds, got -1"):
        await MCPServer.open_stdio("mb", mb.command, mb.args(), call_timeout=-1)


async def test_any_sdk_transport_gets_the_same_lifecycle_through_context_transport(mb: Misbehaving) -> None:
    """The seam other transports (HTTP, SSE) use: the SDK's own stdio client under ContextTransport."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from hookloop.tools._mcp_conn import ContextTransport

    params = StdioServerParameters(command=mb.command, args=mb.args("childless"))
    server = MCPServer(
        "mb",
        lambda: ContextTransport(lambda: stdio_client(params), where="sdk stdio"),
        init_timeout=SLOW_START,
    )
    await server._start()
    try:
        assert server.pid is None  # no local process known
        with anyio.fail_after(30), pytest.raises(ToolFailure) as caught:
            await server.call_tool("crash", {})
        assert "MCP server 'mb' closed the connection (sdk stdio)" in str(caught.value)
        with anyio.fail_after(30):
            assert await server.call_tool("look", {}) == "looked"  # started again
    finally:
        await server.aclose()
