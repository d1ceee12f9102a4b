"""Truncation and compaction of a 10,000-item history, as a ratio to one JSON serialisation of it (issue 3).

- truncation — ``ToolOutputTruncation`` applied to every tool result of the history (each 4,000 characters,
  capped at 1,000), through the interceptor's own ``post_tool_call`` on a ``ToolResultView``;
- compaction — ``Compaction(strategy="drop")``: plan the cut (one pass over the history) and build the
  compacted list, through the interceptor's own ``compact`` on a ``CompactionContext``;
- baseline — ``json.dumps([item.to_json() for item in history])``, what persisting the history once costs.

No target is set by the spec; the figures say whether these mechanisms are cheap next to the simplest thing a
runtime does with its whole history.
"""

from __future__ import annotations

import json
from functools import partial
from time import perf_counter_ns

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, times
from hookloop import Message, ScriptedClient, ToolCall, ToolResult
from hookloop._frozen import freeze_object
from hookloop.interceptors import Compaction, CompactionContext, ToolOutputTruncation, ToolResultView
from hookloop.items import Item
from hookloop.tools import ToolMeta

__all__ = ["run"]

SECTION = "interceptors on a large history"
META = ToolMeta(name="Read", description="", input_schema=freeze_object({}))


def history(size: int) -> list[Item]:
    items: list[Item] = [Message.system("You are careful."), Message.user("the task")]
    n = 0
    while len(items) < size:
        n += 1
        items.append(Message.assistant(f"step {n}"))
        items.append(ToolCall(call_id=f"c{n}", name="Read", arguments=freeze_object({"file_path": f"f{n}.py"})))
        items.append(ToolResult(call_id=f"c{n}", name="Read", content=f"line {n}\n" * 500))
    return items[:size]


async def _serialise(items: list[Item]) -> float:
    start = perf_counter_ns()
    json.dumps([item.to_json() for item in items])
    return perf_counter_ns() - start


async def _truncate(items: list[Item]) -> float:
    truncation = ToolOutputTruncation(max_chars=1_000)
    results = [i for i in items if isinstance(i, ToolResult)]
    start = perf_counter_ns()
    for result in results:
        view = ToolResultView(
            call_id=result.call_id,
            tool_name=result.name,
            arguments={},
            content=result.content,
            is_error=result.is_error,
            meta=META,
            turn=1,
            run_id="bench",
        )
        await truncation.post_tool_call(view)
    return perf_counter_ns() - start


async def _compact(items: list[Item]) -> float:
    compaction = Compaction(threshold_tokens=1, strategy="drop", keep_recent_steps=6)
    ctx = CompactionContext(
        history=list(items), system=None, trigger="manual", token_estimate=0, client=ScriptedClient([]), model=None
    )
    start = perf_counter_ns()
    await compaction.compact(ctx)
    elapsed = perf_counter_ns() - start
    assert ctx.changed, "compaction did nothing"
    return elapsed


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    size = 10_000 if sizes.name != "tiny" else 300
    items = history(size)
    repeats = {"full": 9, "quick": 3, "tiny": 1}[sizes.name]
    cases: dict[str, Sample] = {
        "serialise": partial(_serialise, items),
        "truncate": partial(_truncate, items),
        "compact": partial(_compact, items),
    }
    medians, samples = await interleave(cases, repeats)
    base = medians["serialise"]
    label = "one JSON serialisation"
    rows = [
        info(SECTION, f"json.dumps of a {size:,}-item history", base, "ns"),
        times(SECTION, "truncation of every tool result", medians["truncate"], "ns", base, label),
        times(SECTION, "compaction (plan + drop)", medians["compact"], "ns", base, label),
    ]
    return rows, {"items": size, "medians_ns": medians, "samples_ns": samples}
