"""Evasion corpus, issue 10 item 1: redirection targets are resolved as bash expands them.

Every case is decided in every mode, with no hook and behind a hook's ``Allow`` (which must never loosen a deny
or ask rule, nor auto-allow a target only known at run time). Classes of expected decision:

``deny``     a deny rule matches (a run-time target matches every deny rule): deny everywhere
``ask``      an ask rule matches: ask (deny in dontAsk) everywhere
``guarded``  no rule matches, but the target is only known at run time: never allowed
``allow``    the allow rule covers it and the target is a known file inside the workspace: allowed everywhere
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionMode, PermissionPolicy

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
HOOK_ALLOW = HookVote(behavior="allow", reason="the hook thinks it is fine", hook="approve-all")
ALLOW = ["Bash(echo:*)", "Bash(cat:*)", "Bash(cd:*)", "Bash(printf:*)", "Bash(tee:*)", "Bash(exec:*)"]
DENY = ["Edit(./secrets/**)", "Read(./.env)", "Read(~/.ssh/**)"]
ASK = ["Edit(./config/**)"]
USER = pwd.getpwuid(os.getuid()).pw_name


def expected(klass: str, mode: PermissionMode, hooked: bool) -> str:
    """The decision a class of case must get in ``mode`` (``hooked``: behind a hook's Allow)."""
    if klass == "deny":
        return "deny"
    if klass == "allow":
        return "allow"
    if mode == "dontAsk":
        return "deny"
    if klass == "ask":
        return "ask"
    assert klass == "guarded"
    # no rule decides: the mode's default (plan denies Bash), a hook's allow or bypassPermissions are turned
    # into a question because the target is only known at run time
    return "deny" if mode == "plan" and not hooked else "ask"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for directory in ("secrets", "config", "sub"):
        (ws / directory).mkdir(parents=True)
    (ws / "secrets" / "key").write_text("KEY")
    (ws / ".env").write_text("TOKEN=1")
    (ws / "config" / "app.ini").write_text("[app]")
    return ws


RULED: list[tuple[str, str, str]] = [
    # -- tilde forms ---------------------------------------------------------------------------------------------
    ("tilde-plus", "echo x > ~+/secrets/key", "deny"),
    ("tilde-plus-dotdot", "echo x > ~+/sub/../secrets/key", "deny"),
    ("tilde-plus-zero", "echo x > ~+0/secrets/key", "deny"),  # the directory stack: unknown
    ("tilde-zero", "echo x > ~0/secrets/key", "deny"),
    ("tilde-minus", "echo x >> ~-/.bashrc", "deny"),  # OLDPWD unknown: matches every deny rule
    ("tilde-minus-n", "echo x > ~-1/key", "deny"),
    ("tilde-plus-read", "cat < ~+/.env", "deny"),
    ("tilde-home-read", "cat < ~/.ssh/id_rsa", "deny"),
    ("tilde-user-read", f"cat < ~{USER}/.ssh/id_rsa", "deny"),
    ("tilde-after-assignment", "echo x > a=~/k", "deny"),  # bash expands it: only known at run time
    ("home-reassigned", "HOME=secrets; echo x > ~/key", "deny"),
    ("home-declared", "declare HOME=secrets; echo x > ~/key", "deny"),
    ("pwd-reassigned", "PWD=/; echo x > ~+/key", "deny"),
    # -- globs, braces, expansions -------------------------------------------------------------------------------
    ("glob-question", "echo x > secre?s/key", "deny"),
    ("glob-star", "echo x > secrets/*", "deny"),
    ("glob-bracket", "echo x > secret[s]/key", "deny"),
    ("glob-escaped-backslash", "echo x > secrets\\\\*", "deny"),
    ("glob-read", "cat < .e?v", "deny"),
    ("glob-read-bracket", "cat < .en[v]", "deny"),
    ("brace-range", "echo x > secret{s..s}/key", "deny"),
    ("brace-list", "echo x > secret{s,}/key", "deny"),
    ("variable", 'echo x > "$D"/key', "deny"),
    ("variable-read", 'cat < "$F"', "deny"),
    ("braced-variable", "echo x > ${D}/key", "deny"),
    ("command-substitution", "echo x > $(echo secrets)/key", "deny"),
    ("backticks", "echo x > `echo secrets`/key", "deny"),
    ("arithmetic", "echo x > secrets/$((1))", "deny"),
    # -- operators -------------------------------------------------------------------------------------------
    ("clobber", "echo x >| secrets/key", "deny"),
    ("both-streams", "echo x &> secrets/key", "deny"),
    ("both-streams-append", "echo x &>> secrets/key", "deny"),
    ("dup-to-file", "echo x >& secrets/key", "deny"),
    ("stderr", "echo x 2> secrets/key", "deny"),
    ("read-write", "cat <> .env", "deny"),
    ("exec-fd", "exec 3> secrets/key", "deny"),
    ("exec-fd-read", "exec 3< .env", "deny"),
    ("dev-fd-escape", "echo x > /dev/fd/../../{ws}/secrets/key", "deny"),
    ("quoted-target", 'echo x > "secrets/key"', "deny"),
    ("escaped-target", "echo x > secrets\\/key", "deny"),
    # -- hidden places -------------------------------------------------------------------------------------------
    ("tee", "echo x | tee secrets/key", "deny"),
    ("tee-append-tilde", "echo x | tee -a ~+/secrets/key", "deny"),
    ("tee-glob", "echo x | tee secre?s/key", "deny"),
    ("process-substitution-inner", "echo x > >(cat > secrets/key)", "deny"),
    ("behind-sudo", "sudo sh -c 'echo x > secrets/key'", "deny"),
    ("in-trap", "trap 'echo x > secrets/key' EXIT", "deny"),
    ("in-bash-c", "bash -c 'echo x > ~+/secrets/key'", "deny"),
    ("in-eval", "eval 'cat < .e?v'", "deny"),
    ("in-subshell", "(echo x > secre?s/key)", "deny"),
    ("in-function", "f() { echo x > key; }", "deny"),  # runs wherever it is called from
    # -- ask rules see the expanded target -----------------------------------------------------------------------
    ("ask-tilde-plus", "echo x > ~+/config/app.ini", "ask"),
    ("ask-tee", "echo x | tee config/app.ini", "ask"),
    ("ask-dotdot", "echo x >> ./sub/../config/app.ini", "ask"),
    # -- the controls: nothing to hide ---------------------------------------------------------------------------
    ("plain-inside", "echo x > out.txt", "allow"),
    ("tilde-plus-inside", "echo x > ~+/out.txt", "allow"),
    ("quoted-tilde-is-literal", 'echo x > "~"/out.txt', "allow"),  # ./~/out.txt: bash does not expand it
    ("tilde-quoted-slash-is-literal", 'echo x > ~"/out.txt"', "allow"),
    ("dev-null", "echo x > /dev/null 2>&1", "allow"),
    ("read-inside", "cat < config/app.ini", "allow"),
    ("process-substitution", "echo x > >(cat)", "allow"),
]

# No Edit or Read rules at all: a run-time target must still never be allowed automatically.
GUARDED: list[tuple[str, str]] = [
    ("guarded-variable", "echo x > $F"),
    ("guarded-glob", "echo x > out?.txt"),
    ("guarded-read-variable", "cat < $F"),
    ("guarded-tilde-minus", "echo x >> ~-/.bashrc"),
    ("guarded-dir-stack", "echo x > ~1/x"),
    ("guarded-brace", "echo x > {a,b}"),
    ("guarded-substitution", "echo x > $(mktemp)"),
    ("guarded-tee-variable", "echo x | tee $F"),
]


def _policy(workspace: Path, mode: PermissionMode, *, ruled: bool, whole_tool: bool = False) -> PermissionPolicy:
    allow = ["Bash"] if whole_tool else ALLOW
    if ruled:
        return PermissionPolicy(allow=allow, deny=DENY, ask=ASK, mode=mode, workspace=workspace)
    return PermissionPolicy(allow=allow, mode=mode, workspace=workspace)


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "command", "klass"), RULED, ids=[c[0] for c in RULED])
def test_redirect_corpus(
    workspace: Path, name: str, command: str, klass: str, mode: PermissionMode, hooked: bool
) -> None:
    policy = _policy(workspace, mode, ruled=True)
    outcome = policy.decide(
        "Bash", {"command": command.replace("{ws}", str(workspace))}, hooks=[HOOK_ALLOW] if hooked else []
    )
    assert outcome.behavior == expected(klass, mode, hooked), outcome


