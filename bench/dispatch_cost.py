"""Per-event hook cost on the Worker's real pre_tool_call path, beside pluggy and strands-agents.

Every hookloop figure times ``_ToolBatch._plan`` — the exact method the Worker's tool batch calls for each tool
call of a reply, awaiting what it returns when something asynchronous must run first — on two prepared calls of
a real ``Worker`` with one registered tool (planned in turn, so each call's hooks see another call id and
arguments). So it includes what a user pays: with no hook, or only sync hooks and nobody watching, the call is
planned with no coroutine; a lone async hook's own coroutine is returned for the batch to await, and its answer
handed to ``_planned`` (several async hooks, or a watched one, add the ``_plan_call`` coroutine); and every hook
input (one immutable ``PreToolCallInfo`` per call, shared by the call's hooks unless one keeps it — see
``hookloop.hooks._tool_inputs``), the dispatch, the declared-edit scan, then validation and the permission
decision. Configurations differ only in their hooks, so what a hook adds is ``plan(with hooks) − plan(0 hooks)``,
both medians of the same interleaved run:

- hookloop — ``run._plan(call)`` (and ``await`` of what it returns, as the batch does) with 0, 1 or 5 sync / async
  ``pre_tool_call`` hooks (the tool's validation is free and the Worker has no permission policy, so the
  0-hook baseline is small and the difference is not lost in noise) (and one run with a timeline subscriber,
  where every hook decision also becomes a ``HookDecision`` event);
- pluggy — ``pm.hook.pre_tool_call(arg=info)`` on a hookspec with 0/1/5 hookimpls (async hookimpls return
  coroutines, which the caller awaits: pluggy itself has no async calling);
- strands-agents — ``HookRegistry.invoke_callbacks(event)`` (sync callbacks) or
  ``await invoke_callbacks_async(event)`` on a ``BeforeToolCallEvent`` built per call, as strands' tool
  executor does (pluggy gets its input prepared once: it has no event type, and copies nothing);
- the floors — a bare call of a function returning a constant, and ``await`` of a coroutine function
  returning a constant.

Hooks return a prepared ``Continue()`` (hookloop, pluggy) or None (strands callbacks return nothing).
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from time import perf_counter_ns
from typing import Any

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, absolute, faster, info, times
from hookloop import ScriptedClient, ToolCall, Worker
from hookloop._frozen import freeze_object
from hookloop.hooks import PRE_TOOL_CALL, Continue, PreToolCallInfo
from hookloop.tools import ToolContext, ToolMeta

__all__ = ["run"]

SECTION = "pre_tool_call hooks (per call, added to the Worker's planning of a call, _ToolBatch._plan)"
EVENT = PRE_TOOL_CALL
CONTINUE = Continue()
COUNTS = (0, 1, 5)


def sync_hook(info: object) -> Continue:
    return CONTINUE


async def async_hook(info: object) -> Continue:
    return CONTINUE


def _prepared_info() -> PreToolCallInfo:
    """The input the peers get (prepared once); hookloop builds its own per call, as the Worker does."""
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


class NoopTool:
    """A tool whose validation is free (it takes the arguments as they are), so planning a call with no hook is
    little more than the checks the batch always makes, and what the hooks add stands out of the noise."""

    meta = ToolMeta(name="noop", description="does nothing", input_schema=freeze_object({"type": "object"}))

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        return arguments

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        return "ok"


noop = NoopTool()


class PlanCall:
    """A real Worker's run and two prepared tool calls: ``plans[i]()`` is ``_Run._plan`` on call ``i`` (it
    returns None, or the coroutine to await).

    Private API of the Worker (the benchmark must time the Worker's own code): if it changed, the section
    reports what it could not measure instead of failing."""

    def __init__(self, kind: str, count: int, *, watched: bool = False) -> None:
        from hookloop._batch import _Call
        from hookloop._loop import _Run

        worker = Worker(ScriptedClient([]), tools=[noop])
        for _ in range(count):
            worker.add_pre_tool_call_hook(sync_hook if kind == "sync" else async_hook)
        if watched:
            worker.subscribe(lambda event: None)
        self.run = _Run(worker, "run_bench")
        self.run.turn = 1
        # Two calls, planned in turn: as in a real reply, each call's hooks see another call id and arguments.
        self.calls = tuple(
            _Call(ToolCall(call_id=f"call_{i}", name="noop", arguments=freeze_object({"x": i})), noop) for i in (1, 2)
        )
        self.plans: tuple[Callable[[], Any], Callable[[], Any]] = (
            partial(self.run._plan, self.calls[0]),
            partial(self.run._plan, self.calls[1]),
        )
        self.plan: Callable[[], Any] = self.plans[0]

    async def check(self) -> None:
        """Both calls are planned as ready to run (every hook passed, the permission allowed them)."""
        for plan, call in zip(self.plans, self.calls, strict=True):
            pending = plan()
            if pending is not None:
                answer = await pending
                if call.lone is not None:
                    self.run._planned(call, answer)
            if call.state != "ready" or call.validated is None:
                raise AssertionError(f"the prepared call was not planned as ready: {call.state}")


# -- the timed loops ------------------------------------------------------------------------------------------


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


async def _plan(plan: PlanCall, n: int) -> float:
    """``run._plan(call)``, awaiting what it returns and handing a lone async hook's answer to ``run._planned``,
    as ``_ToolBatch._run_tool_batch`` does for each call of a reply (two calls in turn)."""
    (first, second), (one, two), planned = plan.plans, plan.calls, plan.run._planned
    start = perf_counter_ns()
    for _ in range(n // 2):
        pending = first()
        if pending is not None:
            answer = await pending
            if one.lone is not None:
                planned(one, answer)
        pending = second()
        if pending is not None:
            answer = await pending
            if two.lone is not None:
                planned(two, answer)
    return (perf_counter_ns() - start) / (n // 2 * 2)


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


async def _strands_sync(registry: Any, make_event: Callable[[], object], n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        registry.invoke_callbacks(make_event())
    return (perf_counter_ns() - start) / n


async def _strands_async(registry: Any, make_event: Callable[[], object], n: int) -> float:
    start = perf_counter_ns()
    for _ in range(n):
        await registry.invoke_callbacks_async(make_event())
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


def _strands_registries() -> tuple[dict[str, Any], Callable[[], object], str]:
    """strands-agents HookRegistries keyed like :func:`_pluggy_managers`, and what builds each call's event."""
    try:
        from importlib.metadata import version

        from strands.hooks import BeforeToolCallEvent
        from strands.hooks import HookRegistry as StrandsRegistry
    except ImportError:
        return {}, lambda: None, "strands-agents is not installed (pip install -e '.[bench]')"

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

    def make_event() -> BeforeToolCallEvent:  # what strands' tool executor builds for each tool call
        return BeforeToolCallEvent(
            agent=None,  # type: ignore[arg-type]  # the registry never looks at the agent
            selected_tool=None,
            tool_use={"toolUseId": "call_1", "name": "noop", "input": {"x": 1}},
            invocation_state={},
        )

    return registries, make_event, f"strands-agents {version('strands-agents')}"


# -- frames per event (the "no coroutine is created" check) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrameCount:
    frames: float
    coroutines: float
    names: tuple[str, ...]

    def describe(self) -> str:
        return ", ".join(self.names) or "none"


async def count_frames(plan: PlanCall, n: int = 100) -> FrameCount:
    """Python frames and coroutines entered per planned call (``_plan`` and what it calls, and the coroutine it
    returns when awaited), counted with ``sys.setprofile``."""
    names: Counter[str] = Counter()
    coroutines: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: object) -> None:
        if event == "call":
            names[frame.f_code.co_qualname] += 1
            if frame.f_code.co_flags & inspect.CO_COROUTINE:
                coroutines[frame.f_code.co_qualname] += 1

    sys.setprofile(profile)
    try:
        call, planned = plan.calls[0], plan.run._planned
        for _ in range(n):
            pending = plan.plan()
            if pending is not None:
                answer = await pending
                if call.lone is not None:
                    planned(call, answer)
    finally:
        sys.setprofile(None)
    return FrameCount(
        sum(names.values()) / n,
        sum(coroutines.values()) / n,
        tuple(f"{k} ×{v / n:g}" for k, v in sorted(names.items())),
    )


