"""Static analysis of a Bash command for permission matching, on tree-sitter-bash's syntax tree.

:func:`analyse` turns a command string into the simple commands it would run, each as its words after quote
removal (``"r"m`` → ``rm``, ``r\\m`` → ``rm``, ``$'\\x72m'`` → ``rm``), with words only known at run time
marked :data:`~hookloop.permissions._text.OPAQUE`. It descends into every place bash runs a command from:
lists and pipelines (``&&``, ``||``, ``;``, ``|``, ``|&``, ``&``, newlines), subshells, groups, ``if``/``while``/
``for``/``case`` bodies, ``$(…)``, backticks, process substitution, here-doc bodies, ``bash -c``/``sh -c``
strings and ``eval`` arguments when they are literal, ``find -exec``, and commands behind wrappers.

Two lists come out:

* ``commands`` — what an allow rule must cover, every one of them. Leading ``VAR=value`` assignments are
  dropped, and so are the transparent wrappers ``env``, ``command``, ``builtin``, ``exec``, ``nohup``, ``time``,
  ``timeout``, ``nice``, ``ionice`` and ``stdbuf`` (with their options) when they are named bare or from a
  system directory. Privilege and fan-out wrappers (``sudo``, ``xargs``, ``watch`` …) are *not* dropped: an
  allow rule must name them (``Bash(sudo apt update)``), because ``Bash(rm:*)`` allowing ``rm`` is not
  permission to run it as root or once per line of input.
* ``deny_commands`` — additional candidates that only deny and ask rules look at: every suffix of a wrapper's
  words (``sudo -u x rm …`` → ``rm …``), literal arguments of such wrappers parsed as scripts, and the values
  of ``alias`` definitions. Wrapper names are recognised case- and look-alike-insensitively here (``SUDO``,
  ``ｓｕｄｏ``, ``Bash -c``), and so are wrappers called by a path outside the system directories.

``safe`` is false when something cannot be analysed soundly: a parse error, a command name only known at run
time (``$CMD``, ``/bin/r?``), ``eval`` or ``bash -c`` of a non-literal string, a shell reading commands from
standard input, ``source``/``.`` of a file only known at run time (``source <(…)``), a function or alias
definition, an assignment to a variable that changes what runs (``PATH``, ``LD_PRELOAD``, ``BASH_ENV`` …),
arithmetic on variables (bash evaluates array subscripts in it, which can run commands), control characters,
a line continuation that tree-sitter and bash would split differently, nesting deeper than :data:`MAX_DEPTH`
strings or :data:`MAX_NESTING` syntax levels. Command-pattern allow rules never allow an unsafe command; deny
and ask rules still match its analysable parts, and additionally every word-like token of the raw text (see
:func:`tokens`), so ``echo rm -rf / | bash`` is denied by ``Bash(rm:*)``.

``unknown_reasons`` (a subset of the unsafe reasons) lists what makes the *program* only known at run time: a
command name built at run time, a shell reading standard input or a run-time script, ``eval``/``sh -c`` of a
run-time string, ``source`` of standard input, an interpreter reading a pipe, an alias definition, ``PATH``-like
assignments (also by ``read``, ``printf -v``, ``for``, ``${PATH:=…}``, name references), a variable a program runs
as a command set to a run-time value (``GIT_EDITOR="$C"``), interpreter code that starts programs (``os.system``,
``child_process``, awk ``system()`` of a built string, sed ``s///e``), arithmetic on variables (also ``${x:o}``,
``${!x}``), a file the command writes and then runs (:meth:`_Analyser.runs_what_it_writes`), input put where a
command goes (``xargs -I{} sh -c '{}'``), a parse error. Such a command matches every deny and ask rule.
``runs_code`` marks commands that run code given as data (interpreters, shells running script files, awk/sed
programs, ``git -c`` settings; see :mod:`hookloop.permissions._programs`): deny and ask rules also scan their
text. Multi-command programs add their subcommand behind global options to ``deny_commands`` (``git -C . push``
→ ``git push``; an unknown one as ``git <run-time word>``), and runners (``uv run``, ``npx``) their command.
Where tree-sitter-bash splits one bash word in two (`` r`:`m ``) the parts are joined again.

Where tree-sitter-bash and bash disagree, the analysis leans restrictive: unquoted here-doc bodies are re-read
here (tree-sitter leaves backticks and ``<<-`` bodies unparsed), a here-doc that tree-sitter ends *earlier* than
bash only adds commands, and where it ends later — ``cat <<EOF; rm …`` (a parse error), or a body line equal to
the delimiter inside a ``$(…)``, ``${…}`` or quotes that tree-sitter reads on past it — the command is
unanalysable. Backquotes tree-sitter keeps as text (inside a ``${…}`` operand) or reads without bash's unescaping
(`` \\` `` inside `` `…` ``) are read again as bash reads them (:meth:`_Analyser.backquotes`); ``eval --`` and
``source -- FILE`` are read past the ``--``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from operator import attrgetter
from typing import Final, Literal, NamedTuple

import tree_sitter

from hookloop.permissions import _coderun, _programs, _shellwalk
from hookloop.permissions._byprogram import ByProgram
from hookloop.permissions._coderun import ssh_commands
from hookloop.permissions._dirs import (
    DESTINATION_WRITERS,
    EXTRACTORS,
    OUTPUT_OPTION_WRITERS,
    START,
    WRITERS,
    DirState,
    Redirect,
    Step,
    after_directory_change,
    extracted,
    file_opens,
    operand_targets,
    redirect_target,
    tee_targets,
    unknown_destination,
)
from hookloop.permissions._gitcode import git_code, plain_setting
from hookloop.permissions._paths import ANY_BELOW
from hookloop.permissions._shellnodes import ARGUMENT as _ARGUMENT
from hookloop.permissions._shellnodes import BODY as _BODY
from hookloop.permissions._shellnodes import DESTINATION as _DESTINATION
from hookloop.permissions._shellnodes import LEAF_IDS as _LEAF_IDS
from hookloop.permissions._shellnodes import LEAVES as _LEAVES
from hookloop.permissions._shellnodes import REDIRECT as _REDIRECT
from hookloop.permissions._shellnodes import command_words as _words
from hookloop.permissions._shellnodes import descendants as _descendants
from hookloop.permissions._shellnodes import field as _field
from hookloop.permissions._shellnodes import kinds as _kinds
from hookloop.permissions._shellnodes import parser as _parser
from hookloop.permissions._shellnodes import redirect_extra_words as _redirect_extra_words
from hookloop.permissions._shellnodes import simple_words as _simple_words
from hookloop.permissions._shellnodes import static_stdin as _static_stdin
from hookloop.permissions._shellwalk import MAX_NESTING, plain_words
from hookloop.permissions._shellwords import (
    literal,
    node_text,
    split_assignment,
    tokens,
)
from hookloop.permissions._text import fold

__all__ = ["MAX_DEPTH", "START", "DirState", "Redirect", "ShellAnalysis", "Step", "Words", "analyse", "tokens"]

Words = tuple[str | None, ...]
"""A simple command's words; ``None`` stands for a word only known at run time."""

MAX_DEPTH: Final = 6
"""How deep ``bash -c``/``eval`` strings are followed before the command is treated as unanalysable."""


_INDEX: Final = _field("index")
_VARIABLE: Final = _field("variable")
_NAME: Final = _field("name")
_VALUE: Final = _field("value")

