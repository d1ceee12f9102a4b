"""Red-team corpus: unpacking an archive or applying a patch writes files the command never names.

``tar xf a.tar``, ``unzip -o a.zip``, ``cpio -idm``, ``7z x``, ``git apply p.diff``, ``git am``, ``patch -p1 < p.diff``
… write the files named *inside* the archive or patch: ``.git/hooks/pre-commit`` (run by the next commit),
``.claude/settings.json`` (the agent's own permissions), ``.env``. Before, ``Bash(tar:*)`` / ``Bash(git:*)``, a
hook's allow or ``bypassPermissions`` let them through.

What a careful product does, and this one now does: the command writes *any file below the directory it unpacks
into* (the current one, ``tar -C DIR``, ``unzip -d DIR``, ``patch -d DIR``; anywhere at all for the programs that
keep absolute or ``..`` names or write from the top of the repository: ``cpio``, ``pax``, ``7z``, ``jar``,
``git apply``/``am`` …). So

* when that directory is one where protected paths are read — the workspace, the home directory, an additional
  directory or a directory above one of them, or one under a protected path — the protected-path guard asks
  about it even behind an allow rule for the program, a hook's allow, a whole-tool ``Bash`` allow and in
  ``bypassPermissions`` (denied in ``dontAsk``): only a person can know what the archive holds. Below the
  workspace (``tar xf a.tar -C build``) a ``.git`` would only be a nested repository's, and the decision stays;
* an Edit deny or ask rule for a file that may be below that directory matches it (``Edit(./.env)`` denies
  ``tar xf a.tar`` in the workspace, not ``tar xf a.tar -C build``);
* a program the command then runs by its path may be one it unpacked (``tar xzf pkg.tgz && ./pkg/configure``):
  code only known at run time, matching every deny rule.

Listing, testing and printing (``tar tf``, ``tar xOf``, ``unzip -l``, ``unzip -p``, ``git apply --check/--stat``,
``patch --dry-run``) keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy
from hookloop.permissions._shell import analyse
from permissions.evasion_harness import (
    ALLOW,
    ASK,
    DENY,
    HOOK_ALLOW,
    MODES,
    Case,
    Rules,
    check_case,
    check_guarded,
    run_in_bash,
)

EXTRACTING = Rules(
    allow=(*ALLOW, "Bash(unzip:*)", "Bash(cpio:*)", "Bash(patch:*)", "Bash(7z:*)", "Bash(bsdtar:*)", "Bash(jar:*)",
           "Bash(ar:*)", "Bash(busybox:*)", "Bash(pax:*)", "Bash(unar:*)"),
    ask=ASK,
    deny=DENY,
)  # fmt: skip

UNPACKING = [
    "tar xf a.tar",
    "tar --extract --file=a.tar",
    "tar --ext -f a.tar",
    "tar -x -f a.tar",
    "tar -xPf a.tar",
    "bsdtar -xf a.tar",
    "busybox tar xf a.tar",
    "unzip a.zip",
    "unzip -o a.zip",
    "busybox unzip a.zip",
    "cpio -idm < a.cpio",
    "cpio --extract < a.cpio",
    "find . -name '*.txt' | cpio -pdm out",
    "pax -r < a.pax",
    "7z x a.7z",
    "7z e a.7z -oout",
    "jar xf a.jar",
    "ar x lib.a",
    "unar a.zip",
    "git apply p.diff",
    "git apply -R p.diff",
    "git -C . apply --3way p.diff",
    "git apply --stat --apply p.diff",
    "git am p.mbox",
    "git am < p.mbox",
    "patch -p1 < p.diff",
    "patch -p1 -i p.diff",
    "python3 -m zipfile -e a.zip .",
]
UNPACKING_ELSEWHERE = [  # below the workspace, or outside it: no protected path there is one that is read
    "tar -xzf x.tgz -C build",
    "tar xzf x.tgz --directory=out",
    "tar -C out -xvf a.tar",
    "unzip -oq a.zip -d out",
    "patch -d sub -p1 < p.diff",
]
UNPACKING_INTO_LIVE = [  # the workspace by its path, its parent, the home directory: asked about
    "tar xf a.tar -C {workspace}",
    "tar xf a.tar -C {workspace}/..",
    "unzip a.zip -d ~",
    "cd build && tar xf ../a.tar -C ..",
    "tar -C .git -xf a.tar",
]
LISTING_ALLOWED = [
    "tar tf a.tar",
    "tar -tzvf a.tgz",
    "tar --list -f a.tar",
    "tar xOf a.tar README",
    "tar -xf a.tar --to-stdout",
    "tar czf out.tgz src",
    "tar -czf x.tgz -C build .",
    "unzip -l a.zip",
    "unzip -p a.zip README",
    "unzip -t a.zip",
    "unzip -Z a.zip",
    "cpio -it < a.cpio",
    "7z l a.7z",
    "git apply --check p.diff",
    "git apply --stat p.diff",
    "git apply --numstat --summary p.diff",
    "git apply --cached p.diff",
    "git am --show-current-patch",
    "patch --dry-run -p1 < p.diff",
    "patch -o out.c src.c p.diff",
    "patch src.c p.diff",
    "python3 -m zipfile -l a.zip",
    "ar t lib.a",
]


@pytest.mark.parametrize("command", UNPACKING)
def test_unpacking_is_asked_about_behind_every_allow(command: str, workspace: Path) -> None:
    check_guarded(command, workspace, EXTRACTING)


@pytest.mark.parametrize("command", UNPACKING_INTO_LIVE)
def test_unpacking_into_the_workspace_home_or_above_by_any_spelling_is_asked_about(
    command: str, workspace: Path
) -> None:
    check_guarded(command.format(workspace=workspace), workspace, EXTRACTING)


@pytest.mark.parametrize("command", UNPACKING_ELSEWHERE)
def test_unpacking_into_a_directory_below_the_workspace_keeps_its_decision(command: str, workspace: Path) -> None:
    """``build/.git/hooks`` would be a nested repository's: the workspace's own protected paths are not below."""
    check_case(Case(command, "allow", EXTRACTING), workspace)
    check_case(Case("tar xf a.tar -C /tmp/unpacked", "unmatched", EXTRACTING), workspace)  # outside: the mode decides


@pytest.mark.parametrize("command", LISTING_ALLOWED)
def test_listing_testing_and_printing_keep_their_decision(command: str, workspace: Path) -> None:
    check_case(Case(command, "allow", EXTRACTING), workspace)


def test_the_guard_says_why(workspace: Path) -> None:
    policy = PermissionPolicy(allow=("Bash(tar:*)",), mode="bypassPermissions", workspace=workspace)
    outcome = policy.decide("Bash", {"command": "tar -xf a.tar"}, hooks=(HOOK_ALLOW,))
    assert outcome.behavior == "ask"
    assert f"writes files below {workspace} that it does not name" in outcome.reason


EDIT_DENIED = [
    ("tar xf a.tar", "Edit(./.env)"),
    ("unzip -o a.zip", "Edit(./.env)"),
    ("patch -p1 < p.diff", "Edit(./.env)"),
    ("cd src && tar xf ../a.tar", "Edit(./src/**)"),
    ("tar xf a.tar -C ~", "Write(~/.bashrc)"),
    ('tar xf a.tar -C "$d"', "Edit(./.env)"),
    ("git apply p.diff", "Edit(//etc/**)"),  # git writes from the top of the repository: any directory above
    ("cpio -idm < a.cpio", "Edit(//etc/**)"),  # cpio keeps absolute names
    ("7z x a.7z -oout", "Edit(./.env)"),
]
EDIT_NOT_MATCHED = [
    ("tar xf a.tar -C build", "Edit(./.env)"),
    ("unzip a.zip -d out", "Write(~/.bashrc)"),
    ("patch -d sub -p1 < p.diff", "Edit(./src/**)"),
]


@pytest.mark.parametrize(("command", "rule"), EDIT_DENIED)
def test_an_edit_deny_rule_for_a_file_below_the_directory_denies_unpacking(
    command: str, rule: str, workspace: Path
) -> None:
    for mode in MODES:
        policy = PermissionPolicy(allow=(*EXTRACTING.allow, "Bash"), deny=(rule,), mode=mode, workspace=workspace)
        assert policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,)).behavior == "deny", (command, mode)


@pytest.mark.parametrize(("command", "rule"), EDIT_NOT_MATCHED)
def test_an_edit_deny_rule_elsewhere_does_not_match(command: str, rule: str, workspace: Path) -> None:
    policy = PermissionPolicy(allow=EXTRACTING.allow, deny=(rule,), workspace=workspace)
    match = policy.check("Bash", {"command": command})
    assert match is None or match.behavior == "allow", match
    assert policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,)).behavior == "allow"


RUNS_WHAT_IT_UNPACKED = [
    "tar xzf p.tgz && ./p/run.sh",
    "tar xzf p.tgz && cd p && ./run.sh",
    "unzip -oq p.zip && sh p/run.sh",
    "tar -xzf p.tgz -C . ; bash p/run.sh",
]


@pytest.mark.parametrize("command", RUNS_WHAT_IT_UNPACKED)
def test_running_a_program_the_archive_held_matches_every_deny_rule(command: str, workspace: Path) -> None:
    check_case(Case(command, "deny", EXTRACTING), workspace)
    assert "a program run after a write to a file only known at run time" in analyse(command).unknown_reasons


def _archives(directory: Path) -> None:
    """p.tgz / p.zip holding p/run.sh (`touch pwned`); hooks.tar holding .git/hooks/pre-commit and
    .claude/settings.json."""
    setup = (
        "mkdir -p p .git/hooks .claude && printf 'touch pwned' > p/run.sh && chmod +x p/run.sh && "
        "tar czf p.tgz p && zip -qr p.zip p && printf 'touch pwned' > .git/hooks/pre-commit && "
        "printf '{}' > .claude/settings.json && tar cf hooks.tar .git/hooks/pre-commit .claude/settings.json && "
        "rm -rf p .git .claude"
    )
    run_in_bash(setup, directory)
    assert (directory / "p.tgz").exists()
    assert (directory / "hooks.tar").exists()


@pytest.mark.parametrize("command", RUNS_WHAT_IT_UNPACKED)
def test_each_unpacked_program_really_runs(command: str, tmp_path: Path) -> None:
    _archives(tmp_path)
    output = run_in_bash(command, tmp_path)
    assert list(tmp_path.rglob("pwned")), (command, output)


def test_an_archive_really_writes_git_hooks_and_claude_settings(tmp_path: Path) -> None:
    _archives(tmp_path)
    command = "tar xf hooks.tar"
    run_in_bash(command, tmp_path)
    assert (tmp_path / ".git/hooks/pre-commit").exists()
    assert (tmp_path / ".claude/settings.json").exists()
    policy = PermissionPolicy(allow=("Bash(tar:*)",), mode="bypassPermissions", workspace=tmp_path)
    assert policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,)).behavior == "ask"
