"""Red-team corpus: a subcommand spelled by one of its program's own short names.

npm runs ``npm i x`` as ``npm install x``, ``npm rm x`` as ``npm uninstall x``, and takes any unambiguous prefix of
a command (``npm pub`` is ``npm publish``; it also accepts misspellings such as ``npm isntall``); pnpm, cargo,
helm and yarn have aliases (``pnpm rm``, ``cargo r``, ``helm del``), and docker, podman and nerdctl management
commands (``docker image push`` is ``docker push``, ``docker container rm`` is ``docker rm``); ``git send-pack``,
``git http-push``, ``git subtree push`` and ``git lfs push`` push as ``git push`` does. Rules written for
the full name (``Bash(npm publish:*)``, ``Bash(helm uninstall:*)``) apply to every spelling; a short name that
stands for another command, or an ambiguous prefix (``npm p``), keeps its own decision.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions._programs import canonical_subcommand
from permissions.evasion_harness import ALLOW, Case, Rules, check_case

RULES = Rules(
    allow=(*ALLOW, "Bash(helm:*)", "Bash(podman:*)"),
    ask=("Bash(npm publish:*)", "Bash(npm install:*)", "Bash(npm uninstall:*)", "Bash(pnpm remove:*)",
         "Bash(cargo publish:*)", "Bash(cargo run:*)", "Bash(helm uninstall:*)", "Bash(yarn remove:*)",
         "Bash(docker push:*)", "Bash(docker rm:*)", "Bash(docker rmi:*)", "Bash(podman push:*)",
         "Bash(git push:*)"),
    deny=("Bash(rm:*)",),
)  # fmt: skip

ASKED = [
    "npm i lodash",
    "npm add lodash",
    "npm in lodash",
    "npm isntall lodash",
    "npm --prefix . i lodash",
    "npm pub",
    "npm publ --tag next",
    "npm pu",
    "npm rm left-pad",
    "npm r left-pad",
    "npm un left-pad",
    "npm remove left-pad",
    "pnpm rm left-pad",
    "pnpm un left-pad",
    "cargo r --release",
    "helm del my-release",
    "helm un my-release",
    "yarn rm left-pad",
    "docker image push registry/app",
    "docker -H tcp://h:2375 image push registry/app",
    "docker container remove c",
    "docker image rm app",
    "podman image push app",
    "git send-pack origin HEAD:main",
    "git http-push https://example.com/r.git main",
    "git subtree push --prefix d origin main",
    "git lfs push origin main",
]
ALLOWED = [
    "npm test",
    "npm t",
    "npm run build",
    "npm ls",
    "npm p",  # ambiguous: pack, ping, pkg, prefix, profile, prune, publish
    "npm s react",
    "cargo b",
    "cargo test",
    "helm ls",
    "docker image ls",
    "docker container ls",
    "docker ps",
    "git stash push -m wip",
    "git status",
]

CASES = [Case(c, "ask", RULES) for c in ASKED] + [Case(c, "allow", RULES) for c in ALLOWED]


@pytest.mark.parametrize("case", CASES, ids=[case.command for case in CASES])
def test_rules_for_a_subcommand_apply_to_its_short_names(case: Case, workspace: Path) -> None:
    check_case(case, workspace)


def test_npm_prefixes_resolve_only_when_unambiguous() -> None:
    assert canonical_subcommand("npm", "publ") == "publish"
    assert canonical_subcommand("npm", "unp") == "unpublish"
    assert canonical_subcommand("npm", "p") is None
    assert canonical_subcommand("npm", "publish") is None  # already the name
    assert canonical_subcommand("npm", "install-test") is None
    assert canonical_subcommand("docker", "rm") is None  # no table for it
