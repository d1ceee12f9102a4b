"""Replaying real recorded Anthropic traffic through the loopback server into a full Worker run.

A recording (``shared/provider-recordings/anth_*.json``, SOURCES.md there says where each comes from) holds, per
interaction, the request hookloop should send and the response the API gave. The replay:

- answers each request with the recorded response: an SSE body byte for byte, one event per HTTP chunk; an error
  with its status and JSON body; a non-streamed JSON message (hookloop always streams) converted into the SSE
  events the API streams for that message (:func:`message_events`);
- builds the client from the first recorded request (model, max_tokens, thinking, other parameters; function
  tools that answer what the recorded follow-up says they answered; server tools as recorded);
- runs the first user message, then each later user message the recordings' requests add;
- reads what the recorded replies hold with an assembler of its own (:func:`assemble`), independent of the client.

Comparison rules (:func:`normalised`): pydantic-ai stored request bodies with smart quotes, dashes and ellipses
turned into ASCII and NFKC applied, so both sides get that; a ``tool_result`` whose content is a string equals
one whose content is a list of that one text block; ``is_error: false`` equals no ``is_error``; a block's
``caller: {"type": "direct"}`` (the API's default) equals no ``caller`` (pydantic-ai drops it from the native blocks
it sends back, hookloop sends them verbatim); ``cache_control`` is hookloop's own (the client runs with
``caching=False``).
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hookloop import Worker
from hookloop._frozen import freeze_object, thaw_object
from hookloop.providers.anthropic import AnthropicClient
from hookloop.tools import ToolContext, ToolMeta
from providers.wire import Reply, WireServer


def recordings_dir() -> Path | None:
    """``$HOOKLOOP_RECORDINGS`` when set, else ``shared/provider-recordings`` in the nearest ancestor of the
    repository that has one (``../shared/provider-recordings`` for a checkout next to it), else None."""
    configured = os.environ.get("HOOKLOOP_RECORDINGS")
    if configured:
        path = Path(configured)
        return path if path.is_dir() else None
    for ancestor in Path(__file__).resolve().parents[4:]:  # from the repository's parent up
        candidate = ancestor / "shared" / "provider-recordings"
        if candidate.is_dir():
            return candidate
    return None


RECORDINGS = recordings_dir()


def load(name: str) -> dict[str, Any]:
    assert RECORDINGS is not None
    data: dict[str, Any] = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    return data


# -- the replies -------------------------------------------------------------------------------------------


def sse_chunks(body: str) -> list[bytes]:
    raw = body.encode("utf-8")
    return [event + b"\n\n" for event in raw.split(b"\n\n") if event.strip()]


def _event(kind: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def message_events(message: Mapping[str, Any]) -> list[bytes]:
    """The SSE events the Messages API streams for a complete (non-streamed) ``message``: each block whole in its
    ``content_block_start`` (tool input as one ``input_json_delta``), then the stop reason and usage."""
    head = {**message, "content": [], "stop_reason": None}
    events = [_event("message_start", {"type": "message_start", "message": head})]
    for index, block in enumerate(message["content"]):
        start = dict(block)
        if block["type"] in ("tool_use", "server_tool_use"):
            start["input"] = {}
        events.append(
            _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        if block["type"] in ("tool_use", "server_tool_use") and block.get("input"):
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(
                _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    usage = message.get("usage") or {}
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    events.append(_event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def response_chunks(interaction: Mapping[str, Any]) -> list[bytes]:
    body = interaction["body"]
    if body.startswith("event:"):
        return sse_chunks(body)
    return message_events(json.loads(body))


def queue(server: WireServer, recording: Mapping[str, Any]) -> None:
    """Queue every recorded response, in order."""
    for interaction in recording["interactions"]:
        status = interaction["status"]
        if status == 200:
            headers = {"content-type": "text/event-stream; charset=utf-8"}
            server.replies.append(Reply(200, headers, response_chunks(interaction)))
        else:
            headers = {"content-type": interaction["headers"].get("content-type", "application/json")}
            server.replies.append(Reply(status, headers, [interaction["body"].encode("utf-8")]))


# -- what a recorded reply holds (assembled here, not by the client) --------------------------------------


def assemble(chunks: list[bytes]) -> tuple[list[dict[str, Any]], str | None, dict[str, int]]:
    """(content blocks, stop reason, usage) of a recorded SSE reply, as a non-streamed reply would hold them."""
    blocks: dict[int, dict[str, Any]] = {}
    json_parts: dict[int, list[str]] = {}
    stop: str | None = None
    usage: dict[str, int] = {}
    for chunk in chunks:
        line = next((x for x in chunk.decode().split("\n") if x.startswith("data:")), None)
        if line is None:
            continue
        data = json.loads(line[5:])
        kind = data["type"]
        if kind == "message_start":
            usage.update({k: v for k, v in data["message"]["usage"].items() if isinstance(v, int)})
        elif kind == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "input_json_delta":
                json_parts.setdefault(data["index"], []).append(delta["partial_json"])
            elif delta["type"] == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
        elif kind == "message_delta":
            stop = data["delta"].get("stop_reason") or stop
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)})
    for index, parts in json_parts.items():
        raw = "".join(parts)
        blocks[index]["input"] = json.loads(raw) if raw.strip() else {}
    return [blocks[i] for i in sorted(blocks)], stop, usage


def expected_items(blocks: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What hookloop's history must hold for these blocks (see :func:`described`)."""
    out: list[tuple[Any, ...]] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text":
            if block["text"]:
                out.append(("Message", block["text"]))
            if block.get("citations"):
                out.append(("ProviderBlock", block))
        elif kind == "thinking":
            out.append(("Reasoning", block["thinking"], block["signature"], None))
        elif kind == "redacted_thinking":
            out.append(("Reasoning", "", None, block["data"]))
        elif kind == "tool_use":
            out.append(("ToolCall", block["id"], block["name"], block["input"]))
        else:
            out.append(("ProviderBlock", block))
    return out


