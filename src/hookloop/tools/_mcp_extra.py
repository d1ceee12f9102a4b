"""An MCP server's resources and prompts: the server's methods (:class:`ResourceMethods`) and the tools the model
can call (see :mod:`hookloop.tools.mcp`).

``mcp__<server>__list_resources`` and ``…__read_resource`` when the server offers resources, ``…__list_prompts``
and ``…__get_prompt`` when it offers prompts. They are plain tools for permissions (rules such as
``mcp__github__read_resource`` apply); read-only only when the server's annotations are trusted, like its tools.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp import ClientSession
from mcp import types as mcp_types

from hookloop._frozen import freeze_object, thaw_object
from hookloop.items import TextPart
from hookloop.tools._base import Tool, ToolContext, ToolFailure, ToolInputError, ToolMeta, ToolOutput
from hookloop.tools._mcp_conn import all_pages
from hookloop.tools._mcp_content import field, resource_part, summarise, summarise_resource
from hookloop.tools._mcp_tool import mcp_tool_name

if TYPE_CHECKING:
    from hookloop.tools.mcp import MCPServer

__all__ = ["ResourceMethods", "extra_tools", "offers"]

_Run = Callable[["MCPServer", Mapping[str, Any], ToolContext], Awaitable[object]]


class _ServerTool:
    """One resource or prompt tool of a server (implements :class:`hookloop.tools.Tool`)."""

    __slots__ = ("_meta", "_required", "_run", "_server")

    def __init__(self, server: MCPServer, suffix: str, description: str, properties: dict[str, Any], run: _Run) -> None:
        self._server = server
        self._run = run
        self._required = tuple(name for name, spec in properties.items() if spec.pop("required", False))
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        if self._required:
            schema["required"] = list(self._required)
        self._meta = ToolMeta(
            name=mcp_tool_name(server.name, suffix),
            description=description,
            input_schema=freeze_object(schema),
            read_only=server.trust_annotations,
            server=f"mcp__{server.name}",
        )

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        plain = thaw_object(arguments)
        problems = [f"field '{name}': required field is missing" for name in self._required if name not in plain]
        known = set(self._meta.input_schema["properties"])  # type: ignore[arg-type]
        problems += [f"field '{name}': not a parameter of this tool" for name in plain if name not in known]
        for name, value in plain.items():
            if name in ("uri", "name") and not isinstance(value, str):
                problems.append(f"field '{name}': must be a string")
            if name == "arguments" and not (
                isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            ):
                problems.append("field 'arguments': must be an object of strings")
        if problems:
            raise ToolInputError(f"invalid arguments for tool {self._meta.name!r}: " + "; ".join(problems))
        return plain

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        return await self._run(self._server, arguments, ctx)

    def __repr__(self) -> str:
        return f"<MCP server tool {self._meta.name!r}>"


async def _list_resources(server: MCPServer, arguments: Mapping[str, Any], ctx: ToolContext) -> object:
    resources = await server.list_resources()
    lines = [_describe(r.uri, r.name, field(r, "mime_type", "mimeType"), r.description) for r in resources]
    try:
        templates = await server.list_resource_templates()
    except ToolFailure:  # optional for a server: the plain resources are the answer then
        templates = []
    lines += [
        _describe(t.uri_template, t.name, field(t, "mime_type", "mimeType"), t.description, template=True)
        for t in templates
    ]
    return "\n".join(lines) or "(the server lists no resources)"


async def _read_resource(server: MCPServer, arguments: Mapping[str, Any], ctx: ToolContext) -> object:
    result = await server.read_resource(str(arguments["uri"]), ctx=ctx)
    text = "\n".join(summarise_resource(c) for c in result.contents)
    parts = tuple(resource_part(c) for c in result.contents)
    if all(isinstance(p, TextPart) for p in parts):
        return text
    return ToolOutput(content=text, parts=parts)


async def _list_prompts(server: MCPServer, arguments: Mapping[str, Any], ctx: ToolContext) -> object:
    lines = []
    for prompt in await server.list_prompts():
        args = ", ".join(f"{a.name}{'' if a.required else '?'}" for a in prompt.arguments or ())
        lines.append(f"{prompt.name}({args})" + (f": {prompt.description}" if prompt.description else ""))
    return "\n".join(lines) or "(the server lists no prompts)"


async def _get_prompt(server: MCPServer, arguments: Mapping[str, Any], ctx: ToolContext) -> object:
    result = await server.get_prompt(str(arguments["name"]), arguments.get("arguments") or {}, ctx=ctx)
    return "\n\n".join(f"[{m.role}]\n{summarise(m.content)}" for m in result.messages)


def _describe(uri: object, name: str, mime: object, description: str | None, *, template: bool = False) -> str:
    line = json.dumps({"uri_template" if template else "uri": str(uri), "name": name, "mime_type": mime})
    return f"{line} {description}" if description else line


class ResourceMethods:
    """The resource and prompt methods of :class:`~hookloop.tools.mcp.MCPServer` (a base class of it): each
    request goes through the server's ``request`` (restart after a crash, ``call_timeout``, errors naming it)."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

        async def request(
            self, where: str, send: Callable[[ClientSession, Any], Any], ctx: ToolContext | None
        ) -> Any: ...

    async def list_resources(self) -> list[mcp_types.Resource]:
        """Every resource the server lists (all pages)."""
        return await self._pages("resources/list", "resources", lambda s, p: s.list_resources(params=p))

    async def list_resource_templates(self) -> list[mcp_types.ResourceTemplate]:
        """Every resource template the server lists (all pages)."""
        return await self._pages(
            "resources/templates/list", "resource_templates", lambda s, p: s.list_resource_templates(params=p)
        )

    async def read_resource(self, uri: str, *, ctx: ToolContext | None = None) -> mcp_types.ReadResourceResult:
        """The contents of the resource at ``uri`` (text and/or base64 blobs)."""
        where = f"MCP server {self.name!r}, resource {uri!r}"
        result: mcp_types.ReadResourceResult = await self.request(where, lambda s, _: s.read_resource(uri), ctx)
        return result

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        """Every prompt the server lists (all pages)."""
        return await self._pages("prompts/list", "prompts", lambda s, p: s.list_prompts(params=p))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, ctx: ToolContext | None = None
    ) -> mcp_types.GetPromptResult:
        """The prompt ``name`` filled in with ``arguments`` (its messages)."""
        where = f"MCP server {self.name!r}, prompt {name!r}"
        args = dict(arguments or {})
        result: mcp_types.GetPromptResult = await self.request(where, lambda s, _: s.get_prompt(name, args), ctx)
        return result

    async def _pages(self, method: str, attr: str, send: Callable[[ClientSession, Any], Any]) -> list[Any]:
        where = f"MCP server {self.name!r}, {method}"
        return await all_pages(lambda one: self.request(where, one, None), attr, send)


