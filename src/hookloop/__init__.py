"""hookloop: an LLM agent runtime whose loop you extend without writing into it.

Hang on the loop; never write into the loop. The curated public API is re-exported here; hook events,
summaries and results live in :mod:`hookloop.hooks`.
"""

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