def described(item: Any) -> tuple[Any, ...]:
    """An item as :func:`expected_items` describes one."""
    name = type(item).__name__
    if name == "Message":
        return (name, item.text)
    if name == "Reasoning":
        return (name, item.text, item.signature, item.redacted)
    if name == "ToolCall":
        return (name, item.call_id, item.name, thaw_object(item.arguments))
    if name == "ProviderBlock":
        return (name, thaw_object(item.data))
    return (name, item.call_id, item.content)


# -- the client, the tools and the comparison ----------------------------------------------------------------


class RecordedTool:
    """A function tool as the recording declared it, answering what the recorded follow-up says it answered."""

    def __init__(self, spec: Mapping[str, Any], answers: dict[str, str]) -> None:
        self._meta = ToolMeta(
            name=spec["name"], description=spec.get("description", ""), input_schema=freeze_object(spec["input_schema"])
        )
        self._answers = answers

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        return arguments

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> str:
        return self._answers[ctx.call_id]


_OWN_KEYS = {"name", "description", "input_schema"}
_SENT_BY_HOOKLOOP = {"model", "max_tokens", "messages", "stream", "system", "tools", "thinking"}


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    assert all(b["type"] == "text" for b in content), content
    return "".join(b["text"] for b in content)


def tool_answers(recording: Mapping[str, Any]) -> dict[str, str]:
    """The tool results the recorded follow-up requests carry, by call id."""
    answers: dict[str, str] = {}
    for interaction in recording["interactions"]:
        for message in interaction["request"]["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                for block in message["content"]:
                    if block["type"] == "tool_result":
                        answers[block["tool_use_id"]] = _text_of(block.get("content", ""))
    return answers


def worker_for(recording: Mapping[str, Any], server: WireServer) -> tuple[AnthropicClient, Worker]:
    """A client and a Worker that send what the first recorded request sent."""
    first = recording["interactions"][0]["request"]
    tools = first.get("tools") or []
    function_tools = [t for t in tools if "input_schema" in t]
    options = {t["name"]: {k: v for k, v in t.items() if k not in _OWN_KEYS} for t in function_tools}
    client = AnthropicClient(
        first["model"],
        api_key="sk-ant-replay",
        base_url=server.base_url,
        max_retries=0,
        caching=False,
        max_tokens=first["max_tokens"],
        thinking=first.get("thinking"),
        server_tools=[t for t in tools if "input_schema" not in t],
        tool_options={k: v for k, v in options.items() if v},
        extra_params={k: v for k, v in first.items() if k not in _SENT_BY_HOOKLOOP},
    )
    system = first.get("system")
    if isinstance(system, list):
        system = "".join(b["text"] for b in system)
    answers = tool_answers(recording)
    worker = Worker(client, system=system, tools=[RecordedTool(t, answers) for t in function_tools])
    return client, worker


_ASCII = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "..."})


def normalised(value: Any) -> Any:
    """``value`` under the comparison rules of the module docstring."""
    if isinstance(value, str):
        return unicodedata.normalize("NFKC", value.translate(_ASCII))
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, dict):
        out = {k: normalised(v) for k, v in value.items() if k != "cache_control"}
        if out.get("caller") == {"type": "direct"}:
            del out["caller"]
        if out.get("type") == "tool_result":
            if isinstance(out.get("content"), str):
                out["content"] = [{"type": "text", "text": out["content"]}]
            if out.get("is_error") is False:
                del out["is_error"]
        return out
    return value


def user_prompts(recording: Mapping[str, Any]) -> list[str]:
    """The user text messages the recorded requests add, in order (one Worker run each)."""
    prompts: list[str] = []
    seen = 0
    for interaction in recording["interactions"]:
        messages = interaction["request"]["messages"]
        for message in messages[seen:]:
            content = message["content"]
            if message["role"] == "user" and (isinstance(content, str) or any(b["type"] == "text" for b in content)):
                prompts.append(
                    _text_of([b for b in content if b["type"] == "text"] if isinstance(content, list) else content)
                )
        seen = len(messages)
    return prompts
