"""One tool of an MCP server as a hookloop tool, and the tool naming (see :mod:`hookloop.tools.mcp`, which
re-exports both)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import jsonschema  # type: ignore[import-untyped]
from mcp import types as mcp_types

from hookloop._frozen import FrozenDict, freeze_object, thaw_object
from hookloop.tools._base import ToolContext, ToolInputError, ToolMeta
from hookloop.tools._mcp_content import error_lines, field

if TYPE_CHECKING:
    from hookloop.tools.mcp import MCPServer

__all__ = ["MCPTool", "mcp_tool_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, with characters outside ``[A-Za-z0-9_-]`` replaced by ``_`` (as Claude Code)."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


class MCPTool:
    """One tool of an open :class:`~hookloop.tools.mcp.MCPServer` (implements :class:`hookloop.tools.Tool`)."""

    __slots__ = ("_annotations", "_meta", "_remote_name", "_server", "_validator")

    def __init__(self, server: MCPServer, remote: mcp_types.Tool) -> None:
        self._server = server
        self._remote_name = remote.name
        schema = dict(field(remote, "input_schema", "inputSchema", {}) or {"type": "object"})
        annotations = remote.annotations
        hints = {} if annotations is None else annotations.model_dump(by_alias=True, exclude_none=True)
        self._annotations: FrozenDict = freeze_object(hints)
        # Read-only only when it says so plainly: ``"true"`` or a tool also claiming to be destructive is not.
        claims_read_only = hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True
        self._meta = ToolMeta(
            name=mcp_tool_name(server.name, remote.name),
            description=remote.description or "",
            input_schema=freeze_object(schema),
            read_only=claims_read_only and server.trust_annotations,
            server=f"mcp__{server.name}",
            sequential=server.sequential and not claims_read_only,
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

    @property
    def annotations(self) -> FrozenDict:
        """The tool's annotations as the server gave them (``readOnlyHint``, ``destructiveHint``, …): claims,
        trusted for permissions only with ``trust_annotations=True``."""
        return self._annotations

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        plain = thaw_object(arguments)
        if self._validator is not None:
            try:
                errors = list(self._validator.iter_errors(plain))
            except Exception:  # e.g. an unresolvable $ref: leave validation to the server
                errors = []
            if errors:
                raise ToolInputError(
                    f"invalid arguments for tool {self._meta.name!r}: " + "; ".join(error_lines(errors))
                )
        return plain

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        return await self._server.call_tool(self._remote_name, arguments, ctx=ctx)

    def __repr__(self) -> str:
        return f"<MCPTool {self._meta.name!r}>"
