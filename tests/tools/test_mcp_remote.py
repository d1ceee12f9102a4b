"""Streamable HTTP and SSE MCP servers: the SDK's own server in a subprocess on 127.0.0.1, real HTTP (no mocks)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.tools import ToolFailure
from hookloop.tools.mcp import ElicitationRequest, ElicitationResponse, MCPClientOptions, MCPServer, MCPServerError

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("mcp_caps_server.py")
TOKEN = "s3cret-token-value"


class Remote:
    """A running server: its base URL and the headers of every request it received."""

    def __init__(self, kind: str, token: str, state: Path, port: int = 0) -> None:
        self.kind = kind
        self.state = state
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), kind, token, str(state), str(port)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())  # the server prints its port once it listens

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{'mcp' if self.kind == 'http' else 'sse'}"

    def requests(self) -> list[dict[str, str]]:
        path = self.state / "headers.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture(scope="module", params=["http", "sse"])
def running(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    server = Remote(request.param, TOKEN, tmp_path_factory.mktemp(request.param))
    yield server
    server.stop()


@pytest.fixture
def remote(running: Remote) -> Remote:
    """One server per transport for the module; each test starts with an empty request log."""
    (running.state / "headers.jsonl").unlink(missing_ok=True)
    return running


@pytest.fixture
def open_remote(tmp_path: Path) -> Iterator[Remote]:
    server = Remote("http", "", tmp_path)
    yield server
    server.stop()


def opener(remote: Remote):  # type: ignore[no-untyped-def]
    return MCPServer.http if remote.kind == "http" else MCPServer.sse


async def test_tools_run_over_the_transport_with_the_bearer_token_and_headers_from_the_config(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPS_TOKEN", TOKEN)
    client = ScriptedClient([[ToolUse("mcp__caps__add", {"a": 20, "b": 22}, call_id="c1")], [Text("42")]])
    async with opener(remote)("caps", remote.url, headers={"X-Team": "blue"}, bearer_token_env="CAPS_TOKEN") as srv:
        assert {t.meta.name for t in srv.list_tools()} >= {"mcp__caps__add", "mcp__caps__roots"}
        worker = Worker(client, tools=[srv])
        outcome = await worker.run("add")
    assert isinstance(outcome, Finished)
    [result] = [i for i in worker.history if isinstance(i, ToolResult)]
    assert (result.content, result.is_error) == ("42", False)
    seen = remote.requests()
    assert seen
    assert all(r.get("authorization") == f"Bearer {TOKEN}" for r in seen)
    assert all(r.get("x-team") == "blue" for r in seen)


async def test_a_wrong_token_is_a_clear_error_that_names_the_variable_not_the_token(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPS_TOKEN", "wrong-value")
    with pytest.raises(MCPServerError) as caught:
        async with opener(remote)("caps", remote.url, bearer_token_env="CAPS_TOKEN"):
            pass
    message = str(caught.value)
    assert "authentication failed (HTTP 401)" in message
    assert "$CAPS_TOKEN" in message
    assert "'caps'" in message
    assert remote.url in message
    assert "wrong-value" not in message


async def test_no_credentials_for_a_server_that_wants_them_says_so(remote: Remote) -> None:
    with pytest.raises(MCPServerError, match=r"authentication failed \(HTTP 401\).*set bearer_token_env"):
        async with opener(remote)("caps", remote.url):
            pass


async def test_an_unset_token_variable_fails_before_anything_is_sent(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAPS_TOKEN_UNSET", raising=False)
    with pytest.raises(MCPServerError, match=r"\$CAPS_TOKEN_UNSET is not set or empty"):
        async with opener(remote)("caps", remote.url, bearer_token_env="CAPS_TOKEN_UNSET"):
            pass
    assert remote.requests() == []


async def test_a_redirect_to_another_origin_is_refused_and_the_headers_never_leave(open_remote: Remote) -> None:
    url = f"http://127.0.0.1:{open_remote.port}/away"
    # Refused by hookloop's origin check, or first by the SDK itself (mcp >= 2.3 does not follow such redirects).
    with pytest.raises(
        MCPServerError, match=r"could not connect.*(not the server's origin|Redirect to .* not followed)"
    ):
        async with MCPServer.http("caps", url, headers={"X-Api-Key": "k-123"}):
            pass
    assert [r["path"] for r in open_remote.requests()] == ["/away"]  # never followed to localhost


async def test_header_injection_and_bad_urls_are_rejected_naming_the_server() -> None:
    with pytest.raises(ValueError, match=r"'caps': header 'X-A' must be a string without CR, LF or NUL"):
        await MCPServer.open_http("caps", "http://127.0.0.1:9/mcp", headers={"X-A": "v\r\nX-Evil: 1"})
    with pytest.raises(ValueError, match="not a valid HTTP header name"):
        await MCPServer.open_http("caps", "http://127.0.0.1:9/mcp", headers={"Bad Name": "v"})
    with pytest.raises(ValueError, match="url must be an http:// or https:// URL"):
        await MCPServer.open_sse("caps", "file:///etc/passwd")
    with pytest.raises(ValueError, match="url must be an http:// or https:// URL"):
        await MCPServer.open_http("caps", "http://[::1")
    with pytest.raises(ValueError, match="'caps': init_timeout must be a positive number of seconds, got 0"):
        await MCPServer.open_sse("caps", "http://127.0.0.1:9/sse", init_timeout=0)


async def test_a_server_that_is_not_there_is_an_mcp_server_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        with pytest.raises(MCPServerError, match=r"'gone' \(http://127\.0\.0\.1:\d+/mcp\): could not connect"):
            await MCPServer.open_http("gone", f"http://127.0.0.1:{port}/mcp", http_timeout=5)


async def test_server_requests_reach_the_client_over_the_transport(
    remote: Remote, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Roots and elicitation are server-to-client requests: they need the transport's back channel."""
    monkeypatch.setenv("CAPS_TOKEN", TOKEN)

    async def answer(request: ElicitationRequest) -> ElicitationResponse:
        return ElicitationResponse(action="accept", content={"email": f"{request.server}@example.com"})

    options = MCPClientOptions(roots=[tmp_path], elicitation=answer)
    async with opener(remote)("caps", remote.url, bearer_token_env="CAPS_TOKEN", client=options) as server:
        expected = [tmp_path.resolve().as_uri()]  # noqa: ASYNC240 - a test, one stat
        assert json.loads(str(await server.call_tool("roots", {}))) == expected
        assert await server.call_tool("signup", {}) == "accept:caps@example.com:False"


