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
    then Cline scripts (see :mod:`hookloop.command_hooks.discovery`)

Hook arrays **merge** across layers (nothing replaces anything). The same handler — same event, type,
command (or URL), args and matcher — defined more than once runs once: the definition from the
highest-precedence layer (the last one) is kept, at its own position, and an info diagnostic names the copies.
Scalar settings follow "the highest layer that sets it wins" (``disableAllHooks``), except the HTTP allowlists
(``allowedHttpHookUrls``, ``httpHookAllowedEnvVars``), which intersect across the layers that set them so a
project file can narrow but never widen what the user allowed.

Errors never stop loading: a malformed entry or an unknown event name becomes a :class:`Diagnostic` naming
the file and the JSON path (``hooks.PreToolUse[0].hooks[1].timeout: expected a positive number``), that entry
is skipped, and everything else loads. Project-level sources need trust; see :mod:`hookloop.command_hooks.trust`.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, TypeAlias

from .discovery import cline_hook_dirs, discover_cline_scripts, launcher_for
from .matchers import is_match_all, matcher_error, matcher_matches
from .model import (
    CLAUDE_EVENTS,
    MATCHER_EVENTS,
    SUPPORTED_EVENTS,
    TOOL_EVENTS,
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    Diagnostic,
    Handler,
    HookSource,
    HttpHandler,
    Severity,
)

__all__ = [
    "HookConfig",
    "SettingsLayer",
    "launcher_for",
    "load_hook_config",
    "merge_layers",
    "parse_settings",
    "read_settings_file",
    "resolve_hookloop_home",
    "settings_sources",
]

