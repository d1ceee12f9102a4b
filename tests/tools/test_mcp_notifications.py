"""list_changed refreshes the Worker's tools, progress and logs reach the timeline, resources and prompts are
reachable (issue 11, item 12), against the misbehaving server process."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_helpers import SLOW_START, Misbehaving, misbehaving, results

from hookloop import ScriptedClient, Text, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.timeline import ToolEnded, ToolProgress, ToolServerLog, ToolStarted, event_to_json
from hookloop.tools.mcp import MCPServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def mb(tmp_path: Path) -> Misbehaving:
    return misbehaving(tmp_path)


def open_mb(mb: Misbehaving, **options: object):  # type: ignore[no-untyped-def]
    return MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START, **options)


async def test_list_changed_during_a_call_reaches_the_next_model_request_and_the_new_tool_runs(
    mb: Misbehaving,
) -> None:
    client = ScriptedClient(
        [
            [ToolUse("mcp__mb__add_tool", {}, call_id="c1")],
            [ToolUse("mcp__mb__new_tool", {}, call_id="c2")],
            [Text("done")],
        ]
    )
    async with open_mb(mb) as server:
        generation = server.tools_generation
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("add a tool")
        assert server.tools_generation != generation
    first, second = (tuple(spec.name for spec in r.tools) for r in client.requests[:2])
    assert "mcp__mb__new_tool" not in first
    assert "mcp__mb__new_tool" in second
    added, new = results(worker)
    assert (added.content, added.is_error) == ("added", False)
    assert new.is_error  # the server lists it but has no code for it: it answers with an error
    assert "unknown tool new_tool" in new.content
    assert "start new_tool" in mb.calls()  # the Worker knew the tool: the call reached the server


async def test_progress_and_log_notifications_reach_the_timeline_in_order(mb: Misbehaving) -> None:
    client = ScriptedClient([[ToolUse("mcp__mb__progress", {}, call_id="p1")], [Text("done")]])
    async with open_mb(mb) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        events: list[object] = []
        worker.timeline.subscribe(events.append)
        with anyio.fail_after(50):
            await worker.run("go")
    kinds = [e for e in events if isinstance(e, ToolStarted | ToolProgress | ToolServerLog | ToolEnded)]
    assert isinstance(kinds[0], ToolStarted)
    assert isinstance(kinds[-1], ToolEnded)
    progress = [e for e in kinds if isinstance(e, ToolProgress)]
    assert [(p.call_id, p.tool_name, p.progress, p.total, p.message) for p in progress] == [
        ("p1", "mcp__mb__progress", 1, 2, None),
        ("p1", "mcp__mb__progress", 2, 2, "done"),
    ]
    logs = [e for e in kinds if isinstance(e, ToolServerLog)]
    # The log sent right after initialize (before any call) is delivered when the first call starts.
    assert [(x.server, x.level, x.logger, x.data) for x in logs] == [
        ("mcp__mb", "info", None, {"started": True}),
        ("mcp__mb", "warning", "mb", "working"),
    ]
    assert event_to_json(progress[1]) == {
        "type": "tool_progress",
        "call_id": "p1",
        "tool": "mcp__mb__progress",
        "progress": 2,
        "total": 2,
        "message": "done",
    }
    assert event_to_json(logs[1]) == {
        "type": "server_log",
        "server": "mcp__mb",
        "level": "warning",
        "logger": "mb",
        "data": "working",
    }


async def test_resources_and_prompts_are_reachable_as_methods(mb: Misbehaving) -> None:
    async with open_mb(mb) as server:
        assert [r.name for r in await server.list_resources()] == ["note", "logo"]
        read = await server.read_resource("memo://note")
        assert [getattr(c, "text", None) for c in read.contents] == ["remember the milk"]
        [prompt] = await server.list_prompts()
        assert prompt.name == "greet"
        got = await server.get_prompt("greet", {"who": "Ada"})
        assert got.messages[0].content.text == "Say hello to Ada."  # type: ignore[union-attr]


async def test_resources_and_prompts_are_reachable_as_tools(mb: Misbehaving) -> None:
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__mb__list_resources", {}, call_id="l"),
                ToolUse("mcp__mb__read_resource", {"uri": "memo://note"}, call_id="r"),
                ToolUse("mcp__mb__list_prompts", {}, call_id="lp"),
                ToolUse("mcp__mb__get_prompt", {"name": "greet", "arguments": {"who": "Ada"}}, call_id="g"),
                ToolUse("mcp__mb__read_resource", {"url": "memo://note"}, call_id="bad"),
            ],
            [Text("done")],
        ]
    )
    async with open_mb(mb) as server:
        names = {t.meta.name for t in server.list_tools()}
        assert {"mcp__mb__list_resources", "mcp__mb__read_resource", "mcp__mb__list_prompts"} <= names
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("go")
    listed, read, prompts, prompt, bad = results(worker)
    assert '"uri": "memo://note"' in listed.content
    assert '"uri": "memo://logo"' in listed.content
    assert (read.content, read.is_error) == ("remember the milk", False)
    assert prompts.content == "greet(who): Greets."
    assert prompt.content == "[user]\nSay hello to Ada."
    assert bad.is_error
    assert "field 'uri': required field is missing" in bad.content
    assert "field 'url': not a parameter of this tool" in bad.content


async def test_resource_tools_can_be_left_out(mb: Misbehaving) -> None:
    async with open_mb(mb, resource_tools=False) as server:
        names = {t.meta.name for t in server.list_tools()}
        assert not any(n.endswith(("_resources", "_resource", "_prompts", "_prompt")) for n in names)
        assert [r.name for r in await server.list_resources()] == ["note", "logo"]
