"""Command-hook settings: Claude Code's JSON shape, layered files, Cline script discovery, one merged config.

Shape (Claude Code's)::

    {"hooks": {"PreToolUse": [{"matcher": "Bash",
                               "hooks": [{"type": "command", "command": "...", "timeout": 30},
                                         {"type": "http", "url": "...", "headers": {...},
                                          "allowedEnvVars": ["TOKEN"]}]}]}}

Layers, lowest precedence first (configuration order follows it; within a file, file order)::

    claude-user      ~/.claude/settings.json                      (skipped with include_claude=False)
    hookloop-user    $HOOKLOOP_HOME/settings.json                 (default ~/.hookloop)
    claude-project   <project>/.claude/settings.json              (skipped with include_claude=False)
    hookloop-project <project>/.hookloop/settings.json
    claude-local     <project>/.claude/settings.local.json        (skipped with include_claude=False)
    hookloop-local   <project>/.hookloop/settings.local.json
    then hooks of enabled Claude Code plugins (see :mod:`hookloop.command_hooks.plugins`)
    then Cline scripts (see :mod:`hookloop.command_hooks.discovery`)

Hook arrays **merge** across layers (nothing replaces anything). Identical handlers are merged per firing, as
Claude Code does (:func:`dedupe`): among the handlers that match one firing (matcher and ``if`` already
applied), a command handler with the same command string and ``args`` — an HTTP handler with the same URL —
defined in more than one settings file runs once, as the highest-precedence file defines it. Handlers that
differ only in ``if`` therefore both stay (each runs when its own rule matches), copies within one file all
run, and plugin hooks are never merged. Scalar settings follow "the highest layer that sets it wins"
(``disableAllHooks``), except the HTTP allowlists (``allowedHttpHookUrls``, ``httpHookAllowedEnvVars``), which
intersect across the layers that set them so a project file can narrow but never widen what the user allowed.

``env`` blocks (``{"env": {"NAME": "value"}}``) merge per name, higher layers winning; they apply to every hook
and to the Bash tool (a project file's block only when the project is trusted). ``commandHookAllowedEnvVars``
(an array of names or ``PREFIX*`` patterns, hookloop's setting) passes secrets to hooks that would otherwise be
withheld (:mod:`hookloop.command_hooks.environment`); it is read from user-level files only (a project file
setting it gets a warning). ``enabledPlugins`` is read for plugins.

Errors never stop loading: a malformed entry or an unknown event name becomes a :class:`Diagnostic` naming
the file and the JSON path (``hooks.PreToolUse[0].hooks[1].timeout: expected a positive number``), that entry
is skipped, and everything else loads. Project-level sources need trust; see :mod:`hookloop.command_hooks.trust`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from hookloop._frozen import dumps

from ._parse import Parser
from .discovery import cline_hook_dirs, discover_cline_scripts, launcher_for
from .matchers import is_match_all, matcher_matches
from .model import (
    TOOL_EVENTS,
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    Diagnostic,
    Handler,
    HookSource,
    McpToolHandler,
    ProcessHandler,
    PromptHandler,
    PythonHandler,
)
from .plugins import enabled_plugins, load_plugin_hooks

__all__ = [
    "HookConfig",
    "SettingsLayer",
    "dedup_key",
    "dedupe",
    "launcher_for",
    "load_hook_config",
    "merge_layers",
    "parse_settings",
    "plugin_hooks",
    "read_settings_file",
    "resolve_hookloop_home",
    "settings_sources",
]


def resolve_hookloop_home(*, home: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """hookloop's per-user directory: ``$HOOKLOOP_HOME`` if set, else ``<home>/.hookloop``."""
    env = os.environ if environ is None else environ
    override = env.get("HOOKLOOP_HOME")
    if override:
        return Path(override)
    return (home if home is not None else Path.home()) / ".hookloop"


