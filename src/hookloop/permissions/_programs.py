"""What well-known programs do with their words: global options before a subcommand, and code given as data.

Two questions about one simple command (its words after quote removal, ``None`` for a run-time word):

* :func:`scan_globals` — for the common multi-command programs (git, npm/pnpm/yarn, docker/podman, kubectl,
  helm, cargo, go, pip, uv …), where the subcommand starts once the *global* options before it are skipped
  (``git -C . --no-pager push`` → ``push``), which of those options can make the program run other code
  (``git -c core.pager=…``, ``--exec-path``, ``--git-dir``, ``kubectl --kubeconfig`` …), the values of
  ``git -c`` (which may be shell commands), and whether the subcommand is unknown: an option the table does not
  know, a run-time word, or a git alias defined inline (``git -c alias.p=push p``).
* :func:`code_triggers` — whether the command runs code given as data or writes files through an option
  (``python3 -c``, ``node -e``, ``perl -e``, ``awk '…system(…)…'``, ``sed -i``, sed ``w``/``e`` commands,
  ``find -delete/-exec/-fprint``, ``git diff --output=``, ``xargs CMD``, ``uv run CMD`` …) and which words do
  it. An allow rule covers such a command only if it names every one of these words (see
  :meth:`~hookloop.permissions._rules.BashPattern.allows`): ``Bash(python3:*)`` does not allow
  ``python3 -c …``, ``Bash(python3 -c print(1))`` does.

:func:`unknown_code` says when the code such a command runs is itself only known at run time (``python3 -c
"$X"``, ``sed "s/$a/b/"``, an interpreter reading its program from a pipe): such a command may run any
program, like a command name only known at run time.

Everything here is a pure function of the words, table-driven and linear in their number.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from hookloop.permissions._text import OPAQUE, fold

__all__ = ["GlobalScan", "code_triggers", "names_trigger", "reads_script_from_stdin", "scan_globals", "unknown_code"]

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
    "--node-options --onload-script --dir -C --cwd --filter -F --otp --tag --access --shell --location",
    "-g --global -s --silent -q --quiet -d -dd -ddd --verbose -y --yes --json --offline --prefer-offline "
    "--no-color --color -ws --workspaces --include-workspace-root -r --recursive --ignore-scripts --force -f "
    "-h --help -v --version --frozen-lockfile --dry-run -D --dev -P --prod --strict-peer-dependencies",
    "--script-shell --node-options --onload-script --userconfig --globalconfig --shell",
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
    }
)  # fmt: skip

# Runners whose command runs elsewhere (a container, a pod) or is the project's own binary: deny and ask rules
# look behind them, but an allow rule for the program covers them.
_REMOTE_RUNNERS: Final = frozenset({"cargo", "go", "docker", "kubectl"})


@dataclass(frozen=True, slots=True)
class GlobalScan:
    """Where the subcommand starts after the global options (``sub`` is ``None`` when it is not known)."""

    sub: int | None
    code_options: tuple[str, ...]
    config_values: tuple[str | None, ...]


def _option_name(word: str) -> str:
    return word.split("=", 1)[0]


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
        name = _option_name(word)
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
        if name in spec.code:
            code.append(name)
        if program == "git" and name in {"-c", "--config-env"}:
            values.append(value)
            if value is None or fold(value).startswith("alias."):
                alias = True
    if index >= len(words) or alias:
        return GlobalScan(None if alias else index, tuple(code), tuple(values))
    return GlobalScan(index, tuple(code), tuple(values))


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


# -- interpreters ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Interpreter:
    code: frozenset[str]  # options whose value is the program text
    with_arg: frozenset[str]  # other options that take the next word (or an attached value)
    stops: frozenset[str]  # options after which the rest are the program's arguments (python -m)
    attached: str  # single-letter options whose argument may be attached in a cluster (perl -Mstrict)
    numeric: str  # single-letter options followed by an optional number, then more options (perl -l, -0)
    info: frozenset[str]  # options that only print something (--version)
    stdin: bool  # reads its program from standard input when no script is named


def _i(
    code: str, with_arg: str = "", stops: str = "", attached: str = "", numeric: str = "", stdin: bool = True
) -> _Interpreter:
    info = frozenset({"--version", "-V", "--help", "-h", "-v", "-version", "--v8-options"})
    return _Interpreter(
        frozenset(code.split()), frozenset(with_arg.split()), frozenset(stops.split()), attached, numeric, info, stdin
    )


_PYTHON = _i("-c", "-W -X -Q", "-m")
_NODE = _i("-e --eval -p --print", "-r --require --import --loader --experimental-loader -C --conditions --title")
_INTERPRETERS: Final[dict[str, _Interpreter]] = {
    "python": _PYTHON, "python2": _PYTHON, "python3": _PYTHON, "pypy": _PYTHON, "pypy3": _PYTHON,
    "node": _NODE, "nodejs": _NODE,
    "perl": _i("-e -E", "", "", "MmIxidDFC", "l0"),
    "ruby": _i("-e", "-r -I -C -E -W -x -i", "", "rICEWxi"),
    "php": _i("-r -B -R -E", "-f -F -c -d -z -t", "", "fFcdzt"),
    "lua": _i("-e", "-l"), "luajit": _i("-e", "-l -j -O -b"),
    "rscript": _i("-e", "", "", "", stdin=False), "r": _i("-e", "", "", "", stdin=False),
    "tclsh": _i(""), "wish": _i(""),
    "osascript": _i("-e", "-l -s"),
    "pwsh": _i("-c -command -commandwithargs -cwa", "-f -file -wd -workingdirectory -executionpolicy -ep"),
    "powershell": _i("-c -command", "-f -file -executionpolicy -ep"),
    "deno": _i("", "", "", "", stdin=False),
    "bun": _i("-e --eval -p --print", "-r --preload", "", "", stdin=False),
    "jshell": _i(""), "irb": _i(""), "ghci": _i("-e"), "runghc": _i(""), "guile": _i("-c", "-l -L -e"),
    "sbcl": _i("--eval", "--load --script"), "clojure": _i("-e", "-M -X -A -T -i"),
    "erl": _i("-eval", "-s -run -pa -pz", "", "", stdin=False), "elixir": _i("-e", "-r -pa -pz"),
    "julia": _i("-e -E", "-L --project -J -t --threads"), "scala": _i("-e"), "groovy": _i("-e"),
}  # fmt: skip
_PYTHON_VERSION: Final = re.compile(r"(python|pypy)\d+(\.\d+)*")
# Options of other programs that make them run a command or code named by their value (or write files).
_CODE_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "tar": frozenset({"--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script",
                      "-F", "--new-volume-script", "--rsh-command", "--rmt-command"}),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "man": frozenset({"-P", "--pager", "-H", "--html"}),
    "vim": frozenset({"-c", "--cmd", "-S", "-s"}), "vi": frozenset({"-c", "--cmd", "-S", "-s"}),
    "nvim": frozenset({"-c", "--cmd", "-S", "-s", "-l", "--headless"}), "ex": frozenset({"-c", "--cmd", "-S", "-s"}),
    "view": frozenset({"-c", "--cmd", "-S"}), "emacs": frozenset({"--eval", "-l", "--load", "-f", "--funcall",
                                                                 "--script", "-batch", "--batch"}),
    "gdb": frozenset({"-ex", "--ex", "-x", "--command", "-iex", "-eval-command", "--eval-command", "-batch"}),
    "make": frozenset({"--eval", "-E"}), "gmake": frozenset({"--eval", "-E"}),
    "expect": frozenset({"-c", "-f"}), "scp": frozenset({"-S", "-o", "-F"}), "sftp": frozenset({"-S", "-o", "-F"}),
    "git": frozenset({"--upload-pack", "--receive-pack", "--exec", "--output", "--output-directory", "--ext-diff",
                      "--extcmd", "--exec-cmd"}),
    "less": frozenset({"--lesskey-file", "-k", "--lesskey-src"}),
    "sqlite3": frozenset({"-cmd", "-init"}), "psql": frozenset({"-c", "--command", "-f", "--file"}),
    "mysql": frozenset({"-e", "--execute"}), "tmux": frozenset({"new-session", "new", "new-window", "neww",
                                                                "run-shell", "run", "send-keys", "send",
                                                                "split-window", "splitw", "respawn-pane",
                                                                "pipe-pane", "if-shell", "display-popup"}),
    "screen": frozenset({"-X", "-c"}),
    "sort": frozenset({"--compress-program"}),
}  # fmt: skip
_FIND_CODE: Final = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_XARGS_WITH_ARG: Final = frozenset(
    {"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-e", "-a", "--arg-file", "--delimiter", "--max-args",
     "--max-procs", "--replace", "--eof", "--max-lines", "--max-chars", "--process-slot-var"}
)  # fmt: skip
_XARGS_FLAGS: Final = frozenset(
    {"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive", "-x", "--exit", "-o",
     "--open-tty", "--show-limits"}
)  # fmt: skip
_AWKS: Final = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_WITH_ARG: Final = frozenset({"-F", "-v", "--assign", "--field-separator", "-W", "-o", "--pretty-print"})
_AWK_CODE_OPTIONS: Final = frozenset(
    {"-f", "--file", "-e", "--source", "-i", "--include", "-l", "--load", "-E", "--exec"}
)
_AWK_RISKY: Final = re.compile(r"system|\||>|getline|@|ENVIRON|PROCINFO|close|fflush")
_SED_IN_PLACE: Final = re.compile(r"-[A-Za-hj-z]*i.*|--in-place(=.*)?")
_SED_WITH_ARG: Final = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})
_STDIN_PATH: Final = re.compile(r"(^|/)(dev|proc)(/|$)|(^|/)fd/|^-$")


def reads_script_from_stdin(path: str) -> bool:
    """Whether a script path names standard input or another descriptor: ``/dev/stdin``, ``/proc/self/fd/0`` …"""
    return _STDIN_PATH.search(posixpath.normpath(path.replace("//", "/"))) is not None or path.strip() in {"-", ""}


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


@dataclass(frozen=True, slots=True)
class _Code:
    triggers: tuple[str, ...]
    unknown: str | None  # why the code is only known at run time
    reads_stdin: bool  # takes its program from standard input


_NONE: Final = _Code((), None, False)


def _interpreter(spec: _Interpreter, words: Words) -> _Code:
    triggers: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word is None:
            return _Code(tuple(triggers), "interpreter options only known at run time", False)
        if word == "--":
            index += 1
            break
        if word == "-" or not word.startswith("-"):
            break
        name = _option_name(word) if word.startswith("--") else word
        lowered = name.lower() if spec is _INTERPRETERS["pwsh"] or spec is _INTERPRETERS["powershell"] else name
        if lowered in spec.info and len(words) == 2:
            return _NONE
        if lowered in spec.code:
            code = word.split("=", 1)[1] if "=" in word and word.startswith("--") else _at(words, index + 1)
            if code is None:
                return _Code(tuple(triggers), "program text only known at run time", False)
            return _Code((*triggers, code), None, False)
        if lowered in spec.stops:
            return _Code(tuple(triggers), None, False)
        if lowered in spec.with_arg:
            index += 1 if "=" in word else 2
            continue
        if not word.startswith("--") and len(word) > 2:
            # A cluster of single-letter options: -Bc CODE, -lne CODE, -pi.bak -e CODE, -Mstrict.
            pos = 1
            while pos < len(word):
                letter = word[pos]
                pos += 1
                if f"-{letter}" in spec.code:
                    rest = word[pos:]
                    code = rest if rest else _at(words, index + 1)
                    if code is None:
                        return _Code(tuple(triggers), "program text only known at run time", False)
                    return _Code((*triggers, code), None, False)
                if f"-{letter}" in spec.stops:
                    return _Code(tuple(triggers), None, False)
                if letter in spec.numeric:
                    while pos < len(word) and word[pos] in "0123456789abcdefABCDEFx":
                        pos += 1  # perl -l0, -0777: a number, then more options
                elif letter in spec.attached:
                    break
        index += 1
    script = _at(words, index) if index < len(words) else ""
    if script is None:
        return _Code(tuple(triggers), "a script only known at run time", False)
    if script == "" or reads_script_from_stdin(script):
        return _Code(tuple(triggers), None, spec.stdin)
    return _Code(tuple(triggers), None, False)


def _at(words: Words, index: int) -> str | None:
    return words[index] if index < len(words) else ""


def _awk(words: Words) -> _Code:
    index = 1
    triggers: list[str] = []
    while index < len(words):
        word = words[index]
        if word is None:
            break  # the program (or an option) only known at run time: see below
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name = _option_name(word)
        if name in _AWK_CODE_OPTIONS or word[:2] in _AWK_CODE_OPTIONS:
            triggers.append(name if name in _AWK_CODE_OPTIONS else word[:2])
            if name in {"-f", "--file"} or word[:2] == "-f":
                return _Code(tuple(triggers), None, False)
        if name in _AWK_WITH_ARG or name in _AWK_CODE_OPTIONS:
            index += 1 if ("=" in word or (len(word) > 2 and not word.startswith("--"))) else 2
        else:
            index += 1
    program = _at(words, index)
    if program is None:  # may hold system(…): an unnamed trigger, so that only a whole-tool rule allows it
        return _Code((*triggers, OPAQUE), None, False)
    if _AWK_RISKY.search(program):
        triggers.append(program)
    return _Code(tuple(triggers), None, False)


def _sed(words: Words) -> _Code:
    triggers: list[str] = []
    scripts: list[str | None] = []
    index = 1
    has_script_option = False
    first_operand: str | bool | None = False
    while index < len(words):
        word = words[index]
        if word is None:
            if not has_script_option and first_operand is False:
                return _Code((*triggers, OPAQUE), None, False)
            index += 1
            continue
        name = _option_name(word)
        if word == "--":
            index += 1
            if not has_script_option and index < len(words):
                scripts.append(words[index])
            break
        if (_SED_IN_PLACE.fullmatch(word) and not word.startswith("--")) or name == "--in-place":
            triggers.append(word)
        if name in {"-f", "--file"} or (word.startswith("-f") and len(word) > 2 and not word.startswith("--")):
            triggers.append(name if name in {"-f", "--file"} else word)
            has_script_option = True
        if name in {"-e", "--expression"}:
            has_script_option = True
            if "=" in word:
                scripts.append(word.split("=", 1)[1])
            else:
                scripts.append(_at(words, index + 1))
                index += 1
        elif word.startswith("-e") and len(word) > 2:
            has_script_option = True
            scripts.append(word[2:])
        elif name in _SED_WITH_ARG and "=" not in word:
            index += 1
        elif not word.startswith("-") and first_operand is False and not has_script_option:
            first_operand = word
            scripts.append(word)
        index += 1
    for script in scripts:
        if script is None:  # may hold an `e` command: an unnamed trigger, only a whole-tool rule allows it
            return _Code((*triggers, OPAQUE), None, False)
        if _sed_runs_or_writes(script):
            triggers.append(script)
    return _Code(tuple(triggers), None, False)


def _sed_runs_or_writes(script: str) -> bool:
    """Whether a sed script has a ``w``/``W``/``e`` command or an ``s///w``/``s///e`` flag (leaning towards yes)."""
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;{}!":
            i += 1
            continue
        if ch.isdigit() or ch in "$,~+":
            i += 1
            continue
        if ch == "/" or ch == "\\":  # an address /re/ or \cREc
            delim = "/" if ch == "/" else (script[i + 1] if i + 1 < n else "")
            i = _skip_delimited(script, i + (1 if ch == "/" else 2), delim)
            if i < 0:
                return True
            while i < n and script[i] in "IM":
                i += 1
            continue
        if ch in "wWe":
            return True
        if ch in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return True
            delim = script[i + 1]
            i = _skip_delimited(script, i + 2, delim)
            if i < 0:
                return True
            i = _skip_delimited(script, i, delim)
            if i < 0:
                return True
            if ch == "s":
                while i < n and script[i] not in ";\n}":
                    if script[i] in "wWe":
                        return True
                    i += 1
            continue
        if ch in "aic":  # text to the end of the line
            while i < n and script[i] != "\n":
                i += 1
            continue
        if ch in "rRbtTv:#":  # a file name, label or comment: to the end of the line (labels: or a `;`)
            ends = ";\n" if ch in "btTv" else "\n"
            while i < n and script[i] not in ends:
                i += 1
            continue
        if ch.isalpha() or ch in "=":
            i += 1
            continue
        return True  # something this scanner does not understand
    return False


