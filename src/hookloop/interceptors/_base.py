"""PRIVILEGED interceptor layer: mutable views of the request, the tool call, the tool result and the history.

Interceptors are for the Worker's own mechanisms and the application that builds the Worker — never for
plugins or scripts (those get :mod:`hookloop.hooks`, which cannot reach anything here). At each point
interceptors run first, in registration order (chain of responsibility, any number), then hooks observe what
they produced and cannot undo it (they can still Abort/Skip).

An interceptor implements any subset of these ``async`` methods:

=====================  =====================================  =============================================
method                 receives                               may
=====================  =====================================  =============================================
``pre_llm_request``    :class:`RequestContext`                edit ``items``/``system`` of this request;
                                                              ``persist`` an item into the history; return
                                                              :data:`COMPACT` to ask for compaction
``compact``            :class:`CompactionContext`             replace the history (the only method that may)
``pre_tool_call``      :class:`ToolCallView`                  edit the arguments that will execute
``post_tool_call``     :class:`ToolResultView`                edit the content / error flag that is recorded
``on_turn_end``        :class:`TurnEndView`                   add ``messages`` to send the model back to work
=====================  =====================================  =============================================

Return :data:`STOP_CHAIN` to skip the later interceptors at that point; raise :class:`hookloop.errors.Aborted`
to end the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from hookloop._frozen import JSONValue
from hookloop.items import ContentPart, Item
from hookloop.tools._base import ToolMeta

if TYPE_CHECKING:
    from hookloop.providers.base import LLMClient

__all__ = [
    "COMPACT",
    "STOP_CHAIN",
    "CompactionContext",
    "Interceptor",
    "InterceptorChain",
    "RequestContext",
    "ToolCallView",
    "ToolResultView",
    "TurnEndView",
]

STOP_CHAIN: Final = "stop_chain"
"""Return this from an interceptor method to skip the later interceptors at this point."""

COMPACT: Final = "compact"
"""Return this from ``pre_llm_request`` to have the Worker compact the history (firing pre_compact/post_compact
hooks) and then re-plan the request."""


class RequestContext:
    """pre_llm_request: what will be sent. ``items`` is a copy of the history made on first access (so an
    interceptor that does not look at it costs nothing); editing it changes this request only. :meth:`persist`
    also appends an item to the history (notification injection uses it)."""

    __slots__ = ("_copy", "_history", "_persist", "model", "run_id", "system", "token_estimate", "turn")

    def __init__(
        self,
        *,
        history: Sequence[Item],
        system: str | None,
        turn: int,
        run_id: str,
        model: str | None,
        token_estimate: int,
        persist: Callable[[Item], None],
    ) -> None:
        self._history = history
        self._copy: list[Item] | None = None
        self._persist = persist
        self.system = system
        self.turn = turn
        self.run_id = run_id
        self.model = model
        self.token_estimate = token_estimate

    @property
    def items(self) -> list[Item]:
        if self._copy is None:
            self._copy = list(self._history)
        return self._copy

    @items.setter
    def items(self, value: list[Item]) -> None:
        self._copy = value

    @property
    def edited_items(self) -> list[Item] | None:
        """The request's own item list if an interceptor touched it, else None (send the history as is)."""
        return self._copy

    def persist(self, item: Item) -> None:
        """Append ``item`` to the Worker's history and to this request."""
        self._persist(item)
        if self._copy is not None:
            self._copy.append(item)


@dataclass(slots=True, kw_only=True)
class CompactionContext:
    """compact: the history to replace. Set ``history`` to the compacted list and ``summary`` to the text that
    replaced the older part ("" when it was dropped). ``client`` can summarise (an LLM call)."""

    history: list[Item]
    system: str | None
    trigger: Literal["auto", "manual"]
    token_estimate: int
    client: LLMClient
    model: str | None
    summary: str = ""
    changed: bool = False


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
    """post_tool_call: the result about to be recorded; edit ``content``/``is_error``; ``notes`` go into the
    result item's ``meta`` (provenance).

    ``parts`` is the rich result (text, images, documents) when the tool returned one, else empty; ``content``
    is then its text rendering. Assign a new tuple to ``parts`` to change it. Changing ``content`` without
    assigning ``parts`` drops the parts: the model then gets ``content``, so a rewrite (a mask, a truncation)
    is never bypassed by the richer copy.
    """

    call_id: str
    tool_name: str
    arguments: dict[str, JSONValue]
    content: str
    is_error: bool
    meta: ToolMeta
    turn: int
    run_id: str
    notes: dict[str, JSONValue] = field(default_factory=dict)
    parts: tuple[ContentPart, ...] = ()


@dataclass(slots=True, kw_only=True)
class TurnEndView:
    """on_turn_end: the model answered without tool calls. Append to ``messages`` to send it back to work
    (counted by the same stop-loop guard as hooks' ContinueWithMessages)."""

    last_assistant_text: str
    history: Sequence[Item]
    turn: int
    run_id: str
    messages: list[Item] = field(default_factory=list)


class Interceptor(Protocol):
    """Marker protocol: implement any of ``pre_llm_request``, ``compact``, ``pre_tool_call``,
    ``post_tool_call``, ``on_turn_end`` (all ``async``)."""


POINTS = ("pre_llm_request", "compact", "pre_tool_call", "post_tool_call", "on_turn_end")


class InterceptorChain:
    """Interceptors in registration order, grouped per point once (at registration)."""

    __slots__ = ("_all", "compact", "on_turn_end", "post_tool_call", "pre_llm_request", "pre_tool_call")

    def __init__(self) -> None:
        self._all: list[object] = []
        self.pre_llm_request: tuple[Any, ...] = ()
        self.compact: tuple[Any, ...] = ()
        self.pre_tool_call: tuple[Any, ...] = ()
        self.post_tool_call: tuple[Any, ...] = ()
        self.on_turn_end: tuple[Any, ...] = ()

    def add(self, interceptor: object) -> None:
        methods = [getattr(interceptor, p, None) for p in POINTS]
        if not any(callable(m) for m in methods):
            raise TypeError(f"{type(interceptor).__qualname__} implements none of {', '.join(POINTS)}")
        self._all.append(interceptor)
        for point, method in zip(POINTS, methods, strict=True):
            if callable(method):
                setattr(self, point, (*getattr(self, point), method))

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Any:
        return iter(self._all)

    @staticmethod
    async def run(methods: tuple[Any, ...], view: object) -> str | None:
        """Run ``methods`` in order on ``view``; returns :data:`COMPACT` if one asked for compaction."""
        wanted: str | None = None
        for method in methods:
            action = await method(view)
            if action == COMPACT:
                wanted = COMPACT
            elif action == STOP_CHAIN:
                break
        return wanted
