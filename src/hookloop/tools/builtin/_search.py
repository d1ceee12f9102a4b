"""``Glob`` and ``Grep``: read-only search tools with Claude Code's input shapes."""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pydantic

from hookloop._frozen import JSONValue, freeze_object
from hookloop.tools._base import ReadFilter, ToolContext, ToolFailure, ToolOutput
from hookloop.tools.builtin import _grep
from hookloop.tools.builtin._common import (
    BuiltinTool,
    Input,
    Stopped,
    left_out_note,
    refuse_if_read_denied,
    run_in_thread,
)
from hookloop.tools.builtin._globmatch import compile_glob, expand_braces, has_magic, split_globs
from hookloop.tools.builtin._ripgrep import search_ripgrep
from hookloop.tools.builtin._workspace import Workspace, WorkspaceError, describe_os_error

__all__ = ["GlobTool", "GrepTool"]

GLOB_LIMIT = 100


def _search_base(
    workspace: Workspace, path: str | None, verb: str, read_filter: ReadFilter | None
) -> tuple[Path, os.stat_result]:
    """The resolved ``path`` argument (default: the root) and its stat; clear errors when it is missing or the
    read filter denies it (checked first: whether a denied path exists is not told either)."""
    real = workspace.resolve(path, field="path") if path else workspace.root
    refuse_if_read_denied(read_filter, real, verb)
    try:
        return real, os.stat(real)
    except OSError as exc:
        raise ToolFailure(f"Cannot {verb} {real}: {describe_os_error(exc)}.") from None


# -- Glob ---------------------------------------------------------------------------------------------------


class GlobInput(Input):
    pattern: str = pydantic.Field(min_length=1)
    path: str | None = None


class GlobTool(BuiltinTool[GlobInput]):
    """Finds files whose path (relative to ``path``, default the workspace root) matches ``pattern``
    (``**/*.py``, ``src/*.{ts,tsx}``; see :mod:`._globmatch`). A pattern that starts with literal directories
    (``src/**``, or an absolute path) searches from there, which must be inside the workspace; ``..`` after a
    wildcard is refused.

    Returns absolute paths of regular files, most recently modified first, at most 100 (a note says how many
    matched); ``No files found`` when none. Directories ``.git`` etc. are skipped; symbolic links are neither
    followed nor listed; ``.gitignore`` is not applied. Runs in a worker thread; cancellation stops the walk.

    Read permission rules hold (:attr:`ToolContext.read_filter`): a file they deny is not listed, a directory
    they deny is not walked, and a last line ``(N paths left out by Read permission rules)`` counts both (a
    directory once). A ``path`` (or literal pattern prefix) they deny is refused.
    """

    input_model = GlobInput
    name = "Glob"
    read_only = True
    description = (
        'Find files by glob pattern, such as "**/*.py" or "src/**/*.{ts,tsx}". Returns matching file paths, '
        f"most recently modified first (at most {GLOB_LIMIT}). Use Grep to search file contents."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                "path": {
                    "type": "string",
                    "description": "The directory to search in. Omit it to search the workspace root",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }
    )

    def check(self, args: GlobInput) -> None:
        self._split(args)

    def _split(self, args: GlobInput) -> tuple[Path, str]:
        """(directory to walk, pattern relative to it): literal leading components move into the directory."""
        base = self.workspace.resolve(args.path, field="path") if args.path else self.workspace.root
        parts = args.pattern.split("/")
        literal: list[str] = []
        for part in parts[:-1]:
            if has_magic(part):
                break
            literal.append(part)
        rest = "/".join(parts[len(literal) :])
        if ".." in rest.split("/"):
            raise WorkspaceError(
                f"pattern {args.pattern!r} uses '..' after a wildcard; put it before the first wildcard "
                "or use the path argument."
            )
        if literal:
            prefix = "/".join(literal) or "/"
            base = self.workspace.resolve(prefix, field="pattern", base=base, shown=repr(args.pattern))
        return base, rest

    async def run(self, args: GlobInput, ctx: ToolContext) -> object:
        base, rest = self._split(args)
        try:
            matcher = compile_glob(rest)
            depth = _max_depth(rest)
        except ValueError as exc:
            raise ToolFailure(f"Glob: {exc}.") from None
        refuse_if_read_denied(ctx.read_filter, base, "search")
        try:
            info = os.stat(base)
        except OSError as exc:
            raise ToolFailure(f"Cannot search {base}: {describe_os_error(exc)}.") from None
        if not stat.S_ISDIR(info.st_mode):
            raise ToolFailure(f"Cannot search {base}: it is not a directory.")
        started = time.monotonic()
        found, left_out = await run_in_thread(
            lambda stop: self._walk(base, matcher.fullmatch, depth, ctx.read_filter, stop)
        )
        millis = round((time.monotonic() - started) * 1000)
        lines = ["No files found"] if not found else []
        found.sort(key=lambda item: (-item[0], item[1]))
        lines += [str(path) for _, path in found[:GLOB_LIMIT]]
        if len(found) > GLOB_LIMIT:
            lines.append(
                f"(Results are truncated: showing the {GLOB_LIMIT} most recently modified of {len(found)} "
                "matching files. Use a more specific path or pattern.)"
            )
        if left_out:
            lines.append(left_out_note(left_out))
        names: list[JSONValue] = [str(path) for _, path in found[:GLOB_LIMIT]]
        structured: dict[str, JSONValue] = {
            "filenames": names,
            "durationMs": millis,
            "numFiles": len(names),
            "truncated": len(found) > GLOB_LIMIT,
        }
        return ToolOutput(content="\n".join(lines), structured=structured)

    def _walk(
        self,
        base: Path,
        match: Callable[[str], object],
        depth: int | None,
        read_filter: ReadFilter | None,
        stop: threading.Event,
    ) -> tuple[list[tuple[float, Path]], int]:
        """(mtime, path) of the matching regular files, and how many paths the read filter left out: files
        that match, and directories pruned whole (they might hold matches; what they hold is not looked at)."""
        found: list[tuple[float, Path]] = []
        left_out = 0
        prefix = _grep.dir_prefix(base)
        top = self.workspace.open_dir(base)
        try:
            for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
                if stop.is_set():
                    raise Stopped()
                rel_dir = "" if dirpath == "." else dirpath[2:]
                level = rel_dir.count("/") + 1 if rel_dir else 0
                if depth is not None and level + 1 >= depth:
                    dirnames[:] = []  # files deeper than the pattern reaches cannot match
                else:
                    dirnames[:] = [d for d in dirnames if d not in _grep.VCS_DIRS]
                if read_filter is not None and dirnames:
                    kept = [d for d in dirnames if not read_filter.denies(prefix + _grep.join(rel_dir, d))]
                    left_out += len(dirnames) - len(kept)
                    dirnames[:] = kept
                for name in filenames:
                    rel = _grep.join(rel_dir, name)
                    if not match(rel):
                        continue
                    try:
                        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if read_filter is not None and read_filter.denies(prefix + rel):
                        left_out += 1
                        continue
                    found.append((st.st_mtime, base / rel))
        finally:
            os.close(top)
        return found, left_out


