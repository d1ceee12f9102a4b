"""Code given as data: interpreters (``python3 -c``), awk and sed programs, ``find -exec``, ``xargs`` and the like.

:func:`program_code` tells, for one simple command, which of its words make it run code given as data or write
files through an option (the *triggers* an allow rule must name), whether that code is only known at run time,
and whether the program reads its code from standard input. Table-driven, linear in the number of words; used
by :mod:`hookloop.permissions._programs`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from hookloop.permissions._text import OPAQUE

__all__ = [
    "BIN_WRITTEN",
    "NONE",
    "RUNS_FILES",
    "Code",
    "files_run",
    "in_bin_directory",
    "long_option",
    "option_name",
    "program_code",
    "reads_commands",
    "reads_script_from_stdin",
    "spawns",
    "substituted_command",
]

Words = tuple[str | None, ...]


def option_name(word: str) -> str:
    """``--registry=x`` → ``--registry``."""
    return word.split("=", 1)[0]


def long_option(word: str, *known: frozenset[str] | tuple[str, ...]) -> str:
    """The option ``word`` names: its name (``--x=v`` → ``--x``), or, for a long option that is none of ``known``,
    the first known option it abbreviates, looking through ``known`` in order (put the options that run code or
    write files first).

    GNU ``getopt_long`` (sed, tar, sort, make, wget, man, gawk, coreutils …), git's subcommand options, npm and
    Python's option parsers take any unambiguous prefix of a long option for the option: ``sed --in-pl`` is
    ``sed --in-place``, ``git fetch --upload-pa=CMD`` is ``--upload-pack=CMD``. An ambiguous prefix is refused by
    the program; reading it as an option that runs code only errs on the restrictive side."""
    name = word.split("=", 1)[0]
    if len(name) < 3 or not name.startswith("--") or any(name in options for options in known):
        return name
    return _abbreviated(name, known)


@lru_cache(maxsize=1024)
def _abbreviated(name: str, known: tuple[frozenset[str] | tuple[str, ...], ...]) -> str:
    for options in known:
        found = sorted(option for option in options if option.startswith(name) and option.startswith("--"))
        if found:
            return found[0]
    return name


# Code that starts other programs, or builds code or names at run time, per language: what it starts is then known
# only when the interpreter runs (`os.system("t"+"ouch x")`, `getattr(__import__("os"), "sys"+"tem")`), so a
# deny rule cannot be matched against its text: such code may run any program.
_PYTHON_SPAWNS: Final = (
    r"\b(?:system|popen|subprocess|spawn\w*|exec[lv]\w*|posix_spawn\w*|pty|Popen|check_output|check_call|"
    r"getoutput|getstatusoutput|__import__|importlib|exec|eval|getattr|globals|vars|__builtins__|"
    r"__dict__|__globals__|__subclasses__|ctypes|fork|breakpoint|pdb|runpy|webbrowser|startfile)\b|"
    r"(?<![.\w])compile\s*\(|\bcode\.interact"
)
_NODE_SPAWNS: Final = (
    r"child_process|\b(?:exec|execSync|execFile\w*|spawn\w*|fork|eval|Function|dlopen|binding|"
    r"runInThisContext|runInNewContext|compileFunction|Worker|constructor|mainModule)\b|\bimport\s*\(|"
    r"require\s*\(\s*(?![\"'][\w./@:-]*[\"']\s*\))|globalThis\s*\[|process\s*\["
)
_PERL_SPAWNS: Final = (
    r"\b(?:system|exec|qx|fork|eval|do|require|syscall|pipe|readpipe|can|UNIVERSAL|CORE)\b|`|"
    r"\bopen\d?\b[^;]*\||&\s*\{|\*\s*\{|&\$|\$\w+\s*->\s*\(|->\s*\$|\bs(\W).*\1[a-z]*e[a-z]*\b"
)
_RUBY_SPAWNS: Final = (
    r"\b(?:system|exec|spawn|popen\w*|Open3|PTY|fork|eval|instance_eval|class_eval|module_eval|send|__send__|"
    r"public_send|const_get|Kernel|binding|syscall)\b|`|%x|\bopen\s*\(?\s*[\"']\|"
)
_PHP_SPAWNS: Final = (
    r"\b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|pcntl_fork|eval|assert|"
    r"create_function|call_user_func\w*|include|require|include_once|require_once|mail|putenv|dl|"
    r"ReflectionFunction|array_map|array_filter|usort|preg_replace_callback)\b|`|\$\w+\s*\(|[\"']\s*\("
)
_LUA_SPAWNS: Final = r"\b(?:os\.execute|io\.popen|load|loadstring|dofile|loadfile|require|package|_G|_ENV|debug)\b"


@dataclass(frozen=True, slots=True)
class _Interpreter:
    code: frozenset[str]  # options whose value is the program text
    with_arg: frozenset[str]  # other options that take the next word (or an attached value)
    stops: frozenset[str]  # options after which the rest are the program's arguments (python -m)
    attached: str  # single-letter options whose argument may be attached in a cluster (perl -Mstrict)
    numeric: str  # single-letter options followed by an optional number, then more options (perl -l, -0)
    info: frozenset[str]  # options that only print something (--version)
    stdin: bool  # reads its program from standard input when no script is named
    spawns: re.Pattern[str] | None = None  # code that starts other programs (see _PYTHON_SPAWNS)


def _i(
    code: str,
    with_arg: str = "",
    stops: str = "",
    attached: str = "",
    numeric: str = "",
    stdin: bool = True,
    spawns: str | None = None,
) -> _Interpreter:
    info = frozenset({"--version", "-V", "--help", "-h", "-v", "-version", "--v8-options"})
    return _Interpreter(
        frozenset(code.split()), frozenset(with_arg.split()), frozenset(stops.split()), attached, numeric, info, stdin,
        None if spawns is None else re.compile(spawns),
    )  # fmt: skip


_PYTHON = _i("-c", "-W -X -Q", "-m", spawns=_PYTHON_SPAWNS)
_MODULE_OPTIONS: Final = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader", "--preload"})
_NODE = _i(
    "-e --eval -p --print",
    "-r --require --import --loader --experimental-loader -C --conditions --title",
    spawns=_NODE_SPAWNS,
)
_INTERPRETERS: Final[dict[str, _Interpreter]] = {
    "python": _PYTHON, "python2": _PYTHON, "python3": _PYTHON, "pypy": _PYTHON, "pypy3": _PYTHON,
    "node": _NODE, "nodejs": _NODE,
    "perl": _i("-e -E", "", "", "MmIxidDFC", "l0", spawns=_PERL_SPAWNS),
    "ruby": _i("-e", "-r -I -C -E -W -x -i", "", "rICEWxi", spawns=_RUBY_SPAWNS),
    "php": _i("-r -B -R -E", "-f -F -c -d -z -t", "", "fFcdzt", spawns=_PHP_SPAWNS),
    "lua": _i("-e", "-l", spawns=_LUA_SPAWNS), "luajit": _i("-e", "-l -j -O -b", spawns=_LUA_SPAWNS),
    "rscript": _i("-e", "", "", "", stdin=False), "r": _i("-e", "", "", "", stdin=False),
    "tclsh": _i(""), "wish": _i(""),
    "osascript": _i("-e", "-l -s"),
    "pwsh": _i("-c -command -commandwithargs -cwa", "-f -file -wd -workingdirectory -executionpolicy -ep"),
    "powershell": _i("-c -command", "-f -file -executionpolicy -ep"),
    "deno": _i("", "", "", "", stdin=False),
    "bun": _i("-e --eval -p --print", "-r --preload", "", "", stdin=False, spawns=_NODE_SPAWNS),
    "jshell": _i(""), "irb": _i(""), "ghci": _i("-e"), "runghc": _i(""), "guile": _i("-c", "-l -L -e"),
    "sbcl": _i("--eval", "--load --script"), "clojure": _i("-e", "-M -X -A -T -i"),
    "erl": _i("-eval", "-s -run -pa -pz", "", "", stdin=False), "elixir": _i("-e", "-r -pa -pz"),
    "julia": _i("-e -E", "-L --project -J -t --threads"), "scala": _i("-e"), "groovy": _i("-e"),
    # m4 runs commands from its input (`esyscmd(…)`, `syscmd(…)`); dc runs `!cmd` from its program.
    "m4": _i("", "-D -U -I -o -F -R -t -l -d -G -L", "", "DUIFRtldL"), "gm4": _i("", "-D -U -I -o -F -R -t -l -d"),
    "dc": _i("-e --expression", "-f --file"),
}  # fmt: skip
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
    # wget -e runs a .wgetrc command (`output_document=…`, `use_askpass=…`); curl -K reads options from a file.
    "wget": frozenset({"-e", "--execute", "--use-askpass", "--config"}),
    "curl": frozenset({"-K", "--config"}),
    "sort": frozenset({"--compress-program"}),
    "split": frozenset({"--filter"}),  # runs a shell command per chunk
    "rg": frozenset({"--pre"}),  # runs a preprocessor command on every file it searches
    "fd": frozenset({"-x", "--exec", "-X", "--exec-batch"}),  # run a command per file found, like find -exec
    "fdfind": frozenset({"-x", "--exec", "-X", "--exec-batch"}),
    "helm": frozenset({"--post-renderer"}),
    # go runs test binaries / the toolchain through -exec / -toolexec; rake -e runs Ruby; just --shell runs
    # recipes through it; nix-shell --run, ansible -a (shell/command/raw modules), vagrant ssh -c and fzf's
    # --preview / --bind execute(…) run command strings; mvn -Dexec.executable=… names the program exec:exec runs.
    "go": frozenset({"-exec", "-toolexec"}),
    "rake": frozenset({"-e", "--execute", "-E", "--execute-continue", "-p", "--execute-print"}),
    "just": frozenset({"--shell", "--shell-arg", "--shell-command"}),
    "nix-shell": frozenset({"--run", "--command"}),
    "ansible": frozenset({"-a", "--args"}),
    "vagrant": frozenset({"-c", "--command"}),
    "fzf": frozenset({"--preview", "--bind"}),
    "mvn": frozenset(), "mvnw": frozenset(),
    # netcat runs a program on the connection; openssl loads an engine or provider library.
    "nc": frozenset({"-e", "-c"}), "netcat": frozenset({"-e", "-c"}),
    "ncat": frozenset({"-e", "-c", "--exec", "--sh-exec", "--lua-exec"}),
    "openssl": frozenset({"-engine", "-provider-path", "-provider"}),
}  # fmt: skip
_SOCAT_RUNS: Final = re.compile(r"(?i)(?:exec|system):")
_MAVEN_EXEC: Final = re.compile(r"-D(?:exec\.(?:executable|args)|exec\.mainClass)=")
_MAKE_SHELL: Final = re.compile(r"(?:SHELL|\.SHELLFLAGS|MAKESHELL)\s*[:+?]?=")
# Real options that are prefixes of one in _CODE_OPTIONS (not abbreviations of it).
_REAL_PREFIXES: Final = {"tar": frozenset({"--checkpoint"})}
# npm settings whose value is a program npm runs (scripts' shell, node's options, an editor) or another
# configuration file: setting one (`npm config set script-shell ./evil`) runs code on every later npm command.
_NPMS: Final = frozenset({"npm", "pnpm", "yarn"})
_NPM_CODE_KEYS: Final = frozenset(
    {"script-shell", "shell", "node-options", "onload-script", "userconfig", "globalconfig", "editor", "browser",
     "viewer", "git", "prefix", "cache", "init-module", "node-gyp", "yarn-path", "nodeLinker", "plugins"}
)  # fmt: skip


def _npm_config(words: Words) -> Code:
    if not any(w in {"config", "set", "c"} for w in words[1:3]):
        return NONE
    found = [w for w in words[2:] if w is not None and w.split("=", 1)[0].lstrip("-") in _NPM_CODE_KEYS]
    if any(w is None for w in words[2:]):
        return Code((), "an npm setting only known at run time", False)
    return Code(tuple(found), None, False)


_VI: Final = frozenset({"vim", "vi", "nvim", "ex", "view"})
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
_AWK_W_CODE: Final = ("exec", "file", "source", "include", "load")  # what `-W NAME` runs (any prefix)
_AWK_RISKY: Final = re.compile(r"system|\||>|getline|@|ENVIRON|PROCINFO|close|fflush")
_AWK_LITERAL_COMMANDS: Final = re.compile(
    r'\bsystem\s*\(\s*"[^"\\]*"\s*\)|\|\s*"[^"\\]*"\s*(?=[;}\n)]|$)|"[^"\\]*"\s*\|\s*getline\b'
)
_AWK_SPAWNS: Final = re.compile(r"\bsystem\s*\(|\|\s*&|\|\s*getline|\bprintf?\b[^;{}]*(?<!\|)\|(?!\|)")
# sed's `e` command without an argument and the `e` flag of `s`: they run the pattern space (text from the input)
# as a command (`e COMMAND` runs COMMAND, which is in the text).
_SED_EXECUTES: Final = re.compile(
    r"(?:^|[;\n{}])\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/)?(?:,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*e\s*(?:[;\n}]|$)"
    r"|s(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1[gpiIMm0-9w]*e"
)
_SED_IN_PLACE: Final = re.compile(r"-[A-Za-hj-z]*i.*|--in-place(=.*)?")
_SED_LONG: Final = ("--in-place", "--expression", "--file", "--line-length")
_SED_WITH_ARG: Final = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})
_STDIN_PATH: Final = re.compile(r"(^|/)(dev|proc)(/|$)|(^|/)fd/|^-$")


def reads_script_from_stdin(path: str) -> bool:
    """Whether a script path names standard input or another descriptor: ``/dev/stdin``, ``/proc/self/fd/0`` …"""
    return _STDIN_PATH.search(posixpath.normpath(path.replace("//", "/"))) is not None or path.strip() in {"-", ""}


@dataclass(frozen=True, slots=True)
class Code:
    triggers: tuple[str, ...]
    unknown: str | None  # why the code is only known at run time
    reads_stdin: bool  # takes its program from standard input


NONE: Final = Code((), None, False)
"""Runs no code given as data."""


def _interpreter(spec: _Interpreter, words: Words) -> Code:
    triggers: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word is None:
            return Code(tuple(triggers), "interpreter options only known at run time", False)
        if word == "--":
            index += 1
            break
        if word == "-" or not word.startswith("-"):
            break
        name = option_name(word) if word.startswith("--") else word
        lowered = name.lower() if spec is _INTERPRETERS["pwsh"] or spec is _INTERPRETERS["powershell"] else name
        if lowered in spec.info and len(words) == 2:
            return NONE
        if lowered in spec.code:
            code = word.split("=", 1)[1] if "=" in word and word.startswith("--") else _at(words, index + 1)
            if code is None:
                return Code(tuple(triggers), "program text only known at run time", False)
            return Code((*triggers, code), _spawning(spec, code, words[index + 2 :]), False)
        if lowered in spec.stops:  # `python3 -m "$M"`: a module only known at run time
            unknown = "a module only known at run time" if _at(words, index + 1) is None else None
            return Code(tuple(triggers), unknown, False)
        if lowered in spec.with_arg:
            if lowered in _MODULE_OPTIONS and "=" not in word and _at(words, index + 1) is None:
                return Code(tuple(triggers), "a module only known at run time", False)  # `node -r "$X"`
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
                        return Code(tuple(triggers), "program text only known at run time", False)
                    return Code((*triggers, code), _spawning(spec, code, words[index + 1 :]), False)
                if f"-{letter}" in spec.stops:
                    return Code(tuple(triggers), None, False)
                if letter in spec.numeric:
                    while pos < len(word) and word[pos] in "0123456789abcdefABCDEFx":
                        pos += 1  # perl -l0, -0777: a number, then more options
                elif letter in spec.attached:
                    break
        index += 1
    script = _at(words, index) if index < len(words) else ""
    if script is None:
        return Code(tuple(triggers), "a script only known at run time", False)
    if script == "" or reads_script_from_stdin(script):
        return Code(tuple(triggers), None, spec.stdin)
    return Code(tuple(triggers), None, False)


def _spawning(spec: _Interpreter, code: str, after: Words) -> str | None:
    """Why ``code`` may run any program (it starts programs, or builds code or names at run time:
    :data:`_PYTHON_SPAWNS` and the like), or ``None``. The words ``after`` it are looked at too (``perl -e 1 -e
    'system …'``), leaning towards yes."""
    if spec.spawns is None:
        return None
    if spec.spawns.search(code) or any(word is not None and spec.spawns.search(word) for word in after):
        return "interpreter code that starts other programs or builds code at run time"
    return None


def spawns(base: str, text: str) -> bool:
    """Whether ``text``, the program the interpreter ``base`` reads from a here-document or here-string, may start
    other programs (see :func:`_spawning`)."""
    spec = _INTERPRETERS.get(base) or (_INTERPRETERS["python3"] if base.startswith(("python", "pypy")) else None)
    return spec is not None and spec.spawns is not None and spec.spawns.search(text) is not None


def _at(words: Words, index: int) -> str | None:
    return words[index] if index < len(words) else ""


def _awk(words: Words) -> Code:
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
        name = long_option(word, _AWK_CODE_OPTIONS, _AWK_WITH_ARG)
        if name == "-W" or (word.startswith("-W") and not word.startswith("--")):
            # `-W exec FILE` (mawk, any prefix: `-We FILE`), `-W source=CODE` (gawk): gawk's long options
            value = word[2:] if len(word) > 2 else _at(words, index + 1)
            key = None if value is None else value.split("=", 1)[0].strip()
            if key is None or (key and any(option.startswith(key) for option in _AWK_W_CODE)):
                triggers.append("-W")
                if key is None or (key and ("exec".startswith(key) or "file".startswith(key))):
                    after = index + (1 if len(word) > 2 else 2)
                    path = value.split("=", 1)[1] if value is not None and "=" in value else _at(words, after)
                    return _script_file(triggers, path)
        if name in _AWK_CODE_OPTIONS or word[:2] in _AWK_CODE_OPTIONS:
            triggers.append(name if name in _AWK_CODE_OPTIONS else word[:2])
            if name in {"-f", "--file", "-E", "--exec"} or word[:2] in {"-f", "-E"}:
                return _script_file(triggers, _option_value(words, index))
        if name in _AWK_WITH_ARG or name in _AWK_CODE_OPTIONS:
            index += 1 if ("=" in word or (len(word) > 2 and not word.startswith("--"))) else 2
        else:
            index += 1
    program = _at(words, index)
    if program is None:  # may hold system(…): an unnamed trigger, so that only a whole-tool rule allows it
        return Code((*triggers, OPAQUE), None, False)
    if _AWK_RISKY.search(program):
        triggers.append(program)
        # `system("t" "ouch x")`, `print | cmd`, `c | getline`: a command built at run time (a plain string literal
        # without escapes, `print | "sort"`, stays text the deny rules scan).
        if _AWK_SPAWNS.search(_AWK_LITERAL_COMMANDS.sub(" ", program)):
            return Code(tuple(triggers), "awk code that starts other programs", False)
    return Code(tuple(triggers), None, False)


def _option_value(words: Words, index: int) -> str | None:
    """The value of the option at ``index``: attached (``-fFILE``, ``--file=F``) or the next word."""
    word = words[index]
    assert word is not None
    if word.startswith("--"):
        return word.split("=", 1)[1] if "=" in word else _at(words, index + 1)
    return word[2:] if len(word) > 2 else _at(words, index + 1)


def _script_file(triggers: Sequence[str], path: str | None) -> Code:
    # A program file named by -f: a file only known at run time, or standard input, is code not in the text.
    if path is None:
        return Code(tuple(triggers), "a program file only known at run time", False)
    return Code(tuple(triggers), None, reads_script_from_stdin(path))


def _sed(words: Words) -> Code:
    triggers: list[str] = []
    scripts: list[str | None] = []
    index = 1
    has_script_option = False
    first_operand: str | bool | None = False
    while index < len(words):
        word = words[index]
        if word is None:
            if not has_script_option and first_operand is False:
                return Code((*triggers, OPAQUE), None, False)
            index += 1
            continue
        name = long_option(word, _SED_LONG)
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
            script_file = _script_file((), _option_value(words, index))
            if script_file.unknown is not None or script_file.reads_stdin:
                return Code(tuple(triggers), script_file.unknown, script_file.reads_stdin)
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
            return Code((*triggers, OPAQUE), None, False)
        if _sed_runs_or_writes(script):
            triggers.append(script)
            if _SED_EXECUTES.search(script):  # the command comes from the input: only known at run time
                return Code(tuple(triggers), "a sed script that runs its input as a command", False)
    return Code(tuple(triggers), None, False)


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


def _xargs(words: Words) -> Code:
    index = 1
    while index < len(words):
        word = words[index]
        if word is None:
            return Code((), "xargs options only known at run time", False)
        if word == "--":
            index += 1
            break
        if not word.startswith("-"):
            break
        name = option_name(word)
        if name in _XARGS_FLAGS:
            index += 1
        elif name in _XARGS_WITH_ARG:
            index += 1 if "=" in word else 2
        elif word[:2] in _XARGS_WITH_ARG:
            index += 1  # attached: -I{}, -n1
        else:
            return Code((word,), None, False)
    program = _at(words, index)
    if program is None:
        return Code((), "the program xargs runs is only known at run time", False)
    return Code((program,), None, False) if program else NONE


def _options(words: Words, options: frozenset[str], exact: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ``options`` among ``words`` (abbreviated long ones too, but not the real options ``exact``)."""
    found: list[str] = []
    for word in words[1:]:
        if word is None:
            continue
        name = long_option(word, exact, options)
        if name in options:
            found.append(name)
        elif word.startswith("-") and not word.startswith("--") and len(word) > 2 and word[:2] in options:
            found.append(word[:2])
    return tuple(found)


