"""MCP servers for ``hookloop run``: which are configured, which may start, and opening them around the run.

Sources, lowest precedence first (a later server of the same name replaces an earlier one): ``mcpServers`` of the
user's settings files, the project's ``.mcp.json``, ``mcpServers`` of the project's settings files, of the
``--settings`` files, then each ``--mcp-config`` file. ``--strict-mcp-config`` keeps only the ``--mcp-config``
servers. Project servers (``.mcp.json``, project settings) start only when approved
(:func:`hookloop.tools.mcp_config.approve_project_servers`); at a terminal the person is asked about each one
that is neither approved nor disabled, otherwise it is skipped with a note saying how to approve it. ``--yes``
does not approve servers: it answers permission asks, it does not trust code.

A server that fails to start is reported and the run goes on without it (as Claude Code does); a bad
configuration is a usage error naming the file and field.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookloop.command_hooks.config import resolve_hookloop_home, settings_sources
from hookloop.tools.mcp_config import (
    MCPConfigError,
    MCPServerConfig,
    approve_project_servers,
    load_mcp_config,
    parse_mcp_servers,
)

if TYPE_CHECKING:
    from rich.console import Console

    from hookloop.cli._session import RunOptions
    from hookloop.worker import Worker

__all__ = ["MCPPlan", "describe", "plan_mcp_servers", "run_with_mcp_servers", "session_mcp_plan"]

_USER_KINDS = frozenset({"claude-user", "hookloop-user"})


@dataclass(slots=True)
class MCPPlan:
    """The servers to start, in order, and what to tell the user about the others."""

    servers: list[MCPServerConfig] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_mcp_servers(
    *,
    cwd: Path,
    layers: Sequence[tuple[str, Mapping[str, object]]],
    extra_settings: Sequence[Path],
    mcp_config: Sequence[Path],
    strict: bool,
    include_claude: bool,
    ask: Callable[[MCPServerConfig], bool] | None,
) -> MCPPlan:
    """Read every source, apply approvals; ``ask`` (None: no terminal) decides pending project servers.
    Raises :class:`~hookloop.tools.mcp_config.MCPConfigError` for a bad configuration."""
    kinds = {s.path: s.kind for s in _sources(cwd, include_claude)}
    explicit = {str(p) for p in extra_settings}
    user: list[tuple[str, Mapping[str, object]]] = []
    project: list[tuple[str, Mapping[str, object]]] = []
    named: list[tuple[str, Mapping[str, object]]] = []
    for path, data in layers:
        if path in explicit:
            named.append((path, data))
        elif kinds.get(path) in _USER_KINDS:
            user.append((path, data))
        else:
            project.append((path, data))
    found: dict[str, MCPServerConfig] = {}

    def add(servers: Sequence[MCPServerConfig]) -> None:
        for server in servers:
            found.pop(server.name, None)
            found[server.name] = server

    if not strict:
        for path, data in user:
            add(_from_settings(path, data, project=False))
        mcp_json = cwd / ".mcp.json"
        if mcp_json.is_file():
            add(load_mcp_config(mcp_json, project=True))
        for path, data in project:
            add(_from_settings(path, data, project=True))
        for path, data in named:
            add(_from_settings(path, data, project=False))
    for file in mcp_config:
        add(load_mcp_config(file))
    trusted = [data for _, data in (*user, *named)]
    everything = [data for _, data in layers]
    approval = approve_project_servers(found.values(), trusted, everything)
    plan = MCPPlan(servers=list(approval.approved))
    for server in approval.disabled:
        plan.notes.append(f"note: MCP server {server.name!r} ({server.source}) is disabled (disabledMcpjsonServers)")
    for server in approval.pending:
        if ask is not None and ask(server):
            plan.servers.append(server)
        else:
            plan.notes.append(
                f"note: project MCP server {server.name!r} ({server.source}) was not started: approve it with "
                f'"enabledMcpjsonServers": [{server.name!r}] (or "enableAllProjectMcpServers": true) in your '
                "user settings, or name the file with --mcp-config"
            )
    order = {name: i for i, name in enumerate(found)}
    plan.servers.sort(key=lambda s: order[s.name])
    return plan


def session_mcp_plan(options: RunOptions, approval: str, err: Console) -> MCPPlan:
    """The plan for a CLI session: a pending project server is asked about at the terminal (``approval``
    ``"ask"``), else skipped. A bad configuration is a :class:`~hookloop.cli._session.UsageError`."""
    from hookloop.cli._session import UsageError, settings_layers

    def ask(server: MCPServerConfig) -> bool:
        err.print(
            f"\n[bold magenta]MCP server[/] this project ({server.source}) configures [bold]{server.name}[/]: "
            f"{describe(server)}",
            highlight=False,
        )
        return input("  start it for this session? [y/n] › ").strip().lower() in ("y", "yes")

    try:
        return plan_mcp_servers(
            cwd=options.cwd,
            layers=settings_layers(options),
            extra_settings=options.settings,
            mcp_config=options.mcp_config,
            strict=options.strict_mcp_config,
            include_claude=options.include_claude,
            ask=ask if approval == "ask" else None,
        )
    except MCPConfigError as exc:
        raise UsageError(str(exc)) from exc


def _sources(cwd: Path, include_claude: bool) -> list[Any]:
    home = Path.home()
    return list(settings_sources(cwd, home=home, hookloop_home=resolve_hookloop_home(), include_claude=include_claude))


def _from_settings(path: str, data: Mapping[str, object], *, project: bool) -> list[MCPServerConfig]:
    if "mcpServers" not in data:
        return []
    return parse_mcp_servers(data["mcpServers"], file=path, project=project)


def describe(server: MCPServerConfig) -> str:
    """What a server runs or reaches, for the approval question: the command line and the names of the
    variables it sets (``NODE_OPTIONS`` or ``LD_PRELOAD`` run code too), or the URL and header names (never
    header values)."""
    if server.transport == "stdio":
        text = " ".join([server.command or "", *server.args])
        return f"{text} (env: {', '.join(server.env)})" if server.env else text
    text = f"{server.transport} {server.url}"
    return f"{text} (headers: {', '.join(server.headers)})" if server.headers else text


async def run_with_mcp_servers(
    plan: MCPPlan | None, worker: Worker, cwd: Path, err: Console, start: Callable[[Worker], Awaitable[Any]]
) -> Any:
    """Open the planned servers (bound to ``worker``, their tools added), run ``start(worker)``, close them."""
    if plan is None or not plan.servers:
        return await start(worker)
    try:
        from hookloop.tools.mcp import MCPServerError
    except ImportError:
        names = ", ".join(s.name for s in plan.servers)
        err.print(f"[yellow]warning: MCP servers configured ({names}) but the mcp extra is not installed[/]")
        return await start(worker)
    async with contextlib.AsyncExitStack() as stack:
        for config in plan.servers:
            try:
                server = await stack.enter_async_context(config.session(cwd=cwd))
            except (MCPServerError, ValueError) as exc:
                err.print(f"warning: {exc}; the run goes on without it", markup=False, highlight=False)
                continue
            try:
                worker.add_tool(server)
            except ValueError as exc:  # a tool name another server (or the server itself) already uses
                err.print(f"warning: MCP server {config.name!r}: {exc}; its tools are left out", markup=False)
                continue
            server.bind(worker)
        return await start(worker)