def extra(counted: FrameCount, baseline: FrameCount) -> FrameCount:
    """What ``counted`` entered beyond ``baseline`` (the same call with no hooks)."""
    base = dict(name.rsplit(" ×", 1) for name in baseline.names)
    more = []
    for name in counted.names:
        label, count = name.rsplit(" ×", 1)
        surplus = float(count) - float(base.get(label, 0))
        if surplus > 0:
            more.append(f"{label} ×{surplus:g}")
    return FrameCount(counted.frames - baseline.frames, counted.coroutines - baseline.coroutines, tuple(more))


# -- the section ----------------------------------------------------------------------------------------------

CONFIGS = (("sync", 0), ("sync", 1), ("async", 1), ("sync", 5), ("async", 5))


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    """Measure every case; return the rows and the raw data (for ``--json``)."""
    n = sizes.dispatch_iterations
    prepared = _prepared_info()
    plans = {f"{kind}{count}": PlanCall(kind, count) for kind, count in CONFIGS}
    plans["async1 watched"] = PlanCall("async", 1, watched=True)
    for plan in plans.values():
        await plan.check()
    managers, pluggy_label = _pluggy_managers()
    strands, strands_event, strands_label = _strands_registries()

    timed: dict[str, Callable[[int], Any]] = {
        "bare call": partial(_bare_call, sync_hook, prepared),
        "awaited coroutine": partial(_awaited_coroutine, async_hook, prepared),
    }
    for key, plan in plans.items():
        timed[f"plan {key}"] = partial(_plan, plan)
    for key, pm in managers.items():
        if key != "async0":
            timed[f"pluggy {key}"] = partial(_pluggy_async if key.startswith("async") else _pluggy_sync, pm, prepared)
    for key, registry in strands.items():
        # strands' own loop calls invoke_callbacks_async for every event; its sync API is measured too, and
        # hookloop is compared with whichever is cheaper.
        timed[f"strands {key} async API"] = partial(_strands_async, registry, strands_event)
        if key.startswith("sync"):
            timed[f"strands {key} sync API"] = partial(_strands_sync, registry, strands_event)
    cases: dict[str, Sample] = {name: partial(loop, n) for name, loop in timed.items()}

    m, samples = await interleave(cases, sizes.dispatch_repeats)
    base_frames = await count_frames(plans["sync0"])
    one_async = extra(await count_frames(plans["async1"]), base_frames)
    five_async = extra(await count_frames(plans["async5"]), base_frames)

    base = m["plan sync0"]

    def added(key: str) -> float:
        """What the hooks add to the Worker's planning of a call (same run, same call, only the hooks differ)."""
        return max(0.0, m[f"plan {key}"] - base)

    def strands_best(key: str) -> tuple[float, str]:
        apis = [(m[f"strands {key} {api} API"], api) for api in ("sync", "async") if f"strands {key} {api} API" in m]
        value, api = min(apis)
        return value, f"strands ({api} API)"

    def versus(label: str, key: str, target: float | None) -> list[Row]:
        out = []
        value = added(key) if key != "sync0" else base
        peer_key = "sync0" if key == "async0" else key
        if f"pluggy {peer_key}" in m:
            out.append(faster(SECTION, f"{label} vs pluggy", value, m[f"pluggy {peer_key}"], "pluggy", at_least=target))
        if f"strands {peer_key} async API" in m:
            peer, peer_label = strands_best(peer_key)
            out.append(faster(SECTION, f"{label} vs strands", value, peer, peer_label, at_least=target))
        return out

    bare, awaited = m["bare call"], m["awaited coroutine"]
    site = "added to _ToolBatch._plan"
    rows: list[Row] = [
        info(SECTION, "floor: bare function call", bare, "ns"),
        info(SECTION, "floor: awaited trivial coroutine", awaited, "ns"),
        info(
            SECTION,
            "0 hooks",
            base,
            "ns",
            note="_ToolBatch._plan of one prepared call with no hook (the tool lookup and JSON checks, a free "
            "validation, no permission policy): the baseline every row below subtracts",
        ),
        info(
            SECTION,
            "0 hooks: coroutines created per event",
            base_frames.coroutines,
            "count",
            target="0",
            passed=base_frames.coroutines == 0,
            note=f"Python frames per call with no hook: {base_frames.frames:g} ({base_frames.describe()})",
        ),
        *versus("0 hooks", "sync0", None),
        times(SECTION, "1 sync hook", added("sync1"), "ns", bare, "bare call", note=f"pre_tool_call, {site}"),
        *versus("1 sync hook", "sync1", 4),
        times(
            SECTION,
            "1 async hook",
            added("async1"),
            "ns",
            awaited,
            "awaited coroutine",
            at_most=3,
            note=f"pre_tool_call, {site}, hook input included; coroutines beyond the hook's own: "
            f"{one_async.coroutines - 1:g}; frames: {one_async.describe()}",
        ),
        *versus("1 async hook", "async1", 4),
        absolute(
            SECTION,
            "5 sync hooks",
            max(0.0, added("sync5") - 5 * bare),
            at_most_ns=1_000,
            note=f"pre_tool_call, {site}, beyond the five bare calls themselves ({added('sync5'):.0f} ns in all)",
        ),
        *versus("5 sync hooks", "sync5", 4),
        absolute(
            SECTION,
            "5 async hooks",
            max(0.0, added("async5") - 5 * awaited),
            at_most_ns=1_000,
            note=f"pre_tool_call, {site}, beyond the five awaits themselves ({added('async5'):.0f} ns in all); "
            f"frames: {five_async.describe()}",
        ),
        *versus("5 async hooks", "async5", 4),
        times(
            SECTION,
            "1 async hook with a timeline subscriber",
            added("async1 watched"),
            "ns",
            added("async1"),
            "no subscriber",
            note="each hook decision also becomes a HookDecision on the timeline",
        ),
    ]
    problems = [label for label in (pluggy_label, strands_label) if "not installed" in label]
    if problems:
        rows.append(info(SECTION, "not measured", len(problems), "count", note="; ".join(problems)))
    data = {
        "iterations": n,
        "repeats": sizes.dispatch_repeats,
        "peers": [pluggy_label, strands_label],
        "median_ns": m,
        "samples_ns": samples,
        "frames_per_event": {
            "0 hooks": {"frames": base_frames.frames, "coroutines": base_frames.coroutines},
            "1 async hook": {
                "frames": one_async.frames,
                "coroutines": one_async.coroutines,
                "names": list(one_async.names),
            },
            "5 async hooks": {
                "frames": five_async.frames,
                "coroutines": five_async.coroutines,
                "names": list(five_async.names),
            },
        },
    }
    return rows, data
