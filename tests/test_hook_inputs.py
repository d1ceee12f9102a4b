"""pre_tool_call inputs (hookloop.hooks._tool_inputs) are immutable, and one handed to the next hook is as good
as a new one.

A PreToolCallInfo is a tuple underneath: nothing a hook does can change it, so the Worker gives the same input to
every hook of a call — unless a hook kept it or swapped its ``__class__`` (the one change CPython allows), and
then the next hook gets a new one. Every way a hook can keep or change its input must leave the next hook — and
the next call's hooks — an input equal to a new one: forced field writes, slot descriptors, ``__class__`` swaps,
a changed metadata copy, an input kept and swapped later by a task while the next hook waits. The answers must
match those of the timeline path (``run_chain``, which builds every input anew), with 1 and 5 hooks, sync and
async, and for a hook that raises. And it still behaves as the frozen dataclass it replaces.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import pickle
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

from helpers import add
from hookloop import HookError, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop._frozen import freeze
from hookloop.hooks import PRE_TOOL_CALL, Continue, PreToolCallInfo
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


class _Spy(tuple):  # type: ignore[type-arg]
    """A class with the layout of PreToolCallInfo (a tuple with no slots): ``__class__`` assignment to it is
    allowed, and its fields lie."""

    __slots__ = ()
    tool_name = "Echo"
    arguments = freeze({"command": "echo innocent"})
    call_id = "call_forged"
    meta = ToolMeta(name="Echo", description="", input_schema=freeze({}))


class _LyingSpy(_Spy):
    """The same, and it also claims to be a PreToolCallInfo: ``obj.__class__`` and ``isinstance`` believe it
    (only ``type()`` does not)."""

    __slots__ = ()
    __class__ = property(lambda self: PreToolCallInfo)  # type: ignore[assignment]


async def _run(hooks: list[Callable[[Any], Any]], *, watched: bool) -> tuple[list[tuple[object, ...]], list[object]]:
    worker = Worker(ScriptedClient([*CALLS, [Text("done")]]), tools=[add])
    for i, hook in enumerate(hooks):
        worker.add_hook(PRE_TOOL_CALL, hook, name=f"hook{i}")
    if watched:
        worker.subscribe(lambda event: None)
    try:
        await worker.run("go")
    except HookError as exc:  # a write the input refused: the same error on both paths
        error: list[object] = [str(exc)]
    else:
        error = []
    results = [(r.content, r.is_error) for r in worker.history if isinstance(r, ToolResult)]
    return results, error


def _recorder(
    seen: list[tuple[object, ...]],
    *,
    is_async: bool,
    tamper: Callable[[Any], None] | None = None,
    refused: list[str] | None = None,
) -> Any:
    def hook(info: PreToolCallInfo) -> Continue:
        seen.append(_snapshot(info))
        if tamper is not None:
            try:
                tamper(info)
            except (AttributeError, TypeError) as exc:  # the input refused the write
                if refused is not None:
                    refused.append(type(exc).__name__)
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
    assert info.tool_name == "Echo"  # what a later reader of this object would be told
    object.__setattr__(info, "__class__", PreToolCallInfo)  # and back: its items never changed


TAMPERS: dict[str, Callable[[Any], None] | None] = {
    "nothing": None,
    "object.__setattr__": lambda info: object.__setattr__(info, "arguments", freeze({"a": 0})),
    "slot descriptor": lambda info: PreToolCallInfo.__dict__["tool_name"].__set__(info, "Echo"),
    "every field": lambda info: [object.__setattr__(info, f.name, "x") for f in dataclasses.fields(info)],
    "__class__ swap": _swap_class,
    "class swap left in place": lambda info: object.__setattr__(info, "__class__", _Spy),
    "swap to a class that claims to be PreToolCallInfo": lambda info: object.__setattr__(info, "__class__", _LyingSpy),
    "meta field": lambda info: object.__setattr__(info.meta, "read_only", True),
    "meta replaced": lambda info: object.__setattr__(
        info, "meta", ToolMeta(name="x", description="", input_schema=freeze({}))
    ),
    "meta class swapped": lambda info: object.__setattr__(
        info.meta, "__class__", type("M", (), {"__slots__": ToolMeta.__slots__})
    ),
}


REFUSED = {"object.__setattr__", "slot descriptor", "every field", "meta replaced"}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("count", [1, 5])
@pytest.mark.parametrize("tamper", list(TAMPERS))
async def test_every_hook_sees_what_a_new_input_holds(tamper: str, count: int, is_async: bool) -> None:
    """The same inputs, hook after hook and call after call, as on the timeline path (always new inputs)."""
    seen: dict[bool, list[tuple[object, ...]]] = {}
    outcomes = {}
    refused: list[str] = []
    for watched in (False, True):
        seen[watched] = []
        hooks = [
            _recorder(seen[watched], is_async=is_async, tamper=TAMPERS[tamper], refused=refused) for _ in range(count)
        ]
        outcomes[watched] = await _run(hooks, watched=watched)
    assert seen[False] == seen[True]
    assert outcomes[False] == outcomes[True]
    assert outcomes[False][1] == []
    # writes into the input itself are refused (an exception in the hook); class swaps and writes into the
    # metadata copy succeed, and reach nobody
    assert len(refused) == (2 * 3 * count if tamper in REFUSED else 0)
    assert len(seen[False]) == 3 * count
    # and each call's hooks all saw that call's own arguments, untouched
    arguments = [next(v for n, _, v in entry[2] if n == "arguments") for entry in seen[False]]
    assert arguments == [{"a": 1, "b": 2}] * count + [{"a": 3, "b": 4}] * count + [{"a": 5, "b": 6}] * count
    assert all(entry[0] is PreToolCallInfo and entry[1] is ToolMeta for entry in seen[False])


async def test_an_input_kept_and_changed_later_does_not_reach_the_next_hook() -> None:
    """Hook one keeps its input and has a task swap its class for a lying one while hook two waits; hook two
    (and the next call's hooks) still read what will run."""
    kept: list[Any] = []
    changed = asyncio.Event()
    seen: list[tuple[str, object]] = []

    async def keeper(info: PreToolCallInfo) -> Continue:
        kept.append(info)

        async def later() -> None:
            for held in kept:
                object.__setattr__(held, "__class__", _Spy)  # the one change CPython allows to a tuple
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


def _input(meta: ToolMeta, call_id: str = "call_1") -> PreToolCallInfo:
    return PreToolCallInfo(
        run_id="run", session_id="session", turn=1, call_id=call_id, tool_name=meta.name, arguments=freeze({"x": 1}),
        meta=meta, permission_mode=None,
    )  # fmt: skip


META = ToolMeta(name="noop", description="d", input_schema=freeze({"type": "object"}))


async def test_the_hooks_of_a_call_share_one_input_unless_one_keeps_it() -> None:
    """What the refcount check buys: no copy per hook, and a new input after a hook that kept its own."""
    seen: list[list[int]] = [[], []]
    kept: list[PreToolCallInfo] = []

    def plain(info: PreToolCallInfo) -> Continue:
        seen[0].append(id(info))
        return Continue()

    def keeper(info: PreToolCallInfo) -> Continue:
        kept.append(info)
        seen[1].append(id(info))
        return Continue()

    worker = Worker(ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("done")]]), tools=[add])
    for hook in (plain, plain, keeper, plain, plain):
        worker.add_hook(PRE_TOOL_CALL, hook)
    await worker.run("go")
    first, second, after_keeper, fourth = seen[0]
    assert first == second == seen[1][0]  # nobody kept it: the same input
    assert after_keeper != seen[1][0]
    assert after_keeper == fourth
    assert kept[0].arguments == {"a": 1, "b": 2}


