"""The ``sandbox`` settings object (Claude Code's keys, plus hookloop's ``hooks``), read from settings layers."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal, get_args

from hookloop.errors import ConfigError

__all__ = [
    "FilesystemSettings",
    "HookSandboxing",
    "NetworkSettings",
    "SandboxConfigError",
    "SandboxSettings",
    "parse_sandbox_settings",
]

HookSandboxing = Literal["none", "project", "all"]
"""Which command hooks run sandboxed: none, hooks from project-level settings files, or every hook."""

_HOOK_MODES: Final[tuple[HookSandboxing, ...]] = get_args(HookSandboxing)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Keys Claude Code defines that hookloop reads but does not act on. Each either only loosens the sandbox (so
# ignoring it is the restrictive choice), is macOS- or managed-settings-only, or names a tool hookloop finds
# itself. They are accepted so that a settings file shared with Claude Code loads, and reported in ``notes``.
_IGNORED_TOP: Final = frozenset(
    {
        "ignoreViolations",
        "enableWeakerNestedSandbox",
        "enableWeakerNetworkIsolation",
        "enabledPlatforms",
        "allowAppleEvents",
        "allowNestedUserNamespaces",
        "credentials",
        "ripgrep",
    }
)
_TOP: Final = frozenset(
    {
        "enabled",
        "autoAllowBashIfSandboxed",
        "excludedCommands",
        "allowUnsandboxedCommands",
        "failIfUnavailable",
        "network",
        "filesystem",
        "bwrapPath",
        "socatPath",
        "hooks",
    }
)
_NETWORK: Final = frozenset(
    {
        "allowedDomains",
        "deniedDomains",
        "allowUnixSockets",
        "allowAllUnixSockets",
        "allowLocalBinding",
        "httpProxyPort",
        "socksProxyPort",
        "allowManagedDomainsOnly",
    }
)
_NETWORK_IGNORED: Final = frozenset({"httpProxyPort", "socksProxyPort", "allowManagedDomainsOnly"})
_FILESYSTEM: Final = frozenset({"allowWrite", "denyWrite", "denyRead", "allowRead", "allowManagedReadPathsOnly"})
_FILESYSTEM_IGNORED: Final = frozenset({"allowRead", "allowManagedReadPathsOnly"})


class SandboxConfigError(ConfigError):
    """A ``sandbox`` setting is malformed: the message names the settings file and the JSON path
    (``.claude/settings.json: sandbox.network.allowedDomains[2]: …``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkSettings:
    """``sandbox.network``: where sandboxed commands may connect.

    ``allowed_domains`` / ``denied_domains``: host patterns (``example.com`` exactly, ``*.example.com`` its
    subdomains); a denied match wins. ``allow_unix_sockets``: socket paths kept reachable although ``/run`` and
    ``/tmp`` are masked; ``allow_all_unix_sockets`` leaves ``/run`` visible. ``allow_local_binding`` is accepted:
    inside the sandbox's own network namespace, binding to localhost is always possible and reaches only the
    sandbox itself.
    """

    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_unix_sockets: tuple[str, ...] = ()
    allow_all_unix_sockets: bool = False
    allow_local_binding: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesystemSettings:
    """``sandbox.filesystem``: paths beyond the permission rules. Entries use the rule path prefixes (``//abs``,
    ``~/x``, ``/x`` relative to the settings file's project, ``./x`` or ``x`` relative to the workspace) and are
    stored absolute. ``allow_write``: also writable; ``deny_write``: read-only even inside the workspace;
    ``deny_read``: masked (read as empty). ``allowRead`` is accepted and ignored (it could only un-mask)."""

    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxSettings:
    """The merged ``sandbox`` object of every settings layer.

    Scalars: the highest layer that sets one wins; arrays concatenate across layers (Claude Code's rules).
    Defaults follow Claude Code: off; ``auto_allow_bash_if_sandboxed`` and ``allow_unsandboxed_commands`` on;
    ``fail_if_unavailable`` off. ``hooks`` (hookloop's own key) chooses which command hooks run sandboxed,
    default ``"project"``. ``notes`` lists keys that were accepted but are not acted on.
    """

    enabled: bool = False
    auto_allow_bash_if_sandboxed: bool = True
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed_commands: bool = True
    fail_if_unavailable: bool = False
    network: NetworkSettings = field(default_factory=NetworkSettings)
    filesystem: FilesystemSettings = field(default_factory=FilesystemSettings)
    bwrap_path: str | None = None
    socat_path: str | None = None
    hooks: HookSandboxing = "project"
    notes: tuple[str, ...] = ()

    def with_enabled(self, enabled: bool = True) -> SandboxSettings:
        """A copy with ``enabled`` set (``hookloop run --sandbox``)."""
        return replace(self, enabled=enabled)


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _IDENT.fullmatch(key) else f"{path}[{json.dumps(key)}]"


class _Reader:
    def __init__(self, source: str, base: Path, workspace: Path, home: Path) -> None:
        self.source = source
        self.base = base
        self.workspace = workspace
        self.home = home
        self.notes: list[str] = []

    def error(self, path: str, problem: str) -> SandboxConfigError:
        return SandboxConfigError(problem, source=self.source, json_path=path)

    def obj(self, value: object, path: str, known: frozenset[str]) -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            raise self.error(path, "must be a JSON object")
        for key in value:
            if key not in known:
                raise self.error(_child(path, str(key)), f"unknown key (expected one of {', '.join(sorted(known))})")
        return value

    def boolean(self, value: object, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, "must be true or false")
        return value

    def strings(self, value: object, path: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(path, "must be a list of strings")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip() or "\x00" in item:
                raise self.error(_child(path, index), f"must be a non-empty string, not {item!r}")
        return tuple(str(item) for item in value)

    def domains(self, value: object, path: str) -> tuple[str, ...]:
        items = self.strings(value, path)
        for index, item in enumerate(items):
            if not re.fullmatch(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\*|\[[0-9A-Fa-f:.]+\]", item):
                raise self.error(_child(path, index), f"{item!r} is not a host name or *.domain pattern")
        return tuple(item.lower() for item in items)

    def paths(self, value: object, path: str) -> tuple[str, ...]:
        return tuple(self.absolute(item) for item in self.strings(value, path))

    def absolute(self, spec: str) -> str:
        if spec.startswith("//"):
            joined = spec[1:]
        elif spec == "~" or spec.startswith("~/"):
            joined = os.path.join(self.home, spec[2:])
        elif spec.startswith("/"):
            joined = os.path.join(self.base, spec[1:])
        else:
            joined = os.path.join(self.workspace, spec)
        return os.path.normpath(joined)

    def ignored(self, path: str) -> None:
        self.notes.append(f"{self.source}: {path}: accepted but not used by hookloop's sandbox")


def parse_sandbox_settings(
    layers: Sequence[tuple[str | os.PathLike[str], Mapping[str, object]]],
    *,
    workspace: str | os.PathLike[str],
    home: Path | None = None,
) -> SandboxSettings:
    """Merge the ``sandbox`` key of settings documents, lowest precedence first (as
    :func:`hookloop.settings.read_settings_layers` returns them).

    Unknown keys and wrong types raise :class:`SandboxConfigError` naming the file and the JSON path. Known
    Claude Code keys hookloop does not act on are accepted and listed in :attr:`SandboxSettings.notes`.
    Filesystem paths are made absolute: ``/x`` against the settings file's project (the directory above
    ``.claude/`` or ``.hookloop/``), ``./x`` and ``x`` against ``workspace``.
    """
    ws = Path(os.path.abspath(workspace))
    user_home = home if home is not None else Path.home()
    values: dict[str, object] = {}
    lists: dict[str, list[str]] = {}
    notes: list[str] = []
    for label, document in layers:
        source = str(label)
        raw = document.get("sandbox") if isinstance(document, Mapping) else None
        if raw is None:
            continue
        settings_dir = Path(os.path.abspath(os.path.dirname(source))) if os.sep in source else ws
        base = settings_dir.parent if settings_dir.name in (".claude", ".hookloop") else settings_dir
        reader = _Reader(source, base, ws, user_home)
        top = reader.obj(raw, "sandbox", _TOP | _IGNORED_TOP)
        for key, value in top.items():
            path = _child("sandbox", key)
            if key in _IGNORED_TOP:
                reader.ignored(path)
            elif key in ("enabled", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands", "failIfUnavailable"):
                values[key] = reader.boolean(value, path)
            elif key == "excludedCommands":
                lists.setdefault(key, []).extend(reader.strings(value, path))
            elif key in ("bwrapPath", "socatPath"):
                if not isinstance(value, str) or not value.startswith("/"):
                    raise reader.error(path, "must be an absolute path to the program")
                values[key] = value
            elif key == "hooks":
                if value not in _HOOK_MODES:
                    raise reader.error(path, f"must be one of {', '.join(map(json.dumps, _HOOK_MODES))}")
                values[key] = value
            elif key == "network":
                _read_network(reader, value, path, values, lists)
            elif key == "filesystem":
                _read_filesystem(reader, value, path, lists)
        notes.extend(reader.notes)

    def flag(key: str, default: bool) -> bool:
        value = values.get(key, default)
        assert isinstance(value, bool)
        return value

    def items(key: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(lists.get(key, ())))

    def text(key: str) -> str | None:
        value = values.get(key)
        return value if isinstance(value, str) else None

    hooks = values.get("hooks", "project")
    assert hooks in _HOOK_MODES
    return SandboxSettings(
        enabled=flag("enabled", False),
        auto_allow_bash_if_sandboxed=flag("autoAllowBashIfSandboxed", True),
        excluded_commands=items("excludedCommands"),
        allow_unsandboxed_commands=flag("allowUnsandboxedCommands", True),
        fail_if_unavailable=flag("failIfUnavailable", False),
        network=NetworkSettings(
            allowed_domains=items("allowedDomains"),
            denied_domains=items("deniedDomains"),
            allow_unix_sockets=items("allowUnixSockets"),
            allow_all_unix_sockets=flag("allowAllUnixSockets", False),
            allow_local_binding=flag("allowLocalBinding", False),
        ),
        filesystem=FilesystemSettings(
            allow_write=items("allowWrite"), deny_write=items("denyWrite"), deny_read=items("denyRead")
        ),
        bwrap_path=text("bwrapPath"),
        socat_path=text("socatPath"),
        hooks=hooks,
        notes=tuple(notes),
    )


def _read_network(
    reader: _Reader, value: object, path: str, values: dict[str, object], lists: dict[str, list[str]]
) -> None:
    network = reader.obj(value, path, _NETWORK)
    for key, item in network.items():
        sub = _child(path, key)
        if key in _NETWORK_IGNORED:
            reader.ignored(sub)
        elif key in ("allowedDomains", "deniedDomains"):
            lists.setdefault(key, []).extend(reader.domains(item, sub))
        elif key == "allowUnixSockets":
            lists.setdefault(key, []).extend(reader.paths(item, sub))
        else:
            values[key] = reader.boolean(item, sub)


def _read_filesystem(reader: _Reader, value: object, path: str, lists: dict[str, list[str]]) -> None:
    filesystem = reader.obj(value, path, _FILESYSTEM)
    for key, item in filesystem.items():
        sub = _child(path, key)
        if key in _FILESYSTEM_IGNORED:
            reader.strings(item, sub) if key == "allowRead" else reader.boolean(item, sub)
            reader.ignored(sub)
        else:
            lists.setdefault(key, []).extend(reader.paths(item, sub))