async def offers(session: ClientSession, capabilities: mcp_types.ServerCapabilities | None) -> frozenset[str]:
    """``"resources"`` / ``"prompts"``: what the server declared *and* lists at least one of (many servers
    declare both with nothing behind them; the model is not shown tools that can only say "none")."""
    found: set[str] = set()
    if capabilities is None:
        return frozenset()
    with contextlib.suppress(Exception):
        if capabilities.resources is not None and (
            (await session.list_resources()).resources
            or field(await session.list_resource_templates(), "resource_templates", "resourceTemplates")
        ):
            found.add("resources")
    with contextlib.suppress(Exception):
        if capabilities.prompts is not None and (await session.list_prompts()).prompts:
            found.add("prompts")
    return frozenset(found)


def extra_tools(server: MCPServer, offered: frozenset[str]) -> list[Tool]:
    """The resource and prompt tools for what the server offers (see :func:`offers`)."""
    tools: list[Tool] = []
    if "resources" in offered:
        tools.append(
            _ServerTool(
                server,
                "list_resources",
                f"List the resources (and resource templates) of the MCP server {server.name!r}.",
                {},
                _list_resources,
            )
        )
        tools.append(
            _ServerTool(
                server,
                "read_resource",
                f"Read one resource of the MCP server {server.name!r} by its URI.",
                {"uri": {"type": "string", "description": "the resource's URI", "required": True}},
                _read_resource,
            )
        )
    if "prompts" in offered:
        tools.append(
            _ServerTool(
                server,
                "list_prompts",
                f"List the prompts of the MCP server {server.name!r} with their arguments (? = optional).",
                {},
                _list_prompts,
            )
        )
        tools.append(
            _ServerTool(
                server,
                "get_prompt",
                f"Get one prompt of the MCP server {server.name!r}, filled in with its arguments.",
                {
                    "name": {"type": "string", "description": "the prompt's name", "required": True},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                _get_prompt,
            )
        )
    return tools
