"""hookloop's benchmarks (SPEC §10): run ``python -m bench`` from the repository root.

Each section is measured against baselines taken in the same process and the same run, so the ratios hold on
a noisy machine where absolute figures do not. Every hookloop figure comes from a real ``Worker`` or the exact
function the Worker calls (never a copy of its code):

- :mod:`bench.dispatch_cost` — what 0, 1 and 5 pre_tool_call hooks add to the Worker's ``_Run._plan_call``
  (hook input included), beside a bare call, an awaited coroutine, pluggy and strands-agents' ``HookRegistry``;
- :mod:`bench.streaming` — 100,000 text deltas through ``Worker.run``'s stream path, beside a raw async
  generator, with 0, 1 and 3 ``on_text_delta`` hooks;
- :mod:`bench.loop_overhead` — full ``Worker.run`` turns beside a hand-written asyncio loop, the cost of a
  turn as the history grows, and 200 runs × 20 turns at once in one process (wall time, peak memory);
- the other modules: interceptors, command hooks, hook processes, the sandbox, permissions, providers.

Nothing here asserts timings; ``tests/bench`` only checks that every benchmark runs and reports its structure.
"""
