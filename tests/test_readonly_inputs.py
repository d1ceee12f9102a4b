"""Seed 003's completion criterion: for EVERY event, a hook cannot change what it received, nothing mutable is
reachable from its input (no Worker, history list, tool instance or interceptor), and the run is unchanged."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from helpers import PASS_RESULTS, echo, shape
from hookloop import FrozenDict, ScriptedClient, Text, ToolUse, Worker
from hookloop.hooks import ALL_EVENTS, HookEvent
from hookloop.tools import FunctionTool

pytestmark = pytest.mark.anyio

_ATOMS = (str, int, float, bool, type(None), type)


def _attempt_mutations(obj: Any, path: str, violations: list[str], seen: set[int]) -> int:
    """Try to mutate every node reachable from ``obj``; return how many attempts raised (all must)."""
    if isinstance(obj, _ATOMS) or id(obj) in seen:
        return 0
    seen.add(id(obj))
    from hookloop import Worker as W
    from hookloop.interceptors import InterceptorChain

    if isinstance(obj, (W, FunctionTool, InterceptorChain, list, set, bytearray)) or (
        isinstance(obj, dict) and not isinstance(obj, FrozenDict)
    ):
        violations.append(f"{path}: reachable mutable {type(obj).__name__}")
        return 0
    blocked = 0
    if dataclasses.is_dataclass(obj):
        for field in dataclasses.fields(obj):
            try:
                setattr(obj, field.name, None)
            except (AttributeError, TypeError):
                blocked += 1
            else:
                violations.append(f"{path}.{field.name}: assignment succeeded")
            blocked += _attempt_mutations(getattr(obj, field.name), f"{path}.{field.name}", violations, seen)
    elif isinstance(obj, FrozenDict):
        for attempt in (
            lambda: obj.__setitem__("injected", 1),
            lambda: obj.update(injected=1),
            lambda: obj.pop(next(iter(obj)), None) if obj else obj.clear(),
            lambda: obj.setdefault("injected", 1),
        ):
            try:
                attempt()
            except TypeError:
                blocked += 1
            else:
                violations.append(f"{path}: FrozenDict mutation succeeded")
        for key, value in obj.items():
            blocked += _attempt_mutations(value, f"{path}[{key!r}]", violations, seen)
    elif isinstance(obj, tuple):
        for i, value in enumerate(obj):
            blocked += _attempt_mutations(value, f"{path}[{i}]", violations, seen)
    else:
        violations.append(f"{path}: unexpected type {type(obj).__name__}")
    return blocked


def script() -> ScriptedClient:
    return ScriptedClient([[Text("look"), ToolUse("echo", {"text": "hi"})], [Text("done")]])


@pytest.mark.parametrize("event", ALL_EVENTS, ids=lambda e: e.name)
async def test_no_hook_input_can_be_mutated_and_the_run_is_unchanged(event: HookEvent[Any, Any]) -> None:
    baseline = Worker(script(), tools=[echo])
    await baseline.run("go")

    worker = Worker(script(), tools=[echo])
    violations: list[str] = []
    attempts: list[int] = []
    inputs: list[Any] = []

    def meddler(info: Any) -> Any:
        inputs.append(info)
        attempts.append(_attempt_mutations(info, event.name, violations, set()))
        return PASS_RESULTS[event.name]

    worker.add_hook(event, meddler)
    if event.name in ("pre_compact", "post_compact"):
        from hookloop.interceptors.compaction import Compaction

        turns = [[Text(f"step {i}"), ToolUse("echo", {"text": str(i)})] for i in range(4)]
        baseline = Worker(ScriptedClient([*turns, [Text("done")]]), tools=[echo])
        worker.client = ScriptedClient([*turns, [Text("done")]])
        for w in (baseline, worker):
            w.add_interceptor(Compaction(threshold_tokens=1, strategy="drop", keep_recent_steps=1))
        await baseline.run("go")
        await worker.run("go")
    elif event.name == "notification":
        for w in (baseline, worker):
            w.notify("the build finished", source="ci")
        baseline.set_history([])
        baseline.client = script()
        await baseline.run("go")
        await worker.run("go")
    elif event.name == "on_abort":
        # on_abort fires only on failure: make the run fail after the tool batch
        from hookloop.hooks import POST_TOOL_CALL, Abort

        worker.add_hook(POST_TOOL_CALL, lambda info: Abort("stop here"))
        baseline = Worker(script(), tools=[echo])
        baseline.add_hook(POST_TOOL_CALL, lambda info: Abort("stop here"))
        with pytest.raises(Exception, match="stop here"):
            await baseline.run("go")
        with pytest.raises(Exception, match="stop here"):
            await worker.run("go")
    else:
        await worker.run("go")
    assert inputs, f"{event.name} never fired"
    assert violations == []
    assert all(n > 0 for n in attempts)
    assert shape(worker.history) == shape(baseline.history)


def test_the_hooks_package_never_imports_the_interceptors_package() -> None:
    import ast
    from pathlib import Path

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