def settings_sources(
    project_dir: Path, *, home: Path, hookloop_home: Path, include_claude: bool = True
) -> tuple[HookSource, ...]:
    """The settings files to read, lowest precedence first."""
    claude_dir = project_dir / ".claude"
    own_dir = project_dir / ".hookloop"
    sources = [
        HookSource(kind="claude-user", path=str(home / ".claude" / "settings.json")),
        HookSource(kind="hookloop-user", path=str(hookloop_home / "settings.json")),
        HookSource(kind="claude-project", path=str(claude_dir / "settings.json")),
        HookSource(kind="hookloop-project", path=str(own_dir / "settings.json")),
        HookSource(kind="claude-local", path=str(claude_dir / "settings.local.json")),
        HookSource(kind="hookloop-local", path=str(own_dir / "settings.local.json")),
    ]
    if not include_claude:
        sources = [s for s in sources if not s.kind.startswith("claude-")]
    return tuple(sources)


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsLayer:
    """One parsed settings file."""

    source: HookSource
    hooks: tuple[ConfiguredHook, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    disable_all_hooks: bool | None = None
    allowed_http_hook_urls: tuple[str, ...] | None = None
    http_hook_allowed_env_vars: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()
    """The ``env`` block: variables set for hooks and the Bash tool."""
    hook_env_allowlist: tuple[str, ...] | None = None
    """``commandHookAllowedEnvVars`` (honoured from user-level files only)."""
    enabled_plugins: tuple[tuple[str, bool], ...] = ()
    """``enabledPlugins``: plugin id (``name@marketplace``) → enabled."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookConfig:
    """Every configured hook, in configuration order, plus what went wrong loading them.

    Loading never gates on trust; :func:`hookloop.command_hooks.trust.apply_trust` removes project-level hooks
    of an untrusted project.
    """

    hooks: tuple[ConfiguredHook, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    disabled: bool = False
    """``disableAllHooks`` is in effect: ``hooks`` is empty."""
    http_url_allowlist: tuple[str, ...] | None = None
    """URL patterns (``*`` wildcards) HTTP hooks may target; ``None`` = no restriction, ``()`` = none."""
    http_env_allowlist: tuple[str, ...] | None = None
    """Env var names HTTP hook headers may interpolate (intersected with each hook's own list)."""
    env_layers: tuple[tuple[HookSource, tuple[tuple[str, str], ...]], ...] = ()
    """Each settings file's ``env`` block, lowest precedence first (see :attr:`env`)."""
    env_allowlist: tuple[str, ...] = ()
    """``commandHookAllowedEnvVars`` of the user-level files (union): secrets hooks may still inherit."""
    untrusted_hooks: tuple[ConfiguredHook, ...] | None = None
    """The hooks that run while the project is untrusted (project files ignored entirely: the user's hooks and
    plugins as the user's files alone configure them); ``None``: :attr:`hooks` minus project-level ones."""
    untrusted_disabled: bool = False
    """``disableAllHooks`` as the user-level files alone set it."""
    project_shaped: bool = False
    """A project-level file or script contributes anything (hooks, ``env``, ``disableAllHooks``,
    ``enabledPlugins``): the configuration then depends on trust."""

    @property
    def env(self) -> dict[str, str]:
        """The merged settings ``env`` block (a higher layer wins per name): applied to every hook and to the
        Bash tool. Project-level blocks are left out with the project hooks of an untrusted project."""
        merged: dict[str, str] = {}
        for _, pairs in self.env_layers:
            merged.update(pairs)
        return merged

    def for_event(self, event: str, target: str | None = None) -> tuple[ConfiguredHook, ...]:
        """The hooks to run for one firing of ``event`` whose matcher target (tool name, source …) is
        ``target``, in configuration order. Cline scripts are selected by their own event name (they have no
        matcher). A handler with an ``if`` condition on a non-tool event never runs (Claude Code's rule); on tool
        events the caller evaluates the condition."""
        selected: list[ConfiguredHook] = []
        for hook in self.hooks:
            if hook.event != event:
                continue
            if hook.condition is not None and event not in TOOL_EVENTS:
                continue
            if hook.protocol == "claude" and not matcher_matches(hook.matcher, target, event=event):
                continue
            selected.append(hook)
        return tuple(selected)

    @property
    def project_hooks(self) -> tuple[ConfiguredHook, ...]:
        """Hooks from project-level sources (they run only when the project configuration is trusted)."""
        return tuple(hook for hook in self.hooks if hook.source.project_level)

    @property
    def project_env(self) -> tuple[tuple[HookSource, tuple[tuple[str, str], ...]], ...]:
        """``env`` blocks from project-level files (applied only when the project is trusted)."""
        return tuple(layer for layer in self.env_layers if layer[0].project_level)

    def without_project_hooks(self, reason: Diagnostic) -> HookConfig:
        """The configuration as if the project's files did not exist (no project hooks, ``env`` blocks,
        ``disableAllHooks`` or ``enabledPlugins``), with ``reason`` added to the diagnostics."""
        if self.untrusted_hooks is not None:
            kept = self.untrusted_hooks
        else:
            kept = tuple(hook for hook in self.hooks if not hook.source.project_level)
        env = tuple(layer for layer in self.env_layers if not layer[0].project_level)
        return replace(
            self,
            hooks=kept,
            env_layers=env,
            disabled=self.untrusted_disabled,
            untrusted_hooks=None,
            project_shaped=False,
            diagnostics=(*self.diagnostics, reason),
        )


def dedupe(hooks: tuple[ConfiguredHook, ...]) -> tuple[ConfiguredHook, ...]:
    """Claude Code's dedup of one firing's matching handlers (``hooks`` in configuration order, after the
    matcher and ``if`` filters): a command handler with the same command string, ``args`` and ``shell`` — an HTTP
    handler with the same URL — defined in **more than one settings file** runs once, as the highest-precedence
    file (the last) defines it. Copies inside one file all run (each is its own entry there), and plugin hooks
    are never merged with anything (Claude Code keeps plugin copies separate). Pure; returns ``hooks`` itself
    when nothing is dropped."""
    if len(hooks) < 2:
        return hooks
    # One file read as two layers (a project whose .hookloop/ is the hookloop home, a project that is the home
    # directory): the same entry comes twice; it is one handler, kept where the higher layer has it.
    entries = {(hook.source.path, hook.json_path): i for i, hook in enumerate(hooks)}
    if len(entries) != len(hooks):
        kept = set(entries.values())
        hooks = tuple(hook for i, hook in enumerate(hooks) if i in kept)
    owner: dict[tuple[object, ...], str] = {}
    for hook in hooks:
        key = dedup_key(hook)
        if key is not None:
            owner[key] = hook.source.path
    if len(owner) == sum(1 for hook in hooks if dedup_key(hook) is not None):
        return hooks
    return tuple(hook for hook in hooks if (key := dedup_key(hook)) is None or owner[key] == hook.source.path)


def dedup_key(hook: ConfiguredHook) -> tuple[object, ...] | None:
    """What makes two settings handlers "the same handler" for :func:`dedupe`; ``None`` for handlers that are
    never merged (plugin hooks, Cline scripts — those are deduplicated by resolved path when found)."""
    handler: Handler = hook.handler
    if hook.source.kind == "claude-plugin" or isinstance(handler, ClineScript):
        return None
    if isinstance(handler, CommandHandler):
        return (hook.event, "command", handler.command, handler.args, handler.shell)
    if isinstance(handler, PromptHandler):
        return (hook.event, handler.kind, handler.prompt, handler.model)
    if isinstance(handler, McpToolHandler):
        return (
            hook.event,
            "mcp_tool",
            handler.server,
            handler.tool,
            None if handler.input is None else dumps(handler.input),
        )
    if isinstance(handler, ProcessHandler):
        return (hook.event, "process", handler.command, handler.args)
    if isinstance(handler, PythonHandler):
        return (hook.event, "python", handler.callable)
    return (hook.event, "http", handler.url)


def load_hook_config(
    project_dir: str | os.PathLike[str],
    *,
    home: Path | None = None,
    hookloop_home: Path | None = None,
    include_claude: bool = True,
    include_cline: bool = True,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> HookConfig:
    """Read every settings layer and hook directory for ``project_dir`` and merge them.

    ``home`` defaults to the user's home, ``hookloop_home`` to :func:`resolve_hookloop_home`, ``platform`` to
    ``sys.platform``. ``include_claude=False`` skips Claude Code's own settings files. Never raises for bad
    content; unreadable or malformed files become diagnostics.
    """
    project = Path(project_dir).resolve()
    home_dir = home if home is not None else Path.home()
    own_home = hookloop_home if hookloop_home is not None else resolve_hookloop_home(home=home, environ=environ)
    layers = [
        layer
        for source in settings_sources(project, home=home_dir, hookloop_home=own_home, include_claude=include_claude)
        if (layer := read_settings_file(source)) is not None
    ]
    scripts: tuple[ConfiguredHook, ...] = ()
    script_diagnostics: tuple[Diagnostic, ...] = ()
    if include_cline:
        dirs = cline_hook_dirs(project, home=home_dir, hookloop_home=own_home)
        scripts, script_diagnostics = discover_cline_scripts(dirs, platform=platform or sys.platform)
    plugins: tuple[ConfiguredHook, ...] = ()
    plugin_diagnostics: tuple[Diagnostic, ...] = ()
    if include_claude:
        plugins, plugin_diagnostics = plugin_hooks(layers, home=home_dir, project_dir=project)
    return merge_layers(
        layers,
        scripts=scripts,
        script_diagnostics=(*plugin_diagnostics, *script_diagnostics),
        plugin_hooks=plugins,
    )


def plugin_hooks(
    layers: list[SettingsLayer], *, home: Path, project_dir: Path
) -> tuple[tuple[ConfiguredHook, ...], tuple[Diagnostic, ...]]:
    """The hooks of the Claude Code plugins the layers' ``enabledPlugins`` turn on (see
    :mod:`hookloop.command_hooks.plugins`)."""
    enabled = enabled_plugins([(layer.source, layer.enabled_plugins) for layer in layers])
    return load_plugin_hooks(enabled, home=home, project_dir=project_dir)


def read_settings_file(source: HookSource) -> SettingsLayer | None:
    """Parse one settings file; ``None`` when it does not exist."""
    try:
        raw = Path(source.path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return SettingsLayer(source=source, diagnostics=(_file_diag(source, f"cannot read: {exc.strerror or exc}"),))
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return SettingsLayer(source=source, diagnostics=(_file_diag(source, "not UTF-8 text"),))
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        return SettingsLayer(source=source, diagnostics=(_file_diag(source, message),))
    return parse_settings(data, source)


def parse_settings(data: object, source: HookSource) -> SettingsLayer:
    """Validate one settings document (already JSON-decoded). Pure; never raises."""
    parser = Parser(source)
    hooks = tuple(parser.settings(data))
    obj = data if isinstance(data, dict) else {}
    return SettingsLayer(
        source=source,
        hooks=hooks,
        diagnostics=tuple(parser.diagnostics),
        disable_all_hooks=parser.optional_bool(obj, "disableAllHooks"),
        allowed_http_hook_urls=parser.optional_strings(obj, "allowedHttpHookUrls"),
        http_hook_allowed_env_vars=parser.optional_strings(obj, "httpHookAllowedEnvVars"),
        env=parser.env_block(obj),
        hook_env_allowlist=parser.optional_strings(obj, "commandHookAllowedEnvVars"),
        enabled_plugins=parser.enabled_plugins(obj),
    )


def merge_layers(
    layers: list[SettingsLayer],
    *,
    scripts: tuple[ConfiguredHook, ...] = (),
    script_diagnostics: tuple[Diagnostic, ...] = (),
    plugin_hooks: tuple[ConfiguredHook, ...] = (),
) -> HookConfig:
    """Merge parsed layers (lowest precedence first), installed plugins' hooks and discovered scripts into one
    :class:`HookConfig`.

    Pure. Keeps every handler (identical handlers from several files are merged per firing by
    :func:`dedupe`; an info diagnostic names the copies), resolves ``disableAllHooks`` (highest layer that sets
    it), intersects the HTTP allowlists, collects the ``env`` blocks and the user-level
    ``commandHookAllowedEnvVars``.
    """
    diagnostics: list[Diagnostic] = [d for layer in layers for d in layer.diagnostics]
    diagnostics.extend(script_diagnostics)
    settings_hooks = [hook for layer in layers for hook in layer.hooks]
    diagnostics.extend(_duplicate_notes(settings_hooks))
    kept = [
        *settings_hooks,
        *(hook for hook in plugin_hooks if not hook.source.disabled_by_project),
        *scripts,
    ]
    # What runs while the project is untrusted: its files have no effect at all, so they can neither add
    # hooks nor switch off the user's (disableAllHooks, enabledPlugins: false).
    untrusted = [
        *(hook for hook in settings_hooks if not hook.source.project_level),
        *(hook for hook in plugin_hooks if not hook.source.enabled_by_project),
        *(hook for hook in scripts if not hook.source.project_level),
    ]
    disabled = untrusted_disabled = False
    for layer in layers:
        if layer.disable_all_hooks is not None:
            disabled = layer.disable_all_hooks
            if not layer.source.project_level:
                untrusted_disabled = layer.disable_all_hooks
    if disabled:
        diagnostics.append(
            Diagnostic(severity="info", file="", path="disableAllHooks", message="all command hooks are disabled")
        )
        kept = []
    if untrusted_disabled:
        untrusted = []
    project_shaped = any(
        layer.source.project_level
        and (layer.hooks or layer.env or layer.disable_all_hooks is not None or layer.enabled_plugins)
        for layer in layers
    ) or any(hook.source.project_level for hook in scripts)
    allow: list[str] = []
    for layer in layers:
        if layer.hook_env_allowlist is None:
            continue
        if layer.source.project_level:
            diagnostics.append(
                Diagnostic(
                    severity="warning",
                    file=layer.source.path,
                    path="commandHookAllowedEnvVars",
                    message="ignored: only user settings files may pass secrets to hooks",
                )
            )
            continue
        allow.extend(v for v in layer.hook_env_allowlist if v not in allow)
    return HookConfig(
        hooks=tuple(kept),
        diagnostics=tuple(diagnostics),
        disabled=disabled,
        http_url_allowlist=_intersect(layer.allowed_http_hook_urls for layer in layers),
        http_env_allowlist=_intersect(layer.http_hook_allowed_env_vars for layer in layers),
        env_layers=tuple((layer.source, layer.env) for layer in layers if layer.env),
        env_allowlist=tuple(allow),
        untrusted_hooks=tuple(untrusted),
        untrusted_disabled=untrusted_disabled,
        project_shaped=project_shaped,
    )


def _duplicate_notes(hooks: list[ConfiguredHook]) -> Iterator[Diagnostic]:
    """Info diagnostics for handlers defined in several files with the same matcher and ``if``: they run once
    (see :func:`dedupe`), as the last file defines them."""
    last: dict[tuple[object, ...], ConfiguredHook] = {}
    for hook in hooks:
        key = dedup_key(hook)
        if key is not None:
            last[(*key, None if is_match_all(hook.matcher) else hook.matcher, hook.condition)] = hook
    for hook in hooks:
        key = dedup_key(hook)
        if key is None:
            continue
        used = last[(*key, None if is_match_all(hook.matcher) else hook.matcher, hook.condition)]
        if used.source.path != hook.source.path:
            yield Diagnostic(
                severity="info",
                file=hook.source.path,
                path=hook.json_path,
                message=f"same handler as {used.source.path}: {used.json_path}; it runs once, as defined there",
            )


def _intersect(lists: Iterator[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    result: tuple[str, ...] | None = None
    for values in lists:
        if values is None:
            continue
        result = values if result is None else tuple(v for v in result if v in values)
    return result


def _file_diag(source: HookSource, message: str) -> Diagnostic:
    return Diagnostic(severity="error", file=source.path, path="", message=message)
