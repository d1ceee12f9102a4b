"""Red-team corpus: a file a build tool, test runner or hook manager runs, written in the same command as the run;
and git's ``ext::`` URLs.

``printf … > conftest.py; python3 -m pytest`` (pytest imports conftest.py), ``… > .pre-commit-config.yaml; git
commit`` (the pre-commit hook runs its ``entry``), ``… > noxfile.py; nox``, ``… > Gemfile; bundle install``,
``… > CMakeLists.txt; cmake .`` run code the analysis never sees, like ``… > Makefile; make``
(:mod:`test_evasion_write_then_run_unknown`): they now match every deny rule. ``git clone 'ext::sh -c …'`` runs
the command the URL names (``protocol.ext.allow`` given by ``-c``, the environment or a configuration written
earlier): a program only known at run time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules(allow=(*Rules().allow, "Bash(nox:*)", "Bash(bundle:*)", "Bash(cmake:*)", "Bash(composer:*)"))

DENIED_RUN = [
    "printf 'import os\\nos.system(\"t\" + \"ouch pwned\")\\n' > conftest.py; printf 'def test_x(): pass\\n' > "
    "test_x.py; python3 -m pytest -q -p no:cacheprovider",
    'git -c protocol.ext.allow=always clone \'ext::sh -c "t""ouch"% pwned\' x',
]
DENIED = [
    *DENIED_RUN,
    "printf 'x' > .pre-commit-config.yaml && git add -A && git commit -m x",
    "printf 'x' > lefthook.yml; git commit -m x",
    "printf 'x' > noxfile.py; nox",
    "printf 'x' > Gemfile; bundle install",
    "printf 'x' > CMakeLists.txt; cmake .",
    "printf '{}' > composer.json; composer install",
    "printf 'x' > tasks.py; invoke build",
    "git fetch 'ext::sh -c x'",
]
ALLOWED = ["git status > out.txt; git log", "python3 -m pytest -q > test.log", "printf x > notes.txt; git commit -m x"]

CASES = [Case(c, "deny", RULES) for c in DENIED] + [Case(c, "allow", RULES) for c in ALLOWED]


@pytest.mark.parametrize("case", CASES, ids=[case.command[:70] for case in CASES])
def test_a_project_file_written_and_run_in_one_command_matches_every_deny_rule(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN, ids=[command[:60] for command in DENIED_RUN])
def test_each_attack_really_runs_the_hidden_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert list(tmp_path.rglob("pwned")), (command, output)
