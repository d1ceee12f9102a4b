"""MCP tool servers (SPEC §1): the tools of a Model Context Protocol server, as hookloop tools.

Needs the ``mcp`` extra (``pip install 'hookloop[mcp]'``)::

    async with MCPServer.stdio("github", "npx", ["-y", "@modelcontextprotocol/server-github"]) as github:
        worker = Worker(client, tools=[github])
        await worker.run("...")

Each tool of the server is named ``mcp__<server>__<tool>`` (Claude Code's naming), so permission rules such as
``mcp__github__*`` and hook matchers apply unchanged. Arguments are checked against the tool's JSON schema
(``jsonschema``, which the MCP SDK depends on) before the server is called.

Remote servers: :meth:`MCPServer.http` (streamable HTTP) and :meth:`MCPServer.sse`, with ``headers`` and
``bearer_token_env``. Configuration in Claude Code's format (``.mcp.json``): :func:`load_mcp_config` gives
:class:`MCPServerConfig` entries to open. What the client answers a server's roots, sampling and elicitation
requests is set by :class:`MCPClientOptions` and :meth:`MCPServer.bind` (see :mod:`hookloop.tools._mcp_caps`).

Structured concurrency: the SDK's stdio transport and session are anyio context managers holding a task group.
:meth:`MCPServer.open_stdio` enters them into an :class:`~contextlib.AsyncExitStack` that :meth:`MCPServer.aclose`
exits, so **open_stdio and aclose must be called from the same task** (or use the ``async with`` forms, which do
that for you). Tool calls may come from any task while the server is open, e.g. the Worker's parallel batch.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import jsonschema  # type: ignore[import-untyped]
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.client.stdio import get_default_environment

from hookloop._frozen import freeze_object, thaw_object
from hookloop.errors import HookloopError
from hookloop.tools._base import ToolContext, ToolFailure, ToolInputError, ToolMeta, ToolOutput
from hookloop.tools._elicitation import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResponse,
    ElicitationResultHook,
    ElicitationRouting,
    elicitation_routing,
)
from hookloop.tools._mcp_caps import ClientState, MCPClientOptions
from hookloop.tools.mcp_config import MCPConfigError, MCPServerConfig, load_mcp_config

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = [
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
    "MCPTool",
    "elicitation_routing",
    "load_mcp_config",
    "mcp_tool_name",
]


class MCPServerError(HookloopError, RuntimeError):
    """An MCP server could not be started, initialised or listed (the message names the server)."""


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, with characters outside ``[A-Za-z0-9_-]`` replaced by ``_`` (as Claude Code)."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


def _field(obj: object, snake: str, camel: str, default: Any = None) -> Any:
    """Read an SDK model field by its mcp 2.x (snake_case) or 1.x (camelCase) name."""
    value = getattr(obj, snake, None)
    if value is None:
        value = getattr(obj, camel, None)
    return default if value is None else value


def _summarise(block: object) -> str:
    """One content block of a tool result as text: text as is, anything else as a short bracketed note."""
    kind = getattr(block, "type", type(block).__name__)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = _field(block, "mime_type", "mimeType", "?")
        data = str(getattr(block, "data", ""))
        size = len(data) * 3 // 4 - data[-2:].count("=")  # base64 → decoded bytes
        return f"[{kind}: {mime}, {size} bytes]"
    if kind == "resource_link":
        return f"[resource link: {getattr(block, 'uri', '?')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = _field(resource, "mime_type", "mimeType", "?")
        return f"[resource: {getattr(resource, 'uri', '?')}, {mime}]"
    return f"[{kind} content]"


def _error_lines(errors: Sequence[Any]) -> list[str]:
    """``field 'x': message`` per JSON-schema error; a missing required property is named as the field."""
    lines: dict[str, None] = {}
    for err in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        path = [str(p) for p in err.absolute_path]
        if err.validator == "required" and isinstance(err.instance, Mapping):
            missing = [str(p) for p in err.validator_value if p not in err.instance]
            for name in missing:
                lines[f"field '{'.'.join([*path, name])}': required field is missing"] = None
            if missing:
                continue
        lines[f"field '{'.'.join(path) or '(arguments)'}': {err.message}"] = None
    return list(lines)


class MCPTool:
    """One tool of an open :class:`MCPServer` (implements :class:`hookloop.tools.Tool`)."""

    __slots__ = ("_meta", "_remote_name", "_server", "_validator")

    def __init__(self, server: MCPServer, remote: mcp_types.Tool) -> None:
        self._server = server
        self._remote_name = remote.name
        schema = dict(_field(remote, "input_schema", "inputSchema", {}) or {"type": "object"})
        annotations = remote.annotations
        read_only = _field(annotations, "read_only_hint", "readOnlyHint", False) if annotations is not None else False
        self._meta = ToolMeta(
            name=mcp_tool_name(server.name, remote.name),
            description=remote.description or "",
            input_schema=freeze_object(schema),
            read_only=bool(read_only),
            server=f"mcp__{server.name}",
        )
        try:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            self._validator: Any = cls(schema)
        except jsonschema.exceptions.SchemaError:
            self._validator = None  # a schema we cannot read: the server validates

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    @property
    def remote_name(self) -> str:
        """The tool's name on the MCP server."""
        return self._remote_name

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        plain = thaw_object(arguments)
        if self._validator is not None:
            try:
                errors = list(self._validator.iter_errors(plain))
            except Exception:  # e.g. an unresolvable $ref: leave validation to the server
                errors = []
            if errors:
                raise ToolInputError(
                    f"invalid arguments for tool {self._meta.name!r}: " + "; ".join(_error_lines(errors))
                )
        return plain

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        return await self._server.call_tool(self._remote_name, arguments)

    def __repr__(self) -> str:
        return f"<MCPTool {self._meta.name!r}>"


