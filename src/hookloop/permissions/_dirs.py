"""Where a Bash command is when it opens a file: redirection targets as written, and ``cd`` tracking.

The analysis (:mod:`hookloop.permissions._shell`) records each file a command opens as a :class:`Redirect`
together with the directory state at that point (:data:`DirState`): every sequence of directory changes
(``cd``, ``pushd``, ``popd`` with literal operands) that may have happened since the command started. A ``cd``
may fail, so it adds candidates and never removes the old ones; a directory change bash cannot be followed
through (an unknown operand, a loop that changes directory, a function, ``source``, a command name only known at
run time) makes the state ``None``: unknown. Subshells (``( … )``, ``$( … )``, process substitution) restore
the state when they end. The candidates are resolved to real directories only when a decision is made
(:mod:`hookloop.permissions._files`), because the starting directory, ``$HOME`` and the file system are only
known then.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import tree_sitter

from hookloop.permissions._coderun import long_option
from hookloop.permissions._paths import ANY_BELOW
from hookloop.permissions._programs import scan_globals
from hookloop.permissions._shellwords import literal, node_text, word_has_glob, word_literal

__all__ = [
    "DESTINATION_WRITERS",
    "EXTRACTORS",
    "OUTPUT_OPTION_WRITERS",
    "START",
    "WRITERS",
    "DirState",
    "Redirect",
    "Step",
    "after_directory_change",
    "extracted",
    "file_opens",
    "operand_targets",
    "redirect_target",
    "tee_targets",
    "unknown_destination",
    "word_target",
]

Step = tuple[str, str | None, str]
"""One directory change: ``(op, tilde, path)`` with op ``cd``/``pushd``/``popd``; ``tilde`` as in :class:`Redirect`."""
DirState = frozenset[tuple[Step, ...]] | None
"""Every possible sequence of directory changes since the command started; ``None``: unknown."""
START: Final[DirState] = frozenset({()})
MAX_CANDIDATES: Final = 8
_ASSIGNMENT_PREFIX: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_GLOB: Final = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class Redirect:
    """A file a command opens by redirection (or names as a ``tee`` operand).

    ``target`` is the file after quote removal, ``None`` when only known at run time (a glob, brace expansion,
    variable, command substitution, an assignment-like word with a tilde). When ``tilde`` is not ``None`` the
    word began with an unquoted tilde-prefix that bash expands: ``tilde`` is the prefix without the ``~``
    (``""`` home, ``"+"`` the current directory, ``"-"`` the previous one, ``"user"``, ``"2"``/``"+2"``/``"-2"``
    the directory stack) and ``target`` the rest (``""`` or ``/…``). ``dirs`` is where the command is when the
    file is opened; relative targets are resolved against it.
    """

    target: str | None
    write: bool
    tilde: str | None = None
    dirs: DirState = START
    operand: bool = False
    """A file named as an argument of a program that writes it (``rm``, ``cp``'s destination, ``dd of=`` …, see
    :func:`operand_targets`) rather than opened by the shell: checked against deny and ask rules and the
    protected paths when known, left alone when only known at run time (the OS sandbox covers those)."""


def _add(dirs: DirState, step: Step | None) -> DirState:
    if dirs is None or step is None:
        return None
    grown = dirs | {(*steps, step) for steps in dirs}
    return grown if len(grown) <= MAX_CANDIDATES else None


def after_directory_change(dirs: DirState, base: str, words: Sequence[str | None]) -> DirState:
    """The state after ``cd``/``pushd``/``popd`` with ``words`` (the command's words, quote-removed)."""
    args = list(words[1:])
    while args and (option := args[0]) is not None and option.startswith(("-", "+")) and option != "-":
        args.pop(0)
        if option == "--":
            break
        if base in {"pushd", "popd"} and option == "-n":
            return dirs  # only the stack changes
        if base != "cd" or not re.fullmatch(r"-[LPe@]+", option):
            return None  # +N/-N rotations and options not modelled
    if base == "popd":
        return _add(dirs, None if args else ("popd", None, ""))
    if not args:
        return _add(dirs, ("cd", "", "") if base == "cd" else None)  # bare cd: home; bare pushd: swap
    word = args[0]
    if len(args) > 1 or word is None or _GLOB.search(word):
        return None
    if not word.startswith("~"):
        return _add(dirs, (base, None, word))
    # The words are quote-removed, so `~/x` and `"~"/x` look alike: both readings are candidates.
    prefix, slash, rest = word[1:].partition("/")
    literal_reading = _add(dirs, (base, None, word))
    expanded = _add(dirs, (base, prefix, slash + rest))
    return None if literal_reading is None or expanded is None else literal_reading | expanded


def tee_targets(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """``tee FILE…``: the files it writes, like ``>`` redirections (both readings of a leading ``~``)."""
    found: list[Redirect] = []
    operands = False
    for word in words[1:]:
        if not operands and word is not None and word.startswith("-") and word != "-":
            operands = word == "--"
            continue
        if word is None or _GLOB.search(word):
            found.append(Redirect(target=None, write=True, dirs=dirs))
            continue
        found.append(Redirect(target=word, write=True, dirs=dirs))
        if word.startswith("~"):
            prefix, slash, rest = word[1:].partition("/")
            found.append(Redirect(target=slash + rest, write=True, tilde=prefix, dirs=dirs))
    return found


_WRITE_OPS: Final = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
_READ_OPS: Final = frozenset({"<", "<>"})


def file_opens(operator: str, number: bool, destination: str) -> tuple[bool, bool]:
    """Whether a file redirection with ``operator`` opens its ``destination`` (its text; ``number``: a number
    node) for writing, and for reading; neither when it duplicates or closes a descriptor."""
    if operator in {"<&", ">&-", "<&-"} or (operator == ">&" and (number or destination == "-")):
        return False, False
    return operator in _WRITE_OPS, operator in _READ_OPS


def redirect_target(node: tree_sitter.Node) -> tuple[str | None, str | None]:
    """A redirection's destination word as ``(target, tilde)``, see :class:`Redirect`."""
    if node.type == "process_substitution":
        return "/dev/fd/63", None  # bash passes a pipe; the commands inside are analysed on their own
    if node.type == "word":
        return word_target(node_text(node))
    value = literal(node)
    if value is None:
        return None, None
    if node.type in {"string", "raw_string", "ansi_c_string", "number"}:
        return value, None
    if node.type != "concatenation":
        return None, None
    if any(word_has_glob(node_text(part)) for part in node.children if part.type == "word"):
        return None, None
    first = node.children[0]
    if first.type == "word" and node_text(first).startswith("~") and "/" not in node_text(first):
        return value, None  # the tilde-prefix runs into a quoted part: bash leaves the word as it is
    return _tilde_target(node_text(first) if first.type == "word" else "", value)


def word_target(raw: str) -> tuple[str | None, str | None]:
    """:func:`redirect_target` of an unquoted word whose text is ``raw``."""
    value = word_literal(raw)
    if value is None or word_has_glob(raw):
        return None, None
    return _tilde_target(raw, value)


def _tilde_target(raw: str, value: str) -> tuple[str | None, str | None]:
    # `raw`: the text of the word the target starts with ("" when it starts with a quoted part); `value`: the
    # whole target after quote removal.
    if raw.startswith("~"):
        slash = raw.find("/")
        prefix = raw[1:] if slash == -1 else raw[1:slash]
        if "\\" not in prefix:
            return value[len(prefix) + 1 :], prefix
    elif _ASSIGNMENT_PREFIX.match(value) and "~" in value:
        return None, None  # bash expands a tilde after `=` in a word that looks like an assignment
    return value, None


# Programs that change the files named by their operands: every operand, or only the destination (the last
# operand, or the value of -t/--target-directory), and the options whose value is a file they write.
_ALL_OPERANDS: Final = frozenset(
    {"rm", "rmdir", "unlink", "shred", "truncate", "touch", "mkdir", "mv", "chmod", "chown", "chgrp", "chattr",
     "setfacl", "mkfifo", "mknod", "sponge", "ed", "red"}
)  # fmt: skip
# The last operand, when there are two or more: `xxd IN OUT`, `uniq IN OUT`, `split IN PREFIX`.
_DESTINATION: Final = frozenset({"cp", "install", "ln", "rsync", "scp", "xxd", "uniq", "split"})
_LAST_OPERAND: Final = frozenset({"script"})  # script [options] [FILE]: the typescript it writes
# Compressors replace each file operand by a compressed (or decompressed) one, unless they write to stdout.
_COMPRESSORS: Final = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz4", "unlz4",
     "pigz", "unpigz", "compress", "uncompress", "brotli", "lzip"}
)  # fmt: skip
_TO_STDOUT: Final = re.compile(r"--(stdout|to-stdout|test|list)|-[A-Za-z0-9]*[ctl][A-Za-z0-9]*")
_FIRST_OPERAND: Final = frozenset({"patch"})  # patch [ORIGFILE [PATCHFILE]] writes ORIGFILE
# Options whose value is the next word (not an operand), for the programs above whose operands are positional.
_VALUE_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "xxd": frozenset({"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek", "-o", "-offset", "-n",
                      "-name"}),
    "uniq": frozenset({"-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"}),
    "split": frozenset({"-a", "--suffix-length", "-b", "--bytes", "-C", "--line-bytes", "-l", "--lines", "-n",
                        "--number", "-t", "--separator", "--additional-suffix", "--filter"}),
    "script": frozenset({"-c", "--command", "-E", "--echo", "-O", "--log-out", "-I", "--log-in", "-B", "--log-io",
                         "-T", "--log-timing", "-t", "--timing", "-m", "--logging-format"}),
    "patch": frozenset({"-p", "--strip", "-i", "--input", "-r", "--reject-file", "-B", "--prefix", "-V",
                        "--version-control", "-z", "--suffix", "-D", "--ifdef", "-F", "--fuzz", "-Y",
                        "--basename-prefix", "-g", "--get"}),
    "time": frozenset({"-f", "--format"}),
}  # fmt: skip
_LEADING_OPTIONS: Final = frozenset({"time"})  # options end at the first operand: the command it runs
_PIP_OUT: Final = frozenset(
    {"-t", "--target", "-d", "--dest", "--root", "--prefix", "--src", "-w", "--wheel-dir", "--log", "--report",
     "-o", "--output", "--output-file"}
)  # fmt: skip
_NPM_OUT: Final = frozenset({"--pack-destination", "--prefix"})
_OUTPUT_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "sort": frozenset({"-o", "--output"}),
    # --work-tree: where checkout/restore/reset write; -o/--output-directory: format-patch, archive;
    # --prefix: checkout-index; --directory: apply; --separate-git-dir: init/clone put the repository there.
    "git": frozenset(
        {"--output", "-o", "--output-directory", "--work-tree", "--prefix", "--directory", "--separate-git-dir"}
    ),
    "curl": frozenset({"-o", "--output", "--output-dir"}),
    "wget": frozenset({"-O", "--output-document", "-o", "--output-file", "-P", "--directory-prefix"}),
    "tar": frozenset({"-C", "--directory", "-f", "--file"}),
    "bsdtar": frozenset({"-C", "--directory", "-f", "--file"}),
    "pip": _PIP_OUT,
    "pip3": _PIP_OUT,
    "uv": _PIP_OUT,
    "pipx": frozenset({"--global"}),
    "go": frozenset({"-o"}),
    "cargo": frozenset({"--root", "--target-dir", "--out-dir", "--artifact-dir"}),
    "npm": _NPM_OUT,
    "pnpm": _NPM_OUT,
    "yarn": _NPM_OUT,
    "base64": frozenset({"-o", "--output"}),
    "unzip": frozenset({"-d"}),
    "7z": frozenset({"-o"}),
    "7za": frozenset({"-o"}),
    "patch": frozenset({"-o", "--output", "-d", "--directory"}),
    "gpg": frozenset({"-o", "--output"}),
    "openssl": frozenset({"-out"}),
    "ssh-keygen": frozenset({"-f"}),
    "cpio": frozenset({"-D", "--directory"}),
    "shuf": frozenset({"-o", "--output"}),
    "iconv": frozenset({"-o", "--output"}),
    "csplit": frozenset({"-f", "--prefix"}),
    "tree": frozenset({"-o"}),
    "pandoc": frozenset({"-o", "--output"}),
    "msgfmt": frozenset({"-o", "--output-file"}),
    "zstd": frozenset({"-o"}),
    "brotli": frozenset({"-o", "--output"}),
    "zip": frozenset({"-O", "--output-file"}),
    "script": frozenset(
        {"-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T", "--log-timing", "-t", "--timing"}
    ),
    "time": frozenset({"-o", "--output"}),  # GNU time (`command time -o F …`): F holds what -f formats
    **{
        compiler: frozenset({"-o"})
        for compiler in (
            "cc",
            "gcc",
            "g++",
            "c++",
            "clang",
            "clang++",
            "tcc",
            "ld",
            "as",
            "gfortran",
            "rustc",
            "strip",
            "objcopy",
        )
    },
    "cp": frozenset({"-t", "--target-directory"}),
    "install": frozenset({"-t", "--target-directory"}),
    "mv": frozenset({"-t", "--target-directory"}),
    "ln": frozenset({"-t", "--target-directory"}),
}
_SED_IN_PLACE: Final = ("--in-place",)
_COPIERS: Final = frozenset({"docker", "podman", "nerdctl", "kubectl"})  # `cp SRC DEST`: a local DEST is written
DESTINATION_WRITERS: Final = _DESTINATION | _COPIERS
"""Programs whose last operand (``cp SRC DEST``) is a file they create or fill."""
OUTPUT_OPTION_WRITERS: Final = frozenset(_OUTPUT_OPTIONS)
"""Programs with an output-file option (``curl -o FILE``, ``cc -o FILE`` …)."""
WRITERS: Final = (
    _ALL_OPERANDS
    | _DESTINATION
    | _COPIERS
    | frozenset(_OUTPUT_OPTIONS)
    | _COMPRESSORS
    | _FIRST_OPERAND
    | _LAST_OPERAND
    | {"dd", "sed", "gsed", "source", "."}
)
_GIT_CONFIG_READS: Final = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list",
     "--show-origin", "--show-scope", "-e", "--edit"}
)  # fmt: skip


