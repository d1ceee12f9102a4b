"""Grep's pure-Python backend, what both backends find, and the one renderer they share.

Both backends produce the same thing — per file, the matching lines (and context lines) with their numbers — and
:func:`render` turns it into the text the model sees, so the output format cannot differ between them.

- :func:`hookloop.tools.builtin._ripgrep.search_ripgrep` runs ripgrep (fast; respects ``.gitignore``/``.ignore``
  files like Claude Code), and reads only files it opened race-safely (see that module).
- :func:`search_python` walks the tree with ``os.fwalk`` and Python's ``re`` (no ignore files; Python regex
  syntax, which differs from ripgrep's in corners such as look-around, which only Python supports).

Both search hidden files, skip ``.git``/``.hg``/``.svn``/``.bzr``/``.jj`` directories, do not follow symbolic
links while walking, skip binary files (NUL bytes), and search an explicitly given file regardless of the
``glob`` and ``type`` filters (as ripgrep does). Both leave out what the call's read filter denies (a denied
directory is not searched and counts as one path) and the output says how many paths were left out.
"""

from __future__ import annotations

import base64
import bisect
import os
import re
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hookloop.tools._base import ReadFilter, ToolFailure
from hookloop.tools.builtin._common import Stopped, left_out_note, plural, truncate_line
from hookloop.tools.builtin._globmatch import FILE_TYPES, compile_glob
from hookloop.tools.builtin._workspace import Workspace, describe_os_error

__all__ = [
    "MAX_LINES",
    "VCS_DIRS",
    "FileHits",
    "Found",
    "Search",
    "dir_prefix",
    "join",
    "json_text",
    "render",
    "search_python",
]

OutputMode = Literal["content", "files_with_matches", "count"]

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj"})
MAX_LINES = 100_000
"""Lines kept over all files before the search stops early (the output says so)."""
LINE_CAP = 500
OUTPUT_CAP = 30_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Search:
    """One search, its paths resolved and its options normalised."""

    pattern: str
    base: Path
    base_is_file: bool
    mode: OutputMode
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0


@dataclass(slots=True)
class FileHits:
    """What one file gave: (line number, text, is a match) in line order, and its number of matches."""

    path: Path
    lines: list[tuple[int, str, bool]] = field(default_factory=list)
    count: int = 0


@dataclass(slots=True)
class Found:
    """What a search found: per file its hits, how many lines were kept, and the notes for the output.

    ``left_out`` counts the paths the read filter left out (a pruned directory once), ``changed`` the files
    that changed into something else (a symbolic link, gone) between being named and being opened."""

    files: dict[Path, FileHits] = field(default_factory=dict)
    kept: int = 0
    stopped_early: bool = False
    warning: str | None = None
    left_out: int = 0
    changed: int = 0

    def hits(self, path: Path) -> FileHits:
        hits = self.files.get(path)
        if hits is None:
            hits = self.files[path] = FileHits(path)
        return hits


