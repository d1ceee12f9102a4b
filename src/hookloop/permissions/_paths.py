"""Gitignore-style path patterns for Read/Edit/Write/Glob/Grep rules, and path resolution for tool inputs.

A pattern is anchored at a root chosen by its prefix:

=============  ==============================================================================================
``//abs/x``    the absolute path ``/abs/x``
``~/x``        the home directory
``/x``         the directory of the settings file the rule came from (``.claude/`` means the project root or
               home above it); for rules given in code, the workspace
``./x``, ``x``  the workspace (``../x`` climbs out of it)
=============  ==============================================================================================

Then gitignore rules apply: ``*`` and ``?`` stay within one path segment, ``**`` spans any number of segments, a
pattern without a ``/`` (other than a trailing one) matches a name at any depth (``*.env``), a trailing ``/``
matches only a directory's contents, and a pattern that matches a directory matches everything inside it.

Tool paths are resolved against the workspace and compared twice: as written (``..`` normalised lexically)
and with symlinks resolved (``os.path.realpath``). Allow rules must match the resolved path, so a symlink in an
allowed directory that points elsewhere is not allowed; deny and ask rules match either, and also match
case-insensitively (``SECRETS/key`` is ``secrets/key`` on a case-insensitive file system).
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Final

__all__ = ["ANY_BELOW", "Links", "PathPattern", "ResolvedPath", "compile_path_pattern", "realpath", "resolve", "within"]


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A tool's path as written (``lexical``, ``..`` normalised) and with symlinks resolved (``real``)."""

    lexical: str
    real: str


def resolve(raw: str, *, cwd: Path) -> ResolvedPath | None:
    """Resolve a path from a tool input against ``cwd``; ``None`` for something that is not a usable path."""
    if not raw or "\x00" in raw:
        return None
    joined = os.path.join(cwd, os.path.expanduser(raw))
    return ResolvedPath(lexical=posixpath.normpath(joined), real=os.path.realpath(joined))


Links = dict[str, bool | None]
"""A decision's memo for :func:`realpath`: for each absolute path met, ``True`` if it is a symlink, ``False`` if it
is a directory (or may have names below it), ``None`` if nothing can be below it (missing, not a directory, or
``lstat`` failed)."""


def realpath(path: str, links: Links) -> str:
    """``os.path.realpath(path)``, exactly, with what ``lstat`` says of each component remembered in ``links``.

    The caller keeps ``links`` for one decision, so the paths a command opens, which share their directories,
    ``lstat`` each directory once, and nothing below a missing directory or a file (where ``lstat`` can only
    fail). Until a symlink is met this walks the components as :func:`os.path.realpath` does (``.`` dropped,
    ``..`` taking the last component off, a component ``lstat`` fails on counting as no symlink); from a symlink
    on, and for a relative path, it is :func:`os.path.realpath` itself.
    """
    if not path.startswith("/"):
        return os.path.realpath(path)
    current = "/"
    barren = False  # nothing can be below `current`
    rest = path[1:]
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            current = posixpath.split(current)[0]
            barren = current != "/" and links.get(current) is None  # unrecorded: reached below a barren one
            continue
        candidate = current + name if current == "/" else f"{current}/{name}"
        link = None if barren else links.get(candidate, _UNSEEN)
        if link is _UNSEEN:
            try:
                mode = os.lstat(candidate).st_mode
            except OSError:
                link = None
            else:
                link = True if stat.S_ISLNK(mode) else False if stat.S_ISDIR(mode) else None
            links[candidate] = link
        if link:
            return os.path.realpath(path)
        barren = link is None
        current = candidate
    return current  # absolute, without `.`, `..` or empty components: what `posixpath.abspath` would give


_UNSEEN: Final = object()


def _roots(path: str) -> tuple[str, ...]:
    lexical = posixpath.normpath(os.path.abspath(path))
    real = os.path.realpath(lexical)
    return (real,) if real == lexical else (real, lexical)


