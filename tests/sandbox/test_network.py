"""The sandbox's network: a namespace with only loopback, and HTTP(S) only through the allow-list proxy. A real
HTTP server on the host's 127.0.0.1 stands for the internet; the proxy's resolver maps ``allowed.test`` and
``denied.test`` to it (there is no DNS here)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sandbox_helpers import bash, bash_tool, make_sandbox

from hookloop.sandbox import BubblewrapBackend, DomainProxy, host_allowed

pytestmark = pytest.mark.anyio


@pytest.fixture
async def server() -> AsyncIterator[int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            body = b"hello from " + head.split(b" ", 2)[1]
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        yield port
    finally:
        srv.close()
        await srv.wait_closed()


def resolver(port: int) -> dict[str, tuple[str, int]]:
    return {"allowed.test": ("127.0.0.1", port), "denied.test": ("127.0.0.1", port)}


@pytest.mark.parametrize(
    "client",
    [
        "curl -sSf http://{host}/page",
        "curl -sSf --proxytunnel http://{host}/page",  # CONNECT, as HTTPS would
        "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://{host}/page\").read().decode())'",
    ],
)
async def test_an_allowed_domain_is_reached_through_the_proxy_and_a_denied_one_is_refused(
    ws: Path, backend: BubblewrapBackend, server: int, client: str
) -> None:
    sandbox = make_sandbox(ws, backend, allowed_domains=["allowed.test"], resolver=resolver(server))
    tool = bash_tool(ws, sandbox)
    content, is_error = await bash(tool, client.format(host="allowed.test"))
    assert (content, is_error) == ("hello from /page", False)

    content, is_error = await bash(tool, client.format(host="denied.test"))
    assert "hello" not in content
    assert is_error
    assert (
        "blocked by the sandbox's network allow-list: denied.test; allow it with sandbox.network.allowedDomains"
        in content
    )


async def test_the_host_loopback_is_not_reachable_directly(ws: Path, backend: BubblewrapBackend, server: int) -> None:
    tool = bash_tool(ws, make_sandbox(ws, backend, allowed_domains=["*"], resolver=resolver(server)))
    for command in (
        f"curl -sS --noproxy '*' http://127.0.0.1:{server}/",
        f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {server}), 2)'",
        f"exec 3<>/dev/tcp/127.0.0.1/{server} && echo connected",
    ):
        content, is_error = await bash(tool, command)
        assert is_error, content
        assert "hello" not in content
        assert "connected" not in content


async def test_webfetch_rules_feed_the_allow_list_and_deny_rules_win(
    ws: Path, backend: BubblewrapBackend, server: int
) -> None:
    from hookloop.permissions import PermissionPolicy
    from hookloop.sandbox import Sandbox, SandboxSettings

    policy = PermissionPolicy(
        allow=["WebFetch(domain:allowed.test)", "WebFetch(domain:denied.test)"],
        deny=["WebFetch(domain:denied.test)"],
        workspace=ws,
    )
    sandbox = Sandbox(
        SandboxSettings(enabled=True), workspace=ws, policy=policy, backend=backend, resolver=resolver(server)
    )
    tool = bash_tool(ws, sandbox)
    assert await bash(tool, "curl -sS http://allowed.test/x") == ("hello from /x", False)
    content, _ = await bash(tool, "curl -sS http://denied.test/x")
    assert "blocked by the sandbox's network allow-list: denied.test" in content


@pytest.mark.parametrize(
    ("host", "allowed", "denied", "expected"),
    [
        ("github.com", ["github.com"], [], True),
        ("GitHub.COM.", ["github.com"], [], True),
        ("api.github.com", ["github.com"], [], False),
        ("api.github.com", ["*.github.com"], [], True),
        ("github.com", ["*.github.com"], [], False),
        ("evilgithub.com", ["*.github.com"], [], False),
        ("x.npmjs.org", ["*"], ["*.npmjs.org"], False),
        ("example.com", [], [], False),
    ],
)
def test_host_patterns(host: str, allowed: list[str], denied: list[str], expected: bool) -> None:
    assert host_allowed(host, allowed, denied) is expected


async def test_the_proxy_asks_about_a_new_domain_and_remembers_a_yes(server: int) -> None:
    asked: list[str] = []

    async def ask(host: str) -> bool:
        asked.append(host)
        return host == "allowed.test"

    proxy = await DomainProxy.open(allowed=(), resolver=resolver(server), ask=ask)
    try:
        for host in ("allowed.test", "allowed.test", "denied.test"):
            reader, writer = await asyncio.open_unix_connection(proxy.socket_path)
            writer.write(f"GET http://{host}/a HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            await writer.drain()
            reply = await reader.read()
            writer.close()
            status = reply.split(b" ", 2)[1]
            assert status == (b"200" if host == "allowed.test" else b"403")
    finally:
        await proxy.close()
    assert asked == ["allowed.test", "denied.test"]
    assert proxy.blocked == ["denied.test"]


async def test_the_proxy_refuses_an_allowed_name_that_resolves_to_loopback() -> None:
    proxy = await DomainProxy.open(allowed=["localhost"])
    try:
        reader, writer = await asyncio.open_unix_connection(proxy.socket_path)
        writer.write(b"CONNECT localhost:22 HTTP/1.1\r\n\r\n")
        await writer.drain()
        reply = await reader.read()
        writer.close()
    finally:
        await proxy.close()
    assert reply.startswith(b"HTTP/1.1 403")
    assert b"local address" in reply


async def test_a_connection_the_proxy_accepted_but_had_not_served_yet_is_closed_with_it() -> None:
    """Closing the proxy right after it accepted a connection — its handler made, not yet run — closes that
    connection too (the client reads its end), instead of leaving the socket open until it is collected."""
    proxy = await DomainProxy.open(allowed=())
    reader, writer = await asyncio.open_unix_connection(proxy.socket_path)
    try:
        for _ in range(1000):  # turns of the event loop until the proxy has accepted it
            if proxy._tasks:
                break
            await asyncio.sleep(0)
        assert proxy._tasks, "the proxy never accepted the connection"
        await proxy.close()
        assert await asyncio.wait_for(reader.read(), 10) == b""
    finally:
        writer.close()
        await proxy.close()