async def test_the_server_options_hold_over_the_transport(remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    """trust_annotations, sequential and call_timeout are the server's, whatever its transport."""
    monkeypatch.setenv("CAPS_TOKEN", TOKEN)
    async with opener(remote)("caps", remote.url, bearer_token_env="CAPS_TOKEN") as server:
        tools = {t.meta.name: t.meta for t in server.list_tools()}
        # "wait" claims readOnlyHint: not trusted for permissions, but it needs no place in the write order
        assert (tools["mcp__caps__wait"].read_only, tools["mcp__caps__wait"].sequential) == (False, False)
        assert (tools["mcp__caps__add"].read_only, tools["mcp__caps__add"].sequential) == (False, True)
    async with opener(remote)(
        "caps", remote.url, bearer_token_env="CAPS_TOKEN", trust_annotations=True, sequential=False, call_timeout=0.5
    ) as server:
        tools = {t.meta.name: t.meta for t in server.list_tools()}
        assert tools["mcp__caps__wait"].read_only
        assert not tools["mcp__caps__add"].sequential
        with pytest.raises(ToolFailure, match=r"tool 'wait': no answer within 0\.5 seconds \(call_timeout\)"):
            await server.call_tool("wait", {"seconds": 5})
        assert await server.call_tool("add", {"a": 1, "b": 1}) == "2"  # a slow call does not end the session


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_a_server_that_goes_away_fails_the_call_and_the_next_call_connects_again(
    kind: str, tmp_path: Path
) -> None:
    """mcp-core's lifecycle over a remote transport: the call that finds the server gone fails naming it and
    its URL, the next one connects anew (same URL; a 401 then is said to be one), and the Worker the server is
    bound to still answers roots."""
    first = Remote(kind, "", tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    open_ = MCPServer.open_http if kind == "http" else MCPServer.open_sse
    server = await open_("caps", first.url, init_timeout=20)
    again: Remote | None = None
    try:
        server.bind(Worker(ScriptedClient([]), tools=[server], workspace=workspace))
        assert await server.call_tool("add", {"a": 1, "b": 2}) == "3"
        first.stop()
        with pytest.raises(ToolFailure) as caught:
            await server.call_tool("add", {"a": 1, "b": 2})
        message = str(caught.value)
        assert f"MCP server 'caps' closed the connection ({first.url})" in message
        assert "the next call starts it again" in message
        locked = Remote(kind, TOKEN, tmp_path, port=first.port)  # back, but wanting credentials now
        try:
            with pytest.raises(ToolFailure) as caught:
                await server.call_tool("add", {"a": 1, "b": 2})
        finally:
            locked.stop()
        assert "the server died and could not be restarted" in str(caught.value)
        assert f"'caps' ({first.url}): authentication failed (HTTP 401)" in str(caught.value)
        again = Remote(kind, "", tmp_path, port=first.port)
        assert json.loads(str(await server.call_tool("roots", {}))) == [workspace.resolve().as_uri()]
        assert await server.call_tool("add", {"a": 2, "b": 2}) == "4"
    finally:
        await server.aclose()
        for remote in (first, again):
            if remote is not None and remote.process.poll() is None:
                remote.stop()
