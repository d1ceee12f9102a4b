"""The files a Bash command opens by redirection, resolved as bash would, and the protected paths.

:func:`file_accesses` turns the :class:`~hookloop.permissions._shell.Redirect` records of a command into
:class:`FileAccess` values: each target resolved against every directory the command may be in when it opens
it (the directory it starts in, then every literal ``cd``/``pushd``/``popd`` before, each of which may fail),
with tilde-prefixes expanded as bash expands them:

=================  ==========================================================================================
``~``, ``~/x``     the policy's home directory (unknown if the command may assign ``HOME``)
``~user/x``        that user's home directory (``pwd`` database); left as written when there is no such user
``~+/x``           the directory the command is in (unknown if it may assign ``PWD``)
``~-/x``           the previous directory: known after a ``cd`` in the same command, unknown before
``~N``, ``~+N``    the directory stack: unknown
=================  ==========================================================================================

A target that is only known at run time (a glob, brace expansion, variable, substitution, an unknown tilde form
or a relative path in an unknown directory) has ``paths=None``: deny and ask rules treat it as matching every
file, and nothing allows it automatically.

Protected paths (:func:`protected_reason`) are the agent's own configuration and the version-control and shell
state a command would need to persist itself: any path with a segment ``.git``, ``.claude``, ``.hookloop``,
``.clinerules``, ``.vscode``, ``.idea`` or ``.husky``, and the files ``.mcp.json``, ``.claude.json``,
``.gitconfig``, ``.gitmodules``, ``.bashrc``, ``.bash_profile``, ``.bash_login``, ``.profile``, ``.zshrc``,
``.zshenv``, ``.zprofile`` (compared case-insensitively), plus ``$HOOKLOOP_HOME``. Writes there are never
allowed by a mode or a hook, only by an allow rule that names them.
"""

from __future__ import annotations

import os
import posixpath
import pwd
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final, NamedTuple

from hookloop.permissions import _shell
from hookloop.permissions._paths import Links, PathPattern, ResolvedPath, realpath

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "FileAccess",
    "file_accesses",
    "is_sink",
    "names_protected",
    "protected_reason",
]

PROTECTED_DIRS: Final = frozenset({".git", ".claude", ".hookloop", ".clinerules", ".vscode", ".idea", ".husky"})
PROTECTED_FILES: Final = frozenset(
    {
        ".mcp.json", ".claude.json", ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login",
        ".profile", ".zshrc", ".zshenv", ".zprofile",
    }
)  # fmt: skip
_ENV_NAMES: Final = frozenset({"HOME", "PWD", "OLDPWD", "CDPATH"})
# Commands that can assign a variable whose name is computed at run time (`printf -v "$n"`, `declare "$a=b"`).
_NAME_SETTERS: Final = frozenset(
    {"declare", "typeset", "local", "export", "readonly", "read", "mapfile", "readarray", "printf", "getopts",
     "unset", "let", "eval", "source", "."}
)  # fmt: skip
_BYTE_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
_FD_PATH: Final = re.compile(r"/dev/fd/\d+")
#: At most this many resolved paths per command; the files after that count as only known at run time.
PATH_BUDGET: Final = 96


@dataclass(frozen=True, slots=True)
class FileAccess:
    """One file a command opens: ``paths`` are its possible resolutions, ``None`` when only known at run time."""

    write: bool
    paths: tuple[ResolvedPath, ...] | None
    written: str  # the target as written, for messages
    operand: bool = False  # named as a writing program's argument, not opened by the shell (never paths=None)


@lru_cache(maxsize=1024)
def is_sink(path: str) -> bool:
    """``/dev/null``, the standard streams, the terminal and ``/dev/fd/N``: opening them edits no file."""
    normal = posixpath.normpath(path)
    return normal in _BYTE_SINKS or _FD_PATH.fullmatch(normal) is not None


def _volatile(analysis: _shell.ShellAnalysis, command: str) -> frozenset[str]:
    """Which of HOME, PWD, OLDPWD, CDPATH the command may assign (all, when names are computed)."""
    if not analysis.safe:
        return _ENV_NAMES
    for words in (*analysis.commands, *analysis.deny_commands):
        if words and words[0] in _NAME_SETTERS and None in words:
            return _ENV_NAMES
    found = _shell.tokens(command)
    names = _ENV_NAMES & found
    if "cdable_vars" in found:
        names |= {"CDPATH"}
    return frozenset(names)


@lru_cache(maxsize=256)
def _user_home(name: str) -> str | None:
    try:
        return pwd.getpwnam(name).pw_dir
    except (KeyError, ValueError):
        return None


