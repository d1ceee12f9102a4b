"""From permission path patterns to the concrete files and directories a sandbox masks or write-protects.

A bind mount needs a concrete path, a rule is a pattern. :func:`expand` walks the file system from each
pattern's root: literal segments are looked up (case-folded, as deny rules match), ``*`` segments list one
directory, ``**`` walks the subtree (without following symbolic links, so a loop cannot trap it). A matching
directory covers everything inside it, so the walk stops there. The walk is bounded: more than
:data:`MAX_ENTRIES` directory entries for one sandboxed command raise :class:`SandboxError` rather than run
with a partial mask.

Everything found is reported by its real path (symbolic links resolved): a mount over a symbolic link lands on
its target anyway, and the target is what must stay hidden. Dangling links are skipped (nothing to read).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from hookloop.errors import HookloopError
from hookloop.permissions._paths import PathPattern

__all__ = ["MAX_ENTRIES", "Found", "SandboxError", "expand", "same_inode_links"]

MAX_ENTRIES = 200_000
"""Directory entries one sandboxed command may inspect to place its masks."""


class SandboxError(HookloopError):
    """The sandbox cannot be set up for this command (the command does not run)."""


@dataclass(frozen=True, slots=True)
class Found:
    """A concrete path a pattern covers: its real path and whether it is a directory."""

    path: str
    is_dir: bool


class _Budget:
    """The entries one computation may inspect, and the directory listings it already made (each directory
    is listed once however many patterns and ``**`` positions reach it)."""

    def __init__(self) -> None:
        self.left = MAX_ENTRIES
        self.listings: dict[str, list[tuple[str, str, bool]]] = {}

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise SandboxError(
                f"more than {MAX_ENTRIES} files to inspect to place the sandbox's masks for the Read/Edit "
                "deny rules; narrow the rules (anchor them, e.g. ./secrets/**) or exclude the command"
            )


def _children(directory: str, budget: _Budget) -> list[tuple[str, str, bool]]:
    """(name, path, is a real directory) for each entry; empty for a file or an unreadable directory."""
    cached = budget.listings.get(directory)
    if cached is not None:
        return cached
    result: list[tuple[str, str, bool]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                budget.spend()
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                result.append((entry.name, entry.path, is_dir))
    except OSError:
        pass
    budget.listings[directory] = result
    return result


def _walk(path: str, segments: tuple[str, ...], dir_only: bool, budget: _Budget) -> Iterator[str]:
    if not segments:
        if not dir_only or os.path.isdir(path):
            yield path
        return
    head, rest = segments[0], segments[1:]
    if head == "**":
        yield from _walk(path, rest, dir_only, budget)  # `**` as no segment at all
        for _, child, is_dir in _children(path, budget):
            if is_dir:  # symbolic links are not followed here: no loops
                yield from _walk(child, segments, dir_only, budget)
        return
    matches = _segment_matcher(head)
    for name, child, _ in _children(path, budget):
        if matches(name):
            yield from _walk(child, rest, dir_only, budget)


@functools.lru_cache(maxsize=256)
def _segment_matcher(segment: str) -> Callable[[str], object]:
    """A case-insensitive matcher for one glob segment (deny rules match case-folded)."""
    return re.compile(fnmatch.translate(segment.replace("**", "*")), re.IGNORECASE | re.DOTALL).match


def expand(patterns: Iterable[PathPattern], *, budget: _Budget | None = None) -> list[Found]:
    """Every existing path the patterns cover, as real paths, outermost only (a path inside a found directory
    is left out). Raises :class:`SandboxError` past :data:`MAX_ENTRIES` entries."""
    spend = budget or _Budget()
    found: dict[str, bool] = {}
    for pattern in patterns:
        for root in pattern.roots:
            for path in _walk(root, pattern.segments, pattern.dir_only, spend):
                real = os.path.realpath(path)
                try:
                    is_dir = stat.S_ISDIR(os.stat(real).st_mode)
                except OSError:
                    continue  # dangling link, or gone already
                found[real] = is_dir
    return outermost(Found(path, is_dir) for path, is_dir in found.items())


def outermost(items: Iterable[Found]) -> list[Found]:
    """Drop every item inside a directory item; sorted by path."""
    result: list[Found] = []
    for item in sorted(set(items), key=lambda f: f.path):
        if result and result[-1].is_dir and _inside(item.path, result[-1].path):
            continue
        result.append(item)
    return result


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def same_inode_links(files: Iterable[str], roots: Iterable[str]) -> list[str]:
    """Other names (hard links) under ``roots`` of those ``files`` that have more than one link, so masking a
    file by one name does not leave it readable by another. Walks the roots only when such a file exists."""
    wanted: set[tuple[int, int]] = set()
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            wanted.add((info.st_dev, info.st_ino))
    if not wanted:
        return []
    budget = _Budget()
    links: list[str] = []
    stack = list(dict.fromkeys(roots))
    while stack:
        for _, child, is_dir in _children(stack.pop(), budget):
            if is_dir:
                stack.append(child)
                continue
            try:
                info = os.stat(child, follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in wanted:
                links.append(child)
    return links
