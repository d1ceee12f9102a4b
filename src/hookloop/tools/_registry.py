"""Tool servers: where the Worker finds a tool by name."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from hookloop.providers.base import ToolSpec
from hookloop.tools._base import Tool

__all__ = ["LocalToolServer", "ToolRegistry", "ToolServer"]


@runtime_checkable
class ToolServer(Protocol):
    """A group of tools (local functions, an MCP server, …)."""

    @property
    def name(self) -> str: ...

    def list_tools(self) -> Sequence[Tool]: ...


class LocalToolServer:
    """Tools living in this process."""

    def __init__(self, tools: Iterable[Tool] = (), *, name: str = "local") -> None:
        self._name = name
        self._tools = list(tools)

    @property
    def name(self) -> str:
        return self._name

    def list_tools(self) -> Sequence[Tool]:
        return tuple(self._tools)


class ToolRegistry:
    """Name → tool, across servers. A later tool with an existing name is an error, not a silent override."""

    __slots__ = ("_specs", "_tools")

    def __init__(self, tools: Iterable[Tool | ToolServer] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        for entry in tools:
            self.add(entry)

    def add(self, entry: Tool | ToolServer) -> None:
        """Add a tool, or every tool of a server."""
        if isinstance(entry, Tool):
            members: Sequence[Tool] = (entry,)
        elif isinstance(entry, ToolServer):
            members = entry.list_tools()
        else:
            raise TypeError(f"expected a Tool or ToolServer, got {type(entry).__name__}")
        for member in members:
            name = member.meta.name
            if name in self._tools:
                raise ValueError(f"two tools are named {name!r}")
            self._tools[name] = member
        self._specs = None

    def remove(self, name: str) -> None:
        del self._tools[name]
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is told about the tools (cached until the set changes)."""
        if self._specs is None:
            self._specs = tuple(
                ToolSpec(name=t.meta.name, description=t.meta.description, input_schema=t.meta.input_schema)
                for t in self._tools.values()
            )
        return self._specs
