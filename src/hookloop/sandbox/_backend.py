"""The backend seam: what a sandbox must enforce (:class:`SandboxSpec`), and the protocol an OS backend
implements to turn a command into a sandboxed one (:class:`SandboxBackend`). Linux has
:class:`~hookloop.sandbox.BubblewrapBackend`; macOS (Seatbelt) can be another implementation of the same
protocol. :class:`NoSandbox` is the backend of a platform without one: it says why, and wraps nothing."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

__all__ = ["Availability", "NoSandbox", "SandboxBackend", "SandboxSpec", "WrappedCommand"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Availability:
    """Whether a backend can sandbox here; ``reason`` says why not (or names what it found, when it can)."""

    available: bool
    reason: str
    details: Mapping[str, str] = field(default_factory=dict)
    """What a diagnosis shows: program paths and versions (``bwrap``, ``socat``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxSpec:
    """What one sandboxed command may touch, in concrete absolute paths (real paths, symlinks resolved).

    The whole file system is readable and nothing is writable, except:

    - ``writable``: directories (and files) writable, with everything below them;
    - ``read_only``: existing paths inside a writable one that stay read-only (Edit deny rules, protected paths);
    - ``missing_protected``: protected paths that do not exist yet, kept from being created: ``"dir"`` or
      ``"file"``; the backend mounts an empty read-only one there and removes it afterwards if still empty;
    - ``masked_files`` / ``masked_dirs``: read as an empty file / an empty read-only directory (Read deny rules);
    - ``private_tmp``: ``/tmp`` is a fresh empty directory; ``hide_run``: so are ``/run`` and ``/var/run``
      (the usual home of unix sockets), except ``unix_sockets``, which stay reachable;
    - ``proxy_socket``: a unix socket outside the sandbox where HTTP(S) goes; inside, ``proxy_port`` on loopback
      reaches it and the proxy variables point there. The network is otherwise loopback only.
    """

    writable: tuple[str, ...]
    read_only: tuple[str, ...] = ()
    missing_protected: tuple[tuple[str, Literal["dir", "file"]], ...] = ()
    masked_files: tuple[str, ...] = ()
    masked_dirs: tuple[str, ...] = ()
    private_tmp: bool = True
    hide_run: bool = True
    unix_sockets: tuple[str, ...] = ()
    proxy_socket: str | None = None
    proxy_port: int = 3128


@dataclass(frozen=True, slots=True, kw_only=True)
class WrappedCommand:
    """A command ready to spawn under the sandbox: ``argv`` and ``env`` replace the originals; call
    ``cleanup()`` once the command and everything it started have ended (it never raises)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cleanup: Callable[[], None]


@runtime_checkable
class SandboxBackend(Protocol):
    """An OS mechanism that confines a command and all its children to a :class:`SandboxSpec`."""

    name: str

    def availability(self) -> Availability:
        """Whether the backend works here (programs present, kernel lets it), and why not. Cached by callers."""
        ...

    def wrap(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], spec: SandboxSpec) -> WrappedCommand:
        """The argv and environment that run ``argv`` in ``cwd`` confined to ``spec``. Raises
        :class:`~hookloop.sandbox.SandboxError` when the spec cannot be set up."""
        ...


class NoSandbox:
    """The backend where no sandbox exists: never available, ``reason`` says why; :meth:`wrap` refuses."""

    name = "none"

    def __init__(self, reason: str | None = None) -> None:
        self._reason = reason or f"no sandbox backend for this platform ({sys.platform}); Linux uses bubblewrap"

    def availability(self) -> Availability:
        return Availability(available=False, reason=self._reason)

    def wrap(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], spec: SandboxSpec) -> WrappedCommand:
        from hookloop.sandbox._paths import SandboxError

        raise SandboxError(f"cannot sandbox: {self._reason}")
