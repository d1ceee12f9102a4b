"""client_from_model_string: one string picks the client; missing pieces are named in the error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hookloop import ScriptedClient
from hookloop.providers._errors import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    OverloadedError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    classify,
    parse_retry_after,
)
from hookloop.providers.anthropic import AnthropicClient
from hookloop.providers.openai_chat import OpenAIChatClient
from hookloop.providers.openai_responses import OpenAIResponsesClient
from hookloop.providers.select import ModelSpecError, client_from_model_string

pytestmark = pytest.mark.anyio

KEYS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_COMPATIBLE_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


async def test_anthropic_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    client, model = client_from_model_string("anthropic:claude-sonnet-4-6", max_retries=5, timeout=12.0)
    assert isinstance(client, AnthropicClient)
    assert (model, client.model) == ("claude-sonnet-4-6", "claude-sonnet-4-6")
    sdk = client.sdk_client
    assert (sdk.api_key, str(sdk.base_url)) == ("sk-ant-env", "http://127.0.0.1:9/")
    assert (sdk.max_retries, sdk.timeout) == (5, 12.0)
    await client.aclose()


async def test_explicit_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    client, model = client_from_model_string("openai:gpt-4.1", api_key="sk-arg", base_url="http://127.0.0.1:9/v1")
    assert isinstance(client, OpenAIChatClient)
    assert (model, client.provider, client.sdk_client.api_key) == ("gpt-4.1", "openai", "sk-arg")
    assert str(client.sdk_client.base_url) == "http://127.0.0.1:9/v1/"
    await client.aclose()


async def test_openai_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    client, model = client_from_model_string("openai-responses:o4-mini")
    assert isinstance(client, OpenAIResponsesClient)
    assert (model, client.provider) == ("o4-mini", "openai-responses")
    await client.aclose()


async def test_openai_compatible_takes_the_url_after_the_at_and_never_the_openai_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    client, model = client_from_model_string("openai-compatible:llama3.1:8b@http://localhost:11434/v1")
    assert isinstance(client, OpenAIChatClient)
    assert (model, client.provider) == ("llama3.1:8b", "openai-compatible")
    assert str(client.sdk_client.base_url) == "http://localhost:11434/v1/"
    assert client.sdk_client.api_key != "sk-real-openai-key"
    assert client.max_tokens_param == "max_tokens"
    await client.aclose()


async def test_openai_compatible_model_names_may_contain_an_at(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    client, model = client_from_model_string("openai-compatible:org/model@v2")
    assert model == "org/model@v2"
    assert str(client.sdk_client.base_url) == "http://127.0.0.1:8080/v1/"  # type: ignore[attr-defined]
    await client.aclose()  # type: ignore[attr-defined]


def test_scripted_reads_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"blocks": [{"text": "hi"}]}]}))
    client, model = client_from_model_string(f"scripted:{script}")
    assert isinstance(client, ScriptedClient)
    assert model is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY="),
        ("openai:gpt-4.1", "OPENAI_API_KEY is not set: export OPENAI_API_KEY="),
        ("openai-responses:o4-mini", "OPENAI_API_KEY is not set: export OPENAI_API_KEY="),
        ("openai-compatible:llama3.1", "needs a server URL: openai-compatible:<model>@http://localhost:11434/v1"),
        ("anthropic:", "names no model after anthropic:"),
        ("gemini:pro", "expected one of anthropic:<model>, openai:<model>, openai-responses:<model>, "
         "openai-compatible:<model>, scripted:<file>"),
        ("llama3", "unknown model 'llama3': say which provider serves it"),
        ("claude-sonnet-4-6", "ANTHROPIC_API_KEY is not set"),  # a well-known name needs no prefix
    ],
)  # fmt: skip
def test_errors_name_what_is_missing(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError) as caught:
        client_from_model_string(spec)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_missing_sdk_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.delitem(sys.modules, "hookloop.providers.anthropic")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # what an uninstalled package looks like to import
    with pytest.raises(ModelSpecError, match=r"pip install 'hookloop\[anthropic\]'"):
        client_from_model_string("anthropic:claude-sonnet-4-6")


# -- error classification (pure) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "message", "expected", "retryable"),
    [
        (None, "overloaded_error", "Overloaded", OverloadedError, True),
        (529, None, "", OverloadedError, True),
        (503, "server_error", "", OverloadedError, True),
        (429, "insufficient_quota", "You exceeded your current quota", RateLimitError, False),
        (None, "rate_limit_exceeded", "slow down", RateLimitError, True),
        (403, "permission_error", "no access", AuthenticationError, False),
        (400, "invalid_request_error", "prompt is too long: 201 tokens > 200 maximum", ContextOverflowError, False),
        (None, "context_length_exceeded", "too big", ContextOverflowError, False),
        (413, "request_too_large", "Request exceeds the maximum size", InvalidRequestError, False),
        (404, "not_found_error", "model: nope", InvalidRequestError, False),
        (504, None, "gateway timeout", ProviderTimeoutError, True),
        (500, "api_error", "Internal server error", ProviderError, True),
    ],
)
def test_classify(
    status: int | None, kind: str | None, message: str, expected: type[ProviderError], retryable: bool
) -> None:
    error = classify(provider="p", message=message, status_code=status, error_type=kind)
    assert type(error) is expected
    assert (error.retryable, error.provider, error.status_code, error.error_type) == (retryable, "p", status, kind)


def test_retry_after_headers() -> None:
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "9"}) == 9.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
