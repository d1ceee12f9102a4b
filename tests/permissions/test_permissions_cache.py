"""The policy memoises what Bash command patterns say about a command: a cached answer must never go stale.

The memo is keyed by the command and rebuilt when a rule is added; everything else a decision depends on
(the mode, the working directory, the files redirections open, the sandbox) is evaluated again each time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop.permissions import PermissionPolicy

ALLOW = ["Bash(git status:*)", "Bash(git:*)", "Bash(ls:*)", "Bash(echo:*)", "Bash(* --help)", "Bash(cat:*)"]
ASK = ["Bash(git push:*)", "Edit(./package.json)"]
DENY = ["Bash(rm -rf:*)", "Bash(curl:*)", "Read(./.env)"]


def _policy(workspace: Path) -> PermissionPolicy:
    return PermissionPolicy(allow=ALLOW, ask=ASK, deny=DENY, workspace=workspace)


def _bash(policy: PermissionPolicy, command: str, cwd: str | None = None) -> tuple[str, str | None]:
    """The decision's behaviour and the rule :meth:`check` reports (``None``: no rule matched)."""
    outcome = policy.decide("Bash", {"command": command}, cwd=cwd)
    match = policy.check("Bash", {"command": command}, cwd=cwd)
    return outcome.behavior, None if match is None else match.rule


def test_a_deny_rule_added_after_a_cached_decision_applies(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert _bash(policy, "ls -la && echo hi") == ("allow", "Bash(ls:*)")
    assert _bash(policy, "ls -la && echo hi") == ("allow", "Bash(ls:*)")
    policy.add_session_rule("deny", "Bash(echo:*)")
    assert _bash(policy, "ls -la && echo hi") == ("deny", "Bash(echo:*)")


def test_an_ask_rule_added_after_a_cached_decision_applies(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert _bash(policy, "git log -n 3")[0] == "allow"
    policy.add_session_rule("ask", "Bash(git log:*)")
    assert _bash(policy, "git log -n 3") == ("ask", "Bash(git log:*)")


def test_an_allow_rule_added_after_a_cached_decision_applies(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert _bash(policy, "ls && make test")[0] == "ask"  # make is not allowed: the default mode asks
    assert _bash(policy, "ls && make test")[0] == "ask"
    policy.add_session_rule("allow", "Bash(make test)")
    assert _bash(policy, "ls && make test") == ("allow", "Bash(ls:*)")
    assert _bash(policy, "make test") == ("allow", "Bash(make test)")


def test_a_mode_change_after_a_cached_decision_applies(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert _bash(policy, "make")[0] == "ask"
    policy.mode = "bypassPermissions"
    assert _bash(policy, "make")[0] == "allow"
    policy.mode = "plan"
    assert _bash(policy, "make")[0] == "deny"


def test_a_file_changed_after_a_cached_decision_is_seen(tmp_path: Path) -> None:
    # The redirect target is resolved on every decision: a symlink planted after the first one is followed.
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    policy = _policy(workspace)
    assert _bash(policy, "echo hi > out.txt") == ("allow", "Bash(echo:*)")
    os.symlink(outside / "victim", workspace / "out.txt")
    assert _bash(policy, "echo hi > out.txt")[0] == "ask"
    os.unlink(workspace / "out.txt")
    os.symlink(workspace / ".env", workspace / "log")
    assert _bash(policy, "cat < log") == ("deny", "Read(./.env)")


def test_the_working_directory_of_each_call_is_used(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    policy = _policy(workspace)
    assert _bash(policy, "echo x > ../f", cwd="sub") == ("allow", "Bash(echo:*)")
    assert _bash(policy, "echo x > ../f")[0] == "ask"  # from the workspace, ../f is outside it


def test_the_first_rule_covering_the_first_subcommand_is_reported(tmp_path: Path) -> None:
    # A pattern starting with `*` can cover any program; rule order decides which rule is reported.
    policy = _policy(tmp_path)
    policy.add_session_rule("allow", "Bash(make)")
    for _ in range(2):
        assert _bash(policy, "git --help && make") == ("allow", "Bash(git:*)")
        assert _bash(policy, "make --help && make") == ("allow", "Bash(* --help)")
        assert _bash(policy, "make && make --help") == ("allow", "Bash(make)")


def test_non_bash_calls_are_not_answered_from_the_memo(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert _bash(policy, "cat .env") == ("allow", "Bash(cat:*)")  # like Claude Code: command rules only
    read: Mapping[str, object] = {"file_path": str(tmp_path / ".env"), "command": "ls"}
    assert policy.decide("Read", read).behavior == "deny"


_WORDS = st.sampled_from(
    ["git", "status", "push", "ls", "-la", "rm", "-rf", "/", "echo", "hi", "cat", ".env", "make", "--help",
     "curl", "$X", "'rm'", "\"$(ls)\"", "sudo", "bash", "-c", "'rm -rf /'"]
)  # fmt: skip
_SEPARATORS = st.sampled_from([" && ", " || ", "; ", " | ", " > out ", " < .env ", " >> ~/.bashrc "])


@st.composite
def _commands(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.lists(_WORDS, min_size=1, max_size=4), min_size=1, max_size=4))
    command = " ".join(parts[0])
    for words in parts[1:]:
        command += draw(_SEPARATORS) + " ".join(words)
    return command


@settings(max_examples=150, deadline=None)
@given(commands=st.lists(_commands(), min_size=1, max_size=6), extra=st.sampled_from(["Bash(make:*)", "Bash(rm:*)"]))
def test_a_used_policy_decides_as_a_fresh_one(
    tmp_path_factory: pytest.TempPathFactory, commands: list[str], extra: str
) -> None:
    workspace = tmp_path_factory.getbasetemp()
    used = _policy(workspace)
    for command in commands:
        used.decide("Bash", {"command": command})
    used.add_session_rule("allow", extra)
    for command in commands:
        fresh = _policy(workspace)
        fresh.add_session_rule("allow", extra)
        expected = fresh.decide("Bash", {"command": command})
        for _ in range(2):
            assert used.decide("Bash", {"command": command}) == expected, command
