"""MCP elicitation routed to the application: the request and answer types, and a Worker's routing (hooks before
the answer, the application's handler, hooks after it). Independent of the ``mcp`` extra so the command-hook
bridge can register on it; the public names are re-exported by :mod:`hookloop.tools.mcp`.

The order for one request from server ``S`` (each step may be empty):

1. ``routing.before`` handlers in order (Claude Code's ``Elicitation`` command hooks live here): the first that
   returns an :class:`ElicitationResponse` answers and the application is not asked;
2. otherwise ``S``'s own handler (``MCPClientOptions(elicitation=…)``), else ``routing.handler`` (the
   Worker-wide one), else **decline** — an elicitation nobody answers is never accepted;
3. ``routing.after`` hooks in order (``ElicitationResult`` command hooks): each may replace the response.

A response that accepts must carry content that fits the request: for a form, an object of strings, numbers,
booleans or lists of strings whose keys the requested schema names (the MCP spec's flat form schema) and with
every ``required`` key present. An accept that does not fit is turned into a decline (and logged) — a hook or
handler cannot send the server something it did not ask for. A url elicitation is answered with the action only
(any content is dropped).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, TypeAlias

from hookloop._frozen import FrozenDict, empty, freeze_object, thaw_object

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = [
    "DECLINE",
    "ElicitationAction",
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResponse",
    "ElicitationResultHook",
    "ElicitationRouting",
    "elicitation_routing",
    "route_elicitation",
]

_log = logging.getLogger("hookloop.tools.mcp")
ElicitationAction: TypeAlias = Literal["accept", "decline", "cancel"]
_ACTIONS = ("accept", "decline", "cancel")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitationRequest:
    """A server asks the user for input. ``mode`` ``"form"`` carries ``requested_schema`` (a JSON schema of an
    object with primitive properties); ``"url"`` asks the user to open ``url`` (``elicitation_id`` names it)."""

    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    requested_schema: FrozenDict | None = None
    url: str | None = None
    elicitation_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitationResponse:
    """The answer: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``. ``content`` is kept
    frozen (a copy of the mapping given)."""

    action: ElicitationAction
    content: Mapping[str, object] = field(default_factory=empty)

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ValueError(f"elicitation action must be one of {', '.join(_ACTIONS)}, got {self.action!r}")
        if not isinstance(self.content, MappingProxyType):
            if not isinstance(self.content, Mapping):
                raise TypeError(f"elicitation content must be a mapping, got {type(self.content).__name__}")
            object.__setattr__(self, "content", freeze_object(dict(self.content)))


DECLINE = ElicitationResponse(action="decline")

ElicitationHandler: TypeAlias = Callable[[ElicitationRequest], Awaitable[ElicitationResponse | None]]
"""Answers a request, or returns ``None`` to leave it to the next step."""
ElicitationResultHook: TypeAlias = Callable[
    [ElicitationRequest, ElicitationResponse], Awaitable[ElicitationResponse | None]
]
"""Sees the response before the server does; returns a replacement or ``None`` to keep it."""


@dataclass(slots=True)
class ElicitationRouting:
    """One Worker's elicitation routing (see the module docstring for the order)."""

    before: list[ElicitationHandler] = field(default_factory=list)
    handler: ElicitationHandler | None = None
    after: list[ElicitationResultHook] = field(default_factory=list)


_ROUTES: weakref.WeakKeyDictionary[Worker, ElicitationRouting] = weakref.WeakKeyDictionary()


def elicitation_routing(worker: Worker) -> ElicitationRouting:
    """The elicitation routing of ``worker`` (created empty on first use): set ``.handler`` to answer the
    elicitations of every MCP server bound to it; ``.before`` / ``.after`` hold hooks."""
    routing = _ROUTES.get(worker)
    if routing is None:
        routing = _ROUTES[worker] = ElicitationRouting()
    return routing


def fits(request: ElicitationRequest, response: ElicitationResponse) -> str | None:
    """Why an accepting ``response`` does not fit ``request`` (None: it fits, or it does not accept)."""
    if response.action != "accept":
        return None
    content = thaw_object(response.content)
    if request.mode == "url":
        return None  # the server is sent the action only: a url elicitation carries no content
    schema = thaw_object(request.requested_schema) if request.requested_schema is not None else {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    names = set(properties) if isinstance(properties, dict) else set()
    for key, value in content.items():
        if key not in names:
            return f"content field {key!r} was not requested"
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                return f"content field {key!r}: a list may hold strings only"
        elif value is None or not isinstance(value, str | int | float | bool):
            return f"content field {key!r}: expected a string, number or boolean"
    required = schema.get("required") if isinstance(schema, dict) else None
    missing = [str(r) for r in required if r not in content] if isinstance(required, list) else []
    if missing:
        return f"required content field(s) missing: {', '.join(missing)}"
    return None


async def route_elicitation(
    request: ElicitationRequest, routing: ElicitationRouting | None, own: ElicitationHandler | None
) -> ElicitationResponse:
    """The response for ``request``: ``routing.before``, then ``own`` or ``routing.handler``, else decline;
    then ``routing.after``. Every accept is checked against the request (:func:`fits`)."""
    response: ElicitationResponse | None = None
    for hook in routing.before if routing is not None else ():
        response = _checked(request, await hook(request), hook)
        if response is not None:
            break
    if response is None:
        answer = own if own is not None else routing.handler if routing is not None else None
        if answer is not None:
            response = _checked(request, await answer(request), answer)
    if response is None:
        response = DECLINE
    for after in routing.after if routing is not None else ():
        replaced = _checked(request, await after(request, response), after)
        if replaced is not None:
            response = replaced
    return response


def _checked(request: ElicitationRequest, response: object, by: object) -> ElicitationResponse | None:
    if response is None:
        return None
    if not isinstance(response, ElicitationResponse):
        _log.warning(
            "MCP server %r: elicitation handler %r returned %s, not an ElicitationResponse: declined",
            request.server,
            by,
            type(response).__name__,
        )
        return DECLINE
    problem = fits(request, response)
    if problem is not None:
        _log.warning("MCP server %r: an elicitation answer was declined: %s", request.server, problem)
        return DECLINE
    return response
