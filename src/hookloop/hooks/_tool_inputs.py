"""The tool parts of hook inputs: tool-metadata copies, and :class:`PreToolCallInfo`, an immutable tuple.

Every pre_tool_call hook must get an input nobody else can change: what one hook does to its input by force
(``object.__setattr__``, a slot descriptor, ``__class__`` assignment), or later through a reference it kept,
must never reach the next hook or the Worker. A frozen dataclass gives that only as a new copy per hook (its
slots can be written by force), which was most of what a hook cost. ``PreToolCallInfo`` is instead a tuple
subclass with no slots of its own: CPython has no way to change a tuple's items from Python code, so one input
can serve every hook of a call. What a hook can still do is swap its ``__class__`` for another tuple subclass
(whose properties could lie to whoever reads it later): the Worker therefore hands the same input to the next
hook only when its type (``type()``, never ``__class__``, which a property can fake) is still PreToolCallInfo and
nothing but the Worker references it (``sys.getrefcount``: a hook, task or thread that kept it holds a
reference); otherwise it builds a new one.

Building one is a single C call: the keyword constructor is the metaclass's ``__call__``, so the class keeps
tuple's own ``__new__`` and :data:`make` is ``type.__call__`` bound to it. The fields are held in
:data:`ORDER` — per call, per turn, then per run — which the Worker's one tuple display of a call's values follows.

The tool's metadata is kept inside as a tuple of exact built-in values; :attr:`PreToolCallInfo.meta` builds a
new :class:`~hookloop.tools.ToolMeta` from it on every read, so what a hook does to that copy reaches nobody.
"""

from __future__ import annotations

import dataclasses
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from hookloop._frozen import FrozenDict, freeze_object, plain_str
from hookloop.tools._base import ToolMeta

__all__ = [
    "META_INDEX",
    "ORDER",
    "PreToolCallInfo",
    "make",
    "meta_view",
    "refs_when_unshared",
    "tool_meta_snapshot",
    "tool_meta_view",
]

MetaSnapshot: TypeAlias = tuple[str, str, FrozenDict, bool, str, bool, bool]
"""A tool's metadata as exact built-in values, in ToolMeta's field order."""


def _builder(cls: type) -> type:
    """A plain class with exactly ``cls``'s slots: an instance of it is filled with ordinary attribute stores
    (the fastest way CPython fills slots), then becomes a ``cls`` by ``__class__`` assignment — the layouts are
    the same, so CPython allows it. A frozen dataclass's own ``__init__`` (one ``object.__setattr__`` a field)
    costs several times as much."""
    slots = cls.__dict__["__slots__"]
    builder = type(f"_{cls.__name__}Builder", (), {"__slots__": slots, "__module__": __name__})
    probe = builder()
    probe.__class__ = cls  # TypeError here (at import) if the layouts ever differ
    return builder


_ToolMetaBuilder = _builder(ToolMeta)


def tool_meta_snapshot(meta: ToolMeta) -> MetaSnapshot:
    """``meta``'s fields as exact built-in values (a ``str`` subclass copied as a ``str``, an ``input_schema``
    that is not a FrozenDict frozen anew, the flags as ``True``/``False``): a tuple nothing can change."""
    name, description, schema, server = meta.name, meta.description, meta.input_schema, meta.server
    return (
        name if type(name) is str else plain_str(name),
        description if type(description) is str else plain_str(description),
        schema if type(schema) is MappingProxyType else freeze_object(schema),
        meta.read_only is True,
        server if type(server) is str else plain_str(server),
        meta.sequential is True,
        meta.performs_effects is True,
    )


def meta_view(snapshot: MetaSnapshot) -> ToolMeta:
    """A new ToolMeta holding ``snapshot`` (a :func:`tool_meta_snapshot`)."""
    view: Any = _ToolMetaBuilder()
    (
        view.name,
        view.description,
        view.input_schema,
        view.read_only,
        view.server,
        view.sequential,
        view.performs_effects,
    ) = snapshot
    view.__class__ = ToolMeta
    return view  # type: ignore[no-any-return]


def tool_meta_view(meta: ToolMeta) -> ToolMeta:
    """A copy of a tool's metadata for one hook input: changing it by force changes nothing about the tool.

    Shares only immutable leaves with ``meta`` (see :func:`tool_meta_snapshot`)."""
    return meta_view(tool_meta_snapshot(meta))


_tuple_new = tuple.__new__
_item = tuple.__getitem__


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolCallInfo:  # what type checkers see; at run time, the dataclass view of the tuple class below
    """pre_tool_call: one call about to run (after interceptors). Seen for every known tool's call, including
    calls the permission rules will deny."""

    run_id: str
    session_id: str
    turn: int
    call_id: str
    tool_name: str
    arguments: FrozenDict
    meta: ToolMeta
    """The tool's metadata: a new copy on every read."""
    permission_mode: str | None
    agent_id: str | None = None
    """Inside a subagent: its id (see :mod:`hookloop.agents`); None in the top-level Worker."""
    agent_type: str | None = None
    """Inside a subagent: its type (the definition's name, or the ``as_tool`` name)."""


