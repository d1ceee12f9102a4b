"""Model clients: the protocol, the scripted (offline, deterministic) client, the provider clients (extras:
``hookloop[anthropic]``, ``hookloop[openai]``, imported lazily) and the typed provider errors."""

from __future__ import annotations

import importlib

from hookloop.providers._errors import (
    AuthenticationError,
    ContextOverflowError,
    InvalidRequestError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from hookloop.providers.base import LLMClient, LLMRequest, ToolSpec
from hookloop.providers.scripted import ScriptedClient, ScriptedTurn, ScriptError, Text, Thinking, ToolUse
from hookloop.providers.select import (
    MODEL_ALIASES,
    PREFIXES,
    ModelSpecError,
    client_from_model_string,
    resolve_model_string,
)

__all__ = [
    "MODEL_ALIASES",
    "PREFIXES",
    "AnthropicClient",
    "AuthenticationError",
    "ContextOverflowError",
    "InvalidRequestError",
    "LLMClient",
    "LLMRequest",
    "ModelSpecError",
    "OpenAIChatClient",
    "OpenAIResponsesClient",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ScriptError",
    "ScriptedClient",
    "ScriptedTurn",
    "Text",
    "Thinking",
    "ToolSpec",
    "ToolUse",
    "client_from_model_string",
    "resolve_model_string",
]

_LAZY = {
    "AnthropicClient": "hookloop.providers.anthropic",
    "OpenAIChatClient": "hookloop.providers.openai_chat",
    "OpenAIResponsesClient": "hookloop.providers.openai_responses",
}


def __getattr__(name: str) -> object:
    """The SDK-backed clients load on first use, so ``import hookloop`` works without the extras."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hookloop.providers' has no attribute {name!r}")
