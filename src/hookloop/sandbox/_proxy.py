"""The network proxy sandboxed commands reach the outside through: HTTP ``CONNECT`` (HTTPS and any TCP) and
plain ``http://`` requests, with a domain allow-list.

One proxy serves one sandboxed command, on a unix socket in a private directory, inside the hookloop process's
event loop, and is closed when the command ends (:meth:`DomainProxy.close` also ends open tunnels). A request
for a host that is not allowed gets ``403 Forbidden`` with a sentence saying how to allow it, and the host is
recorded in :attr:`DomainProxy.blocked`; an ``ask`` callback, when given, is asked first (a "yes" allows the host
for the rest of the proxy's life).

Host rules: ``example.com`` matches exactly that host, ``*.example.com`` its subdomains, ``*`` any host; a
denied pattern wins over an allowed one; hosts are compared lower-case without a trailing dot. An allowed host
that resolves to a loopback, link-local or unspecified address is refused (DNS rebinding toward the host's own
services or a cloud metadata endpoint) unless the pattern names that address literally. ``resolver`` maps
``host`` → ``(address, port)`` and skips DNS (tests serve ``allowed.test`` on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping
from fnmatch import fnmatchcase

__all__ = ["DomainProxy", "host_allowed"]

_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT = 30.0
_ACCEPT_TURNS = 4
"""Loop turns `close` gives connections accepted just before it (two are enough on CPython 3.11-3.13)."""
_CONNECT_TIMEOUT = 30.0
_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]")
Ask = Callable[[str], Awaitable[bool]]


def _host_matches(pattern: str, host: str) -> bool:
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return fnmatchcase(host, pattern)


def host_allowed(host: str, allowed: Iterable[str], denied: Iterable[str] = ()) -> bool:
    """Whether ``host`` is allowed by the patterns (a denied match wins; see the module docstring)."""
    name = host.rstrip(".").lower()
    if any(_host_matches(p, name) for p in denied):
        return False
    return any(_host_matches(p, name) for p in allowed)


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _refused_address(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


class DomainProxy:
    """An HTTP/HTTPS proxy on a unix socket that lets through only allowed hosts.

    Use ``await DomainProxy.open(...)``; :attr:`socket_path` is where to connect; :meth:`close` stops it.
    """

    def __init__(
        self,
        *,
        allowed: Iterable[str],
        denied: Iterable[str] = (),
        resolver: Mapping[str, tuple[str, int]] | None = None,
        ask: Ask | None = None,
    ) -> None:
        self._allowed = list(allowed)
        self._denied = tuple(denied)
        self._resolver = {k.lower(): v for k, v in (resolver or {}).items()}
        self._ask = ask
        self._dir = tempfile.mkdtemp(prefix="hookloop-proxy-")
        # mkdtemp made it 0700: the sandbox runs as the same user, and nobody else may use the proxy.
        self.socket_path = os.path.join(self._dir, "proxy.sock")
        self.blocked: list[str] = []
        """Hosts refused, in order, each once."""
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @classmethod
    async def open(
        cls,
        *,
        allowed: Iterable[str],
        denied: Iterable[str] = (),
        resolver: Mapping[str, tuple[str, int]] | None = None,
        ask: Ask | None = None,
    ) -> DomainProxy:
        """Start a proxy listening on a fresh unix socket."""
        proxy = cls(allowed=allowed, denied=denied, resolver=resolver, ask=ask)
        try:
            proxy._server = await asyncio.start_unix_server(proxy._serve, path=proxy.socket_path)
        except BaseException:
            shutil.rmtree(proxy._dir, ignore_errors=True)
            raise
        return proxy

    async def close(self) -> None:
        """Stop listening, end every open connection, remove the socket. Safe to call twice."""
        self._closed = True
        if self._server is not None:
            self._server.close()
            self._server = None
            # A connection the server accepted but has not yet handed to `_serve` gets there within two turns of
            # the loop (asyncio's accept task makes the transport, which then calls connection_made); `_serve`
            # closes it, the proxy being closed. Without these turns it stayed open until collected.
            for _ in range(_ACCEPT_TURNS):
                await asyncio.sleep(0)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        shutil.rmtree(self._dir, ignore_errors=True)

    def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._closed:  # accepted just before the proxy closed
            writer.close()
            return
        task = asyncio.ensure_future(self._handle(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # A handler cancelled before it ran (the proxy closing) never reaches the finally that closes its
        # connection: its end closes it (a second close is nothing).
        task.add_done_callback(lambda _: writer.close())

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                async with asyncio.timeout(_HEAD_TIMEOUT):
                    head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
                return  # an empty probe connection, or garbage
            if len(head) > _HEAD_LIMIT:
                return
            target = _parse_head(head)
            if target is None:
                await _reply(writer, 400, "Bad Request", "hookloop sandbox proxy: malformed request\n")
                return
            method, host, port, rest = target
            if not await self._permitted(host):
                self._record(host)
                await _reply(
                    writer,
                    403,
                    "Forbidden",
                    f"blocked by the sandbox's network allow-list: {host}; "
                    "allow it with sandbox.network.allowedDomains\n",
                )
                return
            address = await self._address(host, port)
            if address is None:
                self._record(host)
                await _reply(writer, 403, "Forbidden", f"blocked by the sandbox: {host} resolves to a local address\n")
                return
            try:
                async with asyncio.timeout(_CONNECT_TIMEOUT):
                    up_reader, upstream = await asyncio.open_connection(*address)
            except (OSError, TimeoutError) as exc:
                await _reply(writer, 502, "Bad Gateway", f"hookloop sandbox proxy: cannot reach {host}: {exc}\n")
                return
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.write(rest)
            await _pipe_both(reader, writer, up_reader, upstream)
        finally:
            for w in (writer, upstream):
                if w is not None:
                    w.close()

    async def _permitted(self, host: str) -> bool:
        if host_allowed(host, self._allowed, self._denied):
            return True
        if self._ask is None or _denied(host, self._denied):
            return False
        if await self._ask(host):
            self._allowed.append(host.lower())
            return True
        return False

    def _record(self, host: str) -> None:
        if host not in self.blocked:
            self.blocked.append(host)

    async def _address(self, host: str, port: int) -> tuple[str, int] | None:
        mapped = self._resolver.get(host.lower())
        if mapped is not None:
            return mapped
        literal = host.strip("[]")
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(literal, port, type=socket.SOCK_STREAM)
        except OSError:
            return (literal, port)  # the connect reports it
        addresses = [str(info[4][0]) for info in infos]
        explicit = _is_address(literal) and any(p.strip("[]") == literal for p in self._allowed)
        if not explicit and any(_refused_address(a) for a in addresses):
            return None
        return (addresses[0], port) if addresses else (literal, port)


def _denied(host: str, denied: Iterable[str]) -> bool:
    name = host.rstrip(".").lower()
    return any(_host_matches(p, name) for p in denied)


def _parse_head(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, the request to forward) from a proxy request head; ``None`` when malformed."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes anything
        return None
    request_line, _, headers = text.partition("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, sep, port_text = target.rpartition(":")
        if not sep or not port_text.isdigit():
            return None
        return _checked(method, host, int(port_text), b"")
    match = re.fullmatch(r"http://([^/?#]+)([^#]*)", target, flags=re.IGNORECASE)
    if match is None:
        return None
    authority, path = match.group(1), match.group(2) or "/"
    if "@" in authority:
        return None
    if (authority.startswith("[") and "]:" not in authority) or ":" not in authority:
        host, port_text = authority, "80"
    else:
        host, _, port_text = authority.rpartition(":")
    if not port_text.isdigit():
        return None
    port = int(port_text)
    kept = [
        line
        for line in headers.split("\r\n")
        if line and not line.lower().startswith(("proxy-connection:", "proxy-authorization:", "connection:"))
    ]
    forwarded = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
    return _checked(method, host, port, forwarded.encode("latin-1"))


def _checked(method: str, host: str, port: int, rest: bytes) -> tuple[str, str, int, bytes] | None:
    if not _HOST.fullmatch(host) or not 0 < port < 65536:
        return None
    return method, host.lower(), port, rest


async def _reply(writer: asyncio.StreamWriter, code: int, reason: str, body: str) -> None:
    data = body.encode("utf-8")
    writer.write(
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode("ascii")
        + data
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


async def _pipe_both(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
) -> None:
    await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
