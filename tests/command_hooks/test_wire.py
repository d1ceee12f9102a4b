"""The wire TypedDicts carry every field the reference documents (spec/reference/command-hooks.md §1.2, §2.2)."""

from __future__ import annotations

from typing import get_args, get_type_hints

import pytest

from hookloop.command_hooks import wire
from hookloop.command_hooks.model import CLINE_EVENTS, SUPPORTED_EVENTS

COMMON = {
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "prompt_id",
    "permission_mode",
    "effort",
    "agent_id",
    "agent_type",
}

DOCUMENTED_INPUT: dict[str, set[str]] = {
    "SessionStart": {"source", "model", "session_title"},
    "SessionEnd": {"reason"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": {"tool_name", "tool_input", "permission_suggestions"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt", "duration_ms"},
    "PostToolBatch": {"tool_calls"},
    "Notification": {"message", "title", "notification_type"},
    "Stop": {"stop_hook_active", "last_assistant_message", "background_tasks", "session_crons"},
    "SubagentStart": {"agent_id", "agent_type"},
    "SubagentStop": {
        "stop_hook_active",
        "agent_id",
        "agent_type",
        "agent_transcript_path",
        "last_assistant_message",
        "background_tasks",
        "session_crons",
    },
    "StopFailure": {"error", "error_details", "last_assistant_message"},
    "PreCompact": {"trigger", "custom_instructions"},
    "PostCompact": {"trigger", "compact_summary"},
    "PermissionDenied": {"tool_name", "tool_input", "tool_use_id", "reason"},
    "ConfigChange": {"source", "file_path"},
    "CwdChanged": {"old_cwd", "new_cwd"},
    "FileChanged": {"file_path", "event"},
    "Elicitation": {"mcp_server_name", "message", "mode", "url", "elicitation_id", "requested_schema"},
    "ElicitationResult": {"mcp_server_name", "action", "mode", "elicitation_id", "content"},
}


def keys(typed_dict: type) -> set[str]:
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("event", SUPPORTED_EVENTS)
def test_claude_inputs_have_the_documented_fields(event: str) -> None:
    typed = getattr(wire, f"{event}Input")
    assert keys(typed) == COMMON | DOCUMENTED_INPUT[event]
    assert get_args(get_type_hints(typed)["hook_event_name"]) == (event,)
    assert typed in get_args(wire.ClaudeHookInput)


def test_claude_output_fields() -> None:
    assert keys(wire.ClaudeHookOutput) == {
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "terminalSequence",
        "decision",
        "reason",
        "hookSpecificOutput",
    }
    assert keys(wire.PreToolUseSpecificOutput) == {
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "additionalContext",
    }
    assert keys(wire.PermissionRequestDecisionWire) == {
        "behavior",
        "updatedInput",
        "updatedPermissions",
        "message",
        "interrupt",
    }
    assert {"additionalContext", "updatedToolOutput", "updatedMCPToolOutput"} <= keys(wire.PostToolUseSpecificOutput)


def test_cline_shapes() -> None:
    assert keys(wire.ClineHookInput) == {
        "clineVersion",
        "hookName",
        "timestamp",
        "taskId",
        "workspaceRoots",
        "userId",
        "model",
        "preToolUse",
        "postToolUse",
        "userPromptSubmit",
        "taskStart",
        "taskResume",
        "taskCancel",
        "taskComplete",
        "preCompact",
        "notification",
    }
    # one camelCase event object per Cline hook name
    for event in CLINE_EVENTS:
        assert event[0].lower() + event[1:] in keys(wire.ClineHookInput)
    assert keys(wire.ClineHookOutput) == {"cancel", "contextModification", "errorMessage"}
    assert keys(wire.ClinePostToolUse) == {"toolName", "parameters", "result", "success", "executionTimeMs"}
