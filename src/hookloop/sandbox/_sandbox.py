"""The :class:`Sandbox`: settings + permission rules + workspace → what each sandboxed command may touch."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hookloop.command_hooks.model import ConfiguredHook
from hookloop.permissions import PermissionPolicy
from hookloop.permissions._paths import PathPattern, compile_path_pattern
from hookloop.permissions._rules import BashPattern
from hookloop.sandbox._backend import Availability, NoSandbox, SandboxBackend, SandboxSpec
from hookloop.sandbox._paths import Found, SandboxError, expand, outermost, same_inode_links
from hookloop.sandbox._proxy import DomainProxy
from hookloop.sandbox._settings import SandboxSettings, parse_sandbox_settings

__all__ = ["PROTECTED_NAMES", "Sandbox", "SandboxUnavailableError", "SandboxedCommand", "default_backend"]

PROTECTED_NAMES: tuple[tuple[str, Literal["dir", "file"]], ...] = (
    (".git/hooks", "dir"),
    (".git/config", "file"),
    (".git/config.worktree", "file"),
    (".claude", "dir"),
    (".hookloop", "dir"),
    (".mcp.json", "file"),
)
"""Paths inside each writable directory that sandboxed commands cannot change: hooks and configuration that
would run code later. Missing directories among them are kept from being created (an empty read-only one is
mounted there for the command and removed after, likewise an empty file for missing git config files); a
missing ``.mcp.json`` is not. The ``.git/`` entries apply
to every git directory of the repository (submodules under ``.git/modules``, linked worktrees), with the
directory ``core.hooksPath`` names."""

_HOME_FILES = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".gitconfig", ".ssh", ".claude")
_FAILURE = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|Invalid cross-device link|"
    r"Could not resolve host|Network is unreachable|Temporary failure in name resolution|"
    r"Name or service not known|Connection refused|403 Forbidden",
    re.IGNORECASE,
)


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def _git_dirs(git: str) -> list[str]:
    """The repository's git directory and the ones nested in it: submodules (``modules/…``, which nest) and
    linked worktrees (``worktrees/*``). Bounded: object stores are not entered."""
    found = [git]
    stack = [os.path.join(git, "modules"), os.path.join(git, "worktrees")]
    while stack and len(found) < 1000:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False) or entry.name in ("objects", "refs", "logs", "lfs"):
                continue
            if os.path.exists(os.path.join(entry.path, "HEAD")):
                found.append(entry.path)
                stack.append(os.path.join(entry.path, "modules"))
            else:
                stack.append(entry.path)  # a submodule name with slashes
    return found


def _git_protected(root: str, git: str) -> list[tuple[str, Literal["dir", "file"]]]:
    """Paths in git directories that make git run code: hooks, config (core.hooksPath, core.fsmonitor, filter
    drivers …), per-worktree config, and a configured hooksPath."""
    names: list[tuple[str, Literal["dir", "file"]]] = []
    kinds: tuple[tuple[str, Literal["dir", "file"]], ...] = (
        ("hooks", "dir"),
        ("config", "file"),
        ("config.worktree", "file"),
    )
    for gitdir in _git_dirs(git):
        names += [(os.path.relpath(os.path.join(gitdir, name), root), kind) for name, kind in kinds]
        try:
            with open(os.path.join(gitdir, "config"), encoding="utf-8", errors="replace") as config:
                hooks_path = _HOOKS_PATH.search(config.read(1 << 20))
        except OSError:
            hooks_path = None
        if hooks_path is not None:  # core.hooksPath: git runs the hooks there instead of .git/hooks
            target = os.path.expanduser(hooks_path.group(1).strip('"'))
            names.append((os.path.relpath(os.path.join(root, target), root), "dir"))
    return names


def _protect(root: str, read_only: list[str], missing: list[tuple[str, Literal["dir", "file"]]]) -> None:
    """Add the protected paths of one writable directory: existing ones read-only, missing directories to be
    kept from being created. A protected path that is a symbolic link raises :class:`SandboxError`: the link
    itself sits in a writable directory, so the command could replace it."""
    git = os.path.join(root, ".git")
    names = [(name, kind) for name, kind in PROTECTED_NAMES if not name.startswith(".git/")]
    if os.path.isdir(git) and not os.path.islink(git):
        names += _git_protected(root, git)
    for name, kind in names:
        path = os.path.normpath(os.path.join(root, name))
        if os.path.islink(path):
            raise SandboxError(
                f"{path} is a symbolic link: the sandbox cannot keep it from being replaced, so it does not run "
                f"commands here; make it a real {'directory' if kind == 'dir' else 'file'}"
            )
        if os.path.lexists(path):
            read_only.append(os.path.realpath(path))
        elif _within(path, root) and (kind == "dir" or name != ".mcp.json"):
            missing.append((path, kind))  # e.g. config.worktree: git reads it once extensions.worktreeConfig is on
    if os.path.isfile(git) and not os.path.islink(git):
        read_only.append(git)  # a worktree's pointer to its git directory


class SandboxUnavailableError(SandboxError):
    """The sandbox is enabled with ``failIfUnavailable`` but cannot run here; the message says why."""


def default_backend(settings: SandboxSettings | None = None) -> SandboxBackend:
    """The backend for this platform: bubblewrap on Linux (honouring ``bwrapPath``/``socatPath``), else
    :class:`NoSandbox` saying that macOS's Seatbelt backend does not exist yet."""
    if sys.platform.startswith("linux"):
        from hookloop.sandbox._bwrap import BubblewrapBackend

        return BubblewrapBackend(
            bwrap=settings.bwrap_path if settings else None, socat=settings.socat_path if settings else None
        )
    if sys.platform == "darwin":
        return NoSandbox("hookloop has no macOS (Seatbelt) sandbox backend yet")
    return NoSandbox()


@dataclass(slots=True)
class SandboxedCommand:
    """A command ready to spawn (``argv``, ``env``), and the hosts its proxy refused so far (``blocked``)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    blocked: list[str] = field(default_factory=list)


class Sandbox:
    """Runs commands under an OS sandbox according to Claude Code's ``sandbox`` settings.

    What a sandboxed command may do (each command is confined, with every process it starts):

    - read the whole file system, except paths covered by Read deny/ask rules and ``filesystem.denyRead``,
      which read as empty files / directories;
    - write only in the workspace, the additional directories and ``filesystem.allowWrite`` (plus a private
      ``/tmp`` discarded after the command), except paths covered by Edit deny/ask rules,
      ``filesystem.denyWrite`` and :data:`PROTECTED_NAMES`, and the settings files;
    - reach the network only through a proxy that allows ``network.allowedDomains`` and the
      ``WebFetch(domain:…)`` allow rules (``ask_domain``, when given, is asked about any other host);
      ``/run`` and ``/var/run`` (unix sockets such as docker's) are hidden unless ``allowAllUnixSockets``.

    ``backend`` defaults to :func:`default_backend`. ``resolver`` maps host → (address, port) for the proxy
    (tests). Constructing never runs anything; :attr:`availability` probes the backend once.
    """

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        workspace: str | os.PathLike[str],
        policy: PermissionPolicy | None = None,
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        backend: SandboxBackend | None = None,
        resolver: Mapping[str, tuple[str, int]] | None = None,
        ask_domain: Callable[[str], Awaitable[bool]] | None = None,
        settings_files: Iterable[str | os.PathLike[str]] = (),
        home: Path | None = None,
    ) -> None:
        self._settings = settings
        self._workspace = os.path.realpath(workspace)
        self._policy = policy
        dirs = [os.path.realpath(d) for d in additional_dirs]
        if policy is not None:
            dirs += policy.additional_directories
        self._additional = tuple(dict.fromkeys(d for d in dirs if d != self._workspace))
        self._backend = backend if backend is not None else default_backend(settings)
        self._resolver = dict(resolver or {})
        self.ask_domain = ask_domain
        """Asked (with the host) when a sandboxed command connects to a host that is neither allowed nor
        denied; true lets it through for the rest of that command. ``None``: refused and reported."""
        self._settings_files = tuple(os.path.realpath(p) for p in settings_files)
        self._home = os.path.realpath(home if home is not None else Path.home())
        self._attached = False
        self._excluded = tuple(
            BashPattern.parse(entry if "*" in entry else f"{entry.strip()}:*")  # a prefix, as Claude Code
            for entry in settings.excluded_commands
        )

    @classmethod
    def from_settings(
        cls,
        layers: Sequence[tuple[str | os.PathLike[str], Mapping[str, object]]],
        *,
        workspace: str | os.PathLike[str],
        policy: PermissionPolicy | None = None,
        enabled: bool | None = None,
        backend: SandboxBackend | None = None,
        home: Path | None = None,
    ) -> Sandbox:
        """A sandbox from settings layers (lowest precedence first); ``enabled`` overrides ``sandbox.enabled``
        (``hookloop run --sandbox``). Raises :class:`~hookloop.sandbox.SandboxConfigError` for bad settings."""
        settings = parse_sandbox_settings(layers, workspace=workspace, home=home)
        if enabled is not None:
            settings = settings.with_enabled(enabled)
        return cls(
            settings,
            workspace=workspace,
            policy=policy,
            backend=backend,
            settings_files=[str(label) for label, _ in layers if os.sep in str(label)],
            home=home,
        )

    # -- state -------------------------------------------------------------------------------------------
    @property
    def settings(self) -> SandboxSettings:
        return self._settings

    @property
    def backend(self) -> SandboxBackend:
        return self._backend

    @property
    def availability(self) -> Availability:
        """Whether the backend works here, and why not (probed once)."""
        return self._backend.availability()

    @property
    def active(self) -> bool:
        """Enabled and available: commands that are not excluded run sandboxed."""
        return self._settings.enabled and self.availability.available

    def check_available(self) -> str | None:
        """Call once when a session starts. Enabled but unavailable: raises :class:`SandboxUnavailableError`
        with ``failIfUnavailable``, else returns the loud warning to show (commands then run unsandboxed).
        Otherwise ``None``."""
        if not self._settings.enabled or self.availability.available:
            return None
        reason = self.availability.reason
        if self._settings.fail_if_unavailable:
            raise SandboxUnavailableError(f"the sandbox is required (sandbox.failIfUnavailable) but {reason}")
        return f"WARNING: the sandbox is enabled but unavailable ({reason}); Bash commands run UNSANDBOXED"

    # -- which commands ----------------------------------------------------------------------------------
    def excluded(self, command: str) -> bool:
        """Whether ``command`` is covered by ``excludedCommands`` (every subcommand, and the command could
        be analysed; otherwise it runs sandboxed)."""
        if not self._excluded:
            return False
        from hookloop.permissions import _shell

        analysis = _shell.analyse(command)
        if not analysis.safe or not analysis.commands:
            return False
        return all(any(p.allows(words) for p in self._excluded) for words in analysis.commands)

    def wants_unsandboxed(self, tool_input: Mapping[str, object]) -> bool:
        """The call asks to run outside the sandbox (``dangerouslyDisableSandbox: true``) and the settings
        allow that (``allowUnsandboxedCommands``); such a call always needs approval."""
        return (
            self.active
            and tool_input.get("dangerouslyDisableSandbox") is True
            and self._settings.allow_unsandboxed_commands
        )

    def will_sandbox(self, tool_input: Mapping[str, object]) -> bool:
        """Whether the Bash call with this input runs sandboxed."""
        command = tool_input.get("command")
        if not self.active or not isinstance(command, str):
            return False
        return not self.wants_unsandboxed(tool_input) and not self.excluded(command)

    def attach(self) -> None:
        """Called by the Bash tool that runs its commands in this sandbox. Until one is attached,
        :meth:`auto_allows` is false: a policy must never auto-allow commands that would run unsandboxed."""
        self._attached = True

    def auto_allows(self, tool_input: Mapping[str, object]) -> bool:
        """``autoAllowBashIfSandboxed``: the permission default for a Bash call no rule decided is "allow"
        when it runs sandboxed (and a Bash tool runs its commands in this sandbox: :meth:`attach`)."""
        return self._attached and self._settings.auto_allow_bash_if_sandboxed and self.will_sandbox(tool_input)

    def covers_hook(self, hook: ConfiguredHook) -> bool:
        """Whether a command hook runs sandboxed: the sandbox is active, and ``sandbox.hooks`` is ``"all"``,
        or ``"project"`` (the default) and the hook comes from a project-level settings file or hook
        directory. With ``failIfUnavailable`` and no working sandbox, the covered hooks fail to start
        (``spawn_failed``) rather than run unsandboxed. A sandboxed hook gets the same confinement as a Bash
        command (workspace writable, so formatters work; masks, protected paths and the network allow-list the
        same)."""
        mode = self._settings.hooks
        if mode == "none" or not self._settings.enabled:
            return False
        if not self.availability.available and not self._settings.fail_if_unavailable:
            return False  # runs unsandboxed; check_available() gave the warning
        # Unavailable with failIfUnavailable: "covered", so the hook fails to start instead of running bare.
        return mode == "all" or hook.source.project_level

    # -- the confinement ---------------------------------------------------------------------------------
    @property
    def writable(self) -> tuple[str, ...]:
        """Writable directories: the workspace, the additional directories, ``filesystem.allowWrite``."""
        extra = (os.path.realpath(p) for p in self._settings.filesystem.allow_write)
        return tuple(dict.fromkeys((self._workspace, *self._additional, *extra)))

    def spec(self, *, extra_writable: Iterable[str] = (), proxy_socket: str | None = None) -> SandboxSpec:
        """The concrete confinement for a command starting now (walks the file system for the rules' paths).
        Raises :class:`SandboxError` when the masks cannot be computed."""
        writable = self.writable
        fs = self._settings.filesystem
        read_patterns = [*self._rules("Read"), *(self._absolute(p) for p in fs.deny_read)]
        edit_patterns = [*self._rules("Edit"), *(self._absolute(p) for p in fs.deny_write)]
        masked = expand(read_patterns)
        files = [f.path for f in masked if not f.is_dir]
        links = same_inode_links(files, writable)
        masked = outermost([*masked, *(Found(path, False) for path in links)])
        read_only: list[str] = [f.path for f in expand(edit_patterns)]
        missing: list[tuple[str, Literal["dir", "file"]]] = []
        for root in writable:
            _protect(root, read_only, missing)
        for path in (*self._settings_files, *(os.path.join(self._home, name) for name in _HOME_FILES)):
            if os.path.lexists(path):
                read_only.append(os.path.realpath(path))
        hookloop_home = os.environ.get("HOOKLOOP_HOME")
        if hookloop_home and os.path.exists(hookloop_home):
            read_only.append(os.path.realpath(hookloop_home))
        read_only.append(os.path.join(self._home, ".hookloop"))
        network = self._settings.network
        inside = [p for p in dict.fromkeys(read_only) if any(_within(p, w) for w in writable)]
        return SandboxSpec(
            writable=(*writable, *extra_writable),
            read_only=tuple(inside),
            missing_protected=tuple(missing),
            masked_files=tuple(f.path for f in masked if not f.is_dir),
            masked_dirs=tuple(f.path for f in masked if f.is_dir),
            hide_run=not network.allow_all_unix_sockets,
            unix_sockets=network.allow_unix_sockets,
            proxy_socket=proxy_socket,
        )

    def _rules(self, family: str) -> tuple[PathPattern, ...]:
        return () if self._policy is None else self._policy.restricted_paths(family)

    def _absolute(self, path: str) -> PathPattern:
        return compile_path_pattern("/" + path, workspace=Path(self._workspace), settings_dir=None, home=Path("/"))

    def allowed_domains(self) -> tuple[str, ...]:
        """``network.allowedDomains`` plus the hosts of ``WebFetch(domain:…)`` allow rules."""
        web = self._policy.web_domains("allow") if self._policy is not None else ()
        return tuple(dict.fromkeys((*self._settings.network.allowed_domains, *web)))

    def denied_domains(self) -> tuple[str, ...]:
        """``network.deniedDomains`` plus the hosts of ``WebFetch(domain:…)`` deny and ask rules."""
        web = () if self._policy is None else (*self._policy.web_domains("deny"), *self._policy.web_domains("ask"))
        return tuple(dict.fromkeys((*self._settings.network.denied_domains, *web)))

    @contextlib.asynccontextmanager
    async def open_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        writable_files: Iterable[str] = (),
    ) -> AsyncIterator[SandboxedCommand]:
        """Prepare ``argv`` to run sandboxed in ``cwd`` with ``env`` (default: this process's environment).

        Starts the command's network proxy, computes the masks, and yields the argv/env to spawn; spawn and wait
        inside the ``async with``. Leaving it stops the proxy and removes the mount points made for missing
        protected paths. ``writable_files`` are extra existing files the command may write (the Bash tool's
        working-directory record). Raises :class:`SandboxError` when the sandbox cannot be set up.
        """
        proxy: DomainProxy | None = None
        cleanup: Callable[[], None] | None = None
        try:
            proxy = await DomainProxy.open(
                allowed=self.allowed_domains(),
                denied=self.denied_domains(),
                resolver=self._resolver,
                ask=self.ask_domain,
            )
            # The walk for the rules' paths touches the file system: off the event loop.
            spec = await asyncio.to_thread(
                self.spec, extra_writable=tuple(writable_files), proxy_socket=proxy.socket_path
            )
            base = dict(os.environ if env is None else env)
            wrapped = self._backend.wrap(argv, cwd=os.fspath(cwd), env=base, spec=spec)
            cleanup = wrapped.cleanup
            yield SandboxedCommand(argv=wrapped.argv, env=wrapped.env, blocked=proxy.blocked)
        finally:
            if cleanup is not None:
                cleanup()
            if proxy is not None:
                await proxy.close()

    def explain_failure(self, output: str, blocked: Sequence[str]) -> str | None:
        """A note for the result of a sandboxed command whose failure may be the sandbox's doing: the hosts
        its proxy refused, or an error message typical of a read-only or masked path or a missing network.
        Says whether ``dangerouslyDisableSandbox`` may be used. ``None`` when nothing points at the sandbox."""
        parts: list[str] = []
        if blocked:
            parts.append(
                f"blocked by the sandbox's network allow-list: {', '.join(blocked)}; "
                "allow it with sandbox.network.allowedDomains"
            )
        match = _FAILURE.search(output)
        if match is not None or blocked:
            parts.append(
                "This command ran in hookloop's OS sandbox (writes only inside the workspace, files covered by "
                "Read deny rules read as empty, network only through the allow-list proxy)"
                + (f"; the failure may come from it ({match.group(0)})." if match else ".")
            )
            if self._settings.allow_unsandboxed_commands:
                parts.append(
                    'If it must run outside the sandbox, retry with "dangerouslyDisableSandbox": true '
                    "(that always needs approval)."
                )
        return " ".join(parts) if parts else None