def _grep_response(mode: str, found: _grep.Found, text: str) -> dict[str, JSONValue]:
    """Claude Code's Grep ``tool_response``: files mode lists the files (absolute, newest first); content and
    count modes carry the text shown."""
    files = list(found.files.values())
    data: dict[str, JSONValue] = {"mode": mode, "numFiles": len(files), "filenames": []}
    if mode == "files_with_matches":
        keyed = sorted(files, key=lambda h: (-_mtime(h.path), str(h.path)))
        data["filenames"] = [str(h.path) for h in keyed]
    elif mode == "content":
        data["content"] = text
        data["numLines"] = text.count("\n") + 1 if files else 0
    else:
        data["content"] = text
        data["numMatches"] = sum(h.count for h in files)
    return data


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _max_depth(pattern: str) -> int | None:
    """How many path components a match can have, or None when ``**`` makes it unbounded."""
    alternatives = expand_braces(pattern)
    if any("**" in alt for alt in alternatives):
        return None
    return max(len([p for p in alt.split("/") if p]) for alt in alternatives)


# -- Grep ---------------------------------------------------------------------------------------------------


class GrepInput(Input):
    pattern: str
    path: str | None = None
    glob: str | None = None
    type: str | None = None
    output_mode: Literal["content", "files_with_matches", "count"] = "files_with_matches"
    before: int | None = pydantic.Field(default=None, alias="-B", ge=0)
    after: int | None = pydantic.Field(default=None, alias="-A", ge=0)
    context: int | None = pydantic.Field(default=None, alias="-C", ge=0)
    line_numbers: bool | None = pydantic.Field(default=None, alias="-n")
    ignore_case: bool | None = pydantic.Field(default=None, alias="-i")
    head_limit: int | None = pydantic.Field(default=None, ge=0)
    offset: int | None = pydantic.Field(default=None, ge=0)
    multiline: bool | None = None


Backend = Literal["auto", "ripgrep", "python"]


