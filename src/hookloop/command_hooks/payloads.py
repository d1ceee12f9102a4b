"""The stdin of command hooks, built from what hookloop knows at each point of the loop. Pure functions.

Claude Code hooks get snake_case input (:mod:`hookloop.command_hooks.wire`, reference §1.2): the common fields
``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name`` on every event, ``permission_mode`` on the
events that carry it (:data:`PERMISSION_MODE_EVENTS`), then the event's own fields — exactly the documented set.
Optional fields hookloop has nothing true to put in (``prompt_id``, ``effort``, ``agent_id``, ``background_tasks``,
``session_crons``, ``permission_suggestions``, ``title``, ``is_interrupt``) are left out rather than invented.

Classic Cline hooks get camelCase input (§2.2): ``clineVersion``, ``hookName``, ``timestamp`` (a string of epoch
milliseconds), ``taskId``, ``workspaceRoots``, ``userId``, ``model`` and exactly one event object keyed by the
camelCase hook name. A Cline *task* is a hookloop *run* (``taskId`` is the run id, which a resumed run keeps).
``preToolUse``/``postToolUse`` speak Cline's tool vocabulary (``execute_command {command}``, ``write_to_file
{path, content}`` …; :mod:`hookloop.command_hooks.cline_tools`), so Cline scripts see the names they test.

``transcript_path`` is a transcript in Claude Code's JSONL format, kept beside the Worker's own and brought up to
date before each firing (:mod:`hookloop.command_hooks.transcript`).

Decisions where the references are silent (each one a single place below):

* ``permission_mode`` without a permission policy is ``"bypassPermissions"``: every call no hook restricts runs,
  which is what that mode means (a script tightening rules in that mode then does the right thing).
* ``tool_input`` file paths (``file_path``/``notebook_path`` of Claude's file tools) are made absolute against
  the workspace root, where the file tools resolve them, as Claude Code documents ("file paths always
  absolute"): a guard comparing absolute paths must not be bypassed by a relative one.
* ``cwd`` follows the Bash tool's ``cd`` (Claude Code: "follows cd", unlike ``CLAUDE_PROJECT_DIR``); the hook
  *process* still starts in the project directory, so a relative command (``python3 .claude/hooks/x.py``) keeps
  working after a ``cd`` — Claude Code runs it in the drifted directory, where it fails (claude-code#3583).
* PostToolUse ``tool_response`` is the tool's structured result when it gives one (the built-in tools give
  Claude Code's shapes, :mod:`hookloop.tools.builtin._structured`), an MCP tool's content as MCP content blocks
  (``[{"type": "text", "text": …}]``), and the model-facing result text otherwise (:func:`tool_response_of`).
  PostToolBatch's ``tool_response`` is always the model-facing text, as documented.
* SessionEnd ``reason``: a cancelled run is ``prompt_input_exit`` (the user interrupted); every other ending is
  ``other`` (Claude Code's ``clear``/``resume``/``logout`` have no hookloop counterpart).
* StopFailure ``error``: the provider error class mapped to Claude Code's error types (:func:`stop_failure_error`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from hookloop._frozen import JSONValue, to_json_default
from hookloop._nested import current_agent
from hookloop.hooks.summaries import SessionEndReason

from .cline_tools import cline_tool
from .wire import (
    ClineHookInput,
    ClineNotification,
    ClinePreCompact,
    ClineTaskMetadata,
    NotificationInput,
    PermissionMode,
    PermissionRequestInput,
    PostCompactInput,
    PostToolBatchInput,
    PostToolUseFailureInput,
    PostToolUseInput,
    PreCompactInput,
    PreToolUseInput,
    SessionEndInput,
    SessionStartInput,
    StopFailureInput,
    StopInput,
    SubagentStartInput,
    SubagentStopInput,
    UserPromptSubmitInput,
)

__all__ = [
    "ERROR_TEXT_LIMIT",
    "PERMISSION_MODE_EVENTS",
    "ClaudeFacts",
    "ClineFacts",
    "ClineHookName",
    "absolute_tool_paths",
    "cline_notification",
    "cline_parameters",
    "cline_post_tool_use",
    "cline_pre_compact",
    "cline_pre_tool_use",
    "cline_session_end_hook",
    "cline_task",
    "cline_user_prompt_submit",
    "middle_truncate",
    "notification_input",
    "permission_mode_of",
    "permission_request_input",
    "post_compact_input",
    "post_tool_use_failure_input",
    "post_tool_use_input",
    "pre_compact_input",
    "pre_tool_use_input",
    "replacement_text",
    "session_end_input",
    "session_end_reason",
    "session_start_input",
    "stop_failure_error",
    "stop_failure_input",
    "stop_input",
    "tool_response_of",
    "user_prompt_submit_input",
]

JSONObject: TypeAlias = dict[str, JSONValue]
ClineHookName: TypeAlias = Literal[
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

PERMISSION_MODE_EVENTS: frozenset[str] = frozenset(
    {
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStart",
        "SubagentStop",
    }
)
"""Claude Code events whose input carries ``permission_mode`` ("not on all events": the turn and tool events)."""

ERROR_TEXT_LIMIT = 10_000
"""PostToolUseFailure ``error`` is at most this many characters, middle-truncated."""

_PERMISSION_MODES: dict[str, PermissionMode] = {
    "default": "default",
    "plan": "plan",
    "acceptEdits": "acceptEdits",
    "auto": "auto",
    "dontAsk": "dontAsk",
    "bypassPermissions": "bypassPermissions",
}
_FILE_PATH_KEYS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "NotebookRead": ("notebook_path",),
}
_SESSION_END_REASONS: dict[str, Literal["clear", "resume", "logout", "prompt_input_exit", "other"]] = {
    "finished": "other",
    "paused": "other",
    "aborted": "other",
    "error": "other",
    "cancelled": "prompt_input_exit",
}
_STOP_FAILURE_ERRORS: dict[str, str] = {
    "RateLimitError": "rate_limit",
    "OverloadedError": "overloaded",
    "AuthenticationError": "authentication_failed",
    "InvalidRequestError": "invalid_request",
    "ContextOverflowError": "invalid_request",
    "ProviderConnectionError": "server_error",
    "ProviderTimeoutError": "server_error",
    "ProviderError": "unknown",
    "ClientError": "unknown",
}


# --------------------------------------------------------------------------------------------------------------
# Claude Code
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudeFacts:
    """The common fields of one firing."""

    session_id: str
    transcript_path: str
    """The Worker's JSONL transcript; ``""`` when the Worker keeps none."""
    cwd: str
    """The session's current directory: where the Bash tool is after its last ``cd`` (Claude Code's ``cwd``
    "follows cd"), else the workspace root."""
    permission_mode: PermissionMode
    workspace: str = ""
    """Where relative file paths of tool inputs resolve (the file tools' root, which a ``cd`` does not move);
    ``""``: ``cwd``."""


