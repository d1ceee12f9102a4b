"""hookloop: an LLM agent runtime whose loop you extend without writing into it.

Hang on the loop; never write into the loop. The curated public API is re-exported here; hook events,
summaries and results live in :mod:`hookloop.hooks`.

Each name loads its module on first use (``import hookloop`` alone imports nothing else), so a program
that needs one part — the command line listing runs, say — does not pay for the Worker's import.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from hookloop._frozen import FrozenDict
    from hookloop._reaper import guard_descendants
    from hookloop.checkpoint import AllowAlways, Approve, Checkpoint, PendingCall, Reject, ResumeDecision
    from hookloop.errors import (
        Aborted,
        Cancelled,
        CheckpointError,
        ClientError,
        ConfigError,
        ContextWindowExceeded,
        HookError,
        HookloopError,
        ItemError,
        MaxTurnsExceeded,
        StopHookLoopError,
        ToolDefinitionError,
        WorkerError,
        WorkerStateError,
    )
    from hookloop.items import (
        DocumentPart,
        ImagePart,
        Item,
        Message,
        ProviderBlock,
        Reasoning,
        TextPart,
        ToolCall,
        ToolResult,
        item_from_json,
    )
    from hookloop.outcome import Finished, Outcome, Paused
    from hookloop.providers.base import LLMClient, LLMRequest
    from hookloop.providers.scripted import ScriptedClient, ScriptedTurn, ScriptError, Text, Thinking, ToolUse
    from hookloop.stream import Usage
    from hookloop.timeline import TimelineEvent, TranscriptWriter
    from hookloop.tools import Tool, ToolContext, ToolFailure, ToolMeta, ToolOutput, tool
    from hookloop.worker import Approver, Worker, WorkerState

__all__ = [
    "Aborted",
    "AllowAlways",
    "Approve",
    "Approver",
    "Cancelled",
    "Checkpoint",
    "CheckpointError",
    "ClientError",
    "ConfigError",
    "ContextWindowExceeded",
    "DocumentPart",
    "Finished",
    "FrozenDict",
    "HookError",
    "HookloopError",
    "ImagePart",
    "Item",
    "ItemError",
    "LLMClient",
    "LLMRequest",
    "MaxTurnsExceeded",
    "Message",
    "Outcome",
    "Paused",
    "PendingCall",
    "ProviderBlock",
    "Reasoning",
    "Reject",
    "ResumeDecision",
    "ScriptError",
    "ScriptedClient",
    "ScriptedTurn",
    "StopHookLoopError",
    "Text",
    "TextPart",
    "Thinking",
    "TimelineEvent",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolMeta",
    "ToolOutput",
    "ToolResult",
    "ToolUse",
    "TranscriptWriter",
    "Usage",
    "Worker",
    "WorkerError",
    "WorkerState",
    "WorkerStateError",
    "guard_descendants",
    "item_from_json",
    "tool",
]

_LAZY = {
    "Aborted": "hookloop.errors",
    "AllowAlways": "hookloop.checkpoint",
    "Approve": "hookloop.checkpoint",
    "Approver": "hookloop.worker",
    "Cancelled": "hookloop.errors",
    "Checkpoint": "hookloop.checkpoint",
    "CheckpointError": "hookloop.errors",
    "ClientError": "hookloop.errors",
    "ConfigError": "hookloop.errors",
    "ContextWindowExceeded": "hookloop.errors",
    "DocumentPart": "hookloop.items",
    "Finished": "hookloop.outcome",
    "FrozenDict": "hookloop._frozen",
    "HookError": "hookloop.errors",
    "HookloopError": "hookloop.errors",
    "ImagePart": "hookloop.items",
    "Item": "hookloop.items",
    "ItemError": "hookloop.errors",
    "LLMClient": "hookloop.providers.base",
    "LLMRequest": "hookloop.providers.base",
    "MaxTurnsExceeded": "hookloop.errors",
    "Message": "hookloop.items",
    "Outcome": "hookloop.outcome",
    "Paused": "hookloop.outcome",
    "PendingCall": "hookloop.checkpoint",
    "ProviderBlock": "hookloop.items",
    "Reasoning": "hookloop.items",
    "Reject": "hookloop.checkpoint",
    "ResumeDecision": "hookloop.checkpoint",
    "ScriptError": "hookloop.providers.scripted",
    "ScriptedClient": "hookloop.providers.scripted",
    "ScriptedTurn": "hookloop.providers.scripted",
    "StopHookLoopError": "hookloop.errors",
    "Text": "hookloop.providers.scripted",
    "TextPart": "hookloop.items",
    "Thinking": "hookloop.providers.scripted",
    "TimelineEvent": "hookloop.timeline",
    "Tool": "hookloop.tools",
    "ToolCall": "hookloop.items",
    "ToolContext": "hookloop.tools",
    "ToolDefinitionError": "hookloop.errors",
    "ToolFailure": "hookloop.tools",
    "ToolMeta": "hookloop.tools",
    "ToolOutput": "hookloop.tools",
    "ToolResult": "hookloop.items",
    "ToolUse": "hookloop.providers.scripted",
    "TranscriptWriter": "hookloop.timeline",
    "Usage": "hookloop.stream",
    "Worker": "hookloop.worker",
    "WorkerError": "hookloop.errors",
    "WorkerState": "hookloop.worker",
    "WorkerStateError": "hookloop.errors",
    "guard_descendants": "hookloop._reaper",
    "item_from_json": "hookloop.items",
    "tool": "hookloop.tools",
}
"""Public name → the module that defines it (imported on first use by :func:`__getattr__`)."""


def __getattr__(name: str) -> object:
    """``hookloop.NAME``: the name from its module, imported now (and kept, so the next use is a dict lookup)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hookloop' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
