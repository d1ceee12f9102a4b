"""Property: whatever mix of blocks an Anthropic reply streams (text, cited text, thinking, client and server tool
calls with their input JSON cut anywhere, tool results, block types nobody has seen yet), the Worker keeps each
in reply order and the next request sends the assistant's content back exactly (real SDK, loopback server)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookloop import Worker
from hookloop.providers.anthropic import AnthropicClient
from providers.wire import Reply, WireServer, get_weather, sse_events

_KEYS = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
OBJECT = st.dictionaries(_KEYS, JSON, max_size=4)


@st.composite
def cuts(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut into pieces at drawn places (the wire may split anywhere, even inside a JSON token)."""
    points = sorted(draw(st.sets(st.integers(0, len(text)), max_size=4)))
    pieces, last = [], 0
    for point in [*points, len(text)]:
        pieces.append(text[last:point])
        last = point
    return [p for p in pieces if p] or [""]


@st.composite
def block(draw: st.DrawFn, index: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """(content_block_start block, its deltas, the complete block)."""
    kind = draw(st.sampled_from(["text", "cited", "thinking", "tool_use", "server_tool_use", "result", "unknown"]))
    if kind in ("text", "cited"):
        text = draw(_TEXT)
        deltas: list[dict[str, Any]] = [{"type": "text_delta", "text": t} for t in draw(cuts(text))]
        whole: dict[str, Any] = {"type": "text", "text": text}
        if kind == "text":
            return {"type": "text", "text": ""}, deltas, whole
        citations = draw(st.lists(OBJECT.map(lambda o: {"type": "char_location", **o}), max_size=2))
        for number, citation in enumerate(citations):
            deltas.insert(min(number, len(deltas)), {"type": "citations_delta", "citation": citation})
        return {"citations": [], "type": "text", "text": ""}, deltas, {**whole, "citations": citations}
    if kind == "thinking":
        text, signature = draw(_TEXT), draw(st.text("ABCDEFabcdef0123456789+/", min_size=1, max_size=20))
        deltas = [{"type": "thinking_delta", "thinking": t} for t in draw(cuts(text))]
        deltas.append({"type": "signature_delta", "signature": signature})
        start = {"type": "thinking", "thinking": "", "signature": ""}
        return start, deltas, {"type": "thinking", "thinking": text, "signature": signature}
    if kind in ("tool_use", "server_tool_use"):
        tool_input: dict[str, Any] = {"location": draw(_TEXT)} if kind == "tool_use" else draw(OBJECT)
        name = "get_weather" if kind == "tool_use" else "web_search"
        ident = f"{'toolu' if kind == 'tool_use' else 'srvtoolu'}_{index:02d}"
        start = {"type": kind, "id": ident, "name": name, "input": {}}
        pieces = draw(cuts(json.dumps(tool_input, ensure_ascii=draw(st.booleans()))))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        return start, deltas, {**start, "input": tool_input}
    if kind == "result":
        whole = {"type": "web_search_tool_result", "tool_use_id": f"srvtoolu_{index:02d}", "content": draw(JSON)}
        return whole, [], whole
    whole = {**draw(OBJECT), "type": f"future_{draw(_KEYS)}"}
    return whole, [], whole


def event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def sent_back(whole: dict[str, Any]) -> list[dict[str, Any]]:
    """What the next request must carry for a complete block."""
    if whole["type"] == "text":
        if not whole["text"]:
            return []  # an empty text is no Message, and its citations have nothing to sit on
        return [whole if whole.get("citations") else {"type": "text", "text": whole["text"]}]
    return [whole]


async def replay(chunks: list[bytes], has_calls: bool) -> list[dict[str, Any]]:
    server = WireServer()
    await server.start()
    try:
        server.replies.append(Reply(200, {"content-type": "text/event-stream"}, chunks))
        server.sse("anthropic/text")
        async with AnthropicClient("m", api_key="k", base_url=server.base_url, max_retries=0, caching=False) as c:
            worker = Worker(c, tools=[get_weather])
            await worker.run("go")
            if not has_calls:
                await worker.run("again")
        replied = [m for m in server.requests[1].body["messages"] if m["role"] == "assistant"]
        assert len(replied) <= 1
        content: list[dict[str, Any]] = replied[0]["content"] if replied else []
        return content
    finally:
        await server.stop()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(*[block(i) for i in range(n)])))
def test_any_mix_of_blocks_goes_back_exactly_in_reply_order(
    blocks: tuple[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]], ...],
) -> None:
    has_calls = any(whole["type"] == "tool_use" for _, _, whole in blocks)
    head, *_ = sse_events("anthropic/text")  # a real message_start
    chunks = [head]
    for index, (start, deltas, _) in enumerate(blocks):
        chunks.append(event("content_block_start", {"index": index, "content_block": start}))
        chunks += [event("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        chunks.append(event("content_block_stop", {"index": index}))
    stop = "tool_use" if has_calls else "end_turn"
    chunks.append(event("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}))
    chunks.append(event("message_stop", {}))
    expected = [b for _, _, whole in blocks for b in sent_back(whole)]
    assert asyncio.run(replay(chunks, has_calls)) == expected
