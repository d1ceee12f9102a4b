"""A server's annotations are claims (issue 11, item 9) and one server's writes run in order (item 8)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_helpers import SLOW_START, Misbehaving, misbehaving, results

from hookloop import Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def mb(tmp_path: Path) -> Misbehaving:
    return misbehaving(tmp_path)


def run_once(name: str) -> ScriptedClient:
    return ScriptedClient([[ToolUse(name, {}, call_id="c1")], [Text("done")]])


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
async def test_a_tool_lying_read_only_is_asked_about_and_never_runs_unasked(
    mb: Misbehaving, tmp_path: Path, mode: str
) -> None:
    async with MCPServerStdio(mb) as server:
        worker = Worker(
            run_once("mcp__mb__delete_everything"),
            tools=[server],
            permissions=PermissionPolicy(mode=mode, workspace=tmp_path),  # type: ignore[arg-type]
        )
        outcome = await worker.run("clean up")
    assert not (mb.state / "deleted").exists()
    if mode == "plan":  # plan mode runs only read-only tools: denied, not asked
        [denied] = results(worker)
        assert denied.is_error
        assert "plan mode" in denied.content
    else:
        assert isinstance(outcome, Paused)
        assert [p.tool_name for p in outcome.pending] == ["mcp__mb__delete_everything"]
    assert mb.calls() == []


async def test_hooks_see_the_tool_as_not_read_only_unless_trusted(mb: Misbehaving) -> None:
    async with MCPServerStdio(mb) as server:
        meta = {t.meta.name: t.meta for t in server.list_tools()}
        assert meta["mcp__mb__delete_everything"].read_only is False
        assert meta["mcp__mb__look"].read_only is False
    async with MCPServerStdio(mb, trust_annotations=True) as trusted:
        meta = {t.meta.name: t.meta for t in trusted.list_tools()}
        assert meta["mcp__mb__look"].read_only is True
        assert meta["mcp__mb__crash"].read_only is False
        # Contradictory or not plainly true claims are not read-only, trusted or not.
        assert (meta["mcp__mb__muddled"].read_only, meta["mcp__mb__muddled"].sequential) == (False, True)


async def test_trust_annotations_lets_the_servers_read_only_hint_count(mb: Misbehaving, tmp_path: Path) -> None:
    async with MCPServerStdio(mb, trust_annotations=True) as server:
        worker = Worker(run_once("mcp__mb__look"), tools=[server], permissions=PermissionPolicy(workspace=tmp_path))
        await worker.run("look")
    [looked] = results(worker)
    assert (looked.content, looked.is_error) == ("looked", False)


async def test_resource_tools_are_asked_about_unless_the_server_is_trusted(mb: Misbehaving, tmp_path: Path) -> None:
    async with MCPServerStdio(mb) as server:
        worker = Worker(
            run_once("mcp__mb__list_resources"), tools=[server], permissions=PermissionPolicy(workspace=tmp_path)
        )
        assert isinstance(await worker.run("list"), Paused)


async def test_writes_of_one_server_run_one_after_another_in_the_models_order(mb: Misbehaving) -> None:
    client = ScriptedClient(
        [
            [ToolUse("mcp__mb__write", {"key": k}, call_id=k) for k in ("a", "b", "c")],
            [Text("done")],
        ]
    )
    async with MCPServerStdio(mb) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("write three")
    assert [r.content for r in results(worker)] == ["wrote a", "wrote b", "wrote c"]
    assert mb.calls() == ["start write", "end write"] * 3  # never two at once, none overlapping


async def test_sequential_false_on_the_server_runs_its_calls_in_parallel(mb: Misbehaving) -> None:
    client = ScriptedClient([[ToolUse("mcp__mb__write", {"key": k}, call_id=k) for k in ("a", "b")], [Text("ok")]])
    async with MCPServerStdio(mb, sequential=False) as server:
        assert not any(t.meta.sequential for t in server.list_tools())
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("write two")
    assert any(line.startswith("overlap") for line in mb.calls())  # the second arrived while the first ran


async def test_sequential_local_tools_run_in_order_while_others_run_beside_them() -> None:
    events: list[str] = []
    gate = anyio.Event()

    @tool(sequential=True)
    async def step(n: int, ctx: ToolContext) -> str:
        """A step that must not overlap another."""
        events.append(f"start {n}")
        if n == 1:
            await gate.wait()  # released by the parallel call: so step 2 cannot have started yet
        events.append(f"end {n}")
        return str(n)

    @tool
    async def free() -> str:
        """Runs beside the steps."""
        events.append("free")
        gate.set()
        return "free"

    client = ScriptedClient(
        [
            [
                ToolUse("step", {"n": 1}, call_id="s1"),
                ToolUse("free", {}, call_id="f"),
                ToolUse("step", {"n": 2}, call_id="s2"),
            ],
            [Text("done")],
        ]
    )
    worker = Worker(client, tools=[step, free])
    with anyio.fail_after(10):
        await worker.run("go")
    assert [r.content for r in results(worker)] == ["1", "free", "2"]
    assert events.index("end 1") < events.index("start 2")
    assert events.index("free") < events.index("end 1")
    assert step.meta.sequential
    assert not free.meta.sequential


def MCPServerStdio(mb: Misbehaving, **options: object):  # type: ignore[no-untyped-def]
    from hookloop.tools.mcp import MCPServer

    return MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START, **options)