def _at_command(words: Words) -> Code:
    # at/batch read the commands they schedule from standard input, unless -f names a file or they only list.
    for word in words[1:]:
        if word is None:
            return Code((), "at options only known at run time", False)
        if word in {"-l", "-r", "-d", "-c", "-V"}:
            return NONE
        if word.startswith("-f"):
            return Code(("-f",), None, False)
    return Code((), None, True)


_MAKEFILE: Final = ("-f", "--file", "--makefile")
_SQLITE_WITH_ARG: Final = frozenset(
    {"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-pagecache", "-lookaside", "-maxsize", "-mmap",
     "-vfs", "-heap", "-escape", "-limit"}
)  # fmt: skip
_SQLITE_READS: Final = frozenset(
    {"tables", "schema", "indexes", "indices", "fullschema", "dump", "mode", "headers", "header", "help",
     "databases", "show", "stats", "timer", "width", "quit", "exit", "print", "eqp", "nullvalue", "separator",
     "changes", "dbinfo", "echo", "bail", "explain", "lint", "version", "expert"}
)  # fmt: skip
_SQLITE_DOT: Final = re.compile(r"(?:^|[\n;])\s*\.(\w*)")
_SQLITE_RISKY: Final = re.compile(
    r"writefile|readfile|\bedit\s*\(|load_extension|fts3_tokenizer|\battach\b|\bvacuum\b|sqlar|zipfile",
    re.IGNORECASE,
)


