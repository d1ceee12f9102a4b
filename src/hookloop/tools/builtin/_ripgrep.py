"""Grep's ripgrep backend, as race-safe as the pure-Python one.

ripgrep walks the tree by path name. A directory swapped for a symbolic link between ripgrep listing it and
opening it leads ripgrep outside the workspace, or into a directory the Read rules deny, and it reports what it
read there under the inside name. So nothing ripgrep reads by name reaches the model; names are only hints:

1. Only when a read filter applies: ``rg --files`` lists the files the search looks at (same filters, same
   ignore files). The filter sorts them: the allowed ones are kept, the others are counted — a directory the
   filter denies once, whatever it holds — so the count never depends on what the files contain.
2. ``rg --files-with-matches`` names the files that seem to match (fast; by name, so a hint only). It skips
   the directories pass 1 found denied.
3. Each named file still allowed is opened race-safely (:meth:`Workspace.open_file`: from the workspace root
   one component at a time, refusing any symbolic link, then it must be a regular file), and ripgrep searches
   the open files as ``/dev/fd/N``: the very files opened, whatever happens to their names since. Only this
   pass's output is kept. A file that can no longer be opened that way changed during the search; it is left
   out and counted. A file ripgrep finds binary here is dropped, as ripgrep's own walk (pass 2) skips them.

Content moved or hard-linked to an allowed path is searched like any file there: paths cannot tell.
"""

from __future__ import annotations

import functools
import json
import os
import posixpath
import re
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

from hookloop.tools._base import ReadFilter, ToolFailure
from hookloop.tools.builtin import _process
from hookloop.tools.builtin._common import HeadTail, Stopped, run_in_thread
from hookloop.tools.builtin._grep import MAX_LINES, VCS_DIRS, Found, Search, dir_prefix, json_text
from hookloop.tools.builtin._workspace import Workspace, WorkspaceError, describe_os_error

__all__ = ["FD_BATCH", "MAX_PRUNED", "prune_globs", "search_ripgrep"]

FD_BATCH = 256
"""Files opened and handed to one ripgrep process at a time in the last pass."""
MAX_PRUNED = 1000
"""Denied directories at most that pass 2 tells ripgrep to skip (beyond that it reads them, and pass 3 drops them)."""
_GLOB_SPECIAL = re.compile(r"[\\*?\[\]{}!,]")


async def search_ripgrep(rg: str, workspace: Workspace, search: Search, read_filter: ReadFilter | None) -> Found:
    """Run the search with ripgrep (see the module docstring). ``read_filter`` (None: no rules) decides which
    paths are left out; ``search.base`` must already be checked against it. Cancellation stops rg's process
    group; raises :class:`ToolFailure` when ripgrep rejects the search (bad pattern, unknown type)."""
    found = Found()
    if search.base_is_file:
        await _search_open(rg, workspace, [str(search.base)], search, found, explicit=True)
        return found
    walk = _walk_options(search)
    prefix = dir_prefix(search.base)
    allowed: set[str] | None = None
    prune: list[str] = []
    if read_filter is not None:
        listed = await _list(rg, [*walk, "--files"], search, found)
        allowed, denied_dirs = _sort_out(listed, search.base, read_filter, found)
        prune = prune_globs(prefix, denied_dirs)
    matching = await _list(
        rg,
        [*walk, *prune, *_match_options(search), "--files-with-matches", "--regexp", search.pattern],
        search,
        found,
    )
    candidates = [
        path
        for path in dict.fromkeys(matching)
        if path.startswith(prefix) and posixpath.normpath(path) == path and (allowed is None or path in allowed)
    ]
    await _search_open(rg, workspace, sorted(candidates), search, found, explicit=False)
    return found


