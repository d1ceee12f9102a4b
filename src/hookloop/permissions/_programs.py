"""What well-known programs do with their words: global options before a subcommand, and code given as data.

Two questions about one simple command (its words after quote removal, ``None`` for a run-time word):

* :func:`scan_globals` — for the common multi-command programs (git, npm/pnpm/yarn, docker/podman, kubectl,
  helm, cargo, go, pip, uv …), where the subcommand starts once the *global* options before it are skipped
  (``git -C . --no-pager push`` → ``push``), which of those options can make the program run other code
  (``git -c core.pager=…``, ``--exec-path``, ``--git-dir``, ``kubectl --kubeconfig`` …; not ``git -c`` of a
  setting known to be plain data, ``user.email=…``, see :func:`~hookloop.permissions._gitcode.plain_setting`), the
  values of ``git -c`` (which may be shell commands), and whether the subcommand is unknown: an option the table
  does not know, a run-time word, or a git alias defined inline (``git -c alias.p=push p``).
* :func:`code_triggers` — whether the command runs code given as data or writes files through an option
  (``python3 -c``, ``node -e``, ``perl -e``, ``awk '…system(…)…'``, ``sed -i``, sed ``w``/``e`` commands,
  ``find -delete/-exec/-fprint``, ``git diff --output=``, ``xargs CMD``, ``uv run CMD`` …) and which words do
  it. An allow rule covers such a command only if it names every one of these words (see
  :meth:`~hookloop.permissions._rules.BashPattern.allows`): ``Bash(python3:*)`` does not allow
  ``python3 -c …``, ``Bash(python3 -c print(1))`` does.

:func:`unknown_code` says when the code such a command runs is itself only known at run time (``python3 -c
"$X"``, ``sed "s/$a/b/"``, an interpreter reading its program from a pipe): such a command may run any
program, like a command name only known at run time.

Long options are matched as the programs match them: any unambiguous prefix (``--upload-pa``) stands for the
option (:func:`~hookloop.permissions._coderun.long_option`), and the code-running global options of programs
that take them anywhere (npm's configuration flags, kubectl's, helm's, cargo's, uv's and podman's global flags)
count after the subcommand too.

Everything here is a pure function of the words, table-driven and linear in their number.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from hookloop.permissions._coderun import NONE, Code, long_option, program_code, reads_script_from_stdin
from hookloop.permissions._gitcode import git_code, plain_setting
from hookloop.permissions._text import OPAQUE, fold

_PYTHON_VERSION: Final = re.compile(r"(python|pypy)\d+(\.\d+)*")

__all__ = [
    "GlobalScan",
    "canonical_subcommand",
    "canonical_words",
    "code_triggers",
    "names_trigger",
    "reads_script_from_stdin",
    "scan_globals",
    "unknown_code",
]

Words = tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class _Globals:
    """The global options of one program: which take a value, which take none, which can run code."""

    with_value: frozenset[str]
    flags: frozenset[str] = frozenset()
    code: frozenset[str] = frozenset()
    plus_word: bool = False  # cargo +nightly, rustup-style toolchain selector before the subcommand
    any_long_with_equals: bool = False  # npm: every `--key=value` is a config setting


def _g(with_value: str, flags: str = "", code: str = "", **extra: bool) -> _Globals:
    return _Globals(frozenset(with_value.split()), frozenset(flags.split()), frozenset(code.split()), **extra)


_NPM = _g(
    "--registry --prefix -w --workspace --userconfig --globalconfig --cache --loglevel --scope --script-shell "
    "--node-options --onload-script --dir -C --cwd --filter -F --otp --tag --access --shell --location --git "
    "--editor --browser --viewer --init-module --node-gyp",
    "-g --global -s --silent -q --quiet -d -dd -ddd --verbose -y --yes --json --offline --prefer-offline "
    "--no-color --color -ws --workspaces --include-workspace-root -r --recursive --ignore-scripts --force -f "
    "-h --help -v --version --frozen-lockfile --dry-run -D --dev -P --prod --strict-peer-dependencies",
    "--script-shell --node-options --onload-script --userconfig --globalconfig --shell --git --editor --browser "
    "--viewer --init-module --node-gyp",
    any_long_with_equals=True,
)
_GLOBALS: Final[dict[str, _Globals]] = {
    "git": _g(
        "-C -c --git-dir --work-tree --namespace --super-prefix --config-env --list-cmds --attr-source",
        "-p --paginate -P --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
        "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --html-path --man-path --info-path "
        "--version -v --help -h --exec-path",
        "-c --config-env --exec-path --git-dir",
    ),
    "npm": _NPM,
    "pnpm": _NPM,
    "yarn": _NPM,
    "npx": _NPM,
    "bun": _NPM,
    "docker": _g(
        "-H --host --context -c --config -l --log-level --tlscacert --tlscert --tlskey",
        "-D --debug --tls --tlsverify -v --version --help",
        "--config",
    ),
    "podman": _g(
        "--connection -c --url --identity --root --runroot --log-level --cgroup-manager --storage-driver "
        "--module --events-backend --runtime --conmon --network-config-dir --tmpdir",
        "--remote -r --debug -D --version -v --help --syslog",
        "--module --runtime --conmon --url --connection --identity",
    ),
    "kubectl": _g(
        "-n --namespace --context --kubeconfig --cluster --user -s --server --token --as --as-group --as-uid "
        "--request-timeout --cache-dir --certificate-authority --client-certificate --client-key -v --v "
        "--tls-server-name --password --username --log-file --profile --profile-output",
        "--insecure-skip-tls-verify --match-server-version --warnings-as-errors --help -h",
        "--kubeconfig",
    ),
    "helm": _g(
        "-n --namespace --kube-context --kubeconfig --kube-apiserver --kube-token --kube-as-user --kube-as-group "
        "--registry-config --repository-config --repository-cache --burst-limit --qps --kube-ca-file",
        "--debug --kube-insecure-skip-tls-verify -h --help",
        "--kubeconfig --registry-config --repository-config",
    ),
    "cargo": _g(
        "-Z --config -C --color --explain",
        "-v -vv --verbose -q --quiet --frozen --locked --offline -V --version --list -h --help",
        "--config -Z",
        plus_word=True,
    ),
    "rustup": _g("", "-v --verbose -q --quiet -h --help -V --version", plus_word=True),
    "go": _g("-C", "-h --help"),
    "pip": _g(
        "--python --log --proxy --retries --timeout --exists-action --trusted-host --cert --client-cert "
        "--cache-dir --keyring-provider --use-feature --use-deprecated --progress-bar",
        "-v -vv -vvv --verbose -q --quiet --isolated --require-virtualenv --no-input --no-cache-dir "
        "--disable-pip-version-check --no-color --debug --version -V -h --help -E --python-version",
        "--python",
    ),
    "uv": _g(
        "--directory --project --config-file --cache-dir --color --python-preference --python-fetch "
        "--allow-insecure-host",
        "-q --quiet -v --verbose --offline --no-cache -n --native-tls --preview --no-preview --no-config "
        "--no-progress --managed-python --no-managed-python --no-python-downloads -h --help -V --version",
        "--config-file",
    ),
    "poetry": _g(
        "-C --directory -P --project",
        "-q --quiet -v -vv -vvv --verbose -n --no-interaction --no-ansi --ansi --no-plugins --no-cache "
        "-h --help -V --version",
    ),
    "terraform": _g("-chdir", "-help -version", "-chdir"),
    "gh": _g("-R --repo", "--help -h --version"),
}
for _pip in ("pip3",):
    _GLOBALS[_pip] = _GLOBALS["pip"]

# Programs whose code-running global options may also follow the subcommand (cobra's and clap's global flags,
# npm's configuration flags): `kubectl get pods --kubeconfig=./k`, `npm test --script-shell=./x`.
_INTERSPERSED: Final = frozenset({"npm", "kubectl", "helm", "cargo", "uv", "podman"})

# (program, subcommand) pairs that run another program named by the following words; the allow rule has to
# name that program and deny/ask rules look behind them like behind sudo.
RUNNERS: Final = frozenset(
    {
        ("uv", "run"), ("uv", "tool"), ("uvx", ""), ("npx", ""), ("bunx", ""), ("pnpx", ""), ("npm", "exec"),
        ("npm", "x"), ("pnpm", "exec"), ("pnpm", "dlx"), ("pnpm", "x"), ("yarn", "exec"), ("yarn", "dlx"),
        ("bun", "x"), ("bun", "exec"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
        ("conda", "run"), ("mamba", "run"), ("micromamba", "run"), ("pixi", "run"), ("bundle", "exec"),
        ("rbenv", "exec"), ("pyenv", "exec"), ("asdf", "exec"), ("mise", "exec"), ("mise", "x"),
        ("direnv", "exec"), ("nix", "shell"), ("nix", "develop"), ("devbox", "run"), ("aws-vault", "exec"),
        ("op", "run"), ("dotenv", ""), ("cargo", "run"), ("go", "run"), ("docker", "exec"), ("kubectl", "exec"),
        ("docker", "run"), ("docker", "container"), ("docker", "compose"), ("podman", "run"), ("podman", "exec"),
        ("podman", "container"), ("nerdctl", "run"), ("nerdctl", "exec"), ("kubectl", "run"), ("kubectl", "debug"),
        ("yarn", "node"),
    }
)  # fmt: skip

# Runners whose command runs elsewhere (a container, a pod) or is the project's own binary: deny and ask rules
# look behind them, but an allow rule for the program covers them.
_REMOTE_RUNNERS: Final = frozenset({"cargo", "go", "docker", "podman", "nerdctl", "kubectl"})


@dataclass(frozen=True, slots=True)
class GlobalScan:
    """Where the subcommand starts after the global options (``sub`` is ``None`` when it is not known)."""

    sub: int | None
    code_options: tuple[str, ...]
    config_values: tuple[str | None, ...]


def scan_globals(program: str, words: Words) -> GlobalScan | None:
    """The global options of ``words`` if ``program`` (a folded basename) has a table; else ``None``."""
    spec = _GLOBALS.get(program)
    if spec is None:
        return None
    code: list[str] = []
    values: list[str | None] = []
    index = 1
    alias = False
    while index < len(words):
        word = words[index]
        if word is None:
            return GlobalScan(None, tuple(code), tuple(values))
        if spec.plus_word and word.startswith("+") and index == 1:
            index += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        name = long_option(word, spec.code, spec.with_value, spec.flags)  # `npm --script-sh=x` abbreviates
        value: str | None
        if name in spec.with_value:
            if "=" in word:
                value, index = word.split("=", 1)[1], index + 1
            else:
                value = words[index + 1] if index + 1 < len(words) else ""
                index += 2
        elif name in spec.flags:
            value, index = "", index + 1
        elif len(word) > 2 and not word.startswith("--") and word[:2] in spec.with_value:
            name, value, index = word[:2], word[2:], index + 1  # attached: -C., -ccore.pager=less
        elif spec.any_long_with_equals and word.startswith("--") and "=" in word:
            value, index = word.split("=", 1)[1], index + 1
        else:
            return GlobalScan(None, tuple(code), tuple(values))  # an option the table does not know
        if name in spec.code and not (
            program == "git" and name == "-c" and value is not None and plain_setting(value.split("=", 1)[0])
        ):  # `git -c user.email=a@b.c commit` runs nothing but git
            code.append(name)
        if program == "git" and name in {"-c", "--config-env"}:
            values.append(value)
            if value is None or fold(value).startswith("alias."):
                alias = True
    if index >= len(words) or alias:
        return GlobalScan(None if alias else index, tuple(code), tuple(values))
    return GlobalScan(index, tuple(code), tuple(values))


_NPM_COMMANDS: Final = (
    "access", "adduser", "audit", "bugs", "cache", "ci", "completion", "config", "dedupe", "deprecate", "diff",
    "dist-tag", "docs", "doctor", "edit", "exec", "explain", "explore", "find-dupes", "fund", "get", "help",
    "help-search", "hook", "init", "install", "install-ci-test", "install-test", "link", "ll", "login", "logout",
    "ls", "org", "outdated", "owner", "pack", "ping", "pkg", "prefix", "profile", "prune", "publish", "query",
    "rebuild", "repo", "restart", "root", "run-script", "sbom", "search", "set", "shrinkwrap", "star", "stars",
    "start", "stop", "team", "test", "token", "uninstall", "unpublish", "unstar", "update", "version", "view",
    "whoami",
)  # fmt: skip
# npm's own aliases (and the misspellings it accepts) of its commands.
_NPM_ALIASES: Final = {
    "author": "owner", "home": "docs", "issues": "bugs", "info": "view", "show": "view", "find": "search",
    "add": "install", "unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall",
    "un": "uninstall", "rb": "rebuild", "list": "ls", "ln": "link", "create": "init", "i": "install",
    "it": "install-test", "cit": "install-ci-test", "up": "update", "c": "config", "s": "search", "se": "search",
    "tst": "test", "t": "test", "ddp": "dedupe", "v": "view", "run": "run-script", "clean-install": "ci",
    "clean-install-test": "install-ci-test", "x": "exec", "why": "explain", "la": "ll", "verison": "version",
    "ic": "ci", "innit": "init", "in": "install", "ins": "install", "inst": "install", "insta": "install",
    "instal": "install", "isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install",
    "install-clean": "ci", "isntall-clean": "ci", "hlep": "help", "dist-tags": "dist-tag", "upgrade": "update",
    "udpate": "update", "rum": "run-script", "sit": "install-ci-test", "urn": "run-script", "ogr": "org",
    "add-user": "adduser", "pub": "publish",
}  # fmt: skip
# Other programs' built-in short names for their subcommands.
_SUBCOMMAND_ALIASES: Final[dict[str, dict[str, str]]] = {
    "pnpm": {"i": "install", "add": "install", "rm": "remove", "un": "remove", "uninstall": "remove", "up": "update",
             "upgrade": "update", "ls": "list", "t": "test", "run-script": "run", "x": "exec"},
    "cargo": {"b": "build", "c": "check", "d": "doc", "n": "new", "r": "run", "t": "test", "rm": "remove"},
    "helm": {"delete": "uninstall", "del": "uninstall", "un": "uninstall", "ls": "list", "fetch": "pull",
             "inspect": "show"},
    "yarn": {"rm": "remove", "i": "install", "ls": "list"},
    # git's plumbing and extensions that push too: rules for `git push` are about sending commits to a remote.
    "git": {"send-pack": "push", "http-push": "push"},
}  # fmt: skip
_GIT_PUSHES: Final = frozenset({("subtree", "push"), ("lfs", "push")})


# docker's (podman's, nerdctl's) management commands: `docker image push` is `docker push`.
_CONTAINER_MANAGEMENT: Final = {
    ("image", "push"): "push", ("image", "pull"): "pull", ("image", "rm"): "rmi", ("image", "remove"): "rmi",
    ("image", "build"): "build", ("image", "tag"): "tag", ("image", "save"): "save", ("image", "load"): "load",
    ("image", "import"): "import", ("image", "ls"): "images", ("image", "list"): "images",
    ("container", "rm"): "rm", ("container", "remove"): "rm", ("container", "run"): "run",
    ("container", "exec"): "exec", ("container", "kill"): "kill", ("container", "stop"): "stop",
    ("container", "cp"): "cp", ("container", "commit"): "commit", ("container", "create"): "create",
    ("container", "start"): "start", ("container", "restart"): "restart", ("container", "export"): "export",
    ("container", "attach"): "attach", ("container", "ls"): "ps", ("container", "list"): "ps",
}  # fmt: skip
_CONTAINER_TOOLS: Final = frozenset({"docker", "podman", "nerdctl"})


def canonical_words(program: str, words: Words, sub: int) -> Words | None:
    """``words[sub:]`` with the subcommand spelled as its rules name it (see :func:`canonical_subcommand`), also
    a container tool's management form (``docker image push x`` → ``push x``); ``None`` when already so."""
    word = words[sub]
    if word is None:
        return None
    if program in _CONTAINER_TOOLS and sub + 1 < len(words) and words[sub + 1] is not None:
        short = _CONTAINER_MANAGEMENT.get((word, str(words[sub + 1])))
        if short is not None:
            return (short, *words[sub + 2 :])
    if program == "git" and sub + 1 < len(words) and (word, words[sub + 1]) in _GIT_PUSHES:
        return ("push", *words[sub + 2 :])
    full = canonical_subcommand(program, word)
    return None if full is None else (full, *words[sub + 1 :])


