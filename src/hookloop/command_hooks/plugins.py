"""Hooks of installed Claude Code plugins, found the way Claude Code keeps them.

Layout (Claude Code's, under ``~/.claude/plugins/``)::

    installed_plugins.json   {"version": 2, "plugins": {"<name>@<marketplace>": [
                                 {"scope": "user", "installPath": "/…/cache/<marketplace>/<name>/<version>",
                                  "version": "1.2.0", …},
                                 {"scope": "project", "projectPath": "/abs/project", "installPath": …}]}}
                             (version 1: one object per plugin instead of a list)
    known_marketplaces.json  {"<marketplace>": {"installLocation": "/…/marketplaces/<marketplace>", …}}
                             (where marketplaces are checked out; not read: only installed copies run)
    data/<id>/               a plugin's persistent folder (``CLAUDE_PLUGIN_DATA``; ``id`` is the plugin id
                             with every character outside ``A-Za-z0-9_-`` replaced by ``-``)

A plugin runs when **enabled** — ``enabledPlugins: {"<name>@<marketplace>": true}`` in a settings file, the
highest layer that names it winning — and **installed** for this project: an ``installed_plugins.json`` entry of
scope ``user`` or ``managed``, or of scope ``project`` / ``local`` whose ``projectPath`` is this project, whose
``installPath`` exists. A plugin enabled but not installed there does not run (an info diagnostic says so; a
marketplace's checkout is never run from: Claude Code runs only installed copies). Its hooks are
``<root>/hooks/hooks.json`` plus any files the manifest ``.claude-plugin/plugin.json`` names in ``hooks`` (a path
or a list of paths inside the root; an inline object is read too), each with Claude Code's settings shape.
Hooks run with ``CLAUDE_PLUGIN_ROOT`` set to the root (``${CLAUDE_PLUGIN_ROOT}`` in a command is the shell's, or
is substituted in exec form) and ``CLAUDE_PLUGIN_DATA`` (created when the plugin has hooks).

Trust: the user installed the plugin, so a plugin the user's settings enable runs like a user hook. A plugin
only a project-level file (``.claude/settings.json``, ``.claude/settings.local.json``, ``.hookloop/…``)
enables is project-level: it runs only once the project's configuration is trusted (the project files'
``enabledPlugins`` are part of the trust digest). Likewise a project file turning a user's plugin off counts
only once the project is trusted: an untrusted repository cannot switch off the user's safety nets.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .model import ConfiguredHook, Diagnostic, HookSource

__all__ = ["Enabled", "enabled_plugins", "load_plugin_hooks", "plugin_data_dir", "plugins_dir"]

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def plugins_dir(home: Path) -> Path:
    """``<home>/.claude/plugins``."""
    return home / ".claude" / "plugins"


def plugin_data_dir(home: Path, plugin_id: str) -> Path:
    """``CLAUDE_PLUGIN_DATA`` for ``plugin_id``: ``<plugins dir>/data/<id with unsafe characters as ->``."""
    return plugins_dir(home) / "data" / _ID_UNSAFE.sub("-", plugin_id)


@dataclass(frozen=True, slots=True)
class Enabled:
    """How the settings switch one plugin: on with all files (``source`` decided), on with the user's alone."""

    source: HookSource
    by_all: bool
    by_user: bool


def enabled_plugins(layers: Sequence[tuple[HookSource, Sequence[tuple[str, bool]]]]) -> dict[str, Enabled]:
    """Plugin id → how ``enabledPlugins`` switches it (lowest precedence first; the highest layer naming a
    plugin decides). ``by_all``: with every file; ``by_user``: with the user-level files alone (what counts
    while the project is untrusted). Only plugins on in either view are returned."""
    full: dict[str, tuple[bool, HookSource]] = {}
    user: dict[str, tuple[bool, HookSource]] = {}
    for source, pairs in layers:
        for plugin, flag in pairs:
            full[plugin] = (flag, source)
            if not source.project_level:
                user[plugin] = (flag, source)
    found: dict[str, Enabled] = {}
    for plugin in {*full, *user}:
        on_all = full.get(plugin, (False, None))[0]
        on_user = user.get(plugin, (False, None))[0]
        if on_all or on_user:
            source = user[plugin][1] if on_user else full[plugin][1]
            found[plugin] = Enabled(source=source, by_all=on_all, by_user=on_user)
    return found


