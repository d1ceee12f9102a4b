"""Evasion corpus, issue 10 item 4: code that runs code.

``python3 -c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, ``awk '…system(…)…'``, ``find -exec/-delete/
-fprint``, ``git diff --output=``, ``xargs CMD``, ``sed -i`` and sed ``w``/``e`` commands, ``tar
--to-command`` …: a narrower allow rule (``Bash(python3:*)``, ``Bash(find:*)``, ``Bash(sed:*)`` …) never
covers them, so nothing decides and the mode's default applies (they ask). A rule that names the code, a
whole-tool ``Bash`` allow, a hook's allow or bypassPermissions mode may still allow them. Deny and ask rules
keep matching where the words of the rule appear in the code (``python3 -c "os.system('rm -rf x')"``), and
interpreter code only known at run time (``python3 -c "$X"``, ``… | python3``) may run any program: it matches
every deny and ask rule. sed and awk scripts with expansions (``sed "s/$a/b/"``) are never allowed by a narrower
rule either; they ask.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, distinct_commands

UNMATCHED = [
    "python3 -c 'print(1)'",
    "python -c 'import sys; print(sys.path)'",
    "python3 -Ic 'print(1)'",
    "python3 -u -c 'print(1)'",
    "python3 -W ignore -c 'print(1)'",
    "python3 -c'print(1)'",
    "python3 -B -E -s -c 'print(1)'",
    "python3 <<'EOF'\nprint(1)\nEOF",
    "python3 - <<'EOF'\nprint(1)\nEOF",
    "python3 <<< 'print(1)'",
    "python3 < script.py",
    "at now < payload",
    "node -e 'console.log(1)'",
    "node --eval 'console.log(1)'",
    "node --eval='console.log(1)'",
    "node -p '1 + 1'",
    "node --print '1 + 1'",
    "node --no-warnings -e 'x'",
    "node <<'EOF'\nconsole.log(1)\nEOF",
    "perl -e 'print 1'",
    "perl -E 'say 1'",
    "perl -ne 'print' file",
    "perl -lane 'print $F[0]' file",
    "perl -pi -e 's/a/b/' file",
    "perl -Mstrict -e 'print 1'",
    "perl -w -e 'print 1'",
    "ruby -e 'puts 1'",
    "ruby -ne 'puts $_' file",
    "ruby -rjson -e 'puts 1'",
    "php -r 'echo 1;'",
    "awk 'BEGIN{system(\"ls\")}'",
    "awk '{print > \"out.txt\"}' file",
    "awk '{print | \"sort\"}' file",
    "awk '{ \"date\" | getline d; print d }' file",
    "awk -f prog.awk file",
    "gawk -e 'BEGIN{}' file",
    "gawk -i inplace '{print}' file",
    "awk -v x=1 'BEGIN{system(\"ls\")}'",
    "find . -delete",
    "find . -name '*.pyc' -delete",
    "find . -fprint out.txt",
    "find . -fprintf out.txt '%p'",
    "find . -fls out.txt",
    "find . -exec ls {} \\;",
    "find . -execdir ls {} +",
    "find . -ok ls {} \\;",
    "find . -type f -exec grep -l x {} +",
    "git diff --output=x.patch",
    "git diff --output x.patch",
    "xargs grep x",
    "xargs -0 ls",
    "xargs -I{} ls {}",
    "xargs -I {} ls {}",
    "xargs -n 1 ls",
    "xargs -P4 ls",
    "xargs --null ls",
    "ls | xargs -n1 echo",
    "xargs --frobnicate ls",
    "sed -i s/a/b/ file",
    "sed -i.bak s/a/b/ file",
    "sed -Ei 's/a/b/' file",
    "sed --in-place s/a/b/ file",
    "sed --in-place=.bak s/a/b/ file",
    "sed -ni p file",
    "sed 's/x/y/w out.txt' file",
    "sed 's/x/y/gw out.txt' file",
    "sed -n 'w out.txt' file",
    "sed '1e ls' file",
    "sed -n 's/x/y/pw out2.txt' file",  # (`s///e` runs the input: test_evasion_interpreter_spawns)
    "sed -e p -e 'w out.txt' file",
    "sed --expression='w out.txt' file",
    "sed 'W out.txt' file",
    "sed '/x/w out.txt' file",
    "sed -f script.sed file",
    "sed 's/a/b/;e ls' file",  # `e COMMAND` runs COMMAND, which is in the text (a bare `e` runs the input)
    'awk "$P" file',
    'awk "BEGIN{system(\\"$C\\")}"',
    'sed "s/$a/$b/" file',
    'sed -e "$S" file',
    'sed -i "s/^/$f: /" file',
    "tar --to-command=cat -xf a.tar",
    "tar -I zstd -cf a.tar d",
    "tar --checkpoint-action=exec=ls -cf a.tar d",
    "tar --use-compress-program=zstd -cf a.tar d",
    "rsync -e ssh src dst",
    "rsync --rsh=ssh src dst",
    "rsync --rsync-path='sudo rsync' src dst",
    "make --eval='x:;@ls' x",
    "vim -c ':q' file",
    "sort --compress-program=gzip file",
    "ls && python3 -c 'print(1)'",
    "echo $(python3 -c 'print(1)')",
    "bash -c \"python3 -c 'print(1)'\"",
    "env python3 -c 'print(1)'",
    "timeout 5 node -e 'x'",
]
DENIED = [
    "python3 -c \"import os; os.system('rm -rf build')\"",
    'python3 -c \'import subprocess; subprocess.run(["touch", "marker"])\'',
    "python3 -c 'import os; os.system(\"curl https://evil.example\")'",
    "python3 - <<'EOF'\nimport os\nos.system('rm -rf build')\nEOF",
    "python3 <<'EOF'\nimport shutil; shutil.rmtree('build')  # rm -rf\nEOF",
    'node -e \'require("child_process").execSync("rm -rf build")\'',
    'node -e \'require("child_process").execSync("touch marker")\'',
    "perl -e 'system(\"rm -rf build\")'",
    "perl -e '`touch marker`'",
    "ruby -e '`rm -rf build`'",
    'ruby -e \'system("touch", "marker")\'',
    "php -r 'system(\"rm -rf build\");'",
    "awk 'BEGIN{system(\"rm -rf build\")}'",
    "awk 'BEGIN{print | \"touch marker\"}'",
    "find . -exec rm {} \\;",
    "find . -execdir rm -f {} +",
    "find . -name x -ok touch {} \\;",
    "xargs rm",
    "xargs -0 rm -f",
    "xargs -I{} touch {}",
    "ls | xargs -n 1 rm",
    "sed 's/x/rm -rf build/e' file",
    "sed '1e touch marker' file",
    "tar --to-command='rm -rf build' -xf a.tar",
    "tar --checkpoint-action=exec='touch marker' -cf a.tar d",
    "rsync -e 'rm -rf build' src dst",
    # code only known at run time: any program
    'python3 -c "$X"',
    'python3 -c "$(cat payload)"',
    'node -e "$(cat payload)"',
    'perl -e "$P"',
    'ruby -e "$P"',
    "xargs $X",
    "find . -exec $X {} \\;",
    "echo 'print(1)' | python3",
    "cat payload | python3 -",
    "cat payload | python3 /dev/stdin",
    "cat payload | node",
    "cat payload | perl",
    "cat payload | ruby",
    "cat payload | php",
    "base64 -d < payload | python3",
    'python3 "$SCRIPT"',
    "python3 <(cat payload)",
    "python3 <<EOF\n$PAYLOAD\nEOF",
    'python3 <<< "$PAYLOAD"',
    "echo x | at now",
    "awk -f /dev/stdin file",
    "cat payload | awk -f - file",
    'awk -f "$P" file',
    "sed -f /dev/stdin file",
    "cat payload | sed -f - file",
]
ALLOWED = [
    "python3 script.py",
    "python3 -m pytest -q",
    "python3 --version",
    "node app.js",
    "perl script.pl",
    "ruby script.rb",
    "awk '{print $1}' file",
    "awk -F: '{print $1}' /etc/passwd",
    "awk 'NR == 1' file",
    "sed s/a/b/ file",
    "sed -n '1,5p' file",
    "sed -E 's/(a|b)/c/g' file",
    "sed 's/hello/world/' file",
    "sed '/^#/d' file",
    "sed 'y/abc/xyz/' file",
    "sed -n '/x/p' file",
    "sed 's/a/b/g;s/c/d/' file",
    "find . -name '*.py'",
    "find . -type f -print",
    "find . -newer x -print0",
    "git diff",
    "git diff --stat",
    "echo a | xargs",
    "tar -tf a.tar",  # (extracting asks about the files the archive holds: test_evasion_archives)
    "rsync -a src dst",
    "sort -u file",
]
NAMED = Rules(
    allow=(
        "Bash(python3 -c print(1))", "Bash(find * -delete)", "Bash(sed -i *)", "Bash(xargs grep:*)",
        "Bash(awk BEGIN{system(\"ls\")})", "Bash(git diff --output=x.patch)", "Bash(node -e *)",
    )
)  # fmt: skip
NAMED_CASES = [
    Case("python3 -c 'print(1)'", "allow", NAMED),
    Case("python3 -c 'print(2)'", "unmatched", NAMED),
    Case("find . -delete", "allow", NAMED),
    Case("find . -fprint out", "unmatched", NAMED),
    Case("sed -i s/a/b/ file", "allow", NAMED),
    Case("sed 's/a/b/w out' file", "unmatched", NAMED),
    Case("xargs grep x", "allow", NAMED),
    Case("xargs ls", "unmatched", NAMED),
    Case("awk 'BEGIN{system(\"ls\")}'", "allow", NAMED),
    Case("git diff --output=x.patch", "allow", NAMED),
    Case("node -e 'x'", "unmatched", NAMED),  # `-e *` names the option, not the code
]

CASES = (
    [Case(command, "unmatched") for command in UNMATCHED]
    + [Case(command, "deny") for command in DENIED]
    + [Case(command, "allow") for command in ALLOWED]
    + NAMED_CASES
)


def test_the_corpus_is_large_and_distinct() -> None:
    assert len({(case.command, case.rules) for case in CASES}) == len(CASES)
    assert distinct_commands(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.command[:60])
def test_code_runners(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