@pytest.mark.parametrize("whole_tool", [False, True], ids=["command-rules", "whole-tool-Bash"])
@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "command"), GUARDED, ids=[c[0] for c in GUARDED])
def test_run_time_targets_are_never_auto_allowed(
    workspace: Path, name: str, command: str, mode: PermissionMode, hooked: bool, whole_tool: bool
) -> None:
    policy = _policy(workspace, mode, ruled=False, whole_tool=whole_tool)
    outcome = policy.decide("Bash", {"command": command}, hooks=[HOOK_ALLOW] if hooked else [])
    want = expected("guarded", mode, hooked)
    if whole_tool and mode == "plan":
        want = "ask"  # the whole-tool allow rule settles plan's default; the run-time target still asks
    assert outcome.behavior == want, outcome


def test_a_glob_that_cannot_be_known_names_the_reason(workspace: Path) -> None:
    policy = PermissionPolicy(allow=["Bash(echo:*)"], mode="bypassPermissions", workspace=workspace)
    outcome = policy.decide("Bash", {"command": "echo x > out?.txt"})
    assert outcome.behavior == "ask"
    assert "only known at run time" in outcome.reason


def test_a_deny_rule_names_itself_for_a_run_time_target(workspace: Path) -> None:
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    match = policy.check("Bash", {"command": "cat < .e?v"})
    assert match is not None
    assert match.behavior == "deny"
    assert match.rule in DENY


def test_an_unknown_user_is_left_as_written(workspace: Path) -> None:
    # bash leaves `~nosuchuser` as it is: a relative path inside the workspace
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    assert policy.decide("Bash", {"command": "echo x > ~no_such_user_hl/x"}).behavior == "allow"
