"""Per-event hook dispatch cost with 0, 1 and 5 hooks (sync and async), beside pluggy and strands-agents.

Each case is a tight loop inside one coroutine doing exactly what its library's caller does per event, on an
input prepared once:

- hookloop — what the Worker's stream path does at each hook point::

      chain = registry.chains[EVENT.index]          # a tuple: `if chain:` is a C-level test
      if chain:
          if chain.single is not None:              # one hook: called (and awaited) inline
              result = single.fn(info); result = await result if single.is_async else result
              decided = None if result.__class__ in EVENT.passes else settle(EVENT, single, result)
          else:
              decided = dispatch_sync(EVENT, chain, info) if chain.all_sync else await dispatch(...)

- pluggy — ``pm.hook.pre_tool_call(arg=info)`` on a hookspec with 0/1/5 hookimpls (async hookimpls return
  coroutines, which the caller awaits: pluggy itself has no async calling);
- strands-agents — ``HookRegistry.invoke_callbacks(event)`` (sync callbacks) or
  ``await invoke_callbacks_async(event)`` on a prepared ``BeforeToolCallEvent``;
- the floors — a bare call of a function returning a constant, and ``await`` of a coroutine function
  returning a constant.

Hooks return a prepared ``Continue()`` (hookloop, pluggy) or None (strands callbacks return nothing).
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from time import perf_counter_ns
from typing import Any

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, absolute, faster, info, times
from hookloop import ScriptedClient, Worker
from hookloop._frozen import freeze_object
from hookloop.hooks import PRE_TOOL_CALL, Continue, HookRegistry, PreToolCallInfo
from hookloop.hooks._dispatch import dispatch, dispatch_sync, raised, settle
from hookloop.tools import ToolMeta

__all__ = ["run"]

SECTION = "hook event dispatch (per event)"
EVENT = PRE_TOOL_CALL
CONTINUE = Continue()
COUNTS = (0, 1, 5)


def sync_hook(info: object) -> Continue:
    return CONTINUE


async def async_hook(info: object) -> Continue:
    return CONTINUE


def _prepared_info() -> PreToolCallInfo:
    meta = ToolMeta(name="noop", description="does nothing", input_schema=freeze_object({"type": "object"}))
    return PreToolCallInfo(
        run_id="run_bench",
        session_id="session_bench",
        turn=1,
        call_id="call_1",
        tool_name="noop",
        arguments=freeze_object({"x": 1}),
        meta=meta,
        permission_mode=None,
    )


# -- the timed loops: one function per caller shape, so the loop body is exactly that caller's code ------------


async def _bare_call(fn: Callable[[object], object], arg: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        fn(arg)
    return (perf_counter_ns() - start) / n


async def _awaited_coroutine(fn: Callable[[object], Any], arg: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        await fn(arg)
    return (perf_counter_ns() - start) / n


async def _hookloop_event(registry: HookRegistry, info: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        chain = registry.chains[EVENT.index]
        if chain:
            single = chain.single
            if single is not None:  # one hook: called inline, as the Worker's stream path does
                try:
                    result = single.fn(info)
                    if single.is_async:
                        result = await result
                except Exception as exc:
                    raise raised(EVENT, single, exc) from exc
                decided = None if result.__class__ in EVENT.passes else settle(EVENT, single, result)
            else:
                decided = dispatch_sync(EVENT, chain, info) if chain.all_sync else await dispatch(EVENT, chain, info)
            if decided is not None:
                raise AssertionError(decided)
    return (perf_counter_ns() - start) / n


async def _worker_call_site(run: Any, info: object, n: int) -> float:
    """What ``_Run._plan_call`` does around pre_tool_call (edits list, ``await self.hooks(...)``)."""
    start = perf_counter_ns()
    for _ in range(n):
        if run.w.hooks.chains[EVENT.index]:
            edits: list[Any] = []
            decided = await run.hooks(EVENT, info, edits, "call_1")
            if decided is not None:
                raise AssertionError(decided)
    return (perf_counter_ns() - start) / n


async def _pluggy_sync(pm: Any, info: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        pm.hook.pre_tool_call(arg=info)
    return (perf_counter_ns() - start) / n


async def _pluggy_async(pm: Any, info: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        for pending in pm.hook.pre_tool_call(arg=info):
            await pending
    return (perf_counter_ns() - start) / n


async def _strands_sync(registry: Any, event: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        registry.invoke_callbacks(event)
    return (perf_counter_ns() - start) / n


async def _strands_async(registry: Any, event: object, n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        await registry.invoke_callbacks_async(event)
    return (perf_counter_ns() - start) / n


# -- peers ----------------------------------------------------------------------------------------------------


def _pluggy_managers() -> tuple[dict[str, Any], str]:
    """pluggy PluginManagers keyed ``"sync0"``, ``"sync1"``, ``"async5"``…; empty if pluggy is missing."""
    try:
        import pluggy
    except ImportError:
        return {}, "pluggy is not installed (pip install -e '.[bench]')"
    hookspec = pluggy.HookspecMarker("hookbench")
    hookimpl = pluggy.HookimplMarker("hookbench")

    class Spec:
        @hookspec
        def pre_tool_call(self, arg: object) -> object:
            """Before a tool call."""

    class SyncPlugin:
        @hookimpl
        def pre_tool_call(self, arg: object) -> object:
            return CONTINUE

    class AsyncPlugin:
        @hookimpl
        async def pre_tool_call(self, arg: object) -> object:
            return CONTINUE

    managers: dict[str, Any] = {}
    for kind, plugin in (("sync", SyncPlugin), ("async", AsyncPlugin)):
        for count in COUNTS:
            pm = pluggy.PluginManager("hookbench")
            pm.add_hookspecs(Spec)
            for i in range(count):
                pm.register(plugin(), name=f"plugin{i}")
            managers[f"{kind}{count}"] = pm
    return managers, f"pluggy {pluggy.__version__}"


def _strands_registries() -> tuple[dict[str, Any], object, str]:
    """strands-agents HookRegistries keyed like :func:`_pluggy_managers`, and the prepared event."""
    try:
        from importlib.metadata import version

        from strands.hooks import BeforeToolCallEvent
        from strands.hooks import HookRegistry as StrandsRegistry
    except ImportError:
        return {}, None, "strands-agents is not installed (pip install -e '.[bench]')"

    def sync_callback(event: BeforeToolCallEvent) -> None:
        return None

    async def async_callback(event: BeforeToolCallEvent) -> None:
        return None

    registries: dict[str, Any] = {}
    for kind, callback in (("sync", sync_callback), ("async", async_callback)):
        for count in COUNTS:
            registry = StrandsRegistry()
            for _ in range(count):
                registry.add_callback(BeforeToolCallEvent, callback)
            registries[f"{kind}{count}"] = registry
    event = BeforeToolCallEvent(
        agent=None,  # type: ignore[arg-type]  # the registry never looks at the agent
        selected_tool=None,
        tool_use={"toolUseId": "call_1", "name": "noop", "input": {"x": 1}},
        invocation_state={},
    )
    return registries, event, f"strands-agents {version('strands-agents')}"


# -- frames per event (the "no coroutine is created" check) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrameCount:
    frames: float
    coroutines: float
    names: tuple[str, ...]

    def describe(self) -> str:
        return ", ".join(self.names) or "none"


async def count_frames(registry: HookRegistry, info: object, n: int = 100) -> FrameCount:
    """Python frames and coroutines entered per hookloop event, counted with ``sys.setprofile``."""
    frames = coroutines = 0
    names: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: object) -> None:
        nonlocal frames, coroutines
        if event == "call":
            frames += 1
            names[frame.f_code.co_qualname] += 1
            if frame.f_code.co_flags & inspect.CO_COROUTINE:
                coroutines += 1

    sys.setprofile(profile)
    try:
        for _ in range(n):
            chain = registry.chains[EVENT.index]
            if chain:
                single = chain.single
                if single is not None:  # one hook: called inline, as the Worker's stream path does
                    try:
                        result = single.fn(info)
                        if single.is_async:
                            result = await result
                    except Exception as exc:
                        raise raised(EVENT, single, exc) from exc
                    decided = None if result.__class__ in EVENT.passes else settle(EVENT, single, result)
                else:
                    decided = (
                        dispatch_sync(EVENT, chain, info) if chain.all_sync else await dispatch(EVENT, chain, info)
                    )
                if decided is not None:
                    raise AssertionError(decided)
    finally:
        sys.setprofile(None)
    per_event = tuple(f"{name} ×{count / n:g}" for name, count in sorted(names.items()))
    return FrameCount(frames / n, coroutines / n, per_event)


# -- the section ----------------------------------------------------------------------------------------------


def _registry(kind: str, count: int) -> HookRegistry:
    registry = HookRegistry()
    for _ in range(count):
        registry.add(EVENT, sync_hook if kind == "sync" else async_hook)
    return registry


def _worker_call_sites(info: object) -> tuple[dict[str, Callable[[int], Any]], str]:
    """The Worker's own pre_tool_call call site (private API: reported, never fatal, if it changed)."""
    try:
        from hookloop._loop import _Run

        runs = {}
        for key, watched in (("worker call site sync1", False), ("worker call site sync1 watched", True)):
            worker = Worker(ScriptedClient([]))
            worker.add_pre_tool_call_hook(sync_hook)
            if watched:
                worker.subscribe(lambda event: None)
            runs[key] = _Run(worker, "run_bench")
            if not callable(getattr(runs[key], "hooks", None)):
                raise AttributeError("_Run.hooks is gone")
    except (ImportError, AttributeError, TypeError) as exc:
        return {}, f"the Worker's call site was not measured: {type(exc).__name__}: {exc}"
    return {key: partial(_worker_call_site, run, info) for key, run in runs.items()}, ""


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    """Measure every case; return the rows and the raw data (for ``--json``)."""
    n = sizes.dispatch_iterations
    prepared = _prepared_info()
    registries = {f"{kind}{count}": _registry(kind, count) for kind in ("sync", "async") for count in COUNTS}
    managers, pluggy_label = _pluggy_managers()
    strands, strands_event, strands_label = _strands_registries()
    call_sites, call_site_problem = _worker_call_sites(prepared)

    timed: dict[str, Callable[[int], Any]] = {
        "bare call": partial(_bare_call, sync_hook, prepared),
        "awaited coroutine": partial(_awaited_coroutine, async_hook, prepared),
    }
    for key, registry in registries.items():
        if key != "async0":  # 0 hooks: one code path, whatever kind the hooks would be
            timed[f"hookloop {key}"] = partial(_hookloop_event, registry, prepared)
    for key, pm in managers.items():
        if key != "async0":
            timed[f"pluggy {key}"] = partial(_pluggy_async if key.startswith("async") else _pluggy_sync, pm, prepared)
    for key, registry in strands.items():
        # strands' own loop calls invoke_callbacks_async for every event; its sync API is measured too, and
        # hookloop is compared with whichever is cheaper.
        timed[f"strands {key} async API"] = partial(_strands_async, registry, strands_event)
        if key.startswith("sync"):
            timed[f"strands {key} sync API"] = partial(_strands_sync, registry, strands_event)
    timed.update(call_sites)
    cases: dict[str, Sample] = {name: partial(loop, n) for name, loop in timed.items()}

    m, samples = await interleave(cases, sizes.dispatch_repeats)
    zero = await count_frames(registries["sync0"], prepared)
    one_async = await count_frames(registries["async1"], prepared)

    def hookloop(key: str) -> float:
        return m["hookloop sync0" if key == "async0" else f"hookloop {key}"]

    def strands_best(key: str) -> tuple[float, str]:
        apis = [(m[f"strands {key} {api} API"], api) for api in ("sync", "async") if f"strands {key} {api} API" in m]
        value, api = min(apis)
        return value, f"strands ({api} API)"

    def versus(label: str, key: str, target: float | None) -> list[Row]:
        out = []
        if f"pluggy {key}" in m or (key == "async0" and "pluggy sync0" in m):
            peer = m[f"pluggy {key}"] if key != "async0" else m["pluggy sync0"]
            out.append(faster(SECTION, f"{label} vs pluggy", hookloop(key), peer, "pluggy", at_least=target))
        if f"strands {key} async API" in m:
            peer, peer_label = strands_best(key)
            out.append(faster(SECTION, f"{label} vs strands", hookloop(key), peer, peer_label, at_least=target))
        return out

    bare, awaited = m["bare call"], m["awaited coroutine"]
    rows: list[Row] = [
        info(SECTION, "floor: bare function call", bare, "ns"),
        info(SECTION, "floor: awaited trivial coroutine", awaited, "ns"),
        times(SECTION, "0 hooks", hookloop("sync0"), "ns", bare, "bare call", at_most=2),
        info(
            SECTION,
            "0 hooks: coroutines created per event",
            zero.coroutines,
            "count",
            target="0",
            passed=zero.coroutines == 0,
            note=f"Python frames entered per event: {zero.frames:g} ({zero.describe()})",
        ),
        *versus("0 hooks", "sync0", None),
        times(SECTION, "1 sync hook", hookloop("sync1"), "ns", bare, "bare call"),
        *versus("1 sync hook", "sync1", 4),
        times(
            SECTION,
            "1 async hook",
            hookloop("async1"),
            "ns",
            awaited,
            "awaited coroutine",
            at_most=3,
            note=f"coroutines per event: {one_async.coroutines:g}; frames: {one_async.describe()}",
        ),
        *versus("1 async hook", "async1", 4),
        absolute(SECTION, "5 sync hooks", hookloop("sync5"), at_most_ns=1_000),
        *versus("5 sync hooks", "sync5", 4),
        absolute(SECTION, "5 async hooks", hookloop("async5"), at_most_ns=1_000),
        *versus("5 async hooks", "async5", 4),
    ]
    if "worker call site sync1" in m:
        dispatch_path = hookloop("sync1")
        rows += [
            times(
                SECTION,
                "1 sync hook at the Worker's call site",
                m["worker call site sync1"],
                "ns",
                dispatch_path,
                "dispatch path",
                note="pre_tool_call as _Run._plan_call runs it: edits list + `await self.hooks(...)`",
            ),
            times(
                SECTION,
                "… with a timeline subscriber",
                m["worker call site sync1 watched"],
                "ns",
                dispatch_path,
                "dispatch path",
                note="each hook decision becomes a HookDecision on the timeline",
            ),
        ]
    problems = [label for label in (pluggy_label, strands_label) if "not installed" in label]
    if call_site_problem:
        problems.append(call_site_problem)
    if problems:
        rows.append(info(SECTION, "not measured", len(problems), "count", note="; ".join(problems)))
    data = {
        "iterations": n,
        "repeats": sizes.dispatch_repeats,
        "peers": [pluggy_label, strands_label],
        "median_ns": m,
        "samples_ns": samples,
        "frames_per_event": {
            "0 hooks": {"frames": zero.frames, "coroutines": zero.coroutines, "names": list(zero.names)},
            "1 async hook": {
                "frames": one_async.frames,
                "coroutines": one_async.coroutines,
                "names": list(one_async.names),
            },
        },
    }
    return rows, data
