"""The connection of an :class:`hookloop.tools.mcp.MCPServer`: one server process (or remote session) and its
MCP session, served by a task of its own so that the server may be opened, used and closed from any task; and the
small request helpers (paging, progress, describing failures) the server uses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol

import anyio
from mcp import ClientSession
from mcp import types as mcp_types

from hookloop._frozen import JSONValue, thaw
from hookloop.timeline import ToolProgress
from hookloop.tools._base import ToolContext
from hookloop.tools._mcp_content import field

__all__ = [
    "Connection",
    "ContextTransport",
    "Tap",
    "Transport",
    "all_pages",
    "describe_error",
    "first",
    "json_value",
    "list_all_tools",
    "progress_callback",
    "settle",
    "stderr_note",
    "stop",
]


class Transport(Protocol):
    """What a connection needs of a transport (:class:`hookloop.tools._mcp_stdio.StdioTransport` is one).

    ``async with transport as (read, write)`` gives the MCP SDK's stream pair; ``lost`` is set when the server
    can no longer answer (its process exited, its stream closed); :meth:`describe_exit` says why, once
    :meth:`wait_exit` had a chance to learn the exit status; ``pid`` is the local process, if any."""

    lost: asyncio.Event

    @property
    def pid(self) -> int | None: ...

    def describe_exit(self) -> str: ...

    def stderr_tail(self) -> str: ...

    async def wait_exit(self, seconds: float) -> None: ...

    async def __aenter__(self) -> tuple[Any, Any]: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class ContextTransport:
    """A :class:`Transport` over any MCP SDK transport context manager (``streamable_http_client(...)``,
    ``sse_client(...)``, ``stdio_client(...)``): ``connect()`` is entered anew for each (re)start. There is no
    local process to report on: a lost connection is described as ``closed the connection`` (``where`` says
    whose, e.g. the URL). ``lost`` is set by the session's :class:`Tap` when the stream ends."""

    def __init__(self, connect: Callable[[], AbstractAsyncContextManager[tuple[Any, Any]]], where: str = "") -> None:
        self._connect = connect
        self._where = where
        self._cm: AbstractAsyncContextManager[tuple[Any, Any]] | None = None
        self.lost = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return None

    def describe_exit(self) -> str:
        return f"closed the connection{f' ({self._where})' if self._where else ''}"

    def stderr_tail(self) -> str:
        return ""

    async def wait_exit(self, seconds: float) -> None:
        return None

    async def __aenter__(self) -> tuple[Any, Any]:
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._cm is not None
        await self._cm.__aexit__(exc_type, exc, tb)


class Tap:
    """The session's read stream, looked at in order: a tool list change is known before the answer after it,
    and the end of the stream (``ended`` is called) marks the transport lost whatever the transport is."""

    __slots__ = ("_ended", "_inner", "_seen")

    def __init__(self, inner: Any, seen: Callable[[object], None], ended: Callable[[], None]) -> None:
        self._inner, self._seen, self._ended = inner, seen, ended

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise
        self._seen(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Tap:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Tap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Connection:
    """One running server process and its session, served by its own task (``MCPServer._serve``)."""

    __slots__ = ("ended", "offers", "ready", "session", "stop", "task", "transport")

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.session: ClientSession | None = None
        self.offers: frozenset[str] = frozenset()  # "resources", "prompts": see _mcp_extra.offers
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.ended = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.session is not None and not self.ended.is_set() and not self.transport.lost.is_set()


async def first(*events: asyncio.Event) -> None:
    """Wait until one of ``events`` is set."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def settle(conn: Connection, exc: BaseException, seconds: float) -> None:
    """After a request failed with the SDK's own "Connection closed" (the session ended under it: e.g. a remote
    transport's task group broke when the server went away, which cancels the session rather than ending its
    stream), wait up to ``seconds`` for the connection's task to end, so that the failure is reported as the
    server's and the next call starts it again. Any other failure returns at once."""
    error = getattr(exc, "error", None)
    if conn.ended.is_set() or conn.transport.lost.is_set():
        return
    if (
        getattr(error, "code", None) != mcp_types.CONNECTION_CLOSED
        or getattr(error, "message", "") != "Connection closed"
    ):
        return
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await conn.ended.wait()


async def stop(conn: Connection) -> None:
    """Let the connection's task leave its session and transport (the process is stopped there): shielded
    from the caller's cancellation, and bounded (the transport bounds every wait)."""
    conn.stop.set()
    task = conn.task
    if task is None:
        return
    if not conn.ready.done():
        task.cancel()  # still starting: nothing waits for ``stop`` yet
    with anyio.CancelScope(shield=True):
        await asyncio.wait([task])
    if not task.cancelled():
        task.exception()  # retrieved: it was reported through ``ready`` or logged


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of the innermost meaningful error (a transport's task group wraps what broke it)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def stderr_note(transport: Transport) -> str:
    tail = transport.stderr_tail()
    return f"; stderr: {tail[-1000:]}" if tail else ""


def json_value(value: object) -> JSONValue:
    try:
        return thaw(value)
    except TypeError:
        return repr(value)


def progress_callback(
    emit: Callable[[Any], None], ctx: ToolContext
) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """The SDK progress callback of one call: each notification as a :class:`~hookloop.timeline.ToolProgress`."""

    async def progress(value: float, total: float | None, message: str | None) -> None:
        emit(ToolProgress(call_id=ctx.call_id, tool_name=ctx.tool_name, progress=value, total=total, message=message))

    return progress


async def list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every tool the server lists (all pages)."""
    tools: list[mcp_types.Tool] = []
    page = await session.list_tools()
    while True:
        tools.extend(page.tools)
        cursor = field(page, "next_cursor", "nextCursor")
        if not cursor:
            return tools
        page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))


async def all_pages(
    request: Callable[[Callable[[ClientSession, Any], Any]], Awaitable[Any]],
    attr: str,
    send: Callable[[ClientSession, Any], Any],
) -> list[Any]:
    """Every item of a paginated listing: ``send(session, params)`` per page through ``request``."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
        page = await request(lambda s, _, p=params: send(s, p))  # type: ignore[misc]
        items.extend(getattr(page, attr))
        cursor = field(page, "next_cursor", "nextCursor")
        if not cursor:
            return items
