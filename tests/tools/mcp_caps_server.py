"""A real MCP server (the official SDK's MCPServer, formerly FastMCP) for the transport and capability tests.

    python mcp_caps_server.py stdio|http|sse TOKEN STATE_DIR [PORT]

Over http/sse it listens on PORT (default: a free one) of 127.0.0.1 and prints the port on its first stdout line;
every HTTP request's headers are appended to STATE_DIR/headers.jsonl; with a non-empty TOKEN a request without
``Authorization: Bearer TOKEN`` gets 401. ``/away`` redirects to the same server under the name ``localhost``
(another origin). The tools ask the client for roots, a sampling completion and elicitations.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import warnings

import anyio

warnings.simplefilter("ignore")  # sampling/roots are deprecated in the newest protocol; still in use

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.types import SamplingMessage, TextContent, ToolAnnotations  # noqa: E402
from pydantic import BaseModel  # noqa: E402

transport, token, state = sys.argv[1], sys.argv[2], sys.argv[3]
app = MCPServer("caps", log_level="CRITICAL")


class Contact(BaseModel):
    email: str
    subscribe: bool = False


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def wait(seconds: float) -> str:
    """Wait ``seconds``, then say so (read-only)."""
    await anyio.sleep(seconds)
    return "waited"


@app.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, as a JSON list of URIs."""
    result = await ctx.session.list_roots()
    return json.dumps([str(r.uri) for r in result.roots])


@app.tool()
async def summarise(text: str, ctx: Context) -> str:
    """Ask the client's model to summarise the text."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarise: {text}"))],
        max_tokens=100000,
        system_prompt="You summarise.",
    )
    content = result.content
    return f"{result.model}|{result.stop_reason}|{getattr(content, 'text', '')}"


@app.tool()
async def signup(ctx: Context) -> str:
    """Ask the user for an email address."""
    result = await ctx.elicit("Which email should I use?", Contact)
    if result.action == "accept":
        return f"accept:{result.data.email}:{result.data.subscribe}"
    return result.action


@app.tool()
async def login(ctx: Context) -> str:
    """Send the user to a URL."""
    result = await ctx.elicit_url("Log in to continue", "https://example.com/login", "login-1")
    return result.action


if transport == "stdio":
    app.run()
    sys.exit(0)

import uvicorn  # noqa: E402

asgi = app.streamable_http_app() if transport == "http" else app.sse_app()
port = 0


async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] == "http":
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        with open(os.path.join(state, "headers.jsonl"), "a") as f:  # noqa: ASYNC230 - a test log, tiny
            f.write(json.dumps({"path": scope["path"], **headers}) + "\n")
        if scope["path"] == "/away":
            location = f"http://localhost:{port}/mcp".encode()
            await send({"type": "http.response.start", "status": 307, "headers": [(b"location", location)]})
            await send({"type": "http.response.body", "body": b""})
            return
        if token and headers.get("authorization") != f"Bearer {token}":
            start = {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]}
            await send(start)
            await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
            return
    await asgi(scope, receive, send)


sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart on the same port (test_mcp_remote)
sock.bind(("127.0.0.1", int(sys.argv[4]) if len(sys.argv) > 4 else 0))
sock.listen(64)  # before the port is announced: a client connecting at once is queued, not refused
port = sock.getsockname()[1]
print(port, flush=True)
uvicorn.Server(uvicorn.Config(guarded, log_level="critical", lifespan="on")).run(sockets=[sock])
