"""MCP tool servers (SPEC §1): the tools of a Model Context Protocol server, as hookloop tools.

Needs the ``mcp`` extra (``pip install 'hookloop[mcp]'``)::

    async with MCPServer.stdio("github", "npx", ["-y", "@modelcontextprotocol/server-github"]) as github:
        worker = Worker(client, tools=[github])
        await worker.run("...")

Each tool of the server is named ``mcp__<server>__<tool>`` (Claude Code's naming), so permission rules such as
``mcp__github__*`` and hook matchers apply unchanged. Arguments are checked against the tool's JSON schema
(``jsonschema``, which the MCP SDK depends on) before the server is called.

**Transports.** A local process over stdio (:meth:`MCPServer.stdio` / :meth:`~MCPServer.open_stdio`), or a remote
server over streamable HTTP (:meth:`~MCPServer.http` / :meth:`~MCPServer.open_http`) or HTTP+SSE
(:meth:`~MCPServer.sse` / :meth:`~MCPServer.open_sse`) with ``headers`` and a ``bearer_token_env`` (what a
remote connection guarantees: :mod:`hookloop.tools._mcp_transport`). Configuration in Claude Code's format
(``.mcp.json``, ``--mcp-config``): :func:`load_mcp_config` gives :class:`MCPServerConfig` entries to open.
Every transport takes the same options and follows the same rules:

- **Annotations are the server's claims.** A tool's ``readOnlyHint`` does not make it read-only for permissions
  (``ToolMeta.read_only``, which lets the default modes run it unasked) unless the server was opened with
  ``trust_annotations=True``; untrusted, every call of the server is asked about in the default mode like any
  other tool (rules still apply). :attr:`MCPTool.annotations` keeps the hints as the server gave them.
- **Calls of one server that may write run one after another.** Every tool not annotated read-only is
  ``sequential`` (``ToolMeta.sequential``): within one model reply, such calls of this server run in the
  model's order, one at a time, while other calls run in parallel (``sequential=False`` on the server: all in
  parallel). This uses the server's own ``readOnlyHint`` whether trusted or not: it only orders its own calls.
- **Lifecycle.** The server must answer ``initialize`` (and the first tool listing) within ``init_timeout``
  seconds (default 30, or Claude Code's ``MCP_TIMEOUT`` in milliseconds when it is set: a server fetched by
  ``npx``/``uvx`` on first use, or started on a busy machine, needs more than a few seconds). A call waits at
  most ``call_timeout`` seconds for its answer (default: no limit of its
  own; the Worker's ``tool_timeout`` still applies). When the server process dies (or a remote server goes
  away or ends the session), the call that saw it fails with an error naming the server, its exit status and the
  end of its stderr (for a remote server: its URL); the next call starts (connects) it again.
  :meth:`MCPServer.aclose` stops the process and everything it started (its process group, and processes that
  left the group: see :mod:`hookloop.tools._mcp_stdio`), or closes the remote session. The connection is served
  by a task of its own, so the server may be opened, used and closed from any tasks.
- **The tool list follows the server.** ``notifications/tools/list_changed`` makes the server list its tools
  again (before the call that caused it returns, when it came during a call); :attr:`MCPServer.tools_generation`
  changes, and a Worker's next model request carries the new list (:class:`hookloop.tools.ToolRegistry`).
- **Resources and prompts** are reachable as methods (:meth:`MCPServer.list_resources`, ``read_resource``,
  ``list_prompts``, ``get_prompt``) and, when the server offers them, as tools the model can call:
  ``mcp__<server>__list_resources``, ``…__read_resource`` (``uri``), ``…__list_prompts``, ``…__get_prompt``
  (``name``, ``arguments``); a server tool of the same name wins. ``resource_tools=False`` leaves them out.
- **Notifications reach the timeline**: progress of a call as :class:`hookloop.timeline.ToolProgress`, log
  messages as :class:`hookloop.timeline.ToolServerLog` (see there).
- **Client capabilities**: what hookloop answers a server's roots, sampling and elicitation requests is set by
  ``client=``:class:`MCPClientOptions` and :meth:`MCPServer.bind` (the Worker whose workspace, model and
  elicitation routing answer them; see :mod:`hookloop.tools._mcp_caps`). Sampling is off unless opted in; an
  elicitation nobody answers is declined.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Unpack

import anyio
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.client.stdio import get_default_environment

from hookloop._frozen import thaw_object
from hookloop.errors import HookloopError
from hookloop.timeline import ToolServerLog
from hookloop.tools._base import Tool, ToolContext, ToolFailure, ToolOutput
from hookloop.tools._elicitation import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResponse,
    ElicitationResultHook,
    ElicitationRouting,
    elicitation_routing,
)
from hookloop.tools._mcp_caps import ClientState, MCPClientOptions
from hookloop.tools._mcp_conn import (
    Connection,
    Tap,
    Transport,
    describe_error,
    first,
    json_value,
    list_all_tools,
    progress_callback,
    settle,
    stderr_note,
    stop,
)
from hookloop.tools._mcp_content import field, render, to_parts
from hookloop.tools._mcp_extra import ResourceMethods, extra_tools, offers
from hookloop.tools._mcp_stdio import GRACE, StdioTransport
from hookloop.tools._mcp_tool import MCPTool, mcp_tool_name
from hookloop.tools.mcp_config import (
    MCPConfigError,
    MCPServerConfig,
    MCPServerOptions,
    RemoteOptions,
    load_mcp_config,
)

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = [
    "DEFAULT_INIT_TIMEOUT",
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResponse",
    "ElicitationResultHook",
    "ElicitationRouting",
    "MCPClientOptions",
    "MCPConfigError",
    "MCPServer",
    "MCPServerConfig",
    "MCPServerError",
    "MCPServerOptions",
    "MCPTool",
    "RemoteOptions",
    "default_init_timeout",
    "elicitation_routing",
    "load_mcp_config",
    "mcp_tool_name",
]

logger = logging.getLogger("hookloop")

_LIST_CHANGED = "notifications/tools/list_changed"
_KEPT_LOGS = 100


DEFAULT_INIT_TIMEOUT = 30.0
"""Seconds an MCP server has to answer ``initialize`` when neither ``init_timeout`` nor ``MCP_TIMEOUT`` says."""


def default_init_timeout() -> float:
    """``MCP_TIMEOUT`` (milliseconds, Claude Code's variable) when it is a positive number, else 30 seconds."""
    raw = os.environ.get("MCP_TIMEOUT", "").strip()
    try:
        value = float(raw) / 1000 if raw else 0.0
    except ValueError:
        value = 0.0
    return value if value > 0 and math.isfinite(value) else DEFAULT_INIT_TIMEOUT


class MCPServerError(HookloopError, RuntimeError):
    """An MCP server could not be started, initialised or listed (the message names the server)."""


class MCPServer(ResourceMethods):
    """An MCP server's tools as a hookloop tool server (``Worker(tools=[server])``); the rules are in the
    module's docstring, the resource and prompt methods in :class:`~hookloop.tools._mcp_extra.ResourceMethods`.

    Open with :meth:`open_stdio`, :meth:`open_http` or :meth:`open_sse` (or ``async with MCPServer.stdio(...)
    as server``, ``http``, ``sse``) and close with :meth:`aclose`, from any task.
    """

    def __init__(
        self,
        name: str,
        make_transport: Callable[[], Transport],
        *,
        trust_annotations: bool = False,
        sequential: bool = True,
        init_timeout: float | None = None,
        call_timeout: float | None = None,
        resource_tools: bool = True,
        where: str = "",
        client: MCPClientOptions | None = None,
        session_options: Mapping[str, Any] | None = None,
        explain: Callable[[str, MCPServerError], str | None] | None = None,
    ) -> None:
        """Internal: use the ``open_*`` methods or their ``async with`` forms. A transport comes in as
        ``make_transport`` (a fresh :class:`~hookloop.tools._mcp_conn.Transport` per start, e.g. a
        ``ContextTransport`` over an SDK client transport); ``client`` gives the roots, sampling and elicitation
        callbacks (:class:`~hookloop.tools._mcp_caps.ClientState`), ``session_options`` more (or other)
        ``ClientSession`` arguments; ``where`` is put after the name in errors; ``explain(name, error)`` may word a
        failed (re)start anew (a remote transport's authentication failure). Then ``await server._start()``."""
        if not name or "__" in name:
            raise ValueError(f"MCP server name must be non-empty and contain no '__': {name!r}")
        if init_timeout is None:
            init_timeout = default_init_timeout()
        for what, value in (("init_timeout", init_timeout), ("call_timeout", call_timeout)):
            if value is not None and not value > 0:
                raise ValueError(f"MCP server {name!r}: {what} must be a positive number of seconds, got {value!r}")
        self._name = name
        self._make_transport = make_transport
        self.trust_annotations = trust_annotations
        self.sequential = sequential
        self._init_timeout = init_timeout
        self._call_timeout = call_timeout
        self._resource_tools = resource_tools
        self._where = where
        self._caps = ClientState(name, client)
        self._explain = explain
        self._session_options = {**self._caps.session_kwargs(), **(session_options or {})}
        self._closed = False
        self._conn: Connection | None = None
        self._starting = asyncio.Lock()
        self._refreshing = asyncio.Lock()
        self._stale = False
        self._tools: tuple[Tool, ...] = ()
        self._remote: list[mcp_types.Tool] = []
        self._generation = 0
        self._emitters: dict[str, Callable[[Any], None]] = {}
        self._logs: deque[ToolServerLog] = deque(maxlen=_KEPT_LOGS)

    @property
    def name(self) -> str:
        return self._name

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def tools_generation(self) -> int:
        """Changes whenever the tool list changes (a ``list_changed`` notification, a restart)."""
        return self._generation

    @property
    def pid(self) -> int | None:
        """The running server process's pid (its process group id), or None."""
        conn = self._conn
        return None if conn is None or not conn.alive else conn.transport.pid

    def list_tools(self) -> Sequence[Tool]:
        """The server's tools as last listed, with the resource and prompt tools (see the module docstring)."""
        return self._tools

    # -- opening and closing -------------------------------------------------------------------------------

    @classmethod
    async def open_stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        trust_annotations: bool = False,
        sequential: bool = True,
        init_timeout: float | None = None,
        call_timeout: float | None = None,
        resource_tools: bool = True,
        client: MCPClientOptions | None = None,
    ) -> MCPServer:
        """Start ``command args`` as a stdio MCP server, initialise the session and list its tools.

        ``env`` is added to the SDK's default (minimal) environment. ``trust_annotations``: let the server's
        ``readOnlyHint`` mark tools read-only for permissions. ``sequential``: run this server's calls that may
        write one after another. ``init_timeout`` / ``call_timeout``: seconds (see the module docstring).
        ``resource_tools``: offer the resource and prompt tools. ``client``: what to answer the server's roots,
        sampling and elicitation requests (:meth:`bind` names the Worker that answers them).
        Raises :class:`MCPServerError` when the process cannot be started, does not answer as an MCP server, or
        not within ``init_timeout``.
        """
        full_env = {**get_default_environment(), **(env or {})}
        argv = list(args)
        server = cls(
            name,
            lambda: StdioTransport(command, argv, env=full_env, cwd=cwd),
            trust_annotations=trust_annotations,
            sequential=sequential,
            init_timeout=init_timeout,
            call_timeout=call_timeout,
            resource_tools=resource_tools,
            where=f" ({command})",
            client=client,
        )
        await server._start()
        return server

    @classmethod
    @contextlib.asynccontextmanager
    async def stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Unpack[MCPServerOptions],
    ) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.stdio(...) as server``: :meth:`open_stdio` (same options), then :meth:`aclose`."""
        server = await cls.open_stdio(name, command, args, env=env, cwd=cwd, **options)
        try:
            yield server
        finally:
            await server.aclose()

    @classmethod
    async def open_http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token_env: str | None = None,
        http_timeout: float | None = None,
        **options: Unpack[MCPServerOptions],
    ) -> MCPServer:
        """Connect to a streamable-HTTP MCP server at ``url``, initialise the session and list its tools.

        ``headers`` go with every request; ``bearer_token_env`` names the environment variable holding a token
        sent as ``Authorization: Bearer …`` (read now; unset or empty raises :class:`MCPServerError`).
        ``http_timeout`` bounds each HTTP operation but the event stream's reads (default 30 s). Requests never
        leave the URL's origin. ``options`` are :meth:`open_stdio`'s (:class:`MCPServerOptions`). Raises
        ``ValueError`` for a bad URL or header, :class:`MCPServerError` when the server cannot be reached, does
        not answer as an MCP server (or not within ``init_timeout``), or rejects the credentials (HTTP 401/403,
        said so, naming where the token came from, never its value).
        """
        from hookloop.tools._mcp_transport import open_remote, remote_target

        target = remote_target(
            "http", name, url, headers=headers, bearer_token_env=bearer_token_env, timeout=http_timeout
        )
        return await open_remote(cls, name, target, **options)

    @classmethod
    async def open_sse(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token_env: str | None = None,
        http_timeout: float | None = None,
        **options: Unpack[MCPServerOptions],
    ) -> MCPServer:
        """Like :meth:`open_http`, over the (older) HTTP+SSE transport; ``url`` is the SSE endpoint."""
        from hookloop.tools._mcp_transport import open_remote, remote_target

        target = remote_target(
            "sse", name, url, headers=headers, bearer_token_env=bearer_token_env, timeout=http_timeout
        )
        return await open_remote(cls, name, target, **options)

    @classmethod
    @contextlib.asynccontextmanager
    async def http(cls, name: str, url: str, **options: Unpack[RemoteOptions]) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.http(name, url, ...) as server``: :meth:`open_http` (same options), then
        :meth:`aclose`."""
        server = await cls.open_http(name, url, **options)
        try:
            yield server
        finally:
            await server.aclose()

    @classmethod
    @contextlib.asynccontextmanager
    async def sse(cls, name: str, url: str, **options: Unpack[RemoteOptions]) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.sse(name, url, ...) as server``: :meth:`open_sse` (same options), then
        :meth:`aclose`."""
        server = await cls.open_sse(name, url, **options)
        try:
            yield server
        finally:
            await server.aclose()

    # -- client capabilities -----------------------------------------------------------------------------

    def bind(self, worker: Worker) -> None:
        """Answer this server's roots, sampling and elicitation requests with ``worker``: its workspace is the
        default root, sampling (when the server's options allow it) uses its client, model and
        ``pre_llm_request`` hooks, and elicitations go through its :func:`elicitation_routing`. Binding
        again replaces the Worker (a restarted connection keeps it); it does not add the tools
        (``Worker(tools=[server])`` or ``add_tool``)."""
        self._caps.worker = worker

    @property
    def client_options(self) -> MCPClientOptions:
        """What this server's roots, sampling and elicitation requests are answered with."""
        return self._caps.options

    async def __aenter__(self) -> MCPServer:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End the session and stop the server process and everything it started (idempotent; bounded)."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await stop(conn)

    async def _start(self) -> Connection:
        """Start the process and its session; wait until it is initialised and listed (or failed)."""
        conn = Connection(self._make_transport())
        conn.task = asyncio.get_running_loop().create_task(self._serve(conn), name=f"mcp server {self._name}")
        try:
            await asyncio.shield(conn.ready)
        except BaseException as exc:
            await stop(conn)
            if not isinstance(exc, Exception):
                raise
            if isinstance(exc, MCPServerError):
                error = exc
            else:
                error = MCPServerError(
                    f"MCP server {self._name!r}{self._where}: could not start: {describe_error(exc)}"
                )
                error.__cause__ = exc
            message = None if self._explain is None else self._explain(self._name, error)
            if message is not None:
                raise MCPServerError(message) from error.__cause__ or error
            raise error from error.__cause__
        if self._closed:  # closed while this (re)start ran: nothing may outlive aclose
            await stop(conn)
            raise MCPServerError(f"MCP server {self._name!r}: closed while starting")
        self._conn = conn
        return conn

    async def _serve(self, conn: Connection) -> None:
        """The connection's own task: enter the transport and session, initialise, wait for the end, exit.

        A failure to start is handed to :meth:`_start` through ``conn.ready`` once the process is stopped."""
        transport = conn.transport
        failure: Exception | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(transport)
                session = ClientSession(
                    Tap(read, self._seen, transport.lost.set),
                    write,
                    message_handler=self._on_message,
                    logging_callback=self._on_log,
                    **self._session_options,
                )
                await stack.enter_async_context(session)
                try:
                    with anyio.fail_after(self._init_timeout):
                        init = await session.initialize()
                        remote = await list_all_tools(session)
                        if self._resource_tools:
                            conn.offers = await offers(session, init.capabilities)
                except TimeoutError:
                    failure = MCPServerError(
                        f"MCP server {self._name!r}{self._where}: no answer to initialize within "
                        f"{self._init_timeout} seconds (init_timeout)" + stderr_note(transport)
                    )
                except Exception as exc:
                    failure = exc
                    if transport.lost.is_set():
                        await transport.wait_exit(GRACE)
                        failure = MCPServerError(f"MCP server {self._name!r}{self._where}: {transport.describe_exit()}")
                        failure.__cause__ = exc
                if failure is None:
                    conn.session = session
                    self._install(remote, conn)
                    conn.ready.set_result(None)
                    await first(conn.stop, transport.lost)
        except Exception as exc:  # the program could not be started, or leaving the session failed
            failure = failure or exc
        except BaseException:
            if not conn.ready.done():
                conn.ready.cancel()
            raise
        finally:
            conn.ended.set()
        if not conn.ready.done():
            conn.ready.set_exception(failure or MCPServerError(f"MCP server {self._name!r}: ended while starting"))
        elif failure is not None:
            logger.warning("MCP server %r: the connection ended with %s", self._name, describe_error(failure))

    async def _connection(self, where: str) -> Connection:
        """The live connection; a server that died is started again here (once for parallel callers)."""
        conn = self._conn
        if conn is not None and conn.alive:
            return conn
        async with self._starting:
            if self._closed:
                raise ToolFailure(f"{where}: the server is closed")
            conn = self._conn
            if conn is not None and conn.alive:
                return conn
            if conn is not None:
                self._conn = None
                await stop(conn)
            try:
                return await self._start()
            except MCPServerError as exc:
                raise ToolFailure(f"{where}: the server died and could not be restarted: {exc}") from exc

    # -- the tool list -----------------------------------------------------------------------------------

    def _install(self, remote: list[mcp_types.Tool], conn: Connection) -> None:
        unique: dict[str, Tool] = {}
        for listed in [MCPTool(self, r) for r in remote]:
            # Two remote names may give one hookloop name ("a.b", "a_b"): the first listed keeps it.
            unique.setdefault(listed.meta.name, listed)
        if self._resource_tools:
            for extra in extra_tools(self, conn.offers):
                unique.setdefault(extra.meta.name, extra)  # a server tool of the same name wins
        tools = list(unique.values())
        changed = [t.model_dump() for t in remote] != [t.model_dump() for t in self._remote]
        if changed or not self._tools:
            self._remote, self._tools = remote, tuple(tools)
            self._generation += 1

    def _seen(self, item: object) -> None:
        message = getattr(item, "message", None)
        if getattr(message, "method", None) == _LIST_CHANGED:
            self._stale = True

    async def _refresh(self) -> None:
        """List the tools again after ``list_changed`` (once for many notifications); a failure keeps the old."""
        async with self._refreshing:
            conn = self._conn
            if not self._stale or conn is None or not conn.alive:
                return
            self._stale = False
            assert conn.session is not None
            try:
                with anyio.fail_after(self._init_timeout):
                    remote = await list_all_tools(conn.session)
            except Exception as exc:
                logger.warning("MCP server %r: listing the tools again failed: %s", self._name, exc)
                return
            self._install(remote, conn)

    # -- notifications -----------------------------------------------------------------------------------

    async def _on_message(self, message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._stale = True
            await self._refresh()

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        event = ToolServerLog(
            server=f"mcp__{self._name}",
            level=str(params.level),
            data=json_value(params.data),
            logger=params.logger,
        )
        if not self._emitters:
            self._logs.append(event)
        for emit in tuple(self._emitters.values()):
            emit(event)

    # -- calls -------------------------------------------------------------------------------------------

    async def call_tool(
        self, tool: str, arguments: Mapping[str, object], *, ctx: ToolContext | None = None
    ) -> str | ToolOutput:
        """Call ``tool`` (its name on the server): all-text content joined; with images, audio or resources, a
        :class:`ToolOutput` whose ``parts`` carry them (see :func:`hookloop.tools._mcp_content.to_parts`) and
        whose ``content`` is the text rendering; ``isError`` → an error output.

        ``ctx`` (the Worker's, for a tool call) carries the timeline: the call's progress and the server's log
        messages go there. Protocol and transport errors, a crash of the server and ``call_timeout`` raise
        :class:`ToolFailure` naming the server and tool; cancellation propagates.
        """
        where = f"MCP server {self._name!r}, tool {tool!r}"
        result = await self.request(
            where, lambda s, progress: s.call_tool(tool, thaw_object(arguments), progress_callback=progress), ctx
        )
        text = render(result.content)
        if self._stale or self._refreshing.locked():
            await self._refresh()  # the answer came after a list_changed: the next model request sees it
        is_error = bool(field(result, "is_error", "isError", False))
        parts = to_parts(result.content)
        if is_error and not text:
            text = f"{where}: failed without a message"
        if parts:
            return ToolOutput(content=text, is_error=is_error, parts=parts)
        return ToolOutput(content=text, is_error=True) if is_error else text

    async def request(self, where: str, send: Callable[[ClientSession, Any], Any], ctx: ToolContext | None) -> Any:
        """Internal: one request on the live session (started again if it died), with the rules above."""
        if self._closed:
            raise ToolFailure(f"{where}: the server is closed")
        conn = await self._connection(where)
        assert conn.session is not None
        emit = None if ctx is None else ctx.emit
        progress = None
        if emit is not None and ctx is not None:
            key = ctx.call_id
            self._emitters[key] = emit
            while self._logs:
                emit(self._logs.popleft())
            progress = progress_callback(emit, ctx)
        try:
            if self._call_timeout is None:
                return await send(conn.session, progress)
            with anyio.fail_after(self._call_timeout):
                return await send(conn.session, progress)
        except TimeoutError:
            raise ToolFailure(f"{where}: no answer within {self._call_timeout} seconds (call_timeout)") from None
        except Exception as exc:
            await settle(conn, exc, GRACE)
            if conn.transport.lost.is_set() or conn.ended.is_set():
                await conn.transport.wait_exit(GRACE)
                raise ToolFailure(
                    f"MCP server {self._name!r} {conn.transport.describe_exit()} (during tool call: {where}); "
                    "the next call starts it again"
                ) from exc
            raise ToolFailure(f"{where}: {type(exc).__name__}: {exc}") from exc
        finally:
            if emit is not None and ctx is not None:
                self._emitters.pop(ctx.call_id, None)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._tools)} tools"
        return f"<MCPServer {self._name!r} ({state})>"
