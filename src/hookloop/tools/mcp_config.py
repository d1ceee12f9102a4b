"""MCP server configuration in Claude Code's format: ``.mcp.json``, ``--mcp-config`` files and the ``mcpServers``
key of settings files.

::

    {"mcpServers": {
        "github": {"type": "http", "url": "https://api.example.com/mcp",
                   "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                   "env": {"MEMORY_FILE": "${HOME}/memory.json"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:${PORT:-8000}/sse"}}}

A server is ``stdio`` (``command``, optional ``args``, ``env``; ``"type": "stdio"`` may be omitted), ``http``
(streamable HTTP) or ``sse`` (``url``, optional ``headers``). ``${VAR}`` and ``${VAR:-default}`` are expanded as
Claude Code does, in ``command``, ``args``, ``env`` values, ``url`` and ``headers`` values; a variable that is
not set and has no default is an error. Unknown keys of a server (Claude Code's ``oauth``, ``headersHelper``, …)
are ignored. Every problem raises :class:`MCPConfigError` naming the file and the field
(``.mcp.json: mcpServers.github.url: …``).

Project servers (``.mcp.json`` and the ``mcpServers`` of the project's own settings files) run only once
approved, as in Claude Code: ``enableAllProjectMcpServers: true``, or the name in ``enabledMcpjsonServers``;
a name in ``disabledMcpjsonServers`` never runs. See :func:`approve_project_servers` for which settings
files may approve.

This module does not need the ``mcp`` extra; :meth:`MCPServerConfig.open` does.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from hookloop._frozen import FrozenDict, empty, freeze_object
from hookloop.errors import HookloopError

if TYPE_CHECKING:
    from hookloop.tools._mcp_caps import MCPClientOptions
    from hookloop.tools.mcp import MCPServer

__all__ = [
    "MCPConfigError",
    "MCPServerConfig",
    "MCPServerOptions",
    "ProjectApproval",
    "RemoteOptions",
    "approve_project_servers",
    "expand_vars",
    "load_mcp_config",
    "parse_mcp_servers",
]

Transport = Literal["stdio", "http", "sse"]
_VAR = re.compile(r"\$\{([^}:]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


class MCPConfigError(HookloopError, ValueError):
    """An MCP server configuration that cannot be used; the message names the file and the field."""


class MCPServerOptions(TypedDict, total=False):
    """The options every way of opening an MCP server takes (``MCPServer.open_stdio``, ``open_http``,
    ``open_sse``, their ``async with`` forms, :meth:`MCPServerConfig.open`); the rules are in
    :mod:`hookloop.tools.mcp`."""

    trust_annotations: bool
    """Let the server's ``readOnlyHint`` mark tools read-only for permissions (default False)."""
    sequential: bool
    """Run this server's calls that may write one after another (default True)."""
    init_timeout: float
    """Seconds for ``initialize`` and the first tool listing (default 30, or ``MCP_TIMEOUT`` in ms)."""
    call_timeout: float | None
    """Seconds a call waits for its answer (default None: no limit of its own)."""
    resource_tools: bool
    """Offer the resource and prompt tools when the server has resources or prompts (default True)."""
    client: MCPClientOptions | None
    """What to answer the server's roots, sampling and elicitation requests (default: roots of the bound
    Worker, no sampling, elicitation through the Worker's routing, else declined)."""