def load_plugin_hooks(
    enabled: Mapping[str, Enabled], *, home: Path, project_dir: Path
) -> tuple[tuple[ConfiguredHook, ...], tuple[Diagnostic, ...]]:
    """The hooks of every enabled, installed plugin (plugins in id order, each file in file order), and what
    went wrong finding or parsing them. Never raises for bad content."""
    from .config import parse_settings  # config imports this module

    if not enabled:
        return (), ()
    diagnostics: list[Diagnostic] = []
    installed = _read_installed(plugins_dir(home), project_dir, diagnostics)
    hooks: list[ConfiguredHook] = []
    for plugin_id in sorted(enabled):
        switch = enabled[plugin_id]
        source = switch.source
        root = installed.get(plugin_id)
        if root is None:
            diagnostics.append(
                Diagnostic(
                    severity="info",
                    file=source.path,
                    path=f"enabledPlugins[{json.dumps(plugin_id)}]",
                    message="enabled, but not installed for this project; its hooks do not run",
                )
            )
            continue
        data_dir = plugin_data_dir(home, plugin_id)
        for file, document in _hook_documents(root, diagnostics):
            plugin_source = HookSource(
                kind="claude-plugin",
                path=str(file),
                plugin=plugin_id,
                plugin_root=str(root),
                plugin_data=str(data_dir),
                enabled_by_project=not switch.by_user,
                disabled_by_project=not switch.by_all,
            )
            layer = parse_settings({"hooks": document} if document is not None else {}, plugin_source)
            hooks.extend(layer.hooks)
            diagnostics.extend(layer.diagnostics)
        if any(h.source.plugin == plugin_id for h in hooks):
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                diagnostics.append(
                    Diagnostic(severity="warning", file=str(data_dir), path="", message=f"cannot create: {exc}")
                )
    return tuple(hooks), tuple(diagnostics)


def _read_json(path: Path, diagnostics: list[Diagnostic]) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        diagnostics.append(Diagnostic(severity="warning", file=str(path), path="", message=f"cannot read: {exc}"))
        return None


def _read_installed(folder: Path, project_dir: Path, diagnostics: list[Diagnostic]) -> dict[str, Path]:
    data = _read_json(folder / "installed_plugins.json", diagnostics)
    plugins = data.get("plugins") if isinstance(data, dict) else None
    found: dict[str, Path] = {}
    if not isinstance(plugins, dict):
        return found
    for plugin_id, entries in plugins.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            root = _entry_root(entry, project_dir)
            if root is not None:
                found[str(plugin_id)] = root  # a later applicable entry (a project install) wins
    return found


def _entry_root(entry: object, project_dir: Path) -> Path | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("installPath"), str):
        return None
    scope = entry.get("scope", "user")
    if scope in ("project", "local"):
        where = entry.get("projectPath")
        if not isinstance(where, str) or _resolve(Path(where)) != project_dir:
            return None
    elif scope not in ("user", "managed"):
        return None
    root = Path(os.path.expanduser(entry["installPath"]))
    return _resolve(root) if root.is_dir() else None


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _hook_documents(root: Path, diagnostics: list[Diagnostic]) -> Iterator[tuple[Path, object]]:
    """(file, its ``hooks`` value) for ``hooks/hooks.json`` and the manifest's ``hooks`` entries."""
    seen: set[Path] = set()
    default = root / "hooks" / "hooks.json"
    manifest_path = root / ".claude-plugin" / "plugin.json"
    manifest = _read_json(manifest_path, diagnostics)
    declared = manifest.get("hooks") if isinstance(manifest, dict) else None
    files: list[Path] = [default]
    if isinstance(declared, dict):
        yield manifest_path, declared
    for entry in [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []:
        if isinstance(entry, str):
            candidate = _resolve(root / entry.replace("${CLAUDE_PLUGIN_ROOT}", str(root)))
            if candidate.is_relative_to(root):
                files.append(candidate)
            else:
                diagnostics.append(
                    Diagnostic(
                        severity="warning",
                        file=str(manifest_path),
                        path="hooks",
                        message=f"{entry!r} is outside the plugin folder; ignored",
                    )
                )
    for file in files:
        resolved = _resolve(file)
        if resolved in seen:
            continue
        seen.add(resolved)
        data = _read_json(file, diagnostics)
        if data is None:
            continue
        if not isinstance(data, dict):
            diagnostics.append(Diagnostic(severity="error", file=str(file), path="", message="expected a JSON object"))
            continue
        yield file, data.get("hooks")
