"""A loopback HTTP/1.1 server that speaks the providers' real wire format, for the real SDKs to talk to.

Each test queues replies (an SSE fixture file from ``fixtures/``, streamed one event per HTTP chunk, or an HTTP
error with its headers and JSON body) and the server plays them in order, recording every request (method,
path, headers, JSON body). Reply modes: ``chunked`` (a complete stream), ``cut`` (the connection closes
mid-message, without the terminating chunk) and ``hang`` (the stream stays open until the client closes the
connection, which sets ``client_closed``).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hookloop import Worker, tool
from hookloop.hooks import AbortInfo, Continue, PreToolCallInfo
from hookloop.stream import StreamEvent, TextDelta, ToolCallDelta

FIXTURES = Path(__file__).parent / "fixtures"

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Site Overloaded",
}


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    mode: Literal["chunked", "cut", "hang"] = "chunked"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse_events(name: str) -> list[bytes]:
    """The events of fixture ``name`` (``anthropic/text`` → fixtures/anthropic/text.sse), byte for byte."""
    raw = (FIXTURES / f"{name}.sse").read_bytes()
    return [event + b"\n\n" for event in raw.split(b"\n\n") if event.strip()]


class WireServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.client_closed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def sse(self, name: str, *, mode: Literal["chunked", "cut", "hang"] = "chunked", keep: int | None = None) -> None:
        """Queue fixture ``name`` as an event stream (``keep``: only its first events)."""
        chunks = sse_events(name)
        if keep is not None:
            chunks = chunks[:keep]
        headers = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
        self.replies.append(Reply(200, headers, chunks, mode))

    def error(self, status: int, body: dict[str, Any], **headers: str) -> None:
        """Queue an HTTP error with a JSON body (header names: underscores become dashes)."""
        data = json.dumps(body).encode()
        all_headers = {"content-type": "application/json"} | {k.replace("_", "-"): v for k, v in headers.items()}
        self.replies.append(Reply(status, all_headers, [data]))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
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
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:  # keep-alive: one connection may carry several requests
            line = await reader.readline()
            if not line:
                return
            method, path, _ = line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                header = await reader.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Seen(method, path, headers, json.loads(raw) if raw else None))
            reply = self.replies.popleft() if self.replies else Reply(500, {}, [b'{"error": "no reply queued"}'])
            head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
            head += [f"{k}: {v}" for k, v in reply.headers.items()]
            head += ["request-id: req_test", "x-request-id: req_test", "transfer-encoding: chunked"]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for chunk in reply.chunks:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
            if reply.mode == "cut":
                return
            if reply.mode == "hang":
                while await reader.read(1024):
                    pass
                self.client_closed.set()
                return
            writer.write(b"0\r\n\r\n")
            await writer.drain()


# -- what every provider test attaches to its Worker ---------------------------------------------------------


@tool
async def get_weather(location: str, unit: str = "celsius") -> str:
    """The current weather in a city."""
    return f"{location}: 18 {unit}"


class HookLog:
    """Stream, tool and abort hooks that record what they saw."""

    def __init__(self, worker: Worker) -> None:
        self.text: list[str] = []
        self.fragments: list[str] = []
        self.chunks: list[str] = []
        self.pre_tool: list[tuple[str, str, dict[str, Any]]] = []
        self.aborts: list[str] = []
        worker.add_on_text_delta_hook(self._text)
        worker.add_on_tool_call_delta_hook(self._fragment)
        worker.add_on_stream_chunk_hook(self._chunk)
        worker.add_pre_tool_call_hook(self._pre_tool)
        worker.add_on_abort_hook(self._abort)

    def _text(self, delta: TextDelta) -> Continue:
        self.text.append(delta.text)
        return Continue()

    def _fragment(self, delta: ToolCallDelta) -> Continue:
        self.fragments.append(delta.fragment)
        return Continue()

    def _chunk(self, event: StreamEvent) -> Continue:
        self.chunks.append(type(event).__name__)
        return Continue()

    def _pre_tool(self, info: PreToolCallInfo) -> Continue:
        self.pre_tool.append((info.call_id, info.tool_name, dict(info.arguments)))
        return Continue()

    def _abort(self, info: AbortInfo) -> None:
        self.aborts.append(info.reason)
