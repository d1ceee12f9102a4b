"""PRIVILEGED interceptor layer: mutable views of the request, the tool call and the tool result.

Interceptors are for the Worker's own mechanisms and the application that builds the Worker — never for
plugins or scripts (those get :mod:`hookloop.hooks`). At each point interceptors run first, in registration
order, then hooks observe what they produced.

An interceptor implements any subset of the methods below (each ``async``). Returning
:data:`STOP_CHAIN` stops later interceptors at that point; raising :class:`hookloop.errors.Aborted` ends the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from hookloop._frozen import JSONValue
from hookloop.items import Item
from hookloop.tools._base import ToolMeta

__all__ = [
    "STOP_CHAIN",
    "Interceptor",
    "InterceptorChain",
    "RequestContext",
    "ToolCallView",
    "ToolResultView",
]

STOP_CHAIN: Final = "stop_chain"
"""Return this from an interceptor method to skip the later interceptors at this point."""

ChainAction = Literal["stop_chain"] | None


@dataclass(slots=True, kw_only=True)
class RequestContext:
    """pre_llm_request: a copy of what will be sent. Editing ``items`` changes this request only."""

    items: list[Item]
    system: str | None
    turn: int
    run_id: str


@dataclass(slots=True, kw_only=True)
class ToolCallView:
    """pre_tool_call: the call about to run; edit ``arguments`` to change what executes."""

    call_id: str
    tool_name: str
    arguments: dict[str, JSONValue]
    meta: ToolMeta
    turn: int
    run_id: str


@dataclass(slots=True, kw_only=True)
class ToolResultView:
    """post_tool_call: the result about to be recorded; edit ``content``/``is_error``."""

    call_id: str
    tool_name: str
    arguments: dict[str, JSONValue]
    content: str
    is_error: bool
    meta: ToolMeta
    turn: int
    run_id: str
    notes: dict[str, JSONValue] = field(default_factory=dict)


class Interceptor(Protocol):
    """Implement any of: ``pre_llm_request(ctx)``, ``pre_tool_call(call)``, ``post_tool_call(result)``."""


_POINTS = ("pre_llm_request", "pre_tool_call", "post_tool_call")


class InterceptorChain:
    """Interceptors in registration order, grouped per point once (at registration)."""

    __slots__ = ("_all", "post_tool_call", "pre_llm_request", "pre_tool_call")

    def __init__(self) -> None:
        self._all: list[object] = []
        self.pre_llm_request: tuple[Any, ...] = ()
        self.pre_tool_call: tuple[Any, ...] = ()
        self.post_tool_call: tuple[Any, ...] = ()

    def add(self, interceptor: object) -> None:
        methods = [getattr(interceptor, p, None) for p in _POINTS]
        if not any(callable(m) for m in methods):
            raise TypeError(f"{type(interceptor).__qualname__} implements none of {', '.join(_POINTS)}")
        self._all.append(interceptor)
        for point, method in zip(_POINTS, methods, strict=True):
            if callable(method):
                setattr(self, point, (*getattr(self, point), method))

    def __len__(self) -> int:
        return len(self._all)

    @staticmethod
    async def run(methods: tuple[Any, ...], view: object) -> None:
        for method in methods:
            if await method(view) == STOP_CHAIN:
                return
