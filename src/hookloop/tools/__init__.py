"""Tools: the protocol, ``@tool`` for typed functions, tool servers and the registry."""

from hookloop.tools._base import (
    FunctionTool,
    ReadFilter,
    Tool,
    ToolContext,
    ToolFailure,
    ToolInputError,
    ToolMeta,
    ToolOutput,
    tool,
)
from hookloop.tools._registry import LocalToolServer, ToolRegistry, ToolServer

__all__ = [
    "FunctionTool",
    "LocalToolServer",
    "ReadFilter",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "ToolInputError",
    "ToolMeta",
    "ToolOutput",
    "ToolRegistry",
    "ToolServer",
    "tool",
]
