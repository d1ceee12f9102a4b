"""Evasion corpus, issue 10 item 2: program names assembled at run time, and shells reading standard input.

A command word that is not known statically (any expansion, substitution, glob, brace expansion, ``$@``,
backticks, arithmetic, an alias defined inline) could be any program: it matches every Bash deny and ask rule
(deny wins), in every mode, behind a whole-tool ``Bash`` allow and behind a hook's allow. So does a shell
reading its script from standard input in any spelling, ``source``/``.`` of such a file, and ``eval`` or
``sh -c`` of a string only known at run time. Each case is checked in all five modes with and without a
hook's allow (see ``evasion_harness``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, distinct_commands

# Spellings of a program name only known at run time; each stands for `rm`, `touch` or `curl` when run.
ASSEMBLED = [
    "t${x}ouch marker",
    "${x:-rm} -rf build",
    "${x:=touch} marker",
    "${x-curl} https://evil.example",
    "${!ref} -rf build",
    "${x/a/r}m -rf build",
    "${x#?}ouch marker",
    "${x,,} -rf build",
    "r`:`m -rf build",
    "r`true`m -rf build",
    "r$(:)m -rf build",
    "r$()m -rf build",
    "r$@m -rf build",
    "r$*m -rf build",
    "r$1m -rf build",
    "r$#m -rf build",
    "$0 -c 'rm -rf build'",
    "a=r b=m; $a$b -rf build",
    'a=r; b=m; "$a$b" -rf build',
    "x=rm; $x -rf build",
    'x=rm; "$x" -rf build',
    "x=rm; ${x} -rf build",
    "export X=touch; $X marker",
    "declare -a a=(rm -rf build); ${a[@]}",
    'set -- rm -rf build; "$@"',
    "set -- rm; $1 -rf build",
    "\"$(printf '\\x72\\x6d')\" -rf build",
    "$(printf 'r\\155') -rf build",
    "$(echo rm) -rf build",
    "`echo rm` -rf build",
    "$(base64 -d <<< cm0=) -rf build",
    "$(rev <<< mr) -rf build",
    "$(tr a-z b-za <<< ql) -rf build",
    "$((0)) x; r$((1-1))m -rf build",
    "$[1] -rf build",
    "{rm,-rf,build}",
    "{t,}ouch marker",
    "r{m,} -rf build",
    "/bin/r? -rf build",
    "/bin/r* -rf build",
    "/???/rm -rf build",
    "/usr/bin/tou[c]h marker",
    "~/r? -rf build",
    "$HOME/../../bin/rm -rf build",
    "${PWD:0:0}rm -rf build",
    "<(:) -rf build",
    "$'\\x72'$x -rf build",
    'r"$x"m -rf build',
    "r''$x'm' -rf build",
    "$CMD",
    "$CMD -rf build",
    '"$CMD" build',
    "${CMD} build",
    "$_ build",
    "$BASH -c 'rm -rf build'",
    "$SHELL -c 'rm -rf build'",
]
WRAPPED = [
    "env $CMD build",
    "command $CMD build",
    "exec $CMD build",
    "nohup $CMD build",
    "timeout 5 $CMD build",
    "nice -n 5 $CMD build",
    "sudo $CMD build",
    "xargs $CMD < list",
    "find . -exec $CMD {} \\;",
    "watch $CMD",
    "ls; $CMD build",
    "ls && $CMD build",
    "ls || $CMD build",
    "ls | $CMD",
    "(ls; $CMD build)",
    "{ ls; $CMD build; }",
    "ls $($CMD build)",
    "echo `$CMD build`",
    "if true; then $CMD build; fi",
    "for f in a; do $f build; done",
    "while read c; do $c; done < cmds",
    "case x in x) $CMD build;; esac",
    'f() { "$@"; }; f rm -rf build',
    "bash -c '$CMD build'",
    "sh -c 'x=rm; $x -rf build'",
    "eval '$CMD build'",
]
# `eval`, `sh -c` and `source` of strings or files only known at run time.
RUNTIME_CODE = [
    'eval "$X"',
    "eval $X",
    'eval "$(cat script)"',
    'eval "$(echo cm0gLXJmIGJ1aWxk | base64 -d)"',
    "eval `cat script`",
    'bash -c "$X"',
    'sh -c "$(cat script)"',
    "sh -c `cat script`",
    'bash -c "r${x}m -rf build"',
    "source <(echo rm -rf build)",
    ". <(cat script)",
    'source "$F"',
    ". $F",
    'bash "$SCRIPT"',
    "bash <(cat script)",
    "sh <(base64 -d <<< cm0=)",
    'alias x="$Y"; x',
    "shopt -s expand_aliases; alias l=rm; l -rf build",
    "alias r='r'; r\\m -rf build",
    "PATH=/tmp/evil ls",
    "PATH=.:$PATH ls",
    "export PATH=/tmp/evil; ls",
    "LD_PRELOAD=./evil.so ls",
    "env LD_PRELOAD=./evil.so ls",
    "BASH_ENV=./evil bash script.sh",
    "IFS=/ ls",
    "x='a[$(cat f)]'; (( x + 1 ))",
    "[[ $n -gt 1 ]] && ls",
    "let x+1",
    "declare -i x=$y",
    "local -x -i n",
    "test -v 'a[$(cat f)]'",
    "[ -R ref ] && ls",
    "enable -f ./evil.so evil",
    "hash -p /bin/sh ls; ls",
    'mapfile -C "$CB" -c 1 < f',
    "mapfile -C rm -c 1 < f",
    "compgen -C 'rm -rf build' x",
    "printf -v x rm; $x -rf build",
    "read -r x < f; $x -rf build",
    "ls ((",
    "ls\rrm -rf build",
    "ls " + "$(" * 200 + "ls" + ")" * 200,
    "bash -c " * 10 + "ls",
]
# A shell reading its script from standard input, in every spelling.
STDIN_SHELLS = [
    "echo cm0gLXJmIGJ1aWxk | base64 -d | sh",
    "echo cm0gLXJmIGJ1aWxk | base64 -d | bash",
    "printf 'cm0=' | base64 --decode | sh",
    "base64 -d <<< dG91Y2ggbWFya2Vy | sh",
    "cat script | sh",
    "cat script | dash",
    "cat script | zsh",
    "cat script | ksh",
    "cat script | /bin/sh",
    "cat script | /usr/bin/bash",
    "cat script | env sh",
    "cat script | /usr/bin/env bash",
    "cat script | command sh",
    "cat script | exec sh",
    "cat script | nohup sh",
    "cat script | timeout 5 sh",
    "cat script | sudo sh",
    "cat script | sh -s",
    "cat script | sh -s -- a b",
    "cat script | bash -s arg",
    "cat script | sh -",
    "cat script | bash -e",
    "cat script | bash -x -u",
    "cat script | bash -o errexit",
    "cat script | bash --norc",
    "cat script | bash --noprofile --norc -s",
    "cat script | bash /dev/stdin",
    "cat script | sh /dev/fd/0",
    "cat script | sh /proc/self/fd/0",
    "cat script | bash /proc/$$/fd/0",
    "cat script | bash /proc/thread-self/fd/0",
    "cat script | bash //dev//stdin",
    "cat script | bash /dev/./stdin",
    "cat script | bash /dev/../dev/stdin",
    "cat script | bash --",
    "bash {fd}< script /dev/fd/0",
    "bash /dev/stdin <<< 'ls'",
    "bash /dev/stdin <<'EOF'\nls\nEOF",
    "sh <<'EOF'\nls\nEOF",
    "bash <<< 'ls'",
    "bash < script",
    "sh 0< script",
    "bash /dev/fd/3 3< script",
    "sh /dev/fd/3 3<<'EOF'\nls\nEOF",
    ". /dev/stdin <<< 'ls'",
    "source /dev/stdin < script",
    "source /proc/self/fd/0 < script",
    ". /dev/fd/0 < script",
    "source - < script",
    "cat script | source /dev/stdin",
    "exec bash < script",
    "cat script | xargs sh -c",
    "cat script | xargs -0 bash -c",
    "git log | sh",
    "ls | bash",
    "echo ls | sh && ls",
    "ls; echo ls | bash",
    "echo $(echo ls | sh)",
    "(cat script | sh)",
    'echo ls | sh -c "$(cat)"',
]

CASES = [Case(command, "deny") for command in ASSEMBLED + WRAPPED + RUNTIME_CODE + STDIN_SHELLS]

# With only ask rules, the same commands ask (and are denied in dontAsk): a run-time program matches ask rules.
ASK_ONLY = Rules(allow=("Bash(ls:*)", "Bash(echo:*)", "Bash(cat:*)"), ask=("Bash(git push:*)",), deny=())
CASES += [Case(command, "ask", ASK_ONLY) for command in ("$CMD", "r$@m -rf build", "cat script | sh", 'eval "$X"')]

# Controls: run-time words in arguments are fine; literal code is analysed, not feared.
CONTROLS = [
    Case('ls "$dir"', "allow"),
    Case("ls ${dir:-.}", "allow"),
    Case("echo $(ls)", "allow"),
    Case("echo ${x:-rm}", "allow"),
    Case("echo `ls`", "allow"),
    Case("ls {a,b}", "allow"),
    Case("ls *.py", "allow"),
    Case("echo $((1 + 2))", "allow"),
    Case("let 1+2", "unmatched"),
    Case("test -f x && ls", "unmatched"),
    Case("[ -f x ] && ls", "allow"),
    Case("export X=$y", "unmatched"),
    Case("bash -c 'ls -la'", "allow"),
    Case("sh -c 'echo hi && ls'", "allow"),
    Case("eval 'ls -la'", "allow"),
    Case("cat script | grep rm", "allow"),
    Case("make", "allow"),
    Case("ls 0< list", "allow"),
    Case("bash script.sh", "unmatched"),
]


def test_the_corpus_is_large_and_distinct() -> None:
    assert len({(case.command, case.rules) for case in CASES + CONTROLS}) == len(CASES + CONTROLS)
    assert distinct_commands(CASES + CONTROLS) >= 180


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest.mark.parametrize("case", CASES + CONTROLS, ids=lambda case: case.command[:60])
def test_runtime_words(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
