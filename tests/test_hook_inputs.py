"""pre_tool_call inputs handed out again (hookloop.hooks._inputs) are as good as new ones.

The Worker keeps the last input it gave a pre_tool_call hook and gives it to the next hook (of the chain, or of
the next call) only when nobody else holds it and nothing in it changed. Every way a hook can keep or change its
input must still leave the next hook — and the next call's hooks — an input equal to a new one: forced field
writes, slot descriptors, ``__class__`` swaps, a changed metadata view, an input kept and changed later by a
task while the next hook waits. The answers must match those of the timeline path (``run_chain``, which builds
every input anew), with 1 and 5 hooks, sync and async, and for a hook that raises.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

from helpers import add
from hookloop import HookError, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop._frozen import freeze
from hookloop.hooks import PRE_TOOL_CALL, Continue, PreToolCallInfo
from hookloop.hooks._inputs import PreToolCallInputs
from hookloop.hooks.summaries import pre_tool_call_input
from hookloop.tools import ToolMeta

pytestmark = pytest.mark.anyio

CALLS = [[ToolUse("add", {"a": 1, "b": 2}), ToolUse("add", {"a": 3, "b": 4})], [ToolUse("add", {"a": 5, "b": 6})]]


def _plain(value: object) -> object:
    return dict(value) if isinstance(value, MappingProxyType) else value


def _snapshot(info: PreToolCallInfo) -> tuple[object, ...]:
    """Everything a hook can read of its input, with the exact types (but the run's and session's ids), holding
    no reference to the input or its metadata view."""
    names = [f.name for f in dataclasses.fields(info) if f.name not in ("run_id", "session_id", "meta")]
    fields = tuple((name, type(getattr(info, name)), _plain(getattr(info, name))) for name in names)
    view = info.meta
    meta = tuple((f.name, type(getattr(view, f.name)), _plain(getattr(view, f.name))) for f in dataclasses.fields(view))
    del view
    return (type(info), type(info.meta), fields, meta)


class _Spy:
    """A class with the layout of PreToolCallInfo: ``__class__`` assignment to it is allowed."""

    __slots__ = PreToolCallInfo.__slots__


async def _run(hooks: list[Callable[[Any], Any]], *, watched: bool) -> tuple[list[tuple[object, ...]], list[object]]:
    worker = Worker(ScriptedClient([*CALLS, [Text("done")]]), tools=[add])
    for i, hook in enumerate(hooks):
        worker.add_hook(PRE_TOOL_CALL, hook, name=f"hook{i}")
    if watched:
        worker.subscribe(lambda event: None)
    await worker.run("go")
    results = [(r.content, r.is_error) for r in worker.history if isinstance(r, ToolResult)]
    return results, []


def _recorder(seen: list[tuple[object, ...]], *, is_async: bool, tamper: Callable[[Any], None] | None = None) -> Any:
    def hook(info: PreToolCallInfo) -> Continue:
        seen.append(_snapshot(info))
        if tamper is not None:
            tamper(info)
        return Continue()

    if not is_async:
        return hook

    async def async_hook(info: PreToolCallInfo) -> Continue:
        loop = asyncio.get_running_loop()
        resumed = loop.create_future()
        loop.call_soon(resumed.set_result, None)
        await resumed  # suspends for one turn of the event loop
        return hook(info)

    return async_hook


def _swap_class(info: Any) -> None:
    object.__setattr__(info, "__class__", _Spy)
    info.tool_name = "Echo"  # the spy's own slot descriptor writes the slot
    info.arguments = freeze({"command": "echo innocent"})


TAMPERS: dict[str, Callable[[Any], None] | None] = {
    "nothing": None,
    "object.__setattr__": lambda info: object.__setattr__(info, "arguments", freeze({"a": 0})),
    "slot descriptor": lambda info: PreToolCallInfo.__dict__["tool_name"].__set__(info, "Echo"),
    "every field": lambda info: [object.__setattr__(info, f.name, "x") for f in dataclasses.fields(info)],
    "__class__ swap": _swap_class,
    "class swap left in place": lambda info: object.__setattr__(info, "__class__", _Spy),
    "meta field": lambda info: object.__setattr__(info.meta, "read_only", True),
    "meta replaced": lambda info: object.__setattr__(
        info, "meta", ToolMeta(name="x", description="", input_schema=freeze({}))
    ),
    "meta class swapped": lambda info: object.__setattr__(
        info.meta, "__class__", type("M", (), {"__slots__": ToolMeta.__slots__})
    ),
}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("count", [1, 5])
@pytest.mark.parametrize("tamper", list(TAMPERS))
async def test_every_hook_sees_what_a_new_input_holds(tamper: str, count: int, is_async: bool) -> None:
    """The same inputs, hook after hook and call after call, as on the timeline path (always new inputs)."""
    seen: dict[bool, list[tuple[object, ...]]] = {}
    outcomes = {}
    for watched in (False, True):
        seen[watched] = []
        hooks = [_recorder(seen[watched], is_async=is_async, tamper=TAMPERS[tamper]) for _ in range(count)]
        outcomes[watched] = await _run(hooks, watched=watched)
    assert seen[False] == seen[True]
    assert outcomes[False] == outcomes[True]
    assert len(seen[False]) == 3 * count
    # and each call's hooks all saw that call's own arguments, untouched
    arguments = [next(v for n, _, v in entry[2] if n == "arguments") for entry in seen[False]]
    assert arguments == [{"a": 1, "b": 2}] * count + [{"a": 3, "b": 4}] * count + [{"a": 5, "b": 6}] * count
    assert all(entry[0] is PreToolCallInfo and entry[1] is ToolMeta for entry in seen[False])


async def test_an_input_kept_and_changed_later_does_not_reach_the_next_hook() -> None:
    """Hook one keeps its input and has a task force a change into it while hook two waits; hook two (and
    the next call's hooks) still read what will run."""
    kept: list[Any] = []
    changed = asyncio.Event()
    seen: list[tuple[str, object]] = []

    async def keeper(info: PreToolCallInfo) -> Continue:
        kept.append(info)

        async def later() -> None:
            for held in kept:
                object.__setattr__(held, "tool_name", "Echo")
                object.__setattr__(held, "arguments", freeze({"a": 0, "b": 0}))
                object.__setattr__(held.meta, "name", "Echo")
            changed.set()

        asyncio.get_running_loop().create_task(later())
        return Continue()

    async def guard(info: PreToolCallInfo) -> Continue:
        await changed.wait()  # the keeper's task ran while this hook waited
        changed.clear()
        seen.append((info.tool_name, dict(info.arguments)))
        assert info.meta.name == "add"
        return Continue()

    worker = Worker(ScriptedClient([*CALLS, [Text("done")]]), tools=[add])
    worker.add_hook(PRE_TOOL_CALL, keeper)
    worker.add_hook(PRE_TOOL_CALL, guard)
    await worker.run("go")
    assert seen == [("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), ("add", {"a": 5, "b": 6})]
    assert [r.content for r in worker.history if isinstance(r, ToolResult)] == ["3", "7", "11"]


@pytest.mark.parametrize("count", [1, 5])
async def test_a_raising_hook_is_the_same_error_on_both_paths(count: int) -> None:
    errors = []
    for watched in (False, True):
        calls: list[str] = []

        def ok(info: PreToolCallInfo, calls: list[str] = calls) -> Continue:
            calls.append(info.call_id)
            return Continue()

        def broken(info: PreToolCallInfo) -> Continue:
            raise ValueError("broken hook")

        worker = Worker(ScriptedClient([*CALLS, [Text("done")]]), tools=[add])
        for _ in range(count - 1):
            worker.add_hook(PRE_TOOL_CALL, ok)
        worker.add_hook(PRE_TOOL_CALL, broken, name="broken")
        if watched:
            worker.subscribe(lambda event: None)
        with pytest.raises(HookError) as raised:
            await worker.run("go")
        errors.append((str(raised.value), raised.value.hook, raised.value.event, len(calls)))
    assert errors[0] == errors[1]
    assert errors[0][1:3] == ("broken", "pre_tool_call")


def _fields(meta: ToolMeta, call_id: str = "call_1") -> Any:
    return ("run", "session", 1, call_id, meta.name, freeze({"x": 1}), meta, None, None, None)


def test_an_input_is_handed_out_again_only_when_nobody_holds_it() -> None:
    meta = ToolMeta(name="noop", description="d", input_schema=freeze({"type": "object"}))
    inputs = PreToolCallInputs()
    first = inputs.get(_fields(meta))
    held = first  # a hook kept it
    second = inputs.get(_fields(meta))
    assert second is not held
    kept = id(second)  # alive in `inputs`: no new object can take its address
    del held, first, second
    third = inputs.get(_fields(meta, "call_2"))
    assert id(third) == kept  # nobody held the second: handed out again, with the new call id
    assert third.call_id == "call_2"
    view = third.meta
    del third
    fourth = inputs.get(_fields(meta))
    assert fourth.meta is not view  # its view was kept: a new one
    assert _snapshot(fourth) == _snapshot(pre_tool_call_input(*_fields(meta)))