class _Resolver:
    """Where a command's targets are, as strings: directory replay and tilde expansion (no file system access)."""

    def __init__(self, command: str, analysis: _shell.ShellAnalysis, home: str, cdpath: bool) -> None:
        self.command = command
        self.analysis = analysis
        self.home = home
        self.cdpath = cdpath
        self._volatile: frozenset[str] | None = None
        self._replayed: dict[tuple[tuple[_shell.Step, ...], str], tuple[str | None, str | None]] = {}

    @property
    def volatile(self) -> frozenset[str]:
        if self._volatile is None:
            self._volatile = _volatile(self.analysis, self.command)
        return self._volatile

    def tilde_base(self, prefix: str, cwd: str | None, oldpwd: str | None) -> str | None:
        if prefix == "":
            return None if "HOME" in self.volatile else self.home
        if prefix == "+":
            return None if "PWD" in self.volatile else cwd
        if prefix == "-":
            return None if "OLDPWD" in self.volatile else oldpwd
        if re.fullmatch(r"[+-]?\d+", prefix):
            return None  # the directory stack
        return _user_home(prefix)

    def replay(self, steps: tuple[_shell.Step, ...], start: str) -> tuple[str | None, str | None]:
        """The directory (and the previous one) after ``steps``, starting in ``start``."""
        key = (steps, start)
        found = self._replayed.get(key)
        if found is None:
            found = self._replayed[key] = self._replay(steps, start)
        return found

    def _replay(self, steps: tuple[_shell.Step, ...], start: str) -> tuple[str | None, str | None]:
        cwd: str | None = start
        oldpwd: str | None = None
        stack: list[str | None] = []
        for op, tilde, text in steps:
            if op == "popd":
                if stack:
                    oldpwd, cwd = cwd, stack.pop()
                continue
            if tilde is None and text == "-":
                target = None if "OLDPWD" in self.volatile else oldpwd
            elif tilde is None and not text.startswith("/") and self._uses_cdpath(text):
                target = None
            elif tilde is None and not text.startswith("/") and "PWD" in self.volatile:
                target = None  # a logical cd builds the new directory from $PWD
            elif tilde is not None:
                base = self.tilde_base(tilde, cwd, oldpwd)
                target = None if base is None else base + text
                if base is None and not (tilde in {"", "+", "-"} or re.fullmatch(r"[+-]?\d+", tilde)):
                    target = None if cwd is None else f"{cwd}/~{tilde}{text}"
            elif text.startswith("/"):
                target = text
            else:
                target = None if cwd is None else f"{cwd}/{text}"
            if target is None:
                return None, None
            if op == "pushd":
                stack.append(cwd)
            oldpwd, cwd = cwd, target
        return cwd, oldpwd

    def _uses_cdpath(self, text: str) -> bool:
        if text in {".", ".."} or text.startswith(("./", "../")):
            return False
        return self.cdpath or "CDPATH" in self.volatile


def _readings(directory: str, rest: str) -> list[tuple[str, str]]:
    # bash's `cd` is logical (`a/..` is dropped lexically) and falls back to the physical path; the file itself is
    # opened physically. Both readings of the directory (to resolve), and the path as written for deny rules.
    joined, lexical, logical = _spellings(directory, rest)
    return [(lexical, joined)] if logical is None else [(lexical, joined), (lexical, logical)]


@lru_cache(maxsize=1024)
def _spellings(directory: str, rest: str) -> tuple[str, str, str | None]:
    """``rest`` in ``directory``: joined, normalised, and the logical reading when it differs from the joined one.

    A pure function of the strings, memoised: every decision on a command resolves the same targets."""
    joined = posixpath.join(directory, rest) if rest else directory
    logical = posixpath.join(posixpath.normpath(directory), rest) if rest else posixpath.normpath(directory)
    return joined, posixpath.normpath(joined), None if logical == joined else logical


def _sink(path: ResolvedPath) -> bool:
    return is_sink(path.lexical) and (is_sink(path.real) or path.real.startswith("/proc/"))


def _resolve_one(
    resolver: _Resolver, redirect: _shell.Redirect, steps: tuple[_shell.Step, ...], start: str
) -> list[tuple[str, str]] | None:
    target = redirect.target
    assert target is not None
    directory, oldpwd = resolver.replay(steps, start) if steps else (start, None)
    if redirect.tilde is not None:
        base = resolver.tilde_base(redirect.tilde, directory, oldpwd)
        if base is not None:
            return _readings(base, target.lstrip("/"))
        if redirect.tilde in {"", "+", "-"} or re.fullmatch(r"[+-]?\d+", redirect.tilde):
            return None
        target = "~" + redirect.tilde + target  # no such user: bash leaves the word as it is
    if target.startswith("/"):
        return _readings("/", target.lstrip("/"))
    if directory is None:
        return None
    return _readings(directory, target)


class _Planned(NamedTuple):  # a tuple: made for every file of every new command
    """One file of :func:`_plan`: its readings as ``(lexical, path to resolve)``, ``None`` if only known at run
    time."""

    write: bool
    written: str
    operand: bool
    readings: tuple[tuple[str, str], ...] | None