class MCPServer:
    """An MCP server's tools as a hookloop tool server (``Worker(tools=[server])``).

    Open with :meth:`open_stdio` and close with :meth:`aclose` from the same task, or use
    ``async with MCPServer.stdio(...) as server`` / ``async with await MCPServer.open_stdio(...) as server``.
    The tool list is read once, when the server is opened.
    """

    def __init__(self, name: str, session: ClientSession, stack: contextlib.AsyncExitStack) -> None:
        """Internal: use :meth:`open_stdio` or :meth:`stdio`."""
        self._name = name
        self._session = session
        self._stack = stack
        self._closed = False
        self._tools: tuple[MCPTool, ...] = ()
        self._caps = ClientState(name, None)  # replaced by the opener with the session's own

    @property
    def name(self) -> str:
        return self._name

    @property
    def closed(self) -> bool:
        return self._closed

    def list_tools(self) -> Sequence[MCPTool]:
        return self._tools

    @classmethod
    async def open_stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        client: MCPClientOptions | None = None,
    ) -> MCPServer:
        """Start ``command args`` as a stdio MCP server, initialise the session and list its tools.

        ``env`` is added to the SDK's default (minimal) environment; ``client`` says what to answer the
        server's roots, sampling and elicitation requests (:meth:`bind` names the Worker that answers them).
        Call :meth:`aclose` from this same task.
        Raises :class:`MCPServerError` when the process cannot be started or does not answer as an MCP server.
        """
        if not name or "__" in name:
            raise ValueError(f"MCP server name must be non-empty and contain no '__': {name!r}")
        # Merged here: mcp 1.x replaces the default environment with ``env``, 2.x adds to it.
        full_env = {**get_default_environment(), **(env or {})}
        params = StdioServerParameters(command=command, args=list(args), env=full_env, cwd=cwd)
        stack = contextlib.AsyncExitStack()
        caps = ClientState(name, client)
        try:
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write, **caps.session_kwargs()))
            await session.initialize()
            server = cls(name, session, stack)
            server._caps = caps
            server._tools = tuple(MCPTool(server, remote) for remote in await _list_all_tools(session))
        except BaseException as exc:
            # Not under a shield scope of ours: the stack's task groups must exit in their own scope nesting
            # (the SDK shields the process shutdown itself).
            await stack.aclose()
            if isinstance(exc, Exception) and not isinstance(exc, MCPServerError):
                raise MCPServerError(
                    f"MCP server {name!r} ({command}): could not start: {type(exc).__name__}: {exc}"
                ) from exc
            raise
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
        client: MCPClientOptions | None = None,
    ) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.stdio(...) as server``: :meth:`open_stdio`, then :meth:`aclose` on exit."""
        server = await cls.open_stdio(name, command, args, env=env, cwd=cwd, client=client)
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
        client: MCPClientOptions | None = None,
    ) -> MCPServer:
        """Connect to a streamable-HTTP MCP server at ``url``, initialise the session and list its tools.

        ``headers`` go with every request; ``bearer_token_env`` names the environment variable holding a token
        sent as ``Authorization: Bearer …`` (read now; unset or empty raises :class:`MCPServerError`).
        ``http_timeout`` bounds each HTTP operation but the event stream's reads (default 30 s). Requests never
        leave the URL's origin. A rejected token (HTTP 401/403) raises :class:`MCPServerError` saying so. Call
        :meth:`aclose` from this same task.
        """
        from hookloop.tools._mcp_transport import open_remote, remote_target

        target = remote_target(
            "http", name, url, headers=headers, bearer_token_env=bearer_token_env, timeout=http_timeout
        )
        return await open_remote(cls, name, target, client)

    @classmethod
    async def open_sse(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token_env: str | None = None,
        http_timeout: float | None = None,
        client: MCPClientOptions | None = None,
    ) -> MCPServer:
        """Like :meth:`open_http`, over the (older) HTTP+SSE transport; ``url`` is the SSE endpoint."""
        from hookloop.tools._mcp_transport import open_remote, remote_target

        target = remote_target(
            "sse", name, url, headers=headers, bearer_token_env=bearer_token_env, timeout=http_timeout
        )
        return await open_remote(cls, name, target, client)

    @classmethod
    @contextlib.asynccontextmanager
    async def http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token_env: str | None = None,
        http_timeout: float | None = None,
        client: MCPClientOptions | None = None,
    ) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.http(...) as server``: :meth:`open_http`, then :meth:`aclose` on exit."""
        server = await cls.open_http(
            name, url, headers=headers, bearer_token_env=bearer_token_env, http_timeout=http_timeout, client=client
        )
        try:
            yield server
        finally:
            await server.aclose()

    @classmethod
    @contextlib.asynccontextmanager
    async def sse(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token_env: str | None = None,
        http_timeout: float | None = None,
        client: MCPClientOptions | None = None,
    ) -> AsyncIterator[MCPServer]:
        """``async with MCPServer.sse(...) as server``: :meth:`open_sse`, then :meth:`aclose` on exit."""
        server = await cls.open_sse(
            name, url, headers=headers, bearer_token_env=bearer_token_env, http_timeout=http_timeout, client=client
        )
        try:
            yield server
        finally:
            await server.aclose()

    def bind(self, worker: Worker) -> None:
        """Answer this server's roots, sampling and elicitation requests with ``worker``: its workspace is the
        default root, sampling (when the server's options allow it) uses its client, model and
        ``pre_llm_request`` hooks, and elicitations go through its :func:`elicitation_routing`. Binding
        again replaces the Worker; it does not add the tools (``Worker(tools=[server])`` or ``add_tool``)."""
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
        """End the session and stop the server process (idempotent). Call from the task that opened it."""
        if self._closed:
            return
        self._closed = True
        await self._stack.aclose()  # the SDK shields the process shutdown; no scope of ours may wrap its groups

    async def call_tool(self, tool: str, arguments: Mapping[str, object]) -> str | ToolOutput:
        """Call ``tool`` (its name on the server); text content joined, ``isError`` → an error output.

        Protocol and transport errors raise :class:`ToolFailure` naming the server and tool; cancellation
        propagates.
        """
        where = f"MCP server {self._name!r}, tool {tool!r}"
        if self._closed:
            raise ToolFailure(f"{where}: the server is closed")
        try:
            result = await self._session.call_tool(tool, thaw_object(arguments))
        except Exception as exc:
            raise ToolFailure(f"{where}: {type(exc).__name__}: {exc}") from exc
        text = "\n".join(_summarise(block) for block in result.content)
        if _field(result, "is_error", "isError", False):
            return ToolOutput(content=text or f"{where}: failed without a message", is_error=True)
        return text

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._tools)} tools"
        return f"<MCPServer {self._name!r} ({state})>"


async def _list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    page = await session.list_tools()
    while True:
        tools.extend(page.tools)
        cursor = _field(page, "next_cursor", "nextCursor")
        if not cursor:
            return tools
        page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))