_CREATORS: Final = DESTINATION_WRITERS | OUTPUT_OPTION_WRITERS | {"mv", "dd", "script", "patch", "sponge"}
"""Programs whose operand writes (:func:`operand_targets`) create a file or fill it with content: what
:meth:`_Analyser.runs_what_it_writes` counts besides redirections."""
SYSTEM_DIRS: Final = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash"})
_SHELL_OPTS_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SHELL_LONG_OPTS: Final = frozenset(
    {"--login", "--noprofile", "--norc", "--posix", "--noediting", "--restricted", "--verbose", "--"}
)
# Wrappers that run their operand unchanged: stripped for allow matching when named bare or from SYSTEM_DIRS.
# Each maps to (flags without argument, options taking the next word, whether a positional operand precedes
# the command: timeout's duration).
_TRANSPARENT: Final[dict[str, tuple[frozenset[str], frozenset[str], bool]]] = {
    "env": (frozenset({"-i", "-", "-0", "-v", "--ignore-environment", "--null", "--debug"}),
            frozenset({"-u", "--unset", "-C", "--chdir"}), False),
    "command": (frozenset({"-p", "-v", "-V"}), frozenset(), False),
    "builtin": (frozenset(), frozenset(), False),
    "exec": (frozenset({"-c", "-l"}), frozenset({"-a"}), False),
    "nohup": (frozenset(), frozenset(), False),
    "time": (frozenset({"-p", "-v", "-a", "--verbose", "--portability", "--append", "--quiet", "-q"}),
             frozenset({"-o", "-f", "--output", "--format"}), False),
    "timeout": (frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
                frozenset({"-s", "--signal", "-k", "--kill-after"}), True),
    "nice": (frozenset(), frozenset({"-n", "--adjustment"}), False),
    "ionice": (frozenset({"-t"}), frozenset({"-c", "-n", "--class", "--classdata"}), False),
    "stdbuf": (frozenset(), frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), False),
}  # fmt: skip
# Commands that run another command (or a command string) with changed privileges, input, environment or
# repetition. Never stripped for allow; every suffix of their words is checked against deny and ask rules.
_WRAPPERS: Final = frozenset(
    {
        "sudo", "doas", "su", "runuser", "pkexec", "xargs", "parallel", "watch", "setsid", "chroot", "nsenter",
        "unshare", "flock", "fakeroot", "firejail", "bwrap", "proxychains", "proxychains4", "torsocks", "strace",
        "ltrace", "unbuffer", "script", "busybox", "toybox", "coproc", "trap", "ssh", "fish", "caffeinate",
        "systemd-run", "chrt", "taskset", "numactl", "cpulimit", "catchsegv", "valgrind", "dbus-launch", "sg",
        "screen", "dtach", "abduco", "entr", "xvfb-run", "rlwrap", "perf", "dbus-run-session", "ssh-agent", "proot",
        "nodemon", "hyperfine", "watchexec", "chronic", "ifne", "ccache", "sccache", "distcc", "eatmydata",
        "faketime", "nocache", "gosu", "su-exec", "setpriv", "setarch", "linux32", "linux64", "prlimit", "cgexec",
        "systemd-inhibit", "tini", "dumb-init", "chpst", "sem", "cross-env", "env-cmd", "dotenv", "concurrently",
        "sandbox-exec", "schroot", "flatpak-spawn", "torify", "tsocks", "xterm", "socat", "op", "doppler",
        "aws-vault", "meson",
    }
)  # fmt: skip
_ALL_WRAPPERS: Final = _WRAPPERS | _SHELLS | frozenset(_TRANSPARENT) | {"eval"}
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DIRECTORY_CHANGERS: Final = frozenset({"cd", "pushd", "popd"})
_DANGEROUS_VARS: Final = frozenset(
    {
        "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "GLOBIGNORE", "CDPATH",
        "HOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "NODE_OPTIONS", "NODE_PATH",
        "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYOPT", "RUBYLIB", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
        "SSH_ASKPASS", "SUDO_ASKPASS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
        "RUSTC_WRAPPER", "LESSOPEN", "LESSCLOSE", "XDG_CONFIG_HOME", "ZDOTDIR", "TMPDIR", "SHELL",
        # Options or configuration files a program reads from its environment that run code or other programs:
        # make's flags and makefiles, go's -toolexec, compilers make and cargo run, tar's and gzip's options,
        # kubeconfig exec plugins, docker credential helpers, AWS credential_process, openssl engines, rc files.
        "MAKEFLAGS", "MFLAGS", "MAKEFILES", "GNUMAKEFLAGS", "GOFLAGS", "GOENV", "GOTOOLCHAIN", "CC", "CXX", "CPP",
        "LD", "AR", "FC", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPPFLAGS", "RUSTFLAGS", "RUSTC", "RUSTDOC",
        "RUSTC_WORKSPACE_WRAPPER", "TAR_OPTIONS", "GZIP", "XZ_OPT", "BZIP2", "ZSTD_NBTHREADS", "LESS", "LESSKEY",
        "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "PSQL_PAGER", "PSQLRC", "INPUTRC", "BROWSER", "KUBECONFIG",
        "DOCKER_CONFIG", "DOCKER_HOST", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "OPENSSL_CONF",
        "OPENSSL_ENGINES", "CURL_HOME", "WGETRC", "PHPRC", "PHP_INI_SCAN_DIR", "LUA_INIT", "LUA_PATH", "LUA_CPATH",
        "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON", "R_ENVIRON_USER", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
        "MAVEN_OPTS", "GRADLE_OPTS", "SBT_OPTS", "ANT_OPTS", "ELECTRON_RUN_AS_NODE", "GCONV_PATH", "PERL5DB",
        "TF_CLI_CONFIG_FILE", "HELM_PLUGINS", "YARN_RC_FILENAME", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
    }
)  # fmt: skip
_DANGEROUS_PREFIXES: Final = (
    "LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "CARGO_", "PIP_", "UV_", "POETRY_",
    "PNPM_", "YARN_", "BUN_", "DENO_", "COMPOSER_", "CGO_", "DOTNET_", "JAVA_", "KUBE", "HELM_", "TF_", "MAKE",
)  # fmt: skip
_PROGRAM_VARS: Final = frozenset({"PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND"})
# Variables whose value a program runs as a command line (git's ssh, editor, pager, diff and askpass programs; the
# pagers, editors and browsers of other programs; less's input filters; compiler wrappers; git configuration
# given in the environment, whose values may be `core.pager` and the like).
_COMMAND_VARS: Final = frozenset(
    {
        "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
        "GIT_PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PAGER", "MANPAGER", "SYSTEMD_PAGER",
        "PSQL_PAGER", "EDITOR", "VISUAL", "SYSTEMD_EDITOR", "BROWSER", "LESSOPEN", "LESSCLOSE", "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "CC", "CXX", "CPP", "LD", "AR", "FC", "MAKESHELL",
        "NPM_CONFIG_SCRIPT_SHELL", "npm_config_script_shell", "CARGO_BUILD_RUSTC_WRAPPER", "GIT_EXEC_PATH",
    }
)  # fmt: skip
_COMMAND_VAR_PATTERN: Final = re.compile(r"GIT_CONFIG_VALUE_\d+|GIT_CONFIG_PARAMETERS|CARGO_TARGET_\w+_RUNNER")
_PROGRAM_PREFIXES: Final = ("LD_", "DYLD_", "BASH_FUNC_")
_SAFE_ARITHMETIC: Final = re.compile(r"[\d\s+\-*/%()<>=!&|^~?:,]*")
_ARITHMETIC_TESTS: Final = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
_RISKY_BUILTINS: Final = frozenset(
    {"enable", "hash", "let", "declare", "typeset", "local", "test", "[", "mapfile", "readarray", "compgen", "complete"}
)
_START_BYTE: Final = attrgetter("start_byte")
_EDITORS: Final = frozenset({"vi", "vim", "nvim", "gvim", "rvim", "vimdiff", "ex", "view", "rview", "ed", "red"})
_DESCRIPTOR_FIELD: Final = _field("descriptor")
_LITERAL_KINDS: Final = frozenset({"raw_string", "ansi_c_string", "comment", "heredoc_body", "heredoc_start"})
_BACKQUOTE_ESCAPE: Final = re.compile(r"\\([\\`$])")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DESCRIPTOR: Final = re.compile(r"\d+|\{[A-Za-z_][A-Za-z0-9_]*\}")

_OPENS_BEFORE: Final = frozenset(
    {"command", "subshell", "compound_statement", "if_statement", "while_statement", "for_statement",
     "c_style_for_statement", "case_statement", "negated_command"}
)  # fmt: skip
_LOOPS: Final = frozenset({"while_statement", "for_statement", "c_style_for_statement", "select_statement"})
_SUBSHELLS: Final = frozenset({"subshell", "command_substitution", "process_substitution"})
# Kinds no branch of `_Analyser.visit_node` but the last handles (and not ERROR): their children are visited.
_GENERIC: Final = frozenset(
    {"program", "list", "pipeline", "command_name", "string", "concatenation", "simple_expansion", "do_group",
     "if_statement", "elif_clause", "else_clause", "case_statement", "case_item", "negated_command"}
)  # fmt: skip
_REDIRECT_KINDS: Final = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_COMMAND_IDS: Final = _kinds("command")
_GENERIC_IDS: Final = _kinds(*_GENERIC)


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """What :func:`analyse` found in one command string (see the module docstring)."""

    commands: tuple[Words, ...]
    deny_commands: tuple[Words, ...]
    redirects: tuple[Redirect, ...]
    safe: bool
    unsafe_reasons: tuple[str, ...]
    changes_directory: bool
    unknown_reasons: tuple[str, ...] = ()
    runs_code: bool = False
    by_program: Mapping[str, tuple[Words, ...]] = field(default_factory=dict, compare=False, hash=False)
    """``commands`` and ``deny_commands`` by folded program name and basename; heads with a blank under ``" "``."""

    @property
    def runs_unknown(self) -> bool:
        """Whether some command it may run is only known at run time: it matches every Bash deny and ask rule."""
        return bool(self.unknown_reasons)


class _Classified(NamedTuple):
    """What one :meth:`_Analyser.classify` appended and left behind (see there)."""

    commands: tuple[Words, ...]
    deny_commands: tuple[Words, ...]
    redirects: tuple[Redirect, ...]
    unsafe: tuple[str, ...]
    unknown: tuple[str, ...]
    runs_code: bool
    changes_directory: bool
    dirs: DirState
    only_commands: bool
    """Nothing but ``commands``: the other lists empty, no flag set, the directory state unchanged."""
    editor: bool
    """It runs an editor (see :meth:`_Analyser.fed_editors`)."""
    fed: tuple[Words, ...]
    """What it appended to :attr:`_Analyser.fed`."""