def json_text(value: dict[str, str]) -> str:
    """A ``{"text": …}`` or ``{"bytes": base64}`` value of ``rg --json``, as text."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")


# -- the pure-Python backend ----------------------------------------------------------------------------------


def search_python(
    workspace: Workspace, search: Search, stop: threading.Event, read_filter: ReadFilter | None = None
) -> Found:
    """Walk and search with Python's ``re`` (runs in a worker thread; ``stop`` ends it between files).

    ``read_filter`` (None: no rules) leaves paths out: a directory it denies is pruned, not walked, and counts
    once; a regular file it denies is not opened and counts once. ``search.base`` must already be checked."""
    flags = re.MULTILINE | (re.IGNORECASE if search.ignore_case else 0) | (re.DOTALL if search.multiline else 0)
    try:
        regex = re.compile(search.pattern, flags)
    except re.error as exc:
        raise ToolFailure(f"Grep: the pattern {search.pattern!r} is not a valid regular expression: {exc}.") from None
    found = Found()
    if search.base_is_file:
        try:
            fd = workspace.open_file(search.base, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise ToolFailure(f"Grep: cannot read {search.base}: {describe_os_error(exc)}.") from None
        _search_fd(found, fd, search.base, regex, search)
        return found
    filters = _filters(search)
    prefix = dir_prefix(search.base)
    top = workspace.open_dir(search.base)
    try:
        for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            if stop.is_set():
                raise Stopped()
            rel_dir = "" if dirpath == "." else dirpath[2:]
            dirnames[:] = sorted(d for d in dirnames if filters.wants_dir(join(rel_dir, d), d))
            if read_filter is not None and dirnames:
                kept = [d for d in dirnames if not read_filter.denies(prefix + join(rel_dir, d))]
                found.left_out += len(dirnames) - len(kept)
                dirnames[:] = kept
            for name in sorted(filenames):
                rel = join(rel_dir, name)
                if not filters.wants_file(rel, name):
                    continue
                if read_filter is not None and read_filter.denies(prefix + rel):
                    found.left_out += _is_regular(name, dirfd)  # a symbolic link is never searched anyway
                    continue
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
                except OSError:
                    continue  # a symbolic link (not followed, like ripgrep), or gone, or unreadable
                if _search_fd(found, fd, search.base / rel, regex, search):
                    return found
    finally:
        os.close(top)
    return found


def _is_regular(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def join(rel_dir: str, name: str) -> str:
    """``rel_dir/name``, or ``name`` at the top."""
    return f"{rel_dir}/{name}" if rel_dir else name


def dir_prefix(base: Path) -> str:
    """``str(base)`` with one trailing slash, to put before relative paths (``/`` stays ``/``)."""
    return str(base).rstrip("/") + "/"


@dataclass(frozen=True, slots=True)
class _Filter:
    """One glob filter with ripgrep's semantics: without a "/" it matches the file name at any depth; with
    one, the path relative to the searched directory (a leading "/" only anchors)."""

    regex: re.Pattern[str]
    anchored: bool

    @classmethod
    def compile(cls, pattern: str) -> _Filter:
        return cls(compile_glob(pattern.strip("/")), "/" in pattern.rstrip("/"))

    def matches(self, rel: str, name: str) -> bool:
        return self.regex.fullmatch(rel if self.anchored else name) is not None


@dataclass(frozen=True, slots=True)
class _Filters:
    include: tuple[_Filter, ...]
    exclude: tuple[_Filter, ...]
    types: tuple[_Filter, ...]

    def wants_dir(self, rel: str, name: str) -> bool:
        return name not in VCS_DIRS and not any(f.matches(rel, name) for f in self.exclude)

    def wants_file(self, rel: str, name: str) -> bool:
        if self.include and not any(f.matches(rel, name) for f in self.include):
            return False
        if self.types and not any(f.matches(rel, name) for f in self.types):
            return False
        return not any(f.matches(rel, name) for f in self.exclude)


def _filters(search: Search) -> _Filters:
    kinds: tuple[str, ...] = ()
    if search.file_type:
        known = FILE_TYPES.get(search.file_type)
        if known is None:
            names = ", ".join(sorted(FILE_TYPES))
            raise ToolFailure(f"Grep: unknown file type {search.file_type!r}; the known types are {names}.")
        kinds = known
    try:
        return _Filters(
            include=tuple(_Filter.compile(g) for g in search.globs if not g.startswith("!")),
            exclude=tuple(_Filter.compile(g[1:]) for g in search.globs if g.startswith("!")),
            types=tuple(_Filter.compile(g) for g in kinds),
        )
    except ValueError as exc:
        raise ToolFailure(f"Grep: {exc}.") from None


def _search_fd(found: Found, fd: int, path: Path, regex: re.Pattern[str], search: Search) -> bool:
    """Search one open file (closing it); True when enough lines are kept."""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        data = f.read()
    if b"\0" in data:
        return False
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if search.multiline:
        matched, count = _multiline_matches(regex, text, len(lines))
    else:
        matched = [i for i, line in enumerate(lines) if regex.search(line)]
        count = len(matched)
    if not matched:
        return False
    hits = found.hits(path)
    hits.count = count
    if search.mode == "content":
        wanted = set(matched)
        shown: set[int] = set()
        for i in matched:
            shown.update(range(max(i - search.before, 0), min(i + search.after, len(lines) - 1) + 1))
        for i in sorted(shown):
            hits.lines.append((i + 1, lines[i], i in wanted))
        found.kept += len(shown)
    if found.kept >= MAX_LINES:
        found.stopped_early = True
    return found.stopped_early


def _multiline_matches(regex: re.Pattern[str], text: str, n_lines: int) -> tuple[list[int], int]:
    """Line indexes touched by matches over the whole text, and the number of separate match blocks
    (matches sharing a line form one block, as ripgrep reports them)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    blocks: list[list[int]] = []
    last = max(n_lines - 1, 0)
    for m in regex.finditer(text):
        first = min(bisect.bisect_right(starts, m.start()) - 1, last)
        end = min(bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1, last)
        if blocks and first <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], end)
        else:
            blocks.append([first, end])
    lines = sorted({i for first, end in blocks for i in range(first, end + 1)})
    return lines, len(blocks)