def prune_globs(prefix: str, directories: set[str]) -> list[str]:
    """``--glob !/dir`` options that make ripgrep skip the denied ``directories`` (absolute, below ``prefix``,
    the directory ripgrep runs in), their glob characters escaped; at most :data:`MAX_PRUNED` of them. Not
    needed for safety (pass 3 never opens a denied file): it spares ripgrep reading what will be dropped."""
    options: list[str] = []
    for directory in sorted(directories)[:MAX_PRUNED]:
        options += ["--glob", "!/" + _GLOB_SPECIAL.sub(r"\\\g<0>", directory[len(prefix) :])]
    return options


def _walk_options(search: Search) -> list[str]:
    options = ["--no-config", "--hidden", "--no-follow", "--null"]
    for name in sorted(VCS_DIRS):
        options += ["--glob", f"!{name}"]
    if search.file_type:
        options += ["--type", search.file_type]
    for pattern in search.globs:
        options += ["--glob", pattern]
    return options


def _match_options(search: Search) -> list[str]:
    options: list[str] = []
    if search.ignore_case:
        options.append("--ignore-case")
    if search.multiline:
        options += ["--multiline", "--multiline-dotall"]
    return options


async def _run(
    rg: str, argv: list[str], stdout: _process.Sink, *, cwd: Path, pass_fds: Sequence[int] = ()
) -> tuple[int, str]:
    """Run ripgrep to its end: (exit status, stderr text). Cancellation stops its process group."""
    errors = HeadTail(4000)
    try:
        proc = await _process.spawn([rg, *argv], cwd=cwd, stdout=stdout, stderr=errors.feed, pass_fds=pass_fds)
    except OSError as exc:
        raise ToolFailure(f"Grep: cannot start ripgrep ({rg}): {exc.strerror or exc}.") from None
    try:
        await proc.wait_closed()
    finally:
        await proc.stop()
    return proc.returncode if proc.returncode is not None else -1, errors.text().strip()


def _check(status: int, message: str, found: Found, *, got_any: bool) -> None:
    """Exit status 1 is "nothing found"; anything but 0 and 1 is an error: fatal when nothing came out."""
    if status in (0, 1):
        return
    if not got_any:
        raise ToolFailure(f"Grep (ripgrep) failed: {message or f'exit status {status}'}")
    found.warning = f"some files could not be searched: {message.splitlines()[0] if message else '?'}"


async def _list(rg: str, options: list[str], search: Search, found: Found) -> list[str]:
    """The NUL-separated paths ripgrep prints for ``options`` over the search's directory."""
    out = bytearray()

    def take(chunk: bytes) -> bool:
        out.extend(chunk)
        return False

    status, message = await _run(rg, [*options, "--", str(search.base)], take, cwd=search.base)
    paths = [os.fsdecode(raw) for raw in bytes(out).split(b"\0") if raw]
    _check(status, message, found, got_any=bool(paths))
    return paths


def _sort_out(listed: list[str], base: Path, read_filter: ReadFilter, found: Found) -> tuple[set[str], set[str]]:
    """The listed paths the filter allows, and the outermost directories below ``base`` it denies; counts the
    paths left out in ``found.left_out``, each such directory once (as the Python walk prunes it)."""
    prefix = dir_prefix(base)
    allowed: set[str] = set()
    denied_dirs: set[str] = set()
    dir_denied: dict[str, bool] = {}
    for path in listed:
        if not path.startswith(prefix):
            continue
        if not read_filter.denies(path):
            allowed.add(path)  # a denied directory would deny everything inside it too
            continue
        top = _outermost_denied_dir(path, prefix, read_filter, dir_denied)
        if top is None:
            found.left_out += 1
        else:
            denied_dirs.add(top)
    found.left_out += len(denied_dirs)
    return allowed, denied_dirs


def _outermost_denied_dir(path: str, prefix: str, read_filter: ReadFilter, cache: dict[str, bool]) -> str | None:
    current = prefix
    for part in path[len(prefix) :].split("/")[:-1]:
        directory = current + part
        denied = cache.get(directory)
        if denied is None:
            denied = cache[directory] = read_filter.denies(directory)
        if denied:
            return directory
        current = directory + "/"
    return None