_Memo = dict[tuple[Words | str, DirState, bool, int, int], _Classified]
_MEMO_SIZE: Final = 4096
_MEMO_CHARS: Final = 2048  # words longer than this in all are classified every time (the memo stays < ~10 MB)
_CLASSIFIED: Final[_Memo] = {}
"""The memo of :meth:`_Analyser.classify` (emptied when full): agents repeat the same subcommands. A simple
command is remembered by its words, and a plain one (:func:`_shellwalk.plain_words`) by its text."""


def _dangerous_variable(name: str) -> bool:
    return name in _DANGEROUS_VARS or name.startswith(_DANGEROUS_PREFIXES)


_WRITES_OR_RUNS: Final = _CREATORS | _coderun.RUNS_FILES
_PLAIN_HEADS: Final[set[str]] = set()
"""Program names seen that are none of :data:`_WRITES_OR_RUNS` (lower-case ASCII names, which nothing folds into
another): :meth:`_Analyser.runs_what_it_writes` skips their commands with one look-up."""
_WritesAndRuns = tuple[frozenset[str], int, frozenset[str] | None, bool]
_WRITES_AND_RUNS: Final[dict[Words, _WritesAndRuns]] = {}  # the memo of `_writes_and_runs` (emptied when full)


def _writes_and_runs(words: Words) -> _WritesAndRuns:
    """What :meth:`_Analyser.runs_what_it_writes` needs of one command, memoised (agents repeat their commands):
    the names (basenames) of the files it creates or fills through its arguments (``cp``, ``curl -o`` …), 1 if it
    may write one whose name is only known at run time (else 0), the names of the files whose contents it runs
    (:func:`_coderun.files_run`, and the program itself when named by a path; ``None`` when only known at run
    time), and whether a write to a run-time file may be one of those (not a program named by a path in a
    system directory)."""
    head = words[0] if words else None
    if head is None:
        return frozenset(), 0, frozenset(), False
    base = posixpath.basename(head) if "/" in head else head
    created: frozenset[str] = frozenset()
    unknown = 0
    if base in _CREATORS:
        targets = [r.target for r in operand_targets(base, words, START) if r.write and r.target]
        created = frozenset(posixpath.basename(target.rstrip("/")) for target in targets)
        if any(_coderun.in_bin_directory(target) for target in targets):
            created |= {_coderun.BIN_WRITTEN}
        unknown = unknown_destination(base, words)
    names = _coderun.files_run(fold(posixpath.basename(head.rstrip("/")) or head), words)
    exposed = names is None or bool(names)
    if "/" in head:
        exposed = exposed or posixpath.dirname(head) not in SYSTEM_DIRS
        names = None if names is None else names | {posixpath.basename(head.rstrip("/"))}
    found = (created, unknown, names, exposed)
    if sum(len(word) for word in words if word is not None) <= _MEMO_CHARS:  # keep the memo small
        if len(_WRITES_AND_RUNS) >= _MEMO_SIZE:
            _WRITES_AND_RUNS.clear()
        _WRITES_AND_RUNS[words] = found
    return found


def _names_editor(node: tree_sitter.Node) -> bool:
    """Whether a (redirected) command runs an editor, also behind wrappers (``env vim``, ``timeout 5 ed``)."""
    if node.type == "redirected_statement":
        body = node.child_by_field_id(_BODY)
        return body is not None and _names_editor(body)
    if node.type != "command":
        return False
    for part in node.named_children:
        if part.type in _REDIRECT_KINDS or part.type == "variable_assignment":
            continue
        word = literal(part)
        if word is None:
            return True  # a program only known at run time may be one
        if word.startswith("-") or word.isdigit() or split_assignment(word):
            continue
        program = fold(posixpath.basename(word))
        if program in _EDITORS:
            return True
        if program not in _ALL_WRAPPERS:
            return False
    return False


def _feeds_stdin(redirect: tree_sitter.Node) -> bool:
    """Whether a redirection gives the command its standard input (``<``, ``0<``, here-documents and -strings)."""
    if redirect.type != "file_redirect":
        return True
    operator = next((node_text(c) for c in redirect.children if not c.is_named), "")
    descriptor = redirect.child_by_field_id(_DESCRIPTOR_FIELD)
    return operator in {"<", "<>"} and (descriptor is None or node_text(descriptor) == "0")


def _sources_stdin(words: Words) -> bool:
    """``source``/``.`` of standard input: ``. /dev/stdin``, ``. -- /dev/fd/0`` …"""
    args = words[2:] if words[1:2] == ("--",) else words[1:]
    return bool(args) and _programs.reads_script_from_stdin(args[0] or "")


def _ends_earlier(start: str, body: str, *, dash: bool) -> bool:
    """Whether a here-document body (as tree-sitter-bash reads it) holds a line bash takes for its delimiter."""
    if start not in body:
        return False
    delimiters = {start, re.sub(r"[\"'\\]", "", start), re.sub(r"[\"'\\$]", "", start)}
    return any((line.lstrip("\t") if dash else line) in delimiters for line in body.split("\n"))


def _unparsed_backquotes(text: str) -> list[str | None]:
    """The commands of the unescaped `` `…` `` in a word's text (unescaped as bash does); ``None`` for an
    unterminated one."""
    found: list[str | None] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch != "`":
            i += 1
            continue
        end = i + 1
        while end < n and text[end] != "`":
            end += 2 if text[end] == "\\" else 1
        if end >= n:
            found.append(None)
            break
        found.append(_BACKQUOTE_ESCAPE.sub(r"\1", text[i + 1 : end]))
        i = end + 1
    return found


# Builtins that take variable names (`read 'a[$(cmd)]'`, `printf -v 'a[…]'`, `declare 'a[…]=1'`): bash evaluates an
# array subscript in a name as arithmetic, and runs the `$(…)` or backquotes in it, also from a quoted literal.
_NAME_TAKERS: Final = frozenset(
    {"read", "printf", "declare", "typeset", "local", "export", "readonly", "mapfile", "readarray", "getopts",
     "wait", "unset", "let", "test", "["}
)  # fmt: skip
_RUNS_IN_SUBSCRIPT: Final = re.compile(r"\[[^\]]*(?:\$|`)")


_ASSIGNERS: Final = frozenset({"read", "printf", "mapfile", "readarray", "getopts"})
_EVALUATING_EXPANSION: Final = re.compile(r"\$\{(?:[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|\d+|[@*]):(?![-=+?])")
_INDIRECT_EXPANSION: Final = re.compile(r"\$\{!(?![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[*@]\])\})")


def _substring(text: str) -> str:
    """The offset and length of a substring expansion's text (``${x:1:2}`` → ``1:2``)."""
    found = _EVALUATING_EXPANSION.match(text)
    assert found is not None
    return text[found.end() : -1] if text.endswith("}") else text[found.end() :]


_ASSIGNING_EXPANSION: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?:?=")
_MAPFILE_VALUED: Final = frozenset("dnOsuCc")


def _assigned_names(base: str, words: Words) -> list[str | None]:
    """The variables ``read``, ``printf -v``, ``mapfile``/``readarray`` and ``getopts`` assign (``None``: a name
    only known at run time)."""
    if base == "printf":
        for index, word in enumerate(words[1:-1], start=1):
            if word == "-v":
                return [words[index + 1]]
            if word is None or word == "--" or not word.startswith("-"):
                return [None] if word is None and index == 1 else []
            if word.startswith("-v"):
                return [word[2:]]
        return []
    if base == "getopts":
        return list(words[2:3])
    names: list[str | None] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word is not None and word[:1] == "-" and len(word) > 1 and word != "--":
            if base == "read" and "a" in word[1:] and word[-1] == "a":
                names.append(words[index + 1] if index + 1 < len(words) else "")  # `read -a NAME`
                index += 2
            elif word[-1] in ("pdtnNui" if base == "read" else _MAPFILE_VALUED):
                index += 2  # `-p PROMPT`, `-d DELIM` …: a value, not a name
            else:
                index += 1
            continue
        names.append(word)
        index += 1
        if base != "read":
            break  # mapfile/readarray: one array
    return names


def _evaluated_subscript(base: str, words: Words) -> bool:
    """Whether a literal variable name (or, for declare and the like, an assignment) among ``words`` holds an
    array subscript with an expansion in it (``printf``: only the name after ``-v``)."""
    if base == "read":  # the names are the words after the options (`-p PROMPT` … take a value; `-a NAME` a name)
        names: list[str | None] = []
        index = 1
        while index < len(words):
            word = words[index]
            if word is not None and word[:1] == "-" and len(word) > 1 and word != "--":
                index += 2 if word[-1] in "pdtnNui" else 1  # `-p PROMPT`, `-rp PROMPT`: its value is no name
                continue
            names.append(word)
            index += 1
        return any(word is not None and _RUNS_IN_SUBSCRIPT.search(word) is not None for word in names)
    if base in {"declare", "typeset", "local", "export", "readonly"}:  # the names, before any `=`
        return any(
            word is not None and word[:1] != "-" and _RUNS_IN_SUBSCRIPT.search(word.split("=", 1)[0]) is not None
            for word in words[1:]
        )
    if base == "printf":
        for index, word in enumerate(words[1:-1], start=1):
            if word == "-v":
                following = words[index + 1]
                return following is not None and _RUNS_IN_SUBSCRIPT.search(following) is not None
            if word is None or not word.startswith("-v") or word.startswith("--"):
                continue
            return _RUNS_IN_SUBSCRIPT.search(word[2:]) is not None
        return False
    return any(word is not None and _RUNS_IN_SUBSCRIPT.search(word) is not None for word in words[1:])


