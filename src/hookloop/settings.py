"""Settings files: which are read, in what order, and the permission policy they define.

The same files hold hooks and permissions, in Claude Code's shape (lowest precedence first):
``~/.claude/settings.json``, ``~/.hookloop/settings.json`` (or ``$HOOKLOOP_HOME``), the project's
``.claude/settings.json`` and ``.hookloop/settings.json``, then each one's ``settings.local.json``, then any extra
files you name. Hooks are loaded by :class:`hookloop.command_hooks.CommandHooks`; permissions by
:func:`load_permission_policy`; the OS sandbox (the ``sandbox`` key) by :func:`load_sandbox`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hookloop.command_hooks.config import resolve_hookloop_home, settings_sources
from hookloop.errors import HookloopError
from hookloop.permissions import PermissionConfigError, PermissionMode, PermissionPolicy

if TYPE_CHECKING:
    from hookloop.sandbox import Sandbox

__all__ = ["SettingsError", "load_permission_policy", "load_sandbox", "read_settings_layers", "settings_files"]


class SettingsError(HookloopError, ValueError):
    """A settings file that cannot be used; the message names the file (and line and column for bad JSON)."""


def settings_files(
    project_dir: str | os.PathLike[str], *, include_claude: bool = True, home: Path | None = None
) -> list[Path]:
    """Every settings file hookloop reads for ``project_dir``, lowest precedence first (existing or not)."""
    user_home = home if home is not None else Path.home()
    sources = settings_sources(
        Path(project_dir), home=user_home, hookloop_home=resolve_hookloop_home(home=home), include_claude=include_claude
    )
    return [Path(s.path) for s in sources]


def read_settings_layers(
    project_dir: str | os.PathLike[str],
    *,
    extra: Sequence[str | os.PathLike[str]] = (),
    include_claude: bool = True,
    home: Path | None = None,
) -> list[tuple[str, Mapping[str, object]]]:
    """(path, parsed JSON) for each settings file that exists, lowest precedence first, then ``extra`` files
    (which must exist). Raises :class:`SettingsError` naming the file, line and column."""
    explicit = [Path(p) for p in extra]
    layers: list[tuple[str, Mapping[str, object]]] = []
    for path in [*settings_files(project_dir, include_claude=include_claude, home=home), *explicit]:
        if not path.is_file():
            if path in explicit:
                raise SettingsError(f"{path}: no such settings file")
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: cannot read settings: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(data, dict):
            raise SettingsError(f"{path}: settings must be a JSON object")
        layers.append((str(path), data))
    return layers


def load_permission_policy(
    project_dir: str | os.PathLike[str],
    *,
    extra: Sequence[str | os.PathLike[str]] = (),
    include_claude: bool = True,
    mode: PermissionMode | None = None,
    home: Path | None = None,
) -> PermissionPolicy:
    """The permission policy of a project's settings files (allow/ask/deny arrays merge across layers), with
    the project directory as its workspace. ``mode`` overrides ``defaultMode``."""
    layers = read_settings_layers(project_dir, extra=extra, include_claude=include_claude, home=home)
    try:
        return PermissionPolicy.from_settings(layers, workspace=Path(project_dir), mode=mode)
    except PermissionConfigError as exc:
        raise SettingsError(str(exc)) from exc


def load_sandbox(
    project_dir: str | os.PathLike[str],
    *,
    policy: PermissionPolicy | None = None,
    extra: Sequence[str | os.PathLike[str]] = (),
    include_claude: bool = True,
    enabled: bool | None = None,
    home: Path | None = None,
) -> Sandbox:
    """The :class:`hookloop.sandbox.Sandbox` of a project's settings files (the ``sandbox`` key; see
    :mod:`hookloop.sandbox`), applying ``policy``'s Read/Edit deny rules. ``enabled`` overrides
    ``sandbox.enabled``. Raises :class:`SettingsError` naming the file and JSON path of a bad setting."""
    from hookloop.sandbox import Sandbox, SandboxConfigError

    layers = read_settings_layers(project_dir, extra=extra, include_claude=include_claude, home=home)
    try:
        return Sandbox.from_settings(layers, workspace=project_dir, policy=policy, enabled=enabled, home=home)
    except SandboxConfigError as exc:
        raise SettingsError(str(exc)) from exc
