"""The bridge without processes: payload builders (pure), the reason and error mappings, what ``install``
registers, and the diagnostics ``CommandHooks.load`` reports."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hookloop import ScriptedClient, Worker
from hookloop.command_hooks import payloads
from hookloop.command_hooks.bridge import HOOK_NAME, CommandHookCancelled, CommandHooks
from hookloop.command_hooks.config import HookConfig
from hookloop.command_hooks.model import CommandHandler, ConfiguredHook, HookSource
from hookloop.errors import HookError
from hookloop.hooks import ALL_EVENTS

FACTS = payloads.ClaudeFacts(session_id="s1", transcript_path="/t.jsonl", cwd="/work", permission_mode="default")
CLINE = payloads.ClineFacts(
    task_id="run_1",
    workspace_roots=("/work",),
    user_id="me",
    version="hookloop 0.1.0",
    provider="anthropic",
    model=None,
    timestamp_ms=1736654400000,
)


def test_claude_inputs_carry_the_common_fields_and_permission_mode_only_where_documented() -> None:
    pre = payloads.pre_tool_use_input(FACTS, "Bash", {"command": "ls"}, "toolu_1")
    assert pre == {
        "session_id": "s1",
        "transcript_path": "/t.jsonl",
        "cwd": "/work",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    start = payloads.session_start_input(FACTS, "resume")
    assert start == {
        "session_id": "s1",
        "transcript_path": "/t.jsonl",
        "cwd": "/work",
        "hook_event_name": "SessionStart",
        "source": "resume",
    }
    assert "tool_use_id" not in payloads.permission_request_input(FACTS, "Bash", {"command": "ls"})
    assert payloads.pre_compact_input(FACTS, "auto")["custom_instructions"] == ""


def test_file_paths_in_tool_input_are_absolute_as_claude_code_sends_them() -> None:
    sent = payloads.pre_tool_use_input(FACTS, "Edit", {"file_path": "src/../app.py", "old_string": "a"}, "t")
    assert sent["tool_input"] == {"file_path": "/work/app.py", "old_string": "a"}
    assert payloads.absolute_tool_paths("Read", {"file_path": "/etc/hosts"}, "/work") == {"file_path": "/etc/hosts"}
    assert payloads.absolute_tool_paths("Bash", {"command": "cat x"}, "/work") == {"command": "cat x"}
    assert payloads.absolute_tool_paths("NotebookEdit", {"notebook_path": "n.ipynb"}, "/w") == {
        "notebook_path": "/w/n.ipynb"
    }


def test_posttoolusefailure_error_is_middle_truncated_to_10000_characters() -> None:
    error = "head " + "x" * 20_000 + " tail"
    sent = payloads.post_tool_use_failure_input(FACTS, "Bash", {}, "t", error)["error"]
    assert len(sent) == payloads.ERROR_TEXT_LIMIT
    assert sent.startswith("head ")
    assert sent.endswith(" tail")
    assert "characters truncated" in sent
    assert payloads.middle_truncate("short") == "short"


@pytest.mark.parametrize(
    ("mode", "wire"),
    [(None, "bypassPermissions"), ("plan", "plan"), ("acceptEdits", "acceptEdits"), ("weird", "default")],
)
def test_permission_mode_on_the_wire(mode: str | None, wire: str) -> None:
    assert payloads.permission_mode_of(mode) == wire


@pytest.mark.parametrize(
    ("reason", "claude", "cline"),
    [
        ("finished", "other", "TaskComplete"),
        ("paused", "other", None),
        ("aborted", "other", "TaskCancel"),
        ("error", "other", None),
        ("cancelled", "prompt_input_exit", "TaskCancel"),
    ],
)
def test_how_a_run_ended_maps_to_sessionend_and_cline_task_hooks(reason: str, claude: str, cline: str | None) -> None:
    assert payloads.session_end_reason(reason) == claude  # type: ignore[arg-type]
    assert payloads.cline_session_end_hook(reason) == cline  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error_type", "error"),
    [
        ("RateLimitError", "rate_limit"),
        ("OverloadedError", "overloaded"),
        ("AuthenticationError", "authentication_failed"),
        ("ProviderTimeoutError", "server_error"),
        ("ClientError", "unknown"),
        ("Aborted", None),
        ("Cancelled", None),
        ("HookError", None),
        ("MaxTurnsExceeded", None),
    ],
)
def test_stopfailure_fires_only_for_provider_errors(error_type: str, error: str | None) -> None:
    assert payloads.stop_failure_error(error_type) == error


def test_cline_input_matches_the_references_example_shape() -> None:
    # reference §2.2: {"clineVersion", "hookName", "timestamp": "1736654400000", "taskId", "workspaceRoots",
    # "userId", "model": {"provider", "slug"}, "preToolUse": {"toolName", "parameters"}}
    sent = payloads.cline_pre_tool_use(CLINE, "write_to_file", {"path": "a.txt", "content": "hi", "mode": 420})
    assert sent == {
        "clineVersion": "hookloop 0.1.0",
        "hookName": "PreToolUse",
        "timestamp": "1736654400000",
        "taskId": "run_1",
        "workspaceRoots": ["/work"],
        "userId": "me",
        "model": {"provider": "anthropic", "slug": "unknown"},
        "preToolUse": {"toolName": "write_to_file", "parameters": {"path": "a.txt", "content": "hi", "mode": "420"}},
    }
    resume = payloads.cline_task(CLINE, "TaskResume", message_count=7)
    assert resume["taskResume"] == {  # type: ignore[typeddict-item]
        "taskMetadata": {"taskId": "run_1", "ulid": "run_1"},
        "previousState": {"messageCount": "7", "conversationHistoryDeleted": "false"},
    }
    assert payloads.cline_user_prompt_submit(CLINE, "")["userPromptSubmit"] == {"prompt": "", "attachments": []}


def test_commandhookcancelled_is_found_in_a_cause_chain() -> None:
    cancelled = CommandHookCancelled("no", event="PreToolUse", hooks=["/h/PreToolUse"], protocol="cline")
    wrapped = HookError("raised CommandHookCancelled: no", hook=HOOK_NAME, event="pre_tool_call")
    wrapped.__cause__ = cancelled
    assert CommandHookCancelled.find(wrapped) is cancelled
    assert CommandHookCancelled.find(cancelled) is cancelled
    assert CommandHookCancelled.find(HookError("x", hook="h", event="e")) is None
    assert (cancelled.reason, cancelled.hook, cancelled.event) == ("no", "/h/PreToolUse", "PreToolUse")


def _hook(event: str) -> ConfiguredHook:
    return ConfiguredHook(
        event=event,
        matcher=None,
        handler=CommandHandler(command="true"),
        source=HookSource(kind="hookloop-user", path="/u/settings.json"),
    )


def test_install_registers_one_command_hooks_hook_per_event_in_use(tmp_path: Path) -> None:
    config = HookConfig(hooks=(_hook("PreToolUse"), _hook("PreToolUse"), _hook("Stop"), _hook("PermissionRequest")))
    worker = Worker(ScriptedClient([]))
    CommandHooks(config, project_dir=tmp_path).install(worker)
    registered = {event.name: [h.name for h in worker.hooks.chain(event)] for event in ALL_EVENTS}
    used = {name: names for name, names in registered.items() if names}
    assert used == {
        "pre_tool_call": [HOOK_NAME],
        "post_tool_call": [HOOK_NAME],  # delivers PreToolUse context with the call's result
        "on_turn_end": [HOOK_NAME],
        "session_end": [HOOK_NAME],  # drains fire-and-forget hooks
    }
    assert [getattr(a, "name", None) for a in worker.approvers] == [f"{HOOK_NAME} (PermissionRequest)"]
    empty = Worker(ScriptedClient([]))
    CommandHooks(HookConfig(), project_dir=tmp_path).install(empty)
    assert not any(empty.hooks.chain(event) for event in ALL_EVENTS)


def test_load_reports_untrusted_and_explicitly_trusted_project_hooks_and_posttoolbatch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    hooks = {
        "PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PostToolBatch": [{"hooks": [{"type": "command", "command": "true"}]}],
    }
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    folders = {"home": tmp_path / "home", "hookloop_home": tmp_path / "hl"}
    untrusted = CommandHooks.load(project, **folders)
    assert untrusted.hooks == ()
    assert [d.severity for d in untrusted.diagnostics if "not trusted" in d.message] == ["warning"]
    trusted = CommandHooks.load(project, trust_project=True, **folders)
    assert [h.event for h in trusted.hooks] == ["PreToolUse", "PostToolBatch"]
    messages = [d.message for d in trusted.diagnostics]
    assert "2 project hook(s) run without recorded trust (trust_project=True)" in messages
    assert not any("PostToolBatch" in m for m in messages)  # PostToolBatch is a real event now
    with caplog.at_level(logging.WARNING, logger="hookloop.command_hooks.bridge"):
        untrusted.install(Worker(ScriptedClient([])))
    assert any("not trusted" in r.getMessage() for r in caplog.records)


def test_the_configurations_http_allowlists_fill_the_runner_options(tmp_path: Path) -> None:
    config = HookConfig(http_url_allowlist=("https://hooks.example/*",), http_env_allowlist=("TOKEN",))
    bridge = CommandHooks(config, project_dir=tmp_path)
    assert bridge.options.http_url_allowlist == ("https://hooks.example/*",)
    assert bridge.options.http_env_allowlist == ("TOKEN",)


def test_extra_settings_files_are_the_highest_layer_and_need_no_trust(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    hook = {"hooks": [{"type": "command", "command": "true"}]}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [hook]}}))
    extra = tmp_path / "ci-settings.json"
    extra.write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    loaded = CommandHooks.load(
        project, home=tmp_path / "home", hookloop_home=tmp_path / "hl", extra_settings=[extra, tmp_path / "nope.json"]
    )
    assert [(h.event, h.source.path) for h in loaded.hooks] == [("PreToolUse", str(extra))]  # project: untrusted
    assert any(d.file == str(tmp_path / "nope.json") and d.severity == "error" for d in loaded.diagnostics)