def _git_config_target(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """``git [-C DIR] config …`` that sets, unsets or renames something writes a git configuration file (a
    protected path: ``core.hooksPath`` there runs code on every later git command). ``--edit`` runs an editor on
    it, so it counts as a write too."""
    if "config" not in words:
        return []
    at = words.index("config")
    args = words[at + 1 :]
    if any(a in _GIT_CONFIG_READS and a not in {"-e", "--edit"} for a in args) or (
        not any(a in {"-e", "--edit"} for a in args)
        and len([a for a in args if a and not a.startswith("-")]) < 2
        and not any(
            a and a.startswith(("--unset", "--remove-section", "--rename-section", "--replace-all", "--add"))
            for a in args
        )
    ):
        return []  # reading one value (`git config user.name`) or listing
    if "--global" in args:
        return [Redirect(target="/.gitconfig", write=True, tilde="", dirs=dirs, operand=True)]
    if "--system" in args:
        return [Redirect(target="/etc/gitconfig", write=True, dirs=dirs, operand=True)]
    for flag in ("-f", "--file"):
        if flag in args and args.index(flag) + 1 < len(args):
            return _operand(args[args.index(flag) + 1], dirs)
    base = ".git/config"
    before = words[:at]
    if "-C" in before and before.index("-C") + 1 < len(before):
        directory = before[before.index("-C") + 1]
        if directory is None:
            return []
        base = f"{directory.rstrip('/')}/.git/config"
    return _operand(base, dirs)


_GIT_SUB_OPTIONS_WITH_VALUE: Final = frozenset(
    {"-o", "--origin", "-b", "-B", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able",
     "--depth", "-c", "--config", "--template", "--separate-git-dir", "-j", "--jobs", "--filter", "--shallow-since",
     "--shallow-exclude", "--bundle-uri", "--server-option", "--ref-format", "--object-format", "--reason",
     "--initial-branch", "--shared", "--name"}
)  # fmt: skip


def _git_operand_targets(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """Paths git subcommands create or replace through their operands: ``clone URL DIR``, ``init DIR``,
    ``worktree add DIR``, ``bundle create FILE``, ``mv … DEST``, ``submodule add URL PATH``."""
    scan = scan_globals("git", tuple(words))  # the same reading of git's global options as the rules use
    index = None if scan is None else scan.sub
    if index is None or index >= len(words) or words[index] is None:
        return []
    sub = str(words[index])
    operands: list[str | None] = []
    rest = words[index + 1 :]
    at = 0
    while at < len(rest):
        word = rest[at]
        at += 1
        if word == "--":
            operands.extend(rest[at:])
            break
        if word is not None and word.startswith("-") and word != "-":
            if word in _GIT_SUB_OPTIONS_WITH_VALUE:
                at += 1
            continue
        operands.append(word)
    chosen: list[str | None] = []
    if sub == "init":
        chosen = operands
    elif sub in {"clone", "mv"} and len(operands) >= 2:
        chosen = [operands[-1]]
    elif sub in {"worktree", "bundle"} and len(operands) >= 2 and operands[0] in {"add", "create"}:
        chosen = [operands[1]]
    elif sub == "submodule" and len(operands) >= 3 and operands[0] == "add":
        chosen = [operands[-1]]
    elif sub in {"checkout", "restore", "checkout-index"}:
        # `git checkout evil -- .claude/settings.json`, `git restore -s evil .claude`: the files named are written
        # from another commit or the index (the first word of `checkout` may be a branch: a harmless candidate).
        chosen = [w for w in operands if not (sub == "restore" and w in _restore_sources(rest))]
    found = [r for word in chosen for r in _operand(word, dirs)]
    if sub in {"init", "clone"} and any(
        word is not None and (word.startswith("--template") or "templatedir" in word.lower()) for word in words
    ):  # the template's hooks are copied into the repository's .git/hooks (also when re-initialising one)
        where = chosen[0] if chosen else "."
        found.extend(_operand(None if where is None else posixpath.join(where, ".git", "hooks"), dirs))
    return found


def _restore_sources(words: Sequence[str | None]) -> set[str | None]:
    """The values of ``git restore -s/--source`` (they are commits, not paths)."""
    return {words[i + 1] for i in range(len(words) - 1) if words[i] in {"-s", "--source"}}


def _tar_clusters(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """``tar -cf FILE``, ``tar xzf FILE -C DIR``: the values of ``f`` and ``C`` in option clusters, in order."""
    found: list[Redirect] = []
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word is None or word.startswith("--") or word == "-":
            continue
        cluster = word[1:] if word.startswith("-") else (word if index == 2 else "")
        if len(cluster) < 2 or not cluster.isalpha():
            continue
        for letter in cluster:
            if letter in "fC" and index < len(words):
                found.extend(_operand(words[index], dirs))
                index += 1
    return found


_WGETRC_FILES: Final = frozenset({"output_document", "outputdocument", "dir_prefix", "dirprefix", "logfile",
                                   "append_output", "appendoutput", "save_cookies", "savecookies"})  # fmt: skip


def _wgetrc_targets(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """``wget -e output_document=FILE`` (a .wgetrc command given on the command line) writes FILE."""
    found: list[Redirect] = []
    for index, word in enumerate(words[1:], start=1):
        if word is None:
            continue
        value: str | None = None
        name = long_option(word, ("--execute",))  # `--exec=…` abbreviates it
        if word == "-e" or (name == "--execute" and "=" not in word):
            value = words[index + 1] if index + 1 < len(words) else None
        elif name == "--execute":
            value = word.split("=", 1)[1]
        elif word.startswith("-e") and len(word) > 2:
            value = word[2:]
        if value and "=" in value:
            key, path = value.split("=", 1)
            if key.strip().lower().replace("-", "_") in _WGETRC_FILES:
                found.extend(_operand(path.strip(), dirs))
    return found


def _copy_destination(words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """``docker cp CONTAINER:SRC DEST`` / ``kubectl cp POD:SRC DEST``: a local destination is written."""
    if "cp" not in words[1:]:
        return []
    last = words[-1]
    if last is None or last == "cp" or ":" in last:
        return []
    return _operand(last, dirs)


def _links(base: str, words: Sequence[str | None]) -> bool:
    """``ln`` always, ``cp -s`` / ``cp -l`` / ``cp --link``: the command makes links to its source operands."""
    if base == "ln":
        return True
    if base != "cp":
        return False
    for word in words[1:]:
        if word == "--":
            return False
        if word is not None and long_option(word, ("--symbolic-link", "--link")) in {"--symbolic-link", "--link"}:
            return True
        if word is not None and word.startswith("-") and not word.startswith("--") and ("s" in word or "l" in word):
            return True
    return False


def _operand(word: str | None, dirs: DirState) -> list[Redirect]:
    if word is None or not word or _GLOB.search(word):
        return []  # only known at run time: left to the sandbox (see Redirect.operand)
    found = [Redirect(target=word, write=True, dirs=dirs, operand=True)]
    if word.startswith("~"):
        prefix, slash, rest = word[1:].partition("/")
        found.append(Redirect(target=slash + rest, write=True, tilde=prefix, dirs=dirs, operand=True))
    return found


def operand_targets(base: str, words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """The files a program of :data:`WRITERS` writes through its arguments, as (operand) redirections.

    Options are skipped (words after ``--`` are operands); an option of the program's output options takes the
    next word or its ``=value``. ``sed`` counts only with ``-i``/``--in-place`` (its file operands then; the
    script word is checked too, harmlessly). Imprecise option parsing only adds candidate paths.
    """
    if base in {"source", "."}:  # reads the file (and runs it)
        first = next((w for w in words[1:] if w != "--"), None)
        return [replace(r, write=False) for r in _operand(first, dirs)]
    options = _OUTPUT_OPTIONS.get(base, frozenset())
    found: list[Redirect] = []
    if base == "git":
        found = [*_git_config_target(words, dirs), *_git_operand_targets(words, dirs)]
    elif base in {"tar", "bsdtar"}:
        found = _tar_clusters(words, dirs)
    elif base in _COPIERS:
        found = _copy_destination(words, dirs)
    elif base == "wget":
        found = _wgetrc_targets(words, dirs)
    operands: list[str | None] = []
    in_place = False
    to_stdout = False
    valued = _VALUE_OPTIONS.get(base, frozenset())
    rest = list(words[1:])
    index = 0
    while index < len(rest):
        word = rest[index]
        index += 1
        if word is None or word == "-" or not word.startswith("-"):
            if base == "dd" and word is not None and word.startswith("of="):
                found.extend(_operand(word[3:], dirs))
            elif base in _LEADING_OPTIONS:
                break  # the command `time` runs: its own words are classified on their own
            else:
                operands.append(word)
            continue
        if word == "--":
            operands.extend(rest[index:])
            break
        _, equals, value = word.partition("=")
        name = long_option(word, options, _SED_IN_PLACE if base in {"sed", "gsed"} else ())  # `--outp=F` too
        if base in {"sed", "gsed"} and (name == "--in-place" or re.fullmatch(r"-[A-Za-z]*i\S*", word)):
            in_place = True
        if name in options:
            found.extend(_operand(value if equals else (rest[index] if index < len(rest) else None), dirs))
            index += 0 if equals else 1
        elif len(word) > 2 and word[:2] in options and not word.startswith("--"):
            found.extend(_operand(word[2:], dirs))  # -oFILE
        elif long_option(word, valued) in valued and not equals:
            index += 1  # the option's value, not an operand
        to_stdout = to_stdout or (base in _COMPRESSORS and _TO_STDOUT.fullmatch(word) is not None)
    if base in _COMPRESSORS and not to_stdout:
        for word in operands:
            found.extend(_operand(word, dirs))
    if base in _FIRST_OPERAND and operands:
        found.extend(_operand(operands[0], dirs))
    if base in _LAST_OPERAND and operands:
        found.extend(_operand(operands[-1], dirs))
    if base in _ALL_OPERANDS or (base in {"sed", "gsed"} and in_place) or _links(base, words):
        # A link is a way to write what it points to: `ln -s .git/hooks h && echo x > h/pre-commit` writes
        # .git/hooks/pre-commit, so the link's target counts as written too.
        for word in operands:
            found.extend(_operand(word, dirs))
    elif base in _DESTINATION and len(operands) > 1:
        found.extend(_operand(operands[-1], dirs))
    if base in _TREE_COPIERS:
        found.extend(_copied_into(base, words, operands, dirs))
    return found


_TREE_COPIERS: Final = frozenset({"cp", "install", "ln", "rsync", "scp"})


def _remote(word: str) -> bool:
    """``host:path`` (scp, rsync): not a local file."""
    head, colon, _ = word.partition(":")
    return bool(colon) and "/" not in head


def _copied_into(base: str, words: Sequence[str | None], operands: list[str | None], dirs: DirState) -> list[Redirect]:
    """What a copy writes *inside* a destination directory: ``cp -r evil/.git .`` writes ``./.git``, ``cp
    x/.bashrc ~`` writes ``~/.bashrc`` (each source's name below the destination, as candidates), and a copy of a
    directory's contents (``cp -r src/. .``, ``rsync -a src/ .``, ``cp -rT src .``) writes files it does not name
    below it (:data:`ANY_BELOW`). Sources only known at run time or globs are left to the sandbox, as operands
    are."""
    target: str | None = ""
    for index, word in enumerate(words[1:], start=1):
        if word is None:
            continue
        name = long_option(word, ("--target-directory", "--no-target-directory"))
        if word == "-t" or name == "--target-directory":
            target = word.split("=", 1)[1] if "=" in word else (words[index + 1] if index + 1 < len(words) else None)
        elif word.startswith("-t") and not word.startswith("--") and base != "scp":
            target = word[2:]
    if target != "":
        destination, sources = target, operands
    elif len(operands) > 1:
        destination, sources = operands[-1], operands[:-1]
    else:
        return []
    if destination is None or _GLOB.search(destination) or _remote(destination):
        return []
    letters = "".join(w[1:] for w in words[1:] if w and w.startswith("-") and not w.startswith("--"))
    longs = {long_option(w, ("--recursive", "--archive", "--no-target-directory")) for w in words[1:] if w}
    recursive = base == "rsync" or bool(set(letters) & set("rRa")) or bool({"--recursive", "--archive"} & longs)
    whole = base not in {"scp", "rsync"} and ("T" in letters or "--no-target-directory" in longs)
    found: list[Redirect] = []
    for source in sources:
        if source is None or _GLOB.search(source) or _UNKNOWN in source:  # (see `unknown_destination`)
            continue
        path = source.split(":", 1)[1] if _remote(source) else source
        contents = whole or path == "." or path.endswith("/.") or (base == "rsync" and path.endswith("/"))
        if contents:
            if recursive:
                found.extend(
                    replace(r, target=posixpath.join(r.target or ".", ANY_BELOW), operand=False)
                    for r in _operand(destination, dirs)
                )
            continue
        name = posixpath.basename(path.rstrip("/"))
        if name and name != "..":
            found.extend(replace(r, target=posixpath.join(r.target or "", name)) for r in _operand(destination, dirs))
    return found


_UNKNOWN: Final = "\x00"  # stands for a word only known at run time in `unknown_destination` (no word holds one)


def unknown_destination(base: str, words: Sequence[str | None]) -> int:
    """1 when a program of :data:`WRITERS` may write a file whose name is only known at run time through its
    arguments (``cp a "$f"``, ``curl -o "$d/x" …``, ``cp x *.sh``), else 0: :func:`operand_targets` of the words
    with each run-time or glob word standing for a name of its own."""
    if all(word is not None and _GLOB.search(word) is None for word in words[1:]):
        return 0
    if base == "dd" and None in words[1:]:
        return 1  # `of="$f"`: the whole word is only known at run time
    marked = [words[0], *(_UNKNOWN if w is None or _GLOB.search(w) else w for w in words[1:])]
    return int(any(r.write and r.target and _UNKNOWN in r.target for r in operand_targets(base, marked, START)))


# Programs that unpack an archive or apply a patch: the files they write are named inside the archive or patch,
# which the command does not show (`.git/hooks/pre-commit`, `.claude/settings.json` …).
EXTRACTORS: Final = frozenset(
    {"tar", "gtar", "bsdtar", "unzip", "jar", "cpio", "bsdcpio", "pax", "ar", "7z", "7za", "7zr", "unrar", "rar",
     "unar", "patch", "git", "dpkg-deb", "dpkg", "zipfile", "tarfile", "busybox"}
)  # fmt: skip
_TAR_VALUED: Final = "fCTXbgKNVLHI"  # tar's short options that take a value: the rest of a cluster is that value
_TAR_MODES: Final = (
    "--extract", "--get", "--list", "--create", "--append", "--update", "--diff", "--compare", "--delete",
    "--catenate", "--concatenate", "--to-stdout", "--to-command", "--test-label",
)  # fmt: skip
_UNZIP_NO_FILES: Final = frozenset("lvtzZpcT")  # list, verbose list, test, comment, zipinfo, pipe, to the screen
_UNZIP_VALUED: Final = frozenset("dxPI")
_PATCH_NO_FILES: Final = ("--dry-run", "--check", "--help", "--version")
_GIT_APPLY_REPORTS: Final = ("--check", "--stat", "--numstat", "--summary")


def extracted(base: str, words: Sequence[str | None], dirs: DirState) -> list[Redirect]:
    """The files an archive unpacked or a patch applied by this command writes (see :func:`extracts`), as
    redirections: ``DIR/`` + :data:`ANY_BELOW` for the directory it unpacks into (``tar -C DIR``, ``unzip -d DIR``,
    ``7z -oDIR``, ``patch -d DIR``; the current one by default), or a target only known at run time where the
    program may also write outside it (``cpio`` and ``pax`` keep absolute and ``..`` names, ``git apply``/``am``
    write from the top of the repository, which may be above it; ``7z``, ``jar``, ``rar``, ``unar``, ``dpkg``,
    Python's ``tarfile``, ``tar -P``) or the directory is."""
    if not extracts(base, words):
        return []
    if base == "busybox":
        base, words = str(words[1]), words[1:]
    # The programs that keep every name they unpack below its directory (they drop leading `/` and `..` and
    # create the symlinks an archive holds after its files, or refuse to write through them), and the option
    # naming that directory.
    options = {"tar": ("-C", "--directory"), "gtar": ("-C", "--directory"), "bsdtar": ("-C", "--directory"),
               "unzip": ("-d",), "patch": ("-d", "--directory"), "ar": (), "zipfile": ()}.get(base)  # fmt: skip
    if options is None or any(long_option(w, ("--absolute-names",)) in {"-P", "--absolute-names"} for w in words if w):
        return [Redirect(target=None, write=True, dirs=dirs)]
    found: list[str | None] = []
    for index, word in enumerate(words[1:], start=1):
        if word is None:
            continue
        name = long_option(word, options)
        if name in options and name.startswith("--") and "=" in word:
            found.append(word.split("=", 1)[1])
        elif name in options:
            found.append(words[index + 1] if index + 1 < len(words) else None)
        elif not word.startswith("--") and word[:2] in options and len(word) > 2:
            found.append(word[2:])  # -oDIR, -dDIR, -CDIR
    if base in {"tar", "gtar", "bsdtar"}:
        found.extend(r.target for r in _tar_clusters(words, START) if r.target and r.target not in _tar_files(words))
    if base == "zipfile":  # `zipfile -e ARCHIVE DIR`
        found.append(words[-1] if len(words) > 3 else None)
    redirects: list[Redirect] = []
    for directory in found or ["."]:
        targets = _operand(directory, dirs)
        if not targets:
            return [Redirect(target=None, write=True, dirs=dirs)]
        redirects.extend(replace(r, target=posixpath.join(r.target or ".", ANY_BELOW), operand=False) for r in targets)
    return redirects


def _tar_files(words: Sequence[str | None]) -> set[str]:
    """The archive names tar's ``f`` options give (not directories)."""
    found: set[str] = set()
    for index, word in enumerate(words[1:], start=1):
        if word is None or word.startswith("--"):
            continue
        cluster = word[1:] if word.startswith("-") else (word if index == 1 else "")
        if "f" in cluster and cluster.isalpha():
            at = index + 1 + cluster[: cluster.index("f")].count("C")
            value = words[at] if at < len(words) else None
            if value is not None:
                found.add(value)
    return found


def extracts(base: str, words: Sequence[str | None]) -> bool:
    """Whether the command unpacks an archive or applies a patch into files it does not name (``tar xf a.tar``,
    ``unzip a.zip``, ``cpio -i``, ``7z x``, ``git apply p.diff``, ``git am``, ``patch -p1 < p.diff`` …); not when
    it only lists, tests or prints (``tar tf``, ``unzip -l``, ``git apply --check``, ``patch --dry-run``, ``tar
    xOf``). ``base`` is the program's basename; ``busybox TAR …`` is read as its applet."""
    if base == "busybox":
        return len(words) > 1 and words[1] is not None and extracts(words[1], words[1:])
    if base in {"tar", "gtar", "bsdtar"}:
        return _tar_extracts(words)
    if base == "jar":
        mode = words[1] if len(words) > 1 else None
        return mode is None or "x" in mode.lstrip("-")[:8] or long_option(mode, ("--extract",)) == "--extract"
    if base == "ar":
        mode = words[1] if len(words) > 1 else None
        return mode is None or "x" in mode.lstrip("-").split("/", 1)[0][:8]
    if base in {"cpio", "bsdcpio"}:
        letters = _short_letters(words, "DEFHIMORV")
        longs = {long_option(w, ("--extract", "--pass-through", "--list")) for w in words[1:] if w}
        return not ("t" in letters or "--list" in longs) and bool(
            {"i", "p"} & letters or {"--extract", "--pass-through"} & longs
        )
    if base == "pax":
        return "r" in _short_letters(words, "bfopsxt")
    if base == "unzip":
        return len(words) > 1 and not (_UNZIP_NO_FILES & _short_letters(words, "".join(_UNZIP_VALUED)))
    if base in {"7z", "7za", "7zr", "unrar", "rar"}:
        command = next((w for w in words[1:] if w is None or not w.startswith("-")), "")
        return command is None or command.lower() in {"x", "e"}
    if base == "unar":
        return len(words) > 1
    if base in {"dpkg-deb", "dpkg"}:
        return any(w is None or long_option(w, ("--extract", "--raw-extract", "--vextract")) in {
            "-x", "-X", "-R", "--extract", "--raw-extract", "--vextract"} for w in words[1:])  # fmt: skip
    if base in {"zipfile", "tarfile"}:  # `python3 -m zipfile -e a.zip DIR`
        return any(w is None or long_option(w, ("--extract",)) in {"-e", "--extract"} for w in words[1:])
    if base == "patch":
        return _patch_unnamed(words)
    if base == "git":
        return _git_applies(words)
    return False


def _short_letters(words: Sequence[str | None], valued: str) -> set[str]:
    """The letters of the short-option clusters among ``words`` (up to a letter taking a value; a run-time word
    may be any: ``"?"``)."""
    letters: set[str] = set()
    for word in words[1:]:
        if word is None:
            letters.add("?")
            continue
        if word == "--":
            break
        if not word.startswith("-") or word.startswith("--") or word == "-":
            continue
        for letter in word[1:]:
            letters.add(letter)
            if letter in valued:
                break
    return letters


def _tar_extracts(words: Sequence[str | None]) -> bool:
    letters: set[str] = set()
    longs: set[str] = set()
    for index, word in enumerate(words[1:], start=1):
        if word is None:
            continue  # (an operand or a value, most likely: `tar czf out.tgz "$dir"`)
        if word.startswith("--"):
            longs.add(long_option(word, _TAR_MODES))
        elif word.startswith("-") and word != "-":
            for letter in word[1:]:
                letters.add(letter)
                if letter in _TAR_VALUED:
                    break
        elif index == 1:
            letters.update(word)  # the traditional form: `tar xzf a.tgz`, the values follow
    if "O" in letters or "--to-stdout" in longs or "--to-command" in longs:
        return False  # the members go to standard output or a command (a code option, see _coderun)
    return "x" in letters or bool({"--extract", "--get"} & longs)


def _patch_unnamed(words: Sequence[str | None]) -> bool:
    """``patch`` without a file operand or ``-o`` writes the files its patch names."""
    valued = _VALUE_OPTIONS["patch"] | {"-d", "--directory"}
    index = 1
    operands = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word is None:
            operands += 1
            continue
        if word == "--":
            operands += len(words) - index
            break
        if word.startswith("-") and word != "-":
            name = long_option(word, _PATCH_NO_FILES, _OUTPUT_OPTIONS["patch"], valued)
            if name in _PATCH_NO_FILES or name in {"-o", "--output"} or word.startswith("-o"):
                return False
            if name in valued and "=" not in word and not (len(word) > 2 and not word.startswith("--")):
                index += 1
            continue
        operands += 1
    return operands == 0


def _git_applies(words: Sequence[str | None]) -> bool:
    """``git apply`` (unless it only reports or only updates the index) and ``git am``: files the patches name."""
    scan = scan_globals("git", tuple(words))
    sub = None if scan is None else scan.sub
    if sub is None or sub >= len(words):
        return False
    rest = [w for w in words[sub + 1 :] if w is not None]
    if words[sub] == "am":
        return not any(long_option(w, ("--show-current-patch",)) == "--show-current-patch" for w in rest)
    if words[sub] != "apply":
        return False
    names = {long_option(w, (*_GIT_APPLY_REPORTS, "--apply", "--cached")) for w in rest}
    if "--cached" in names:
        return False
    return "--apply" in names or not names & set(_GIT_APPLY_REPORTS)
