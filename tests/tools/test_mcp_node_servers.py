"""Real npm MCP servers (``@modelcontextprotocol/server-memory``, ``-filesystem``, ``-everything``, installed by
.ci/run when node is present): the parallel-write data loss (issue 11, item 8), images as parts, progress and
logs. Collected when node and the packages are there, or when CI says node is (``HOOKLOOP_CI_NODE=1``: then a
missing package fails): see tests/tools/conftest.py."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import anyio
import pytest
from mcp_helpers import SLOW_START, need_node_package, results

from hookloop import ScriptedClient, Text, ToolUse, Worker
from hookloop.items import ImagePart
from hookloop.permissions import PermissionPolicy
from hookloop.timeline import ToolProgress
from hookloop.tools.mcp import MCPServer

pytestmark = pytest.mark.anyio


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH, but CI said it is (HOOKLOOP_CI_NODE=1)")
    return found


async def test_memory_server_keeps_both_entities_and_the_relation_written_in_one_reply(tmp_path: Path) -> None:
    entry = need_node_package("@modelcontextprotocol/server-memory")
    memory = tmp_path / "memory.jsonl"
    entities = [
        {"name": "Ada", "entityType": "person", "observations": ["writes programs"]},
        {"name": "Engine", "entityType": "machine", "observations": ["computes"]},
    ]
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__memory__create_entities", {"entities": entities}, call_id="e"),
                ToolUse(
                    "mcp__memory__create_relations",
                    {"relations": [{"from": "Ada", "to": "Engine", "relationType": "programs"}]},
                    call_id="r",
                ),
            ],
            [ToolUse("mcp__memory__read_graph", {}, call_id="g")],
            [Text("remembered")],
        ]
    )
    async with MCPServer.stdio(
        "memory", node(), [str(entry)], env={"MEMORY_FILE_PATH": str(memory)}, init_timeout=SLOW_START
    ) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__memory__*"]))
        with anyio.fail_after(50):
            await worker.run("remember Ada and the engine")
    created, related, graph = results(worker)
    assert not created.is_error
    assert not related.is_error
    data = json.loads(graph.content)
    assert sorted(e["name"] for e in data["entities"]) == ["Ada", "Engine"]
    assert [(r["from"], r["to"]) for r in data["relations"]] == [("Ada", "Engine")]


async def test_filesystem_server_reads_an_image_as_an_image_part_and_refuses_outside(tmp_path: Path) -> None:
    entry = need_node_package("@modelcontextprotocol/server-filesystem")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
    (allowed / "dot.png").write_bytes(png)
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__fs__read_media_file", {"path": str(allowed / "dot.png")}, call_id="m"),
                ToolUse("mcp__fs__read_text_file", {"path": str(tmp_path / "secret.txt")}, call_id="x"),
            ],
            [Text("a dot")],
        ]
    )
    async with MCPServer.stdio("fs", node(), [str(entry), str(allowed)], init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__fs__*"]))
        with anyio.fail_after(50):
            await worker.run("look at the picture")
    media, outside = results(worker)
    assert media.parts == (ImagePart(media_type="image/png", data=base64.b64encode(png).decode()),)
    assert media.content == f"[image: image/png, {len(png)} bytes]"
    assert outside.is_error
    assert "TOP SECRET" not in outside.content


async def test_everything_server_image_progress_and_sum() -> None:
    entry = need_node_package("@modelcontextprotocol/server-everything")
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__everything__get-tiny-image", {}, call_id="i"),
                ToolUse("mcp__everything__get-sum", {"a": 2, "b": 3}, call_id="s"),
                ToolUse("mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 2}, call_id="p"),
            ],
            [Text("done")],
        ]
    )
    async with MCPServer.stdio("everything", node(), [str(entry), "stdio"], init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__everything__*"]))
        progress: list[ToolProgress] = []
        worker.timeline.subscribe(lambda e: progress.append(e) if isinstance(e, ToolProgress) else None)
        with anyio.fail_after(50):
            await worker.run("go")
    image, total, long = results(worker)
    assert any(isinstance(p, ImagePart) and p.media_type == "image/png" for p in image.parts)
    assert "[image: image/png," in image.content
    assert "5" in total.content
    assert not long.is_error
    assert [(p.call_id, p.progress) for p in progress] == [("p", 1.0), ("p", 2.0)]
