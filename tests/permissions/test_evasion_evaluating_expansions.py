"""Red-team corpus: parameter expansions that evaluate a variable's value as a name or as arithmetic.

``${!x}`` (indirect expansion) reads the variable *named by* x's value, and bash evaluates an array subscript in
that name — ``x='a[$(touch y)]'; echo ${!x}`` runs ``touch y``; ``${x:o}`` and ``${x:1:n}`` (substring offset and
length) are arithmetic, where a variable's value may hold such a subscript too. Like ``${x@P}`` (a previous round)
each ran a program the analysis never saw under ``Bash(echo:*)`` alone; now it is a program only known at run time,
matching every deny rule. Numeric substrings (``${x:1:2}``, ``${x: -2}``), the ``:-``/``:=``/``:+``/``:?`` forms and
``${!prefix*}`` keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules()
_PAYLOAD = "p='a[$(printf \"\\164ouch pwned\" | sh)]'; "  # `touch`, hidden from a text scan, run by a subscript

DENIED_RUN = [
    _PAYLOAD + "echo ${!p}",
    _PAYLOAD + 'echo "${!p}"',
    _PAYLOAD + "echo ${!p:-default}",
    _PAYLOAD + "x=abc; echo ${x:p}",
    _PAYLOAD + "x=abc; echo ${x:0:p}",
    _PAYLOAD + "set -- a b; echo ${@:p}",
]
ALLOWED = ["x=abc; echo ${x:1:2}", "x=abc; echo ${x: -2}", 'echo "${x:-d}"', "echo ${x:+y}", "echo ${!HOOK*}"]

CASES = [Case(c, "deny", RULES) for c in DENIED_RUN] + [Case(c, "allow", RULES) for c in ALLOWED]


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_an_expansion_evaluating_a_value_matches_every_deny_rule(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN)
def test_each_attack_really_runs_the_hidden_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)