def _open_checked(workspace: Workspace, path: str, *, explicit: bool) -> int | None:
    """The path opened race-safely if it is (still) a regular file; None when it changed (or, for the
    explicit path argument, is not a regular file). The explicit path raises :class:`ToolFailure` instead."""
    try:
        fd = workspace.open_file(Path(path), os.O_RDONLY | os.O_NONBLOCK)
    except WorkspaceError:
        if explicit:
            raise
        return None
    except OSError as exc:
        if explicit:
            raise ToolFailure(f"Grep: cannot read {path}: {describe_os_error(exc)}.") from None
        return None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        return None
    return fd


async def _search_open(
    rg: str, workspace: Workspace, paths: list[str], search: Search, found: Found, *, explicit: bool
) -> None:
    """Open ``paths`` race-safely, a batch at a time (in a worker thread: many system calls), and let ripgrep
    search the open files. Every descriptor is closed whatever happens, cancellation included."""
    for start in range(0, len(paths), FD_BATCH):
        if found.stopped_early:
            return
        batch = paths[start : start + FD_BATCH]
        names: dict[str, Path] = {}
        try:
            open_batch = functools.partial(_open_batch, workspace, batch, names, explicit=explicit)
            found.changed += await run_in_thread(open_batch)
            if names:
                await _search_fds(rg, names, search, found)
        finally:
            for name in names:
                os.close(int(name.rsplit("/", 1)[1]))


def _open_batch(
    workspace: Workspace, paths: list[str], names: dict[str, Path], stop: threading.Event, *, explicit: bool
) -> int:
    """Open each path into ``names`` (``/dev/fd/N`` → path) as it goes, so the caller closes what was opened
    even when this stops early; returns how many changed (could not be opened race-safely)."""
    changed = 0
    for path in paths:
        if stop.is_set():
            raise Stopped()
        fd = _open_checked(workspace, path, explicit=explicit)
        if fd is None:
            changed += not explicit
            continue
        names[f"/dev/fd/{fd}"] = Path(path)
    return changed


async def _search_fds(rg: str, names: dict[str, Path], search: Search, found: Found) -> None:
    """``rg --json`` over the open files ``names`` (``/dev/fd/N`` → the path they were opened at)."""
    argv = ["--json", "--no-config", *_match_options(search)]
    if search.mode == "content":
        argv += ["--before-context", str(search.before), "--after-context", str(search.after)]
    argv += ["--regexp", search.pattern, "--", *names]
    pending = bytearray()
    before = len(found.files)

    def take(chunk: bytes) -> bool:
        pending.extend(chunk)
        *complete, rest = pending.split(b"\n")
        pending[:] = rest
        return any(line and _take_json(found, line, names, search) for line in complete)

    fds = [int(name.rsplit("/", 1)[1]) for name in names]
    status, message = await _run(rg, argv, take, cwd=Path("/"), pass_fds=fds)
    if not found.stopped_early:
        _check(status, message, found, got_any=len(found.files) > before)


def _take_json(found: Found, line: bytes | bytearray, names: dict[str, Path], search: Search) -> bool:
    """Add one ``rg --json`` message; True when enough lines are kept."""
    try:
        message = json.loads(line)
    except ValueError:
        return False  # not a JSON message (ripgrep writes none such); nothing to keep
    kind = message.get("type")
    if kind not in ("match", "context", "end"):
        return False
    data = message["data"]
    path = names.get(json_text(data["path"]))
    if path is None:
        return False  # not one of the files handed over: ripgrep was given no other
    if kind == "end":
        if data.get("binary_offset") is not None and path in found.files:
            found.kept -= len(found.files.pop(path).lines)  # a binary file: dropped, like the walk does
        return False
    hits = found.hits(path)
    number = int(data["line_number"])
    lines = json_text(data["lines"]).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if kind == "match":
        hits.count += 1
    if search.mode == "content":
        for offset, item in enumerate(lines or [""]):
            hits.lines.append((number + offset, item, kind == "match"))
            found.kept += 1
    if found.kept >= MAX_LINES:
        found.stopped_early = True
    return found.stopped_early
