"""Subagents run as Workers of their own: parallel calls, cancel, usage roll-up, nested timeline and transcripts,
the typed subagent_start / subagent_stop events, the depth limit, and durable effects under agent:<call id>/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agents.support import Recording, Replay, Routed, request_texts, tool_names
from helpers import assert_valid_history
from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.agents import GENERAL_PURPOSE, AgentDefinition, AgentTool, current_subagent
from hookloop.errors import Cancelled
from hookloop.hooks import (
    ON_ABORT,
    POST_TOOL_CALL,
    PRE_TOOL_CALL,
    SUBAGENT_START,
    SUBAGENT_STOP,
    Continue,
    ContinueWithMessages,
    Finish,
    PostToolCallInfo,
    PreToolCallInfo,
    SubagentStartInfo,
    SubagentStopInfo,
)
from hookloop.items import Message, ToolResult
from hookloop.stream import Usage
from hookloop.timeline import SubagentEnded, SubagentEvent, SubagentStarted, TimelineEvent, ToolEnded

pytestmark = pytest.mark.anyio

U = Usage(input_tokens=10, output_tokens=5)


def turn(*blocks: object) -> object:
    from hookloop.providers.scripted import ScriptedTurn

    return ScriptedTurn(blocks=blocks, usage=U)  # type: ignore[arg-type]


def agent(name: str, *, tools: tuple[str, ...] | None = None) -> AgentDefinition:
    return AgentDefinition(name=name, description=f"the {name} agent", system_prompt=f"You are {name}.", tools=tools)


def call(kind: str, prompt: str, call_id: str | None = None) -> ToolUse:
    return ToolUse("Agent", {"description": kind, "prompt": prompt, "subagent_type": kind}, call_id=call_id)


async def test_two_subagents_of_one_batch_run_in_parallel_the_slow_one_waiting_on_the_fast_one(tmp_path: Path) -> None:
    fast_done = asyncio.Event()

    @tool
    async def slow_step() -> str:
        """Waits until the fast subagent's step ran: only possible if both subagents run at the same time."""
        await asyncio.wait_for(fast_done.wait(), timeout=10)
        return "slow step done"

    @tool
    async def fast_step() -> str:
        """Returns at once."""
        fast_done.set()
        return "fast step done"

    parent_script = ScriptedClient(
        [turn(call("slow", "take your time", "c_slow"), call("fast", "be quick", "c_fast")), turn(Text("both done"))]
    )
    client = Routed(
        {
            "": parent_script,
            "You are slow.": ScriptedClient([turn(ToolUse("slow_step", {})), turn(Text("slow report"))]),
            "You are fast.": ScriptedClient([turn(ToolUse("fast_step", {})), turn(Text("fast report"))]),
        }
    )
    transcript = tmp_path / "run.jsonl"
    worker = Worker(
        client,
        tools=[
            slow_step,
            fast_step,
            AgentTool([agent("slow", tools=("slow_step",)), agent("fast", tools=("fast_step",))]),
        ],
        transcript=transcript,
    )
    events: list[TimelineEvent] = []
    worker.subscribe(events.append)
    responses: dict[str, Any] = {}

    def response(info: PostToolCallInfo) -> Continue:
        if info.tool_name == "Agent":
            responses[info.call_id] = info.structured
        return Continue()

    worker.add_hook(POST_TOOL_CALL, response)
    outcome = await worker.run("delegate")
    worker.close()

    assert isinstance(outcome, Finished)
    assert outcome.text == "both done"
    assert_valid_history(worker.history)
    results = [i for i in worker.history if isinstance(i, ToolResult)]
    assert [(r.call_id, r.content, r.is_error) for r in results] == [
        ("c_slow", "slow report", False),
        ("c_fast", "fast report", False),
    ]
    slow = responses["c_slow"]  # Claude Code's Agent tool_response shape, for PostToolUse hooks
    assert slow["status"] == "completed"
    assert slow["content"] == ({"type": "text", "text": "slow report"},)
    assert slow["totalToolUseCount"] == 1
    assert slow["totalTokens"] == 30
    # usage rolls up: two parent turns and two turns of each child
    assert outcome.usage == Usage(input_tokens=60, output_tokens=30)
    # the nested timeline: both started before either ended; each child's events arrive wrapped
    kinds = [type(e).__name__ for e in events if isinstance(e, (SubagentStarted, SubagentEnded))]
    assert kinds[:2] == ["SubagentStarted", "SubagentStarted"]
    ended = {e.call_id: e for e in events if isinstance(e, SubagentEnded)}
    assert ended["c_slow"].outcome == "finished"
    assert ended["c_slow"].usage == Usage(input_tokens=20, output_tokens=10)
    inner = [e for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, ToolEnded)]
    assert sorted((e.call_id, e.event.tool_name) for e in inner) == [("c_fast", "fast_step"), ("c_slow", "slow_step")]
    # each child has its own transcript file; the parent's names them
    started = {e.call_id: e for e in events if isinstance(e, SubagentStarted)}
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    named = [line["transcript_path"] for line in lines if line["type"] == "subagent_started"]
    assert sorted(named) == sorted(e.transcript_path for e in started.values())
    assert not any(line["type"] == "subagent_event" for line in lines)
    for call_id, tool_name in (("c_slow", "slow_step"), ("c_fast", "fast_step")):
        path = started[call_id].transcript_path
        assert path is not None
        assert Path(path).parent == tmp_path / "run" / "subagents"
        child_lines = [json.loads(line) for line in (transcript.parent / path).read_text().splitlines()]
        assert [x["tool"] for x in child_lines if x["type"] == "tool_ended"] == [tool_name]
        assert child_lines[0]["type"] == "run_started"
        assert child_lines[-1]["type"] == "run_ended"


