"""Loop overhead: full ``Worker.run`` turns against a minimal hand-written asyncio loop doing the same work.

Every run plays N turns that each call two no-op async tools (``{"x": <turn>}`` as JSON arguments), then a
final text turn, from a :class:`bench._client.PrebuiltClient`. The hand-written loop iterates the same events,
accumulates the blocks, ``json.loads`` the arguments, runs the two tools in an ``asyncio.TaskGroup`` and appends
everything to a list — the least an agent loop can do. Configurations of the Worker:

- plain — no hooks, no subscriber;
- 3 hooks — sync no-op ``pre_llm_request``, ``pre_tool_call`` and ``post_tool_call`` hooks;
- timeline subscriber — one no-op subscriber (what a UI or transcript attaches);
- iter_run — the async-iterator form for UIs (``async for event in worker.iter_run(...)``).

History growth: the client timestamps each model request, so one long run gives every turn's duration with
nothing added to the Worker. Each run's own ratio — the median duration of its late window (turns 185–205)
over that of its early window (turns 5–25) — compares two windows the same run measured moments apart; the
figure is the median of those ratios over many runs (3 × ``growth_repeats``, at least 9), interleaved with the
other configurations. One run's ratio swings by ±40 % on a shared machine (a neighbour's burst lands in one
window), and pooling the turns of one or two runs was no better; the median of many runs' own ratios is
steady to a few per cent (the hand-written loop's figure, shown beside, is the noise floor: it cannot grow).

Concurrency: 200 runs (each its own Worker and client) × 20 tool turns, all started at once in one event loop
(``asyncio.gather``); the figure is the wall time per turn over the per-turn time of one plain run of the same
script in the same round, and the peak Python memory of the 200 runs (``tracemalloc``, measured in a separate,
untimed pass, since tracing slows every allocation).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from functools import partial
from itertools import pairwise
from time import perf_counter_ns
from typing import Any

from bench._client import PrebuiltClient, text_turn, tool_turn
from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, times
from hookloop import Finished, Worker, tool
from hookloop.hooks import Continue
from hookloop.stream import BlockStart, StreamEvent, TextDelta, ToolCallDelta, UsageEvent

__all__ = ["run"]

SECTION = "loop overhead (2 no-op tools per turn)"
GROWTH = "history growth (one long run)"
CONCURRENT = "concurrent runs in one process"
CONTINUE = Continue()
TOOL_NAMES = ("noop_a", "noop_b")


async def noop_a(x: int) -> str:
    return "ok"


async def noop_b(x: int) -> str:
    return "ok"


RAW_TOOLS: dict[str, Callable[..., Awaitable[str]]] = {"noop_a": noop_a, "noop_b": noop_b}
TOOLS = [tool(name="noop_a")(noop_a), tool(name="noop_b")(noop_b)]


def script(turns: int) -> list[list[StreamEvent]]:
    return [*(tool_turn(t, TOOL_NAMES) for t in range(1, turns + 1)), text_turn(1, "done")]


# -- the hand-written loop -------------------------------------------------------------------------------------


async def handwritten_loop(client: PrebuiltClient, tools: dict[str, Callable[..., Awaitable[str]]]) -> list[object]:
    """The floor: what any agent loop must do for these turns, and nothing more."""
    history: list[object] = [("user", "go")]
    output_tokens = 0
    while True:
        blocks: dict[int, tuple[BlockStart, list[str]]] = {}
        async for event in client.stream(history):
            cls = event.__class__
            if cls is TextDelta:
                blocks[event.index][1].append(event.text)  # type: ignore[union-attr]
            elif cls is ToolCallDelta:
                blocks[event.index][1].append(event.fragment)  # type: ignore[union-attr]
            elif cls is BlockStart:
                blocks[event.index] = (event, [])  # type: ignore[union-attr,assignment]
            elif cls is UsageEvent:
                output_tokens += event.usage.output_tokens  # type: ignore[union-attr]
        calls: list[tuple[str, str, Any]] = []
        for index in sorted(blocks):
            start, parts = blocks[index]
            if start.kind == "text":
                history.append(("assistant", "".join(parts)))
            else:
                call = (start.call_id or "", start.name or "", json.loads("".join(parts)))
                calls.append(call)
                history.append(call)
        if not calls:
            return history
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(tools[name](**args)) for _, name, args in calls]
        for (call_id, _, _), task in zip(calls, tasks, strict=True):
            history.append((call_id, task.result()))


# -- configurations ------------------------------------------------------------------------------------------


def _pass(info: object) -> Continue:
    return CONTINUE


def _ignore(event: object) -> None:
    return None


def _worker(client: PrebuiltClient, turns: int, config: str) -> Worker:
    worker = Worker(client, tools=TOOLS, max_turns=turns + 2)
    if config in ("3 hooks", "3 hooks + subscriber"):
        worker.add_pre_llm_request_hook(_pass)
        worker.add_pre_tool_call_hook(_pass)
        worker.add_post_tool_call_hook(_pass)
    if config in ("subscriber", "3 hooks + subscriber"):
        worker.subscribe(_ignore)
    return worker


async def _run_once(turns: int, config: str, stamps: list[list[int]] | None = None) -> float:
    """One whole run of ``turns`` tool turns + the final turn; returns its duration in ns."""
    client = PrebuiltClient(script(turns))
    if config == "hand-written":
        start = perf_counter_ns()
        history = await handwritten_loop(client, RAW_TOOLS)
        elapsed = perf_counter_ns() - start
        assert len(history) == 1 + 4 * turns + 1
    else:
        worker = _worker(client, turns, config)
        start = perf_counter_ns()
        if config == "iter_run":
            async for _ in worker.iter_run("go"):
                pass
            outcome = worker.last_outcome
        else:
            outcome = await worker.run("go")
        elapsed = perf_counter_ns() - start
        assert isinstance(outcome, Finished), outcome
        assert outcome.turns == turns + 1, outcome
    if stamps is not None:
        stamps.append(client.started)
    return elapsed


async def _concurrent(runs: int, turns: int) -> float:
    """``runs`` plain Worker runs of ``turns`` tool turns + 1, all at once; returns the wall time in ns."""
    workers = [_worker(PrebuiltClient(script(turns)), turns, "plain") for _ in range(runs)]
    start = perf_counter_ns()
    outcomes = await asyncio.gather(*(worker.run("go") for worker in workers))
    elapsed = perf_counter_ns() - start
    for outcome in outcomes:
        assert isinstance(outcome, Finished), outcome
        assert outcome.turns == turns + 1, outcome
    return elapsed


async def concurrent_peak_memory(runs: int, turns: int) -> tuple[int, int]:
    """(peak, retained) bytes of Python memory while ``runs`` concurrent runs play, above what was allocated
    before (the Workers and their clients included)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        workers = [_worker(PrebuiltClient(script(turns)), turns, "plain") for _ in range(runs)]
        outcomes = await asyncio.gather(*(worker.run("go") for worker in workers))
        assert all(isinstance(outcome, Finished) for outcome in outcomes)
        after, peak = tracemalloc.get_traced_memory()
        del workers, outcomes
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return peak - before, after - before


