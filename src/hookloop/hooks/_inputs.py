"""pre_tool_call hook inputs for one run, each as good as a new one, built only when the last one is not.

Every pre_tool_call hook must get an input nobody else can change: a hook that forces a change into its
input (``object.__setattr__``, a slot descriptor, ``__class__`` assignment), or keeps it and changes it later,
must never mislead the next hook or the next call's hooks. A new :class:`PreToolCallInfo` and tool-metadata
view per hook guarantee that, at the price of two objects per hook call — most of what a hook costs.

:class:`PreToolCallInputs` gives the same guarantee more cheaply. It keeps the input it handed out last and
hands it out again only when

- nothing but itself references it or its metadata view any more (``sys.getrefcount``: a hook, a task or a
  thread that kept either holds a reference), so nobody can change it after this point; and
- every field of both is identical (``is``) to what a new one would hold, and both are still of their own
  class — a field that differs is set again, a view that differs is built anew.

An input handed out again is therefore indistinguishable from a new one to every hook (only ``id()`` could
tell, and new objects reuse freed addresses anyway). Where reference counts are not exact (not CPython, or
CPython without the GIL) every input is new.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from hookloop._frozen import FrozenDict
from hookloop.hooks.summaries import PreToolCallInfo, pre_tool_call_info, tool_meta_view
from hookloop.tools._base import ToolMeta

__all__ = ["PreToolCallInputs"]

_refs: Callable[[object], int] | None = getattr(sys, "getrefcount", None)
if platform.python_implementation() != "CPython" or not getattr(sys, "_is_gil_enabled", lambda: True)():
    _refs = None

(
    _SET_RUN,
    _SET_SESSION,
    _SET_TURN,
    _SET_CALL,
    _SET_TOOL,
    _SET_ARGUMENTS,
    _SET_META,
    _SET_MODE,
    _SET_AGENT,
    _SET_TYPE,
) = (PreToolCallInfo.__dict__[name].__set__ for name in PreToolCallInfo.__slots__)  # in field order


class PreToolCallInputs:
    """The pre_tool_call inputs of one run (see the module docstring). Not shared between runs or tasks: the
    Worker plans the calls of a run one after another."""

    __slots__ = ("_info", "_meta", "_view")

    def __init__(self) -> None:
        self._info: Any = None
        self._view: Any = None
        self._meta: ToolMeta | None = None

    def _held(self) -> tuple[int, int]:
        """The reference counts of the kept input and view when nothing else holds them (measured once, in
        the same form as :meth:`get` reads them)."""
        info = self._info
        view = self._view
        return _refs(info), _refs(view)  # type: ignore[misc]

    def get(
        self,
        fields: tuple[str, str, int, str, str, FrozenDict, ToolMeta, str | None, str | None, str | None],
    ) -> PreToolCallInfo:
        """An input for one pre_tool_call hook, referenced by nobody else, equal field by field (``is``) to
        ``pre_tool_call_input(*fields)``: (run id, session id, turn, call id, tool name, arguments, the tool's
        own metadata — not a view —, permission mode, agent id, agent type). The caller must not keep it once
        the hook returned."""
        run_id, session_id, turn, call_id, tool_name, arguments, meta, permission_mode, agent_id, agent_type = fields
        info = self._info
        if info is None or _refs is None or _refs(info) != _INFO_HELD or type(info) is not PreToolCallInfo:
            return self._new(
                run_id, session_id, turn, call_id, tool_name, arguments, meta, permission_mode, agent_id, agent_type
            )
        view = self._view
        if (
            meta is not self._meta
            or info.meta is not view
            or _refs(view) != _VIEW_HELD
            or type(view) is not ToolMeta
            or view.name is not meta.name
            or view.description is not meta.description
            or view.input_schema is not meta.input_schema
            or view.read_only is not (meta.read_only is True)
            or view.server is not meta.server
            or view.sequential is not (meta.sequential is True)
            or view.performs_effects is not (meta.performs_effects is True)
        ):
            self._view = view = tool_meta_view(meta)
            self._meta = meta
            _SET_META(info, view)
        if info.run_id is not run_id:
            _SET_RUN(info, run_id)
        if info.session_id is not session_id:
            _SET_SESSION(info, session_id)
        if info.turn is not turn:
            _SET_TURN(info, turn)
        if info.call_id is not call_id:
            _SET_CALL(info, call_id)
        if info.tool_name is not tool_name:
            _SET_TOOL(info, tool_name)
        if info.arguments is not arguments:
            _SET_ARGUMENTS(info, arguments)
        if info.permission_mode is not permission_mode:
            _SET_MODE(info, permission_mode)
        if info.agent_id is not agent_id:
            _SET_AGENT(info, agent_id)
        if info.agent_type is not agent_type:
            _SET_TYPE(info, agent_type)
        return info

    def _new(
        self,
        run_id: str,
        session_id: str,
        turn: int,
        call_id: str,
        tool_name: str,
        arguments: FrozenDict,
        meta: ToolMeta,
        permission_mode: str | None,
        agent_id: str | None,
        agent_type: str | None,
    ) -> PreToolCallInfo:
        view = tool_meta_view(meta)
        info = pre_tool_call_info(
            run_id, session_id, turn, call_id, tool_name, arguments, view, permission_mode, agent_id, agent_type
        )
        self._info, self._view, self._meta = info, view, meta
        return info


def _calibrate() -> tuple[int, int]:
    probe = PreToolCallInputs()
    meta = ToolMeta(name="probe", description="", input_schema=MappingProxyType({}))
    probe._new("r", "s", 0, "c", "probe", MappingProxyType({}), meta, None, None, None)
    return probe._held() if _refs is not None else (0, 0)


_INFO_HELD, _VIEW_HELD = _calibrate()