_MILLISECONDS_SUSPECT = 1000.0
_UNSUPPORTED_TYPES = frozenset({"mcp_tool", "prompt", "agent"})
_COMMAND_FIELDS = frozenset(
    {"type", "command", "args", "timeout", "if", "failClosed", "async", "asyncRewake", "shell", "statusMessage"}
    | {"rewakeMessage", "rewakeSummary"}  # asyncRewake's message prefix; the summary is display-only
)
_HTTP_FIELDS = frozenset({"type", "url", "headers", "allowedEnvVars", "timeout", "if", "failClosed", "statusMessage"})
_GROUP_FIELDS = frozenset({"matcher", "hooks"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_Common: TypeAlias = tuple[float | None, str | None, bool, str | None]
"""timeout, ``if`` condition, failClosed, statusMessage"""


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

    def without_project_hooks(self, reason: Diagnostic) -> HookConfig:
        """The same configuration minus project-level hooks, with ``reason`` added to the diagnostics."""
        kept = tuple(hook for hook in self.hooks if not hook.source.project_level)
        return replace(self, hooks=kept, diagnostics=(*self.diagnostics, reason))


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
    return merge_layers(layers, scripts=scripts, script_diagnostics=script_diagnostics)


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
    parser = _Parser(source)
    hooks = tuple(parser.settings(data))
    obj = data if isinstance(data, dict) else {}
    return SettingsLayer(
        source=source,
        hooks=hooks,
        diagnostics=tuple(parser.diagnostics),
        disable_all_hooks=parser.optional_bool(obj, "disableAllHooks"),
        allowed_http_hook_urls=parser.optional_strings(obj, "allowedHttpHookUrls"),
        http_hook_allowed_env_vars=parser.optional_strings(obj, "httpHookAllowedEnvVars"),
    )


def merge_layers(
    layers: list[SettingsLayer],
    *,
    scripts: tuple[ConfiguredHook, ...] = (),
    script_diagnostics: tuple[Diagnostic, ...] = (),
) -> HookConfig:
    """Merge parsed layers (lowest precedence first) and discovered scripts into one :class:`HookConfig`.

    Pure. Deduplicates identical handlers (the highest-precedence definition wins), resolves
    ``disableAllHooks`` (highest layer that sets it) and intersects the HTTP allowlists.
    """
    diagnostics: list[Diagnostic] = [d for layer in layers for d in layer.diagnostics]
    diagnostics.extend(script_diagnostics)
    all_hooks = [hook for layer in layers for hook in layer.hooks]
    winners: dict[tuple[object, ...], int] = {}
    for index, hook in enumerate(all_hooks):
        winners[_dedup_key(hook)] = index
    kept: list[ConfiguredHook] = []
    for index, hook in enumerate(all_hooks):
        winner = winners[_dedup_key(hook)]
        if winner == index:
            kept.append(hook)
            continue
        used = all_hooks[winner]
        diagnostics.append(
            Diagnostic(
                severity="info",
                file=hook.source.path,
                path=hook.json_path,
                message=f"same handler as {used.source.path}: {used.json_path}; it runs once, as defined there",
            )
        )
    kept.extend(scripts)

    disabled = False
    for layer in layers:
        if layer.disable_all_hooks is not None:
            disabled = layer.disable_all_hooks
    if disabled:
        diagnostics.append(
            Diagnostic(severity="info", file="", path="disableAllHooks", message="all command hooks are disabled")
        )
        kept = []
    return HookConfig(
        hooks=tuple(kept),
        diagnostics=tuple(diagnostics),
        disabled=disabled,
        http_url_allowlist=_intersect(layer.allowed_http_hook_urls for layer in layers),
        http_env_allowlist=_intersect(layer.http_hook_allowed_env_vars for layer in layers),
    )


def _intersect(lists: Iterator[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    result: tuple[str, ...] | None = None
    for values in lists:
        if values is None:
            continue
        result = values if result is None else tuple(v for v in result if v in values)
    return result


def _dedup_key(hook: ConfiguredHook) -> tuple[object, ...]:
    matcher = None if is_match_all(hook.matcher) else hook.matcher
    handler: Handler = hook.handler
    if isinstance(handler, CommandHandler):
        return (hook.event, "command", handler.command, handler.args, matcher)
    if isinstance(handler, HttpHandler):
        return (hook.event, "http", handler.url, handler.headers, matcher)
    assert isinstance(handler, ClineScript)
    return (hook.event, "cline", os.path.realpath(handler.path))


def _file_diag(source: HookSource, message: str) -> Diagnostic:
    return Diagnostic(severity="error", file=source.path, path="", message=message)


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _Parser:
    """Walks one settings document, collecting hooks and diagnostics with JSON paths."""

    def __init__(self, source: HookSource) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = []

    def report(self, severity: Severity, path: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(severity=severity, file=self.source.path, path=path, message=message))

    def expected(self, path: str, what: str, value: object) -> None:
        self.report("error", path, f"expected {what}, got {_describe(value)}")

    def optional_bool(self, obj: Mapping[str, object], key: str) -> bool | None:
        value = obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.report("warning", key, f"expected a boolean, got {_describe(value)}; ignored")
        return None

    def optional_strings(self, obj: Mapping[str, object], key: str) -> tuple[str, ...] | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(str(v) for v in value)
        # A malformed allowlist must not widen access: treat it as allowing nothing.
        self.report("error", key, f"expected an array of strings, got {_describe(value)}; treated as empty")
        return ()

    def settings(self, data: object) -> Iterator[ConfiguredHook]:
        if not isinstance(data, dict):
            self.expected("", "a JSON object", data)
            return
        hooks = data.get("hooks")
        if hooks is None:
            return
        if not isinstance(hooks, dict):
            self.expected("hooks", "an object mapping event names to matcher groups", hooks)
            return
        for event, groups in hooks.items():
            yield from self.event(str(event), groups, _child("hooks", str(event)))

    def event(self, event: str, groups: object, path: str) -> Iterator[ConfiguredHook]:
        if event not in CLAUDE_EVENTS:
            close = difflib.get_close_matches(event, sorted(CLAUDE_EVENTS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.report("error", path, f"unknown event name {event!r}{hint}")
            return
        if event not in SUPPORTED_EVENTS:
            self.report("info", path, f"hookloop does not fire {event}; these hooks never run")
        if not isinstance(groups, list):
            self.expected(path, "an array of matcher groups", groups)
            return
        for index, group in enumerate(groups):
            yield from self.group(event, group, _child(path, index))

    def group(self, event: str, group: object, path: str) -> Iterator[ConfiguredHook]:
        if not isinstance(group, dict):
            self.expected(path, 'a matcher group object {"matcher": ..., "hooks": [...]}', group)
            return
        for key in group:
            if key not in _GROUP_FIELDS:
                self.report("warning", _child(path, str(key)), "unknown field; ignored")
        matcher = group.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            self.expected(_child(path, "matcher"), "a string", matcher)
            return
        if matcher is not None:
            problem = matcher_error(matcher, event)
            if problem is not None:
                self.report("error", _child(path, "matcher"), f"invalid regular expression: {problem}")
                return
            if not is_match_all(matcher) and event not in MATCHER_EVENTS:
                self.report("info", _child(path, "matcher"), f"{event} has no matcher; it is ignored")
        handlers = group.get("hooks")
        hooks_path = _child(path, "hooks")
        if not isinstance(handlers, list):
            self.expected(hooks_path, "an array of handlers", handlers)
            return
        for index, entry in enumerate(handlers):
            entry_path = _child(hooks_path, index)
            handler = self.handler(entry, entry_path)
            if handler is not None:
                yield ConfiguredHook(
                    event=event, matcher=matcher, handler=handler, source=self.source, json_path=entry_path
                )

    def handler(self, entry: object, path: str) -> Handler | None:
        if not isinstance(entry, dict):
            self.expected(path, "a handler object", entry)
            return None
        kind = entry.get("type")
        if kind == "command":
            return self.command(entry, path)
        if kind == "http":
            return self.http(entry, path)
        if kind in _UNSUPPORTED_TYPES:
            self.report("warning", _child(path, "type"), f"handler type {kind!r} is not supported by hookloop; skipped")
            return None
        if kind is None:
            self.report("error", _child(path, "type"), 'missing; expected "command" or "http"')
        else:
            self.report("error", _child(path, "type"), f'expected "command" or "http", got {json.dumps(kind)}')
        return None

    def unknown_fields(self, entry: Mapping[str, object], known: frozenset[str], path: str) -> None:
        for key in entry:
            if key not in known:
                self.report("warning", _child(path, key), "unknown field; ignored")

    def command(self, entry: Mapping[str, object], path: str) -> CommandHandler | None:
        self.unknown_fields(entry, _COMMAND_FIELDS, path)
        ok = True
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            self.expected(_child(path, "command"), "a non-empty string", command)
            ok = False
        args: tuple[str, ...] | None = None
        if "args" in entry:
            raw_args = entry["args"]
            if not isinstance(raw_args, list):
                self.expected(_child(path, "args"), "an array of strings", raw_args)
                ok = False
            else:
                for index, arg in enumerate(raw_args):
                    if not isinstance(arg, str):
                        self.expected(_child(_child(path, "args"), index), "a string", arg)
                        ok = False
                args = tuple(a for a in raw_args if isinstance(a, str))
        shell = entry.get("shell")
        shell_kind: Literal["bash", "powershell"] | None = None
        if shell == "bash":
            shell_kind = "bash"
        elif shell == "powershell":
            shell_kind = "powershell"
        elif shell is not None:
            self.report("error", _child(path, "shell"), f'expected "bash" or "powershell", got {json.dumps(shell)}')
            ok = False
        common = self.common(entry, path)
        run_async = self.flag(entry, "async", path)
        rewake = self.flag(entry, "asyncRewake", path)
        if common is None or run_async is None or rewake is None or not ok:
            return None
        timeout, condition, fail_closed, status = common
        prefix = entry.get("rewakeMessage")
        if prefix is not None and not (isinstance(prefix, str) and prefix):
            self.report(
                "warning",
                _child(path, "rewakeMessage"),
                f"expected a non-empty string, got {_describe(prefix)}; ignored",
            )
            prefix = None
        assert isinstance(command, str)
        return CommandHandler(
            command=command,
            args=args,
            timeout=timeout,
            condition=condition,
            fail_closed=fail_closed,
            run_async=run_async,
            async_rewake=rewake,
            rewake_message=prefix if isinstance(prefix, str) else None,
            shell=shell_kind,
            status_message=status,
        )

    def http(self, entry: Mapping[str, object], path: str) -> HttpHandler | None:
        self.unknown_fields(entry, _HTTP_FIELDS, path)
        ok = True
        url = entry.get("url")
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            self.expected(_child(path, "url"), "an http:// or https:// URL", url)
            ok = False
        headers: list[tuple[str, str]] = []
        raw_headers = entry.get("headers", {})
        if not isinstance(raw_headers, dict):
            self.expected(_child(path, "headers"), "an object of header names to strings", raw_headers)
            ok = False
        else:
            for name, value in raw_headers.items():
                if not isinstance(value, str):
                    self.expected(_child(_child(path, "headers"), str(name)), "a string", value)
                    ok = False
                else:
                    headers.append((str(name), value))
        env_vars: tuple[str, ...] = ()
        raw_env = entry.get("allowedEnvVars", [])
        if not isinstance(raw_env, list) or not all(isinstance(v, str) for v in raw_env):
            self.expected(_child(path, "allowedEnvVars"), "an array of variable names", raw_env)
            ok = False
        else:
            env_vars = tuple(str(v) for v in raw_env)
            for index, name in enumerate(env_vars):
                if not _IDENT.fullmatch(name):
                    self.report(
                        "warning",
                        _child(_child(path, "allowedEnvVars"), index),
                        f"{name!r} is not a bare variable name; it can never match a header reference",
                    )
        common = self.common(entry, path)
        if common is None or not ok:
            return None
        timeout, condition, fail_closed, status = common
        assert isinstance(url, str)
        return HttpHandler(
            url=url,
            headers=tuple(headers),
            allowed_env_vars=env_vars,
            timeout=timeout,
            condition=condition,
            fail_closed=fail_closed,
            status_message=status,
        )

    def flag(self, entry: Mapping[str, object], key: str, path: str) -> bool | None:
        value = entry.get(key, False)
        if isinstance(value, bool):
            return value
        self.expected(_child(path, key), "a boolean", value)
        return None

    def common(self, entry: Mapping[str, object], path: str) -> _Common | None:
        ok = True
        timeout: float | None = None
        if "timeout" in entry:
            raw = entry["timeout"]
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not (raw > 0 and math.isfinite(raw)):
                self.report("error", _child(path, "timeout"), "expected a positive number (seconds)")
                ok = False
            else:
                timeout = float(raw)
                if timeout >= _MILLISECONDS_SUSPECT:
                    self.report(
                        "warning",
                        _child(path, "timeout"),
                        f"{raw:g} seconds looks like milliseconds; hookloop timeouts are in seconds",
                    )
        condition = entry.get("if")
        if condition is not None and not isinstance(condition, str):
            self.expected(_child(path, "if"), "a permission rule string such as Bash(git *)", condition)
            ok = False
        fail_closed = self.flag(entry, "failClosed", path)
        status = entry.get("statusMessage")
        if status is not None and not isinstance(status, str):
            got = _describe(status)
            self.report("warning", _child(path, "statusMessage"), f"expected a string, got {got}; ignored")
            status = None
        if not ok or fail_closed is None:
            return None
        return timeout, condition if isinstance(condition, str) else None, fail_closed, status
