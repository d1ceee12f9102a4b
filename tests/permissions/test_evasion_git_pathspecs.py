"""Red-team corpus: git writes the files a ``checkout``/``restore`` pathspec names, from another commit or the index.

``git checkout evil -- .claude/settings.json``, ``git restore -s evil .husky/pre-commit``, ``git checkout-index -f
.vscode/settings.json`` write protected paths with content the command does not show (a branch prepared earlier,
or a blob put into the index with ``git hash-object``/``update-index`` — no file written at all). ``Bash(git:*)``,
a hook's allow or ``bypassPermissions`` let them through; now the paths they name count as written: a protected
one is asked about behind every allow, an Edit deny rule for one denies. Restoring ordinary files keeps its
decision. (Whole-tree checkouts — ``git checkout main``, ``git checkout -- .`` — are not judged by the names they
write; see the report.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy
from permissions.evasion_harness import HOOK_ALLOW, Case, Rules, check_case, check_guarded, run_in_bash

RULES = Rules()
_WHO = "-c user.name=a -c user.email=a"
_SETUP = (
    f"git init -q -b main . && git {_WHO} commit -q --allow-empty -m init && git checkout -q -b evil && "
    "mkdir -p .claude .husky .vscode && printf '{}' > .claude/settings.json && printf 'touch pwned' > "
    ".husky/pre-commit && printf '{}' > .vscode/settings.json && git add -f .claude .husky .vscode && "
    f"git {_WHO} commit -q -m x && git checkout -q main"
)

#: Each really writes a protected path in a repository prepared by _SETUP (checked below).
GUARDED_RUN = [
    "git checkout evil -- .claude/settings.json",
    "git checkout evil .claude",
    "git restore --source=evil .claude/settings.json",
    "git restore -s evil -- .husky/pre-commit",
    "git restore --source evil --worktree .vscode",
    "h=$(printf '{}' | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$h,.mcp.json "
    "&& git checkout -- .mcp.json",
    "git read-tree evil && git checkout-index -f .claude/settings.json",
]
ALLOWED = ["git checkout main", "git checkout -- src/a.py", "git restore src/a.py", "git checkout -b feature"]


@pytest.mark.parametrize("command", GUARDED_RUN)
def test_a_pathspec_naming_a_protected_path_is_asked_about(command: str, workspace: Path) -> None:
    check_guarded(command, workspace, RULES)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_checkouts_keep_their_decision(command: str, workspace: Path) -> None:
    check_case(Case(command, "allow", RULES), workspace)


@pytest.mark.parametrize("command", GUARDED_RUN)
def test_each_really_writes_the_protected_path(command: str, tmp_path: Path) -> None:
    run_in_bash(_SETUP, tmp_path)
    assert not (tmp_path / ".claude").exists()
    output = run_in_bash(command, tmp_path)
    written = [".claude/settings.json", ".husky/pre-commit", ".vscode/settings.json", ".mcp.json"]
    assert any((tmp_path / name).exists() for name in written), (command, output)


def test_an_edit_deny_rule_for_the_path_denies_restoring_it(workspace: Path) -> None:
    policy = PermissionPolicy(allow=("Bash",), deny=("Edit(./.env)",), mode="bypassPermissions", workspace=workspace)
    for command in ("git checkout HEAD~3 -- .env", "git restore -s HEAD~3 .env"):
        assert policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,)).behavior == "deny", command