ANY_BELOW: Final = "\x01"
"""The last segment of a path that stands for any file below its directory: what an archive unpacked or a patch
applied there writes (``tar xf a.tar -C DIR`` writes ``DIR/\x01``). A pattern matches it when it may match a file
below that directory; the protected-path guard always asks about it."""


def within(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or inside it (both absolute and normalised)."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A compiled path pattern: its roots (resolved first, then as written) and its segments below them."""

    text: str
    roots: tuple[str, ...]
    segments: tuple[str, ...]
    dir_only: bool

    def matches(self, path: ResolvedPath, *, loose: bool) -> bool:
        """Whether the pattern covers ``path``.

        ``loose=False`` (allow rules): the symlink-resolved path against the resolved root, exactly.
        ``loose=True`` (deny and ask rules): either reading of the path against either root, also case-folded.
        A pure function of the strings, memoised (every decision on a Bash command matches the same targets).
        """
        return _pattern_matches(self, path.real, path.lexical, loose)

    def _match(self, path: str, root: str, *, fold: bool) -> bool:
        if fold:
            path, root = path.casefold(), root.casefold()
        if path.endswith(ANY_BELOW) and within(root, path[: -len(ANY_BELOW)].rstrip("/") or "/"):
            return True  # the pattern's files are below the directory: any of them may be written
        if not within(path, root):
            return False
        relative = path[len(root) :].strip("/")
        parts = tuple(relative.split("/")) if relative else ()
        segments = tuple(s.casefold() for s in self.segments) if fold else self.segments
        # A pattern that matches a directory covers everything inside it, as in gitignore.
        last = len(parts) - 1 if self.dir_only else len(parts)
        return any(_match_segments(segments, parts[:end]) for end in range(last + 1))


@lru_cache(maxsize=4096)
def _pattern_matches(pattern: PathPattern, real: str, lexical: str, loose: bool) -> bool:
    if not loose:
        return pattern._match(real, pattern.roots[0], fold=False)
    return any(
        pattern._match(candidate, root, fold=fold)
        for candidate in dict.fromkeys((real, lexical))
        for root in pattern.roots
        for fold in (False, True)
    )


def _match_segments(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if parts and parts[0] == ANY_BELOW:
        return True  # any file below: the rest of the pattern may match one
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match_segments(rest, parts[skip:]) for skip in range(len(parts) + 1))
    if not parts:
        return False
    return fnmatchcase(parts[0], head.replace("**", "*")) and _match_segments(rest, parts[1:])


def _settings_base(settings_dir: Path) -> Path:
    # `.claude/settings.json` sits one level below the directory its rules talk about (the project, or home).
    return settings_dir.parent if settings_dir.name == ".claude" else settings_dir


def compile_path_pattern(spec: str, *, workspace: Path, settings_dir: Path | None, home: Path) -> PathPattern:
    """Compile a path specifier (the part inside ``Read(…)``) into a :class:`PathPattern`."""
    anchored = True
    if spec.startswith("//"):
        root, rest = Path("/"), spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        root, rest = home, spec[2:]
    elif spec.startswith("/"):
        root = workspace if settings_dir is None else _settings_base(settings_dir)
        rest = spec[1:]
    elif spec.startswith("./"):
        root, rest = workspace, spec[2:]
    else:
        root, rest = workspace, spec
        anchored = "/" in spec.rstrip("/") or spec.startswith("..")
    dir_only = rest.endswith("/")
    parts = [part for part in rest.strip("/").split("/") if part not in {"", "."}]
    while parts and parts[0] == "..":
        root = root.parent
        parts.pop(0)
    if ".." in parts:
        # Normalise `a/../b` lexically; a `..` after a wildcard cannot be normalised and is kept literally.
        first_wild = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
        head = posixpath.normpath("/".join(parts[:first_wild]) or ".").split("/")
        parts = [p for p in head if p not in {"", "."}] + parts[first_wild:]
    if not anchored:
        parts = ["**", *parts]
    return PathPattern(text=spec, roots=_roots(str(root)), segments=tuple(parts), dir_only=dir_only)