def canonical_subcommand(program: str, sub: str) -> str | None:
    """The subcommand ``sub`` stands for when it is one of ``program``'s short names — an alias (``npm i``,
    ``npm rm``, ``cargo b``, ``helm del``) or, for npm, any unambiguous prefix of a command (``npm pub`` is
    ``npm publish``) — so rules written for the full name apply; ``None`` when ``sub`` is already the name (or
    none is known)."""
    if program == "npm":
        found = _NPM_ALIASES.get(sub)
        if found is None and sub not in _NPM_COMMANDS:
            matches = [command for command in _NPM_COMMANDS if command.startswith(sub)]
            found = matches[0] if len(matches) == 1 else None
        return found
    aliases = _SUBCOMMAND_ALIASES.get(program)
    return None if aliases is None else aliases.get(sub)


def runner_start(program: str, words: Words, sub: int | None) -> int | None:
    """For ``uv run CMD``, ``npx CMD`` …: the index of the first word after the runner's subcommand."""
    if (program, "") in RUNNERS:
        return 1 if sub is None else sub
    if program not in _GLOBALS:
        sub = 1
    if sub is None or sub >= len(words):
        return None
    word = words[sub]
    if word is not None and (program, fold(word)) in RUNNERS:
        return sub + 1
    return None


def names_trigger(pattern: str, trigger: str) -> bool:
    """Whether the rule ``pattern`` names ``trigger`` as literal text, as whole words (``*`` counts as a gap)."""
    start = pattern.find(trigger)
    while start != -1:
        end = start + len(trigger)
        if (start == 0 or pattern[start - 1] in " *") and (end == len(pattern) or pattern[end] in " *="):
            return True
        start = pattern.find(trigger, start + 1)
    return False


