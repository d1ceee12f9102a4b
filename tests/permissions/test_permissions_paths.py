"""Path patterns for Read/Edit/Write/Glob/Grep rules: anchors, gitignore globbing, `..`, symlinks, `~`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text("k")
    (ws / "src" / "pkg" / "mod.py").write_text("")
    return ws


def read(path: str | Path) -> dict[str, object]:
    return {"file_path": str(path)}


def edit(path: str | Path) -> dict[str, object]:
    return {"file_path": str(path), "old_string": "a", "new_string": "b"}


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("Read(./secrets/**)", "secrets/key", True),
        ("Read(./secrets/**)", "src/pkg/mod.py", False),
        ("Read(secrets/**)", "secrets/key", True),
        ("Read(./secrets)", "secrets/key", True),  # a matching directory covers its contents
        ("Read(./secrets/)", "secrets/key", True),
        ("Read(./secrets/)", "secrets", False),  # trailing slash: only what is inside
        ("Read(*.env)", ".env", True),  # as in gitignore, `*` may match nothing
        ("Read(*.env)", "prod.env", True),
        ("Read(*.env)", "src/pkg/prod.env", True),  # no slash in the pattern: any depth
        ("Read(./*.env)", "src/pkg/prod.env", False),  # anchored
        ("Read(.env)", "src/.env", True),
        ("Read(src/*.py)", "src/pkg/mod.py", False),  # `*` stays within one segment
        ("Read(src/**/*.py)", "src/pkg/mod.py", True),
        ("Read(src/**/*.py)", "src/top.py", True),  # `**` spans zero segments too
        ("Read(./src/p?g/**)", "src/pkg/mod.py", True),
        ("Read(./src/[pq]kg/**)", "src/pkg/mod.py", True),
        ("Read(../ws/secrets/**)", "secrets/key", True),  # `..` in the rule climbs out of the workspace
    ],
)
def test_relative_patterns(workspace: Path, rule: str, path: str, matches: bool) -> None:
    policy = PermissionPolicy(deny=[rule], workspace=workspace)
    assert (policy.check("Read", read(path)) is not None) is matches


def test_tool_paths_given_absolute_and_relative_are_the_same_file(workspace: Path) -> None:
    policy = PermissionPolicy(deny=["Read(./secrets/**)"], workspace=workspace)
    assert policy.check("Read", read(workspace / "secrets" / "key")) is not None
    assert policy.check("Read", read("./secrets/key")) is not None


@pytest.mark.parametrize(
    "path",
    ["src/../secrets/key", "./src/pkg/../../secrets/key", "secrets/./key", "src//../secrets/key"],
)
def test_dotdot_in_tool_paths_is_normalised(workspace: Path, path: str) -> None:
    policy = PermissionPolicy(deny=["Read(./secrets/**)"], allow=["Read(./src/**)"], workspace=workspace)
    match = policy.check("Read", read(path))
    assert match is not None
    assert match.behavior == "deny"


def test_dotdot_cannot_escape_an_allow_rule(workspace: Path) -> None:
    policy = PermissionPolicy(allow=["Edit(./src/**)"], workspace=workspace)
    assert policy.check("Edit", edit("src/pkg/mod.py")) is not None
    assert policy.check("Edit", edit("src/../../outside.txt")) is None


def test_absolute_double_slash_patterns(tmp_path: Path, workspace: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    policy = PermissionPolicy(deny=[f"Read(/{elsewhere}/**)"], workspace=workspace)
    assert policy.check("Read", read(elsewhere / "x")) is not None
    assert policy.check("Read", read(workspace / "x")) is None


def test_single_slash_is_relative_to_the_workspace_for_rules_in_code(workspace: Path) -> None:
    policy = PermissionPolicy(deny=["Read(/secrets/**)"], workspace=workspace)
    assert policy.check("Read", read(workspace / "secrets" / "key")) is not None
    assert policy.check("Read", read("/secrets/key")) is None


def test_home_patterns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    policy = PermissionPolicy(deny=["Read(~/.ssh/**)"], workspace=workspace)
    assert policy.check("Read", read(home / ".ssh" / "id_ed25519")) is not None
    assert policy.check("Read", read("~/.ssh/id_ed25519")) is not None
    assert policy.check("Read", read(home / "notes.txt")) is None


def test_symlink_escape_is_not_allowed_by_an_allow_rule(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root")
    (workspace / "src" / "link").symlink_to(outside / "passwd")
    (workspace / "src" / "dirlink").symlink_to(outside, target_is_directory=True)
    policy = PermissionPolicy(allow=["Edit(./src/**)", "Read(./src/**)"], workspace=workspace)
    assert policy.check("Edit", edit("src/pkg/mod.py")) is not None
    assert policy.check("Edit", edit("src/link")) is None
    assert policy.check("Edit", edit("src/dirlink/new-file")) is None
    # A read through the link is neither allowed by the rule nor by the mode: the real path leaves the workspace.
    outcome = policy.decide("Read", read("src/dirlink/passwd"))
    assert outcome.behavior == "ask"
    assert outcome.decided_by == 'mode "default"'
    assert str((outside / "passwd").resolve()) in outcome.reason


def test_deny_rule_matches_through_symlink_either_way(tmp_path: Path, workspace: Path) -> None:
    (workspace / "alias").symlink_to(workspace / "secrets", target_is_directory=True)
    policy = PermissionPolicy(deny=["Read(./secrets/**)", "Edit(./alias/**)"], workspace=workspace)
    # The link resolves into a denied directory ...
    assert policy.check("Read", read("alias/key")) is not None
    # ... and a rule written on the link's name also denies the resolved target's name given through the link.
    assert policy.check("Edit", edit("alias/key")) is not None


def test_deny_matches_case_insensitively_allow_does_not(workspace: Path) -> None:
    policy = PermissionPolicy(deny=["Read(./secrets/**)"], workspace=workspace)
    assert policy.check("Read", read("SECRETS/key")) is not None
    allow = PermissionPolicy(allow=["Edit(./src/**)"], workspace=workspace)
    assert allow.check("Edit", edit("SRC/pkg/mod.py")) is None


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Glob", {"pattern": "*.key", "path": "secrets"}),
        ("Glob", {"pattern": "secrets/*"}),  # the fixed part of the pattern is a directory the glob reads
        ("Grep", {"pattern": "k", "path": "secrets"}),
        ("LS", {"path": "secrets"}),
        ("NotebookRead", {"notebook_path": "secrets/nb.ipynb"}),
    ],
)
def test_read_rules_cover_every_reading_tool(workspace: Path, tool: str, tool_input: dict[str, object]) -> None:
    policy = PermissionPolicy(deny=["Read(./secrets/**)", "Read(./secrets)"], workspace=workspace)
    assert policy.check(tool, tool_input) is not None


def test_glob_and_grep_without_path_search_the_workspace(workspace: Path) -> None:
    policy = PermissionPolicy(deny=["Read(./secrets/**)"], workspace=workspace)
    assert policy.check("Grep", {"pattern": "x"}) is None
    assert policy.check("Glob", {"pattern": "/etc/*"}) is None
    etc = PermissionPolicy(deny=["Read(//etc/**)", "Read(//etc)"], workspace=workspace)
    assert etc.check("Glob", {"pattern": "/etc/*"}) is not None


@pytest.mark.parametrize("bad", [None, 3, "", "a\x00b"])
def test_unusable_paths_never_match_allow_rules(workspace: Path, bad: object) -> None:
    policy = PermissionPolicy(allow=["Read", "Read(./**)"], workspace=workspace)
    assert policy.check("Read", {"file_path": bad}) == policy.check("Read", {"file_path": "x"})  # bare Read: any
    only_paths = PermissionPolicy(allow=["Read(./**)"], workspace=workspace)
    assert only_paths.check("Read", {"file_path": bad}) is None


def test_workspace_given_through_a_symlink(tmp_path: Path, workspace: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    policy = PermissionPolicy(allow=["Edit(./src/**)"], deny=["Read(./secrets/**)"], workspace=link)
    assert policy.check("Edit", edit(workspace / "src" / "pkg" / "mod.py")) is not None
    assert policy.check("Edit", edit(link / "src" / "pkg" / "mod.py")) is not None
    assert policy.check("Read", read(workspace / "secrets" / "key")) is not None
    assert os.path.realpath(link) == str(workspace.resolve())