def turn_durations(started: Sequence[int]) -> list[int]:
    """Duration of turn k (1-based) at index k-1: from its model request to the next one."""
    return [b - a for a, b in pairwise(started)]


def window(durations: Sequence[int], first: int, last: int) -> float:
    """Median duration of turns ``first``..``last`` (1-based, inclusive) of one run."""
    return statistics.median(durations[first - 1 : last])


def growth_windows(turns: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The early and late windows (1-based, inclusive) of a run of ``turns`` tool turns: 21 turns each, from
    turn 5 and up to 5 turns before the end (narrower for a short run)."""
    width = max(1, min(21, (turns - 10) // 2))
    return (5, 4 + width), (turns - 4 - width, turns - 5)


def growth_ratios(runs: Sequence[Sequence[int]], early: tuple[int, int], late: tuple[int, int]) -> list[float]:
    """Each run's own late-window median over its early-window median."""
    return [window(run, *late) / window(run, *early) for run in runs]


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    turns = sizes.loop_turns
    configs = ("hand-written", "plain", "3 hooks", "subscriber", "iter_run")
    cases: dict[str, Sample] = {name: partial(_run_once, turns, name) for name in configs}
    medians, samples = await interleave(cases, sizes.loop_repeats)
    per_turn = {name: ns / (turns + 1) for name, ns in medians.items()}
    floor, plain = per_turn["hand-written"], per_turn["plain"]
    rows = [
        info(SECTION, f"hand-written asyncio loop ({turns} tool turns + 1)", floor, "turn"),
        times(SECTION, "Worker.run, plain", plain, "turn", floor, "hand-written", at_most=2.5),
        times(SECTION, "… with 3 hooks", per_turn["3 hooks"], "turn", plain, "plain", at_most=1.3),
        times(SECTION, "… with a timeline subscriber", per_turn["subscriber"], "turn", plain, "plain", at_most=1.3),
        times(SECTION, "… streamed with iter_run", per_turn["iter_run"], "turn", plain, "plain", at_most=1.3),
    ]

    long = sizes.growth_turns
    early, late = growth_windows(long)
    rounds = max(9, 3 * sizes.growth_repeats)
    stamps: dict[str, list[list[int]]] = {name: [] for name in ("hand-written", "plain", "3 hooks + subscriber")}
    growth_cases: dict[str, Sample] = {name: partial(_run_once, long, name, got) for name, got in stamps.items()}
    await interleave(growth_cases, rounds)
    durations = {name: [turn_durations(s) for s in got[1:]] for name, got in stamps.items()}  # [0]: warm-up
    growth: dict[str, dict[str, float]] = {}
    ratios: dict[str, list[float]] = {}
    for name, runs in durations.items():
        ratios[name] = growth_ratios(runs, early, late)
        growth[name] = {
            "early_ns": statistics.median(window(run, *early) for run in runs),
            "late_ns": statistics.median(window(run, *late) for run in runs),
            "ratio": statistics.median(ratios[name]),
        }
    span = f"turn {late[0]}–{late[1]} vs {early[0]}–{early[1]}"
    for name, label, target in (
        ("plain", "Worker.run, plain", 1.1),
        ("3 hooks + subscriber", "… with 3 hooks and a timeline subscriber", 1.1),
        ("hand-written", "hand-written loop", None),
    ):
        g, r = growth[name], ratios[name]
        row = times(
            GROWTH,
            f"{label}: {span}",
            g["late_ns"],
            "turn",
            g["early_ns"],
            "early turns",
            note=f"ratio: the median of {len(r)} runs' own late ÷ early (they ranged {min(r):.2f}–{max(r):.2f}×)",
        )
        passed = None if target is None else g["ratio"] <= target
        rows.append(replace(row, ratio=g["ratio"], target="" if target is None else f"≤ {target:g}×", passed=passed))
    runs, run_turns = sizes.concurrent_runs, sizes.concurrent_turns
    concurrent_cases: dict[str, Sample] = {
        "one run": partial(_run_once, run_turns, "plain"),
        "concurrent": partial(_concurrent, runs, run_turns),
    }
    concurrent, concurrent_samples = await interleave(concurrent_cases, sizes.growth_repeats)
    one_turn = concurrent["one run"] / (run_turns + 1)
    all_turns = concurrent["concurrent"] / (runs * (run_turns + 1))
    peak, retained = await concurrent_peak_memory(runs, run_turns)
    label = f"{runs} runs × {run_turns} turns at once"
    rows += [
        times(CONCURRENT, f"{label}: wall time per turn", all_turns, "turn", one_turn, "one run alone", at_most=1.3),
        info(
            CONCURRENT,
            f"{label}: peak Python memory",
            round(peak / 1024),
            "KiB",
            note=f"{peak / runs / 1024:.1f} KiB a run at the peak (tracemalloc); "
            f"{retained / runs / 1024:.1f} KiB a run while the finished Workers hold their histories",
        ),
    ]
    data = {
        "concurrent": {
            "runs": runs,
            "turns": run_turns,
            "median_ns": concurrent,
            "samples_ns": concurrent_samples,
            "peak_bytes": peak,
            "retained_bytes": retained,
        },
        "turns": turns,
        "repeats": sizes.loop_repeats,
        "median_ns_per_run": medians,
        "samples_ns": samples,
        "growth_turns": long,
        "growth_rounds": rounds,
        "growth_windows": {"early": early, "late": late},
        "growth_ns": growth,
        "growth_ratios": ratios,
    }
    return rows, data