def permission_mode_of(mode: str | None) -> PermissionMode:
    """The wire ``permission_mode`` for the Worker's mode (``None``: no policy, so ``bypassPermissions``)."""
    if mode is None:
        return "bypassPermissions"
    return _PERMISSION_MODES.get(mode, "default")


def _paths_base(facts: ClaudeFacts) -> str:
    return facts.workspace or facts.cwd


def _common(facts: ClaudeFacts, event: str) -> dict[str, object]:
    data: dict[str, object] = {
        "session_id": facts.session_id,
        "transcript_path": facts.transcript_path,
        "cwd": facts.cwd,
    }
    if event in PERMISSION_MODE_EVENTS:
        data["permission_mode"] = facts.permission_mode
    data["hook_event_name"] = event
    agent = current_agent.get()
    if agent is not None:  # a hook firing inside a subagent (Claude Code: only there)
        data["agent_id"] = agent.agent_id
        data["agent_type"] = agent.agent_type
    return data


def absolute_tool_paths(tool_name: str, tool_input: Mapping[str, JSONValue], cwd: str) -> JSONObject:
    """``tool_input`` with the file paths of Claude's file tools made absolute against ``cwd`` (a copy)."""
    data = dict(tool_input)
    for key in _FILE_PATH_KEYS.get(tool_name, ()):
        value = data.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            data[key] = os.path.normpath(os.path.join(cwd, value))
    return data


