"""Wire shapes of external command hooks: what a script reads on stdin and may print on stdout.

These TypedDicts describe JSON exactly as Claude Code and Cline (classic file hooks) put it on the wire; they
exist only at this edge. Field names, casing and optionality follow ``spec/reference/command-hooks.md``
(§1.2/§1.3 for Claude Code, §2.2/§2.3 for Cline). Nothing else in hookloop should import them except the
code that builds payloads and :mod:`hookloop.command_hooks.translate`, which reads outputs.

Claude Code input: every event shares :class:`ClaudeCommonInput` (snake_case) plus its own fields;
``hook_event_name`` names the event. Output: one object with universal fields (``continue``, ``stopReason``,
``systemMessage`` …), an optional top-level ``decision``/``reason``, and an event-specific
``hookSpecificOutput`` whose ``hookEventName`` names the event.

Cline input: camelCase metadata (``clineVersion``, ``hookName``, ``timestamp`` as a string of epoch
milliseconds, ``taskId``, ``workspaceRoots``, ``userId``, ``model``) plus exactly one event object keyed by the
camelCase event name (``preToolUse``, ``postToolUse`` …). Output: ``cancel`` / ``contextModification`` /
``errorMessage``.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

from hookloop._frozen import JSONValue

__all__ = [
    "ClaudeBackgroundTask",
    "ClaudeCommonInput",
    "ClaudeEffort",
    "ClaudeHookInput",
    "ClaudeHookOutput",
    "ClaudeHookSpecificOutput",
    "ClaudeSessionCron",
    "ClaudeToolBatchCall",
    "ClineHookInput",
    "ClineHookOutput",
    "ClineModel",
    "ClineNotification",
    "ClinePostToolUse",
    "ClinePreCompact",
    "ClinePreToolUse",
    "ClinePreviousState",
    "ClineTaskMetadata",
    "ClineTaskMetadataHolder",
    "ClineTaskResume",
    "ClineUserPromptSubmit",
    "ConfigChangeInput",
    "CwdChangedInput",
    "ElicitationInput",
    "ElicitationResultInput",
    "ElicitationSpecificOutput",
    "FileChangedInput",
    "NotificationInput",
    "PermissionDeniedInput",
    "PermissionMode",
    "PermissionRequestDecisionWire",
    "PermissionRequestInput",
    "PermissionRequestSpecificOutput",
    "PostCompactInput",
    "PostToolBatchInput",
    "PostToolBatchSpecificOutput",
    "PostToolUseFailureInput",
    "PostToolUseFailureSpecificOutput",
    "PostToolUseInput",
    "PostToolUseSpecificOutput",
    "PreCompactInput",
    "PreToolUseInput",
    "PreToolUseSpecificOutput",
    "SessionEndInput",
    "SessionStartInput",
    "SessionStartSpecificOutput",
    "StopFailureInput",
    "StopInput",
    "StopSpecificOutput",
    "SubagentStartInput",
    "SubagentStopInput",
    "UserPromptSubmitInput",
    "UserPromptSubmitSpecificOutput",
]

JSONObject: TypeAlias = dict[str, JSONValue]

PermissionMode: TypeAlias = Literal["default", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"]


# --------------------------------------------------------------------------------------------------------------
# Claude Code: stdin
# --------------------------------------------------------------------------------------------------------------


class ClaudeEffort(TypedDict):
    level: Literal["low", "medium", "high", "xhigh", "max"]


class ClaudeCommonInput(TypedDict):
    """Fields every Claude Code hook input carries (``hook_event_name`` is declared per event)."""

    session_id: str
    transcript_path: str
    cwd: str
    prompt_id: NotRequired[str]
    """UUID of the user prompt being processed; absent before the first input."""
    permission_mode: NotRequired[PermissionMode]
    """Not on every event."""
    effort: NotRequired[ClaudeEffort]
    agent_id: NotRequired[str]
    """Only inside a subagent / with ``--agent``."""
    agent_type: NotRequired[str]


class SessionStartInput(ClaudeCommonInput):
    hook_event_name: Literal["SessionStart"]
    source: Literal["startup", "resume", "clear", "compact", "fork"]
    model: NotRequired[str]
    session_title: NotRequired[str]


class SessionEndInput(ClaudeCommonInput):
    hook_event_name: Literal["SessionEnd"]
    reason: Literal["clear", "resume", "logout", "prompt_input_exit", "other"]


class UserPromptSubmitInput(ClaudeCommonInput):
    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class PreToolUseInput(ClaudeCommonInput):
    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: JSONObject
    tool_use_id: str


class PermissionRequestInput(ClaudeCommonInput):
    """No ``tool_use_id`` on this event."""

    hook_event_name: Literal["PermissionRequest"]
    tool_name: str
    tool_input: JSONObject
    permission_suggestions: NotRequired[list[JSONValue]]


class PostToolUseInput(ClaudeCommonInput):
    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: JSONObject
    tool_response: JSONValue
    """The tool's structured output object."""
    tool_use_id: str
    duration_ms: NotRequired[int]