async def test_cancelling_the_parent_cancels_every_child_once_and_answers_every_call() -> None:
    started: list[str] = []
    both = asyncio.Event()
    aborts: list[str] = []

    @tool
    async def hang(name: str) -> str:
        """Blocks until cancelled."""
        started.append(name)
        if len(started) == 2:
            both.set()
        await asyncio.Event().wait()
        return "never"

    helper = Worker(
        Routed({"You help.": ScriptedClient([turn(ToolUse("hang", {"name": "helper"}))])}),
        tools=[hang],
        system="You help.",
    )
    helper.add_hook(ON_ABORT, lambda info: aborts.append(f"helper:{info.reason}"))
    client = Routed(
        {
            "": ScriptedClient(
                [turn(call("waiter", "wait", "c_agent"), ToolUse("helper", {"prompt": "wait too"}, call_id="c_tool"))]
            ),
            "You are waiter.": ScriptedClient([turn(ToolUse("hang", {"name": "waiter"}))]),
        }
    )
    parent = Worker(client, tools=[hang, AgentTool([agent("waiter")]), helper.as_tool("helper", "A helper.")])
    parent.add_hook(ON_ABORT, lambda info: aborts.append(f"parent:{info.reason}"))
    task = asyncio.ensure_future(parent.run("go"))
    await asyncio.wait_for(both.wait(), timeout=10)
    parent.cancel()
    with pytest.raises(Cancelled):
        await task
    assert sorted(aborts) == ["helper:Cancelled", "parent:Cancelled"]
    assert_valid_history(parent.history)
    assert_valid_history(helper.history)
    results = {i.call_id: i for i in parent.history if isinstance(i, ToolResult)}
    assert set(results) == {"c_agent", "c_tool"}
    assert all(r.is_error and "cancelled" in r.content for r in results.values())
    assert not parent.running
    assert not helper.running