def middle_truncate(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters by removing the middle, with a marker saying how much."""
    if len(text) <= limit:
        return text
    marker = f"\n[… {len(text) - limit} characters truncated …]\n"
    keep = max(limit - len(marker), 0)
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head) :]


def session_start_input(
    facts: ClaudeFacts, source: Literal["startup", "resume"], *, model: str | None = None
) -> SessionStartInput:
    data = _common(facts, "SessionStart")
    data["source"] = source
    if model:
        data["model"] = model
    return data  # type: ignore[return-value]  # built field by field above


def session_end_reason(reason: SessionEndReason) -> Literal["clear", "resume", "logout", "prompt_input_exit", "other"]:
    """Claude Code's SessionEnd ``reason`` for how a hookloop run ended."""
    return _SESSION_END_REASONS.get(reason, "other")


def session_end_input(facts: ClaudeFacts, reason: SessionEndReason) -> SessionEndInput:
    data = _common(facts, "SessionEnd")
    data["reason"] = session_end_reason(reason)
    return data  # type: ignore[return-value]


def user_prompt_submit_input(facts: ClaudeFacts, prompt: str) -> UserPromptSubmitInput:
    data = _common(facts, "UserPromptSubmit")
    data["prompt"] = prompt
    return data  # type: ignore[return-value]


def pre_tool_use_input(
    facts: ClaudeFacts, tool_name: str, tool_input: Mapping[str, JSONValue], tool_use_id: str
) -> PreToolUseInput:
    data = _common(facts, "PreToolUse")
    data["tool_name"] = tool_name
    data["tool_input"] = absolute_tool_paths(tool_name, tool_input, _paths_base(facts))
    data["tool_use_id"] = tool_use_id
    return data  # type: ignore[return-value]


def permission_request_input(
    facts: ClaudeFacts, tool_name: str, tool_input: Mapping[str, JSONValue]
) -> PermissionRequestInput:
    """No ``tool_use_id`` on this event (documented)."""
    data = _common(facts, "PermissionRequest")
    data["tool_name"] = tool_name
    data["tool_input"] = absolute_tool_paths(tool_name, tool_input, _paths_base(facts))
    return data  # type: ignore[return-value]


def post_tool_batch_input(
    facts: ClaudeFacts, calls: Sequence[tuple[str, Mapping[str, JSONValue], str, str]]
) -> PostToolBatchInput:
    """``tool_calls`` of one batch: (tool name, input, tool_use_id, model-facing result text) each."""
    data = _common(facts, "PostToolBatch")
    data["tool_calls"] = [
        {
            "tool_name": name,
            "tool_input": absolute_tool_paths(name, tool_input, _paths_base(facts)),
            "tool_use_id": call_id,
            "tool_response": response,
        }
        for name, tool_input, call_id, response in calls
    ]
    return data  # type: ignore[return-value]


def post_tool_use_input(
    facts: ClaudeFacts,
    tool_name: str,
    tool_input: Mapping[str, JSONValue],
    tool_response: JSONValue,
    tool_use_id: str,
    *,
    duration_ms: int | None = None,
) -> PostToolUseInput:
    data = _common(facts, "PostToolUse")
    data["tool_name"] = tool_name
    data["tool_input"] = absolute_tool_paths(tool_name, tool_input, _paths_base(facts))
    data["tool_response"] = tool_response
    data["tool_use_id"] = tool_use_id
    if duration_ms is not None:
        data["duration_ms"] = duration_ms
    return data  # type: ignore[return-value]


def tool_response_of(tool_name: str, content: str, structured: Mapping[str, JSONValue] | None) -> JSONValue:
    """PostToolUse ``tool_response``: the structured result, else an MCP tool's content blocks, else the text."""
    if structured is not None:
        return dict(structured)
    if tool_name.startswith("mcp__"):
        return [{"type": "text", "text": content}]
    return content


def replacement_text(tool_name: str, output: object) -> str | None:
    """The result text for a PostToolUse ``updatedToolOutput`` that is not a string, when it has the tool's
    output shape: Bash ``{stdout, stderr, …}`` (stdout, then stderr when not empty), an MCP tool's content
    blocks (their text joined), Read's ``file.content``, Grep's ``content``; ``None`` otherwise (the caller
    ignores it, as Claude Code ignores a mismatched shape for built-in tools)."""
    if tool_name == "Bash" and isinstance(output, Mapping):
        stdout, stderr = output.get("stdout"), output.get("stderr", "")
        if isinstance(stdout, str) and isinstance(stderr, str):
            return "\n".join(part for part in (stdout, stderr) if part)
        return None
    if isinstance(output, (list, tuple)):
        texts = [b.get("text") for b in output if isinstance(b, Mapping) and b.get("type") == "text"]
        if texts and len(texts) == len(output) and all(isinstance(t, str) for t in texts):
            return "\n".join(t for t in texts if isinstance(t, str))
        return None
    if tool_name == "Read" and isinstance(output, Mapping):
        inner = output.get("file")
        content = inner.get("content") if isinstance(inner, Mapping) else None
        return content if isinstance(content, str) else None
    if tool_name == "Grep" and isinstance(output, Mapping):
        content = output.get("content")
        return content if isinstance(content, str) else None
    return None


def post_tool_use_failure_input(
    facts: ClaudeFacts,
    tool_name: str,
    tool_input: Mapping[str, JSONValue],
    tool_use_id: str,
    error: str,
    *,
    duration_ms: int | None = None,
) -> PostToolUseFailureInput:
    data = _common(facts, "PostToolUseFailure")
    data["tool_name"] = tool_name
    data["tool_input"] = absolute_tool_paths(tool_name, tool_input, _paths_base(facts))
    data["tool_use_id"] = tool_use_id
    data["error"] = middle_truncate(error)
    if duration_ms is not None:
        data["duration_ms"] = duration_ms
    return data  # type: ignore[return-value]


def notification_input(facts: ClaudeFacts, message: str, notification_type: str) -> NotificationInput:
    """``notification_type`` is ``permission_prompt`` (as in Claude Code) or hookloop's ``injected``."""
    data = _common(facts, "Notification")
    data["message"] = message
    data["notification_type"] = notification_type
    return data  # type: ignore[return-value]


def stop_input(facts: ClaudeFacts, *, stop_hook_active: bool, last_assistant_message: str) -> StopInput:
    data = _common(facts, "Stop")
    data["stop_hook_active"] = stop_hook_active
    data["last_assistant_message"] = last_assistant_message
    return data  # type: ignore[return-value]


def subagent_start_input(facts: ClaudeFacts, *, agent_id: str, agent_type: str) -> SubagentStartInput:
    data = _common(facts, "SubagentStart")
    data["agent_id"] = agent_id
    data["agent_type"] = agent_type
    return data  # type: ignore[return-value]


def subagent_stop_input(
    facts: ClaudeFacts,
    *,
    agent_id: str,
    agent_type: str,
    agent_transcript_path: str,
    stop_hook_active: bool,
    last_assistant_message: str,
) -> SubagentStopInput:
    data = _common(facts, "SubagentStop")
    data["agent_id"] = agent_id
    data["agent_type"] = agent_type
    data["agent_transcript_path"] = agent_transcript_path
    data["stop_hook_active"] = stop_hook_active
    data["last_assistant_message"] = last_assistant_message
    return data  # type: ignore[return-value]


def stop_failure_error(error_type: str) -> str | None:
    """Claude Code's StopFailure ``error`` for a hookloop error class name; ``None`` when the error is not a
    provider failure (StopFailure does not fire then)."""
    return _STOP_FAILURE_ERRORS.get(error_type)


def stop_failure_input(facts: ClaudeFacts, *, error: str, message: str) -> StopFailureInput:
    """``error_details`` and ``last_assistant_message`` (documented as "the API error text") carry the
    provider's message."""
    data = _common(facts, "StopFailure")
    data["error"] = error
    data["error_details"] = message
    data["last_assistant_message"] = message
    return data  # type: ignore[return-value]


def pre_compact_input(facts: ClaudeFacts, trigger: Literal["manual", "auto"]) -> PreCompactInput:
    """hookloop's compaction takes no instructions: ``custom_instructions`` is ``""``."""
    data = _common(facts, "PreCompact")
    data["trigger"] = trigger
    data["custom_instructions"] = ""
    return data  # type: ignore[return-value]


def post_compact_input(facts: ClaudeFacts, trigger: Literal["manual", "auto"], summary: str) -> PostCompactInput:
    data = _common(facts, "PostCompact")
    data["trigger"] = trigger
    data["compact_summary"] = summary
    return data  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------------------------
# Cline (classic)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClineFacts:
    """The metadata of one firing."""

    task_id: str
    workspace_roots: tuple[str, ...]
    user_id: str
    version: str
    provider: str
    model: str | None
    timestamp_ms: int
    cwd: str = ""
    """Where the tools resolve relative paths (Cline's ``path`` parameters are relative to it); ``""``: the
    first workspace root."""


def _cline(facts: ClineFacts, hook: ClineHookName, key: str, body: object) -> ClineHookInput:
    data: dict[str, object] = {
        "clineVersion": facts.version,
        "hookName": hook,
        "timestamp": str(facts.timestamp_ms),
        "taskId": facts.task_id,
        "workspaceRoots": list(facts.workspace_roots),
        "userId": facts.user_id,
        "model": {"provider": facts.provider or "unknown", "slug": facts.model or "unknown"},
        key: body,
    }
    return data  # type: ignore[return-value]  # one event object, keyed by the camelCase hook name


def cline_parameters(tool_input: Mapping[str, JSONValue]) -> dict[str, str]:
    """Cline's ``parameters`` string map: strings as they are, anything else JSON-encoded."""
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=to_json_default)
        for key, value in tool_input.items()
    }