_FIELDS = tuple(field.name for field in dataclasses.fields(PreToolCallInfo))
ORDER = (
    "call_id", "tool_name", "arguments", "meta", "turn", "permission_mode", "run_id", "session_id", "agent_id",
    "agent_type",
)  # fmt: skip
"""Where each field is held in the tuple: what changes per call first, then per turn, then what is fixed for the
run (the Worker builds the values as one tuple display in this order, then :func:`make`)."""
META_INDEX = ORDER.index("meta")

if not TYPE_CHECKING:
    _getter: Callable[[int, str], object] = getattr(
        __import__("collections"), "_tuplegetter", lambda index, doc: property(itemgetter(index), doc=doc)
    )
    _Fields = PreToolCallInfo  # dataclasses.fields / replace / asdict read its fields

    class _InfoType(type):
        """The class of PreToolCallInfo: its keyword constructor lives here, so the class itself keeps
        tuple's own ``__new__`` — and ``make(values)`` (below) builds an input with no Python frame."""

        def __call__(
            cls,
            *,
            run_id: str,
            session_id: str,
            turn: int,
            call_id: str,
            tool_name: str,
            arguments: FrozenDict,
            meta: ToolMeta,
            permission_mode: str | None,
            agent_id: str | None = None,
            agent_type: str | None = None,
        ) -> PreToolCallInfo:
            return _tuple_new(
                cls,
                (
                    call_id, tool_name, arguments, tool_meta_snapshot(meta), turn, permission_mode,
                    run_id, session_id, agent_id, agent_type,
                ),
            )  # fmt: skip

    class PreToolCallInfo(tuple, metaclass=_InfoType):
        """pre_tool_call: one call about to run (after interceptors). Seen for every known tool's call,
        including calls the permission rules will deny.

        Keyword-only and frozen like every hook input (``dataclasses.fields``, ``replace`` and ``asdict``
        work on it); underneath it is an immutable tuple (see :mod:`hookloop.hooks._tool_inputs`). ``meta``
        is a new copy of the tool's metadata on every read."""

        __slots__ = ()
        __dataclass_fields__ = _Fields.__dataclass_fields__
        __dataclass_params__ = _Fields.__dataclass_params__
        __match_args__ = ()

        call_id = _getter(0, "The call's id.")
        tool_name = _getter(1, "The tool's name.")
        arguments = _getter(2, "The call's arguments (deep read-only).")
        turn = _getter(4, "The turn number.")
        permission_mode = _getter(5, "The permission mode (None without a policy).")
        run_id = _getter(6, "The run's id.")
        session_id = _getter(7, "The session's id.")
        agent_id = _getter(8, "Inside a subagent: its id (see hookloop.agents); None in the top-level Worker.")
        agent_type = _getter(9, "Inside a subagent: its type (the definition's name, or the as_tool name).")

        @property
        def meta(self) -> ToolMeta:
            """The tool's metadata: a new copy on every read."""
            return meta_view(_item(self, META_INDEX))

        def __setattr__(self, name: str, value: object) -> None:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

        def __repr__(self) -> str:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
            return f"PreToolCallInfo({shown})"

        def __eq__(self, other: object) -> bool:  # as a dataclass's: equal only to another of its class
            if type(other) is PreToolCallInfo:
                return tuple.__eq__(self, other)
            return False if isinstance(other, tuple) else NotImplemented

        def __ne__(self, other: object) -> bool:
            equal = self.__eq__(other)
            return equal if equal is NotImplemented else not equal

        __hash__ = tuple.__hash__

        def __reduce__(self) -> tuple[Callable[..., PreToolCallInfo], tuple[object, ...]]:
            return _tuple_new, (PreToolCallInfo, tuple(self))

        def __copy__(self) -> PreToolCallInfo:
            return self

        def __deepcopy__(self, memo: object) -> PreToolCallInfo:
            return self

    assert sorted(ORDER) == sorted(_FIELDS), "ORDER must hold every field of the declaration once"

make: Callable[[tuple[object, ...]], PreToolCallInfo] = type.__call__.__get__(PreToolCallInfo)
"""``make(values)``: a PreToolCallInfo holding ``values`` (in :data:`ORDER`; the metadata as a
:func:`tool_meta_snapshot`), built by tuple's own constructor (no Python frame)."""


def refs_when_unshared() -> int | None:
    """What ``sys.getrefcount`` says of an input held by one local variable of the caller and nothing else, or
    None where reference counts cannot tell (not CPython, or CPython without the GIL): then a new input is
    built for every hook."""
    if platform.python_implementation() != "CPython" or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    probe = make(("c", "t", MappingProxyType({}), None, 0, None, "r", "s", None, None))
    return sys.getrefcount(probe)