class _Analyser:
    """Walks one syntax tree; nested strings (``bash -c``, ``eval``) get child analysers one level deeper."""

    def __init__(self, depth: int, nesting: int = 0, memo: _Memo | None = None, *, fast: bool = False) -> None:
        self.depth = depth
        self.nesting = nesting
        self.memo = memo  # what :meth:`classify` found for the same words in the same state, or None: no memo
        self.fast = fast  # whether :meth:`command` may read a plain simple command from its text
        self.source = ""  # the script being walked, when it is ASCII (node offsets are then string offsets)
        self.commands: list[Words] = []
        self.deny_commands: list[Words] = []
        self.redirects: list[Redirect] = []
        self.unsafe: list[str] = []
        self.unknown: list[str] = []
        self.runs_code = False
        self.editor = False  # an editor runs: `fed_editors` looks for one fed by a pipe or redirection
        self.stdin_static = False  # the command being classified reads a literal here-doc/here-string/file
        self.changes_directory = False
        self.dirs: DirState = START
        self.fed: list[Words] = []  # per write to a run-time file by redirection: the command whose output it is
        # (or a command it runs: `python3 -m zipfile -e …` owns what `zipfile -e …` writes)

    # -- results ---------------------------------------------------------------------------------------------
    def result(self) -> ShellAnalysis:
        deny_commands = tuple(dict.fromkeys(self.deny_commands))
        return ShellAnalysis(
            commands=tuple(self.commands),
            deny_commands=deny_commands,
            by_program=ByProgram((*self.commands, *deny_commands)),
            redirects=tuple(self.redirects),
            safe=not self.unsafe,
            unsafe_reasons=tuple(dict.fromkeys(self.unsafe)),
            changes_directory=self.changes_directory,
            unknown_reasons=tuple(dict.fromkeys(self.unknown)),
            runs_code=self.runs_code,
        )

    def dangerous(self, variable: str, reason: str) -> None:
        # PATH, LD_PRELOAD, BASH_ENV … decide which program runs; the others (PAGER, GIT_*) only what it does.
        if variable in _PROGRAM_VARS or variable.startswith(_PROGRAM_PREFIXES):
            self.unknown_program(reason)
        else:
            self.unsafe.append(reason)

    def runs_what_it_writes(self) -> None:
        """A program whose file the same command creates or fills, run by its path (``printf … > s.sh; chmod +x
        s.sh; ./s.sh``, ``cp x ./tool && ./tool``, ``curl -o t …; ./t``) or as the code of a shell, interpreter or
        build tool (``printf … > s.py; python3 s.py``, ``bash s.sh``, ``printf … > Makefile; make``, see
        :func:`_coderun.files_run`): what it runs is only known at run time, as for ``bash "$f"``. Files are
        recognised by name (the directory may change between the write and the run), so a file of the same name
        written elsewhere counts too. A write to a file only known at run time (``> "$f"``, ``tee "$f"``,
        ``cp a "$d/"``, an archive extracted) counts for every such run except the run whose own output it is
        (``./build.sh > "$LOG"``): that file may be the one run. Not counted: what only deletes or changes a
        file's metadata (``rm``, ``chmod +x build.sh && ./build.sh`` runs what was there), and programs run from
        the system directories by an unknown write."""
        found: set[str] = set()
        unknown = 0
        own: list[Words] = []  # the commands whose own arguments name a file only known at run time
        runs: list[tuple[Words, frozenset[str], bool]] = []
        facts, plain = _WRITES_AND_RUNS, _PLAIN_HEADS
        for words in self.commands:  # (not the deny-only readings: every suffix of a command is one of those)
            head = words[0] if words else None
            if head is None or head in plain:
                continue  # (most commands: their program neither writes a file by its arguments nor runs one)
            if head not in _WRITES_OR_RUNS and head.isascii() and head.isidentifier() and head.islower():
                if len(plain) < _MEMO_SIZE:
                    plain.add(head)
                continue
            fact = facts.get(words)
            if fact is None:
                fact = _writes_and_runs(words)
            created, unknown_created, names, exposed = fact
            if created:
                found.update(created)
            if unknown_created:
                unknown += unknown_created
                own.append(words)
            if names:  # (None: a script or module only known at run time, already a program only known then)
                runs.append((words, names, exposed))
        if not runs:
            return
        for r in self.redirects:
            if r.write and not r.operand:
                target = r.target
                if target is None or target.endswith(ANY_BELOW):
                    unknown += 1
                elif target:
                    found.add(target.rstrip("/").rpartition("/")[2])
                    if _coderun.in_bin_directory(target):
                        found.add(_coderun.BIN_WRITTEN)
        for words, names, exposed in runs:
            if found and not names.isdisjoint(found):
                self.unknown_program("a program the same command writes")
                return
            if exposed and unknown and unknown > own.count(words) + self.fed_by(words):
                self.unknown_program("a program run after a write to a file only known at run time")
                return

    def fed_by(self, words: Words) -> int:
        """How many writes to run-time files are the output of ``words`` (or of a command it runs, a suffix)."""
        return sum(1 for fed in self.fed if words[len(words) - len(fed) :] == fed)

    def stdin_program(self, words: Words, redirects: Sequence[tree_sitter.Node], text: str = "") -> None:
        """An interpreter reading its program from a here-document or here-string among ``redirects`` (or in
        ``text``): ``python3 <<'EOF' … os.system("t"+"ouch x") … EOF``: code that starts other programs is a
        program only known at run time (see :func:`_coderun.spawns`)."""
        head = words[0] if words else None
        if head is None or not _programs.reads_program_from_stdin(words):
            return
        text = text or " ".join(node_text(r) for r in redirects if r.type in _REDIRECT_KINDS)
        if _coderun.spawns(fold(posixpath.basename(head)), text):
            self.unknown_program("interpreter code that starts other programs or builds code at run time")

    def unknown_program(self, reason: str) -> None:
        """Record that what runs is only known at run time: never allowed, matched by every deny/ask rule."""
        self.unsafe.append(reason)
        self.unknown.append(reason)

    def absorb(self, other: _Analyser, *, deny_only: bool = False) -> None:
        if deny_only:
            self.deny_commands.extend(other.commands)
        else:
            self.commands.extend(other.commands)
            self.redirects.extend(other.redirects)
            self.unsafe.extend(other.unsafe)
            self.changes_directory = self.changes_directory or other.changes_directory
        self.deny_commands.extend(other.deny_commands)
        self.fed.extend(other.fed)
        if deny_only:
            # Files opened behind a wrapper (sudo, xargs, watch, trap …) still count, in a directory that may differ.
            self.redirects.extend(replace(r, dirs=None) for r in other.redirects)
        # Also from deny-only readings: if any reading may run an unknown program, deny and ask rules match.
        self.unknown.extend(other.unknown)
        self.runs_code = self.runs_code or other.runs_code
        self.editor = self.editor or other.editor

    def child(self) -> _Analyser:
        sub = _Analyser(self.depth + 1, self.nesting, self.memo, fast=self.fast)
        sub.dirs = self.dirs
        return sub

    # -- entry points ----------------------------------------------------------------------------------------
    def script(self, source: str) -> None:
        if self.depth > MAX_DEPTH:
            self.unknown_program("commands nested too deeply")
            return
        if _CONTROL.search(source):
            # tree-sitter treats e.g. a carriage return as blank where bash keeps it inside a word.
            self.unknown_program("control characters in the command")
        tree = _parser().parse(source.encode("utf-8", "surrogateescape"))
        if tree.root_node.has_error:
            self.unknown_program("the command does not parse")
        outer, self.source = self.source, source if source.isascii() else ""
        try:
            self.visit(tree.root_node)
        finally:
            self.source = outer
        if "`" in source:
            self.backquotes(tree.root_node)
        if self.editor:
            self.fed_editors(tree.root_node)

    def fed_editors(self, root: tree_sitter.Node) -> None:
        """Editors whose standard input the command feeds: they run it as keystrokes or commands.

        ``printf ':!rm x\\n' | vim f`` runs ``rm x`` (vim reads keys from a non-terminal), and so do ``ed`` and
        ``ex``: fed by a pipe it is code only known at run time, fed by a here-document, here-string or file it
        is code given as data (no narrower allow rule covers it; deny rules scan the text). Only scripts where
        an editor runs (:meth:`classify_now` noted one) get here."""
        stack = [root]
        while stack:
            node = stack.pop()
            children = node.named_children
            if node.type == "pipeline":
                for child in children[1:]:
                    if _names_editor(child):
                        self.unknown_program("an editor reading its commands from a pipe")
            elif node.type in {"redirected_statement", "command"}:
                redirects = [c for c in children if c.type in _REDIRECT_KINDS]
                if any(_feeds_stdin(r) for r in redirects) and _names_editor(node):
                    if _static_stdin(redirects):
                        self.runs_code = True
                        self.unsafe.append("an editor reading its commands from standard input")
                    else:
                        self.unknown_program("an editor reading its commands from standard input")
            stack.extend(children)

    def backquotes(self, root: tree_sitter.Node) -> None:
        """The backquoted substitutions tree-sitter-bash leaves unparsed, read as bash reads them.

        tree-sitter-bash keeps `` `…` `` inside a ``${…}`` operand as a plain word (``${x:-`rm x`}``, also between
        double quotes), and parses the inside of `` `…` `` as it is written, where bash first turns `` \\` ``,
        ``\\$`` and ``\\\\`` into `` ` ``, ``$`` and ``\\`` (`` `echo \\`rm x\\`` `` runs ``rm x``). Both are read
        again here: the commands they run count like any other (in a directory only known at run time); an
        unterminated one makes the command unanalysable. Only commands holding a backquote get here.
        """
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _LITERAL_KINDS:
                continue  # single quotes, $'…', comments; here-doc bodies are re-read by `heredoc_body`
            text = node_text(node)
            if "`" not in text:
                continue
            if kind == "command_substitution" and text.startswith("`"):
                inner = text[1:-1] if len(text) > 1 and text.endswith("`") else text[1:]
                unescaped = _BACKQUOTE_ESCAPE.sub(r"\1", inner)
                if unescaped != inner:
                    self.reread(unescaped)
            elif node.named_child_count == 0 and node.is_named:
                for segment in _unparsed_backquotes(text):
                    if segment is None:
                        self.unknown_program("an unterminated backquoted substitution")
                    else:
                        self.reread(segment)
            stack.extend(node.named_children)

    def reread(self, script: str) -> None:
        """Analyse ``script`` (a substitution's commands) in a child, in a directory only known at run time."""
        sub = self.child()
        sub.dirs = None
        sub.script(script)
        self.absorb(sub)

    def deny_only(self, run: Callable[[_Analyser], None]) -> None:
        sub = self.child()
        run(sub)
        self.absorb(sub, deny_only=True)

    # -- the tree walk ---------------------------------------------------------------------------------------
    def visit(self, node: tree_sitter.Node) -> None:
        if self.nesting >= MAX_NESTING:
            self.unknown_program("syntax nested too deeply")
            return
        self.nesting += 1
        try:
            self.visit_node(node)
        finally:
            self.nesting -= 1

    def visit_node(self, node: tree_sitter.Node, kind: str | None = None) -> None:
        """Visit ``node`` (whose type is ``kind``, read here if not given) at the current nesting."""
        if kind is None:
            kind = node.type
        if kind in _GENERIC:  # the most common kinds, which only have their children visited
            if node.is_missing:
                self.unknown_program("the command does not parse")
            self.visit_children(node)
        elif kind in _SUBSHELLS:
            saved = self.dirs  # a directory change in a subshell ends with it
            self.visit_children(node)
            self.dirs = saved
        elif kind in _LOOPS:
            mark, entry = len(self.redirects), self.dirs
            self.loop_variable(node)
            self.visit_children(node)
            self.loop_ended(mark, entry)
        elif kind == "command":
            self.command(node, ())
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind in {"declaration_command", "unset_command"}:
            self.declaration(node)
        elif kind == "function_definition":
            self.unsafe.append("function definitions")
            self.dirs = None  # the body runs wherever it is called from, and may change directory
            self.visit_children(node)
        elif kind in {"file_redirect", "heredoc_redirect", "herestring_redirect"}:
            self.redirect(node)
        elif kind == "test_command":
            if any(node_text(op) in _ARITHMETIC_TESTS for op in _descendants(node, "test_operator")):
                self.unknown_program("arithmetic tests (bash evaluates array subscripts in them)")
            self.visit_children(node)
        elif kind == "arithmetic_expansion" or (kind == "compound_statement" and node_text(node).startswith("((")):
            inner = node_text(node).removeprefix("$").lstrip("([").rstrip(")]")
            if not _SAFE_ARITHMETIC.fullmatch(inner):
                self.unknown_program("arithmetic on variables (bash evaluates array subscripts in it)")
            self.visit_children(node)
        elif kind == "expansion":
            text = node_text(node)
            if text.endswith("@P}"):  # `${x@P}`: prompt expansion runs the `$(…)` in x's value
                self.unknown_program("a prompt expansion (${…@P}) of a value only known at run time")
            if _EVALUATING_EXPANSION.match(text) and not _SAFE_ARITHMETIC.fullmatch(_substring(text)):
                # `${x:o}`, `${x:1:n}`: bash evaluates the offset and length as arithmetic, and a variable's value
                # there may hold an array subscript whose `$(…)` runs (o='a[$(touch y)]').
                self.unknown_program("a substring offset or length bash evaluates as arithmetic on variables")
            if _INDIRECT_EXPANSION.match(text):  # `${!x}`: x's value is a name, whose subscript bash evaluates
                self.unknown_program("an indirect expansion (${!x}) of a name only known at run time")
            default = _ASSIGNING_EXPANSION.match(text)
            if default is not None and _dangerous_variable(default[1]):  # `: ${PATH:=/tmp/x}` assigns PATH
                self.dangerous(default[1], f"an expansion assigns {default[1]}")
            self.visit_children(node)
        elif kind == "subscript":
            index = node.child_by_field_id(_INDEX)
            if index is not None and not _SAFE_ARITHMETIC.fullmatch(node_text(index)):
                self.unknown_program("array subscripts that are not plain numbers")
            self.visit_children(node)
        elif kind in _LEAVES:
            return
        else:
            if kind == "ERROR" or node.is_missing:
                self.unknown_program("the command does not parse")
            self.visit_children(node)

    def loop_variable(self, node: tree_sitter.Node) -> None:
        """``for PATH in /tmp/x; do ls; done`` (``select`` too) assigns its variable like ``PATH=/tmp/x``."""
        variable = node.child_by_field_id(_VARIABLE)
        if variable is not None and _dangerous_variable(name := node_text(variable)):
            self.dangerous(name, f"a loop assigns {name}")

    def assigned(self, base: str, words: Words) -> None:
        """Builtins that assign the variables they name (``read PATH``, ``printf -v PATH …``, ``mapfile``,
        ``getopts``): like ``PATH=…`` they change what runs; a name only known at run time may be any."""
        for name in _assigned_names(base, words):
            if name is None:
                self.unknown_program(f"{base} assigns a variable only known at run time")
            elif _dangerous_variable(variable := name.split("[", 1)[0]):
                self.dangerous(variable, f"{base} assigns {variable}")

    def loop_ended(self, mark: int, entry: DirState) -> None:
        """After a loop's body: a later iteration starts where this one ended (anywhere, if that is not where it
        started), and so do the files it opened from ``mark`` on."""
        if self.dirs != entry:
            self.dirs = None
            self.redirects[mark:] = [replace(r, dirs=None) for r in self.redirects[mark:]]

    def visit_children(self, node: tree_sitter.Node) -> None:
        # `visit` of each child that is not a leaf, inlined (the walk's hottest loop; `_shellwalk` walks it faster).
        if self.fast:
            _shellwalk.visit_children(self, node)
            return
        nesting = self.nesting
        for child in node.named_children:
            kind = child.kind_id
            if kind in _LEAF_IDS:
                continue
            if nesting >= MAX_NESTING:
                self.unknown_program("syntax nested too deeply")
                continue
            self.nesting = nesting + 1
            try:
                if kind in _COMMAND_IDS:
                    self.command(child, ())
                elif kind in _GENERIC_IDS:  # `visit_node`'s first branch, inlined
                    if child.is_missing:
                        self.unknown_program("the command does not parse")
                    self.visit_children(child)
                else:
                    self.visit_node(child)
            finally:
                self.nesting = nesting

    def redirected(self, node: tree_sitter.Node) -> None:
        body = node.child_by_field_id(_BODY)
        redirects = node.children_by_field_id(_REDIRECT)
        before, count = self.dirs, len(self.commands)
        # A file redirection's destinations, read once (by field: a few µs each) for the extra words and below.
        destinations = [r.children_by_field_id(_DESTINATION) if r.type == "file_redirect" else None for r in redirects]
        extra = tuple(
            arg
            for redirect, found in zip(redirects, destinations, strict=True)
            for arg in (found[1:] if found is not None else _redirect_extra_words(redirect))
        )
        if body is not None and body.type == "command":
            self.command(body, extra, redirects)
        else:
            if extra:
                self.unknown_program("words after a redirection of a compound command")
            if body is not None:
                self.visit(body)
            for word in extra:
                self.visit(word)
        opened = before
        if body is not None and body.type not in _OPENS_BEFORE:
            opened = None if before is None or self.dirs is None else before | self.dirs
        mark = len(self.redirects)
        for redirect, found in zip(redirects, destinations, strict=True):
            self.redirect(redirect, opened, found)
        if body is not None and body.type == "command":
            self.output_of_last(count, mark)

    def output_of_last(self, count: int, mark: int) -> None:
        """Note the writes to run-time files among ``redirects[mark:]`` (a statement's own redirections) as the
        output of the command it ran: the last of ``commands[count:]`` (its arguments' substitutions ran first)."""
        if len(self.commands) > count and len(self.redirects) > mark:
            owner = self.commands[-1]
            self.fed.extend(owner for r in self.redirects[mark:] if r.write and r.target is None)

    def redirect(
        self,
        node: tree_sitter.Node,
        dirs: DirState | Literal["current"] = "current",
        destinations: list[tree_sitter.Node] | None = None,
    ) -> None:
        """Record a redirection; ``dirs`` is where it is opened (default: the current directory state);
        ``destinations`` are a file redirection's destination children if the caller has read them."""
        state = self.dirs if dirs == "current" else dirs
        if node.type == "file_redirect":
            if destinations is None:
                destinations = node.children_by_field_id(_DESTINATION)
            operator = next((node_text(c) for c in node.children if not c.is_named), "")
            if destinations:
                target = destinations[0]
                writes, reads = file_opens(operator, target.type == "number", node_text(target))
                if writes or reads:
                    self.opens(*redirect_target(target), writes, reads, state)
                self.visit(target)
        else:
            # here-doc bodies with an unquoted delimiter and here-strings expand $(…) and backticks.
            for child in node.named_children:
                if child.type not in {"heredoc_start", "heredoc_end"}:
                    self.visit(child)
            start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            if start is not None and body is not None:
                dash = any(c.type == "<<-" for c in node.children)
                if _ends_earlier(node_text(start), node_text(body), dash=dash):
                    # A line of the body is the delimiter, inside a `$(…)`, `${…}` or quotes that tree-sitter
                    # continues past it: bash ends the here-document there and runs the lines after it.
                    self.unknown_program("a here-document that bash ends earlier than it is read here")
                if not re.search(r"[\"'\\]", node_text(start)):
                    self.heredoc_body(node_text(body))

    def opens(self, target: str | None, tilde: str | None, writes: bool, reads: bool, dirs: DirState) -> None:
        """Record the file a redirection opens (see :class:`Redirect`) for writing, reading or both. A
        ``/dev/tcp/HOST/PORT`` or ``/dev/udp/…`` path is a network connection bash itself opens (no program an
        allow rule names does): the command is then not covered by allow rules."""
        if target is not None and tilde is None and target.startswith(("/dev/tcp/", "/dev/udp/")):
            self.unsafe.append("a network connection bash opens (/dev/tcp, /dev/udp)")
        if writes:
            self.redirects.append(Redirect(target=target, write=True, tilde=tilde, dirs=dirs))
        if reads:
            self.redirects.append(Redirect(target=target, write=False, tilde=tilde, dirs=dirs))

    def heredoc_body(self, text: str) -> None:
        """Find the commands an unquoted here-doc body runs.

        tree-sitter-bash does not parse backticks in here-doc bodies, nor anything in ``<<-`` bodies; the body
        expands like a double-quoted string in which ``"`` is an ordinary character, so it is re-read as one.
        """
        if "`" not in text and "$" not in text:
            return
        quoted: list[str] = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                quoted.append('\\\\\\"' if text[i + 1] == '"' else text[i : i + 2])
                i += 2
                continue
            quoted.append('\\"' if ch == '"' else ch)
            i += 1
        sub = self.child()
        sub.script(': "' + "".join(quoted) + '"')
        sub.commands = [words for words in sub.commands if words[:1] != (":",)]
        self.absorb(sub)

    def assignment(self, node: tree_sitter.Node) -> None:
        name = node.child_by_field_id(_NAME)
        if name is not None and name.type == "variable_name" and _dangerous_variable(node_text(name)):
            self.dangerous(node_text(name), f"assignment to {node_text(name)} changes what runs")
            value = node.child_by_field_id(_VALUE)
            self.command_variable(node_text(name), "" if value is None else literal(value))
        self.visit_children(node)

    def command_variable(self, name: str, value: str | None) -> None:
        """A variable whose value a program runs as a command line (``GIT_SSH_COMMAND``, ``PAGER``, ``EDITOR``,
        ``LESSOPEN`` …, :data:`_COMMAND_VARS`): a value only known at run time is a program only known then (git
        runs ``GIT_SSH_COMMAND="$C"``); a literal one is read as a script, for deny and ask rules (``$(…)`` in it
        runs when the program hands it to a shell)."""
        if name not in _COMMAND_VARS and not _COMMAND_VAR_PATTERN.fullmatch(name):
            return
        if value is None:
            self.unknown_program(f"{name} holds a command only known at run time")
        elif value:
            self.runs_code = True
            self.deny_only(partial(_Analyser.script, source=value.lstrip("|")))  # LESSOPEN='|cmd %s'

    def declaration(self, node: tree_sitter.Node) -> None:
        words: list[str | None] = [node_text(node.children[0])] if node.children else []
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assignment(child)
                name = child.child_by_field_id(_NAME)
                value = child.child_by_field_id(_VALUE)
                value_text = "" if value is None else literal(value)
                words.append(None if name is None or value_text is None else f"{node_text(name)}={value_text}")
            else:
                self.visit(child)
                value_text = literal(child)
                words.append(value_text)
                if value_text is not None and _dangerous_variable(value_text.split("=", 1)[0]):
                    self.dangerous(value_text.split("=", 1)[0], f"{words[0]} of {value_text} changes what runs")
        if any(word is not None and word.startswith("-") and "i" in word[1:] for word in words[1:]):
            self.unknown_program("an integer declaration (bash evaluates array subscripts in its values)")
        options = 1
        while options < len(words) and (word := words[options]) is not None and re.fullmatch(r"-[A-Za-z]+", word):
            options += 1
        if any("n" in str(word) for word in words[1:options]):
            # `declare -n r=PATH; r=/tmp/x`: a name reference assigns what it refers to
            for word in words[options:]:
                target = None if word is None else word.split("=", 1)[1] if "=" in word else ""
                if target is None:
                    self.unknown_program("a name reference to a variable only known at run time")
                elif target and _dangerous_variable(target.split("[", 1)[0]):
                    self.dangerous(target, f"a name reference to {target}")
        if words and words[0] is not None and _evaluated_subscript(words[0], tuple(words)):
            self.unknown_program("a variable name whose array subscript bash evaluates (it runs what is in it)")
        self.commands.append(tuple(words))

    def command(
        self, node: tree_sitter.Node, extra: Sequence[tree_sitter.Node], redirects: Sequence[tree_sitter.Node] = ()
    ) -> None:
        if self.fast and self.source and not extra and self.nesting < MAX_NESTING:
            found = _simple_words(node, self.source, redirects)
            if found is not None:
                # What the general path below does for such a command: visiting its name finds nothing (a
                # leaf), its arguments are visited in order, and only the redirections around it may give it
                # its input.
                words, inner = found
                for arg in inner:
                    self.visit(arg)
                static = self.stdin_static = _static_stdin(redirects) if redirects else False
                try:
                    self.classify(words)
                finally:
                    self.stdin_static = False
                if static:
                    self.stdin_program(words, redirects)
                return
        name = node.child_by_field_id(_NAME)
        arg_nodes: list[tree_sitter.Node] = list(node.children_by_field_id(_ARGUMENT))
        named = node.named_children  # each access builds the list anew: read it once
        starts: set[int] = set()  # where redirections start
        added = bool(extra)
        for child in named:
            kind = child.type
            if kind == "variable_assignment":
                self.assignment(child)
            elif kind in _REDIRECT_KINDS:
                self.redirect(child)
                more = _redirect_extra_words(child)
                if more:
                    arg_nodes.extend(more)
                    added = True
            if kind.endswith("redirect"):
                starts.add(child.start_byte)
        if added:  # the arguments tree-sitter gave are in order already
            arg_nodes.extend(extra)
            arg_nodes.sort(key=_START_BYTE)
        for child in redirects:
            if child.type.endswith("redirect"):
                starts.add(child.start_byte)
        if starts:
            # tree-sitter-bash reads the descriptor of `0< file` / `{fd}< file` as an argument; bash does not.
            arg_nodes = [a for a in arg_nodes if not (a.end_byte in starts and _DESCRIPTOR.fullmatch(node_text(a)))]
        if name is None:
            if arg_nodes:
                self.unknown_program("arguments without a command name")
            for arg in arg_nodes:
                self.visit(arg)
            return
        self.visit(name)
        for arg in arg_nodes:
            if arg.type not in _LEAVES:
                self.visit(arg)
        static = self.stdin_static = _static_stdin((*named, *redirects))
        words = _words(name, arg_nodes)
        try:
            self.classify(words)
        finally:
            self.stdin_static = False
        if static:
            self.stdin_program(words, (*named, *redirects))

    # -- what a simple command runs --------------------------------------------------------------------------
    def classify(self, words: Words) -> None:
        """Record what ``words`` runs, following wrappers, shells, ``eval`` and ``find -exec``.

        What it records is a pure function of the words and of the state it reads (the directory state,
        whether standard input is literal, the depth and the nesting): it is memoised on them, and a memoised
        answer is appended to this analyser's lists exactly as :meth:`classify_now` appends it.
        """
        if not words:
            return
        memo = self.memo
        if memo is None:
            self.classify_now(words)
            return
        key = (words, self.dirs, self.stdin_static, self.depth, self.nesting)
        found = memo.get(key)
        if found is None:
            found = self.classified(words)
            if sum(len(word) for word in words if word is not None) <= _MEMO_CHARS:  # keep the memo small
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                memo[key] = found
        self.apply(found)

    def classify_plain(self, text: str) -> bool:
        """:meth:`classify` of the words of a plain command read from its ``text``; ``False``, and nothing
        recorded, when the text is not plain. The memo keeps the answer under the text (its words are a function
        of it) in the same state, so a command seen before is not read again."""
        memo = self.memo
        if memo is None:
            words = plain_words(text)
            if words is not None:
                self.classify(words)
            return words is not None
        key = (text, self.dirs, self.stdin_static, self.depth, self.nesting)
        found = memo.get(key)
        if found is None:
            words = plain_words(text)
            if words is None:
                return False
            found = self.classified(words)
            if 2 * len(text) <= _MEMO_CHARS:  # the entry holds the text and its words: as small as a words entry
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                memo[key] = found
        self.apply(found)
        return True

    def classified(self, words: Words) -> _Classified:
        """What :meth:`classify_now` records for ``words`` in this analyser's state, without recording it."""
        sub = _Analyser(self.depth, self.nesting, self.memo, fast=self.fast)
        sub.dirs, sub.stdin_static = self.dirs, self.stdin_static
        sub.classify_now(words)
        only = not (sub.deny_commands or sub.redirects or sub.unsafe or sub.unknown or sub.runs_code or sub.editor)
        return _Classified(
            tuple(sub.commands), tuple(sub.deny_commands), tuple(sub.redirects), tuple(sub.unsafe),
            tuple(sub.unknown), sub.runs_code, sub.changes_directory, sub.dirs,
            only and not sub.changes_directory and sub.dirs == self.dirs, sub.editor, tuple(sub.fed),
        )  # fmt: skip

    def apply(self, found: _Classified) -> None:
        """Record what :meth:`classified` found, as :meth:`classify_now` would have recorded it."""
        if found.only_commands:
            self.commands.extend(found.commands)
            return
        commands, deny_commands, redirects, unsafe, unknown, runs_code, changes_directory, self.dirs, _, editor, fed = (
            found
        )
        self.editor = self.editor or editor
        if fed:
            self.fed.extend(fed)
        if commands:
            self.commands.extend(commands)
        if deny_commands:
            self.deny_commands.extend(deny_commands)
        if redirects:
            self.redirects.extend(redirects)
        if unsafe:
            self.unsafe.extend(unsafe)
        if unknown:
            self.unknown.extend(unknown)
        self.runs_code = self.runs_code or runs_code
        self.changes_directory = self.changes_directory or changes_directory

    def classify_now(self, words: Words) -> None:
        """:meth:`classify` without the memo (its nested classifications may still use it)."""
        head = words[0]
        if head is None or not head:
            self.unknown_program("a command name only known at run time")
            self.dirs = None  # it may be `cd`
            return
        base = posixpath.basename(head) if "/" in head else head
        if base in _NAME_TAKERS and _evaluated_subscript(base, words):
            self.unknown_program("a variable name whose array subscript bash evaluates (it runs what is in it)")
        if base in _ASSIGNERS:
            self.assigned(base, words)
        elif base == "fc" and not any(word in {"-l", "-ln", "-nl"} for word in words[1:]):
            self.unknown_program("fc runs commands from the history")
        if fold(base) in _EDITORS:
            self.editor = True
        trusted = "/" not in head or posixpath.dirname(head) in SYSTEM_DIRS
        if base in WRITERS:  # in the directory the command starts in (`source` may change it afterwards)
            self.redirects.extend(operand_targets(base, words, self.dirs))
        if base in EXTRACTORS:
            # The files an archive or a patch holds, below the directory it unpacks into: the protected-path guard
            # asks about them even behind a hook's allow, Edit deny and ask rules for files there match them, and
            # a program the command runs by its path may be one of them.
            found = extracted(base, words, self.dirs)
            self.redirects.extend(found)
            self.fed.extend(words for _ in found)  # (what this command itself unpacks is not a program it runs)
        if base in _DIRECTORY_CHANGERS:
            self.changes_directory = True
            self.dirs = after_directory_change(self.dirs, base, words)
        elif base in {"source", ".", "alias"}:
            self.dirs = None  # the sourced file (or a later use of the alias) may change directory
        elif base == "tee":
            self.redirects.extend(tee_targets(words, self.dirs))
        if self.depth > MAX_DEPTH:
            self.unknown_program("commands nested too deeply")
            self.commands.append(words)
            return
        if base in _SHELLS and trusted:
            self.shell(words)
        elif base == "eval" and trusted:
            self.eval(words)
        elif base in _TRANSPARENT and trusted:
            self.transparent(base, words)
        elif fold(base) in _ALL_WRAPPERS:
            # Also `SUDO`, `ｓｕｄｏ`, `Bash -c` (which run sudo and bash on a case-insensitive file system), and
            # wrappers named by a path outside the system directories: deny rules look behind them.
            self.record(words)
            self.wrapped_suffixes(words)
            if fold(base) in {"xargs", "parallel"}:
                self.substitutions(fold(base), words)
        elif base == "find":
            self.find(words)
        elif base == "alias":
            self.unknown_program("alias definitions")
            self.commands.append(words)
            for word in words[1:]:
                if word is not None and "=" in word:
                    self.deny_only(partial(_Analyser.script, source=word.split("=", 1)[1]))
        elif base in {"source", "."} and any(word is None for word in words[1:]):
            self.unknown_program(f"{base} of a file only known at run time")
            self.commands.append(words)
        elif base in {"source", "."} and _sources_stdin(words):
            self.unknown_program(f"{base} of standard input")
            self.commands.append(words)
        elif base in {"source", "."} and any(w is not None and w.startswith("-p") for w in words[1:2]):
            self.unknown_program(f"{base} -p searches a path only known at run time")  # bash 5.3: `. -p /dev stdin`
            self.commands.append(words)
        else:
            self.runs_code = self.runs_code or base in {"source", "."}
            self.record(words)
            self.subcommands(words)
            if base in _RISKY_BUILTINS:
                self.builtin(base, words)

    def builtin(self, base: str, words: Words) -> None:
        """Builtins that change what a name runs, load code, run a callback, or evaluate arithmetic."""
        options = [word for word in words[1:] if word is None or word.startswith("-")]
        if base == "enable" and any(word is None or "f" in word[1:] for word in options):
            self.unknown_program("enable -f loads a builtin from a file")
        elif base == "hash" and any(word is None or "p" in word[1:] for word in options):
            self.unknown_program("hash -p changes what a name runs")
        elif base == "let" and not all(w is not None and _SAFE_ARITHMETIC.fullmatch(w) for w in words[1:]):
            self.unknown_program("arithmetic on variables (bash evaluates array subscripts in it)")
        elif base in {"test", "["} and any(word in {"-v", "-R"} for word in words[1:]):
            self.unknown_program("test -v evaluates an array subscript")
        elif base in {"mapfile", "readarray", "compgen", "complete"}:
            for index, word in enumerate(words[:-1]):
                if word == "-C" or (word is not None and word.startswith("-C")):
                    callback = word[2:] if word is not None and len(word) > 2 else words[index + 1]
                    if callback is None:
                        self.unknown_program(f"a {base} callback only known at run time")
                    else:
                        self.runs_code = True
                        self.deny_only(partial(_Analyser.script, source=callback))

    def record(self, words: Words) -> None:
        """Append a command an allow rule must cover; note code it runs from data, or only knows at run time."""
        self.commands.append(words)
        if _programs.code_triggers(words):
            self.runs_code = True
        reason = _programs.unknown_code(words, stdin_static=self.stdin_static)
        if reason is not None:
            self.runs_code = True
            self.unknown_program(reason)
        elif _programs.reads_program_from_stdin(words):
            self.runs_code = True

    def subcommands(self, words: Words) -> None:
        """Deny-only readings of a multi-command program: its subcommand behind global options, and runners."""
        head = words[0]
        assert head is not None
        program = fold(posixpath.basename(head.rstrip("/")) or head)
        scan = _programs.scan_globals(program, words)
        if scan is not None:
            if scan.sub is None:
                self.deny_commands.append((head, None))  # an unknown subcommand: any of the program's rules
            elif scan.sub > 1:
                self.deny_commands.append((head, *words[scan.sub :]))
            if scan.sub is not None and scan.sub < len(words):
                spelled = _programs.canonical_words(program, words, scan.sub)
                if spelled is not None:  # `npm i x`, `npm pub`, `docker image push x`: rules for `npm install` …
                    self.deny_commands.append((head, *spelled))
            for value in scan.config_values:
                if value is None:
                    self.unknown_program(f"a {program} setting only known at run time")
                elif "=" in value and not plain_setting(value.split("=", 1)[0]):
                    # core.pager=…, alias.x=!…, and any setting not known to be plain: its value may be a command
                    self.runs_code = True
                    self.deny_only(partial(_Analyser.script, source=value.split("=", 1)[1].lstrip("!")))
            if program == "git" and any(word is not None and fold(word).startswith("ext::") for word in words):
                self.unknown_program("git runs the command an ext:: URL names")  # `ext::sh -c t\ouch% x`
            if program == "git" and scan.sub is not None:
                self.git_commands(words, scan.sub)
            elif program == "uv" and scan.sub is not None and words[scan.sub : scan.sub + 1] == ("pip",):
                self.deny_only(partial(_Analyser.classify, words=words[scan.sub :]))  # `uv pip install` is pip's
        if program in {"ssh", "scp", "sftp"}:  # ProxyCommand and the like run here, not on the remote host
            for command in ssh_commands(words)[1]:
                if command is None:
                    self.unknown_program("an ssh option only known at run time")
                else:
                    self.deny_only(partial(_Analyser.script, source=command))
        module = _programs.python_module(program, words)
        if module is not None:  # `python3 -m pip install x`: rules for the module's command apply
            self.deny_only(partial(_Analyser.classify, words=module))
        start = _programs.runner_start(program, words, None if scan is None else scan.sub)
        if start is not None:
            self.wrapped_suffixes(words[start - 1 :])

    def git_commands(self, words: Words, sub: int) -> None:
        """Deny-only readings of the commands a git subcommand runs (``submodule foreach``, ``rebase -x`` …)."""
        found = git_code(words, sub)
        if found.triggers:
            self.runs_code = True
        for script in found.scripts:
            if script is None:
                self.unknown_program("a command git runs that is only known at run time")
            else:
                self.deny_only(partial(_Analyser.script, source=script))
        for start in found.argv_starts:
            if start < len(words):
                self.deny_only(partial(_Analyser.classify, words=words[start:]))

    def wrapped_suffixes(self, words: Words) -> None:
        """Deny-only: every later word may start the wrapped command; literal strings may be scripts."""
        for index in range(1, min(len(words), 32)):
            word = words[index]
            if word is None:
                self.unknown.append("a run-time word where a wrapper may take its command")
                continue
            if word.startswith("-") or split_assignment(word):
                continue
            self.deny_only(partial(_Analyser.classify, words=words[index:]))
            if re.search(r"[\s;&|`$()<>]", word):
                self.deny_only(partial(_Analyser.script, source=word))

    def substitutions(self, base: str, words: Words) -> None:
        """The command ``xargs -I{}``, ``parallel`` or ``find -exec`` runs, with the words their input replaces only
        known at run time: if what it runs is then only known at run time (``xargs -I{} sh -c '{}'`` runs its input
        as a shell command), so is this command's. ``parallel`` without a command runs its input as commands."""
        if _coderun.reads_commands(base, words):
            self.unknown_program(f"{base} runs the commands it reads")
            return
        command = _coderun.substituted_command(base, words)
        if command is not None:
            sub = self.child()
            sub.classify(command)
            if sub.unknown:  # (a replaced argument, `ls {}`, is only an argument: only what may run counts)
                self.unknown_program(f"{base.split('-')[0]} puts its input where a command or its code goes")

    def transparent(self, base: str, words: Words) -> None:
        flags, with_arg, has_operand = _TRANSPARENT[base]
        index = 1
        while index < len(words):
            word = words[index]
            if word is None:
                break
            if word == "--":
                index += 1
                break
            option = word.split("=", 1)[0]
            if option in flags:
                index += 1
            elif option in with_arg:
                index += 1 if "=" in word else 2
            elif base == "nice" and re.fullmatch(r"-\d+", word):
                index += 1
            elif base in {"stdbuf", "nice", "ionice", "env"} and re.fullmatch(r"-[ioecnuC].+", word):
                index += 1  # attached option argument: -oL, -n10, -uNAME
            elif word.startswith("-") and word != "-":
                break  # an option we do not know: handled below as not analysable
            else:
                break
        if base == "env":
            while index < len(words) and (word := words[index]) is not None and (split := split_assignment(word)):
                if _dangerous_variable(split[0]):
                    self.dangerous(split[0], f"env assignment to {split[0]} changes what runs")
                    self.command_variable(*split)
                index += 1
        if has_operand:
            index += 1  # timeout's duration
        rest = words[index:]
        if rest and rest[0] is not None and rest[0].startswith("-"):
            self.unsafe.append(f"an option of {base} this policy does not understand")
            self.commands.append(words)
            self.wrapped_suffixes(words)
        elif not rest:
            self.commands.append(words)  # e.g. a bare `env`: a command of its own
        elif base == "env" and any(w is not None and w.startswith(("-C", "--chdir")) for w in words[1:index]):
            saved, self.dirs = self.dirs, None  # `env -C DIR` runs the command elsewhere
            self.classify(rest)
            self.dirs = saved
        else:
            self.classify(rest)

    def shell(self, words: Words) -> None:
        index, command_string, reads_stdin = 1, False, False
        while index < len(words):
            word = words[index]
            if word is None:
                self.unknown_program("shell options only known at run time")
                self.commands.append(words)
                self.wrapped_suffixes(words)
                return
            if word in {"--", "-"}:
                index += 1
                break
            if word in _SHELL_OPTS_WITH_ARG:
                index += 2
            elif word.startswith("--"):
                if word not in _SHELL_LONG_OPTS:
                    self.unknown_program(f"shell option {word}")
                index += 1
            elif re.fullmatch(r"[-+][A-Za-z]+", word):
                command_string = command_string or "c" in word
                reads_stdin = reads_stdin or "s" in word
                index += 2 if ("o" in word[1:] or "O" in word[1:]) else 1
            else:
                break
        rest = words[index:]
        if rest and not command_string and not reads_stdin:
            script = rest[0]
            if script is None:
                self.unknown_program("a shell script only known at run time")
                self.commands.append(words)
                return
            if _programs.reads_script_from_stdin(script):
                reads_stdin = True
        if command_string:
            if not rest or rest[0] is None:
                self.unknown_program("a shell command string only known at run time")
                self.commands.append(words)
                self.wrapped_suffixes(words)
                return
            sub = self.child()
            sub.script(rest[0])
            self.absorb(sub)
        elif rest and not reads_stdin:
            self.runs_code = True  # a script file: the allow rule has to name it, deny rules scan the text
            self.commands.append(words)
        else:
            self.unknown_program("a shell reading commands from standard input")
            self.commands.append(words)

    def eval(self, words: Words) -> None:
        args = words[2:] if words[1:2] == ("--",) else words[1:]  # `eval -- CMD` runs CMD
        if any(arg is None for arg in args):
            self.unknown_program("eval of a string only known at run time")
            self.commands.append(words)
            self.wrapped_suffixes(words)
            return
        sub = self.child()
        sub.script(" ".join(arg for arg in args if arg is not None))
        self.absorb(sub)
        self.dirs = sub.dirs  # eval runs in this shell

    def find(self, words: Words) -> None:
        self.record(words)
        index = 1
        while index < len(words):
            if words[index] in _FIND_EXEC:
                end = index + 1
                while end < len(words) and words[end] not in {";", "+"}:
                    end += 1
                saved = self.dirs
                if words[index] in {"-execdir", "-okdir"}:
                    self.dirs = None  # runs in the directory of each file found
                self.classify(words[index + 1 : end])
                self.substitutions("find-exec", words[index + 1 : end])
                self.dirs = saved
                index = end
            index += 1


