"""MCP client capabilities against a real SDK server subprocess: roots, sampling through the Worker's own client
(its hooks see it), elicitation routed to the application (default: decline)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Cancel, Continue, PreLlmRequestInfo
from hookloop.hooks.events import PRE_LLM_REQUEST
from hookloop.items import Message
from hookloop.providers.scripted import ScriptedTurn, ScriptError
from hookloop.tools import ToolFailure
from hookloop.tools.mcp import (
    ElicitationRequest,
    ElicitationResponse,
    MCPClientOptions,
    MCPServer,
    elicitation_routing,
)

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("mcp_caps_server.py"))


def args(tmp_path: Path) -> list[str]:
    return [SERVER, "stdio", "", str(tmp_path)]


def results(worker: Worker) -> list[ToolResult]:
    return [i for i in worker.history if isinstance(i, ToolResult)]


async def call(server: MCPServer, tool: str, arguments: dict[str, object] | None = None) -> str:
    """The tool's text; a failure (an error result, or the server's error response) as ``error: …``."""
    try:
        output = await server.call_tool(tool, arguments or {})
    except ToolFailure as exc:
        return f"error: {exc}"
    return output if isinstance(output, str) else f"error: {output.content}"


# -- roots ---------------------------------------------------------------------------------------------------


async def test_roots_are_the_bound_workers_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path)) as server:
        assert json.loads(await call(server, "roots")) == []  # unbound, nothing configured: no roots
        server.bind(Worker(ScriptedClient([]), tools=[server], workspace=workspace))
        assert json.loads(await call(server, "roots")) == [workspace.resolve().as_uri()]


async def test_configured_roots_win_over_the_workspace(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b dir"
    a.mkdir()
    b.mkdir()
    options = MCPClientOptions(roots=[a, str(b)])
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        server.bind(Worker(ScriptedClient([]), tools=[server], workspace=tmp_path))
        assert json.loads(await call(server, "roots")) == [a.resolve().as_uri(), b.resolve().as_uri()]


def test_roots_must_be_a_sequence_of_paths() -> None:
    with pytest.raises(TypeError, match="a sequence of paths"):
        MCPClientOptions(roots="/tmp")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sampling_max_tokens"):
        MCPClientOptions(sampling_max_tokens=0)


# -- sampling ------------------------------------------------------------------------------------------------


async def test_sampling_is_refused_unless_the_server_opted_in(tmp_path: Path) -> None:
    client = ScriptedClient([[Text("never")]])
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path)) as server:
        server.bind(Worker(client, tools=[server]))
        assert (await call(server, "summarise", {"text": "long text"})).startswith("error:")
    assert client.requests == []  # the model was never asked


async def test_sampling_goes_through_the_workers_client_and_its_hooks_see_it_marked(tmp_path: Path) -> None:
    client = ScriptedClient(
        [
            [ToolUse("mcp__caps__summarise", {"text": "a very long text"}, call_id="c1")],
            [Text("short")],  # the sampling request
            [Text("done")],
        ]
    )
    seen: list[PreLlmRequestInfo] = []

    def watch(info: PreLlmRequestInfo) -> Continue:
        seen.append(info)
        return Continue()

    options = MCPClientOptions(sampling=True, sampling_max_tokens=256)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        worker = Worker(client, tools=[server], model="scripted-model")
        server.bind(worker)
        worker.hooks.add(PRE_LLM_REQUEST, watch)
        outcome = await worker.run("summarise it")
    assert isinstance(outcome, Finished)
    [result] = results(worker)
    assert (result.content, result.is_error) == ("scripted-model|endTurn|short", False)
    sampling = client.requests[1]
    assert sampling.system == "You summarise."
    assert sampling.tools == ()
    assert sampling.max_tokens == 256  # the server asked for 100000: capped
    [message] = sampling.items
    assert isinstance(message, Message)
    assert (message.role, message.text) == ("user", "Summarise: a very long text")
    marked = [info for info in seen if info.run_id == "mcp-sampling:caps"]
    assert len(marked) == 1
    assert marked[0].turn == 0
    assert [dict(item.meta) for item in marked[0].new_items] == [{"source": "mcp_sampling", "mcp_server": "caps"}]
    assert len(seen) == 3  # the run's two requests and the sampling request
    # the sampling exchange is not part of the Worker's history
    assert "Summarise:" not in json.dumps([item.to_json() for item in worker.history])


async def test_a_pre_llm_request_hook_can_refuse_a_sampling_request(tmp_path: Path) -> None:
    client = ScriptedClient([[Text("never")]])

    def refuse(info: PreLlmRequestInfo) -> Continue | Cancel:
        return Cancel("no sampling today") if info.run_id.startswith("mcp-sampling:") else Continue()

    options = MCPClientOptions(sampling=True)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        worker = Worker(client, tools=[server])
        worker.hooks.add(PRE_LLM_REQUEST, refuse)
        server.bind(worker)
        text = await call(server, "summarise", {"text": "x"})
    assert text.startswith("error:")
    assert "no sampling today" in text
    assert client.requests == []


async def test_a_model_error_during_sampling_is_an_error_for_the_server(tmp_path: Path) -> None:
    client = ScriptedClient([ScriptedTurn(error=ScriptError("overloaded", mode="event"))])
    options = MCPClientOptions(sampling=True)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        server.bind(Worker(client, tools=[server]))
        text = await call(server, "summarise", {"text": "x"})
    assert text.startswith("error:")
    assert "the model reported an error: overloaded" in text


async def test_sampling_without_a_bound_worker_is_an_error_for_the_server(tmp_path: Path) -> None:
    options = MCPClientOptions(sampling=True)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        text = await call(server, "summarise", {"text": "x"})
    assert text.startswith("error:")
    assert "needs a Worker bound" in text


# -- elicitation ---------------------------------------------------------------------------------------------


async def test_an_elicitation_nobody_answers_is_declined(tmp_path: Path) -> None:
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path)) as server:
        assert await call(server, "signup") == "decline"
        server.bind(Worker(ScriptedClient([])))
        assert await call(server, "signup") == "decline"


async def test_the_servers_own_handler_answers_with_content(tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationResponse:
        asked.append(request)
        return ElicitationResponse(action="accept", content={"email": "ada@example.com", "subscribe": True})

    options = MCPClientOptions(elicitation=answer)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        assert await call(server, "signup") == "accept:ada@example.com:True"
    [request] = asked
    assert (request.server, request.message, request.mode) == ("caps", "Which email should I use?", "form")
    assert request.requested_schema is not None
    assert set(request.requested_schema["properties"]) == {"email", "subscribe"}  # type: ignore[arg-type]


async def test_the_workers_handler_answers_every_bound_server_and_url_mode_carries_the_url(tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationResponse:
        asked.append(request)
        return ElicitationResponse(action="accept" if request.mode == "url" else "cancel")

    async with MCPServer.stdio("caps", sys.executable, args(tmp_path)) as server:
        worker = Worker(ScriptedClient([]), tools=[server])
        elicitation_routing(worker).handler = answer
        server.bind(worker)
        assert await call(server, "login") == "accept"
        assert await call(server, "signup") == "cancel"
    url_request = asked[0]
    assert (url_request.mode, url_request.url, url_request.elicitation_id) == (
        "url",
        "https://example.com/login",
        "login-1",
    )


@pytest.mark.parametrize(
    "content",
    [
        {"email": "a@b.c", "password": "leaked"},  # a field the server did not ask for
        {"subscribe": True},  # the required email is missing
        {"email": {"nested": "object"}},  # not a primitive
    ],
)
async def test_an_accept_that_does_not_fit_the_request_is_declined(tmp_path: Path, content: dict[str, object]) -> None:
    async def answer(request: ElicitationRequest) -> ElicitationResponse:
        return ElicitationResponse(action="accept", content=content)

    options = MCPClientOptions(elicitation=answer)
    async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
        assert await call(server, "signup") == "decline"


async def test_a_handler_that_raises_or_answers_nonsense_declines(tmp_path: Path) -> None:
    async def broken(request: ElicitationRequest) -> ElicitationResponse:
        raise RuntimeError("boom")

    async def nonsense(request: ElicitationRequest) -> ElicitationResponse:
        return "accept"  # type: ignore[return-value]

    for handler in (broken, nonsense):
        options = MCPClientOptions(elicitation=handler)
        async with MCPServer.stdio("caps", sys.executable, args(tmp_path), client=options) as server:
            assert await call(server, "signup") == "decline"


def test_a_response_checks_its_action() -> None:
    with pytest.raises(ValueError, match="accept, decline, cancel"):
        ElicitationResponse(action="allow")  # type: ignore[arg-type]
