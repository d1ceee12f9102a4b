"""Cost per streamed delta of hookloop's provider clients, as a ratio to iterating the raw SDK stream.

    python bench/providers/bench_stream.py [--deltas 4000] [--repeats 15]

For each API (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses) a loopback server sends the same
pre-built server-sent-event body of ``--deltas`` text deltas. "raw" iterates the SDK's own stream
(``create(stream=True)``, every event parsed into the SDK's types, nothing else); "client" iterates
``client.stream(request)``, which drives that same SDK stream and normalises each event into hookloop's
stream events. Both read from the same server in the same process, alternating, so the ratio is the cost of the
client layer on top of the SDK. Target: ≤ 1.3×. Prints medians (µs per delta) and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from hookloop import Message
from hookloop.providers.anthropic import AnthropicClient
from hookloop.providers.base import LLMRequest
from hookloop.providers.openai_chat import OpenAIChatClient
from hookloop.providers.openai_responses import OpenAIResponsesClient


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def anthropic_body(n: int) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": usage}
    parts = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
    ]
    delta = _sse(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "word "}},
    )
    parts += [delta] * n
    parts += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": n}},
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(parts)


def chat_body(n: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse(
            None, {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}
        )

    usage = {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": n + 10}
    tail = _sse(
        None, {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage}
    )
    return b"".join(
        [
            chunk({"role": "assistant", "content": ""}),
            *[chunk({"content": "word "})] * n,
            chunk({}, "stop"),
            tail,
            b"data: [DONE]\n\n",
        ]
    )


def responses_body(n: int) -> bytes:
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "in_progress",
        "model": "m",
        "output": [],
    }
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    done_item = dict(
        item, status="completed", content=[{"type": "output_text", "text": "word " * n, "annotations": []}]
    )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": n + 10,
    }
    delta = {
        "type": "response.output_text.delta",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "delta": "word ",
        "logprobs": [],
        "sequence_number": 3,
    }
    return b"".join(
        [
            _sse("response.created", {"type": "response.created", "sequence_number": 0, "response": response}),
            _sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
            ),
            *[_sse("response.output_text.delta", delta)] * n,
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": done_item},
            ),
            _sse(
                "response.completed",
                {
                    "type": "response.completed",
                    "sequence_number": 5,
                    "response": dict(response, status="completed", output=[done_item], usage=usage),
                },
            ),
        ]
    )


class Server:
    """Answers every POST with the same event-stream body (keep-alive, chunked like the real APIs)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        chunked = f"{len(self.body):x}\r\n".encode() + self.body + b"\r\n0\r\n\r\n"
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        try:
            while await reader.readline():
                length = 0
                while (header := await reader.readline()) not in (b"\r\n", b""):
                    if header.lower().startswith(b"content-length:"):
                        length = int(header.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(head + chunked)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


async def _drain(events: AsyncIterator[Any]) -> int:
    count = 0
    async for _ in events:
        count += 1
    return count


async def measure(
    name: str, body: bytes, n: int, repeats: int, make: Callable[[str], Any], raw: Callable[[Any], Any]
) -> dict[str, Any]:
    async with Server(body) as server:
        client = make(f"http://127.0.0.1:{server.port}")
        request = LLMRequest(system=None, items=(Message.user("go"),), tools=(), model="m")
        raw_times: list[float] = []
        client_times: list[float] = []
        try:
            for _ in range(2):  # warm up connections and code paths
                await _drain(await raw(client))
                await _drain(client.stream(request))
            for _ in range(repeats):
                start = time.perf_counter()
                await _drain(await raw(client))
                raw_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                await _drain(client.stream(request))
                client_times.append(time.perf_counter() - start)
        finally:
            await client.aclose()
    raw_us = statistics.median(raw_times) / n * 1e6
    client_us = statistics.median(client_times) / n * 1e6
    return {"api": name, "raw_us_per_delta": raw_us, "client_us_per_delta": client_us, "ratio": client_us / raw_us}


async def run_bench(n: int, repeats: int) -> list[dict[str, Any]]:
    key: dict[str, Any] = {"api_key": "bench", "max_retries": 0}
    return [
        await measure(
            "anthropic",
            anthropic_body(n),
            n,
            repeats,
            lambda url: AnthropicClient("m", base_url=url, **key),
            lambda c: c.sdk_client.messages.create(
                model="m", max_tokens=1, messages=[{"role": "user", "content": "go"}], stream=True
            ),
        ),
        await measure(
            "openai-chat",
            chat_body(n),
            n,
            repeats,
            lambda url: OpenAIChatClient("m", base_url=url, **key),
            lambda c: c.sdk_client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "go"}], stream=True
            ),
        ),
        await measure(
            "openai-responses",
            responses_body(n),
            n,
            repeats,
            lambda url: OpenAIResponsesClient("m", base_url=url, **key),
            lambda c: c.sdk_client.responses.create(model="m", input="go", stream=True),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--deltas", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rows = asyncio.run(run_bench(args.deltas, args.repeats))
    print(f"{args.deltas} text deltas per stream, median of {args.repeats} runs (target: client/raw ≤ 1.3×)")
    print(f"{'api':<18}{'raw SDK µs/delta':>18}{'client µs/delta':>18}{'ratio':>8}")
    for row in rows:
        verdict = "PASS" if row["ratio"] <= 1.3 else "MISS"
        print(
            f"{row['api']:<18}{row['raw_us_per_delta']:>18.2f}{row['client_us_per_delta']:>18.2f}"
            f"{row['ratio']:>7.2f}x {verdict}"
        )


if __name__ == "__main__":
    main()
