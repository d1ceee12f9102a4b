"""Tool results with content parts go to Anthropic as native tool_result content (full Worker run, real SDK,
loopback server), and what Anthropic does not take goes as a text placeholder that says so."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from hookloop import DocumentPart, Finished, ImagePart, Message, TextPart, ToolOutput, ToolResult, Worker, tool
from hookloop.items import ContentPart
from hookloop.providers._anthropic_wire import from_anthropic, to_anthropic
from hookloop.providers.anthropic import AnthropicClient
from providers.wire import WireServer

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 92).decode()
PDF = base64.b64encode(b"%PDF-1.7\n%%EOF\n").decode()
NOTES = base64.b64encode("Paris: 18 °C\n".encode()).decode()
BAD_UTF8 = base64.b64encode(b"\xff\xfe\xfa").decode()
DOCX = base64.b64encode(b"PK\x03\x04").decode()

PARTS: list[ContentPart] = [
    TextPart(text="Paris: 18 fahrenheit"),
    TextPart(text=""),  # the API rejects empty text blocks: left out
    ImagePart(media_type="image/png", data=PNG),
    ImagePart(media_type="", url="https://maps.example/paris.png"),
    ImagePart(media_type="image/bmp", data=PNG),
    DocumentPart(media_type="application/pdf", data=PDF, title="forecast"),
    DocumentPart(media_type="application/pdf", url="https://weather.example/paris.pdf"),
    DocumentPart(media_type="text/plain; charset=utf-8", data=NOTES, title="notes"),
    DocumentPart(media_type="application/json", data=base64.b64encode(b'{"t": 18}').decode()),
    DocumentPart(media_type="text/csv", data=BAD_UTF8),
    DocumentPart(
        media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document", data=DOCX, title="r"
    ),
    DocumentPart(media_type="text/html", url="https://weather.example/paris.html"),
]
EXPECTED: list[dict[str, Any]] = [
    {"type": "text", "text": "Paris: 18 fahrenheit"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    {"type": "image", "source": {"type": "url", "url": "https://maps.example/paris.png"}},
    {"type": "text", "text": "[image: image/bmp, 100 bytes] (left out: Anthropic does not take this part)"},
    {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        "title": "forecast",
    },
    {"type": "document", "source": {"type": "url", "url": "https://weather.example/paris.pdf"}},
    {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Paris: 18 °C\n"},
        "title": "notes",
    },
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": '{"t": 18}'}},
    {"type": "text", "text": "[document: text/csv, 3 bytes] (left out: Anthropic does not take this part)"},
    {
        "type": "text",
        "text": "[document 'r': application/vnd.openxmlformats-officedocument.wordprocessingml.document, 4 bytes] "
        "(left out: Anthropic does not take this part)",
    },
    {
        "type": "text",
        "text": "[document: text/html, https://weather.example/paris.html] "
        "(left out: Anthropic does not take this part)",
    },
]


@tool
async def get_weather(location: str, unit: str = "celsius") -> ToolOutput:
    """The current weather in a city."""
    return ToolOutput(parts=PARTS)


async def test_tool_result_parts_go_back_as_native_tool_result_content(server: WireServer) -> None:
    server.sse("anthropic/tool")
    server.sse("anthropic/text")
    async with AnthropicClient("m", api_key="k", base_url=server.base_url, caching=False) as client:
        worker = Worker(client, tools=[get_weather])
        outcome = await worker.run("Weather in SF?")
    assert isinstance(outcome, Finished)
    (result,) = [i for i in worker.history if isinstance(i, ToolResult)]
    assert result.parts == tuple(PARTS)
    user_turn = server.requests[1].body["messages"][2]
    assert user_turn == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "content": EXPECTED}],
    }


def test_a_result_whose_parts_are_all_empty_text_goes_as_its_text_and_errors_keep_is_error() -> None:
    call_items = from_anthropic(
        None,
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        ],
    )
    result = ToolResult(call_id="t1", name="f", content="failed", is_error=True, parts=(TextPart(text=""),))
    _, messages, _ = to_anthropic(None, [*call_items, result], (), caching=False)
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "failed", "is_error": True}
    ]


def test_user_documents_map_like_tool_result_documents_and_invert() -> None:
    pdf = DocumentPart(media_type="application/pdf", data=PDF, title="forecast")
    notes = DocumentPart(media_type="text/plain", data=NOTES)
    user = Message(role="user", content=(TextPart(text="Summarise"), pdf, notes))
    _, messages, _ = to_anthropic(None, [user], (), caching=False)
    assert messages[0]["content"] == [
        {"type": "text", "text": "Summarise"},
        EXPECTED[4],
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Paris: 18 °C\n"}},
    ]
    (back,) = from_anthropic(None, messages)
    assert isinstance(back, Message)
    assert back.content == user.content


def test_tool_result_parts_invert_from_the_wire() -> None:
    payload = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": EXPECTED[:3]}]},
    ]
    result = from_anthropic(None, payload)[-1]
    assert isinstance(result, ToolResult)
    assert result.parts == (PARTS[0], PARTS[2], PARTS[3])
    assert (
        result.content
        == "Paris: 18 fahrenheit\n[image: image/png, 100 bytes]\n[image: , https://maps.example/paris.png]"
    )
    _, messages, _ = to_anthropic(None, from_anthropic(None, payload), (), caching=False)
    assert messages[1:] == payload[1:]