def _basename(words: Words) -> str | None:
    head = words[0] if words else None
    if head is None:
        return None
    base = fold(posixpath.basename(head.rstrip("/")) or head)
    if _PYTHON_VERSION.fullmatch(base):
        return "python3"
    return base


@lru_cache(maxsize=2048)
def _inspect(words: Words) -> Code:
    base = _basename(words)
    if base is None:
        return NONE
    code = program_code(base, words)
    scan = scan_globals(base, words)
    if scan is None and (base, "") not in RUNNERS:
        return code
    triggers = list(code.triggers)
    if scan is not None:
        triggers.extend(scan.code_options)
        if base in _INTERSPERSED and scan.sub is not None:
            triggers.extend(_late_code_options(words, scan.sub + 1, _GLOBALS[base].code))
        if base == "git" and scan.sub is not None:
            triggers.extend(git_code(words, scan.sub).triggers)
    start = runner_start(base, words, None if scan is None else scan.sub)
    if start is not None and base not in _REMOTE_RUNNERS:
        program = _first_operand(words, start)
        if program is None:
            return Code(tuple(triggers), "the program a runner starts is only known at run time", False)
        if program:
            triggers.append(program)
    return Code(tuple(triggers), code.unknown, code.reads_stdin)


def _late_code_options(words: Words, start: int, code: frozenset[str]) -> list[str]:
    """The code-running global options among ``words[start:]`` (up to a ``--``), abbreviated ones too."""
    found: list[str] = []
    for word in words[start:]:
        if word == "--":
            break
        if word is None or not word.startswith("-"):
            continue
        name = long_option(word, code)
        if name in code:
            found.append(name)
        elif not word.startswith("--") and len(word) > 2 and word[:2] in code:
            found.append(word[:2])  # attached: -Zunstable-options
    return found


