"""Model names without a provider prefix: Claude Code's aliases and well-known names resolve through one table
(:func:`resolve_model_string`), which ``hookloop run``, settings files and ``Worker("…")`` all use."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hookloop import Finished, ScriptedClient, Worker
from hookloop.providers.anthropic import AnthropicClient
from hookloop.providers.openai_chat import OpenAIChatClient
from hookloop.providers.select import MODEL_ALIASES, ModelSpecError, resolve_model_string

VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_COMPATIBLE_API_KEY",
    *(variable for variable, _ in MODEL_ALIASES.values()),
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("name", "resolved"),
    [
        ("sonnet", "anthropic:claude-sonnet-4-6"),
        ("opus", "anthropic:claude-opus-4-6"),
        ("haiku", "anthropic:claude-haiku-4-5"),
        ("default", "anthropic:claude-sonnet-4-6"),
        ("opusplan", "anthropic:claude-sonnet-4-6"),
        ("sonnet[1m]", "anthropic:claude-sonnet-4-6"),
        ("Opus", "anthropic:claude-opus-4-6"),
        ("claude-sonnet-4-6", "anthropic:claude-sonnet-4-6"),
        ("claude-3-5-haiku-20241022", "anthropic:claude-3-5-haiku-20241022"),
        ("claude-opus-4-6[1m]", "anthropic:claude-opus-4-6"),
        ("gpt-4o", "openai:gpt-4o"),
        ("gpt-5-mini", "openai:gpt-5-mini"),
        ("o3", "openai:o3"),
        ("o4-mini", "openai:o4-mini"),
        ("chatgpt-4o-latest", "openai:chatgpt-4o-latest"),
        ("codex-mini-latest", "openai:codex-mini-latest"),
        ("openai:gpt-4o", "openai:gpt-4o"),
        ("anthropic:sonnet", "anthropic:sonnet"),  # a prefixed name is taken as written
        ("openai-compatible:llama3@http://localhost:11434/v1", "openai-compatible:llama3@http://localhost:11434/v1"),
        ("scripted:model.json", "scripted:model.json"),
    ],
)
def test_well_known_names_and_claude_code_aliases_get_their_provider(name: str, resolved: str) -> None:
    assert resolve_model_string(name) == resolved


def test_the_alias_variables_choose_what_an_alias_stands_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-1")
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-3-5-haiku-latest")
    assert resolve_model_string("opus") == "anthropic:claude-opus-4-1"
    assert resolve_model_string("haiku") == "anthropic:claude-3-5-haiku-latest"
    assert resolve_model_string("sonnet") == "anthropic:claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("llama3.1", "openai-compatible:llama3.1@http://localhost:11434/v1"),
        ("gemini-2.5-pro", "say which provider serves it"),
        ("my-model", "say which provider serves it"),
        ("gemini:pro", "unknown model provider 'gemini'"),
        ("", "expected PROVIDER:MODEL"),
        ("claude sonnet", "expected PROVIDER:MODEL"),
        ("o", "say which provider serves it"),
    ],
)
def test_a_name_whose_provider_cannot_be_told_is_refused_saying_how_to_write_it(name: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message.replace("[", r"\[").replace(".", r"\.")):
        resolve_model_string(name)


def test_worker_takes_a_model_string_and_builds_the_client_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    worker = Worker("openai:gpt-4o")
    assert isinstance(worker.client, OpenAIChatClient)
    assert worker.model == "gpt-4o"
    bare = Worker("gpt-4o-mini", model="gpt-4o")  # an explicit model= wins
    assert bare.model == "gpt-4o"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    alias = Worker("sonnet")
    assert isinstance(alias.client, AnthropicClient)
    assert alias.model == "claude-sonnet-4-6"


def test_worker_refuses_a_model_string_it_cannot_use_in_the_constructor() -> None:
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY is not set"):
        Worker("openai:gpt-4o")
    with pytest.raises(ModelSpecError, match="unknown model"):
        Worker("not-a-model")
    with pytest.raises(TypeError, match="expected a model client"):
        Worker(object())  # type: ignore[arg-type]
    assert isinstance(Worker(ScriptedClient([])).client, ScriptedClient)


@pytest.fixture
def chat_server() -> Iterator[tuple[str, list[dict[str, object]]]]:
    """A real local server speaking OpenAI's streaming chat completions; records the requests' bodies."""
    bodies: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            for delta, finish in (({"role": "assistant", "content": "pong"}, None), ({}, "stop")):
                chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.anyio
async def test_a_worker_built_from_a_bare_model_name_runs_against_a_real_server(
    monkeypatch: pytest.MonkeyPatch, chat_server: tuple[str, list[dict[str, object]]]
) -> None:
    url, bodies = chat_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    worker = Worker("gpt-4o")
    outcome = await worker.run("ping")
    assert isinstance(outcome, Finished)
    assert outcome.text == "pong"
    assert bodies[0]["model"] == "gpt-4o"
    worker.close()