def _sqlite(words: Words) -> Code:
    """``sqlite3 [OPTIONS] DB [SQL…]``: dot-commands (``.shell``, ``.system``, ``.output FILE``, ``.load`` …) and
    SQL functions (``writefile``, ``edit``, ``load_extension``) run commands or write files; without SQL it reads
    its commands from standard input. ``-cmd`` and ``-init`` are code options."""
    triggers: list[str] = []
    operands: list[str | None] = []
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word is not None and word.startswith("-") and word != "-" and not operands:
            name = "-" + word.lstrip("-")  # sqlite3 takes -opt and --opt alike
            if name in {"-cmd", "-init"}:
                triggers.append(name)
                value = _at(words, index)
                if value is None:
                    return Code(tuple(triggers), "sqlite3 commands only known at run time", False)
                triggers.append(value)
            if name in _SQLITE_WITH_ARG:
                index += 1
            continue
        operands.append(word)
    sql = operands[1:]
    if not sql:
        return Code(tuple(triggers), None, True)
    for text in sql:
        if text is None:
            return Code(tuple(triggers), "sqlite3 commands only known at run time", False)
        dots = {dot.lower() for dot in _SQLITE_DOT.findall(text)}
        if _SQLITE_RISKY.search(text) or dots - _SQLITE_READS:
            triggers.append(text)
    return Code(tuple(triggers), None, False)