def file_accesses(
    command: str, *, cwd: Path, workspace: Path, home: Path, links: Links | None = None
) -> tuple[FileAccess, ...]:
    """Every file ``command`` opens by redirection (or as a ``tee`` operand), resolved; byte sinks left out.

    ``cwd`` is the directory the command starts in (the Bash tool's remembered directory); when it is not an
    existing directory the tool falls back to ``workspace``, so both count. ``links`` is the decision's memo of
    which paths are symlinks (see :func:`hookloop.permissions._paths.realpath`), if it has one. What depends only
    on strings is planned once per command and place (:func:`_plan`); the file system is read on every call.
    """
    analysis = _shell.analyse(command)
    if not analysis.redirects:
        return ()
    start, fallback = str(cwd), str(workspace)
    starts = (start,) if start == fallback or os.path.isdir(start) else (start, fallback)
    plan = _plan(command, starts, str(home), bool(os.environ.get("CDPATH")))
    memo: Links = {} if links is None else links
    real: dict[str, str] = {}  # once per path in one decision: many redirections share their directories
    accesses: list[FileAccess] = []
    for item in plan:
        if item.readings is None:
            accesses.append(FileAccess(write=item.write, paths=None, written=item.written))
            continue
        paths: list[ResolvedPath] = []
        for lexical, path in item.readings:
            resolved = real.get(path)
            if resolved is None:
                resolved = real[path] = realpath(path, memo)
            paths.append(ResolvedPath(lexical=lexical, real=resolved))
        unique = tuple(dict.fromkeys(paths)) if len(paths) > 1 else tuple(paths)
        if unique and all(_sink(p) for p in unique):
            continue
        accesses.append(FileAccess(write=item.write, paths=unique, written=item.written, operand=item.operand))
    return tuple(accesses)


@lru_cache(maxsize=256)
def _plan(command: str, starts: tuple[str, ...], home: str, cdpath: bool) -> tuple[_Planned, ...]:
    """The files ``command`` opens, with every reading of each as strings (directories replayed, tildes
    expanded, at most :data:`PATH_BUDGET` readings), from the directories it may start in. Pure, memoised."""
    analysis = _shell.analyse(command)
    resolver = _Resolver(command, analysis, home, cdpath)
    planned: list[_Planned] = []
    budget = PATH_BUDGET
    for redirect in dict.fromkeys(analysis.redirects):
        target = redirect.target
        if target is None and redirect.operand:
            continue
        if target is None:
            planned.append(_Planned(write=redirect.write, written="<only known at run time>", operand=False,
                                    readings=None))  # fmt: skip
            continue
        written = ("~" + redirect.tilde if redirect.tilde is not None else "") + target
        absolute = redirect.tilde is None and target.startswith("/")
        if absolute and is_sink(target):
            continue
        candidates = _shell.START if absolute else redirect.dirs
        readings: list[tuple[str, str]] | None = [] if candidates is not None else None
        for steps in candidates or ():
            for start in starts:
                found = _resolve_one(resolver, redirect, steps, start)
                if found is None or readings is None:
                    readings = None
                    break
                readings.extend(found)
        if readings is not None and len(readings) > budget:
            readings = None  # too many readings to check quickly: treated like a run-time target (restrictive)
        if readings is not None:
            budget -= len(readings)
            planned.append(_Planned(write=redirect.write, written=written, operand=redirect.operand,
                                    readings=tuple(readings)))  # fmt: skip
        elif not redirect.operand:  # an operand in an unknown directory is left to the sandbox, as a glob is
            planned.append(_Planned(write=redirect.write, written=written, operand=False, readings=None))
    return tuple(planned)


def _segments(path: str) -> list[str]:
    return [part.casefold() for part in path.split("/") if part]


@lru_cache(maxsize=1024)
def protected_reason(path: ResolvedPath, extra_dirs: tuple[str, ...] = ()) -> str | None:
    """The protected name a path falls under (``.git``, ``.bashrc`` …), or ``None``. Pure, memoised."""
    for reading in dict.fromkeys((path.lexical, path.real)):
        parts = _segments(reading)
        for part in parts[:-1]:
            if part in PROTECTED_DIRS:
                return part
        if parts and (parts[-1] in PROTECTED_DIRS or parts[-1] in PROTECTED_FILES):
            return parts[-1]
        for directory in extra_dirs:
            if reading == directory or reading.startswith(directory.rstrip("/") + "/"):
                return directory
    return None


def names_protected(pattern: PathPattern, name: str) -> bool:
    """Whether an allow rule's pattern names a protected directory or file literally (``Edit(./.git/**)``)."""
    if name.startswith("/"):
        return any(name == root or root.startswith(name.rstrip("/") + "/") for root in pattern.roots)
    return any(segment.casefold() == name for segment in pattern.segments) or any(
        name in _segments(root) for root in pattern.roots
    )