class PostToolUseFailureInput(ClaudeCommonInput):
    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: JSONObject
    tool_use_id: str
    error: str
    """At most 10 000 characters, middle-truncated."""
    is_interrupt: NotRequired[bool]
    duration_ms: NotRequired[int]


class ClaudeToolBatchCall(TypedDict):
    tool_name: str
    tool_input: JSONObject
    tool_use_id: str
    tool_response: JSONValue
    """Here the serialized model-facing ``tool_result`` content, not the structured object."""


class PostToolBatchInput(ClaudeCommonInput):
    hook_event_name: Literal["PostToolBatch"]
    tool_calls: list[ClaudeToolBatchCall]


class NotificationInput(ClaudeCommonInput):
    hook_event_name: Literal["Notification"]
    message: str
    title: NotRequired[str]
    notification_type: str


class ClaudeBackgroundTask(TypedDict, total=False):
    id: str
    type: str
    status: str
    description: str
    command: str
    agent_type: str
    server: str
    tool: str
    name: str


class ClaudeSessionCron(TypedDict):
    id: str
    schedule: str
    recurring: bool
    prompt: str


class StopInput(ClaudeCommonInput):
    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    """True when the agent is already continuing because a Stop hook blocked."""
    last_assistant_message: str
    background_tasks: NotRequired[list[ClaudeBackgroundTask]]
    session_crons: NotRequired[list[ClaudeSessionCron]]


class SubagentStartInput(ClaudeCommonInput):
    hook_event_name: Literal["SubagentStart"]
    agent_id: str  # type: ignore[misc]  # required here (NotRequired on the common input)
    agent_type: str  # type: ignore[misc]


class SubagentStopInput(ClaudeCommonInput):
    hook_event_name: Literal["SubagentStop"]
    agent_id: str  # type: ignore[misc]
    agent_type: str  # type: ignore[misc]
    agent_transcript_path: str
    """The subagent's own transcript."""
    stop_hook_active: bool
    last_assistant_message: str
    background_tasks: NotRequired[list[ClaudeBackgroundTask]]
    session_crons: NotRequired[list[ClaudeSessionCron]]


class StopFailureInput(ClaudeCommonInput):
    hook_event_name: Literal["StopFailure"]
    error: str
    """Error type (``rate_limit``, ``overloaded`` …); also the matcher target."""
    error_details: NotRequired[str]
    last_assistant_message: NotRequired[str]
    """The API error text."""


class PreCompactInput(ClaudeCommonInput):
    hook_event_name: Literal["PreCompact"]
    trigger: Literal["manual", "auto"]
    custom_instructions: str


class PostCompactInput(ClaudeCommonInput):
    hook_event_name: Literal["PostCompact"]
    trigger: Literal["manual", "auto"]
    compact_summary: str


class PermissionDeniedInput(ClaudeCommonInput):
    hook_event_name: Literal["PermissionDenied"]
    tool_name: str
    tool_input: JSONObject
    tool_use_id: str
    reason: str
    """Why the permission policy denied the call (the rule or mode)."""


class ConfigChangeInput(ClaudeCommonInput):
    hook_event_name: Literal["ConfigChange"]
    source: Literal["user_settings", "project_settings", "local_settings", "policy_settings", "skills"]
    """Also the matcher target."""
    file_path: NotRequired[str]


class CwdChangedInput(ClaudeCommonInput):
    hook_event_name: Literal["CwdChanged"]
    old_cwd: str
    new_cwd: str


