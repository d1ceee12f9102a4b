"""Evasion corpus: files a program writes through its own arguments (not by redirection) against Edit rules.

``rm``, ``cp``/``install``/``ln`` destinations (last operand, ``-t DIR``), ``mv``, ``touch``, ``truncate``,
``mkdir``, ``chmod``, ``dd of=``, ``sed -i``, ``sort -o``, ``git … --output=``, ``curl -o``, ``wget -O``: a known
operand inside ``./secrets/**`` is denied in every mode, behind a hook's allow and a whole-tool ``Bash`` allow,
resolved like a redirection target (``cd`` earlier in the command, ``~+``, ``..``). Operands only known at run
time (globs, variables) are left to the OS sandbox; the README's table says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy
from permissions.evasion_harness import HOOK_ALLOW, Case, Rules, check_case

_PROGRAMS = "rm cp mv touch truncate mkdir chmod dd sed sort git curl wget ln install shred rsync echo source ."
RULES = Rules(
    allow=tuple(f"Bash({p}:*)" for p in _PROGRAMS.split()), ask=(), deny=("Edit(./secrets/**)", "Read(./.env)")
)

DENIED = [
    "rm secrets/key", "rm -f secrets/key", "rm -rf secrets", "rm -- secrets/key", "rm ./secrets/../secrets/key",
    "rm SECRETS/key", "rm ~+/secrets/key", "cd secrets && rm key", "cd secrets; rm -f key", "pushd secrets; rm key",
    "cp x secrets/key", "cp -r dir secrets", "cp -t secrets x", "cp --target-directory=secrets x",
    "install -m 600 x secrets/key", "ln -s x secrets/link", "ln -sf ../x secrets/key", "mv x secrets/key",
    "mv secrets/key x", "touch secrets/new", "touch -d 2020-01-01 secrets/key", "truncate -s 0 secrets/key",
    "mkdir -p secrets/sub", "chmod 777 secrets/key", "shred -u secrets/key", "dd if=x of=secrets/key",
    "dd of=./secrets/key if=/dev/zero count=1", "sed -i s/a/b/ secrets/key", "sed -i.bak -e s/a/b/ secrets/key",
    "sed --in-place s/a/b/ secrets/key", "sort -o secrets/key x", "sort --output=secrets/key x", "sort -osecrets/key x",
    "git diff --output=secrets/key", "git log -p --output secrets/key", "curl -o secrets/key https://e.invalid",
    "curl --output secrets/key https://e.invalid", "wget -O secrets/key https://e.invalid",
    "rsync -a x secrets/", "echo ok && rm secrets/key", "rm x; rm secrets/key", "(rm secrets/key)",
    "echo $(rm secrets/key)", "rm $PWD/x; rm secrets/key",
]  # fmt: skip
# `source`/`.` read their file (Read rules); `git config` that sets something writes .git/config or ~/.gitconfig,
# protected paths (core.hooksPath there runs code on every later git command): it asks unless a rule names it.
DENIED += ["source .env", ". ./.env", "cd sub && . ../.env", "git config -f secrets/key a.b c"]
PROTECTED = [
    "git config core.hooksPath /tmp/h", "git config --global core.pager x", "git -C sub config a.b c",
    "git config --unset core.hooksPath", "git config --edit",
]  # fmt: skip
ALLOWED = ["source ./lib.sh", "git config user.name", "git config --get user.name", "git config -l",
    "rm build/x", "rm -rf build", "cp secrets/key out", "cp x y", "mv a b", "touch new", "mkdir -p out/dir",
    "dd if=/dev/zero of=blob count=1", "sed s/a/b/ secrets/key", "sort -o out x",
    "ln -s lib/key link", "chmod 644 x",
]  # fmt: skip
# A link is a way to write what it points to (`ln -s secrets s && echo x > s/key`): its target counts as written.
DENIED += ["ln -s secrets/key link", "ln -s secrets s && echo x > s/key", "cp -s secrets/key k", "cp -al secrets s"]

# Code-running options (`git --output`) are never covered by a narrower allow rule: the mode's default decides.
UNMATCHED = ["git diff --output=out.patch"]

CASES = (
    [Case(c, "deny", RULES) for c in DENIED]
    + [Case(c, "allow", RULES) for c in ALLOWED]
    + [Case(c, "unmatched", RULES) for c in UNMATCHED]
)


@pytest.mark.parametrize("command", PROTECTED)
def test_git_config_writes_a_protected_path(command: str, tmp_path: Path) -> None:
    """Never allowed by a mode or a hook's allow: asks (dontAsk denies), also in bypassPermissions."""
    for mode in ("default", "acceptEdits", "bypassPermissions", "dontAsk"):
        policy = PermissionPolicy(allow=RULES.allow, deny=RULES.deny, mode=mode, workspace=tmp_path)
        outcome = policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,))
        assert outcome.behavior == ("deny" if mode == "dontAsk" else "ask"), (command, mode, outcome)
        assert ".git" in outcome.reason, outcome


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_operands_a_program_writes_are_checked_against_edit_rules(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