async def test_subagent_start_context_reaches_the_child_only_and_hooks_see_the_agent() -> None:
    seen: list[tuple[str, str | None, str | None, str | None]] = []

    @tool
    async def probe() -> str:
        """Reports which subagent runs it."""
        frame = current_subagent()
        return "top" if frame is None else f"{frame.agent_type}@{frame.depth}"

    def watch(info: PreToolCallInfo) -> Continue:
        seen.append((info.tool_name, info.agent_id, info.agent_type, info.call_id))
        return Continue()

    starts: list[SubagentStartInfo] = []

    def on_start(info: SubagentStartInfo) -> Continue:
        starts.append(info)
        return Continue(additional_context="the repo is at /src")

    child_script = ScriptedClient([turn(ToolUse("probe", {})), turn(Text("child saw it"))])
    parent_script = ScriptedClient([turn(ToolUse("probe", {}), call("scout", "look")), turn(Text("ok"))])
    worker = Worker(
        Routed({"": parent_script, "You are scout.": child_script}), tools=[probe, AgentTool([agent("scout")])]
    )
    worker.add_hook(PRE_TOOL_CALL, watch)
    worker.add_hook(SUBAGENT_START, on_start)
    intercepted: list[str] = []

    class Recorder:
        async def pre_tool_call(self, view: Any) -> None:
            intercepted.append(view.tool_name)

    worker.add_interceptor(Recorder())
    outcome = await worker.run("go")
    assert intercepted == ["probe", "Agent"]  # interceptors are per Worker: the child's call is not seen
    assert isinstance(outcome, Finished)
    assert [s.agent_type for s in starts] == ["scout"]
    assert starts[0].prompt == "look"
    assert starts[0].depth == 1
    # the parent's pre_tool_call hook fired for the child's call too, with the agent in its input
    top = [s for s in seen if s[1] is None]
    inner = [s for s in seen if s[1] is not None]
    assert [s[0] for s in top] == ["probe", "Agent"]
    assert inner == [("probe", starts[0].agent_id, "scout", inner[0][3])]
    probe_results = [i.content for i in worker.history if isinstance(i, ToolResult) and i.name == "probe"]
    assert probe_results == ["top"]
    # the context went to the child's request, never to the parent's
    child_texts = request_texts(child_script.requests[0])
    assert any("the repo is at /src" in t for t in child_texts)
    assert not any("the repo is at /src" in t for r in parent_script.requests for t in request_texts(r))


async def test_subagent_stop_sends_the_child_back_once_then_the_loop_cap_applies() -> None:
    stops: list[SubagentStopInfo] = []

    def once(info: SubagentStopInfo) -> Finish | ContinueWithMessages:
        stops.append(info)
        if info.stop_hook_active:
            return Finish()
        return ContinueWithMessages([Message.user("also check the tests")])

    child_script = ScriptedClient([turn(Text("first answer")), turn(Text("checked the tests too"))])
    parent_script = ScriptedClient([turn(call("scout", "look")), turn(Text("ok"))])
    worker = Worker(Routed({"": parent_script, "You are scout.": child_script}), tools=[AgentTool([agent("scout")])])
    worker.add_hook(SUBAGENT_STOP, once)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert [(s.stop_hook_active, s.last_assistant_text) for s in stops] == [
        (False, "first answer"),
        (True, "checked the tests too"),
    ]
    result = next(i for i in worker.history if isinstance(i, ToolResult))
    assert result.content == "checked the tests too"

    # a hook that never lets the child stop hits the child's cap: the call fails, the parent goes on
    def never(info: SubagentStopInfo) -> ContinueWithMessages:
        return ContinueWithMessages([Message.user("again")])

    looping = ScriptedClient([turn(Text(f"try {i}")) for i in range(3)])
    parent_script = ScriptedClient([turn(call("scout", "look")), turn(Text("gave up"))])
    worker = Worker(
        Routed({"": parent_script, "You are scout.": looping}),
        tools=[AgentTool([agent("scout")])],
        max_forced_continuations=2,
    )
    worker.add_hook(SUBAGENT_STOP, never)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert outcome.text == "gave up"
    result = next(i for i in worker.history if isinstance(i, ToolResult))
    assert result.is_error
    assert "StopHookLoopError" in result.content


