"""hookloop's benchmarks (SPEC §10): run ``python -m bench`` from the repository root.

Three sections, each measured against baselines taken in the same process and the same run, so the ratios hold
on a noisy machine where absolute figures do not:

- :mod:`bench.dispatch_cost` — one hook event with 0, 1 and 5 hooks, beside a bare call, an awaited coroutine,
  pluggy and strands-agents' ``HookRegistry``;
- :mod:`bench.streaming` — 100,000 text deltas through the Worker's stream path, beside a raw async generator;
- :mod:`bench.loop_overhead` — full ``Worker.run`` turns beside a hand-written asyncio loop, and the cost of a
  turn as the history grows.

Nothing here asserts timings; ``tests/bench`` only checks that every benchmark runs and reports its structure.
"""
