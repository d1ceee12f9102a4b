"""Evasion corpus, issue 10 item 5: the decision uses the directory the command really runs in.

That is the Bash tool's remembered directory (``cwd`` given to the decision) and every ``cd``/``pushd``/``popd``
earlier in the same command. Each case is decided in every mode, with no hook and behind a hook's ``Allow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionMode, PermissionPolicy

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
HOOK_ALLOW = HookVote(behavior="allow", reason="fine by me", hook="approve-all")
ALLOW = ["Bash(echo:*)", "Bash(cat:*)", "Bash(cd:*)", "Bash(pushd:*)", "Bash(popd:*)", "Bash(tee:*)"]
DENY = ["Edit(./secrets/**)", "Read(./.env)"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for directory in ("secrets", "sub", "sub/deeper"):
        (ws / directory).mkdir(parents=True)
    (ws / "secrets" / "key").write_text("KEY")
    (ws / ".env").write_text("TOKEN=1")
    (ws / "x.sh").write_text("cd secrets\n")
    return ws


# (name, command, the directory the Bash tool will start in (relative to the workspace), expected)
DENIED: list[tuple[str, str, str | None]] = [
    # -- the remembered directory ----------------------------------------------------------------------------
    ("remembered-cd", "echo x > key", "secrets"),
    ("remembered-read-parent", "cat < ../.env", "secrets"),
    ("remembered-tee", "echo x | tee key", "secrets"),
    ("remembered-tilde-plus", "echo x > ~+/key", "secrets"),
    ("remembered-sub-climbs", "echo x > ../secrets/key", "sub"),
    ("remembered-deeper-climbs", "echo x > ../../secrets/key", "sub/deeper"),
    ("remembered-then-cd-up", "cd .. && echo x > secrets/key", "sub"),
    ("remembered-absolute", "cd {ws}/secrets && echo x > key", "sub"),
    # -- cd in the same command ---------------------------------------------------------------------------------
    ("and", "cd secrets && echo x > key", None),
    ("semicolon", "cd secrets; echo x > key", None),
    ("newline", "cd secrets\necho x > key", None),
    ("or-exit", "cd secrets || exit 1; echo x > key", None),
    ("read-parent", "cd secrets; cat < ../.env", None),
    ("dot-slash", "cd ./secrets/ && echo x > ./key", None),
    ("dotdot-inside", "cd sub/../secrets && echo x > key", None),
    ("two-steps", "cd sub; cd ../secrets; echo x > key", None),
    ("cd-minus", "cd secrets; cd sub 2>/dev/null; cd -; echo x > key", None),
    ("cd-back-and-forth", "cd secrets && cd .. && cd - && echo x > key", None),
    ("tilde-minus-after-cd", "cd secrets; cd ..; echo x > ~-/key", None),
    ("cd-tilde-plus", "cd ~+/secrets && echo x > key", None),
    ("cd-options", "cd -P -- secrets && echo x > key", None),
    ("pushd", "pushd secrets && echo x > key", None),
    ("pushd-popd-pushd", "pushd sub; popd; pushd secrets; echo x > key", None),
    ("popd-back", "pushd secrets; pushd ../sub; popd; echo x > key", None),
    ("command-cd", "command cd secrets && echo x > key", None),
    ("builtin-cd", "builtin cd secrets && echo x > key", None),
    ("group", "{ cd secrets; }; echo x > key", None),
    ("if-branch", "if true; then cd secrets; fi; echo x > key", None),
    ("case-branch", "case a in a) cd secrets;; esac; echo x > key", None),
    ("eval", "eval 'cd secrets'; echo x > key", None),
    ("then-bash-c", "cd secrets && bash -c 'echo x > key'", None),
    ("inside-bash-c", "bash -c 'cd secrets && echo x > key'", None),
    ("then-tee", "cd secrets && echo x | tee -a key", None),
    ("redirect-on-group", "cd secrets && { echo x; } > key", None),
    ("pipeline-after-cd", "cd secrets && echo x | cat > key", None),
    # -- directories only known at run time ----------------------------------------------------------------------
    ("cd-variable", 'cd "$D" && echo x > key', None),
    ("cd-glob", "cd secre?s && echo x > key", None),
    ("cd-substitution", "cd $(echo secrets) && echo x > key", None),
    ("cd-brace", "cd secret{s,} && echo x > key", None),
    ("cd-stack", "cd ~1 && echo x > key", None),
    ("pushd-rotate", "pushd secrets; pushd sub; pushd +1; echo x > key", None),
    ("loop", "for d in secrets; do cd $d; done; echo x > key", None),
    ("loop-literal", "for i in 1 2; do echo x > key; cd secrets; done", None),
    ("while-loop", "while true; do cd secrets; break; done; echo x > key", None),
    ("function", "f() { cd secrets; }; f; echo x > key", None),
    ("source", "source ./x.sh; echo x > key", None),
    ("dot-source", ". ./x.sh && echo x > key", None),
    ("run-time-command-name", "c=cd; $c secrets; echo x > key", None),
    ("cdpath", "CDPATH=.; cd secrets; echo x > key", None),
    ("home-changed", "HOME={ws}/secrets; cd; echo x > key", None),
    ("env-chdir", "env -C secrets sh -c 'echo x > key'", None),
    ("find-execdir", "find secrets -name key -execdir sh -c 'echo x > key' \\;", None),
    ("alias", "shopt -s expand_aliases\nalias go='cd secrets'\ngo\necho x > key", None),
]

ALLOWED: list[tuple[str, str, str | None]] = [
    ("cd-sub-then-write", "cd sub && echo x > out.txt", None),
    ("remembered-sub-write", "echo x > out.txt", "sub"),
    ("subshell-cd-ends", "(cd secrets); echo x > out.txt", None),
    ("substitution-cd-ends", "echo $(cd secrets) > out.txt", None),
    ("remembered-sub-reads-inside", "cat < deeper/../../sub/x 2>/dev/null", "sub"),
    ("cd-absolute-inside", "cd {ws}/sub && echo x > out.txt", None),
]


def _decide(workspace: Path, mode: PermissionMode, command: str, cwd: str | None, hooked: bool) -> str:
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, mode=mode, workspace=workspace)
    start = None if cwd is None else workspace / cwd
    outcome = policy.decide(
        "Bash",
        {"command": command.replace("{ws}", str(workspace))},
        hooks=[HOOK_ALLOW] if hooked else [],
        cwd=start,
    )
    return outcome.behavior


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "command", "cwd"), DENIED, ids=[c[0] for c in DENIED])
def test_denied_in_the_directory_it_runs_in(
    workspace: Path, name: str, command: str, cwd: str | None, mode: PermissionMode, hooked: bool
) -> None:
    assert _decide(workspace, mode, command, cwd, hooked) == "deny"


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "command", "cwd"), ALLOWED, ids=[c[0] for c in ALLOWED])
def test_allowed_when_the_real_directory_is_fine(
    workspace: Path, name: str, command: str, cwd: str | None, mode: PermissionMode, hooked: bool
) -> None:
    assert _decide(workspace, mode, command, cwd, hooked) == "allow"


def test_a_relative_cwd_is_relative_to_the_workspace(workspace: Path) -> None:
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    assert policy.decide("Bash", {"command": "echo x > key"}, cwd="secrets").behavior == "deny"
    assert policy.check("Bash", {"command": "echo x > key"}, cwd="secrets") is not None


def test_a_remembered_directory_that_is_gone_also_counts_as_the_workspace(workspace: Path) -> None:
    # the Bash tool falls back to the workspace root when its directory no longer exists
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    outcome = policy.decide("Bash", {"command": "echo x > secrets/key"}, cwd=workspace / "gone")
    assert outcome.behavior == "deny"


def test_without_cwd_the_workspace_is_the_start(workspace: Path) -> None:
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    assert policy.decide("Bash", {"command": "echo x > key"}).behavior == "allow"
    assert policy.decide("Bash", {"command": "echo x > key"}, cwd=workspace / "secrets").behavior == "deny"


def test_too_many_directory_changes_make_targets_run_time_targets(workspace: Path) -> None:
    # Each cd may fail, so candidates double; past the bound the directory counts as unknown (restrictive).
    command = "cd sub; " * 30 + "echo x > key"
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    assert policy.decide("Bash", {"command": command}).behavior == "deny"
    loose = PermissionPolicy(allow=ALLOW, mode="bypassPermissions", workspace=workspace)
    assert loose.decide("Bash", {"command": command}, hooks=[HOOK_ALLOW]).behavior == "ask"


def test_many_redirections_stay_bounded_and_restrictive(workspace: Path) -> None:
    command = "cd sub && cd deeper && cd .. && " + " ; ".join(f"echo {i} > f{i}.txt" for i in range(80))
    policy = PermissionPolicy(allow=ALLOW, deny=DENY, workspace=workspace)
    assert policy.decide("Bash", {"command": command}).behavior == "deny"  # past the path budget: unknown
