"""Red-team corpus: interpreter code that starts other programs, with the program's name built at run time.

``python3 -c 'import os; os.system("t"+"ouch x")'``, ``node -e 'require("child_"+"process").execSync(…)'``,
``perl -e 'system("t"."ouch x")'``, ``ruby -e '`t#{"ouch"} x`'``, ``php -r '$f="sys"."tem"; $f(…)'``, ``awk
'BEGIN{system("t" "ouch x")}'``, ``sed 's/.*/t&/e'`` (runs its *input* as a command), the same code in a
here-document or here-string: deny rules only scanned the code's text, where ``touch`` never appears whole, so a
hook's allow, a whole-tool ``Bash`` allow or ``bypassPermissions`` ran it past ``Bash(touch:*)``.

Now code given to an interpreter that starts programs or builds code or names at run time (``os.system``,
``subprocess``, ``__import__``, ``getattr``, ``eval``; ``child_process``, ``require`` of a computed name;
perl's and ruby's ``system``/backquotes/``eval``; PHP's variable functions; awk's ``system`` and pipes to a
command that is not a plain string; sed's bare ``e`` and ``s///e``) may run any program: it matches every deny
and ask rule, as ``bash -c "$X"`` does. Code that starts nothing (``print(1)``, ``json.load``, ``perl -pe
's/a/b/'``, ``awk '{print $1}'``) keeps its decision, and so does an awk pipe to a plain string (``print |
"sort"``, which deny rules scan).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions._shell import analyse
from permissions.evasion_harness import Case, Rules, check_case, run_in_bash

RULES = Rules()

#: Each really runs `touch pwned` with `touch` never written whole (checked in real bash below).
DENIED_RUN = [
    'python3 -c \'import os; os.system("t"+"ouch pwned")\'',
    'python3 -c \'import subprocess; subprocess.run(["t"+"ouch", "pwned"])\'',
    'python3 -c \'getattr(__import__("o"+"s"), "sys"+"tem")("t"+"ouch pwned")\'',
    'python3 -c \'exec("import os; os.sys"+"tem(\\"t"+"ouch pwned\\")")\'',
    "python3 - <<'EOF'\nimport os\nos.system('t' + 'ouch pwned')\nEOF",
    'python3 <<< \'import os; os.system("t"+"ouch pwned")\'',
    'node -e \'require("child_"+"process").execSync("t"+"ouch pwned")\'',
    'node -e \'require("child_process").execSync("t"+"ouch pwned")\'',
    'node -p \'process.getBuiltinModule("child_process").execSync("t"+"ouch pwned").length\'',
    'perl -e \'system("t"."ouch pwned")\'',
    "perl -e '`t\\x6fuch pwned`'",
    'perl -e "1;" -e \'system("t"."ouch pwned")\'',
    'awk \'BEGIN{system("t" "ouch pwned")}\'',
    "awk 'BEGIN{system(\"\\164ouch pwned\")}'",
    'awk \'BEGIN{c="t" "ouch pwned"; c | getline}\'',
    'awk \'BEGIN{print "" | "t" "ouch pwned"}\'',
    "echo 'ouch pwned' | sed 's/.*/t&/e'",
    "printf 'ouch pwned\\n' | sed -e 's/^/t/' -e e",
]
DENIED = [
    *DENIED_RUN,
    "ruby -e '`t#{\"ouch\"} pwned`'",
    'ruby -e \'Kernel.send(:sys"tem", "t"+"ouch pwned")\'',
    'php -r \'$f="sys"."tem"; $f("t"."ouch pwned");\'',
    'lua -e \'os.execute("t".."ouch pwned")\'',
    'bun -e \'require("child_"+"process").execSync("x")\'',
]
UNMATCHED = [  # code given as data that starts nothing: no narrow allow rule covers it, as before
    "python3 -c 'print(1)'",
    "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"x\"])'",
    'python3 -c \'import re; print(re.compile("x").sub("y", "x"))\'',
    'node -e \'console.log(require("fs").readFileSync("f", "utf8"))\'',
    "perl -ne 'print if /x/' f",
    "ruby -e 'puts 1'",
    "awk '{print $1 | \"sort\"}' f",
    "awk 'BEGIN{system(\"ls\")}'",
    "sed '1e ls' f",
    "python3 <<< 'print(1)'",
]
ALLOWED = ["awk '{print $1}' f", "sed 's/e/E/g' f", "sed -n '/x/p' f"]

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command[:80] for case in CASES])
def test_interpreter_code_that_starts_programs_matches_every_deny_rule(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


@pytest.mark.parametrize("command", DENIED_RUN, ids=[command[:80] for command in DENIED_RUN])
def test_each_attack_really_runs_the_hidden_program(command: str, tmp_path: Path) -> None:
    output = run_in_bash(command, tmp_path)
    assert (tmp_path / "pwned").exists(), (command, output)


def test_the_reasons() -> None:
    assert (
        "interpreter code that starts other programs or builds code at run time" in analyse(DENIED[0]).unknown_reasons
    )
    assert "awk code that starts other programs" in analyse(DENIED_RUN[12]).unknown_reasons
    assert "a sed script that runs its input as a command" in analyse(DENIED_RUN[16]).unknown_reasons
