"""Tool servers: where the Worker finds a tool by name."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from hookloop.providers.base import ToolSpec
from hookloop.tools._base import Tool

__all__ = ["LocalToolServer", "ToolRegistry", "ToolServer"]


@runtime_checkable
class ToolServer(Protocol):
    """A group of tools (local functions, an MCP server, …).

    A server whose tool list can change while it is registered (an MCP server's ``list_changed``) also has an
    ``int`` property ``tools_generation`` that changes whenever :meth:`list_tools` would answer differently;
    the registry then takes the new list before the next model request (see :meth:`ToolRegistry.specs`).
    """

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

    __slots__ = ("_changing", "_specs", "_tools")

    def __init__(self, tools: Iterable[Tool | ToolServer] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        self._changing: list[_Followed] = []  # servers with a tools_generation
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
        names = [member.meta.name for member in members]
        for name in names:
            if name in self._tools or names.count(name) > 1:
                raise ValueError(f"two tools are named {name!r}")
        for member in members:
            self._tools[member.meta.name] = member
        generation = getattr(entry, "tools_generation", None)
        if isinstance(generation, int) and not isinstance(entry, Tool):
            self._changing.append(_Followed(entry, generation, set(names)))
        self._specs = None

    def refresh(self) -> bool:
        """Take the current tool list of each server whose ``tools_generation`` changed; True if any did.

        A new tool whose name another server's tool already has is left out (the first keeps its name), and so
        is one removed with :meth:`remove`."""
        changed = False
        for followed in self._changing:
            generation = followed.server.tools_generation  # type: ignore[attr-defined]
            if generation == followed.generation:
                continue
            followed.generation = generation
            for name in followed.names:
                self._tools.pop(name, None)
            followed.names = set()
            for member in followed.server.list_tools():
                name = member.meta.name
                if name not in self._tools and name not in followed.removed:
                    self._tools[name] = member
                    followed.names.add(name)
            changed = True
        if changed:
            self._specs = None
        return changed

    def remove(self, name: str) -> None:
        del self._tools[name]
        for followed in self._changing:
            if name in followed.names:
                followed.names.discard(name)
                followed.removed.add(name)  # stays removed when the server's list changes
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
        """What the model is told about the tools (cached until the set changes). Called for each model
        request: it takes the new tool list of a server that changed first (:meth:`refresh`), so the request
        and the calls of its reply see the same tools."""
        if self._changing:
            self.refresh()
        if self._specs is None:
            self._specs = tuple(
                ToolSpec(name=t.meta.name, description=t.meta.description, input_schema=t.meta.input_schema)
                for t in self._tools.values()
            )
        return self._specs


class _Followed:
    """A registered server whose tool list can change: the generation and names last taken from it."""

    __slots__ = ("generation", "names", "removed", "server")

    def __init__(self, server: ToolServer, generation: int, names: set[str]) -> None:
        self.server, self.generation, self.names = server, generation, names
        self.removed: set[str] = set()
