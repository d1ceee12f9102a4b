"""Red-team corpus: a variable whose value a program runs as a command line, set to a value only known at run time.

``GIT_EDITOR="$C" git commit``, ``GIT_SSH_COMMAND="$C" git fetch``, ``PAGER="$P" git log``, ``LESSOPEN="|$X %s"
less f``, ``GIT_CONFIG_VALUE_0="$X"`` (git configuration given in the environment, e.g. ``core.editor``),
``export GIT_EDITOR="$C"; git commit``: git, less and the rest run that value through a shell, so the program is
only known at run time. Before, such an assignment only made the command unanalysable (no narrow allow rule
covers it), and a hook's allow, a whole-tool ``Bash`` allow or ``bypassPermissions`` let the hidden program past
``Bash(rm:*)``-style deny rules; now it matches every deny rule. A literal value is read as a script for deny
and ask rules (``GIT_SSH_COMMAND='$(printf …) x'``: the substitution runs when git hands it to a shell).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions._shell import analyse
from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules()
_REPO = "git init -q r && cd r && C=\"$(printf '\\164ouch') ../pwned;:\"; "  # `touch`, hidden from a text scan
_WHO = "-c user.name=a -c user.email=a"

#: Each really runs `touch pwned` through git (checked in real bash below).
DENIED_RUN = [
    _REPO + f'GIT_EDITOR="$C" git {_WHO} commit -q --allow-empty',
    _REPO + f'EDITOR="$C" git {_WHO} commit -q --allow-empty',
    _REPO + f'VISUAL="$C" git {_WHO} commit -q --allow-empty',
    _REPO + f'export GIT_EDITOR="$C"; git {_WHO} commit -q --allow-empty',
    _REPO + f'declare -x GIT_EDITOR="$C"; git {_WHO} commit -q --allow-empty',
    _REPO
    + f'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.editor GIT_CONFIG_VALUE_0="$C" git {_WHO} commit -q --allow-empty',
    _REPO + f"GIT_EDITOR='$(printf \"\\164ouch ../pwned\");:' git {_WHO} commit -q --allow-empty",
]
DENIED = [
    *DENIED_RUN,
    'GIT_SSH_COMMAND="$C" git fetch origin',
    'GIT_SSH="$S" git pull',
    'GIT_PAGER="$P" git log',
    'PAGER="$P" git log',
    'GIT_EXTERNAL_DIFF="$D" git diff',
    'GIT_ASKPASS="$A" git push',
    'SSH_ASKPASS="$A" ssh host',
    'LESSOPEN="|$X %s" less f',
    'MANPAGER="$M" man ls',
    'RUSTC_WRAPPER="$W" cargo build',
    'CC="$CC" make',
    'env GIT_PAGER="$C" git log',
    'GIT_CONFIG_VALUE_0="$X" GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_COUNT=1 git log',
    "GIT_SSH_COMMAND='$(printf \"\\x74ouch\") x' git fetch",
]
UNMATCHED = [  # literal values: not covered by the narrow allow rules, as before; nothing hidden
    "GIT_PAGER=cat git log",
    "EDITOR=vim git commit",
    "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy' git fetch",
]
ALLOWED = ["git log", 'echo "$PAGER"', 'git commit -m "$MSG"']

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_a_command_variable_only_known_at_run_time_matches_every_deny_rule(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN)
def test_each_attack_really_runs_the_hidden_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)


def test_the_reason_names_the_variable() -> None:
    assert "GIT_SSH_COMMAND holds a command only known at run time" in analyse(DENIED[7]).unknown_reasons