class FileChangedInput(ClaudeCommonInput):
    hook_event_name: Literal["FileChanged"]
    file_path: str
    """Absolute; its file name is the matcher target."""
    event: Literal["change", "add", "unlink"]


class ElicitationInput(ClaudeCommonInput):
    """An MCP server asks for user input: a form (``requested_schema``) or a URL to open."""

    hook_event_name: Literal["Elicitation"]
    mcp_server_name: str
    message: str
    mode: NotRequired[Literal["form", "url"]]
    url: NotRequired[str]
    elicitation_id: NotRequired[str]
    requested_schema: NotRequired[JSONObject]


class ElicitationResultInput(ClaudeCommonInput):
    hook_event_name: Literal["ElicitationResult"]
    mcp_server_name: str
    action: Literal["accept", "decline", "cancel"]
    mode: NotRequired[Literal["form", "url"]]
    elicitation_id: NotRequired[str]
    content: NotRequired[JSONObject]


ClaudeHookInput: TypeAlias = (
    SessionStartInput
    | SessionEndInput
    | UserPromptSubmitInput
    | PreToolUseInput
    | PermissionRequestInput
    | PostToolUseInput
    | PostToolUseFailureInput
    | PostToolBatchInput
    | NotificationInput
    | StopInput
    | SubagentStartInput
    | SubagentStopInput
    | StopFailureInput
    | PermissionDeniedInput
    | ConfigChangeInput
    | CwdChangedInput
    | FileChangedInput
    | PreCompactInput
    | PostCompactInput
    | ElicitationInput
    | ElicitationResultInput
)


# --------------------------------------------------------------------------------------------------------------
# Claude Code: stdout
# --------------------------------------------------------------------------------------------------------------


class PreToolUseSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["PreToolUse"]
    permissionDecision: Literal["allow", "deny", "ask", "defer"]
    permissionDecisionReason: str
    """For allow/ask shown to the user only; for deny shown to the model."""
    updatedInput: JSONObject
    """Replaces the whole tool input; combine with allow or ask."""
    additionalContext: str


class PermissionRequestDecisionWire(TypedDict, total=False):
    behavior: Literal["allow", "deny"]
    updatedInput: JSONObject
    """allow only; re-checked against deny/ask rules."""
    updatedPermissions: list[JSONValue]
    """allow only."""
    message: str
    """deny only."""
    interrupt: bool
    """deny only: also stop the agent."""


class PermissionRequestSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["PermissionRequest"]
    decision: PermissionRequestDecisionWire


class PostToolUseSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["PostToolUse"]
    additionalContext: str
    updatedToolOutput: JSONValue
    """Must match the tool's output shape, else ignored for built-in tools."""
    updatedMCPToolOutput: JSONValue
    """Legacy spelling of ``updatedToolOutput``."""
    classifierContext: str


class PostToolUseFailureSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: str


class PostToolBatchSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["PostToolBatch"]
    additionalContext: str


class UserPromptSubmitSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: str
    sessionTitle: str
    suppressOriginalPrompt: bool


class SessionStartSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["SessionStart"]
    additionalContext: str
    initialUserMessage: str
    sessionTitle: str
    watchPaths: list[str]
    reloadSkills: bool


class ElicitationSpecificOutput(TypedDict, total=False):
    """Elicitation / ElicitationResult: the answer to send the server."""

    hookEventName: Literal["Elicitation", "ElicitationResult"]
    action: Literal["accept", "decline", "cancel"]
    content: JSONObject


class StopSpecificOutput(TypedDict, total=False):
    hookEventName: Literal["Stop"]
    additionalContext: str
    """Continues the conversation without a "hook error" label."""


ClaudeHookSpecificOutput: TypeAlias = (
    PreToolUseSpecificOutput
    | PermissionRequestSpecificOutput
    | PostToolUseSpecificOutput
    | PostToolUseFailureSpecificOutput
    | PostToolBatchSpecificOutput
    | UserPromptSubmitSpecificOutput
    | SessionStartSpecificOutput
    | StopSpecificOutput
    | ElicitationSpecificOutput
)