_SSH_COMMAND_OPTIONS: Final = frozenset(
    {"proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand", "match", "include",
     "securitykeyprovider", "pkcs11provider", "controlpath", "remotecommand"}
)  # fmt: skip


def ssh_commands(words: Words) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """``ssh -o ProxyCommand=CMD`` (and LocalCommand, KnownHostsCommand, Match exec …) runs CMD *here*, and ``-F``
    names a configuration that may: the option words (triggers) and the commands (``None``: not literal)."""
    triggers: list[str] = []
    commands: list[str | None] = []
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word is None or not word.startswith("-") or word.startswith("--"):
            continue
        if word in {"-o", "-F"} or word.startswith(("-o", "-F")):
            value = word[2:] if len(word) > 2 else (words[index] if index < len(words) else "")
            index += 0 if len(word) > 2 else 1
            if word.startswith("-F"):
                triggers.append("-F")
                continue
            if value is None:
                triggers.append("-o")
                commands.append(None)
                continue
            key, _, setting = value.replace("=", " ", 1).partition(" ")
            if key.strip().lower() in _SSH_COMMAND_OPTIONS:
                triggers.append(value)
                commands.append(setting.strip() or None)
    return tuple(triggers), tuple(commands)


def program_code(base: str, words: Words) -> Code:
    if base == "ssh":
        return Code(ssh_commands(words)[0], None, False)
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
    if base in {"ed", "red"}:
        return Code((), None, True)  # its commands always come from standard input
    if base in {"sqlite3", "sqlite"}:
        return _sqlite(words)
    if base == "socat":  # an EXEC: or SYSTEM: address runs a program or a shell command
        return Code(tuple(w for w in words[1:] if w is not None and _SOCAT_RUNS.match(w)), None, False)
    if base in {"make", "gmake"}:
        found = _options(words, _CODE_OPTIONS["make"])
        # `make SHELL=./x`: every recipe line runs through that program (`.SHELLFLAGS` are its arguments)
        found += tuple(w for w in words[1:] if w is not None and _MAKE_SHELL.match(w))
        for index, word in enumerate(words[1:], start=1):  # `make -f -`: a makefile read from standard input
            if word is not None and (long_option(word, _MAKEFILE) in _MAKEFILE or word[:2] == "-f"):
                path = _option_value(words, index) if word.startswith("--") or len(word) > 2 else _at(words, index + 1)
                if path is None or reads_script_from_stdin(path):
                    return Code(found, None if path is not None else "a makefile only known at run time", True)
        return Code(found, None, False)
    if base == "find":
        return Code(_options(words, _FIND_CODE), None, False)
    if base in _NPMS:
        return _npm_config(words)
    options = _CODE_OPTIONS.get(base)
    if options is not None:
        found = _options(words, options, _REAL_PREFIXES.get(base, frozenset()))
        if base in {"mvn", "mvnw"}:
            found += tuple(w for w in words[1:] if w is not None and _MAVEN_EXEC.match(w))
        if base == "less":  # `less +'!cmd' f`: an initial command, and `!` runs a shell command
            found += tuple(w for w in words[1:] if w is not None and w[:1] == "+" and "!" in w)
        if base in _VI:  # `vim +cmd file` runs an ex command (`+!rm x`); `+N` and `+/pattern` only move
            found += tuple(w for w in words[1:] if w and w[0] == "+" and w[1:2] and not w[1:].isdigit() and w[1] != "/")
        return Code(found, None, False)
    return NONE


