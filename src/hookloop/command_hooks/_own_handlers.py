"""Parsing hookloop's own handler types, ``process`` and ``python``, which only hookloop's settings files
(``~/.hookloop/settings.json``, ``<project>/.hookloop/settings*.json``, ``--settings`` files) may hold. Called by
:mod:`hookloop.command_hooks._parse`'s parser."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .model import Handler, ProcessHandler, PythonHandler

if TYPE_CHECKING:
    from ._parse import Parser

__all__ = ["PYTHON_EVENTS", "own_handler"]

_PROCESS_FIELDS = frozenset({"type", "command", "args", "timeout", "if", "failClosed", "statusMessage"})
_PYTHON_FIELDS = frozenset({"type", "callable", "failClosed"})
_CALLABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_]\w*)*")

PYTHON_EVENTS: dict[str, str] = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "on_prompt_submit",
    "PreToolUse": "pre_tool_call",
    "PostToolUse": "post_tool_call",
    "PostToolBatch": "post_tool_batch",
    "Stop": "on_turn_end",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "Notification": "notification",
}
"""The Claude Code event a ``python`` handler is listed under → the typed hookloop event it is registered on."""


def own_handler(parser: Parser, kind: str, event: str, entry: Mapping[str, object], path: str) -> Handler | None:
    """A ``process`` or ``python`` handler; ``None`` (with a diagnostic) when it is not valid here."""
    from ._parse import child

    if not parser.source.kind.startswith("hookloop-"):
        parser.report(
            "error",
            child(path, "type"),
            f'"{kind}" handlers are hookloop\'s own: put them in .hookloop/settings.json (Claude Code rejects '
            "a settings file that has them); skipped",
        )
        return None
    if kind == "python":
        parser.unknown_fields(entry, _PYTHON_FIELDS, path)
        target = entry.get("callable")
        if not isinstance(target, str) or not _CALLABLE.fullmatch(target):
            parser.expected(child(path, "callable"), 'a "package.module:function" reference', target)
            return None
        if event not in PYTHON_EVENTS:
            events = ", ".join(PYTHON_EVENTS)
            parser.report("error", child(path, "type"), f"python handlers run on {events}; not on {event}; skipped")
            return None
        fail_closed = parser.flag(entry, "failClosed", path)
        if fail_closed is None:
            return None
        return PythonHandler(callable=target, fail_closed=fail_closed)
    parser.unknown_fields(entry, _PROCESS_FIELDS, path)
    command = entry.get("command")
    ok = True
    if not isinstance(command, str) or not command.strip():
        parser.expected(child(path, "command"), "a non-empty string", command)
        ok = False
    args: tuple[str, ...] | None = None
    if "args" in entry:
        raw = entry["args"]
        if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
            parser.expected(child(path, "args"), "an array of strings", raw)
            ok = False
        else:
            args = tuple(str(a) for a in raw)
    common = parser.common(entry, path)
    if common is None or not ok:
        return None
    timeout, condition, fail_closed, status = common
    assert isinstance(command, str)
    return ProcessHandler(
        command=command,
        args=args,
        timeout=timeout,
        condition=condition,
        fail_closed=fail_closed,
        status_message=status,
    )
