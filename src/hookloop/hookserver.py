"""A persistent hook process in a few lines of Python — the other side of hookloop's ``process`` handler.

In ``.hookloop/settings.json``::

    {"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "process", "command": "python3 .hookloop/guard.py"}]}]}}

and ``.hookloop/guard.py``::

    from hookloop.hookserver import deny, serve

    def guard(event, data):
        command = data.get("tool_input", {}).get("command", "")
        if "rm -rf" in command:
            return deny("no rm -rf here")
        return None  # exit 0, no output: the call goes on

    serve(guard)

The handler gets the Claude Code event name and the same input a command hook reads on stdin, and returns
``None`` (exit 0, nothing printed), a ``dict`` (printed as Claude Code's JSON output), a ``str`` (printed as text),
or an :class:`Answer`. An ``async def`` handler answers requests concurrently (they may arrive pipelined); a plain
one answers them in order. A handler that raises answers exit 1 with the traceback on stderr — a non-blocking
hook error, as for a command hook that crashed — and the process keeps serving. The protocol is in
:mod:`hookloop.command_hooks.processes` (a server in any language is a loop over stdin lines: see
``examples/hookserver/guard.js``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import stat
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, TypeAlias, cast

__all__ = ["Answer", "Handler", "block", "context", "deny", "serve"]


@dataclass(frozen=True, slots=True)
class Answer:
    """What a command hook would have done: its exit status, its stdout (text, or a JSON object), its stderr."""

    exit_code: int = 0
    stdout: str | Mapping[str, object] = ""
    stderr: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)


Result: TypeAlias = Answer | Mapping[str, object] | str | None
Handler: TypeAlias = Callable[[str, dict[str, Any]], Result | Awaitable[Result]]


def block(reason: str) -> Answer:
    """Exit 2 with ``reason`` on stderr: blocks the call (PreToolUse), the prompt (UserPromptSubmit), the stop…"""
    return Answer(exit_code=2, stderr=reason)


def deny(reason: str) -> Answer:
    """PreToolUse: deny the call with ``reason`` (Claude Code's ``permissionDecision: "deny"``)."""
    output = {"permissionDecision": "deny", "permissionDecisionReason": reason, "hookEventName": "PreToolUse"}
    return Answer(stdout={"hookSpecificOutput": output})


def context(event: str, text: str) -> Answer:
    """Add ``text`` to the model's context on ``event`` (``additionalContext``)."""
    return Answer(stdout={"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def _answer(request_id: object, result: Result) -> bytes:
    """The answer line for ``result``: ``{"id": …, "exit_code": …, "stdout": …, "stderr": …}``."""
    if result is None:  # the usual answer: exit 0, nothing printed
        return b'{"id": %s, "exit_code": 0, "stdout": "", "stderr": ""}\n' % _JSON.encode(request_id).encode()
    if isinstance(result, Answer):
        stdout: str | dict[str, object] = result.stdout if isinstance(result.stdout, str) else dict(result.stdout)
        line = {"id": request_id, "exit_code": result.exit_code, "stdout": stdout, "stderr": result.stderr}
    else:
        stdout = result if isinstance(result, str) else dict(result)
        line = {"id": request_id, "exit_code": 0, "stdout": stdout, "stderr": ""}
    return _JSON.encode(line).encode() + b"\n"


_JSON = json.JSONEncoder(ensure_ascii=False)
_PLAIN = frozenset({str, dict, Answer})
"""Result types that are not awaitable (checked before :func:`inspect.isawaitable`, which costs more)."""
_DECODER = json.JSONDecoder()


def _request(raw: bytes) -> Any:
    """One request line, parsed (text decoded here: ``json.loads`` would first guess the encoding of bytes)."""
    return _DECODER.decode(raw.decode()) if raw[:1] == b"{" else json.loads(raw)


def _failed(request_id: object) -> bytes:
    return _answer(request_id, Answer(exit_code=1, stderr=traceback.format_exc()))


def serve(handler: Handler, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Answer hookloop's requests with ``handler`` until stdin closes (hookloop stops the process at the run's
    end). ``stdin``/``stdout`` default to the process's own."""
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    if inspect.iscoroutinefunction(handler):
        asyncio.run(_serve_async(handler, reader, writer))
        return
    for raw in reader:
        request_id: object = None
        try:
            request = _request(raw)
            request_id = request["id"]
            result = handler(request["event"], request["input"])
            if result is not None and type(result) not in _PLAIN and inspect.isawaitable(result):
                raise TypeError("a plain handler returned an awaitable; use async def")
            line = _answer(request_id, cast("Result", result))
        except Exception:
            line = _failed(request_id)
        writer.write(line)
        writer.flush()


async def _serve_async(handler: Handler, reader: IO[bytes], writer: IO[bytes]) -> None:
    loop = asyncio.get_running_loop()
    eager = getattr(asyncio, "eager_task_factory", None)  # Python 3.12+: a handler that never waits runs inline
    if eager is not None:
        loop.set_task_factory(eager)
    pending: set[asyncio.Task[None]] = set()

    async def one(raw: bytes) -> None:
        request_id: object = None
        try:
            request = _request(raw)
            request_id = request["id"]
            result = handler(request["event"], request["input"])
            line = _answer(request_id, await result if inspect.isawaitable(result) else result)
        except Exception:
            line = _failed(request_id)
        writer.write(line)
        writer.flush()

    def start(raw: bytes) -> None:
        task = loop.create_task(one(raw))
        if not task.done():
            pending.add(task)
            task.add_done_callback(pending.discard)

    closed = await _read_pipe(loop, reader, start)
    if closed is not None:
        await closed
    else:  # a file or an in-memory stream: read in a thread
        while raw := await loop.run_in_executor(None, reader.readline):
            start(raw)
    if pending:
        await asyncio.gather(*pending)


class _Lines(asyncio.Protocol):
    """Request lines from a pipe, handed to ``start`` as they arrive (no reader task, no thread hop)."""

    def __init__(self, start: Callable[[bytes], None], closed: asyncio.Future[None]) -> None:
        self.start = start
        self.closed = closed
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if b"\n" in data:
            *lines, rest = buffer.split(b"\n")
            buffer[:] = rest
            for line in lines:
                self.start(bytes(line) + b"\n")

    def eof_received(self) -> bool | None:
        return None  # the transport closes: connection_lost

    def connection_lost(self, exc: Exception | None) -> None:
        if self.buffer:  # a last request without its line end
            raw, self.buffer = bytes(self.buffer), bytearray()
            self.start(raw)
        if not self.closed.done():
            self.closed.set_result(None)


async def _read_pipe(
    loop: asyncio.AbstractEventLoop, reader: IO[bytes], start: Callable[[bytes], None]
) -> asyncio.Future[None] | None:
    """Read ``reader`` in the event loop when it is a pipe, socket or terminal, passing each line to ``start``;
    the returned future is done at end of input. ``None`` when it cannot be (a file, an in-memory stream)."""
    try:
        mode = os.fstat(reader.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return None
    closed: asyncio.Future[None] = loop.create_future()
    try:
        await loop.connect_read_pipe(lambda: _Lines(start, closed), reader)
    except (OSError, ValueError):
        return None
    return closed