_SCRIPT_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash", "fish"})
_SHELL_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Options whose value names a file the interpreter loads and runs before its script (node -r ./x.js, ruby -r ./x).
_LOADS: Final[dict[str, frozenset[str]]] = {
    "node": frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"}),
    "nodejs": frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"}),
    "bun": frozenset({"-r", "--preload"}),
    "ruby": frozenset({"-r"}),
    "php": frozenset({"-f"}),
}
# Files a build tool or test runner reads from the directory it runs in and whose contents it runs: the
# project's recipes, lifecycle scripts, build scripts and test plugins.
_PROJECT_FILES: Final[dict[str, frozenset[str]]] = {
    "make": frozenset({"Makefile", "makefile", "GNUmakefile"}),
    "gmake": frozenset({"Makefile", "makefile", "GNUmakefile"}),
    **dict.fromkeys(
        ("npm", "pnpm", "yarn", "bun", "npx"),
        frozenset({"package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"}),
    ),
    "cargo": frozenset({"build.rs", "Cargo.toml", "config.toml"}),
    "pytest": frozenset({"conftest.py", "pytest.ini"}),
    "py.test": frozenset({"conftest.py", "pytest.ini"}),
    "just": frozenset({"justfile", "Justfile", ".justfile"}),
    "rake": frozenset({"Rakefile", "rakefile"}),
    "pip": frozenset({"setup.py", "pyproject.toml"}),
    "pip3": frozenset({"setup.py", "pyproject.toml"}),
    "tox": frozenset({"tox.ini", "setup.py"}),
    "gradle": frozenset({"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"}),
    "mvn": frozenset({"pom.xml", ".mvn"}),
    "nox": frozenset({"noxfile.py"}),
    "invoke": frozenset({"tasks.py"}),
    "inv": frozenset({"tasks.py"}),
    "fab": frozenset({"fabfile.py"}),
    "scons": frozenset({"SConstruct", "SConscript"}),
    "cmake": frozenset({"CMakeLists.txt"}),
    "meson": frozenset({"meson.build"}),
    "ant": frozenset({"build.xml"}),
    "sbt": frozenset({"build.sbt"}),
    "bundle": frozenset({"Gemfile"}),
    "composer": frozenset({"composer.json"}),
    "deno": frozenset({"deno.json", "deno.jsonc"}),
    "mix": frozenset({"mix.exs"}),
    "swift": frozenset({"Package.swift"}),
    "task": frozenset({"Taskfile.yml", "Taskfile.yaml", "taskfile.yml"}),
    "pre-commit": frozenset({".pre-commit-config.yaml"}),
    "lefthook": frozenset({"lefthook.yml", ".lefthook.yml", "lefthook.yaml"}),
    # git runs hooks, and the hook managers installed in them read their configuration from the work tree.
    "git": frozenset({".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lfsconfig"}),
}