def _metadata(facts: ClineFacts) -> ClineTaskMetadata:
    return {"taskId": facts.task_id, "ulid": facts.task_id}


def cline_task(
    facts: ClineFacts,
    hook: Literal["TaskStart", "TaskResume", "TaskCancel", "TaskComplete"],
    *,
    message_count: int | None = None,
    initial_task: str | None = None,
) -> ClineHookInput:
    """``taskStart`` / ``taskResume`` / ``taskCancel`` / ``taskComplete``. ``taskStart.initialTask`` is the
    run's prompt; ``taskResume.previousState`` has the message count."""
    body: dict[str, object] = {"taskMetadata": _metadata(facts)}
    if hook == "TaskStart" and initial_task is not None:
        body["initialTask"] = initial_task
    if hook == "TaskResume":
        body["previousState"] = {
            "messageCount": str(message_count or 0),
            "conversationHistoryDeleted": "false",
        }
    key = hook[0].lower() + hook[1:]
    return _cline(facts, hook, key, body)


def cline_user_prompt_submit(facts: ClineFacts, prompt: str) -> ClineHookInput:
    return _cline(facts, "UserPromptSubmit", "userPromptSubmit", {"prompt": prompt, "attachments": []})


def _cline_cwd(facts: ClineFacts) -> str:
    return facts.cwd or (facts.workspace_roots[0] if facts.workspace_roots else os.getcwd())


