"""Text deltas through the Worker's stream path, as a share of a raw async generator's rate.

The client yields ``BlockStart``, N pre-built ``TextDelta`` events, ``BlockStop``, usage and ``StopEvent``; the
raw baseline iterates the very same client generator (``async for _ in client.stream(...)``) and does nothing
else. The Worker case is a whole ``Worker.run`` of one turn, so it also carries the run's fixed cost (ids,
session bookkeeping, joining the deltas into the final message) — well under 1 % at 100,000 deltas.
Hooks are sync ``on_text_delta`` hooks returning a prepared ``Continue()`` (the cheapest a hook can be); one
more row shows a hook that builds a new ``Continue()`` per delta, as most hooks will be written. The same
stream is also read through ``Worker.iter_run`` by a consumer taking every timeline event (a streaming UI),
with three hooks and with none.
"""

from __future__ import annotations

from functools import partial
from time import perf_counter_ns

from bench._client import PrebuiltClient, text_turn
from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, share, times
from hookloop import Worker
from hookloop.hooks import Continue
from hookloop.stream import StreamEvent, TextDelta

__all__ = ["run"]

SECTION = "streaming text deltas (Worker.run, on_text_delta hooks)"
CONTINUE = Continue()
HOOK_COUNTS = (0, 1, 3)


def on_text_delta(delta: TextDelta) -> Continue:
    return CONTINUE


def on_text_delta_fresh(delta: TextDelta) -> Continue:
    return Continue()  # what a hook written the obvious way does


async def _raw(events: list[StreamEvent]) -> float:
    client = PrebuiltClient([events])
    start = perf_counter_ns()
    async for _ in client.stream(None):
        pass
    return perf_counter_ns() - start


async def _worker(events: list[StreamEvent], hooks: int, *, fresh: bool = False) -> float:
    worker = Worker(PrebuiltClient([events]), max_turns=1)
    for _ in range(hooks):
        worker.add_on_text_delta_hook(on_text_delta_fresh if fresh else on_text_delta)
    start = perf_counter_ns()
    await worker.run("stream")
    elapsed = perf_counter_ns() - start
    assert worker.history[-1].text, "the streamed text did not reach the history"  # type: ignore[union-attr]
    return elapsed


async def _iter_run(events: list[StreamEvent], hooks: int) -> float:
    """The same stream read through ``Worker.iter_run`` by a consumer that takes every timeline event (what a
    streaming UI does): each delta also reaches the timeline and the consumer."""
    worker = Worker(PrebuiltClient([events]), max_turns=1)
    for _ in range(hooks):
        worker.add_on_text_delta_hook(on_text_delta)
    seen = 0
    start = perf_counter_ns()
    async for _ in worker.iter_run("stream"):
        seen += 1
    elapsed = perf_counter_ns() - start
    assert seen > len(events), "the consumer did not see every delta"
    return elapsed


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    deltas = sizes.deltas
    events = text_turn(deltas)
    cases: dict[str, Sample] = {"raw": partial(_raw, events)}
    for hooks in HOOK_COUNTS:
        cases[f"worker {hooks}"] = partial(_worker, events, hooks)
    cases["worker 1 fresh"] = partial(_worker, events, 1, fresh=True)
    for hooks in (0, 3):
        cases[f"iter_run {hooks}"] = partial(_iter_run, events, hooks)
    medians, samples = await interleave(cases, sizes.stream_repeats)
    rate = {name: deltas / (ns / 1e9) for name, ns in medians.items()}
    raw = rate["raw"]
    rows = [
        info(SECTION, f"raw async generator, {deltas:,} deltas", raw, "per_s"),
        share(SECTION, "0 hooks", rate["worker 0"], raw, "raw", at_least=0.60),
        share(SECTION, "1 on_text_delta hook", rate["worker 1"], raw, "raw", at_least=0.25),
        share(SECTION, "3 on_text_delta hooks", rate["worker 3"], raw, "raw"),
        times(
            SECTION,
            "3 on_text_delta hooks vs none",
            medians["worker 3"] / deltas,
            "ns",
            medians["worker 0"] / deltas,
            "0 hooks",
            at_most=1.3,
            note="ns per delta of the same Worker.run stream with three sync hooks and with none; with no "
            "subscriber a delta costs about as much as three bare Python calls (the dispatch section's floor), so "
            "three hooks called per delta cannot stay within 1.3×",
        ),
        times(
            SECTION,
            "iter_run stream: 3 on_text_delta hooks vs none",
            medians["iter_run 3"] / deltas,
            "ns",
            medians["iter_run 0"] / deltas,
            "0 hooks",
            at_most=1.3,
            note="ns per delta of Worker.iter_run read by a consumer taking every event (a streaming UI), with "
            "three sync hooks and with none; a hook's Continue never becomes a timeline event",
        ),
        share(
            SECTION,
            "1 hook returning a new Continue() per delta",
            rate["worker 1 fresh"],
            raw,
            "raw",
            note="the rows above return one prepared Continue(); this is the hook written the obvious way",
        ),
    ]
    data = {"deltas": deltas, "repeats": sizes.stream_repeats, "median_ns_per_run": medians, "samples_ns": samples}
    return rows, data
