"""The mode's default for calls no rule or hook decided, and how modes interact with rules and hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionConfigError, PermissionMode, PermissionPolicy


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def calls(workspace: Path) -> dict[str, tuple[str, dict[str, object], bool]]:
    outside = str(workspace.parent / "outside.txt")
    return {
        "read-inside": ("Read", {"file_path": "a.py"}, False),
        "read-outside": ("Read", {"file_path": outside}, False),
        "grep-inside": ("Grep", {"pattern": "x"}, False),
        "edit-inside": ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, False),
        "write-outside": ("Write", {"file_path": outside, "content": ""}, False),
        "notebook-inside": ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": ""}, False),
        "bash": ("Bash", {"command": "make"}, False),
        "webfetch": ("WebFetch", {"url": "https://example.com", "prompt": "x"}, False),
        "custom-read-only": ("lookup", {"q": "x"}, True),
        "mcp": ("mcp__srv__do", {}, False),
    }


EXPECTED: dict[str, dict[str, str]] = {
    "default": {
        "read-inside": "allow", "read-outside": "ask", "grep-inside": "allow", "edit-inside": "ask",
        "write-outside": "ask", "notebook-inside": "ask", "bash": "ask", "webfetch": "ask",
        "custom-read-only": "allow", "mcp": "ask",
    },
    "acceptEdits": {
        "read-inside": "allow", "read-outside": "ask", "grep-inside": "allow", "edit-inside": "allow",
        "write-outside": "ask", "notebook-inside": "allow", "bash": "ask", "webfetch": "ask",
        "custom-read-only": "allow", "mcp": "ask",
    },
    "plan": {
        "read-inside": "allow", "read-outside": "ask", "grep-inside": "allow", "edit-inside": "deny",
        "write-outside": "deny", "notebook-inside": "deny", "bash": "deny", "webfetch": "deny",
        "custom-read-only": "allow", "mcp": "deny",
    },
    "bypassPermissions": {
        "read-inside": "allow", "read-outside": "allow", "grep-inside": "allow", "edit-inside": "allow",
        "write-outside": "allow", "notebook-inside": "allow", "bash": "allow", "webfetch": "allow",
        "custom-read-only": "allow", "mcp": "allow",
    },
    "dontAsk": {
        "read-inside": "allow", "read-outside": "deny", "grep-inside": "allow", "edit-inside": "deny",
        "write-outside": "deny", "notebook-inside": "deny", "bash": "deny", "webfetch": "deny",
        "custom-read-only": "allow", "mcp": "deny",
    },
}  # fmt: skip


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_mode_defaults(workspace: Path, mode: PermissionMode) -> None:
    policy = PermissionPolicy(workspace=workspace, mode=mode)
    got = {
        name: policy.decide(tool, tool_input, read_only=read_only).behavior
        for name, (tool, tool_input, read_only) in calls(workspace).items()
    }
    assert got == EXPECTED[mode]


def test_mode_default_is_named_in_the_outcome(workspace: Path) -> None:
    outcome = PermissionPolicy(workspace=workspace, mode="plan").decide("Bash", {"command": "make"})
    assert outcome.decided_by == 'mode "plan"'
    assert "plan mode" in outcome.reason


def test_additional_directories_count_as_inside(tmp_path: Path, workspace: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    policy = PermissionPolicy(workspace=workspace, additional_directories=[extra], mode="acceptEdits")
    assert policy.decide("Read", {"file_path": str(extra / "x")}).behavior == "allow"
    assert policy.decide("Write", {"file_path": str(extra / "x"), "content": ""}).behavior == "allow"
    relative = PermissionPolicy(workspace=workspace, additional_directories=["../extra"])
    assert relative.decide("Read", {"file_path": str(extra / "x")}).behavior == "allow"


def test_symlink_out_of_the_workspace_is_outside(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "secret").write_text("s")
    (workspace / "innocent").symlink_to(tmp_path / "secret")
    policy = PermissionPolicy(workspace=workspace, mode="acceptEdits")
    assert policy.decide("Read", {"file_path": "innocent"}).behavior == "ask"
    assert policy.decide("Edit", {"file_path": "innocent", "old_string": "s", "new_string": "t"}).behavior == "ask"


def test_read_outside_is_allowed_only_by_an_explicit_rule(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "docs"
    policy = PermissionPolicy(workspace=workspace, allow=[f"Read(/{outside}/**)"])
    assert policy.decide("Read", {"file_path": str(outside / "a.md")}).behavior == "allow"
    assert policy.decide("Read", {"file_path": str(tmp_path / "b.md")}).behavior == "ask"


def test_tool_input_without_a_usable_path_asks(workspace: Path) -> None:
    policy = PermissionPolicy(workspace=workspace)
    assert policy.decide("Read", {}).behavior == "ask"
    assert policy.decide("Read", {"file_path": 7}).behavior == "ask"


def test_bypass_still_honours_deny_and_ask_rules_and_hook_votes(workspace: Path) -> None:
    policy = PermissionPolicy(
        workspace=workspace, mode="bypassPermissions", deny=["Bash(rm:*)"], ask=["Bash(git push:*)"]
    )
    assert policy.decide("Bash", {"command": "rm -rf build"}).behavior == "deny"
    assert policy.decide("Bash", {"command": "git push"}).behavior == "ask"
    assert policy.decide("Bash", {"command": "make"}).behavior == "allow"
    guard = HookVote(behavior="deny", reason="frozen", hook="guard")
    assert policy.decide("Bash", {"command": "make"}, hooks=[guard]).behavior == "deny"
    confirm = HookVote(behavior="ask", reason="confirm", hook="confirm")
    assert policy.decide("Bash", {"command": "make"}, hooks=[confirm]).behavior == "ask"


def test_dont_ask_turns_every_ask_into_deny(workspace: Path) -> None:
    policy = PermissionPolicy(workspace=workspace, mode="dontAsk", ask=["Bash(git push:*)"], allow=["Bash(make:*)"])
    pushed = policy.decide("Bash", {"command": "git push"})
    assert pushed.behavior == "deny"
    assert pushed.decided_by == 'mode "dontAsk"'
    assert 'rule "Bash(git push:*)"' in pushed.reason
    asked = policy.decide("Bash", {"command": "make"}, hooks=[HookVote(behavior="ask", reason="?", hook="h")])
    assert asked.behavior == "deny"
    assert policy.decide("Bash", {"command": "make"}).behavior == "allow"  # pre-approved still runs


def test_allow_rules_and_hook_allows_apply_in_plan_mode(workspace: Path) -> None:
    policy = PermissionPolicy(workspace=workspace, mode="plan", allow=["Bash(make:*)"])
    assert policy.decide("Bash", {"command": "make test"}).behavior == "allow"
    vote = HookVote(behavior="allow", reason="fine", hook="h")
    assert policy.decide("Bash", {"command": "cargo test"}, hooks=[vote]).behavior == "allow"


def test_mode_is_settable_and_validated(workspace: Path) -> None:
    policy = PermissionPolicy(workspace=workspace)
    policy.mode = "plan"
    assert policy.mode == "plan"
    assert policy.decide("Bash", {"command": "make"}).behavior == "deny"
    with pytest.raises(PermissionConfigError, match="unknown permission mode 'auto'"):
        policy.mode = "auto"  # type: ignore[assignment]
    assert policy.mode == "plan"
    with pytest.raises(PermissionConfigError):
        PermissionPolicy(mode="yolo")  # type: ignore[arg-type]


def test_a_mode_is_kept_as_the_exact_string_it_names(workspace: Path) -> None:
    """A str subclass equal to a mode (which could say other things later) is kept as the mode's own string:
    what the policy decides by and what hook inputs report is an exact ``str``."""

    class Sneaky(str):
        __slots__ = ()

    policy = PermissionPolicy(workspace=workspace, mode=Sneaky("plan"))  # type: ignore[arg-type]
    assert type(policy.mode) is str
    assert policy.mode == "plan"
    policy.mode = Sneaky("acceptEdits")
    assert type(policy.mode) is str
    assert policy.mode == "acceptEdits"
    with pytest.raises(PermissionConfigError):
        policy.mode = 3


def test_workspace_defaults_to_the_current_directory(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    monkeypatch.chdir(workspace)
    policy = PermissionPolicy()
    assert policy.workspace == Path(str(workspace))
    assert policy.decide("Read", {"file_path": "a.py"}).behavior == "allow"
