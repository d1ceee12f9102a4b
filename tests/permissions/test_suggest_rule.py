"""Issue 10 item 7: ``suggest_rule`` proposes the narrowest rule covering a call, never a whole-tool Bash rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy, suggest_rule


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    return ws


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("npm test", "Bash(npm test:*)"),
        ("npm test -- --watch", "Bash(npm test:*)"),
        ("npm run build", "Bash(npm run build:*)"),
        ("git status", "Bash(git status:*)"),
        ("git commit -m 'x y'", "Bash(git commit:*)"),
        ("cargo build --release", "Bash(cargo build:*)"),
        ("FOO=1 make test", "Bash(make test:*)"),
        ("ls -la", "Bash(ls:*)"),
        ("pytest -q tests", "Bash(pytest:*)"),
        ("npm test && npm test -- --ci", "Bash(npm test:*)"),
        ("timeout 30 npm test", "Bash(npm test:*)"),
        ("ls > listing.txt", "Bash(ls:*)"),
    ],
)
def test_bash_rules(workspace: Path, command: str, rule: str) -> None:
    assert suggest_rule("Bash", {"command": command}, workspace) == rule
    # the proposed rule really allows the command (and not a different program)
    policy = PermissionPolicy(allow=[rule], workspace=workspace)
    assert policy.decide("Bash", {"command": command}).behavior == "allow"
    assert policy.decide("Bash", {"command": "rm -rf /"}).behavior == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git status && ls",  # two programs: no single rule
        "python -c 'import os'",
        "bash script.sh",
        "sudo ls",
        "xargs rm",
        "git -c core.pager=x log",  # options before the subcommand
        "echo x > $F",
        "echo x > .git/config",
        "$CMD",
        "ls; rm -rf /",
        "f() { ls; }",
    ],
)
def test_no_rule_rather_than_a_broad_one(workspace: Path, command: str) -> None:
    assert suggest_rule("Bash", {"command": command}, workspace) is None


@pytest.mark.parametrize(
    ("tool", "arguments", "rule"),
    [
        ("Edit", {"file_path": "src/pkg/mod.py"}, "Edit(./src/pkg/**)"),
        ("Write", {"file_path": "notes.md"}, "Edit(./notes.md)"),
        ("Read", {"file_path": "/etc/hosts"}, "Read(//etc/**)"),
        ("Read", {"file_path": "src/pkg/mod.py"}, "Read(./src/pkg/**)"),
        ("Grep", {"pattern": "x", "path": "src"}, "Read(./src/**)"),
        ("Write", {"file_path": ".claude/settings.json"}, "Edit(./.claude/settings.json)"),
        ("WebFetch", {"url": "https://docs.example.com/a"}, "WebFetch(domain:docs.example.com)"),
        ("mcp__github__create_issue", {}, "mcp__github__create_issue"),
    ],
)
def test_other_tools(workspace: Path, tool: str, arguments: dict[str, object], rule: str) -> None:
    assert suggest_rule(tool, arguments, workspace) == rule
    policy = PermissionPolicy(allow=[rule], mode="bypassPermissions", workspace=workspace)
    assert policy.decide(tool, arguments).behavior == "allow"


def test_a_path_with_glob_characters_gets_no_rule(workspace: Path) -> None:
    assert suggest_rule("Edit", {"file_path": "src/[x]/a.py"}, workspace) is None
