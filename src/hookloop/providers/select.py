"""Pick a model client from one string, as ``hookloop run --model`` does.

=========================================  ===========================================================
``anthropic:<model>``                      :class:`AnthropicClient` (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``)
``openai:<model>``                         :class:`OpenAIChatClient` (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)
``openai-responses:<model>``               :class:`OpenAIResponsesClient` (same variables)
``openai-compatible:<model>@<base_url>``   :class:`OpenAIChatClient` for Ollama, vLLM, llama.cpp, LM Studio …
``scripted:<file>``                        :class:`ScriptedClient` playing a JSON script (no model name)
=========================================  ===========================================================

A model name without a prefix is resolved by :func:`resolve_model_string` (one table, used by the CLI, settings
files' ``"model"`` and ``Worker("…")``): Claude Code's aliases (``sonnet``, ``opus``, ``haiku``, ``default``,
``best``, ``opusplan``, with an optional ``[1m]``; ``ANTHROPIC_DEFAULT_SONNET_MODEL`` / ``…_OPUS_…`` /
``…_HAIKU_…`` choose what they stand for, as in Claude Code) and well-known names: ``claude-*`` is Anthropic;
``gpt-*``, ``chatgpt-*``, ``o1``/``o3``/``o4-mini``…, ``codex-*`` and ``computer-use-*`` are OpenAI. Anything
else must say its provider.

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

__all__ = ["MODEL_ALIASES", "PREFIXES", "ModelSpecError", "client_from_model_string", "resolve_model_string"]

PREFIXES = ("anthropic", "openai", "openai-responses", "openai-compatible", "scripted")
_URL_AT = re.compile(r"@(?=[a-zA-Z][a-zA-Z0-9+.-]*://)")

MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "sonnet": ("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-4-6"),
    "opus": ("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-6"),
    "haiku": ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5"),
    "default": ("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-4-6"),
    "best": ("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-6"),
    # Claude Code plans with Opus and executes with Sonnet; hookloop runs one model: the executing one.
    "opusplan": ("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-4-6"),
}
"""Claude Code's model aliases: alias → (the variable that overrides it, the Anthropic model it stands for)."""

_OPENAI_NAME = re.compile(r"(gpt-|chatgpt-|codex-|computer-use-|o[1-9](-|$))", re.IGNORECASE)
_NEEDS_SERVER = re.compile(r"(llama|qwen|mistral|mixtral|gemma|phi|deepseek|gemini|command-r)", re.IGNORECASE)


def resolve_model_string(spec: str) -> str:
    """``spec`` in ``PROVIDER:MODEL`` form: returned as is when it has a known prefix; otherwise a Claude Code
    alias or a well-known model name gets its provider (see the module docstring): ``"sonnet"`` →
    ``"anthropic:claude-sonnet-4-6"``, ``"claude-opus-4-6"`` → ``"anthropic:claude-opus-4-6"``, ``"gpt-4o"`` →
    ``"openai:gpt-4o"``. A ``[1m]`` suffix (Claude Code's 1M-context marker) is dropped. Pure apart from
    reading the alias variables. Raises :class:`ModelSpecError` for a name whose provider cannot be told,
    saying how to write it."""
    text = spec.strip()
    prefix, sep, _ = text.partition(":")
    if sep and prefix in PREFIXES:
        return text
    name = text.removesuffix("[1m]").removesuffix("[1M]")
    alias = MODEL_ALIASES.get(name.lower())
    if alias is not None:
        variable, model = alias
        name = _env(variable) or model
    if not name or any(c.isspace() for c in name):
        raise ModelSpecError(f"unknown model {spec!r}: expected PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6")
    if name.lower().startswith("claude-") or name.lower().startswith("claude_"):
        return f"anthropic:{name}"
    if _OPENAI_NAME.match(name):
        return f"openai:{name}"
    valid = ", ".join(f"{p}:<{'file' if p == 'scripted' else 'model'}>" for p in PREFIXES)
    if sep:
        raise ModelSpecError(f"unknown model provider {prefix!r} in {spec!r}: expected one of {valid}")
    hint = ""
    if _NEEDS_SERVER.search(name):
        hint = f"; for a local or hosted OpenAI-compatible server: openai-compatible:{name}@http://localhost:11434/v1"
    raise ModelSpecError(
        f"unknown model {spec!r}: say which provider serves it ({valid}; or a Claude Code alias: "
        f"{', '.join(MODEL_ALIASES)}){hint}"
    )


class ModelSpecError(HookloopError, ValueError):
    """The model string cannot be turned into a client; the message says what is missing and how to fix it
    (``hint`` adds what to pass in code, such as ``api_key=``)."""


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

    ``spec`` is resolved first (:func:`resolve_model_string`: ``"sonnet"``, ``"claude-sonnet-4-6"``,
    ``"gpt-4o"`` need no prefix). Raises :class:`ModelSpecError` (a ``ValueError``) naming what is missing: an
    unknown provider (listing the valid ones), an empty model, an API key not set, an SDK not installed. The
    caller owns the client and closes it (``await client.aclose()``) when it has one.
    """
    spec = resolve_model_string(spec)
    prefix, _, rest = spec.partition(":")
    if not rest:
        raise ModelSpecError(f"{spec!r} names no {'file' if prefix == 'scripted' else 'model'} after {prefix}:")
    if prefix == "scripted":
        from hookloop.providers.scripted import ScriptedClient

        return ScriptedClient.from_file(rest), None
    if prefix == "anthropic":
        key = api_key or _env("ANTHROPIC_API_KEY")
        token = None if key else _env("ANTHROPIC_AUTH_TOKEN")
        if not key and not token:
            raise ModelSpecError(
                "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=<your key> (or ANTHROPIC_AUTH_TOKEN)",
                hint="or pass api_key=",
            )
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
                "(or set OPENAI_BASE_URL)",
                hint="or pass base_url=",
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
        raise ModelSpecError("OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key>", hint="or pass api_key=")
    url = base_url or _env("OPENAI_BASE_URL")
    if prefix == "openai-responses":
        return OpenAIResponsesClient(rest, api_key=key, base_url=url, max_retries=max_retries, timeout=timeout), rest
    return OpenAIChatClient(rest, api_key=key, base_url=url, max_retries=max_retries, timeout=timeout), rest
