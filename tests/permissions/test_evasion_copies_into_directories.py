"""Red-team corpus: a copy into a directory writes the source's name there, or the files a directory holds.

``cp -r evil/.git .`` writes ``./.git`` (hooks included), ``cp evil/.bashrc ~`` writes ``~/.bashrc``, ``cp -a
evil/.claude ./`` the agent's own settings, ``cp -t ~ evil/.bashrc`` and ``scp host:x/.bashrc ~`` the same: the
analysis only saw the destination (``.``, ``~``), which is no protected path, so a hook's allow or
``bypassPermissions`` let them through. A copy of a directory's *contents* (``cp -r payload/. .``, ``rsync -a
payload/ ./``, ``cp -rT payload .``) writes whatever the directory holds, ``.git/hooks/pre-commit`` included.

Now each source's name below the destination counts as written (a protected one is asked about behind every
allow, an Edit deny rule for it denies), and a copy of contents writes files it does not name below the
destination, like an archive unpacked there (:mod:`test_evasion_archives`: asked about when the destination is
the workspace, the home directory or above them). Ordinary copies keep their decisions.
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
    Case,
    Rules,
    check_case,
    check_guarded,
    run_in_bash,
)

RULES = Rules(allow=(*ALLOW, "Bash(cp:*)", "Bash(install:*)", "Bash(scp:*)", "Bash(ln:*)"), ask=ASK, deny=DENY)

#: Each really writes .git/hooks/pre-commit or .claude/settings.json from `evil/` or `payload/` (checked below).
GUARDED_RUN = [
    "cp -r evil/.git .",
    "cp -R evil/.git ./",
    "cp -a evil/.claude .",
    "cp -r -t . evil/.git",
    "cp -r --target-directory=. evil/.claude",
    "cp -r payload/. .",
    "cp -rT payload .",
    "cd sub && cp -r ../evil/.git ..",
]
GUARDED = [
    *GUARDED_RUN,
    "cp evil/.bashrc ~",
    "cp -t ~ evil/.zshrc",
    "scp host:dotfiles/.bashrc ~",
    "rsync -a host:cfg/ ~/",
    "cp -r evil/.vscode src/..",
    "rsync -a payload/ ./",
    "rsync -r payload/ .",
    "ln -s evil/.claude .",
]
ALLOWED = [
    "cp a.txt b.txt",
    "cp -r src out",
    "cp src/a.py dist/",
    "cp -r src/. out",  # the contents of a directory into one below the workspace: no protected path is live there
    "rsync -a src dst",
    "rsync -a src/ dst/",
    "cp .env.example .env.local",
]


@pytest.mark.parametrize("command", GUARDED)
def test_a_copy_that_writes_a_protected_name_or_a_directory_s_contents_is_asked_about(
    command: str, workspace: Path
) -> None:
    check_guarded(command, workspace, RULES)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_copies_keep_their_decision(command: str, workspace: Path) -> None:
    check_case(Case(command, "allow", RULES), workspace)


def _payloads(directory: Path) -> None:
    setup = (
        "mkdir -p sub evil/.git/hooks evil/.claude payload/.git/hooks && "
        "printf 'touch pwned' > evil/.git/hooks/pre-commit && printf '{}' > evil/.claude/settings.json && "
        "printf 'touch pwned' > payload/.git/hooks/pre-commit"
    )
    run_in_bash(setup, directory)


@pytest.mark.parametrize("command", GUARDED_RUN)
def test_each_copy_really_writes_a_protected_path(command: str, tmp_path: Path) -> None:
    _payloads(tmp_path)
    output = run_in_bash(command, tmp_path)
    written = [tmp_path / ".git/hooks/pre-commit", tmp_path / ".claude/settings.json"]
    assert any(path.exists() for path in written), (command, output)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("cp backup/.env .", "Edit(./.env)"),
        ("cp -t src x/app.py", "Edit(./src/app.py)"),
        ("cp -r x/. src", "Edit(./src/**)"),
    ],
)
def test_an_edit_deny_rule_for_the_name_below_the_destination_denies_it(
    command: str, rule: str, workspace: Path
) -> None:
    policy = PermissionPolicy(allow=(*RULES.allow, "Bash"), deny=(rule,), mode="bypassPermissions", workspace=workspace)
    assert policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,)).behavior == "deny"


def test_running_what_a_directory_copy_brought_matches_every_deny_rule(workspace: Path) -> None:
    command = "cp -r payload/. . && ./run.sh"
    check_case(Case(command, "deny", RULES), workspace)
    assert "a program run after a write to a file only known at run time" in analyse(command).unknown_reasons