def cline_pre_tool_use(facts: ClineFacts, tool_name: str, tool_input: Mapping[str, JSONValue]) -> ClineHookInput:
    """``preToolUse`` in Cline's tool vocabulary (:func:`~hookloop.command_hooks.cline_tools.cline_tool`)."""
    name, parameters = cline_tool(tool_name, tool_input, _cline_cwd(facts))
    body = {"toolName": name, "parameters": parameters}
    return _cline(facts, "PreToolUse", "preToolUse", body)


def cline_post_tool_use(
    facts: ClineFacts,
    tool_name: str,
    tool_input: Mapping[str, JSONValue],
    *,
    result: str,
    success: bool,
    execution_ms: int,
) -> ClineHookInput:
    """``postToolUse`` in Cline's tool vocabulary; ``result`` is the model-facing result text."""
    name, parameters = cline_tool(tool_name, tool_input, _cline_cwd(facts))
    body = {
        "toolName": name,
        "parameters": parameters,
        "result": result,
        "success": success,
        "executionTimeMs": execution_ms,
    }
    return _cline(facts, "PostToolUse", "postToolUse", body)


def cline_notification(
    facts: ClineFacts, *, event: str, source: str, message: str, waiting_for_user: bool
) -> ClineHookInput:
    body: ClineNotification = {
        "event": event,
        "source": source,
        "message": message,
        "waitingForUserInput": waiting_for_user,
        "requiresUserAction": waiting_for_user,
        "severity": "info",
    }
    return _cline(facts, "Notification", "notification", body)


def cline_pre_compact(facts: ClineFacts, *, context_size: int, strategy: str, context_json_path: str) -> ClineHookInput:
    """``contextJsonPath`` names a temporary file with the history as a JSON array (deleted after the hook);
    token counters hookloop does not keep are left out."""
    body: ClinePreCompact = {
        "taskId": facts.task_id,
        "ulid": facts.task_id,
        "contextSize": context_size,
        "compactionStrategy": strategy,
        "contextJsonPath": context_json_path,
    }
    return _cline(facts, "PreCompact", "preCompact", body)


def cline_session_end_hook(reason: SessionEndReason) -> Literal["TaskComplete", "TaskCancel"] | None:
    """The Cline hook for how a run ended: finished → TaskComplete; cancelled or aborted → TaskCancel; a pause
    or an error fires none (Cline's classic hooks have no such event)."""
    if reason == "finished":
        return "TaskComplete"
    if reason in ("cancelled", "aborted"):
        return "TaskCancel"
    return None
