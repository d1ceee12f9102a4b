"""ToolRegistry follows a server whose tool list changes (tools_generation), before each model request."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hookloop.tools import Tool, ToolRegistry, tool


@tool
def alpha() -> str:
    """A."""
    return "a"


@tool
def beta() -> str:
    """B."""
    return "b"


@tool
def gamma() -> str:
    """C."""
    return "c"


class ChangingServer:
    """A tool server whose list the test changes, as an MCP server's list_changed does."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)
        self.tools_generation = 0

    @property
    def name(self) -> str:
        return "changing"

    def list_tools(self) -> Sequence[Tool]:
        return tuple(self.tools)

    def change(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)
        self.tools_generation += 1


def test_specs_take_the_new_list_of_a_changed_server() -> None:
    server = ChangingServer([alpha])
    registry = ToolRegistry([server])
    assert [s.name for s in registry.specs()] == ["alpha"]
    server.change([alpha, beta])
    assert [s.name for s in registry.specs()] == ["alpha", "beta"]
    assert registry.get("beta") is beta
    server.change([beta])
    assert [s.name for s in registry.specs()] == ["beta"]
    assert registry.get("alpha") is None
    assert registry.specs() is registry.specs()  # cached while nothing changes


def test_a_new_name_another_server_has_is_left_out_and_a_removed_tool_stays_removed() -> None:
    server = ChangingServer([alpha])
    registry = ToolRegistry([gamma, server])
    server.change([alpha, gamma])  # gamma is already the local tool's name: the first keeps it
    assert [s.name for s in registry.specs()] == ["gamma", "alpha"]
    registry.remove("alpha")
    server.change([alpha, beta])
    assert [s.name for s in registry.specs()] == ["gamma", "beta"]


def test_duplicate_names_in_one_server_fail_before_anything_is_added() -> None:
    server = ChangingServer([alpha, alpha])
    registry = ToolRegistry([beta])
    with pytest.raises(ValueError, match="two tools are named 'alpha'"):
        registry.add(server)
    assert [s.name for s in registry.specs()] == ["beta"]
