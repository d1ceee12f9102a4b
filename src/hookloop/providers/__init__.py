"""Model clients: the protocol and the scripted (offline, deterministic) client."""

from hookloop.providers.base import LLMClient, LLMRequest, ToolSpec
from hookloop.providers.scripted import ScriptedClient, ScriptedTurn, ScriptError, Text, Thinking, ToolUse

__all__ = [
    "LLMClient",
    "LLMRequest",
    "ScriptError",
    "ScriptedClient",
    "ScriptedTurn",
    "Text",
    "Thinking",
    "ToolSpec",
    "ToolUse",
]
