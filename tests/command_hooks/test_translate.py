"""Translation of hook answers into decisions: the reference's documented inputs and outputs as tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop._frozen import FrozenDict, dumps
from hookloop.command_hooks.runner import HookOutcome
from hookloop.command_hooks.translate import (
    CLINE_CONTEXT_LIMIT,
    CONTEXT_LIMIT,
    CommandDecision,
    DecisionKind,
    cap_text,
    format_cline_context,
    merge_decisions,
    translate_claude,
    translate_cline,
    translate_failure,
    translate_http,
    translate_outcome,
)

from .conftest import cline_hook, command_hook


def js(value: object) -> str:
    return json.dumps(value) + "\n"


def pre(**fields: object) -> str:
    return js({"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}})


# (id, event, exit code, stdout, stderr, expected fields of the decision)
CLAUDE_CASES: list[tuple[str, str, int, str, str, dict[str, Any]]] = [
    # --- PreToolUse: permission decisions --------------------------------------------------------------------
    ("pre-silent-exit0", "PreToolUse", 0, "", "", {"kind": "continue", "errors": ()}),
    ("pre-plain-text-ignored", "PreToolUse", 0, "checked ok\n", "", {"kind": "continue", "additional_context": ()}),
    (
        "pre-deny-json",
        "PreToolUse",
        0,
        pre(permissionDecision="deny", permissionDecisionReason="Destructive command blocked"),
        "",
        {"kind": "deny", "reason": "Destructive command blocked"},
    ),
    ("pre-allow", "PreToolUse", 0, pre(permissionDecision="allow"), "", {"kind": "allow", "reason": None}),
    (
        "pre-ask-with-reason",
        "PreToolUse",
        0,
        pre(permissionDecision="ask", permissionDecisionReason="confirm"),
        "",
        {"kind": "ask", "reason": "confirm"},
    ),
    ("pre-defer", "PreToolUse", 0, pre(permissionDecision="defer"), "", {"kind": "defer"}),
    (
        "pre-allow-updated-input",
        "PreToolUse",
        0,
        pre(permissionDecision="allow", updatedInput={"command": "ls -la", "timeout": 5}),
        "",
        {"kind": "allow", "updated_input": {"command": "ls -la", "timeout": 5}},
    ),
    (
        "pre-deny-drops-updated-input",
        "PreToolUse",
        0,
        pre(permissionDecision="deny", updatedInput={"command": "x"}),
        "",
        {"kind": "deny", "updated_input": None, "reason": "blocked by a PreToolUse hook (no reason given)"},
    ),
    ("pre-legacy-approve", "PreToolUse", 0, js({"decision": "approve", "reason": "ok"}), "", {"kind": "allow"}),
    (
        "pre-legacy-block",
        "PreToolUse",
        0,
        js({"decision": "block", "reason": "legacy no"}),
        "",
        {"kind": "deny", "reason": "legacy no"},
    ),
    (
        "pre-additional-context",
        "PreToolUse",
        0,
        pre(additionalContext="repo is frozen"),
        "",
        {"kind": "continue", "additional_context": ("repo is frozen",)},
    ),
    # --- exit 2 -----------------------------------------------------------------------------------------------
    (
        "pre-exit2-stderr",
        "PreToolUse",
        2,
        "",
        "Blocked: rm -rf is not allowed\n",
        {"kind": "deny", "reason": "Blocked: rm -rf is not allowed"},
    ),
    (
        "pre-exit2-beats-json-allow",
        "PreToolUse",
        2,
        pre(permissionDecision="allow", updatedInput={"command": "rm -rf /"}),
        "stderr reason",
        {"kind": "deny", "reason": "stderr reason", "updated_input": None},
    ),
    (
        "pre-exit2-json-reason-wins",
        "PreToolUse",
        2,
        pre(permissionDecision="deny", permissionDecisionReason="json reason"),
        "stderr reason",
        {"kind": "deny", "reason": "json reason"},
    ),
    (
        "pre-exit2-empty-stderr-still-blocks",
        "PreToolUse",
        2,
        "",
        "",
        {"kind": "deny", "reason": "blocked by a PreToolUse hook (exit status 2)"},
    ),
    (
        "pre-exit2-invalid-json-still-blocks",
        "PreToolUse",
        2,
        pre(permissionDecision="maybe"),
        "nope",
        {"kind": "deny", "reason": "nope", "failed": True},
    ),
    (
        "pre-exit2-keeps-context",
        "PreToolUse",
        2,
        pre(additionalContext="ctx"),
        "no",
        {"kind": "deny", "additional_context": ("ctx",)},
    ),
    # --- other exit codes -------------------------------------------------------------------------------------
    (
        "pre-exit1-plain-is-non-blocking-error",
        "PreToolUse",
        1,
        "",
        "boom\nsecond line\n",
        {"kind": "continue", "errors": ("PreToolUse hook error: Failed with non-blocking status code 1: boom",)},
    ),
    (
        "pre-exit1-json-decides",
        "PreToolUse",
        1,
        pre(permissionDecision="deny", permissionDecisionReason="json"),
        "ignored",
        {"kind": "deny", "reason": "json", "errors": ()},
    ),
    # --- stdout rules -----------------------------------------------------------------------------------------
    ("json-array-is-text", "PreToolUse", 0, "[1, 2]", "", {"kind": "continue", "errors": ()}),
    (
        "log-line-before-json-is-text",
        "PreToolUse",
        0,
        "debug: hi\n" + pre(permissionDecision="deny"),
        "",
        {"kind": "continue"},
    ),
    (
        "leading-whitespace-ok",
        "PreToolUse",
        0,
        "  \n\t" + pre(permissionDecision="deny", permissionDecisionReason="r"),
        "",
        {"kind": "deny"},
    ),
    ("broken-json-is-text", "PreToolUse", 0, '{"hookSpecificOutput": ', "", {"kind": "continue", "errors": ()}),
    (
        "wrong-type-is-invalid",
        "PreToolUse",
        0,
        js({"continue": "no"}),
        "",
        {"kind": "continue", "failed": True},
    ),
    (
        "wrong-event-name-is-invalid",
        "PreToolUse",
        0,
        js({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}),
        "",
        {"kind": "continue", "failed": True},
    ),
    # --- universal fields -------------------------------------------------------------------------------------
    (
        "continue-false-stops",
        "PreToolUse",
        0,
        js({"continue": False, "stopReason": "Build failed", "systemMessage": "careful"}),
        "",
        {"kind": "stop", "continue_": False, "stop_reason": "Build failed", "system_message": ("careful",)},
    ),
    (
        "continue-false-overrides-allow",
        "PreToolUse",
        0,
        js({"continue": False, "hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}),
        "",
        {"kind": "stop", "updated_input": None},
    ),
    ("suppress-output", "PostToolUse", 0, js({"suppressOutput": True}), "", {"suppress_output": True}),
    # --- UserPromptSubmit -------------------------------------------------------------------------------------
    (
        "prompt-plain-stdout-is-context",
        "UserPromptSubmit",
        0,
        "Current time: 10:00\n",
        "",
        {"kind": "continue", "additional_context": ("Current time: 10:00",)},
    ),
    (
        "prompt-block",
        "UserPromptSubmit",
        0,
        js({"decision": "block", "reason": "Prompt contains a secret"}),
        "",
        {"kind": "block", "reason": "Prompt contains a secret"},
    ),
    (
        "prompt-json-context",
        "UserPromptSubmit",
        0,
        js({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}),
        "",
        {"additional_context": ("ctx",)},
    ),
    ("prompt-exit2", "UserPromptSubmit", 2, "", "no secrets", {"kind": "block", "reason": "no secrets"}),
    # --- SessionStart ----------------------------------------------------------------------------------------
    ("session-plain-context", "SessionStart", 0, "branch: main\n", "", {"additional_context": ("branch: main",)}),
    (
        "session-exit2-to-user",
        "SessionStart",
        2,
        "",
        "setup failed",
        {"kind": "continue", "system_message": ("setup failed",), "additional_context": ()},
    ),
    # --- PostToolUse / PostToolUseFailure / PostToolBatch -------------------------------------------------------
    (
        "post-block",
        "PostToolUse",
        0,
        js({"decision": "block", "reason": "lint failed"}),
        "",
        {"kind": "block", "reason": "lint failed"},
    ),
    (
        "post-updated-output",
        "PostToolUse",
        0,
        js({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"stdout": "[redacted]"}}}),
        "",
        {"kind": "continue", "replace_output": {"stdout": "[redacted]"}},
    ),
    (
        "post-legacy-mcp-output",
        "PostToolUse",
        0,
        js({"hookSpecificOutput": {"updatedMCPToolOutput": "masked"}}),
        "",
        {"replace_output": "masked"},
    ),
    ("post-exit2-to-model", "PostToolUse", 2, "", "tests fail", {"kind": "block", "reason": "tests fail"}),
    ("post-plain-text-ignored", "PostToolUse", 0, "formatted 3 files", "", {"additional_context": ()}),
    ("failure-exit2", "PostToolUseFailure", 2, "", "hint", {"kind": "block", "reason": "hint"}),
    (
        "failure-context",
        "PostToolUseFailure",
        0,
        js({"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "retry with -f"}}),
        "",
        {"additional_context": ("retry with -f",)},
    ),
    ("batch-block", "PostToolBatch", 0, js({"decision": "block", "reason": "stop here"}), "", {"kind": "block"}),
    # --- PermissionRequest -------------------------------------------------------------------------------------
    (
        "permission-allow",
        "PermissionRequest",
        0,
        js(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {
                        "behavior": "allow",
                        "updatedInput": {"command": "npm test"},
                        "updatedPermissions": [{"type": "addRules"}],
                    },
                }
            }
        ),
        "",
        {"kind": "allow", "updated_input": {"command": "npm test"}, "updated_permissions": ({"type": "addRules"},)},
    ),
    (
        "permission-deny-interrupt",
        "PermissionRequest",
        0,
        js({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "not now", "interrupt": True}}}),
        "",
        {"kind": "deny", "reason": "not now", "interrupt": True},
    ),
    ("permission-exit2-not-honoured", "PermissionRequest", 2, "", "no", {"kind": "continue", "failed": True}),
    # --- Stop ---------------------------------------------------------------------------------------------------
    (
        "stop-block-continues",
        "Stop",
        0,
        js({"decision": "block", "reason": "Tests are failing; fix them"}),
        "",
        {"kind": "block", "reason": "Tests are failing; fix them"},
    ),
    ("stop-block-needs-reason", "Stop", 0, js({"decision": "block"}), "", {"kind": "continue", "failed": True}),
    (
        "stop-context-continues-without-error",
        "Stop",
        0,
        js({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "also update docs"}}),
        "",
        {"kind": "continue", "additional_context": ("also update docs",), "errors": ()},
    ),
    ("stop-exit2", "Stop", 2, "", "keep going", {"kind": "block", "reason": "keep going"}),
    # --- fire-and-forget events ---------------------------------------------------------------------------------
    (
        "stopfailure-ignores-everything",
        "StopFailure",
        2,
        js({"continue": False, "systemMessage": "x"}),
        "e",
        {"kind": "continue", "system_message": (), "errors": ()},
    ),
    ("notification-exit2-ignored", "Notification", 2, "", "ignored", {"kind": "continue", "errors": ()}),
    (
        "notification-cannot-stop",
        "Notification",
        0,
        js({"continue": False, "systemMessage": "notified"}),
        "",
        {"kind": "continue", "continue_": True, "system_message": ("notified",)},
    ),
    ("session-end-exit2", "SessionEnd", 2, "", "bye", {"system_message": ("bye",)}),
    (
        "post-compact-message",
        "PostCompact",
        0,
        js({"systemMessage": "compacted"}),
        "",
        {"system_message": ("compacted",)},
    ),
    # --- PreCompact ------------------------------------------------------------------------------------------------
    ("precompact-block", "PreCompact", 0, js({"decision": "block", "reason": "not yet"}), "", {"kind": "block"}),
    ("precompact-exit2", "PreCompact", 2, "", "no", {"kind": "block", "reason": "no"}),
]


def check(decision: CommandDecision, expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        actual = getattr(decision, key)
        if isinstance(actual, FrozenDict) or (key == "updated_permissions" and actual):
            actual = json.loads(dumps(actual))
            value = json.loads(dumps(value))
        assert actual == value, f"{key}: {actual!r} != {value!r}"


@pytest.mark.parametrize(
    ("event", "exit_code", "stdout", "stderr", "expected"),
    [case[1:] for case in CLAUDE_CASES],
    ids=[case[0] for case in CLAUDE_CASES],
)
def test_claude_translation(event: str, exit_code: int, stdout: str, stderr: str, expected: dict[str, Any]) -> None:
    check(translate_claude(event, exit_code, stdout, stderr), expected)


def test_updated_input_is_frozen() -> None:
    decision = translate_claude("PreToolUse", 0, pre(permissionDecision="allow", updatedInput={"a": [1]}), "")
    assert isinstance(decision.updated_input, FrozenDict)
    with pytest.raises(TypeError):
        decision.updated_input["a"] = 2


def test_context_is_capped_with_a_visible_marker() -> None:
    long = "x" * (CONTEXT_LIMIT * 3)
    decision = translate_claude("UserPromptSubmit", 0, long, "")
    (context,) = decision.additional_context
    assert len(context) <= CONTEXT_LIMIT
    assert "truncated" in context
    assert context.startswith("xxx")
    assert cap_text("short") == "short"


def test_unknown_event_is_rejected() -> None:
    with pytest.raises(ValueError, match="TeammateIdle"):
        translate_claude("TeammateIdle", 0, "", "")


# --- HTTP ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (200, "", {"kind": "continue", "errors": ()}),
        (204, "  ", {"kind": "continue", "errors": ()}),
        (
            200,
            pre(permissionDecision="deny", permissionDecisionReason="http no"),
            {"kind": "deny", "reason": "http no"},
        ),
        (200, "not json", {"kind": "continue", "failed": True}),
        (500, js({"decision": "block"}), {"kind": "continue", "failed": True}),
    ],
)
def test_http_translation(status: int, body: str, expected: dict[str, Any]) -> None:
    check(translate_http("PreToolUse", status, body), expected)


# --- Cline ----------------------------------------------------------------------------------------------------


CLINE_CASES: list[tuple[str, str, int, str, str, dict[str, Any]]] = [
    ("no-output", "PreToolUse", 0, "", "", {"kind": "continue", "errors": ()}),
    ("plain-output-exit0", "PreToolUse", 0, "all good\n", "", {"kind": "continue", "errors": ()}),
    (
        "cancel",
        "PreToolUse",
        0,
        js({"cancel": True, "errorMessage": "Blocked by policy"}),
        "",
        {"kind": "stop", "continue_": False, "stop_reason": "Blocked by policy"},
    ),
    (
        "cancel-default-reason-drops-context",
        "UserPromptSubmit",
        0,
        js({"cancel": True, "contextModification": "dropped"}),
        "",
        {"kind": "stop", "stop_reason": "UserPromptSubmit hook requested cancellation", "additional_context": ()},
    ),
    (
        "log-lines-before-json",
        "PreToolUse",
        0,
        'checking {weird\nstill checking "quote\n' + js({"cancel": True, "errorMessage": "no"}),
        "",
        {"kind": "stop", "stop_reason": "no"},
    ),
    (
        "non-zero-with-json-is-honoured",
        "PostToolUse",
        3,
        js({"cancel": True}),
        "warn",
        {"kind": "stop", "errors": ()},
    ),
    (
        "non-zero-without-json-fails-open",
        "PreToolUse",
        1,
        "",
        "crash\n",
        {"kind": "continue", "errors": ("PreToolUse hook failed with exit code 1: crash",)},
    ),
    (
        "cancel-ignored-on-notification",
        "Notification",
        0,
        js({"cancel": True, "contextModification": "x"}),
        "",
        {"kind": "continue", "additional_context": ()},
    ),
    ("cancel-ignored-on-task-complete", "TaskComplete", 0, js({"cancel": True}), "", {"kind": "continue"}),
    (
        "context",
        "PreToolUse",
        0,
        js({"cancel": False, "contextModification": "Remember the style guide"}),
        "",
        {
            "kind": "continue",
            "additional_context": (
                '<hook_context source="PreToolUse" type="general">\nRemember the style guide\n</hook_context>',
            ),
        },
    ),
    (
        "typed-context",
        "TaskStart",
        0,
        js({"contextModification": "WORKSPACE_RULES: use tabs\nand more"}),
        "",
        {
            "additional_context": (
                '<hook_context source="TaskStart" type="workspace_rules">\nuse tabs\nand more\n</hook_context>',
            )
        },
    ),
    ("error-message-without-cancel", "PreToolUse", 0, js({"errorMessage": "fyi"}), "", {"system_message": ("fyi",)}),
    (
        "should-continue-retired",
        "PreToolUse",
        0,
        js({"shouldContinue": False}),
        "",
        {"kind": "continue", "failed": True},
    ),
    ("wrong-type", "PreToolUse", 0, js({"cancel": "yes"}), "", {"kind": "continue", "failed": True}),
]


@pytest.mark.parametrize(
    ("event", "exit_code", "stdout", "stderr", "expected"),
    [case[1:] for case in CLINE_CASES],
    ids=[case[0] for case in CLINE_CASES],
)
def test_cline_translation(event: str, exit_code: int, stdout: str, stderr: str, expected: dict[str, Any]) -> None:
    check(translate_cline(event, exit_code, stdout, stderr), expected)


def test_cline_context_is_truncated_with_clines_marker() -> None:
    block = format_cline_context("PreToolUse", "y" * (CLINE_CONTEXT_LIMIT + 10))
    assert "[... context truncated due to size limit ...]" in block
    assert "y" * CLINE_CONTEXT_LIMIT in block
    assert "y" * (CLINE_CONTEXT_LIMIT + 1) not in block


# --- failures and dispatch --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "fail_closed", "kind"),
    [
        ("PreToolUse", False, "continue"),
        ("PreToolUse", True, "deny"),
        ("PermissionRequest", True, "deny"),
        ("UserPromptSubmit", True, "block"),
        ("PostToolBatch", True, "block"),
        ("PreCompact", True, "block"),
        ("SessionStart", True, "continue"),
        ("Stop", True, "continue"),
        ("Notification", True, "continue"),
    ],
)
def test_failures_fail_open_unless_fail_closed(event: str, fail_closed: bool, kind: str) -> None:
    decision = translate_failure(event, "hook x timed out after 1 s", fail_closed=fail_closed)
    assert decision.kind == kind
    assert decision.errors == ("hook x timed out after 1 s",)


def test_translate_outcome_dispatch() -> None:
    hook = command_hook("h", fail_closed=True)
    missing = HookOutcome(name="h", error_kind="not_found", error="hook h could not run (exit 127)", exit_code=127)
    assert translate_outcome(hook, missing).kind == "deny"
    answered = HookOutcome(name="h", exit_code=2, stderr=b"no")
    assert translate_outcome(hook, answered).reason == "no"
    script = cline_hook(Path("/x/PreToolUse"))
    cancel = HookOutcome(name="s", exit_code=0, stdout=b'{"cancel": true}')
    assert translate_outcome(script, cancel).kind == "stop"
    timeout = HookOutcome(name="s", error_kind="timeout", error="hook s timed out", timed_out=True)
    assert translate_outcome(script, timeout).errors == ("hook s timed out",)


@pytest.mark.parametrize("fail_closed", [False, True])
def test_an_answer_cut_at_the_cap_is_never_read_even_from_an_ok_outcome(fail_closed: bool) -> None:
    allow = b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
    cut = HookOutcome(name="h", exit_code=0, stdout=allow, stdout_truncated=True)
    decision = translate_outcome(command_hook("h", fail_closed=fail_closed), cut)
    assert decision.kind == ("deny" if fail_closed else "continue")
    assert decision.errors == ("hook h answered more than the output cap; the answer was discarded, not read",)
    plain = translate_outcome(
        command_hook("h", event="UserPromptSubmit"),
        HookOutcome(name="h", exit_code=0, stdout=b"context text", stdout_truncated=True),
    )
    assert plain.additional_context == ()
    assert plain.failed


# --- merging ---------------------------------------------------------------------------------------------------


def d(kind: DecisionKind = "continue", **fields: Any) -> CommandDecision:
    return CommandDecision(kind=kind, **fields)


def test_merge_precedence_and_fields() -> None:
    a = FrozenDict({"command": "a"})
    b = FrozenDict({"command": "b"})
    merged = merge_decisions(
        [
            d("allow", updated_input=a, additional_context=("c1",), system_message=("m1",)),
            d("ask", reason="please confirm", updated_input=b, additional_context=("c2",)),
            d("continue", errors=("e1",)),
        ]
    )
    assert merged.kind == "ask"
    assert merged.reason == "please confirm"
    assert merged.updated_input == b  # the last in configuration order wins
    assert merged.additional_context == ("c1", "c2")
    assert merged.system_message == ("m1",)
    assert merged.errors[0] == "e1"
    assert "updatedInput" in merged.errors[1]


def test_merge_deny_beats_ask_and_allow_and_drops_rewrites() -> None:
    merged = merge_decisions(
        [d("allow", updated_input=FrozenDict({"x": 1})), d("deny", reason="r1"), d("ask"), d("deny", reason="r2")]
    )
    assert merged.kind == "deny"
    assert merged.reason == "r1\nr2"
    assert merged.updated_input is None


def test_merge_block_and_stop_win() -> None:
    assert merge_decisions([d("deny"), d("block", reason="b")]).kind == "block"
    stopped = merge_decisions([d("block", reason="b"), d("stop", continue_=False, stop_reason="halt"), d("allow")])
    assert stopped.kind == "stop"
    assert not stopped.continue_
    assert stopped.stop_reason == "halt"


def test_merge_of_nothing_and_of_one() -> None:
    assert merge_decisions([]) == CommandDecision()
    only = d("deny", reason="x")
    assert merge_decisions([only]) is only


_KINDS: list[DecisionKind] = ["continue", "allow", "ask", "defer", "deny", "block", "stop"]


@given(st.lists(st.tuples(st.sampled_from(_KINDS), st.text(max_size=3)), min_size=1, max_size=8))
def test_merge_properties(items: list[tuple[DecisionKind, str]]) -> None:
    decisions = [d(kind, additional_context=(ctx,), continue_=kind != "stop") for kind, ctx in items]
    merged = merge_decisions(decisions)
    assert _KINDS.index(merged.kind) == max(_KINDS.index(kind) for kind, _ in items)
    assert merged.additional_context == tuple(ctx for _, ctx in items)
    assert merged.continue_ == all(kind != "stop" for kind, _ in items)
    # Order-independence of the verdict (not of the ordered lists).
    assert merge_decisions(decisions[::-1]).kind == merged.kind
