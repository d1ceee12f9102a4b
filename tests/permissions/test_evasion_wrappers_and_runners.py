"""Red-team corpus: programs that run a command they are given, which the wrapper and code tables did not know.

* Wrappers that run their operand (``screen -dm CMD``, ``entr CMD``, ``xvfb-run``, ``rlwrap``, ``perf record``,
  ``dbus-run-session``, ``ssh-agent``, ``proot``, ``dtach -n S``, ``ccache``, ``op run --`` …) or a command string
  (``nodemon --exec '…'``, ``hyperfine '…'``): deny and ask rules look behind them, as behind ``sudo``.
* Code runners: ``make SHELL=…`` (every recipe line runs through it), ``less +'!cmd'``, ``socat … EXEC:/SYSTEM:``,
  ``nc -e`` / ``ncat --sh-exec``, ``openssl -engine``, ``go test -exec`` / ``go build -toolexec``, ``rake -e``,
  ``just --shell``, ``nix-shell --run``, ``ansible -a``, ``vagrant ssh -c``, ``fzf --preview`` / ``--bind``,
  ``mvn -Dexec.executable=``, and the ``m4`` (``esyscmd``) and ``dc`` (``!``) interpreters.

Under an allow rule for the wrapper itself, each of these let ``rm`` through a ``Bash(rm:*)`` deny rule before.
Ordinary uses keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import ALLOW, ASK, DENY, Case, Rules, check_case

PROGRAMS = (
    "screen", "entr", "xvfb-run", "rlwrap", "perf", "dbus-run-session", "ssh-agent", "proot", "dtach", "nodemon",
    "hyperfine", "ccache", "op", "less", "socat", "nc", "ncat", "openssl", "m4", "dc", "mvn", "rake", "meson",
    "just", "nix-shell", "ansible", "vagrant", "fzf",
)  # fmt: skip
RULES = Rules(allow=(*ALLOW, *(f"Bash({program}:*)" for program in PROGRAMS)), ask=ASK, deny=DENY)

DENIED = [
    "screen -dm rm -rf x",
    "entr rm -rf x <<< f",
    "xvfb-run rm -rf x",
    "rlwrap rm -rf x",
    "perf record -g rm -rf x",
    "dbus-run-session rm -rf x",
    "ssh-agent rm -rf x",
    "proot rm -rf x",
    "dtach -n /tmp/s rm -rf x",
    "nodemon --exec 'rm -rf x'",
    "hyperfine 'rm -rf x'",
    "ccache rm -rf x",
    "op run -- rm -rf x",
    "make -s SHELL='rm -rf x'",
    "less +'!rm -rf x' f",
    "socat - EXEC:'rm -rf x'",
    "socat - system:'rm -rf x'",
    "nc -e 'rm -rf x' h 1",
    "ncat --sh-exec 'rm -rf x' h 1",
    "m4 <<< 'esyscmd(rm -rf x)'",
    "dc -e '!rm -rf x'",
    "echo 'esyscmd(id)' | m4",  # its program from a pipe: only known at run time, like `… | python3`
    "mvn exec:exec -Dexec.executable=rm",
    "rake -e 'sh \"rm -rf x\"'",
    "meson devenv rm -rf x",
    "just --shell rm x",
    "nix-shell --run 'rm -rf x'",
    "ansible localhost -m shell -a 'rm -rf x'",
    "vagrant ssh -c 'rm -rf x'",
    "fzf --preview 'rm -rf x'",
    "fzf --bind 'start:execute(rm -rf x)'",
    "go test -exec rm ./...",
    "go build -toolexec rm",
]
UNMATCHED = [
    "make SHELL=/tmp/evil all",  # the program it runs recipes through is only known at run time
    "openssl enc -in x -out y -engine /tmp/evil.so",
    "dc -e '2 3 + p'",  # code given as data, as `python3 -c …`: a rule naming the program does not cover it
]
ALLOWED = [
    "make test",
    "less README.md",
    "less +G README.md",
    "socat TCP-LISTEN:8080,fork TCP:localhost:80",
    "perf stat ls",
    "screen -ls",
    "nc -z localhost 80",
    "openssl x509 -in c.pem -noout -text",
    "m4 defs.m4",
    "go test ./...",
    "mvn -q test",
    "rake test",
    "just build",
    "nix-shell -p hello",
    "ansible all -m ping",
    "vagrant up",
    "meson setup build",
    "fzf --height 40%",
]

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_wrappers_and_code_runners_get_their_decision_in_every_mode(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