# ``continue`` is a Python keyword, hence the functional form.
ClaudeHookOutput = TypedDict(
    "ClaudeHookOutput",
    {
        "continue": bool,
        "stopReason": str,
        "suppressOutput": bool,
        "systemMessage": str,
        "terminalSequence": str,
        "decision": Literal["block", "approve"],
        "reason": str,
        "hookSpecificOutput": ClaudeHookSpecificOutput,
    },
    total=False,
)
"""What a Claude Code hook may print on stdout (exit 0, or any exit with a schema-valid object).

``continue: false`` stops the agent and overrides event-specific decisions; ``stopReason`` is shown to the
user. ``decision: "block"`` + ``reason`` is the top-level decision of UserPromptSubmit, PostToolUse,
PostToolUseFailure, PostToolBatch, Stop and PreCompact; ``"approve"``/``"block"`` on PreToolUse are the
deprecated spellings of allow/deny.
"""


# --------------------------------------------------------------------------------------------------------------
# Cline (classic file hooks, hooks.proto HookInput as JSON)
# --------------------------------------------------------------------------------------------------------------


class ClineModel(TypedDict):
    provider: str
    """Falls back to ``"unknown"``."""
    slug: str


class ClinePreToolUse(TypedDict):
    toolName: str
    parameters: dict[str, str]
    """A string map: non-string values are JSON-stringified."""


class ClinePostToolUse(TypedDict):
    toolName: str
    parameters: dict[str, str]
    result: str
    success: bool
    executionTimeMs: int


class ClineUserPromptSubmit(TypedDict):
    prompt: str
    """An empty prompt is preserved as ``""``."""
    attachments: list[str]


class ClineTaskMetadata(TypedDict, total=False):
    """A proto ``map<string, string>``."""

    taskId: str
    ulid: str
    initialTask: str


class ClineTaskMetadataHolder(TypedDict):
    """The ``taskStart`` / ``taskCancel`` / ``taskComplete`` objects."""

    taskMetadata: ClineTaskMetadata


class ClinePreviousState(TypedDict, total=False):
    """A proto ``map<string, string>``."""

    lastMessageTs: str
    messageCount: str
    conversationHistoryDeleted: str


class ClineTaskResume(TypedDict):
    taskMetadata: ClineTaskMetadata
    previousState: ClinePreviousState


class ClinePreCompact(TypedDict, total=False):
    taskId: str
    ulid: str
    contextSize: int
    compactionStrategy: str
    previousApiReqIndex: int
    tokensIn: int
    tokensOut: int
    tokensInCache: int
    tokensOutCache: int
    deletedRangeStart: int
    deletedRangeEnd: int
    contextJsonPath: str
    """Temporary file with the full history, deleted after the hook."""
    contextRawPath: str


class ClineNotification(TypedDict, total=False):
    event: str
    source: str
    message: str
    waitingForUserInput: bool
    eventVersion: str
    eventId: str
    messageTruncated: bool
    sourceType: str
    sourceId: str
    requiresUserAction: bool
    severity: str


class ClineHookInput(TypedDict):
    """The stdin of a classic Cline hook; exactly one event object is present."""

    clineVersion: str
    hookName: Literal[
        "TaskStart",
        "TaskResume",
        "TaskCancel",
        "TaskComplete",
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Notification",
        "PreCompact",
    ]
    timestamp: str
    """Epoch milliseconds, as a string."""
    taskId: str
    workspaceRoots: list[str]
    userId: str
    model: NotRequired[ClineModel]
    preToolUse: NotRequired[ClinePreToolUse]
    postToolUse: NotRequired[ClinePostToolUse]
    userPromptSubmit: NotRequired[ClineUserPromptSubmit]
    taskStart: NotRequired[ClineTaskMetadataHolder]
    taskResume: NotRequired[ClineTaskResume]
    taskCancel: NotRequired[ClineTaskMetadataHolder]
    taskComplete: NotRequired[ClineTaskMetadataHolder]
    preCompact: NotRequired[ClinePreCompact]
    notification: NotRequired[ClineNotification]


class ClineHookOutput(TypedDict, total=False):
    """What a classic Cline hook prints (possibly after log lines: the last complete object counts)."""

    cancel: bool
    """``true`` stops the whole task on cancellable events; ignored on fire-and-forget ones."""
    contextModification: str
    """Injected for future decisions as ``<hook_context source=… type=…>``; capped at 50 000 characters."""
    errorMessage: str
    """Shown to the user when cancelling."""
