"""Hook inputs are isolated (SPEC §4.2/§4.4): for EVERY event, a hook that attacks everything reachable from its
input — dict methods called on the frozen mappings, ``object.__setattr__`` / ``__delattr__``, slot descriptors,
``__class__`` assignment, ``vars()`` writes, ``list.append`` — changes nothing the Worker holds: the history, the
calls the tool received, the transcript and the tool's metadata are identical to an unmolested run's.

Only frames, ``gc`` and ``ctypes`` are out of scope (and not used here)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from helpers import PASS_RESULTS
from hookloop import FrozenDict, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop._frozen import freeze, thaw
from hookloop.hooks import ALL_EVENTS, POST_TOOL_CALL, Abort, HookEvent
from hookloop.tools import FunctionTool

pytestmark = pytest.mark.anyio

_ATOMS = (str, int, float, bool, type(None), bytes, type)
_DICT_WRITES: tuple[Callable[[Any], object], ...] = (
    lambda d: dict.__setitem__(d, "command", "echo innocent"),
    lambda d: dict.__delitem__(d, next(iter(d), "x")),
    lambda d: dict.update(d, command="echo innocent"),
    lambda d: dict.clear(d),
    lambda d: dict.pop(d, next(iter(d), "x")),
    lambda d: dict.popitem(d),
    lambda d: dict.setdefault(d, "injected", 1),
    lambda d: dict.__ior__(d, {"command": "echo innocent"}),
    lambda d: dict.__init__(d, command="echo innocent"),
    lambda d: d.__setitem__("command", "echo innocent"),
    lambda d: d.update(command="echo innocent"),
)
_EVERYONE_WRITES: tuple[Callable[[Any], object], ...] = (
    lambda x: list.append(x, "evil"),
    lambda x: list.__setitem__(x, 0, "evil"),
    lambda x: list.clear(x),
    lambda x: set.add(x, "evil"),
    lambda x: object.__setattr__(x, "injected", 1),
    lambda x: vars(x).__setitem__("injected", 1),
    lambda x: object.__setattr__(x, "__class__", _Evil),
    lambda x: vars(object)["__class__"].__set__(x, _Evil),
)


class _Evil:
    """What a ``__class__`` swap tries to turn objects into: everything reads as the innocent command."""

    def __getattribute__(self, name: str) -> object:
        return "echo innocent"


def _evil_value(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return "echo innocent"
    if isinstance(value, (int, float)):
        return value + 1000
    if isinstance(value, MappingProxyType):
        return freeze({"command": "echo innocent"})
    if isinstance(value, tuple):
        return ()
    return None


def _field_names(obj: object) -> list[str]:
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    names: list[str] = []
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names + list(getattr(obj, "__dict__", {}))


class Attack:
    """Attacks everything reachable from a hook input, children first (so the walk still reads sane values)."""

    def __init__(self) -> None:
        self.leaf_writes: list[str] = []  # writes into built-in immutable values that succeeded (must stay empty)
        self.mutable: list[str] = []  # mutable built-ins reachable from an input (must stay empty)
        self.forced = 0  # writes into the input's own Python objects (they may succeed: copies)
        self.refused = 0

    def _try(self, attempt: Callable[[], object], path: str, *, leaf: bool) -> None:
        try:
            attempt()
        except (TypeError, AttributeError, ValueError, KeyError):
            self.refused += 1
        else:
            if leaf:
                self.leaf_writes.append(path)
            else:
                self.forced += 1

    def walk(self, obj: object, path: str, seen: set[int] | None = None) -> None:
        seen = set() if seen is None else seen
        if isinstance(obj, _ATOMS) or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, (list, dict, set, bytearray)):
            self.mutable.append(f"{path}: {type(obj).__name__}")
            return
        from hookloop import Worker as W
        from hookloop.interceptors import InterceptorChain

        if isinstance(obj, (W, FunctionTool, InterceptorChain)):
            self.mutable.append(f"{path}: {type(obj).__name__}")
            return
        if isinstance(obj, MappingProxyType):
            for key, value in obj.items():
                self.walk(value, f"{path}[{key!r}]", seen)
            for attempt in (*_DICT_WRITES, *_EVERYONE_WRITES):
                self._try(lambda: attempt(obj), path, leaf=True)  # noqa: B023 - called at once
            return
        if isinstance(obj, tuple):
            for i, value in enumerate(obj):
                self.walk(value, f"{path}[{i}]", seen)
            for attempt in _EVERYONE_WRITES:
                self._try(lambda: attempt(obj), path, leaf=True)  # noqa: B023
            return
        names = _field_names(obj)
        for name in names:
            self.walk(getattr(obj, name, None), f"{path}.{name}", seen)
        cls = type(obj)
        for name in names:
            current = getattr(obj, name, None)
            evil = _evil_value(current)
            self._try(lambda: object.__setattr__(obj, name, evil), f"{path}.{name}", leaf=False)  # noqa: B023
            descriptor = cls.__dict__.get(name)
            if descriptor is not None and hasattr(descriptor, "__set__"):
                self._try(lambda: descriptor.__set__(obj, evil), f"{path}.{name}", leaf=False)  # noqa: B023
        for name in names[:1]:
            self._try(lambda: object.__delattr__(obj, name), f"{path}.{name}", leaf=False)  # noqa: B023
        self._try(lambda: vars(obj).__setitem__("injected", 1), path, leaf=False)
        evil_cls = type("EvilSub", (cls,), {"__slots__": (), "__getattribute__": _Evil.__getattribute__})
        self._try(lambda: object.__setattr__(obj, "__class__", evil_cls), path, leaf=False)


_IDS = re.compile(r"\b(?:(?:run|session|item)_[0-9a-f]{24}|a[0-9a-f]{16})\b")  # a…: a subagent's id


def normalised_transcript(path: Path) -> list[Any]:
    """The transcript with its random ids numbered by first appearance and timings zeroed."""
    seen: dict[str, str] = {}
    text = _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), path.read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:
        if "seconds" in line:
            line["seconds"] = 0
        if "transcript_path" in line:  # a subagent's own transcript, beside each run's
            line["transcript_path"] = 0
    return lines


def normalised_history(worker: Worker) -> str:
    seen: dict[str, str] = {}
    text = json.dumps([item.to_json() for item in worker.history])
    return _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), text)


received: list[dict[str, Any]] = []


@tool(threaded=False)
def shell(command: str, options: dict[str, list[str]] | None = None) -> str:
    """Pretend to run a command (records exactly what it was given)."""
    received.append({"command": command, "options": options})
    return f"ran {command}"


def _meta_snapshot() -> Any:
    meta = shell.meta
    return (meta.name, meta.description, thaw(meta.input_schema), meta.read_only, meta.server, type(meta))


def _turns() -> list[Any]:
    return [
        [Text("look"), ToolUse("shell", {"command": "rm -rf important", "options": {"flags": ["-v"]}})],
        [Text("done")],
    ]


async def _run(event: HookEvent[Any, Any], hook: Callable[[Any], Any], transcript: Path) -> tuple[Any, ...]:
    """One run of a script that reaches ``event``; returns what the Worker holds afterwards."""
    received.clear()
    turns = _turns()
    worker = Worker(ScriptedClient(turns), tools=[shell], transcript=transcript)
    worker.add_hook(event, hook)
    if event.name in ("pre_compact", "post_compact"):
        from hookloop.interceptors.compaction import Compaction

        steps = [[Text(f"step {i}"), ToolUse("shell", {"command": f"echo {i}"})] for i in range(4)]
        worker.client = ScriptedClient([*steps, [Text("done")]])
        worker.add_interceptor(Compaction(threshold_tokens=1, strategy="drop", keep_recent_steps=1))
    if event.name == "notification":
        worker.notify("the build finished", source="ci")
    if event.name in ("subagent_start", "subagent_stop"):  # the hooked point is inside an Agent call
        from hookloop.agents import AgentTool

        delegate = ToolUse("Agent", {"description": "d", "prompt": "do it", "subagent_type": "general-purpose"})
        worker.client = ScriptedClient([[Text("delegating"), delegate], *turns, [Text("parent done")]])
        worker.add_tool(AgentTool())
    if event.name == "on_abort":
        worker.add_hook(POST_TOOL_CALL, lambda info: Abort("stop here"))
        with pytest.raises(Exception, match="stop here"):
            await worker.run("go")
    else:
        await worker.run("go")
    worker.close()
    return normalised_history(worker), list(received), normalised_transcript(transcript), _meta_snapshot()


@pytest.mark.parametrize("event", ALL_EVENTS, ids=lambda e: e.name)
async def test_no_hook_can_change_what_the_worker_holds_through_its_input(
    event: HookEvent[Any, Any], tmp_path: Path
) -> None:
    meta_before = _meta_snapshot()
    seen_inputs: list[int] = []

    def bystander(info: Any) -> Any:
        seen_inputs.append(1)
        return PASS_RESULTS[event.name]

    attack = Attack()

    def meddler(info: Any) -> Any:
        seen_inputs.append(2)
        attack.walk(info, event.name)
        return PASS_RESULTS[event.name]

    bystander.name = meddler.name = "guard"  # type: ignore[attr-defined]  # the same name in both transcripts
    baseline = await _run(event, bystander, tmp_path / "baseline.jsonl")
    attacked = await _run(event, meddler, tmp_path / "attacked.jsonl")
    assert 1 in seen_inputs, f"{event.name} never fired"
    assert 2 in seen_inputs, f"{event.name} never fired"
    assert attack.leaf_writes == []
    assert attack.mutable == []
    assert attack.refused > 0
    history, calls, transcript, meta = attacked
    assert history == baseline[0]
    assert calls == baseline[1]
    assert transcript == baseline[2]
    assert meta == baseline[3] == meta_before


def test_frozen_arguments_are_not_dicts_and_every_dict_method_is_refused() -> None:
    frozen = freeze({"command": "rm -rf important", "nested": {"k": ["v"]}})
    assert isinstance(frozen, FrozenDict)
    assert not isinstance(frozen, dict)
    attack = Attack()
    attack.walk(frozen, "arguments")
    assert attack.leaf_writes == []
    assert attack.forced == 0
    assert attack.refused >= len(_DICT_WRITES) + len(_EVERYONE_WRITES)
    assert thaw(frozen) == {"command": "rm -rf important", "nested": {"k": ["v"]}}


def test_the_hooks_package_never_imports_the_interceptors_package() -> None:
    import ast

    import hookloop.hooks

    package = Path(hookloop.hooks.__file__).parent
    for source in package.glob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("hookloop.interceptors"), f"{source.name} imports {name}"
                assert not name.startswith("hookloop.worker"), f"{source.name} imports {name}"
                assert not name.startswith("hookloop._loop"), f"{source.name} imports {name}"