class GrepTool(BuiltinTool[GrepInput]):
    """Searches file contents for a regular expression, with Claude Code's Grep options.

    ``output_mode`` ``files_with_matches`` (default) lists files, newest first; ``content`` shows matching lines
    (``-n`` line numbers, default on; ``-A``/``-B``/``-C`` context, ``-C`` wins); ``count`` gives matches per
    file. ``-i`` ignores case; ``multiline`` lets a match span lines (``.`` matches newlines). ``glob``
    (``*.py``, ``*.{ts,tsx}``, several split by spaces or commas, ``!`` excludes) and ``type`` (``py``, ``js``…)
    filter files; ``offset`` and ``head_limit`` page through the output. Paths in the output are relative to the
    workspace root. See :mod:`._grep` for the output format and the two backends.

    Read permission rules hold (:attr:`ToolContext.read_filter`) in every mode and on both backends: a file they
    deny is not opened, a directory they deny is not searched, and a last line ``(N paths left out by Read
    permission rules)`` counts them (a directory once; files whatever they hold, so the count says nothing
    about their content). A ``path`` they deny is refused.

    ``backend``: ``"auto"`` uses ripgrep when ``rg`` is on PATH (found at construction), else pure Python;
    ``"ripgrep"`` requires it (``ValueError`` otherwise); ``"python"`` never uses it.
    """

    input_model = GrepInput
    name = "Grep"
    read_only = True
    description = (
        "Search file contents with a regular expression. output_mode: files_with_matches (default, newest "
        "first), content (matching lines; -n line numbers, -A/-B/-C context) or count. Filter files with "
        'glob (e.g. "*.js", "*.{ts,tsx}") or type (e.g. "py", "js"); -i ignores case; multiline lets '
        "patterns span lines; head_limit and offset page through results."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The regular expression pattern to search for in file contents",
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search in. Defaults to the workspace root",
                },
                "glob": {
                    "type": "string",
                    "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")',
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": 'Output mode: "content" shows matching lines, "files_with_matches" shows '
                    'file paths (default), "count" shows match counts',
                },
                "-B": {"type": "number", "description": "Lines to show before each match (content mode)"},
                "-A": {"type": "number", "description": "Lines to show after each match (content mode)"},
                "-C": {"type": "number", "description": "Lines to show before and after each match (content mode)"},
                "-n": {"type": "boolean", "description": "Show line numbers (content mode, default true)"},
                "-i": {"type": "boolean", "description": "Case insensitive search"},
                "type": {"type": "string", "description": "File type to search (e.g. py, js, rust, go)"},
                "head_limit": {
                    "type": "number",
                    "description": "Show only the first N lines or entries of the output (after offset); 0 = all",
                },
                "offset": {
                    "type": "number",
                    "description": "Skip the first N lines or entries of the output before head_limit",
                },
                "multiline": {
                    "type": "boolean",
                    "description": "Let patterns span lines; . matches newlines (default false)",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }
    )

    def __init__(self, workspace: Workspace, *, backend: Backend = "auto") -> None:
        super().__init__(workspace)
        rg = shutil.which("rg") if backend != "python" else None
        if backend == "ripgrep" and rg is None:
            raise ValueError("GrepTool(backend='ripgrep') needs the rg executable (ripgrep) on PATH")
        self._rg = rg

    @property
    def backend(self) -> Literal["ripgrep", "python"]:
        """The backend this tool uses."""
        return "ripgrep" if self._rg else "python"

    def check(self, args: GrepInput) -> None:
        if args.path:
            self.workspace.resolve(args.path, field="path")

    async def run(self, args: GrepInput, ctx: ToolContext) -> object:
        read_filter = ctx.read_filter
        base, info = _search_base(self.workspace, args.path, "search", read_filter)
        content = args.output_mode == "content"
        context = args.context
        search = _grep.Search(
            pattern=args.pattern,
            base=base,
            base_is_file=not stat.S_ISDIR(info.st_mode),
            mode=args.output_mode,
            globs=tuple(split_globs(args.glob)) if args.glob else (),
            file_type=args.type or None,
            ignore_case=bool(args.ignore_case),
            multiline=bool(args.multiline),
            before=(context if context is not None else args.before or 0) if content else 0,
            after=(context if context is not None else args.after or 0) if content else 0,
        )
        if self._rg is not None:
            found = await search_ripgrep(self._rg, self.workspace, search, read_filter)
        else:
            found = await run_in_thread(lambda stop: _grep.search_python(self.workspace, search, stop, read_filter))
        text = _grep.render(
            self.workspace,
            found,
            mode=args.output_mode,
            line_numbers=args.line_numbers is not False,
            context=bool(search.before or search.after),
            head_limit=args.head_limit or 0,
            offset=args.offset or 0,
        )
        return ToolOutput(content=text, structured=_grep_response(args.output_mode, found, text))
