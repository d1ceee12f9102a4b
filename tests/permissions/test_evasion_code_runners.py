"""Red-team corpus: programs that run commands named in their arguments, which the tables did not know.

* ``sqlite3 DB SQL…``: dot-commands (``.shell``, ``.system``, ``.output FILE``, ``.load``) and SQL functions
  (``writefile``, ``edit(x, EDITOR)``, ``load_extension``) run commands or write files; without SQL it reads its
  commands from standard input (``echo '.shell rm x' | sqlite3 db``), like an interpreter.
* ``rg --pre CMD`` runs CMD on every file searched; ``fd -x CMD`` / ``-X CMD`` like ``find -exec``.
* ``make -f -`` (``/dev/stdin``) reads its makefile, recipes included, from standard input.

Under narrow allow rules such a command is not covered (the mode decides); deny rules scan its text; code read
from a pipe matches every deny rule. Ordinary uses keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import ALLOW, ASK, DENY, Case, Rules, check_case

RULES = Rules(allow=(*ALLOW, "Bash(sqlite3:*)", "Bash(rg:*)", "Bash(fd:*)"), ask=ASK, deny=DENY)

DENIED = [
    "sqlite3 x.db '.shell rm -rf x'",
    "sqlite3 x.db 'select 1; .system touch y'",
    "sqlite3 x.db \"select edit('', 'rm -rf x');\"",
    "sqlite3 -cmd '.shell rm x' x.db .tables",
    "echo '.shell rm x' | sqlite3 x.db",
    "cat cmds | sqlite3 x.db",
    "rg --pre rm pattern .",
    "rg --pre=touch pattern .",
    "fd -x rm",
    "fd -e tmp --exec-batch rm -f",
    "echo 'x:;@rm -rf y' | make -f - x",
    "cat mk | make --file=/dev/stdin x",
    "cat mk | make -f/dev/stdin x",
]
UNMATCHED = [
    "sqlite3 x.db '.system ./x'",
    "sqlite3 x.db \"select writefile('out', 'x');\"",
    "sqlite3 x.db \"attach 'other.db' as o;\"",
    "sqlite3 x.db '.load ./evil'",
    "sqlite3 x.db < schema.sql",
    "rg --pre ./pre.sh pattern .",
    "fd -x ./x.sh",
    "make -f - x <<'EOF'\nx:\n\t@echo hi\nEOF",
]
ALLOWED = [
    "sqlite3 x.db 'select count(*) from t;'",
    "sqlite3 x.db .tables",
    "sqlite3 -header -separator , x.db 'select * from t;'",
    "sqlite3 x.db '.schema t'",
    "rg -n TODO src",
    "rg --pretty TODO",  # a real option that is not --pre
    "fd -e py",
    "make test",
    "make -f build.mk all",
]

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_code_runners_get_their_decision_in_every_mode(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
