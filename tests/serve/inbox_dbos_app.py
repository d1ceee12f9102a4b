"""A durable application for the inbox tests: ``python inbox_dbos_app.py serve URL`` executes runs (prints
``serving`` once it does); ``python inbox_dbos_app.py start URL PROMPT`` queues a run, waits until it pauses or
ends, and prints ``{"run_id", "status"}``.

The Worker factory ``inbox``: a scripted model that calls ``echo(text=<the prompt>)`` and then answers
``done: <the tool's result>``; an in-process hook asks a person before every ``echo``."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping

from hookloop import ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.hooks import Ask, PreToolCallInfo, PreToolCallResult
from hookloop.items import Message, ToolResult
from hookloop.providers.base import LLMRequest
from hookloop.providers.scripted import ScriptedTurn


def inbox(options: Mapping[str, object]) -> Worker:
    def reply(request: LLMRequest) -> ScriptedTurn:
        prompt = next(i for i in request.items if isinstance(i, Message) and i.role == "user")
        results = [i for i in request.items if isinstance(i, ToolResult)]
        if results:
            return ScriptedTurn(blocks=(Text(f"done: {results[-1].content}"),))
        text = "".join(getattr(p, "text", "") for p in prompt.content)
        return ScriptedTurn(blocks=(Text("Echoing."), ToolUse("echo", {"text": text}, call_id="c1")))

    @tool
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    worker = Worker(ScriptedClient([reply] * 10), tools=[echo])

    def ask(info: PreToolCallInfo) -> PreToolCallResult:
        return Ask("echo needs a person")

    worker.add_pre_tool_call_hook(ask)
    return worker


async def serve(url: str) -> None:
    from hookloop.durable.dbos import DBOSBackend

    backend = DBOSBackend(url)
    backend.register("inbox", inbox)
    serving = asyncio.create_task(backend.serve())
    print("serving", flush=True)
    try:
        await serving
    finally:
        await backend.close()


async def start(url: str, prompt: str) -> None:
    from hookloop.durable.dbos import DBOSBackend

    backend = DBOSBackend(url)
    try:
        run_id = await backend.start(prompt, worker="inbox")
        record = await backend.wait(run_id, timeout=50)
        print(json.dumps({"run_id": run_id, "status": record.status}), flush=True)
    finally:
        await backend.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(sys.argv[2]))
    else:
        asyncio.run(start(sys.argv[2], sys.argv[3]))
