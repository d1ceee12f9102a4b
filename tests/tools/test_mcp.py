"""MCP tool servers (SPEC §1) against a real stdio MCP server subprocess built with the SDK (no mocks)."""

from __future__ import annotations

import base64
import os
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import types as mcp_types

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Continue, PreToolCallInfo
from hookloop.permissions import PermissionPolicy
from hookloop.tools import Tool, ToolFailure, ToolInputError, ToolServer
from hookloop.tools._mcp_content import summarise as _summarise
from hookloop.tools.mcp import MCPServer, MCPServerError, MCPTool, mcp_tool_name

pytestmark = pytest.mark.anyio

SLOW_START = 40.0  # seconds for a Python MCP server to start on a loaded CI machine (the default is 5)

# The server records its pid and every tool call it receives in the directory given as argv[1].
SERVER = textwrap.dedent(
    '''
    import os
    import sys
    from pathlib import Path

    import anyio

    try:
        from mcp.server.mcpserver import MCPServer as FastMCP  # mcp 2.x
    except ImportError:
        from mcp.server.fastmcp import FastMCP  # mcp 1.x
    from mcp.types import ToolAnnotations

    state = Path(sys.argv[1])
    (state / "pid").write_text(str(os.getpid()))
    app = FastMCP("demo", log_level="CRITICAL")


    def record(name: str) -> None:
        with open(state / "calls", "a") as f:
            f.write(name + "\\n")


    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        record("add")
        return a + b


    @app.tool()
    def fail() -> str:
        """Always fails."""
        record("fail")
        raise RuntimeError("the demo tool failed")


    @app.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Echo the text back."""
        record("echo")
        return text


    @app.tool()
    async def hang() -> str:
        """Never answers."""
        record("hang")
        await anyio.Event().wait()
        return "unreachable"


    app.run()
    '''
)


@pytest.fixture
def demo(tmp_path: Path) -> tuple[str, list[str], Path]:
    script = tmp_path / "demo_server.py"
    script.write_text(SERVER)
    state = tmp_path / "state"
    state.mkdir()
    return sys.executable, [str(script), str(state)], state


def calls(state: Path) -> list[str]:
    path = state / "calls"
    return path.read_text().split() if path.exists() else []


def results(worker: Worker) -> list[ToolResult]:
    return [i for i in worker.history if isinstance(i, ToolResult)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_tools_are_listed_with_claude_code_names_schemas_and_their_annotations_kept_as_claims(
    demo: tuple[str, list[str], Path],
) -> None:
    command, args, _ = demo
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        assert isinstance(server, ToolServer)
        assert server.name == "demo"
        tools = {t.meta.name: t for t in server.list_tools()}
        assert set(tools) == {"mcp__demo__add", "mcp__demo__fail", "mcp__demo__echo", "mcp__demo__hang"}
        add = tools["mcp__demo__add"]
        assert isinstance(add, Tool)
        assert add.meta.description == "Add two integers."
        assert add.meta.server == "mcp__demo"
        assert add.meta.input_schema["type"] == "object"
        assert set(add.meta.input_schema["required"]) == {"a", "b"}  # type: ignore[arg-type]
        assert add.meta.input_schema["properties"]["a"]["type"] == "integer"  # type: ignore[index]
        with pytest.raises(TypeError):
            add.meta.input_schema["type"] = "array"  # frozen
        # The server's readOnlyHint is a claim: kept, used for ordering, never for permissions (untrusted).
        echo = tools["mcp__demo__echo"]
        assert isinstance(echo, MCPTool)
        assert echo.annotations["readOnlyHint"] is True
        assert (echo.meta.read_only, echo.meta.sequential) == (False, False)
        assert (add.meta.read_only, add.meta.sequential) == (False, True)


async def test_a_worker_run_calls_the_mcp_tool_and_records_the_result(demo: tuple[str, list[str], Path]) -> None:
    command, args, state = demo
    client = ScriptedClient([[ToolUse("mcp__demo__add", {"a": 2, "b": 3}, call_id="c1")], [Text("five")]])
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server])
        seen: list[str] = []

        def pre(info: PreToolCallInfo) -> Continue:
            seen.append(info.tool_name)
            return Continue()

        worker.add_pre_tool_call_hook(pre)
        outcome = await worker.run("add 2 and 3")
    assert isinstance(outcome, Finished)
    [result] = results(worker)
    assert (result.call_id, result.name, result.content, result.is_error) == ("c1", "mcp__demo__add", "5", False)
    assert seen == ["mcp__demo__add"]
    assert calls(state) == ["add"]