def _skip_delimited(text: str, start: int, delim: str) -> int:
    """The index after the next unescaped ``delim`` from ``start``; -1 if there is none."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delim:
            return i + 1
        i += 1
    return -1


def _xargs(words: Words) -> _Code:
    index = 1
    while index < len(words):
        word = words[index]
        if word is None:
            return _Code((), "xargs options only known at run time", False)
        if word == "--":
            index += 1
            break
        if not word.startswith("-"):
            break
        name = _option_name(word)
        if name in _XARGS_FLAGS:
            index += 1
        elif name in _XARGS_WITH_ARG:
            index += 1 if "=" in word else 2
        elif word[:2] in _XARGS_WITH_ARG:
            index += 1  # attached: -I{}, -n1
        else:
            return _Code((word,), None, False)
    program = _at(words, index)
    if program is None:
        return _Code((), "the program xargs runs is only known at run time", False)
    return _Code((program,), None, False) if program else _NONE


def _options(words: Words, options: frozenset[str]) -> tuple[str, ...]:
    found: list[str] = []
    for word in words[1:]:
        if word is None:
            continue
        name = _option_name(word)
        if name in options:
            found.append(name)
        elif word.startswith("-") and not word.startswith("--") and len(word) > 2 and word[:2] in options:
            found.append(word[:2])
    return tuple(found)


def _at_command(words: Words) -> _Code:
    # at/batch read the commands they schedule from standard input, unless -f names a file or they only list.
    for word in words[1:]:
        if word is None:
            return _Code((), "at options only known at run time", False)
        if word in {"-l", "-r", "-d", "-c", "-V"}:
            return _NONE
        if word.startswith("-f"):
            return _Code(("-f",), None, False)
    return _Code((), None, True)


def _program_code(base: str, words: Words) -> _Code:
    if base in _AWKS:
        return _awk(words)
    interpreter = _INTERPRETERS.get(base)
    if interpreter is not None:
        return _interpreter(interpreter, words)
    if base in {"sed", "gsed"}:
        return _sed(words)
    if base == "xargs":
        return _xargs(words)
    if base in {"at", "batch"}:
        return _at_command(words)
    if base == "find":
        return _Code(_options(words, _FIND_CODE), None, False)
    options = _CODE_OPTIONS.get(base)
    if options is not None:
        return _Code(_options(words, options), None, False)
    return _NONE


@lru_cache(maxsize=2048)
def _inspect(words: Words) -> _Code:
    base = _basename(words)
    if base is None:
        return _NONE
    code = _program_code(base, words)
    scan = scan_globals(base, words)
    if scan is None and (base, "") not in RUNNERS:
        return code
    triggers = list(code.triggers)
    if scan is not None:
        triggers.extend(scan.code_options)
    start = runner_start(base, words, None if scan is None else scan.sub)
    if start is not None and base not in _REMOTE_RUNNERS:
        program = _first_operand(words, start)
        if program is None:
            return _Code(tuple(triggers), "the program a runner starts is only known at run time", False)
        if program:
            triggers.append(program)
    return _Code(tuple(triggers), code.unknown, code.reads_stdin)


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
