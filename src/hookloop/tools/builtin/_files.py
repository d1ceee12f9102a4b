"""``Read``, ``Write`` and ``Edit``: file tools with Claude Code's input shapes, confined to the workspace.

Each resolves ``file_path`` (relative to the workspace root), refuses it outside the workspace, and opens the
resolved path through :meth:`Workspace.open_file`, which refuses a symbolic link swapped in after the check.
Write and Edit work on one file descriptor from open to close and never await in between, so a cancellation
cannot leave a half-written file behind.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import BinaryIO

import pydantic

from hookloop._frozen import freeze_object
from hookloop.tools._base import ToolContext, ToolFailure, ToolOutput
from hookloop.tools.builtin._common import (
    BuiltinTool,
    Input,
    Stopped,
    plural,
    refuse_if_read_denied,
    run_in_thread,
    truncate_line,
)
from hookloop.tools.builtin._structured import edit_response, read_response, write_response
from hookloop.tools.builtin._workspace import Workspace, describe_os_error

__all__ = ["EditTool", "ReadTool", "WriteTool"]

DEFAULT_LIMIT = 2000
LINE_CAP = 2000
_CHUNK = 1 << 20
_FILE_PATH = {"type": "string", "description": "The path of the file (absolute, or relative to the workspace root)"}


def _open_regular(workspace: Workspace, real: Path, flags: int, verb: str) -> int:
    """Open ``real`` race-safely and make sure it is a regular file (O_NONBLOCK so a FIFO cannot hang us)."""
    try:
        fd = workspace.open_file(real, flags | os.O_NONBLOCK)
    except OSError as exc:
        raise ToolFailure(f"Cannot {verb} {real}: {describe_os_error(exc)}.") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ToolFailure(f"Cannot {verb} {real}: it is a directory, not a file.")
        if not stat.S_ISREG(mode):
            raise ToolFailure(f"Cannot {verb} {real}: it is not a regular file.")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _create(workspace: Workspace, real: Path, verb: str) -> int | None:
    """Create ``real`` (and its missing parents) exclusively; None when it already exists."""
    try:
        return workspace.open_file(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL, make_parents=True)
    except FileExistsError:
        return None
    except OSError as exc:
        raise ToolFailure(f"Cannot {verb} {real}: {describe_os_error(exc)}.") from None


def _encode(text: str, real: Path, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolFailure(f"Cannot write {real}: {what} is not valid Unicode ({exc.reason}).") from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _decode_text(data: bytes, real: Path, verb: str) -> str:
    if b"\0" in data:
        raise ToolFailure(f"Cannot {verb} {real}: it looks like a binary file (it contains NUL bytes).")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"Cannot {verb} {real}: it is not valid UTF-8 text; it may be a binary file.") from None


class _Path(Input):
    file_path: str


# -- Read ---------------------------------------------------------------------------------------------------


class ReadInput(_Path):
    offset: int | None = pydantic.Field(default=None, ge=0)
    limit: int | None = pydantic.Field(default=None, gt=0)


class ReadTool(BuiltinTool[ReadInput]):
    """Reads a UTF-8 text file and returns it numbered like ``cat -n``: the line number right-aligned in six
    columns, a tab, the line. ``offset`` is the 1-based line to start at (0 means 1), ``limit`` the number of
    lines (default 2000); lines longer than 2000 characters are cut with a marker. A note after the lines says
    which part was shown when it was not the whole file. An empty file, or an offset past the end, gives a
    sentence saying so (not an error).

    Errors: missing file, directory, not a regular file, binary content (NUL bytes or not UTF-8), outside the
    workspace, denied by the call's read filter (:attr:`ToolContext.read_filter`: the resolved path, so also
    through a symbolic link). Runs in a worker thread; cancellation stops it between chunks.
    """

    input_model = ReadInput
    name = "Read"
    read_only = True
    description = (
        "Read a text file from the workspace. Returns lines numbered like `cat -n` (number, tab, line). "
        f"By default up to {DEFAULT_LIMIT} lines from the start; use offset (1-based line number) and limit "
        f"for other parts. Lines longer than {LINE_CAP} characters are truncated. Binary files are refused."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "file_path": {**_FILE_PATH, "description": "The path of the file to read"},
                "offset": {
                    "type": "number",
                    "description": "The line number to start reading from. Only provide if the file is too large "
                    "to read at once",
                },
                "limit": {
                    "type": "number",
                    "description": "The number of lines to read. Only provide if the file is too large to read at once",
                },
            },
            "required": ["file_path"],
            "additionalProperties": False,
        }
    )

    def check(self, args: ReadInput) -> None:
        self.workspace.resolve(args.file_path, field="file_path")

    async def run(self, args: ReadInput, ctx: ToolContext) -> object:
        real = self.workspace.resolve(args.file_path, field="file_path")
        refuse_if_read_denied(ctx.read_filter, real, "read")
        start = max(args.offset or 1, 1)
        limit = args.limit or DEFAULT_LIMIT
        fd = _open_regular(self.workspace, real, os.O_RDONLY, "read")
        return await run_in_thread(lambda stop: _read_numbered(fd, real, start, limit, stop))


def _read_numbered(fd: int, real: Path, start: int, limit: int, stop: threading.Event) -> ToolOutput:
    out: list[str] = []
    shown: list[str] = []
    number = 0
    with os.fdopen(fd, "rb") as f:
        if b"\0" in f.read(8192):
            raise ToolFailure(f"Cannot read {real}: it looks like a binary file (it contains NUL bytes).")
        f.seek(0)
        for raw in f:
            number += 1
            if number % 4096 == 0 and stop.is_set():
                raise Stopped()
            if number < start:
                continue
            if number >= start + limit:
                number += _count_lines(f, stop)  # this line and the rest only need counting
                break
            if b"\0" in raw:
                raise ToolFailure(f"Cannot read {real}: it looks like a binary file (line {number} has NUL bytes).")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ToolFailure(
                    f"Cannot read {real}: line {number} is not valid UTF-8; it may be a binary file."
                ) from None
            line = line.removesuffix("\n")
            shown.append(line)
            out.append(f"{number:>6}\t{truncate_line(line, LINE_CAP)}")
    total = number
    structured = read_response(str(real), shown, start=start, total=total)
    if total == 0:
        return ToolOutput(content=f"(The file {real} exists but is empty.)", structured=structured)
    if start > total:
        text = f"(The file {real} has {plural(total, 'line')}; offset {start} is past its end.)"
        return ToolOutput(content=text, structured=structured)
    last = start + len(out) - 1
    if start == 1 and last == total:
        return ToolOutput(content="\n".join(out), structured=structured)
    note = f"\n\n(Showing lines {start}-{last} of {total}. Use offset and limit to read other parts.)"
    return ToolOutput(content="\n".join(out) + note, structured=structured)


def _count_lines(f: BinaryIO, stop: threading.Event) -> int:
    """The number of lines after the current position of ``f`` (a last line without a newline counts)."""
    count = 0
    last = b"\n"
    while chunk := f.read(_CHUNK):
        if stop.is_set():
            raise Stopped()
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


# -- Write --------------------------------------------------------------------------------------------------

_ORIGINAL_CAP = 4 * 1024 * 1024


def _old_text(workspace: Workspace, real: Path) -> str | None:
    """The text a Write is about to replace, for its structured result: ``None`` when the file is missing,
    larger than 4 MiB, not UTF-8 text, or cannot be read (the write itself decides what is an error)."""
    try:
        fd = _open_regular(workspace, real, os.O_RDONLY, "write")
    except ToolFailure:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(_ORIGINAL_CAP + 1)
        except OSError:
            return None
    if len(data) > _ORIGINAL_CAP or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class WriteInput(_Path):
    content: str


class WriteTool(BuiltinTool[WriteInput]):
    """Writes ``content`` (UTF-8) to ``file_path``, creating missing parent directories; replaces an existing
    file's content in place (its mode and owner stay). The result says whether the file was created or
    overwritten, and its size (and the old size, unless the call's read filter denies the path). Errors: a
    directory or non-regular file at the path, outside the workspace, permission, a symbolic link swapped in
    after the check."""

    input_model = WriteInput
    name = "Write"
    description = (
        "Write a file in the workspace, creating it (and missing parent directories) or overwriting it. "
        "Prefer Edit to change part of an existing file."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "file_path": {**_FILE_PATH, "description": "The path of the file to write"},
                "content": {"type": "string", "description": "The content to write to the file"},
            },
            "required": ["file_path", "content"],
            "additionalProperties": False,
        }
    )

    def check(self, args: WriteInput) -> None:
        self.workspace.resolve(args.file_path, field="file_path")

    async def run(self, args: WriteInput, ctx: ToolContext) -> object:
        real = self.workspace.resolve(args.file_path, field="file_path")
        data = _encode(args.content, real, "content")
        lines = plural(args.content.count("\n") + (not args.content.endswith("\n") and bool(args.content)), "line")
        fd = _create(self.workspace, real, "write")
        if fd is not None:
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            created = write_response(str(real), args.content, original=None, created=True)
            return ToolOutput(content=f"Created {real} ({plural(len(data), 'byte')}, {lines}).", structured=created)
        read_filter = ctx.read_filter
        readable = read_filter is None or not read_filter.denies(str(real))
        original = _old_text(self.workspace, real) if readable else None
        fd = _open_regular(self.workspace, real, os.O_WRONLY, "write")
        try:
            before = os.fstat(fd).st_size
            os.ftruncate(fd, 0)
            _write_all(fd, data)
        except OSError as exc:
            raise ToolFailure(f"Cannot write {real}: {describe_os_error(exc)}.") from None
        finally:
            os.close(fd)
        updated = write_response(str(real), args.content, original=original, created=False)
        if not readable:
            text = f"Overwrote {real} ({plural(len(data), 'byte')}, {lines})."  # its old size is not for Read to see
            return ToolOutput(content=text, structured=updated)
        text = f"Overwrote {real} ({plural(len(data), 'byte')}, {lines}; it had {plural(before, 'byte')})."
        return ToolOutput(content=text, structured=updated)


# -- Edit ---------------------------------------------------------------------------------------------------


class EditInput(_Path):
    old_string: str
    new_string: str
    replace_all: bool = False


class EditTool(BuiltinTool[EditInput]):
    """Replaces ``old_string`` with ``new_string`` in a UTF-8 text file, exactly (no regex, whitespace
    counts). Refused when ``old_string`` is not found, when it is found N > 1 times and ``replace_all`` is false
    (the message says N), and when it equals ``new_string``. The result says how many replacements were made.

    An empty ``old_string`` creates the file with ``new_string`` (as Claude Code does) when the file does not
    exist or is empty; for a non-empty file it is refused. Binary and non-UTF-8 files are refused. Editing reads
    the file, so a path the call's read filter denies (Read deny and ask rules) is refused too.
    """

    input_model = EditInput
    name = "Edit"
    description = (
        "Replace an exact string in a file of the workspace. old_string must match the file exactly "
        "(indentation included) and be unique, unless replace_all is true, which replaces every occurrence. "
        "An empty old_string creates a new file with new_string."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "file_path": {**_FILE_PATH, "description": "The path of the file to modify"},
                "old_string": {"type": "string", "description": "The text to replace"},
                "new_string": {
                    "type": "string",
                    "description": "The text to replace it with (must be different from old_string)",
                },
                "replace_all": {
                    "type": "boolean",
                    "default": False,
                    "description": "Replace all occurrences of old_string (default false)",
                },
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": False,
        }
    )

    def check(self, args: EditInput) -> None:
        self.workspace.resolve(args.file_path, field="file_path")

    async def run(self, args: EditInput, ctx: ToolContext) -> object:
        real = self.workspace.resolve(args.file_path, field="file_path")
        # Edit reads the file (its answers tell whether and how often old_string occurs), so Read rules hold.
        refuse_if_read_denied(ctx.read_filter, real, "edit")
        old, new = args.old_string, args.new_string
        if old == new:
            raise ToolFailure(f"Cannot edit {real}: old_string and new_string are the same, so nothing would change.")
        if not old:
            return self._create(real, old, new)
        fd = _open_regular(self.workspace, real, os.O_RDWR, "edit")
        with os.fdopen(fd, "r+b") as f:
            text = _decode_text(f.read(), real, "edit")
            found = text.count(old)
            if found == 0:
                raise ToolFailure(
                    f"Cannot edit {real}: old_string was not found in the file "
                    "(it must match exactly, including whitespace and indentation)."
                )
            if found > 1 and not args.replace_all:
                raise ToolFailure(
                    f"Cannot edit {real}: old_string was found {found} times; add surrounding lines to make it "
                    "unique, or set replace_all to true to replace every occurrence."
                )
            updated = text.replace(old, new, -1 if args.replace_all else 1)
            data = _encode(updated, real, "new_string")
            try:
                f.seek(0)
                f.write(data)
                f.truncate()
            except OSError as exc:
                raise ToolFailure(f"Cannot write {real}: {describe_os_error(exc)}.") from None
        structured = edit_response(str(real), old, new, original=text, updated=updated, replace_all=args.replace_all)
        summary = f"Edited {real}: replaced {plural(found if args.replace_all else 1, 'occurrence')}."
        return ToolOutput(content=summary, structured=structured)

    def _create(self, real: Path, old: str, content: str) -> ToolOutput:
        data = _encode(content, real, "new_string")
        fd = _create(self.workspace, real, "edit")
        if fd is None:
            fd = _open_regular(self.workspace, real, os.O_WRONLY, "edit")
            if os.fstat(fd).st_size:
                os.close(fd)
                raise ToolFailure(
                    f"Cannot edit {real}: old_string is empty, which only creates a new file, "
                    "and this file already has content; give the text to replace."
                )
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        structured = edit_response(str(real), old, content, original="", updated=content, replace_all=False)
        return ToolOutput(
            content=f"Created {real} with new_string ({plural(len(data), 'byte')}).", structured=structured
        )
