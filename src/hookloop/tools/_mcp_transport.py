"""Remote MCP transports: streamable HTTP and SSE (the official SDK's client transports), with headers and a
bearer token read from the environment. Private: the public surface is :class:`hookloop.tools.mcp.MCPServer`
(``open_http`` / ``http``, ``open_sse`` / ``sse``).

A remote server is an ``MCPServer`` like a stdio one: its transport is a
:class:`~hookloop.tools._mcp_conn.ContextTransport` over the SDK's client transport, entered anew for each
(re)connection, so initialising, listing, timeouts, restarts and the client capabilities are the server's own.

What a connection guarantees:

- the bearer token is read from the named environment variable when the server is opened; unset or empty is an
  :class:`~hookloop.tools.mcp.MCPServerError` before anything is sent, and the token never appears in an error
  message or a ``repr``;
- header names must be HTTP tokens and values may not hold CR, LF or NUL (no header injection from a config
  file); a header spelled with ``${VAR}`` is expanded by the config loader, not here;
- requests go to the configured origin only: a redirect (or an SSE ``endpoint`` event) to another scheme, host
  or port is refused, so the ``Authorization`` and custom headers never reach a third party (https on the same
  host is allowed);
- HTTP 401 / 403 at any point of the opening is reported as an authentication failure naming the server, the
  URL and where the token came from.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Unpack

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from hookloop.tools._mcp_conn import ContextTransport, describe_error

if TYPE_CHECKING:
    from hookloop.tools.mcp import MCPServer, MCPServerError
    from hookloop.tools.mcp_config import MCPServerOptions

__all__ = ["Remote", "RemoteTarget", "connect_remote", "open_remote", "remote_target", "safe_url"]

_log = logging.getLogger("hookloop.tools.mcp")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True, slots=True)
class RemoteTarget:
    """A remote server: transport, URL, headers (the token already folded in) and where the token came from."""

    kind: Literal["http", "sse"]
    url: str
    headers: Mapping[str, str] = field(repr=False)
    token_source: str | None = None
    timeout: float = MCP_DEFAULT_TIMEOUT
    read_timeout: float = MCP_DEFAULT_SSE_READ_TIMEOUT


def remote_target(
    kind: Literal["http", "sse"],
    name: str,
    url: str,
    *,
    headers: Mapping[str, str] | None,
    bearer_token_env: str | None,
    timeout: float | None,
    environ: Mapping[str, str] | None = None,
) -> RemoteTarget:
    """Check ``url`` and ``headers`` and fold the bearer token from ``$bearer_token_env`` into an
    ``Authorization: Bearer …`` header. Raises ``ValueError`` naming the server and the field."""
    from hookloop.tools.mcp import MCPServerError

    try:
        parsed = httpx2.URL(url) if isinstance(url, str) else None
    except Exception:  # httpx2.InvalidURL and friends
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"MCP server {name!r}: url must be an http:// or https:// URL with a host, got {url!r}")
    clean: dict[str, str] = {}
    for key, value in (headers or {}).items():
        if not isinstance(key, str) or not _TOKEN.match(key):
            raise ValueError(f"MCP server {name!r}: header name {key!r} is not a valid HTTP header name")
        if not isinstance(value, str) or _BAD_VALUE.search(value):
            raise ValueError(f"MCP server {name!r}: header {key!r} must be a string without CR, LF or NUL")
        clean[key] = value
    source = None
    if bearer_token_env is not None:
        env = os.environ if environ is None else environ
        token = env.get(bearer_token_env, "")
        if not token.strip():
            raise MCPServerError(
                f"MCP server {name!r} ({safe_url(url)}): "
                f"the bearer token variable ${bearer_token_env} is not set or empty"
            )
        if _BAD_VALUE.search(token):
            raise MCPServerError(f"MCP server {name!r}: ${bearer_token_env} holds CR, LF or NUL")
        if any(k.lower() == "authorization" for k in clean):
            raise ValueError(f"MCP server {name!r}: both an Authorization header and bearer_token_env are given")
        clean["Authorization"] = f"Bearer {token.strip()}"
        source = f"${bearer_token_env}"
    elif any(k.lower() == "authorization" for k in clean):
        source = "the Authorization header"
    if source is not None and parsed.scheme == "http" and parsed.host not in _LOOPBACK:
        _log.warning("MCP server %r: credentials are sent over plain http to %s", name, parsed.host)
    return RemoteTarget(
        kind=kind,
        url=url,
        headers=clean,
        token_source=source,
        timeout=MCP_DEFAULT_TIMEOUT if timeout is None else timeout,
    )


class _Watch:
    """Event hooks on the connection's HTTP client: refuse requests to another origin, remember a 401/403."""

    def __init__(self, url: str) -> None:
        base = httpx2.URL(url)
        self.scheme, self.host, self.port = base.scheme, base.host, base.port
        self.denied: int | None = None

    def _same_origin(self, url: httpx2.URL) -> bool:
        if url.host != self.host:
            return False
        if url.scheme == self.scheme and url.port == self.port:
            return True
        return url.scheme == "https"  # an upgrade to https on the same host

    async def request(self, request: httpx2.Request) -> None:
        if not self._same_origin(request.url):
            raise httpx2.RequestError(
                f"refused to send a request to {request.url.scheme}://{request.url.host}: not the server's origin",
                request=request,
            )

    async def response(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403) and self.denied is None:
            self.denied = response.status_code

    def client(
        self,
        headers: Mapping[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=dict(headers or {}),
            timeout=timeout,
            auth=auth,
            follow_redirects=True,
            event_hooks={"request": [self.request], "response": [self.response]},
        )


@contextlib.asynccontextmanager
async def connect_remote(target: RemoteTarget, watcher: _Watch) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK transport for ``target`` as ``(read, write)`` streams, every request seen by ``watcher``."""
    timeout = httpx2.Timeout(target.timeout, read=target.read_timeout)
    if target.kind == "sse":
        async with sse_client(
            target.url,
            headers=dict(target.headers),
            timeout=target.timeout,
            sse_read_timeout=target.read_timeout,
            httpx_client_factory=watcher.client,
        ) as streams:
            yield streams
        return
    async with (
        watcher.client(headers=target.headers, timeout=timeout) as http,
        streamable_http_client(target.url, http_client=http) as streams,
    ):
        yield streams


class Remote:
    """The transports of one remote server: :meth:`transport` makes a fresh one per (re)connection, each with
    a watcher of its own; :meth:`explain` words a failed opening of the latest."""

    __slots__ = ("_watcher", "target")

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target
        self._watcher: _Watch | None = None

    def transport(self) -> ContextTransport:
        watcher = self._watcher = _Watch(self.target.url)
        return ContextTransport(lambda: connect_remote(self.target, watcher), where=safe_url(self.target.url))

    def explain(self, name: str, failure: MCPServerError) -> str | None:
        """The message for a (re)connection that failed: an authentication failure on HTTP 401/403, a
        connection failure when the transport broke (``failure``'s cause); None to keep the server's message."""
        where = f"MCP server {name!r} ({safe_url(self.target.url)})"
        status = None if self._watcher is None else self._watcher.denied
        if status is not None:
            if self.target.token_source is None:
                hint = "the server wants credentials: set bearer_token_env or an Authorization header"
            else:
                hint = f"the credentials from {self.target.token_source} were rejected"
            return f"{where}: authentication failed (HTTP {status}): {hint}"
        cause = failure.__cause__
        if cause is not None and not isinstance(cause, asyncio.CancelledError):
            return f"{where}: could not connect ({self.target.kind}): {describe_error(cause)}"
        return None


def safe_url(url: str) -> str:
    """``url`` for messages: without user info or query (either may hold a credential)."""
    try:
        parsed = httpx2.URL(url)
        return str(parsed.copy_with(userinfo=b"", query=None, fragment=None))
    except Exception:
        return "<url>"


async def open_remote(
    cls: type[MCPServer], name: str, target: RemoteTarget, **options: Unpack[MCPServerOptions]
) -> MCPServer:
    """Connect, initialise and list the tools through ``MCPServer._start`` (the one path for every transport).
    Failures, here and when a call connects again, raise :class:`~hookloop.tools.mcp.MCPServerError` naming the
    server and URL (never a header value), worded by :meth:`Remote.explain`."""
    remote = Remote(target)
    server = cls(name, remote.transport, where=f" ({safe_url(target.url)})", explain=remote.explain, **options)
    await server._start()
    return server
