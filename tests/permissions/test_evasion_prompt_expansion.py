"""Red-team corpus: ``${x@P}`` and variable names with subscripts — places where bash runs a ``$(…)`` from a value.

``x='$(touch pwned)'; echo ${x@P}`` runs ``touch``: the analysis sees only a quoted string and an ``echo``, so the
program is only known at run time and every deny rule matches (as for ``eval "$x"``). Other ``@`` operators
(``@Q``, ``@E``, ``@A`` …) do not run anything; a quoted ``'${x@P}'`` is text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules()

DENIED = [
    "x='$(touch pwned)'; echo ${x@P}",
    "x='$(touch pwned)'; echo \"${x@P}\"",
    "printf -v y '%s' '$(touch pwned)'; echo ${y@P}",
    "a=(z); a[0]='$(touch pwned)'; echo ${a[0]@P}",
    "x='$(touch pwned)'; echo ${u:-${x@P}}",
    "x='`touch pwned`'; echo ${x@P}",
]
ALLOWED = [
    "echo '${x@P}'",
    "echo ${x@Q}",
    "echo ${HOME}",
    "echo ${x:-default}",
]

CASES = [Case(c, "deny", RULES) for c in DENIED] + [Case(c, "allow", RULES) for c in ALLOWED]


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_a_prompt_expansion_runs_a_program_only_known_at_run_time(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED)
def test_each_denied_command_really_runs_the_substitution(command: str, tmp_path: Path) -> None:
    """The attacks are real: bash runs the `touch` hidden in the value."""
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)


SUBSCRIPT_DENIED = [
    "printf -v 'a[$(touch pwned)]' x",
    "read 'a[$(touch pwned)]' <<< x",
    "read -r 'a[`touch pwned`]' <<< x",
    "declare 'a[$(touch pwned)]=1'",
]
SUBSCRIPT_ALLOWED = [
    "printf '[$HOME]\\n'",
    "printf -v out '%s' x",
    "read -r line <<< x",
    "read -rp 'Name [$USER]: ' n <<< x",
    "declare x='[$y]'",
    "unset 'a[1]'",
]
SUBSCRIPT_RULES = Rules(allow=("Bash(printf:*)", "Bash(read:*)", "Bash(declare:*)", "Bash(unset:*)"))
SUBSCRIPT_CASES = [Case(c, "deny", SUBSCRIPT_RULES) for c in SUBSCRIPT_DENIED] + [
    Case(c, "allow", SUBSCRIPT_RULES) for c in SUBSCRIPT_ALLOWED
]


@pytest.mark.parametrize("case", SUBSCRIPT_CASES, ids=[case.command for case in SUBSCRIPT_CASES])
def test_a_variable_name_with_a_subscript_to_evaluate_runs_a_program_only_known_at_run_time(
    case: Case, workspace: Path
) -> None:
    """``read``, ``printf -v``, ``declare`` … evaluate an array subscript in the name they are given, running the
    ``$(…)`` in it even from a quoted literal; a prompt or format string is not a name."""
    check_case(case, workspace)


@pytest.mark.parametrize("command", SUBSCRIPT_DENIED)
def test_each_subscript_attack_really_runs(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)
