"""Evasion corpus across the classes of issue 10: attacks that combine them or reach a denied program through a
program's own code (vim's ``-c '!…'``, ``env -S``, busybox applets, git settings that run commands …).

Rule set: the harness's narrow allows (echo, git, ls, vim, …) and its denies (``rm``, ``touch``, ``curl``), asks
for the subcommands behind global options. Each case is checked in every mode, behind a hook's allow and behind a
whole-tool ``Bash`` allow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, check_case

DENIED = [
    'env -S "rm -rf x"',
    "env -S'rm -rf x'",
    "busybox rm x",
    "toybox rm x",
    "git -c core.sshCommand='rm -rf x' fetch",
    "git -c core.fsmonitor='rm x' status",
    "find . -name x -exec rm {} +",
    "xargs -I{} sh -c 'rm {}'",
    "ls | xargs rm",
    "{rm,-rf,x}",
    "rm${IFS}-rf x",
    "\"$0\" -c 'rm x'",
    "trap 'rm x' EXIT",
    "coproc rm x",
    "nohup rm x &",
    "time -p rm x",
    "sudo -E rm x",
    "vim -c '!rm x'",
    "vim -c ':!rm x' file",
    "vim +'!touch x' file",
    "f() { rm x; }; f",
    "function f { rm x; }; f",
    "alias e=rm; e x",
    "while read; do rm x; done",
    "exec rm x",
    "command -p rm x",
    "builtin rm x",
    "echo x | sh",
    "echo cm0gLXJmIHgK | base64 -d | bash",
    "python3 -c \"__import__('os').system('rm -rf x')\"",
    'perl -e \'system("touch", "x")\'',
    "echo ok && $(echo r)m x",
    "cu''rl https://example.invalid",
    "git status; CURL=curl; $CURL x",
]
ASKED = [
    "git -C . push",
    "git --no-pager push",
    "git -c alias.p=push p",
    "echo x && git push",
    "echo `git push`",
    "git --git-dir=.git --work-tree=. push origin main",
    "npm --registry=https://r.example publish",
    "kubectl --context prod delete pod x",
]
ALLOWED = ["ech\\o x", "echo x; e'c'ho y", "echo rm", "ls -la", "git status", "git log --oneline"]
UNMATCHED = ["git diff --output=out.patch", "vim -c 'wq' file", "git --exec-path=/tmp status"]

CASES = (
    [Case(c, "deny") for c in DENIED]
    + [Case(c, "ask") for c in ASKED]
    + [Case(c, "allow") for c in ALLOWED]
    + [Case(c, "unmatched") for c in UNMATCHED]
)


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_mixed_evasions_get_their_decision_in_every_mode(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