# -- rendering ------------------------------------------------------------------------------------------------


def render(
    workspace: Workspace,
    found: Found,
    *,
    mode: OutputMode,
    line_numbers: bool,
    context: bool,
    head_limit: int,
    offset: int,
) -> str:
    """The model-facing text. Paths are relative to the workspace root (absolute outside it).

    - files_with_matches: ``Found N files`` then one path a line, most recently modified first.
    - content: ``path:12:line`` for matches and ``path-11-line`` for context (``path:line`` without line
      numbers), ``--`` between separate groups when context lines were asked for, files in path order.
    - count: ``path:N`` a file (N matching lines, or match blocks in multiline mode), then a total.

    ``offset`` skips entries and ``head_limit`` (0 = all) keeps that many; a note says when that hid some.
    """
    files = list(found.files.values())
    entries: list[str]
    if mode == "files_with_matches":
        keyed = [(_mtime(h.path), workspace.display(h.path)) for h in files]
        entries = [name for _, name in sorted(keyed, key=lambda k: (-k[0], k[1]))]
    elif mode == "count":
        entries = sorted(f"{workspace.display(h.path)}:{h.count}" for h in files)
    else:
        entries = _content_lines(workspace, files, line_numbers=line_numbers, context=context)
    total = len(entries)
    page = entries[offset : offset + head_limit if head_limit else None]
    notes: list[str] = []
    if offset or len(page) < total - offset:
        what = {"files_with_matches": "files", "count": "entries", "content": "lines"}[mode]
        shown = f"{offset + 1}-{offset + len(page)}" if page else "none"
        notes.append(f"(Showing {what} {shown} of {total}; use head_limit and offset to see others.)")
    if found.stopped_early:
        notes.append(f"(The search stopped after {MAX_LINES} lines; narrow the pattern, path or glob.)")
    if found.warning:
        notes.append(f"(Warning: {found.warning}.)")

    if not files:
        body = "No files found" if mode == "files_with_matches" else "No matches found"
    elif mode == "files_with_matches":
        body = "\n".join([f"Found {plural(total, 'file')}", *page])
    elif mode == "count":
        matches = sum(h.count for h in files)
        tail = f"Found {plural(matches, 'total occurrence')} across {plural(len(files), 'file')}."
        body = "\n".join(page) + ("\n\n" if page else "") + tail
    else:
        body = "\n".join(page)
    text = _cap("\n\n".join([body, *notes]) if notes else body)
    last: list[str] = []
    if found.changed:
        last.append(f"({plural(found.changed, 'file')} left out: changed during the search)")
    if found.left_out:
        last.append(left_out_note(found.left_out))
    return "\n\n".join([text, *last]) if last else text


def _content_lines(workspace: Workspace, files: list[FileHits], *, line_numbers: bool, context: bool) -> list[str]:
    out: list[str] = []
    for hits in sorted(files, key=lambda h: workspace.display(h.path)):
        name = workspace.display(hits.path)
        previous: int | None = None
        if context and out:
            out.append("--")
        for number, text, is_match in hits.lines:
            if context and previous is not None and number > previous + 1:
                out.append("--")
            sep = ":" if is_match else "-"
            line = truncate_line(text, LINE_CAP)
            out.append(f"{name}{sep}{number}{sep}{line}" if line_numbers else f"{name}{sep}{line}")
            previous = number
    return out


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    cut = text.rfind("\n", 0, OUTPUT_CAP)
    kept = text[: cut if cut > 0 else OUTPUT_CAP]
    return (
        f"{kept}\n\n(Output truncated: {len(text) - len(kept)} more characters. "
        "Narrow the search or use head_limit and offset.)"
    )