BIN_WRITTEN: Final = "\x02bin"
"""Stands, among the names of :func:`files_run`, for any program in a directory of programs (``node_modules/.bin``,
a virtual environment's ``bin``): the build tools, test runners and runners that put those directories first on
their ``PATH`` (``npm test`` runs ``jest`` from ``node_modules/.bin``, ``uv run pytest`` from ``.venv/bin``) run
whatever was written there. See :func:`in_bin_directory`."""
_BIN_DIRS: Final = frozenset({".bin", "bin", "Scripts"})
_BIN_RUNNERS: Final = frozenset(
    {"npm", "pnpm", "yarn", "bun", "npx", "bunx", "pnpx", "make", "gmake", "just", "rake", "tox", "nox", "uv", "uvx",
     "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "bundle", "conda", "mamba", "micromamba"}
)  # fmt: skip


_GIT_HOOKED: Final = frozenset(
    {"commit", "merge", "pull", "push", "rebase", "am", "checkout", "switch", "cherry-pick", "revert", "gc",
     "worktree", "hook"}
)  # fmt: skip


def in_bin_directory(path: str) -> bool:
    """Whether ``path`` is a file in a directory of programs (a ``bin``, ``.bin`` or ``Scripts`` segment)."""
    return ("bin" in path or "Scripts" in path) and any(part in _BIN_DIRS for part in path.split("/")[:-1])


def files_run(base: str, words: Words) -> frozenset[str] | None:
    """The names (basenames) of the files whose contents this command runs as code, besides its own program:
    a shell's or an interpreter's script (``bash s.sh``, ``python3 s.py``, ``node x.js``), what ``source`` reads,
    awk's and sed's ``-f`` programs, modules loaded by option (``node -r ./x.js``, ``python3 -m mod``: ``mod.py``),
    and the project files a build tool or test runner runs (``make``: ``Makefile``, ``npm``: ``package.json``).
    ``None`` when such a name is only known at run time. ``base`` is the folded basename of ``words[0]``."""
    if base in {"source", "."}:
        args = [w for w in words[1:] if w != "--"]
        return _names(args[:1])
    if base in _SCRIPT_SHELLS:
        index = 1
        while index < len(words):
            word = words[index]
            if word is None:
                return None
            if word in {"--", "-"}:
                index += 1
                break
            if word in _SHELL_WITH_ARG:
                index += 2
                continue
            if not word.startswith(("-", "+")):
                break
            if not word.startswith("--") and ("c" in word[1:] or "s" in word[1:]):
                return frozenset()  # a command string or standard input: the analysis reads those
            index += 1
        return _names(words[index : index + 1])
    if base in _AWKS or base in {"sed", "gsed"}:
        found: list[str | None] = []
        for index, word in enumerate(words[1:], start=1):
            if word is not None and (long_option(word, ("--file",)) == "--file" or word[:2] == "-f"):
                found.append(_option_value(words, index))
        return _names(found)
    names: set[str] = set(_PROJECT_FILES.get(base, ()))
    if base == "git" and not any(word in _GIT_HOOKED for word in words[1:]):
        names.clear()  # only the subcommands that run hooks read the hook managers' configuration
    if base in _BIN_RUNNERS:
        names.add(BIN_WRITTEN)
    spec = _INTERPRETERS.get(base)
    if spec is None and base.startswith(("python", "pypy")) and base.rstrip("0123456789.") in {"python", "pypy"}:
        spec = _INTERPRETERS["python3"]
    if spec is not None:
        loads = _LOADS.get(base, frozenset())
        index = 1
        while index < len(words):
            word = words[index]
            if word is None:
                return None
            if word == "--":
                index += 1
                break
            if word == "-" or not word.startswith("-"):
                break
            name = option_name(word) if word.startswith("--") else word
            if name in spec.code:
                return frozenset(names)  # code in the text: the analysis reads it
            if spec is _INTERPRETERS["python3"] and word.startswith("-") and not word.startswith("--"):
                at = word.find("m", 1)
                if at != -1 and "c" not in word[1:at]:
                    module = word[at + 1 :] or _at(words, index + 1)
                    if module is None:
                        return None
                    top = module.split(".", 1)[0]
                    return frozenset({*names, *_PROJECT_FILES.get(top, ()), f"{top}.py", "__init__.py", "__main__.py"})
            if name in loads or (word[:2] in loads and len(word) > 2 and not word.startswith("--")):
                value = _option_value(words, index) if (len(word) > 2 or "=" in word) else _at(words, index + 1)
                if value is None:
                    return None
                names.add(posixpath.basename(value.rstrip("/")))
            if name in spec.with_arg or name in loads:
                index += 1 if ("=" in word or (len(word) > 2 and not word.startswith("--"))) else 2
                continue
            index += 1
        script = _at(words, index) if index < len(words) else ""
        if script is None:
            return None
        if script:
            names.add(posixpath.basename(script.rstrip("/")))
    if base in {"make", "gmake"}:
        for index, word in enumerate(words[1:], start=1):
            if word is not None and (long_option(word, _MAKEFILE) in _MAKEFILE or word[:2] == "-f"):
                value = _option_value(words, index) if word.startswith("--") or len(word) > 2 else _at(words, index + 1)
                if value is None:
                    return None
                names.add(posixpath.basename(value))
    return frozenset(names)


def _names(words: Sequence[str | None]) -> frozenset[str] | None:
    if any(word is None for word in words):
        return None
    return frozenset(posixpath.basename(word.rstrip("/")) for word in words if word)


def substituted_command(base: str, words: Words) -> Words | None:
    """For ``xargs -I R``/``-i``/``--replace``, ``parallel`` and ``find -exec`` (``base`` ``"find-exec"``, ``words``
    the command after ``-exec``): the command they run with every word holding the replacement string (``{}``,
    ``R``; ``parallel``'s ``{…}``) only known at run time — it is replaced by input lines or file names, so
    ``xargs -I{} sh -c '{}'`` runs its input as a shell command. ``None`` when nothing is replaced (or no command:
    see :func:`reads_commands`)."""
    start, marker = 1, "{}"
    if base == "xargs":
        found = _xargs_start(words)
        if found is None:
            return None
        start, replace = found
        if replace is None:
            return None
        marker = replace
    elif base == "parallel":
        start = _parallel_start(words)
    elif base == "find-exec":
        start = 0
    command = words[start:]
    if not command:
        return None
    if base == "parallel":
        out = tuple(None if w is None or ("{" in w and "}" in w) else w for w in command)
    else:
        out = tuple(None if w is None or marker in w else w for w in command)
    return out if out != command else None


def reads_commands(base: str, words: Words) -> bool:
    """``parallel`` without a command (``cat cmds | parallel``, ``parallel ::: CMD…``) runs its input or arguments
    as commands."""
    if base != "parallel":
        return False
    start = _parallel_start(words)
    return start >= len(words) or words[start] in {":::", "::::", ":::+", "::::+"}


def _parallel_start(words: Words) -> int:
    index = 1
    while index < len(words):
        word = words[index]
        if word is None or not word.startswith("-") or word in {"-", "--"}:
            return index + (1 if word == "--" else 0)
        index += 2 if word in _PARALLEL_WITH_ARG else 1
    return index


_PARALLEL_WITH_ARG: Final = frozenset(
    {"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I", "--colsep", "-C", "-n",
     "--max-args", "-N", "--max-replace-args", "-L", "--max-lines", "--tmpdir", "--results", "--joblog", "-E",
     "--workdir", "--wd", "--env", "--timeout", "--delay", "--tag-string", "--tagstring", "-s", "--max-chars"}
)  # fmt: skip


def _xargs_start(words: Words) -> tuple[int, str | None] | None:
    """Where the command ``xargs`` runs starts, and its replacement string (``None`` without ``-I``/``-i``)."""
    index = 1
    replace: str | None = None
    while index < len(words):
        word = words[index]
        if word is None:
            return None
        if word == "--":
            return index + 1, replace
        if not word.startswith("-") or word == "-":
            return index, replace
        name = option_name(word)
        if word == "-I":
            value = words[index + 1] if index + 1 < len(words) else None
            replace = "{}" if value is None else value
            index += 2
            continue
        if word.startswith("-I"):
            replace, index = word[2:], index + 1
            continue
        if word.startswith("-i") and not word.startswith("--"):
            replace, index = word[2:] or "{}", index + 1
            continue
        if name == "--replace":
            replace, index = (word.split("=", 1)[1] if "=" in word else "{}"), index + 1
            continue
        if name in _XARGS_FLAGS:
            index += 1
        elif name in _XARGS_WITH_ARG:
            index += 1 if "=" in word else 2
        elif word[:2] in _XARGS_WITH_ARG:
            index += 1
        else:
            return index, replace
    return index, replace


RUNS_FILES: Final = frozenset(
    {"source", ".", "sed", "gsed", *_SCRIPT_SHELLS, *_AWKS, *_PROJECT_FILES, *_BIN_RUNNERS, *_INTERPRETERS}
)
"""The programs :func:`files_run` may name files for (by their folded names; paths and python3.12 aside)."""
