"""A loopback HTTP/1.1 server that answers recorded replies in order and keeps every request it got.

Each reply is sent with its recorded status and headers (content-type, retry-after, request-id: what the
recording kept) and its body byte for byte, chunked at event boundaries (one chunk per server-sent event, as
a real server flushes them). A request beyond the recorded ones gets HTTP 400 ``conformance_end`` (the harness
reports the extra request).

Non-streamed recordings: a few frameworks recorded a 200 JSON reply to a non-streaming request, while
hookloop's clients always stream. Such a reply is re-encoded as the equivalent event stream of the same API
(:func:`anthropic_stream`, :func:`responses_stream`, :func:`chat_stream`: every block / output item / tool call
and the usage, unchanged) —
the only case where the bytes served are not the recorded ones; the harness's table marks it ``synth``.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from conformance.recording import API, Interaction

__all__ = ["ReplayServer", "Served", "body_chunks"]

END_OF_RECORDING = {"error": {"type": "conformance_end", "message": "no recorded reply for this request"}}


@dataclass(frozen=True, slots=True)
class Served:
    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    synthesised: bool = False


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n".encode()


def anthropic_stream(message: dict[str, Any]) -> list[bytes]:
    """A non-streamed Messages reply as its event stream."""
    start = dict(message, content=[], stop_reason=None)
    usage = message.get("usage") or {}
    chunks = [_sse("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or ()):
        kind = block["type"]
        delta: dict[str, Any] | None = None
        first = dict(block)
        if kind == "text":
            first["text"] = ""
            delta = {"type": "text_delta", "text": block["text"]}
        elif kind == "thinking":
            first["thinking"], first["signature"] = "", ""
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
        elif kind in ("tool_use", "server_tool_use"):
            first["input"] = {}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
        chunks.append(
            _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": first})
        )
        if delta is not None:
            chunks.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        if kind == "thinking" and block.get("signature"):
            signature = {"type": "signature_delta", "signature": block["signature"]}
            chunks.append(
                _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": signature})
            )
        chunks.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    chunks.append(
        _sse(
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage.get("output_tokens", 0)}},
        )
    )
    chunks.append(_sse("message_stop", {"type": "message_stop"}))
    return chunks


def responses_stream(response: dict[str, Any]) -> list[bytes]:
    """A non-streamed Responses reply as its event stream."""
    seq = iter(range(1_000_000))
    created = dict(response, output=[], status="in_progress", usage=None)
    chunks = [_sse("response.created", {"type": "response.created", "sequence_number": next(seq), "response": created})]
    for index, item in enumerate(response.get("output") or ()):
        added = dict(item)
        if item.get("type") == "message":
            added["content"] = []
        added_event = {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": index}
        chunks.append(_sse("response.output_item.added", added_event | {"item": added}))
        done_event = {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": index}
        chunks.append(_sse("response.output_item.done", done_event | {"item": item}))
    kind = "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    chunks.append(_sse(kind, {"type": kind, "sequence_number": next(seq), "response": response}))
    return chunks


def chat_stream(completion: dict[str, Any]) -> list[bytes]:
    """A non-streamed Chat Completions reply as its chunk stream (first choice), usage chunk and ``[DONE]``."""
    head: dict[str, Any] = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    chunks = [chunk({"role": "assistant", "content": ""})]
    for key in ("reasoning_content", "reasoning"):
        if message.get(key):
            chunks.append(chunk({key: message[key]}))
    if message.get("content"):
        chunks.append(chunk({"content": message["content"]}))
    for index, call in enumerate(message.get("tool_calls") or ()):
        part = {"index": index, "id": call.get("id"), "type": "function", "function": call.get("function", {})}
        chunks.append(chunk({"tool_calls": [part]}))
    chunks.append(chunk({}, choice.get("finish_reason") or "stop"))
    if completion.get("usage"):
        chunks.append(_sse(None, head | {"choices": [], "usage": completion["usage"]}))
    chunks.append(b"data: [DONE]\n\n")
    return chunks


def body_chunks(api: API, interaction: Interaction) -> Served:
    """What the server sends for a recorded interaction."""
    headers = dict(interaction.headers)
    chunks: list[bytes]
    if interaction.status == 200 and not interaction.streamed and interaction.request.get("stream") is not True:
        data = json.loads(interaction.body)
        if api == "anthropic":
            chunks = anthropic_stream(data)
        elif api == "responses":
            chunks = responses_stream(data)
        else:
            chunks = chat_stream(data)
        headers["content-type"] = "text/event-stream; charset=utf-8"
        return Served(200, headers, chunks, synthesised=True)
    raw = interaction.body.encode("utf-8")
    if interaction.streamed:
        # Split after each blank line, keeping every byte (including \r\n line ends and leading comments).
        chunks = []
        start = 0
        while True:
            at = min((i for i in (raw.find(b"\n\n", start), raw.find(b"\r\n\r\n", start)) if i >= 0), default=-1)
            if at < 0:
                break
            end = at + (2 if raw[at : at + 2] == b"\n\n" else 4)
            chunks.append(raw[start:end])
            start = end
        if start < len(raw):
            chunks.append(raw[start:])
        return Served(interaction.status, headers, chunks)
    return Served(interaction.status, headers, [raw])


class ReplayServer:
    """Serves queued replies in order on 127.0.0.1; ``requests`` holds every JSON request body received."""

    def __init__(self, replies: list[Served]) -> None:
        self.replies: deque[Served] = deque(replies)
        self.requests: list[Any] = []
        self.paths: list[str] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> ReplayServer:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the server is shutting down: it cancelled this connection itself
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:  # keep-alive
            line = await reader.readline()
            if not line:
                return
            _method, path, _ = line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                header = await reader.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            self.paths.append(path)
            self.requests.append(json.loads(raw) if raw else None)
            reply = (
                self.replies.popleft()
                if self.replies
                else Served(400, {"content-type": "application/json"}, [json.dumps(END_OF_RECORDING).encode()])
            )
            head = [f"HTTP/1.1 {reply.status} Recorded"]
            head += [f"{k}: {v}" for k, v in reply.headers.items() if k not in ("content-length", "transfer-encoding")]
            head.append("transfer-encoding: chunked")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for chunk in reply.chunks:
                if chunk:
                    writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
