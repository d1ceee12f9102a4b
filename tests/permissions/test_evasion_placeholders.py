"""Red-team corpus: commands whose words are replaced by input lines or file names before they run.

``printf 't\\x6fuch pwned\\n' | xargs -I{} sh -c '{}'`` runs each input line as a shell command (``-i``,
``--replace=R`` too); ``xargs -I{} {}`` runs it as a program; ``find … -exec sh -c '{}' \\;`` runs file names;
``parallel`` without a command (``cat cmds | parallel``, ``parallel ::: CMD``) runs its input or arguments as
commands. The analysis read ``{}`` as a literal word — a program named ``{}`` — so a hook's allow or
``bypassPermissions`` let the hidden program past ``Bash(touch:*)``. Now a word holding the replacement string is
only known at run time in the command deny rules look at (a program or shell string only known at run time matches
every deny rule), and a ``parallel`` with no command runs a program only known at run time. ``xargs -I{} cp {} d``
and ``find -exec grep x {} +`` keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules(allow=(*Rules().allow, "Bash(parallel:*)", "Bash(cp:*)"))

DENIED_RUN = [
    "printf 't\\x6fuch pwned\\n' | xargs -I{} sh -c '{}'",
    "printf 't\\x6fuch pwned\\n' | xargs -I % bash -c %",
    "printf 't\\x6fuch pwned\\n' | xargs -i sh -c '{}'",
    "printf 't\\x6fuch pwned\\n' | xargs --replace=Q sh -c 'Q'",
    "printf 't\\x6fuch pwned\\n' | xargs -I{} sh -c 'echo start; {}'",
]
DENIED = [
    *DENIED_RUN,
    "find . -name '*.sh' -exec sh -c '{}' \\;",
    "printf 't\\x6fuch pwned\\n' | parallel",
    "parallel ::: 't\\x6fuch pwned'",
    "parallel -j2 ::: 'echo a' 'echo b'",
]
UNMATCHED = [  # code runners: no narrow allow rule covers them, as before
    "ls | xargs -I{} cp {} /tmp/x",
    "parallel -j4 gzip ::: a.log b.log",
    "find . -name '*.py' -exec grep -l x {} +",
    "ls | xargs grep x",
    "find . -type f -exec wc -l {} \\;",
]

CASES = [Case(c, "deny", RULES) for c in DENIED] + [Case(c, "unmatched", Rules()) for c in UNMATCHED]


@pytest.mark.parametrize("case", CASES, ids=[case.command[:70] for case in CASES])
def test_a_word_replaced_by_input_is_only_known_at_run_time(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN)
def test_each_attack_really_runs_the_hidden_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert list(tmp_path.rglob("pwned")), (command, output)
