"""Pick a model client from one string, as ``hookloop run --model`` does.

=========================================  ===========================================================
``anthropic:<model>``                      :class:`AnthropicClient` (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``)
``openai:<model>``                         :class:`OpenAIChatClient` (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)
``openai-responses:<model>``               :class:`OpenAIResponsesClient` (same variables)
``openai-compatible:<model>@<base_url>``   :class:`OpenAIChatClient` for Ollama, vLLM, llama.cpp, LM Studio …
``scripted:<file>``                        :class:`ScriptedClient` playing a JSON script (no model name)
=========================================  ===========================================================

Explicit arguments win over environment variables. An OpenAI-compatible server gets ``api_key``, else
``OPENAI_COMPATIBLE_API_KEY``, else a placeholder (local servers ignore it) — never ``OPENAI_API_KEY``, so an
OpenAI key is not sent to another server by accident. Its base URL is the part after the last ``@`` that
starts a URL, else ``base_url``, else ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import os
import re

from hookloop.errors import HookloopError
from hookloop.providers.base import LLMClient

__all__ = ["PREFIXES", "ModelSpecError", "client_from_model_string"]

PREFIXES = ("anthropic", "openai", "openai-responses", "openai-compatible", "scripted")
_URL_AT = re.compile(r"@(?=[a-zA-Z][a-zA-Z0-9+.-]*://)")


class ModelSpecError(HookloopError, ValueError):
    """The model string cannot be turned into a client; the message says what is missing and how to fix it."""


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


def _missing_sdk(extra: str, exc: ImportError) -> ModelSpecError:
    return ModelSpecError(f"{exc.msg}; install it with: pip install 'hookloop[{extra}]'")


def client_from_model_string(
    spec: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
) -> tuple[LLMClient, str | None]:
    """Build the client named by ``spec`` and return it with the model name (None for ``scripted:``).

    Raises :class:`ModelSpecError` (a ``ValueError``) naming what is missing: an unknown prefix (listing the
    valid ones), an empty model, an API key not set, an SDK not installed. The caller owns the client and
    closes it (``await client.aclose()``) when it has one.
    """
    prefix, sep, rest = spec.partition(":")
    if not sep or prefix not in PREFIXES:
        valid = ", ".join(f"{p}:<{'file' if p == 'scripted' else 'model'}>" for p in PREFIXES)
        raise ModelSpecError(f"unknown model {spec!r}: expected one of {valid}")
    if not rest:
        raise ModelSpecError(f"{spec!r} names no {'file' if prefix == 'scripted' else 'model'} after {prefix}:")
    if prefix == "scripted":
        from hookloop.providers.scripted import ScriptedClient

        return ScriptedClient.from_file(rest), None
    if prefix == "anthropic":
        key = api_key or _env("ANTHROPIC_API_KEY")
        token = None if key else _env("ANTHROPIC_AUTH_TOKEN")
        if not key and not token:
            raise ModelSpecError("ANTHROPIC_API_KEY is not set; pass api_key= or set it")
        try:
            from hookloop.providers.anthropic import AnthropicClient
        except ImportError as exc:
            raise _missing_sdk("anthropic", exc) from exc
        client = AnthropicClient(
            rest,
            api_key=key,
            base_url=base_url or _env("ANTHROPIC_BASE_URL"),
            max_retries=max_retries,
            timeout=timeout,
            auth_token=token,
        )
        return client, rest
    try:
        from hookloop.providers.openai_chat import OpenAIChatClient
        from hookloop.providers.openai_responses import OpenAIResponsesClient
    except ImportError as exc:
        raise _missing_sdk("openai", exc) from exc
    if prefix == "openai-compatible":
        model, url = rest, base_url
        matches = list(_URL_AT.finditer(rest))
        if matches:
            match = matches[-1]
            model, url = rest[: match.start()], rest[match.end() :]
        url = url or _env("OPENAI_BASE_URL")
        if not model:
            raise ModelSpecError(f"{spec!r} names no model before the @")
        if not url:
            raise ModelSpecError(
                f"{spec!r} needs a server URL: openai-compatible:<model>@http://localhost:11434/v1 "
                "(or pass base_url= or set OPENAI_BASE_URL)"
            )
        compatible = OpenAIChatClient(
            model,
            api_key=api_key or _env("OPENAI_COMPATIBLE_API_KEY") or "not-needed",
            base_url=url,
            provider="openai-compatible",
            max_retries=max_retries,
            timeout=timeout,
        )
        return compatible, model
    key = api_key or _env("OPENAI_API_KEY")
    if not key:
        raise ModelSpecError("OPENAI_API_KEY is not set; pass api_key= or set it")
    url = base_url or _env("OPENAI_BASE_URL")
    if prefix == "openai-responses":
        return OpenAIResponsesClient(rest, api_key=key, base_url=url, max_retries=max_retries, timeout=timeout), rest
    return OpenAIChatClient(rest, api_key=key, base_url=url, max_retries=max_retries, timeout=timeout), rest
