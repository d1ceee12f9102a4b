"""The workspace the built-in tools work in, and race-safe opening of paths inside it.

Checking a path and then opening it by name leaves a window in which a component can be swapped for a symbolic
link that leads elsewhere. So the tools check twice: :meth:`Workspace.resolve` refuses a path whose real location
is outside the allowed directories (early, with a clear sentence), and :meth:`Workspace.open_file` /
:meth:`Workspace.open_dir` then walk the *resolved* path from the allowed directory one component at a time with
``O_NOFOLLOW``. A resolved path contains no symbolic links, so meeting one during that walk means the tree changed
after the check, and the open is refused instead of followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from hookloop.tools._base import ToolFailure

__all__ = ["Workspace", "WorkspaceError", "describe_os_error"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = os.O_NOFOLLOW


class WorkspaceError(ToolFailure):
    """A path is outside the workspace, or changed into a symbolic link between its check and its use."""


class Workspace:
    """The directory tree the built-in tools may touch.

    Args:
        root: the workspace root. Relative tool paths are resolved against it; it must exist.
        additional_dirs: more directories the tools may read and write (Claude Code's ``additionalDirectories``).
        allow_outside: when true, paths outside the root and the additional directories are allowed too (the
            tools' own check is off; the permission layer may still ask). Default false.

    All directories are stored as real paths (symbolic links resolved). Raises ``NotADirectoryError`` when the
    root or an additional directory is not an existing directory.
    """

    __slots__ = ("_additional", "_allow_outside", "_root")

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        allow_outside: bool = False,
    ) -> None:
        self._root = _real_dir(root, "workspace root")
        self._additional = tuple(_real_dir(d, "additional workspace directory") for d in additional_dirs)
        self._allow_outside = allow_outside

    @property
    def root(self) -> Path:
        return self._root

    @property
    def additional_dirs(self) -> tuple[Path, ...]:
        return self._additional

    @property
    def allow_outside(self) -> bool:
        return self._allow_outside

    def __repr__(self) -> str:
        extra = f", additional_dirs={[str(d) for d in self._additional]}" if self._additional else ""
        outside = ", allow_outside=True" if self._allow_outside else ""
        return f"Workspace({str(self._root)!r}{extra}{outside})"

    # -- checking ----------------------------------------------------------------------------------------

    def anchor_of(self, real: Path) -> Path | None:
        """The allowed directory (root or additional) that contains the real path ``real``, deepest first."""
        best: Path | None = None
        for base in (self._root, *self._additional):
            if real.is_relative_to(base) and (best is None or len(base.parts) > len(best.parts)):
                best = base
        return best

    def contains(self, real: Path) -> bool:
        """Whether the real path ``real`` is inside the root or an additional directory."""
        return self.anchor_of(real) is not None

    def resolve(self, path: str, *, field: str = "path", base: Path | None = None, shown: str | None = None) -> Path:
        """The real, absolute location of ``path`` (``~`` expanded; relative paths against ``base``, default the
        root; symbolic links and ``..`` resolved, the last components may not exist yet).

        Raises :class:`WorkspaceError` when ``path`` is empty, holds a NUL byte, or resolves outside the allowed
        directories (unless ``allow_outside``). ``field`` names the argument in the message, ``shown`` is the
        value quoted there (default ``path``).
        """
        if not path:
            raise WorkspaceError(f"{field} is empty; give a path inside the workspace {self._root}.")
        if "\0" in path:
            raise WorkspaceError(f"{field} {path!r} contains a NUL byte, which no path can hold.")
        candidate = Path(os.path.expanduser(path))
        if not candidate.is_absolute():
            candidate = (base or self._root) / candidate
        real = Path(os.path.realpath(candidate))
        if not self._allow_outside and not self.contains(real):
            where = f"the workspace {self._root}"
            if self._additional:
                where += " or its additional directories " + ", ".join(str(d) for d in self._additional)
            via = "" if str(real) == path else f" (it resolves to {real})"
            quoted = repr(path) if shown is None else shown
            raise WorkspaceError(f"{field} {quoted} is outside {where}{via}; the tool refuses paths outside it.")
        return real

    def display(self, real: Path) -> str:
        """How output shows a path: relative to the root when inside it, absolute otherwise."""
        if real == self._root:
            return "."
        if real.is_relative_to(self._root):
            return real.relative_to(self._root).as_posix()
        return str(real)

    # -- opening -----------------------------------------------------------------------------------------

    def open_dir(self, real: Path) -> int:
        """Open the directory at the resolved path ``real`` without following symbolic links; returns a file
        descriptor the caller closes. Raises :class:`WorkspaceError` on a symbolic link, ``OSError`` otherwise."""
        return self._open(real, _DIR_FLAGS, 0, make_parents=False)

    def open_file(self, real: Path, flags: int, *, mode: int = 0o666, make_parents: bool = False) -> int:
        """Open the file at the resolved path ``real`` with ``os.open`` ``flags`` (``O_NOFOLLOW`` and
        ``O_CLOEXEC`` are added), walking from the allowed directory that contains it without following any
        symbolic link. ``make_parents`` creates missing parent directories on the way (``mkdir -p``).

        Returns a file descriptor the caller closes. Raises :class:`WorkspaceError` when a component is (now) a
        symbolic link or ``real`` is outside the allowed directories, and ``OSError`` for everything else
        (missing file, permission, not a directory).
        """
        return self._open(real, flags | os.O_CLOEXEC, mode, make_parents=make_parents)

    def _open(self, real: Path, flags: int, mode: int, *, make_parents: bool) -> int:
        anchor = self.anchor_of(real)
        if anchor is None:
            if not self._allow_outside:
                raise WorkspaceError(f"{real} is outside the workspace {self._root}; the tool refuses it.")
            if make_parents:
                os.makedirs(real.parent, exist_ok=True)
            return os.open(real, flags | _NOFOLLOW, mode)
        parts = real.relative_to(anchor).parts
        fd = os.open(anchor, _DIR_FLAGS)
        if not parts:
            if flags & os.O_DIRECTORY:
                return fd
            os.close(fd)
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(real))
        try:
            walked = anchor
            for part in parts[:-1]:
                walked = walked / part
                child = _step_into(fd, part, walked, real, make_parents=make_parents)
                os.close(fd)
                fd = child
            try:
                return os.open(parts[-1], flags | _NOFOLLOW, mode, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and _is_link(parts[-1], fd):
                    raise _swapped(real, real) from None
                raise
        finally:
            os.close(fd)


def _step_into(fd: int, part: str, walked: Path, real: Path, *, make_parents: bool) -> int:
    """Open the subdirectory ``part`` of ``fd`` without following a link (creating it if asked)."""
    try:
        try:
            return os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            if not make_parents:
                raise
            with contextlib.suppress(FileExistsError):  # created concurrently: open what is there, no links
                os.mkdir(part, 0o777, dir_fd=fd)
            return os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
            raise _swapped(real, walked) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            # report the path the caller asked for, not the component
            raise type(exc)(exc.errno, exc.strerror, str(real)) from None
        raise


def _real_dir(path: str | os.PathLike[str], what: str) -> Path:
    real = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    if not real.is_dir():
        raise NotADirectoryError(f"{what} {os.fspath(path)!r} is not an existing directory")
    return real


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _swapped(real: Path, component: Path) -> WorkspaceError:
    where = "" if component == real else f" ({component} is one now)"
    return WorkspaceError(
        f"{real} changed into a symbolic link after it was checked{where}; "
        "the tool refuses to follow it because it could lead outside the workspace."
    )


def describe_os_error(exc: OSError) -> str:
    """A short reason for an ``OSError`` met while opening or reading a path (no path in it)."""
    match exc.errno:
        case errno.ENOENT:
            return "it does not exist"
        case errno.EISDIR:
            return "it is a directory, not a file"
        case errno.ENOTDIR:
            return "a part of the path is not a directory"
        case errno.EACCES | errno.EPERM:
            return "permission denied"
        case errno.ELOOP:
            return "it is a symbolic link loop"
        case errno.ENAMETOOLONG:
            return "the name is too long"
        case errno.ENOSPC:
            return "no space is left on the device"
        case errno.EROFS:
            return "the file system is read-only"
        case _:
            return exc.strerror or type(exc).__name__