def _analyse_once(source: str, memo: _Memo | None, fast: bool) -> _Analyser:
    analyser = _Analyser(0, memo=memo, fast=fast)
    try:
        analyser.script(source)
    except RecursionError:  # a backstop: MAX_NESTING and MAX_DEPTH should stop the walk well before this
        analyser = _Analyser(0)
        analyser.unknown_program("syntax nested too deeply")
    return analyser


@lru_cache(maxsize=512)
def analyse(command: str) -> ShellAnalysis:
    """Analyse one Bash command string (see the module docstring). Pure and cached."""
    return analyse_with(command, _CLASSIFIED, fast=True)


def analyse_with(command: str, memo: _Memo | None, *, fast: bool) -> ShellAnalysis:
    """:func:`analyse`, uncached, with the given memo of simple commands (``None``: none, every command is
    classified anew) and with or without reading plain simple commands from their text (``fast``). The result
    is the same either way (the tests check it): the memo and the fast path only save time."""
    if "\x00" in command:
        analyser = _Analyser(0)
        analyser.unknown_program("a NUL character in the command")
        return analyser.result()
    first = _analyse_once(command, memo, fast)
    if "\\\n" in command:
        # tree-sitter-bash splits `r\<newline>m` into two words where bash joins them, and a continuation at
        # the end of a comment is the reverse case. Analyse both readings: both must agree for an allow.
        second = _analyse_once(command.replace("\\\n", ""), memo, fast)
        if first.commands != second.commands or first.redirects != second.redirects:
            first.unknown_program("a line continuation that changes how the command splits into words")
        first.absorb(second, deny_only=True)
        first.unsafe.extend(second.unsafe)
    first.runs_what_it_writes()
    return first.result()