_PYTHON_WITH_ARG: Final = frozenset({"-W", "-X", "-Q", "--check-hash-based-pycs"})


def python_module(program: str, words: Words) -> Words | None:
    """For ``python3 [options] -m MODULE ARGS…``: the words ``MODULE ARGS…`` (``-mMODULE`` too); else ``None``.

    Deny and ask rules read them as a command, so ``Bash(pip install:*)`` covers ``python3 -m pip install x``."""
    if not (program in {"python", "pypy"} or _PYTHON_VERSION.fullmatch(program)):
        return None
    index = 1
    while index < len(words):
        word = words[index]
        if word is None or not word.startswith("-") or word in {"-", "--", "-c"}:
            return None
        if not word.startswith("--") and "m" in word[1:]:
            attached = word[word.index("m", 1) + 1 :]
            module = (attached, *words[index + 1 :]) if attached else tuple(words[index + 1 :])
            return module or None
        index += 2 if word in _PYTHON_WITH_ARG else 1
    return None


def _first_operand(words: Words, start: int) -> str | None:
    for word in words[start:]:
        if word is None or not word.startswith("-"):
            return word
    return ""


def code_triggers(words: Sequence[str | None]) -> tuple[str, ...]:
    """The words that make this command run code given as data or write files through an option (or ``()``).

    An allow rule covers the command only if it names every one of them (:func:`names_trigger`). An interpreter
    reading its program from standard input (``python3 <<EOF``) has the trigger :data:`OPAQUE`, which no rule
    names: only a whole-tool ``Bash`` rule (or the mode) allows it.
    """
    code = _inspect(tuple(words))
    return (*code.triggers, OPAQUE) if code.reads_stdin else code.triggers


def unknown_code(words: Words, *, stdin_static: bool) -> str | None:
    """Why the code this command runs is only known at run time, or ``None``.

    ``stdin_static`` tells whether the command's standard input is a literal here-document, here-string or file
    redirection: an interpreter reading its program from there runs code that is in the command's text.
    """
    code = _inspect(words)
    if code.unknown is not None:
        return code.unknown
    if code.reads_stdin and not stdin_static:
        return "an interpreter reading its program from standard input"
    return None


def reads_program_from_stdin(words: Words) -> bool:
    """Whether the command is an interpreter taking its program from standard input."""
    return _inspect(words).reads_stdin
