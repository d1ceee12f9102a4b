"""MCP image, audio and resource content become ToolResult.parts (the text rendering stays in content), so an
image reaches a vision model (issue 11, item 7 for MCP)."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest
from mcp import types as mcp_types
from mcp_helpers import SLOW_START, Misbehaving, misbehaving, results

from hookloop import ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.items import DocumentPart, ImagePart, TextPart
from hookloop.permissions import PermissionPolicy
from hookloop.tools._mcp_content import render, to_parts
from hookloop.tools.mcp import MCPServer

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 24).decode()


@pytest.fixture
def mb(tmp_path: Path) -> Misbehaving:
    return misbehaving(tmp_path)


async def test_an_mcp_image_reaches_the_next_model_request_as_an_image_part(mb: Misbehaving) -> None:
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__mb__image", {}, call_id="i"),
                ToolUse("mcp__mb__read_resource", {"uri": "memo://logo"}, call_id="r"),
            ],
            [Text("a black square")],
        ]
    )
    async with MCPServer.stdio("mb", mb.command, mb.args(), init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__mb__*"]))
        with anyio.fail_after(50):
            await worker.run("what is in the picture?")
    image, logo = results(worker)
    assert image.parts == (ImagePart(media_type="image/png", data=PNG), TextPart(text="a"))
    assert image.content == "[image: image/png, 32 bytes]\na"  # what hooks and permission code see
    assert logo.parts == (ImagePart(media_type="image/png", data=PNG),)
    assert logo.content == "[resource: memo://logo, image/png, 32 bytes]"
    sent = [i for i in client.requests[1].items if isinstance(i, ToolResult)]
    assert [r.parts for r in sent] == [image.parts, logo.parts]


def test_content_blocks_map_to_parts_in_order() -> None:
    audio = base64.b64encode(b"RIFF0000").decode()
    blocks = [
        mcp_types.TextContent(type="text", text="look:"),
        mcp_types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        mcp_types.AudioContent(type="audio", data=audio, mime_type="audio/wav"),
        mcp_types.EmbeddedResource(
            type="resource",
            resource=mcp_types.BlobResourceContents(uri="file:///r.pdf", mime_type="application/pdf", blob=audio),
        ),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.TextResourceContents(uri="file:///n.txt", text="note")
        ),
        mcp_types.ResourceLink(type="resource_link", uri="file:///x", name="x"),
    ]
    assert to_parts(blocks) == (
        TextPart(text="look:"),
        ImagePart(media_type="image/png", data=PNG),
        DocumentPart(media_type="audio/wav", data=audio, title="audio"),
        DocumentPart(media_type="application/pdf", data=audio, title="file:///r.pdf"),
        TextPart(text="note"),
        TextPart(text="[resource link: file:///x]"),
    )
    assert render(blocks).splitlines() == [
        "look:",
        "[image: image/png, 32 bytes]",
        "[audio: audio/wav, 8 bytes]",
        "[resource: file:///r.pdf, application/pdf, 8 bytes]",
        "note",
        "[resource link: file:///x]",
    ]
    assert to_parts([mcp_types.TextContent(type="text", text="only text")]) == ()
