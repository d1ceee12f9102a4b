"""Issue 10 item 8: writes to protected paths are never allowed by a mode or a hook, only by an allow rule that
names them; reads stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionMode, PermissionPolicy

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
HOOK_ALLOW = HookVote(behavior="allow", reason="looks fine", hook="approve-all")
BASH_ALLOW = ["Bash(echo:*)", "Bash(tee:*)", "Bash(cd:*)", "Bash(printf:*)"]

PROTECTED_FILES = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git",  # a worktree's .git file points git elsewhere
    "sub/.git/HEAD",
    ".GIT/config",  # a case-insensitive file system
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks/guard.sh",
    ".hookloop/settings.json",
    ".hookloop/settings.local.json",
    ".clinerules/hooks/PreToolUse",
    ".mcp.json",
    ".vscode/settings.json",
    ".gitmodules",
    "sub/../.git/config",
]
HOME_FILES = ["~/.bashrc", "~/.claude/settings.json", "~/.profile", "~/.hookloop/hooks/x.sh"]
CONTROLS = [".gitignore", ".github/workflows/ci.yml", "notes/git/config", "claude/settings.json", ".gitkeep"]

# Without a hook: what the mode does with a protected write by Write/Edit.
FILE_TOOL: dict[PermissionMode, str] = {
    "default": "ask",
    "acceptEdits": "ask",
    "plan": "deny",
    "bypassPermissions": "ask",
    "dontAsk": "deny",
}


def _policy(workspace: Path, mode: PermissionMode, allow: list[str] | None = None) -> PermissionPolicy:
    return PermissionPolicy(allow=[*BASH_ALLOW, *(allow or [])], mode=mode, workspace=workspace)


def _file_calls(path: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("Write", {"file_path": path, "content": "x"}),
        ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"file_path": path, "edits": []}),
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "sub").mkdir()
    return ws


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", PROTECTED_FILES + HOME_FILES)
def test_file_tools_never_auto_write_protected_paths(
    workspace: Path, path: str, mode: PermissionMode, hooked: bool
) -> None:
    policy = _policy(workspace, mode)
    for tool, arguments in _file_calls(path):
        outcome = policy.decide(tool, arguments, hooks=[HOOK_ALLOW] if hooked else [])
        want = FILE_TOOL[mode]
        if hooked and mode == "plan":
            want = "ask"  # the hook's allow settles plan's default; the protected path still asks
        assert outcome.behavior == want, (tool, outcome)


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    [
        "echo x > .git/config",
        "echo x >> .git/hooks/pre-commit",
        "printf x > ~+/.git/hooks/post-checkout",
        "echo x >> .claude/settings.json",
        "echo x | tee .hookloop/settings.json",
        "echo x | tee -a .claude/settings.local.json",
        "cd .git && echo x > config",
        "cd .claude; echo x > settings.json",
        "echo x > .mcp.json",
        "echo x >> ~/.bashrc",
        "echo x > sub/../.git/config",
        "echo x > .Git/config",
    ],
)
def test_bash_redirections_never_auto_write_protected_paths(
    workspace: Path, command: str, mode: PermissionMode, hooked: bool
) -> None:
    outcome = _policy(workspace, mode).decide("Bash", {"command": command}, hooks=[HOOK_ALLOW] if hooked else [])
    if mode == "plan" and not hooked and "~/" in command:
        assert outcome.behavior == "deny"  # outside the workspace: no allow rule covers it, plan denies Bash
    else:
        assert outcome.behavior == ("deny" if mode == "dontAsk" else "ask"), outcome


@pytest.mark.parametrize("mode", MODES)
def test_bash_in_the_remembered_protected_directory(workspace: Path, mode: PermissionMode) -> None:
    outcome = _policy(workspace, mode).decide("Bash", {"command": "echo x > config"}, cwd=workspace / ".git")
    assert outcome.behavior == ("deny" if mode == "dontAsk" else "ask")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("Edit(./.claude/**)", ".claude/settings.json"),
        ("Edit(.claude/settings.json)", ".claude/settings.json"),
        ("Write(./.git/hooks/**)", ".git/hooks/pre-commit"),
        ("Edit(./.mcp.json)", ".mcp.json"),
        ("Edit(~/.bashrc)", "~/.bashrc"),
    ],
)
def test_an_allow_rule_that_names_the_path_allows_it(
    workspace: Path, rule: str, path: str, mode: PermissionMode
) -> None:
    policy = _policy(workspace, mode, allow=[rule])
    assert policy.decide("Write", {"file_path": path, "content": "x"}).behavior == "allow"
    bash = policy.decide("Bash", {"command": f"echo x > {path}"}).behavior
    # A Bash allow rule only covers writes inside the workspace; outside it only bypassPermissions allows them.
    assert bash == ("allow" if not path.startswith("~") or mode == "bypassPermissions" else FILE_TOOL[mode])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "rule", ["Edit", "Write", "Edit(./**)", "Edit(**)", "Edit(./.cl*/**)", "Edit(**/settings.json)"]
)
def test_a_blanket_allow_rule_does_not_name_a_protected_path(workspace: Path, rule: str, mode: PermissionMode) -> None:
    policy = _policy(workspace, mode, allow=[rule])
    outcome = policy.decide("Write", {"file_path": ".claude/settings.json", "content": "x"})
    assert outcome.behavior == ("deny" if mode == "dontAsk" else "ask"), outcome


@pytest.mark.parametrize("mode", MODES)
def test_a_deny_rule_still_denies_a_protected_path(workspace: Path, mode: PermissionMode) -> None:
    policy = PermissionPolicy(allow=["Edit(./.git/**)"], deny=["Edit(./.git/config)"], mode=mode, workspace=workspace)
    outcome = policy.decide("Write", {"file_path": ".git/config", "content": "x"}, hooks=[HOOK_ALLOW])
    assert outcome.behavior == "deny"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", [".git/config", ".claude/settings.json", ".mcp.json"])
def test_reads_of_protected_paths_are_unchanged(workspace: Path, path: str, mode: PermissionMode) -> None:
    assert _policy(workspace, mode).decide("Read", {"file_path": path}).behavior == "allow"
    assert _policy(workspace, mode).decide("Bash", {"command": f"echo < {path}"}).behavior == "allow"


ACCEPT_EDITS_DEFAULT: dict[PermissionMode, str] = {
    "default": "ask",
    "acceptEdits": "allow",
    "plan": "deny",
    "bypassPermissions": "allow",
    "dontAsk": "deny",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", CONTROLS)
def test_look_alike_names_are_not_protected(workspace: Path, path: str, mode: PermissionMode) -> None:
    policy = _policy(workspace, mode)
    assert policy.decide("Write", {"file_path": path, "content": "x"}).behavior == ACCEPT_EDITS_DEFAULT[mode]
    assert policy.decide("Write", {"file_path": path, "content": "x"}, hooks=[HOOK_ALLOW]).behavior == "allow"
    assert policy.decide("Bash", {"command": f"echo x > {path}"}).behavior == "allow"


def test_the_reason_names_the_protected_path(workspace: Path) -> None:
    outcome = _policy(workspace, "bypassPermissions").decide("Write", {"file_path": ".git/config", "content": ""})
    assert outcome.behavior == "ask"
    assert outcome.decided_by == "protected path"
    assert ".git" in outcome.reason


def test_hookloop_home_is_protected(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hl-home"
    monkeypatch.setenv("HOOKLOOP_HOME", str(home))
    policy = PermissionPolicy(mode="bypassPermissions", workspace=workspace)
    assert policy.decide("Write", {"file_path": str(home / "trusted.json"), "content": ""}).behavior == "ask"


def test_a_symlink_into_a_protected_directory_is_protected(workspace: Path) -> None:
    (workspace / "innocent").symlink_to(workspace / ".git" / "hooks")
    policy = _policy(workspace, "bypassPermissions")
    assert policy.decide("Write", {"file_path": "innocent/pre-commit", "content": ""}).behavior == "ask"
    assert policy.decide("Bash", {"command": "echo x > innocent/pre-commit"}).behavior == "ask"
