"""Subagent call overhead: a delegation through the ``Agent`` tool against a plain tool that runs the same child
Worker directly (``await Worker(...).run(prompt)``) — the least delegation can cost.

Both runs play the same script from one :class:`bench._client.PrebuiltClient`: the parent calls its delegation
tool once; the child plays N turns that each call two no-op tools, then answers; the parent finishes. What the
Agent tool adds — building the child from the parent (tools narrowed, policy copied), the subagent frame, the
parent's hooks wired in and out, the effects and usage roll-up — is the ratio. SPEC target: ≤ 1.2×.
"""

from __future__ import annotations

import json
from functools import partial
from time import perf_counter_ns

from bench._client import PrebuiltClient, text_turn, tool_turn
from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, times
from hookloop import Finished, Worker, tool
from hookloop.agents import AgentDefinition, AgentTool
from hookloop.stream import BlockStart, BlockStop, StopEvent, StreamEvent, ToolCallDelta, Usage, UsageEvent

__all__ = ["run"]

SECTION = "subagents (one delegation, child: N turns × 2 no-op tools)"
SYSTEM = "You are the bench child."
CHILD = AgentDefinition(name="child", description="the bench child", system_prompt=SYSTEM)


async def noop_a(x: int) -> str:
    return "ok"


async def noop_b(x: int) -> str:
    return "ok"


TOOLS = [tool(name="noop_a")(noop_a), tool(name="noop_b")(noop_b)]


def _delegation() -> list[StreamEvent]:
    arguments = json.dumps({"description": "bench", "prompt": "work", "subagent_type": "child"})
    return [
        BlockStart(0, "tool_call", call_id="c_delegate", name="Agent"),
        ToolCallDelta(0, arguments),
        BlockStop(0),
        UsageEvent(Usage(input_tokens=16, output_tokens=8)),
        StopEvent("tool_use"),
    ]


def script(turns: int) -> list[list[StreamEvent]]:
    child = [*(tool_turn(t, ("noop_a", "noop_b")) for t in range(1, turns + 1)), text_turn(1, "child done")]
    return [_delegation(), *child, text_turn(1, "parent done")]


async def _once(turns: int, how: str) -> float:
    client = PrebuiltClient(script(turns))
    if how == "agent tool":
        delegate: object = AgentTool([CHILD])
    else:

        @tool(name="Agent")
        async def direct(description: str, prompt: str, subagent_type: str) -> str:
            """Runs the child Worker directly."""
            child = Worker(client, tools=TOOLS, system=SYSTEM, max_turns=turns + 2)
            outcome = await child.run(prompt)
            assert isinstance(outcome, Finished)
            return outcome.text

        delegate = direct
    parent = Worker(client, tools=[*TOOLS, delegate], max_turns=turns + 2)  # type: ignore[list-item]
    start = perf_counter_ns()
    outcome = await parent.run("go")
    elapsed = perf_counter_ns() - start
    assert isinstance(outcome, Finished), outcome
    assert outcome.text == "parent done", outcome
    return elapsed


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    turns = sizes.loop_turns
    cases: dict[str, Sample] = {name: partial(_once, turns, name) for name in ("direct", "agent tool")}
    medians, samples = await interleave(cases, sizes.loop_repeats)
    direct, agent = medians["direct"], medians["agent tool"]
    rows = [
        info(SECTION, f"a tool running the child Worker directly ({turns} child turns)", direct, "ns"),
        times(SECTION, "the Agent tool (subagent call)", agent, "ns", direct, "direct", at_most=1.2),
    ]
    return rows, {"turns": turns, "repeats": sizes.loop_repeats, "median_ns_per_run": medians, "samples_ns": samples}
