"""Property tests, issue 10 items 1 and 5: commands built from a grammar of directory changes and redirection
targets (tilde forms, globs, braces, variables, ``..``) are decided in the most permissive setting (bypassPermissions
and a hook's Allow), and every command the policy allows is run by real bash: none may change a file under
``secrets/`` or copy ``.env`` anywhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookloop.permissions import HookVote, PermissionPolicy

BASH = shutil.which("bash") or "/bin/bash"
HOOK_ALLOW = HookVote(behavior="allow", reason="ok", hook="approve-all")
DENY = ["Edit(./secrets/**)", "Read(./.env)"]

CD_STEPS = st.sampled_from(
    [
        "cd secrets", "cd sub", "cd ..", "cd -", "cd ./secrets/", "cd sub/../secrets", "pushd secrets >/dev/null",
        "popd >/dev/null", "cd ~+/secrets", "cd secre?s", 'cd "$D"', "(cd secrets)", "cd sub/deeper", "cd ~-",
        "cd secret{s,}", "pushd sub >/dev/null", "true", "eval 'cd secrets'", "cd $(echo secrets)",
    ]
)  # fmt: skip
SEPARATORS = st.sampled_from(["; ", " && ", " || ", "\n"])
PREFIXES = st.sampled_from(["", "./", "../", "~+/", "~-/", "~0/", "sub/../", "../../", "~+/../", "$PWD/"])
NAMES = st.sampled_from(
    ["secrets/key", "key", "secrets/new", ".env", "secre?s/key", "secret{s..s}/key", "secret[s]/key", "out.txt",
     "secrets/*", "../secrets/key", "sub/../secrets/key", ".e?v", "secrets", "secrets/./key"]
)  # fmt: skip
WRITES = st.sampled_from(
    ["echo PWNED > {t}", "echo PWNED >> {t}", "echo PWNED | tee {t} >/dev/null", "echo PWNED >| {t}"]
)
READS = st.sampled_from(["cat < {t} > ~+/leak", "cat < {t} >> /tmp/../$PWD/leak2"])


@st.composite
def commands(draw: st.DrawFn) -> str:
    steps = draw(st.lists(CD_STEPS, max_size=4))
    template = draw(st.one_of(WRITES, READS))
    target = draw(PREFIXES) + draw(NAMES)
    parts = [*steps, template.format(t=target)]
    text = parts[0]
    for part in parts[1:]:
        text += draw(SEPARATORS) + part
    return text


def _workspace(base: Path) -> Path:
    # deep enough that no generated `..` chain climbs out of the temporary directory
    ws = base / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h" / "ws"
    for directory in ("secrets", "sub/deeper", "out"):
        (ws / directory).mkdir(parents=True)
    (ws / "secrets" / "key").write_text("ORIGINAL")
    (ws / ".env").write_text("ENV_SECRET")
    return ws


def _untouched(ws: Path) -> bool:
    if sorted(p.name for p in (ws / "secrets").iterdir()) != ["key"]:
        return False
    if (ws / "secrets" / "key").read_text() != "ORIGINAL":
        return False
    return not any(
        p.is_file() and p != ws / ".env" and "ENV_SECRET" in p.read_text(errors="replace")
        for p in ws.parents[8].rglob("*")
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command=commands(), start=st.sampled_from(["", "sub", "secrets", "sub/deeper"]))
def test_no_allowed_command_touches_a_denied_path(command: str, start: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        cwd = ws / start
        policy = PermissionPolicy(allow=["Bash"], deny=DENY, mode="bypassPermissions", workspace=ws)
        outcome = policy.decide("Bash", {"command": command}, hooks=[HOOK_ALLOW], cwd=cwd)
        if outcome.behavior != "allow":
            return
        # The worst environment the command could meet: OLDPWD and D point into secrets/.
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.path.expanduser("~"),
            "OLDPWD": str(ws / "secrets"),
            "D": str(ws / "secrets"),
        }
        subprocess.run([BASH, "-c", command], cwd=cwd, env=env, capture_output=True, timeout=20, check=False)
        assert _untouched(ws), (command, start, outcome)


@settings(max_examples=150, deadline=None)
@given(command=commands(), start=st.sampled_from(["", "sub", "secrets"]))
def test_the_decision_never_depends_on_a_hook_allow_or_the_mode_for_denied_commands(command: str, start: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        baseline = PermissionPolicy(deny=DENY, workspace=ws).check("Bash", {"command": command}, cwd=ws / start)
        for mode in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"):
            policy = PermissionPolicy(allow=["Bash"], deny=DENY, mode=mode, workspace=ws)
            outcome = policy.decide("Bash", {"command": command}, hooks=[HOOK_ALLOW], cwd=ws / start)
            if baseline is not None:
                assert outcome.behavior == "deny", (command, mode)
            else:
                assert outcome.behavior in {"allow", "ask", "deny"}
