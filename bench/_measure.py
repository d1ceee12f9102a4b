"""Timing discipline shared by every benchmark.

- Cases run interleaved (round-robin, rotating the order each round), so a burst of load from a neighbour on
  this shared machine hits every case of a round rather than all the repeats of one case.
- The garbage collector is collected before and disabled during each round, so a collection triggered by one
  case's allocations is not billed to another.
- Each figure is the median of the rounds; nothing is subtracted (loop overhead is in every case alike).
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

__all__ = ["FULL", "QUICK", "TINY", "Sample", "Sizes", "interleave"]

Sample = Callable[[], Awaitable[float]]
"""One measurement of a case: returns its cost (ns per op, or ns per run)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sizes:
    """How much work each benchmark does. ``FULL`` is the contract of issue 2; ``TINY`` is the smoke test."""

    name: str
    dispatch_iterations: int
    dispatch_repeats: int
    deltas: int
    stream_repeats: int
    loop_turns: int
    loop_repeats: int
    growth_turns: int
    growth_repeats: int
    concurrent_runs: int = 200
    concurrent_turns: int = 20


FULL = Sizes(
    name="full",
    dispatch_iterations=200_000,
    dispatch_repeats=7,
    deltas=100_000,
    stream_repeats=11,
    loop_turns=50,
    loop_repeats=15,
    growth_turns=210,
    growth_repeats=5,
)
QUICK = Sizes(
    name="quick",
    dispatch_iterations=20_000,
    dispatch_repeats=3,
    deltas=100_000,
    stream_repeats=3,
    loop_turns=20,
    loop_repeats=5,
    growth_turns=210,
    growth_repeats=1,
)
TINY = Sizes(
    name="tiny",
    dispatch_iterations=200,
    dispatch_repeats=1,
    deltas=300,
    stream_repeats=1,
    loop_turns=3,
    loop_repeats=1,
    growth_turns=24,
    growth_repeats=1,
    concurrent_runs=5,
    concurrent_turns=3,
)


async def interleave(cases: Mapping[str, Sample], repeats: int) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Run every case ``repeats`` times, round-robin, after one untimed warm-up round.

    Returns (median per case, all samples per case).
    """
    names = list(cases)
    gc.collect()
    gc.disable()
    try:
        for name in names:  # warm-up: specialise the bytecode, fill caches, import lazily
            await cases[name]()
    finally:
        gc.enable()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names)
        gc.collect()
        gc.disable()
        try:
            for name in names[shift:] + names[:shift]:
                samples[name].append(await cases[name]())
        finally:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}, samples
