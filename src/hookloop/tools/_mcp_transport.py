"""Remote MCP transports: streamable HTTP and SSE (the official SDK's client transports), with headers and a
bearer token read from the environment. Private: the public surface is :class:`hookloop.tools.mcp.MCPServer`
(``open_http`` / ``http``, ``open_sse`` / ``sse``).

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

import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx2
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from hookloop.tools._mcp_caps import ClientState, MCPClientOptions

if TYPE_CHECKING:
    from hookloop.tools.mcp import MCPServer

__all__ = ["RemoteTarget", "auth_failure", "connect_remote", "open_remote", "remote_target"]

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
async def connect_remote(target: RemoteTarget, watch: list[_Watch]) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK transport for ``target`` as ``(read, write)`` streams; the connection's watcher is appended to
    ``watch`` (read it with :func:`auth_failure` when the opening fails)."""
    watcher = _Watch(target.url)
    watch.append(watcher)
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


def auth_failure(name: str, target: RemoteTarget, watch: list[_Watch]) -> str | None:
    """The message for an opening that failed on HTTP 401/403, else None."""
    status = next((w.denied for w in watch if w.denied is not None), None)
    if status is None:
        return None
    if target.token_source is None:
        hint = "the server wants credentials: set bearer_token_env or an Authorization header"
    else:
        hint = f"the credentials from {target.token_source} were rejected"
    return f"MCP server {name!r} ({safe_url(target.url)}): authentication failed (HTTP {status}): {hint}"


def safe_url(url: str) -> str:
    """``url`` for messages: without user info or query (either may hold a credential)."""
    try:
        parsed = httpx2.URL(url)
        return str(parsed.copy_with(userinfo=b"", query=None, fragment=None))
    except Exception:
        return "<url>"


async def open_remote(
    cls: type[MCPServer], name: str, target: RemoteTarget, client: MCPClientOptions | None
) -> MCPServer:
    """Connect, initialise and list tools, as :meth:`MCPServer.open_stdio` does for a process. Failures raise
    :class:`~hookloop.tools.mcp.MCPServerError` naming the server and URL (never a header value)."""
    from hookloop.tools.mcp import MCPServerError, MCPTool, _list_all_tools

    if not name or "__" in name:
        raise ValueError(f"MCP server name must be non-empty and contain no '__': {name!r}")
    stack = contextlib.AsyncExitStack()
    caps = ClientState(name, client)
    watch: list[_Watch] = []
    try:
        read, write = await stack.enter_async_context(connect_remote(target, watch))
        session = await stack.enter_async_context(ClientSession(read, write, **caps.session_kwargs()))
        await session.initialize()
        server = cls(name, session, stack)
        server._caps = caps
        server._tools = tuple(MCPTool(server, remote) for remote in await _list_all_tools(session))
    except BaseException as exc:
        cause: BaseException = exc
        broken = False
        try:
            await stack.aclose()
        except Exception as closing:
            # The transport's task group re-raises what broke it: the real cause. A CancelledError caught
            # above then came from that group's own cancel scope, not from our caller: it is not re-raised.
            cause, broken = closing, True
        if broken or (isinstance(exc, Exception) and not isinstance(exc, MCPServerError)):
            message = auth_failure(name, target, watch) or (
                f"MCP server {name!r} ({safe_url(target.url)}): could not connect ({target.kind}): {_describe(cause)}"
            )
            raise MCPServerError(message) from cause
        raise
    return server


def _describe(exc: BaseException) -> str:
    """The innermost meaningful error of an exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
