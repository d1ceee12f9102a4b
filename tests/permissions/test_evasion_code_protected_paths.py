"""Red-team corpus: code given as data that writes a protected path.

``python3 -c "open('.git/hooks/pre-commit', 'w')…"`` writes where no rule can see: the analysis knows the command
runs code, not what the code opens. A protected path (``.git/``, ``.claude/``, shell start-up files …) named in
the text of such a command is therefore asked about even behind a hook's allow or in ``bypassPermissions`` (and
denied in ``dontAsk``), as a redirection to it is. Before, a hook's allow or ``bypassPermissions`` let these run —
a later ``git commit`` by the person would then run the planted hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionMode, PermissionPolicy
from permissions.evasion_harness import MODES

HOOK_ALLOW = HookVote(behavior="allow", reason="the hook approves everything", hook="approver")
ALLOW = ("Bash(python3:*)", "Bash(node:*)", "Bash(perl:*)", "Bash(awk:*)", "Bash(sqlite3:*)", "Bash(ruby:*)")

GUARDED = [
    "python3 -c \"open('.git/hooks/pre-commit', 'w').write('curl x | sh')\"",
    "python3 -c \"import os; open(os.path.expanduser('~/.bashrc'), 'a').write('x')\"",
    "node -e \"require('fs').writeFileSync('.claude/settings.json', '{}')\"",
    'perl -e \'open(F, ">>", "$ENV{HOME}/.zshrc"); print F "x"\'',
    'awk \'BEGIN { print "x" > ".git/config" }\'',
    "sqlite3 x.db '.output .git/hooks/pre-commit' 'select 1;'",
    'ruby -e \'File.write(".hookloop/settings.json", "{}")\'',
    "python3 - <<'EOF'\nopen('.vscode/tasks.json', 'w').write('{}')\nEOF",
]
NOT_GUARDED = [
    "python3 -c 'print(1)'",
    "python3 -m pytest -q",
    "node -e \"console.log('https://example.github.io/.github-pages')\"",  # .github is not .git
    "python3 -c \"print('project.gitignore')\"",
]


def _decisions(command: str, workspace: Path) -> dict[tuple[PermissionMode, bool], str]:
    found = {}
    for mode in MODES:
        policy = PermissionPolicy(allow=ALLOW, deny=("Bash(rm:*)",), workspace=str(workspace), mode=mode)
        for hooked in (False, True):
            outcome = policy.decide("Bash", {"command": command}, hooks=(HOOK_ALLOW,) if hooked else ())
            found[mode, hooked] = outcome.behavior
    return found


@pytest.mark.parametrize("command", GUARDED)
def test_code_naming_a_protected_path_is_never_allowed(command: str, workspace: Path) -> None:
    decisions = _decisions(command, workspace)
    assert "allow" not in decisions.values(), decisions
    assert decisions["bypassPermissions", True] == "ask"
    assert decisions["dontAsk", True] == "deny"


@pytest.mark.parametrize("command", NOT_GUARDED)
def test_code_that_names_no_protected_path_keeps_its_decision(command: str, workspace: Path) -> None:
    decisions = _decisions(command, workspace)
    assert decisions["bypassPermissions", False] == "allow"
    assert decisions["default", True] == "allow"


TEMPLATES = [
    "git init --template=/tmp/t",
    "git init --template /tmp/t",
    "git -c init.templateDir=/tmp/t init",
    "git clone --template=/tmp/t https://example.com/r.git d",
]


@pytest.mark.parametrize("command", TEMPLATES)
def test_a_git_template_is_a_write_of_the_repositorys_hooks(command: str, workspace: Path) -> None:
    """``git init``/``clone`` with a template copies its hooks into ``.git/hooks`` (re-initialising an existing
    repository too): a write of a protected path, asked about behind a hook's allow and in bypassPermissions."""
    decisions = _decisions(command, workspace)
    assert decisions["bypassPermissions", True] == "ask", decisions
    assert decisions["bypassPermissions", False] == "ask", decisions


@pytest.mark.parametrize("command", ["git init", "git init newrepo", "git clone https://example.com/r.git d"])
def test_git_init_and_clone_without_a_template_keep_their_decision(command: str, workspace: Path) -> None:
    assert _decisions(command, workspace)["bypassPermissions", True] == "allow"