async def test_a_failing_tool_and_invalid_arguments_give_error_results(demo: tuple[str, list[str], Path]) -> None:
    command, args, state = demo
    client = ScriptedClient(
        [
            [ToolUse("mcp__demo__fail", {}, call_id="f"), ToolUse("mcp__demo__add", {"a": 2}, call_id="m")],
            [Text("done")],
        ]
    )
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server])
        await worker.run("go")
    failed, missing = results(worker)
    assert failed.is_error
    assert "fail" in failed.content
    assert missing.is_error
    assert "field 'b'" in missing.content
    assert "mcp__demo__add" in missing.content
    assert calls(state) == ["fail"]  # the invalid call never reached the server


async def test_validation_names_wrong_types_and_passes_plain_json(demo: tuple[str, list[str], Path]) -> None:
    command, args, _ = demo
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        add = {t.meta.name: t for t in server.list_tools()}["mcp__demo__add"]
        with pytest.raises(ToolInputError, match=r"field 'a': 'two' is not of type 'integer'"):
            add.validate({"a": "two", "b": 3})
        with pytest.raises(ToolInputError, match=r"field 'a': required field is missing; field 'b'"):
            add.validate({})
        assert add.validate({"a": 1, "b": 2}) == {"a": 1, "b": 2}


async def test_a_deny_rule_on_the_mcp_tool_name_blocks_the_call(demo: tuple[str, list[str], Path]) -> None:
    command, args, state = demo
    client = ScriptedClient(
        [
            [ToolUse("mcp__demo__fail", {}, call_id="f"), ToolUse("mcp__demo__echo", {"text": "hi"}, call_id="e")],
            [Text("ok")],
        ]
    )
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        worker = Worker(
            client, tools=[server], permissions=PermissionPolicy(deny=["mcp__demo__fail"], allow=["mcp__demo__echo"])
        )
        await worker.run("go")
    denied, echoed = results(worker)
    assert denied.is_error
    assert "permission denied" in denied.content
    assert "mcp__demo__fail" in denied.content
    assert (echoed.content, echoed.is_error) == ("hi", False)
    assert calls(state) == ["echo"]


async def test_cancellation_propagates_and_the_server_keeps_working(demo: tuple[str, list[str], Path]) -> None:
    command, args, _ = demo
    async with MCPServer.stdio("demo", command, args, init_timeout=SLOW_START) as server:
        with anyio.move_on_after(0.5) as scope:
            await server.call_tool("hang", {})
        assert scope.cancelled_caught
        assert await server.call_tool("echo", {"text": "still here"}) == "still here"


async def test_closing_stops_the_server_process_and_later_calls_fail_cleanly(
    demo: tuple[str, list[str], Path],
) -> None:
    command, args, state = demo
    server = await MCPServer.open_stdio("demo", command, args, init_timeout=SLOW_START)
    pid = int((state / "pid").read_text())
    assert alive(pid)
    echo = {t.meta.name: t for t in server.list_tools()}["mcp__demo__echo"]
    await server.aclose()
    assert not alive(pid)
    await server.aclose()  # idempotent
    with pytest.raises(ToolFailure, match=r"MCP server 'demo', tool 'echo': the server is closed"):
        await server.call_tool("echo", {"text": "x"})
    assert echo.meta.name == "mcp__demo__echo"


async def test_a_command_that_is_no_mcp_server_raises_a_clear_error() -> None:
    with anyio.fail_after(20), pytest.raises(MCPServerError, match=r"MCP server 'broken'"):
        await MCPServer.open_stdio("broken", sys.executable, ["-c", "pass"])


async def test_server_names_with_double_underscores_are_rejected() -> None:
    with pytest.raises(ValueError, match="__"):
        await MCPServer.open_stdio("a__b", sys.executable)


def test_names_and_non_text_content_summaries() -> None:
    assert mcp_tool_name("my server", "get.file") == "mcp__my_server__get_file"
    png = base64.b64encode(b"\x89PNG0123456").decode()
    image = mcp_types.ImageContent(type="image", data=png, mimeType="image/png")
    assert _summarise(image) == "[image: image/png, 11 bytes]"
    assert _summarise(mcp_types.TextContent(type="text", text="hello")) == "hello"