async def test_the_depth_limit_takes_the_agent_tool_away_and_refuses_deeper_calls() -> None:
    gp = GENERAL_PURPOSE.system_prompt
    nested = ScriptedClient(
        [
            turn(ToolUse("Agent", {"description": "d", "prompt": "deeper", "subagent_type": "general-purpose"})),
            turn(ToolUse("Agent", {"description": "d", "prompt": "deeper still", "subagent_type": "general-purpose"})),
            turn(Text("level 2 cannot delegate")),
            turn(Text("level 1 done")),
        ]
    )
    parent_script = ScriptedClient(
        [
            turn(ToolUse("Agent", {"description": "d", "prompt": "go deep", "subagent_type": "general-purpose"})),
            turn(Text("top")),
        ]
    )
    worker = Worker(Routed({"": parent_script, gp: nested}), tools=[AgentTool(max_depth=2)])
    outcome = await worker.run("recurse")
    assert isinstance(outcome, Finished)
    assert outcome.text == "top"
    assert "Agent" in tool_names(nested.requests[0])  # depth 1 may delegate
    assert "Agent" not in tool_names(nested.requests[1])  # depth 2 is the limit
    assert any("unknown tool 'Agent'" in t for t in request_texts(nested.requests[2]))

    # an as_tool chain deeper than its limit is refused with a clear error, and a Worker cannot call itself
    leaf = Worker(Routed({"leaf": ScriptedClient([turn(Text("leaf"))])}), system="leaf")
    middle = Worker(
        Routed({"middle": ScriptedClient([turn(ToolUse("leaf", {"prompt": "x"})), turn(Text("middle done"))])}),
        system="middle",
        tools=[leaf.as_tool("leaf", "The leaf.", max_depth=1)],
    )
    top_script = ScriptedClient([turn(ToolUse("middle", {"prompt": "x"})), turn(Text("top done"))])
    top_worker = Worker(Routed({"": top_script}), tools=[middle.as_tool("middle", "The middle.")])
    await top_worker.run("chain")
    middle_result = [i for i in middle.history if isinstance(i, ToolResult)]
    assert middle_result
    assert "depth limit (1)" in middle_result[0].content
    selfish = Worker(Routed({"": ScriptedClient([turn(ToolUse("me", {"prompt": "x"})), turn(Text("no"))])}))
    selfish.add_tool(selfish.as_tool("me", "Myself."))
    await selfish.run("loop")
    assert any("cannot run itself" in i.content for i in selfish.history if isinstance(i, ToolResult))


async def test_a_durable_run_records_the_childs_effects_under_the_call_and_replays_without_running_them() -> None:
    ran: list[str] = []

    @tool
    async def deploy(target: str) -> str:
        """Deploy."""
        ran.append(target)
        return f"deployed {target}"

    def build() -> Worker:
        client = Routed(
            {
                "": ScriptedClient([turn(call("ops", "ship", "c_ops")), turn(Text("shipped"))]),
                "You are ops.": ScriptedClient(
                    [turn(ToolUse("deploy", {"target": "staging"}, call_id="c_dep")), turn(Text("up"))]
                ),
            }
        )
        return Worker(client, tools=[deploy, AgentTool([agent("ops")])])

    recording = Recording()
    first = build()
    outcome = await first.run("go", run_id="run-durable", effects=recording)
    assert isinstance(outcome, Finished)
    assert ran == ["staging"]
    keys = [name for _, name, _ in recording.log]
    assert "agent:c_ops/tool:1:c_dep#0" in keys
    assert "agent:c_ops/model:1.1#0" in keys
    assert not any(k.startswith("tool:1:c_ops") for k in keys)  # the subagent call is no opaque step
    replayed = build()
    again = await replayed.run("go", run_id="run-durable", effects=Replay(recording))
    assert ran == ["staging"]  # nothing ran again
    assert isinstance(again, Finished)
    assert again.text == "shipped"
    assert again.usage == outcome.usage
    assert [i.to_json()["type"] for i in replayed.history] == [i.to_json()["type"] for i in first.history]


async def test_telemetry_nests_the_childs_spans_under_the_agent_call() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hookloop.telemetry import OpenTelemetry

    @tool(read_only=True)
    async def look() -> str:
        """Looks."""
        return "seen"

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = Routed(
        {
            "": ScriptedClient([turn(call("scout", "look", "c_s")), turn(Text("ok"))]),
            "You are scout.": ScriptedClient([turn(ToolUse("look", {})), turn(Text("seen it"))]),
        }
    )
    worker = Worker(client, tools=[look, AgentTool([agent("scout")])])
    OpenTelemetry(provider.get_tracer("test")).install(worker)
    await worker.run("go")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    agent_call, child_run, child_tool = (
        spans["execute_tool Agent"],
        spans["invoke_agent scout"],
        spans["execute_tool look"],
    )
    assert child_run.parent is not None
    assert child_run.parent.span_id == agent_call.context.span_id
    assert child_tool.parent is not None
    assert child_tool.parent.span_id == child_run.context.span_id
    assert spans["invoke_agent hookloop"].context.trace_id == child_tool.context.trace_id
