"""A batch where one subagent pauses and the others finish: one checkpoint, one result per call, nothing run
twice on resume, one notification; and an as_tool Worker that two parents call at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agents.support import Routed
from helpers import assert_valid_history
from hookloop import Approve, Finished, Paused, Reject, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.agents import AgentDefinition, AgentTool
from hookloop.hooks import NOTIFICATION, NotificationInfo
from hookloop.items import ToolResult
from hookloop.permissions import PermissionPolicy

pytestmark = pytest.mark.anyio


def agent(name: str) -> AgentDefinition:
    return AgentDefinition(name=name, description=name, system_prompt=f"You are {name}.")


def spawn(kind: str, call_id: str) -> ToolUse:
    return ToolUse("Agent", {"description": kind, "prompt": "go", "subagent_type": kind}, call_id=call_id)


async def test_one_child_pauses_the_others_finish_and_resume_runs_only_what_waited(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool(read_only=True)
    async def work(what: str) -> str:
        """Does some work."""
        ran.append(what)
        return f"did {what}"

    @tool
    async def risky(what: str) -> str:
        """Needs approval."""
        ran.append(f"risky {what}")
        return f"risked {what}"

    notes: list[str] = []

    def notified(info: NotificationInfo) -> None:
        notes.append(info.kind)

    def build() -> Worker:
        client = Routed(
            {
                "": ScriptedClient(
                    [[spawn("calm", "c_calm"), spawn("bold", "c_bold"), spawn("shy", "c_shy")], [Text("all done")]]
                ),
                "You are calm.": ScriptedClient([[ToolUse("work", {"what": "calm"})], [Text("calm ok")]]),
                "You are bold.": ScriptedClient([[ToolUse("risky", {"what": "a"}, call_id="r1")], [Text("bold ok")]]),
                "You are shy.": ScriptedClient([[ToolUse("risky", {"what": "b"}, call_id="r2")], [Text("shy ok")]]),
            }
        )
        worker = Worker(
            client,
            tools=[work, risky, AgentTool([agent("calm"), agent("bold"), agent("shy")])],
            permissions=PermissionPolicy(ask=["risky"], workspace=tmp_path),
        )
        worker.add_hook(NOTIFICATION, notified)
        return worker

    worker = build()
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    assert sorted(p.call_id for p in paused.pending) == ["c_bold/r1", "c_shy/r2"]
    assert ran == ["calm"]
    assert notes == ["permission_prompt", "permission_prompt"]  # one per paused child, none extra for the parent
    states = {c.call_id: c.state for c in paused.checkpoint.batch}
    assert states == {"c_calm": "done", "c_bold": "subagent", "c_shy": "subagent"}
    assert worker.history[-1].__class__.__name__ == "ToolCall"  # nothing answered yet in the history
    outcome = await worker.resume(paused.checkpoint, decisions={"c_bold/r1": Approve(), "c_shy/r2": Reject("no")})
    assert isinstance(outcome, Finished)
    assert outcome.text == "all done"
    assert ran == ["calm", "risky a"]  # calm's work was not done again; shy's call was rejected
    assert_valid_history(worker.history)
    results = {i.call_id: i.content for i in worker.history if isinstance(i, ToolResult)}
    assert results == {"c_calm": "calm ok", "c_bold": "bold ok", "c_shy": "shy ok"}


async def test_an_as_tool_worker_called_by_two_parents_at_once_runs_one_and_refuses_the_other() -> None:
    gate = asyncio.Event()
    inside = asyncio.Event()

    @tool
    async def hold() -> str:
        """Waits for the gate."""
        inside.set()
        await asyncio.wait_for(gate.wait(), timeout=10)
        return "held"

    helper = Worker(
        Routed({"You help.": ScriptedClient([[ToolUse("hold", {})], [Text("helped")]])}),
        tools=[hold],
        system="You help.",
    )
    shared = helper.as_tool("helper", "Helps.")

    def parent() -> Worker:
        return Worker(
            Routed({"": ScriptedClient([[ToolUse("helper", {"prompt": "x"}, call_id="c_h")], [Text("ok")]])}),
            tools=[shared],
        )

    first, second = parent(), parent()
    running = asyncio.ensure_future(first.run("one"))
    await asyncio.wait_for(inside.wait(), timeout=10)
    refused = await second.run("two")
    gate.set()
    done = await running
    assert isinstance(done, Finished)
    assert isinstance(refused, Finished)
    assert next(i for i in first.history if isinstance(i, ToolResult)).content == "helped"
    other = next(i for i in second.history if isinstance(i, ToolResult))
    assert other.is_error
    assert "already running" in other.content
    assert helper.approvers == []
    assert helper._outer_policies == ()


async def test_a_parent_hooks_pause_inside_the_child_pauses_the_parent_and_an_abandoned_pause_stays_valid() -> None:
    from hookloop.hooks import PRE_TOOL_CALL, Continue, Pause, PreToolCallInfo

    ran: list[str] = []

    @tool(read_only=True)
    async def publish(what: str) -> str:
        """Publishes."""
        ran.append(what)
        return "published"

    def gate(info: PreToolCallInfo) -> Continue | Pause:
        return Pause("a person must look first") if info.agent_type == "writer" else Continue()

    def build(parent_turns: list[object], child_turns: list[object]) -> Worker:
        worker = Worker(
            Routed({"": ScriptedClient(parent_turns), "You are writer.": ScriptedClient(child_turns)}),  # type: ignore[arg-type]
            tools=[publish, AgentTool([agent("writer")])],
        )
        worker.add_hook(PRE_TOOL_CALL, gate)
        return worker

    worker = build(
        [[spawn("writer", "c_w")], [Text("parent done")]],
        [[ToolUse("publish", {"what": "post"}, call_id="c_p")], [Text("child done")]],
    )
    paused = await worker.run("write")
    assert isinstance(paused, Paused)
    (pending,) = paused.pending
    assert (pending.call_id, pending.state, pending.asked_by) == ("c_w/c_p", "paused", "hook 'gate'")
    outcome = await worker.resume(paused.checkpoint, decisions={"c_w/c_p": Approve()})
    assert isinstance(outcome, Finished)
    assert ran == ["post"]

    # a new run after a nested pause that was never resumed answers the waiting call: the history stays valid
    again = build([[spawn("writer", "c_w2")], [Text("later")]], [[ToolUse("publish", {"what": "x"}, call_id="c_x")]])
    assert isinstance(await again.run("write"), Paused)
    again.client = Routed({"": ScriptedClient([[Text("moved on")]])})
    assert isinstance(await again.run("something else"), Finished)
    assert_valid_history(again.history)
    assert ran == ["post"]
