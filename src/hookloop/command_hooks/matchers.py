"""Claude Code's matcher semantics, as pure functions.

A matcher group's ``matcher`` decides which firings of its event run the group's handlers:

* ``None`` (absent), ``""`` or ``"*"`` match everything;
* a string made only of letters, digits, ``_``, ``-``, space, ``,`` and ``|`` is an exact name or a list of
  exact names separated by ``|`` or ``,`` (``"Edit|Write"``, ``"Edit, Write"``); case-sensitive;
* anything else is a regular expression searched **unanchored** (JavaScript ``RegExp.test``): ``"Edit.*"``
  also matches ``NotebookEdit``; use ``^…$`` to anchor. ``"mcp__memory"`` is an exact name that matches no
  MCP tool; ``"mcp__memory__.*"`` is the regex that does.
* ``FileChanged`` and ``StopFailure`` use a narrower exact set (no ``-``, space or ``,``): with those
  characters the matcher is a regex.
* On events without matcher support (``UserPromptSubmit``, ``Stop``, ``PostToolBatch`` …) the matcher is
  ignored and the group always runs.

Regexes are written for JavaScript; Python's ``re`` agrees on everything tool and source names need. The one
spelling difference we translate is the named group ``(?<name>…)`` → ``(?P<name>…)``.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping

from .model import MATCHER_EVENTS

__all__ = ["is_match_all", "match_target", "matcher_error", "matcher_matches"]

_EXACT = re.compile(r"[A-Za-z0-9_\- ,|]*")
_EXACT_NARROW = re.compile(r"[A-Za-z0-9_|]*")
_NARROW_EVENTS = frozenset({"FileChanged", "StopFailure"})
_JS_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")

# What each event's matcher is compared with: a field of the hook input.
_TARGET_FIELD: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PermissionRequest": "tool_name",
    "PermissionDenied": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Setup": "trigger",
    "Notification": "notification_type",
    "StopFailure": "error",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "ConfigChange": "source",
    "InstructionsLoaded": "load_reason",
    "UserPromptExpansion": "command_name",
    "DirectoryAdded": "source",
    "FileChanged": "file_path",
    "Elicitation": "mcp_server_name",
    "ElicitationResult": "mcp_server_name",
}


def is_match_all(matcher: str | None) -> bool:
    """``None``, ``""`` and ``"*"`` match every firing."""
    return matcher is None or matcher in ("", "*")


def _is_exact(matcher: str, event: str | None) -> bool:
    pattern = _EXACT_NARROW if event in _NARROW_EVENTS else _EXACT
    return pattern.fullmatch(matcher) is not None


@functools.lru_cache(maxsize=512)
def _compile(matcher: str) -> re.Pattern[str] | str:
    """The compiled regex, or the compiler's error message."""
    try:
        return re.compile(_JS_NAMED_GROUP.sub("(?P<", matcher))
    except re.error as exc:
        return str(exc)


def matcher_error(matcher: str | None, event: str | None = None) -> str | None:
    """Why ``matcher`` can never work (an invalid regular expression), or ``None`` when it is fine."""
    if is_match_all(matcher) or matcher is None or _is_exact(matcher, event):
        return None
    compiled = _compile(matcher)
    return compiled if isinstance(compiled, str) else None


def matcher_matches(matcher: str | None, value: str | None, *, event: str | None = None) -> bool:
    """Whether a group with ``matcher`` runs for a firing whose target (tool name, source …) is ``value``.

    ``event`` enables the per-event rules (ignored matchers, the narrow exact set); without it the general
    rules apply. A ``None`` value matches only match-all matchers; an invalid regex matches nothing.
    """
    if event is not None and event not in MATCHER_EVENTS:
        return True
    if is_match_all(matcher):
        return True
    assert matcher is not None
    if value is None:
        return False
    if _is_exact(matcher, event):
        names = {part.strip() for part in re.split(r"[|,]", matcher)} - {""}
        return value in names
    compiled = _compile(matcher)
    if isinstance(compiled, str):
        return False
    return compiled.search(value) is not None


def match_target(event: str, payload: Mapping[str, object]) -> str | None:
    """The value a matcher of ``event`` is compared with, read from the Claude Code hook input (FileChanged: the
    file's name, as live runs match it)."""
    field = _TARGET_FIELD.get(event)
    if field is None:
        return None
    value = payload.get(field)
    if not isinstance(value, str):
        return None
    return os.path.basename(value) if event == "FileChanged" else value
