"""Validating one settings document: hooks with JSON paths in every diagnostic, and the scalar settings
(``env``, ``enabledPlugins``, allowlists). Private to :mod:`hookloop.command_hooks.config`."""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Literal, TypeAlias

from .matchers import is_match_all, matcher_error
from .model import (
    CLAUDE_EVENTS,
    MATCHER_EVENTS,
    OWN_HANDLER_TYPES,
    SUPPORTED_EVENTS,
    CommandHandler,
    ConfiguredHook,
    Diagnostic,
    Handler,
    HookSource,
    HttpHandler,
    Severity,
)

__all__ = ["Parser", "child"]

_MILLISECONDS_SUSPECT = 1000.0
_MODEL_HANDLER_TYPES = frozenset({"mcp_tool", "prompt", "agent"})
_TYPE_NAMES = '"command", "http", "prompt", "agent", "mcp_tool" (or hookloop\'s own "process", "python")'
_COMMAND_FIELDS = frozenset(
    {"type", "command", "args", "timeout", "if", "failClosed", "async", "asyncRewake", "shell", "statusMessage"}
    | {"rewakeMessage", "rewakeSummary"}  # asyncRewake's message prefix; the summary is display-only
    | {"keepBackground"}  # hookloop's own: false kills what the hook leaves running when it exits
)
_HTTP_FIELDS = frozenset({"type", "url", "headers", "allowedEnvVars", "timeout", "if", "failClosed", "statusMessage"})
_GROUP_FIELDS = frozenset({"matcher", "hooks"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_Common: TypeAlias = tuple[float | None, str | None, bool, str | None]
"""timeout, ``if`` condition, failClosed, statusMessage"""


def child(path: str, key: str | int) -> str:
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


class Parser:
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

    def env_block(self, obj: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
        value = obj.get("env")
        if value is None:
            return ()
        if not isinstance(value, dict):
            self.expected("env", "an object of variable names to strings", value)
            return ()
        pairs: list[tuple[str, str]] = []
        for name, raw in value.items():
            path = child("env", str(name))
            if not _ENV_NAME.fullmatch(str(name)):
                self.report("warning", path, "not a valid environment variable name; ignored")
            elif isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
                self.report("warning", path, f"expected a string, got {_describe(raw)}; ignored")
            elif isinstance(raw, str) and "\0" in raw:
                self.report("warning", path, "contains a NUL character; ignored")
            else:
                pairs.append((str(name), raw if isinstance(raw, str) else json.dumps(raw)))
        return tuple(pairs)

    def enabled_plugins(self, obj: Mapping[str, object]) -> tuple[tuple[str, bool], ...]:
        value = obj.get("enabledPlugins")
        if value is None:
            return ()
        if not isinstance(value, dict):
            self.expected("enabledPlugins", 'an object of plugin ids ("name@marketplace") to booleans', value)
            return ()
        found: list[tuple[str, bool]] = []
        for plugin, flag in value.items():
            if isinstance(flag, bool):
                found.append((str(plugin), flag))
            elif isinstance(flag, list):  # an older shape: a list of enabled things counts as enabled
                found.append((str(plugin), True))
            else:
                self.expected(child("enabledPlugins", str(plugin)), "a boolean", flag)
        return tuple(found)

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
            yield from self.event(str(event), groups, child("hooks", str(event)))

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
            yield from self.group(event, group, child(path, index))

    def group(self, event: str, group: object, path: str) -> Iterator[ConfiguredHook]:
        if not isinstance(group, dict):
            self.expected(path, 'a matcher group object {"matcher": ..., "hooks": [...]}', group)
            return
        for key in group:
            if key not in _GROUP_FIELDS:
                self.report("warning", child(path, str(key)), "unknown field; ignored")
        matcher = group.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            self.expected(child(path, "matcher"), "a string", matcher)
            return
        if matcher is not None:
            problem = matcher_error(matcher, event)
            if problem is not None:
                self.report("error", child(path, "matcher"), f"invalid regular expression: {problem}")
                return
            if not is_match_all(matcher) and event not in MATCHER_EVENTS:
                self.report("info", child(path, "matcher"), f"{event} has no matcher; it is ignored")
        handlers = group.get("hooks")
        hooks_path = child(path, "hooks")
        if not isinstance(handlers, list):
            self.expected(hooks_path, "an array of handlers", handlers)
            return
        for index, entry in enumerate(handlers):
            entry_path = child(hooks_path, index)
            handler = self.handler(entry, entry_path, event)
            if handler is not None:
                yield ConfiguredHook(
                    event=event, matcher=matcher, handler=handler, source=self.source, json_path=entry_path
                )

    def handler(self, entry: object, path: str, event: str = "") -> Handler | None:
        if not isinstance(entry, dict):
            self.expected(path, "a handler object", entry)
            return None
        kind = entry.get("type")
        if kind in OWN_HANDLER_TYPES:
            from ._own_handlers import own_handler

            return own_handler(self, str(kind), event, entry, path)
        if kind == "command":
            return self.command(entry, path)
        if kind == "http":
            return self.http(entry, path)
        if kind in _MODEL_HANDLER_TYPES:
            from ._handler_config import model_handler  # it imports this module's helpers

            return model_handler(self, str(kind), entry, path)
        if kind is None:
            self.report("error", child(path, "type"), f"missing; expected {_TYPE_NAMES}")
        else:
            self.report("error", child(path, "type"), f"expected {_TYPE_NAMES}, got {json.dumps(kind)}")
        return None

    def unknown_fields(self, entry: Mapping[str, object], known: frozenset[str], path: str) -> None:
        for key in entry:
            if key not in known:
                self.report("warning", child(path, key), "unknown field; ignored")

    def command(self, entry: Mapping[str, object], path: str) -> CommandHandler | None:
        self.unknown_fields(entry, _COMMAND_FIELDS, path)
        ok = True
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            self.expected(child(path, "command"), "a non-empty string", command)
            ok = False
        args: tuple[str, ...] | None = None
        if "args" in entry:
            raw_args = entry["args"]
            if not isinstance(raw_args, list):
                self.expected(child(path, "args"), "an array of strings", raw_args)
                ok = False
            else:
                for index, arg in enumerate(raw_args):
                    if not isinstance(arg, str):
                        self.expected(child(child(path, "args"), index), "a string", arg)
                        ok = False
                args = tuple(a for a in raw_args if isinstance(a, str))
        shell = entry.get("shell")
        shell_kind: Literal["bash", "powershell"] | None = None
        if shell == "bash":
            shell_kind = "bash"
        elif shell == "powershell":
            shell_kind = "powershell"
        elif shell is not None:
            self.report("error", child(path, "shell"), f'expected "bash" or "powershell", got {json.dumps(shell)}')
            ok = False
        common = self.common(entry, path)
        run_async = self.flag(entry, "async", path)
        rewake = self.flag(entry, "asyncRewake", path)
        keep_background = self.flag(entry, "keepBackground", path, default=True)
        if common is None or run_async is None or rewake is None or keep_background is None or not ok:
            return None
        timeout, condition, fail_closed, status = common
        prefix = entry.get("rewakeMessage")
        if prefix is not None and not (isinstance(prefix, str) and prefix):
            got = _describe(prefix)
            self.report("warning", child(path, "rewakeMessage"), f"expected a non-empty string, got {got}; ignored")
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
            keep_background=keep_background,
        )

    def http(self, entry: Mapping[str, object], path: str) -> HttpHandler | None:
        self.unknown_fields(entry, _HTTP_FIELDS, path)
        ok = True
        url = entry.get("url")
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            self.expected(child(path, "url"), "an http:// or https:// URL", url)
            ok = False
        headers: list[tuple[str, str]] = []
        raw_headers = entry.get("headers", {})
        if not isinstance(raw_headers, dict):
            self.expected(child(path, "headers"), "an object of header names to strings", raw_headers)
            ok = False
        else:
            for name, value in raw_headers.items():
                if not isinstance(value, str):
                    self.expected(child(child(path, "headers"), str(name)), "a string", value)
                    ok = False
                else:
                    headers.append((str(name), value))
        env_vars: tuple[str, ...] = ()
        raw_env = entry.get("allowedEnvVars", [])
        if not isinstance(raw_env, list) or not all(isinstance(v, str) for v in raw_env):
            self.expected(child(path, "allowedEnvVars"), "an array of variable names", raw_env)
            ok = False
        else:
            env_vars = tuple(str(v) for v in raw_env)
            for index, name in enumerate(env_vars):
                if not _IDENT.fullmatch(name):
                    self.report(
                        "warning",
                        child(child(path, "allowedEnvVars"), index),
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

    def flag(self, entry: Mapping[str, object], key: str, path: str, *, default: bool = False) -> bool | None:
        value = entry.get(key, default)
        if isinstance(value, bool):
            return value
        self.expected(child(path, key), "a boolean", value)
        return None

    def common(self, entry: Mapping[str, object], path: str) -> _Common | None:
        ok = True
        timeout: float | None = None
        if "timeout" in entry:
            raw = entry["timeout"]
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not (raw > 0 and math.isfinite(raw)):
                self.report("error", child(path, "timeout"), "expected a positive number (seconds)")
                ok = False
            else:
                timeout = float(raw)
                if timeout >= _MILLISECONDS_SUSPECT:
                    self.report(
                        "warning",
                        child(path, "timeout"),
                        f"{raw:g} seconds looks like milliseconds; hookloop timeouts are in seconds",
                    )
        condition = entry.get("if")
        if condition is not None and not isinstance(condition, str):
            self.expected(child(path, "if"), "a permission rule string such as Bash(git *)", condition)
            ok = False
        fail_closed = self.flag(entry, "failClosed", path)
        status = entry.get("statusMessage")
        if status is not None and not isinstance(status, str):
            got = _describe(status)
            self.report("warning", child(path, "statusMessage"), f"expected a string, got {got}; ignored")
            status = None
        if not ok or fail_closed is None:
            return None
        return timeout, condition if isinstance(condition, str) else None, fail_closed, status
