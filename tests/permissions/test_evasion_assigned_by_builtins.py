"""Red-team corpus: PATH, LD_PRELOAD and the other variables that choose what runs, assigned without ``NAME=``.

``PATH=/tmp/x ls`` runs a program only known at run time, and the analysis knew it; but bash assigns variables in
more ways: ``read PATH``, ``printf -v PATH …``, ``mapfile PATH``, ``getopts … PATH``, ``for PATH in …``, ``:
${PATH:=…}``, a name reference (``declare -n r=PATH; r=…``) — and ``fc -s`` re-runs commands from the history.
``printf -v PATH %s "$PWD/d"; ls`` was allowed by ``Bash(printf:*)`` and ``Bash(ls:*)`` alone and ran ``d/ls``.
Now each counts like the assignment it is (for PATH, LD_PRELOAD, BASH_ENV …: a program only known at run time,
matching every deny rule; for the variables that only change what a program does: not covered by a narrow allow
rule), and a builtin assigning a variable whose name is only known at run time may assign any of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions._shell import analyse
from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules(allow=(*Rules().allow, "Bash(read:*)", "Bash(mapfile:*)", "Bash(getopts:*)", "Bash(fc:*)"))
_FAKE_LS = "mkdir -p d && printf '#!/bin/sh\\n\\164ouch pwned\\n' > d/ls && chmod +x d/ls; "

#: Each really runs d/ls (which touches `pwned`) instead of ls (checked in real bash below).
DENIED_RUN = [
    _FAKE_LS + 'printf -v PATH %s "$PWD/d:$PATH"; ls',
    _FAKE_LS + 'printf -vPATH %s "$PWD/d:$PATH"; ls',
    _FAKE_LS + 'read -r PATH <<< "$PWD/d:$PATH"; ls',
    _FAKE_LS + 'for PATH in "$PWD/d:$PATH"; do ls; done',
    _FAKE_LS + 'declare -n r=PATH; r="$PWD/d:$PATH"; ls',
    _FAKE_LS + 'unset PATH; : ${PATH:="$PWD/d"}; ls',
]
DENIED = [
    *DENIED_RUN,
    "read -a LD_PRELOAD <<< ./x.so; ls",
    'mapfile -t PATH <<< "$PWD/d:$PATH"; ls',
    "getopts p: PATH -p; ls",
    "typeset -n r=LD_PRELOAD; r=./x.so; export LD_PRELOAD; ls",
    "set -a; : ${LD_PRELOAD:=./x.so}; ls",
    "select BASH_ENV in ./x; do bash -c true; done",
    'read "$name" <<< /tmp/x; ls',
    ': "${PATH:=/tmp/x}"; ls',
    "set -o history; history -s 'x'; fc -s",
    "fc -e - ls",
]
UNMATCHED = ["read -r GIT_DIR < f; git status", "for PAGER in cat; do git log; done"]  # only what git does: unsafe
ALLOWED = [
    'printf -v out "%s" x; echo "$out"',
    'for f in a b; do echo "$f"; done',
    "read -r -p 'name? ' ans",
    "read -a arr <<< 'a b'",
    "mapfile -t lines < f",
    "fc -l",
]

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command[-70:] for case in CASES])
def test_a_variable_choosing_what_runs_assigned_by_a_builtin_counts_as_assigned(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN, ids=[command[-60:] for command in DENIED_RUN])
def test_each_attack_really_runs_the_planted_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)


def test_the_reasons_name_the_builtin() -> None:
    assert "printf assigns PATH" in analyse("printf -v PATH x; ls").unknown_reasons
    assert "a loop assigns PATH" in analyse("for PATH in x; do ls; done").unknown_reasons
    assert "a name reference to PATH" in analyse("declare -n r=PATH; r=x; ls").unknown_reasons