class RemoteOptions(MCPServerOptions, total=False):
    """``MCPServer.http`` / ``sse``: :class:`MCPServerOptions` and the connection's own (see ``open_http``)."""

    headers: Mapping[str, str] | None
    bearer_token_env: str | None
    http_timeout: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPServerConfig:
    """One configured MCP server, variables expanded. ``source`` is the file it came from; ``project`` is true
    for a project server (it needs approval before it runs)."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: FrozenDict = field(default_factory=empty, repr=False)
    url: str | None = None
    headers: FrozenDict = field(default_factory=empty, repr=False)
    source: str = ""
    project: bool = False

    async def open(self, *, cwd: str | Path | None = None, **options: Unpack[MCPServerOptions]) -> MCPServer:
        """Start or connect to the server (``MCPServer.open_stdio`` / ``open_http`` / ``open_sse``, with
        ``options``); close it with ``aclose`` (from any task). ``cwd`` is where a stdio server starts."""
        from hookloop.tools.mcp import MCPServer

        if self.transport == "stdio":
            assert self.command is not None
            env = {k: str(v) for k, v in self.env.items()}
            return await MCPServer.open_stdio(self.name, self.command, self.args, env=env, cwd=cwd, **options)
        assert self.url is not None
        opener = MCPServer.open_http if self.transport == "http" else MCPServer.open_sse
        headers = {k: str(v) for k, v in self.headers.items()}
        return await opener(self.name, self.url, headers=headers, **options)

    @contextlib.asynccontextmanager
    async def session(
        self, *, cwd: str | Path | None = None, **options: Unpack[MCPServerOptions]
    ) -> AsyncIterator[MCPServer]:
        """``async with config.session() as server``: :meth:`open` (same options), then ``aclose`` on exit."""
        server = await self.open(cwd=cwd, **options)
        try:
            yield server
        finally:
            await server.aclose()


def expand_vars(text: str, environ: Mapping[str, str], where: str) -> str:
    """``${VAR}`` and ``${VAR:-default}`` in ``text``, as Claude Code expands them: a set variable (even empty)
    gives its value, an unset one its default. Unset without a default raises :class:`MCPConfigError` (Claude
    Code reports the server's config as missing variables and does not start it)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise MCPConfigError(f"{where}: environment variable ${{{name}}} is not set (and has no :-default)")

    return _VAR.sub(one, text)


def load_mcp_config(
    path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None, project: bool = False
) -> list[MCPServerConfig]:
    """The servers of an MCP config file (``{"mcpServers": {...}}``), in file order. ``project`` marks them as
    project servers (``.mcp.json``). Raises :class:`MCPConfigError` for a missing, unreadable or malformed file
    (line and column for bad JSON) or a bad server entry."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MCPConfigError(f"{file}: no such MCP config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MCPConfigError(f"{file}: cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MCPConfigError(f"{file}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise MCPConfigError(f'{file}: expected a JSON object with an "mcpServers" object')
    if "mcpServers" not in data:
        raise MCPConfigError(f'{file}: no "mcpServers" key')
    return parse_mcp_servers(data["mcpServers"], file=file, environ=environ, project=project)


def parse_mcp_servers(
    servers: object,
    *,
    file: str,
    environ: Mapping[str, str] | None = None,
    project: bool = False,
    key: str = "mcpServers",
) -> list[MCPServerConfig]:
    """Parse the value of an ``mcpServers`` key read from ``file`` (for messages)."""
    env = os.environ if environ is None else environ
    if not isinstance(servers, dict):
        raise MCPConfigError(f"{file}: {key}: expected an object of servers, got {_kind(servers)}")
    return [_server(name, entry, file, f"{key}.{name}", env, project) for name, entry in servers.items()]


def _server(
    name: str, entry: object, file: str, where: str, environ: Mapping[str, str], project: bool
) -> MCPServerConfig:
    at = f"{file}: {where}"
    if not _NAME.match(name) or "__" in name:
        raise MCPConfigError(f"{at}: a server name may use letters, digits, '_' and '-' (no '__')")
    if not isinstance(entry, dict):
        raise MCPConfigError(f"{at}: expected an object, got {_kind(entry)}")
    if "type" in entry and not isinstance(entry["type"], str):
        raise MCPConfigError(f'{at}.type: expected "stdio", "http" or "sse", got {_kind(entry["type"])}')
    kind = entry.get("type", "stdio" if "command" in entry or "url" not in entry else None)
    if kind is None:
        raise MCPConfigError(f'{at}: a server with "url" needs "type": "http" or "sse"')
    if kind not in ("stdio", "http", "sse"):
        raise MCPConfigError(f'{at}.type: expected "stdio", "http" or "sse", got {kind!r}')

    def text(field_name: str, value: object) -> str:
        if not isinstance(value, str):
            raise MCPConfigError(f"{at}.{field_name}: expected a string, got {_kind(value)}")
        return expand_vars(value, environ, f"{at}.{field_name}")

    def strings(field_name: str) -> dict[str, str]:
        value = entry.get(field_name, {})
        if not isinstance(value, dict):
            raise MCPConfigError(f"{at}.{field_name}: expected an object of strings, got {_kind(value)}")
        return {str(k): text(f"{field_name}.{k}", v) for k, v in value.items()}

    if kind == "stdio":
        if "url" in entry:
            raise MCPConfigError(f'{at}: a stdio server has "command", not "url"')
        if "command" not in entry:
            raise MCPConfigError(f'{at}.command: missing (a stdio server needs "command")')
        command = text("command", entry["command"])
        if not command.strip():
            raise MCPConfigError(f"{at}.command: empty")
        raw_args = entry.get("args", [])
        if not isinstance(raw_args, list):
            raise MCPConfigError(f"{at}.args: expected a list of strings, got {_kind(raw_args)}")
        args = tuple(text(f"args[{i}]", a) for i, a in enumerate(raw_args))
        return MCPServerConfig(
            name=name,
            transport="stdio",
            command=command,
            args=args,
            env=freeze_object(strings("env")),
            source=file,
            project=project,
        )
    if "command" in entry:
        raise MCPConfigError(f'{at}: an {kind} server has "url", not "command"')
    if "url" not in entry:
        raise MCPConfigError(f'{at}.url: missing (an {kind} server needs "url")')
    url = text("url", entry["url"])
    if not re.match(r"^https?://[^/\s]+", url):
        raise MCPConfigError(f"{at}.url: expected an http:// or https:// URL, got {url!r}")
    headers = strings("headers")
    for header, value in headers.items():
        if not re.match(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", header):
            raise MCPConfigError(f"{at}.headers: {header!r} is not a valid header name")
        if re.search(r"[\r\n\x00]", value):
            raise MCPConfigError(f"{at}.headers.{header}: the value holds CR, LF or NUL")
    return MCPServerConfig(
        name=name, transport=kind, url=url, headers=freeze_object(headers), source=file, project=project
    )


@dataclass(frozen=True, slots=True)
class ProjectApproval:
    """Which project servers may run: ``approved``, ``pending`` (nobody said; ask or skip) and ``disabled``."""

    approved: tuple[MCPServerConfig, ...]
    pending: tuple[MCPServerConfig, ...]
    disabled: tuple[MCPServerConfig, ...]


def approve_project_servers(
    servers: Iterable[MCPServerConfig],
    trusted_layers: Sequence[Mapping[str, object]],
    all_layers: Sequence[Mapping[str, object]],
) -> ProjectApproval:
    """Split project servers by the approval settings, as Claude Code does.

    ``enableAllProjectMcpServers`` and ``enabledMcpjsonServers`` are read from ``trusted_layers`` only —
    the user's own settings files and those named on the command line, never the project's files (a cloned
    repository cannot approve its own servers). ``disabledMcpjsonServers`` is read from every layer and wins.
    Non-project servers are returned as approved.
    """
    enable_all = False
    enabled: set[str] = set()
    disabled: set[str] = set()
    for layer in trusted_layers:
        if layer.get("enableAllProjectMcpServers") is True:
            enable_all = True
        names = layer.get("enabledMcpjsonServers")
        if isinstance(names, list):
            enabled.update(n for n in names if isinstance(n, str))
    for layer in all_layers:
        names = layer.get("disabledMcpjsonServers")
        if isinstance(names, list):
            disabled.update(n for n in names if isinstance(n, str))
    approved: list[MCPServerConfig] = []
    pending: list[MCPServerConfig] = []
    off: list[MCPServerConfig] = []
    for server in servers:
        if server.project and server.name in disabled:
            off.append(server)
        elif not server.project or enable_all or server.name in enabled:
            approved.append(server)
        else:
            pending.append(server)
    return ProjectApproval(tuple(approved), tuple(pending), tuple(off))


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
