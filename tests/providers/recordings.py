"""Real recorded provider traffic (``shared/provider-recordings/``, outside the repository) for the loopback
wire server: each recording is a list of interactions (request JSON, response status, headers and body).

The folder is the first of ``HOOKLOOP_RECORDINGS`` (``os.pathsep``-separated, as for ``scripts/conformance``)
or of ``shared/provider-recordings`` next to any parent of this repository that holds the shared recordings.
When there is none, ``RECORDINGS`` is None and the ``test_recorded_*.py`` modules are not collected (see
conftest.py): the synthetic fixtures under ``fixtures/`` cover the same cases.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

from providers.wire import Reply, WireServer

_MARKER = "chat_openrouter_kimi_a.json"  # one of the shared recordings these tests replay


def _find() -> Path | None:
    named = [Path(p) for p in os.environ.get("HOOKLOOP_RECORDINGS", "").split(os.pathsep) if p]
    shared = [parent / "shared" / "provider-recordings" for parent in Path(__file__).resolve().parents]
    return next((folder for folder in [*named, *shared] if (folder / _MARKER).is_file()), None)


RECORDINGS = _find()


def interactions(name: str) -> list[dict[str, Any]]:
    """The interactions of recording ``name`` (``chat_openrouter_kimi_a``)."""
    assert RECORDINGS is not None
    data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = data["interactions"]
    return found


def _headers(interaction: dict[str, Any]) -> dict[str, str]:
    kept = {k: v for k, v in interaction["headers"].items() if k in ("content-type", "retry-after", "retry-after-ms")}
    kept.setdefault("content-type", "application/json")
    return kept


def queue(server: WireServer, interaction: dict[str, Any]) -> None:
    """Queue the recorded response of ``interaction``: an event stream one event per HTTP chunk, byte for
    byte, or a JSON body as it is."""
    body: str = interaction["body"]
    headers = _headers(interaction)
    if headers["content-type"].startswith("text/event-stream"):
        chunks = [event.encode() + b"\n\n" for event in body.split("\n\n") if event.strip()]
    else:
        chunks = [body.encode()]
    server.replies.append(Reply(interaction["status"], headers, chunks))


def queue_response_as_stream(server: WireServer, interaction: dict[str, Any]) -> None:
    """Queue a recorded *non-streamed* Responses API reply as the event stream the API sends for the same
    response (hookloop always streams): created, per output item added → deltas → done, completed."""
    response = json.loads(interaction["body"])
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response | {"status": "in_progress", "output": [], "usage": None}}
    ]
    for index, item in enumerate(response["output"]):
        started = dict(item)
        if item["type"] == "message":
            started |= {"status": "in_progress", "content": []}
        events.append({"type": "response.output_item.added", "output_index": index, "item": started})
        if item["type"] == "message":
            for part_index, part in enumerate(item["content"]):
                where = {"item_id": item["id"], "output_index": index, "content_index": part_index}
                events.append({"type": "response.content_part.added", **where, "part": part | {"text": ""}})
                events.append({"type": "response.output_text.delta", **where, "delta": part["text"], "logprobs": []})
                events.append({"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []})
                events.append({"type": "response.content_part.done", **where, "part": part})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    chunks = [
        f"event: {e['type']}\ndata: {json.dumps(e | {'sequence_number': n})}\n\n".encode() for n, e in enumerate(events)
    ]
    server.replies.append(Reply(200, {"content-type": "text/event-stream; charset=utf-8"}, chunks))


def normalised(value: Any) -> Any:
    """A JSON value with text normalised the way pydantic-ai's cassettes store request bodies (NFKC, ASCII
    quotes, dashes and ellipses), so a request hookloop sent compares with a recorded one."""
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value)
        for fancy, plain in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'), ("–", "-"), ("—", "-")):
            text = text.replace(fancy, plain)
        return text.replace("…", "...")
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items()}
    return value
