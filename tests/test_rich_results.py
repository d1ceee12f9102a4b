"""Tool results with content parts (text, images, documents) and provider-native blocks in a real Worker run.

What hooks see is the text rendering; what the model gets is the parts, unless something rewrote the text.
"""

from __future__ import annotations

import base64
import json

import pytest

from hookloop import (
    DocumentPart,
    ImagePart,
    ProviderBlock,
    ScriptedClient,
    Text,
    TextPart,
    ToolOutput,
    ToolResult,
    ToolUse,
    Worker,
    item_from_json,
    tool,
)
from hookloop.hooks import Continue, PostToolCallInfo
from hookloop.interceptors import ToolResultView
from hookloop.items import parts_text
from hookloop.stream import BlockStart, BlockStop, NativeBlock, StopEvent, TextDelta

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 92).decode()  # 100 bytes decoded


@tool
async def screenshot() -> ToolOutput:
    """Take a screenshot."""
    return ToolOutput(parts=[TextPart(text="the screen:"), ImagePart(media_type="image/png", data=PNG)])


@tool
async def fetch_pdf() -> DocumentPart:
    """Fetch the report."""
    return DocumentPart(media_type="application/pdf", url="https://example.test/r.pdf", title="report")


def result_of(worker: Worker) -> ToolResult:
    (result,) = [i for i in worker.history if isinstance(i, ToolResult)]
    return result


async def test_a_tool_returning_parts_keeps_them_and_hooks_see_the_text_rendering() -> None:
    seen: list[str] = []
    worker = Worker(ScriptedClient([[ToolUse("screenshot", {})], [Text("done")]]), tools=[screenshot])
    worker.add_post_tool_call_hook(lambda info: (seen.append(info.content), Continue())[1])
    await worker.run("look")
    result = result_of(worker)
    assert result.parts == (TextPart(text="the screen:"), ImagePart(media_type="image/png", data=PNG))
    assert result.content == "the screen:\n[image: image/png, 100 bytes]"
    assert seen == [result.content]
    again = item_from_json(json.loads(json.dumps(result.to_json())))
    assert again == result


async def test_a_lone_document_part_is_a_rich_result() -> None:
    worker = Worker(ScriptedClient([[ToolUse("fetch_pdf", {})], [Text("done")]]), tools=[fetch_pdf])
    await worker.run("read it")
    result = result_of(worker)
    assert result.parts == (
        DocumentPart(media_type="application/pdf", url="https://example.test/r.pdf", title="report"),
    )
    assert result.content == "[document 'report': application/pdf, https://example.test/r.pdf]"


async def test_an_interceptor_that_rewrites_the_text_drops_the_parts_so_the_rewrite_is_what_the_model_gets() -> None:
    class Mask:
        async def post_tool_call(self, result: ToolResultView) -> None:
            result.content = result.content.replace("screen", "██████")

    worker = Worker(ScriptedClient([[ToolUse("screenshot", {})], [Text("done")]]), tools=[screenshot])
    worker.add_interceptor(Mask())
    await worker.run("look")
    result = result_of(worker)
    assert result.parts == ()
    assert "screen" not in result.content


async def test_an_interceptor_may_replace_the_parts_explicitly_and_bad_parts_are_an_error_result() -> None:
    class Keep:
        async def post_tool_call(self, result: ToolResultView) -> None:
            result.parts = (result.parts[1],)
            result.content = parts_text(result.parts)

    worker = Worker(ScriptedClient([[ToolUse("screenshot", {})], [Text("done")]]), tools=[screenshot])
    worker.add_interceptor(Keep())
    await worker.run("look")
    assert result_of(worker).parts == (ImagePart(media_type="image/png", data=PNG),)

    @tool
    async def broken() -> ToolOutput:
        """Returns a part that is not one."""
        return ToolOutput(parts=["not a part"])  # type: ignore[list-item]

    worker = Worker(ScriptedClient([[ToolUse("broken", {})], [Text("done")]]), tools=[broken])
    await worker.run("go")
    result = result_of(worker)
    assert result.is_error
    assert result.parts == ()
    assert "tool output parts[0]" in result.content


async def test_a_hook_replacing_the_output_drops_the_parts_and_added_context_is_appended_as_a_text_part() -> None:
    def replace(info: PostToolCallInfo) -> Continue:
        return Continue(replace_output="redacted")

    worker = Worker(ScriptedClient([[ToolUse("screenshot", {})], [Text("done")]]), tools=[screenshot])
    worker.add_post_tool_call_hook(replace)
    await worker.run("look")
    assert result_of(worker).parts == ()
    assert result_of(worker).content == "redacted"

    worker = Worker(ScriptedClient([[ToolUse("screenshot", {})], [Text("done")]]), tools=[screenshot])
    worker.add_post_tool_call_hook(lambda info: Continue(additional_context="note: blurry"))
    await worker.run("look")
    result = result_of(worker)
    assert len(result.parts) == 3
    assert isinstance(result.parts[2], TextPart)
    assert "note: blurry" in result.parts[2].text
    assert "note: blurry" in result.content


class NativeClient:
    """A client whose reply holds a native block between two text blocks (as a server tool use does)."""

    provider = "native-test"

    def __init__(self) -> None:
        self.requests: list[object] = []

    async def stream(self, request: object):  # type: ignore[no-untyped-def]
        self.requests.append(list(request.items))  # type: ignore[attr-defined]
        from hookloop._frozen import freeze_object

        yield BlockStart(0, "text", meta=freeze_object({"id": "msg_1"}))
        yield TextDelta(0, "searching")
        yield BlockStop(0)
        yield NativeBlock(1, "native-test", freeze_object({"type": "server_tool_use", "id": "srv_1"}))
        yield BlockStart(2, "text")
        yield TextDelta(2, "found it")
        yield BlockStop(2)
        yield StopEvent("end_turn")


async def test_native_blocks_become_provider_blocks_in_reply_order_and_block_meta_reaches_the_item() -> None:
    client = NativeClient()
    worker = Worker(client)  # type: ignore[arg-type]
    await worker.run("go")
    kinds = [type(i).__name__ for i in worker.history]
    assert kinds == ["Message", "Message", "ProviderBlock", "Message"]
    first, block = worker.history[1], worker.history[2]
    assert isinstance(block, ProviderBlock)
    assert block.provider == "native-test"
    assert dict(block.data) == {"type": "server_tool_use", "id": "srv_1"}
    assert dict(first.meta) == {"id": "msg_1"}  # type: ignore[union-attr]
