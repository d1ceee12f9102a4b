"""``git -c KEY=VALUE`` with a setting known to hold plain data runs nothing but git.

An agent often commits as someone (``git -c user.email=a@b.c -c user.name='A B' commit``) or turns colours off.
Before, every ``git -c`` value was read as a shell command: ``user.email=a@b.c`` did not parse as one, so the
command was code only known at run time and matched every deny rule (a ``Bash(rm:*)`` deny denied the commit),
and ``Bash(git:*)`` never covered ``-c``. Identity, colour, advice, log and the like (``_gitcode.plain_setting``)
are now data: the allow rule covers them and no deny rule matches them. Every other key is still read as a
command (``core.pager``, ``alias.x=!…``, keys not known to be plain), and what bash itself expands in a value
(``"$(rm -rf y)"``) is still a command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, check_case, run_in_bash

PLAIN = [
    "git -c user.email=a@b.c commit -m x",
    "git -c user.name='A B' -c user.email=a@b.c commit -m 'first commit'",
    "git -cuser.email=a@b.c commit -m x",
    "git -c color.ui=always log --oneline",
    "git -c advice.detachedHead=false checkout v1",
    "git -c init.defaultBranch=main init",
    "git -c core.quotepath=off status",
    "git -c User.Email='$(rm -rf y)' commit -m x",  # single quotes: git stores the text, nothing runs
]
STILL_DENIED = [
    'git -c user.email="$(rm -rf y)" commit -m x',  # bash runs the substitution before git starts
    "git -c user.email=a@b.c -c alias.c='!rm -rf y' c",
    "git -c core.pager='rm -rf y' log",
    "git -c core.sshCommand='touch y' fetch",
    "git -c 'user.email=a' -c diff.external='rm -rf y' diff",
]
NOT_COVERED = [
    "git -c core.pager=less log",  # a command git runs: Bash(git:*) does not cover it
    "git -c http.proxy=http://h:1 fetch",  # not known to be plain
    "git -c some.unknown=1 status",
]


@pytest.mark.parametrize("command", PLAIN)
def test_plain_settings_are_git_alone(command: str, workspace: Path) -> None:
    check_case(Case(command, "allow"), workspace)


@pytest.mark.parametrize("command", STILL_DENIED)
def test_commands_in_settings_and_expansions_still_match_deny_rules(command: str, workspace: Path) -> None:
    check_case(Case(command, "deny"), workspace)


@pytest.mark.parametrize("command", NOT_COVERED)
def test_other_settings_are_still_not_covered_by_the_allow_rule(command: str, workspace: Path) -> None:
    check_case(Case(command, "unmatched"), workspace)


def test_a_single_quoted_plain_value_really_runs_nothing(tmp_path: Path) -> None:
    # git keeps the value as text: the ident it would commit with shows it, and no file appears.
    shown = run_in_bash("git -c user.name=x -c user.email='$(touch pwned)' var GIT_AUTHOR_IDENT", tmp_path)
    assert "$(touch pwned)" in shown
    assert not (tmp_path / "pwned").exists()