def test_no_write_reaches_an_input() -> None:
    info = _input(META)
    before = tuple(info)
    attempts: list[Callable[[], object]] = [
        lambda: setattr(info, "tool_name", "Echo"),
        lambda: object.__setattr__(info, "tool_name", "Echo"),
        lambda: object.__setattr__(info, "anything", 1),
        lambda: PreToolCallInfo.__dict__["tool_name"].__set__(info, "Echo"),
        lambda: delattr(info, "call_id"),
        lambda: object.__delattr__(info, "call_id"),
        lambda: object.__setattr__(info, "__class__", type("Other", (), {"__slots__": ()})),
    ]
    for attempt in attempts:
        with pytest.raises((AttributeError, TypeError)):
            attempt()
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.turn = 2  # type: ignore[misc]
    assert tuple(info) == before
    assert type(info) is PreToolCallInfo


def test_meta_is_a_new_copy_on_every_read() -> None:
    info = _input(META)
    first = info.meta
    object.__setattr__(first, "read_only", True)
    object.__setattr__(first, "name", "Echo")
    assert info.meta is not first
    assert info.meta == META
    assert type(info.meta) is ToolMeta
    assert META.name == "noop"
    assert META.read_only is False


def test_it_behaves_as_the_frozen_dataclass_it_replaces() -> None:
    info = _input(META)
    built = PreToolCallInfo(
        run_id="run", session_id="session", turn=1, call_id="call_1", tool_name="noop", arguments=freeze({"x": 1}),
        meta=META, permission_mode=None, agent_id=None, agent_type=None,
    )  # fmt: skip
    assert built == info
    assert info != tuple(info)  # equal only to another input
    assert [f.name for f in dataclasses.fields(info)] == [
        "run_id", "session_id", "turn", "call_id", "tool_name", "arguments", "meta", "permission_mode",
        "agent_id", "agent_type",
    ]  # fmt: skip
    assert dataclasses.is_dataclass(info)
    changed = dataclasses.replace(info, call_id="call_2")
    assert type(changed) is PreToolCallInfo
    assert changed.call_id == "call_2"
    assert changed.meta == META
    assert info.call_id == "call_1"
    assert dataclasses.asdict(dataclasses.replace(info, arguments={"x": 1}))["meta"]["name"] == "noop"  # type: ignore[arg-type]
    assert repr(info).startswith("PreToolCallInfo(run_id='run', session_id='session', turn=1, call_id='call_1'")
    assert "meta=ToolMeta(name='noop'" in repr(info)
    assert copy.copy(info) is info
    assert copy.deepcopy(info) is info
    restored = pickle.loads(pickle.dumps(dataclasses.replace(info, arguments=None)))  # type: ignore[arg-type]
    assert type(restored) is PreToolCallInfo
    assert restored.call_id == "call_1"
    assert restored.meta == META
    with pytest.raises(TypeError):
        PreToolCallInfo("run", "session")  # type: ignore[misc]  # keyword-only, as before
    match info:
        case PreToolCallInfo(tool_name="noop", call_id=call_id):
            assert call_id == "call_1"
        case _:
            pytest.fail("class patterns match by attribute")
