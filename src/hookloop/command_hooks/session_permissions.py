"""A PermissionRequest hook's ``updatedPermissions``, applied to the Worker's permission policy for the rest of
the session (Claude Code's permission updates, reference §1.3).

==================================================  ==========================================================
update                                              effect here
==================================================  ==========================================================
``{"type": "addRules", "rules": [{"toolName",       each rule (``Tool(content)``, or ``Tool`` alone) added with
"ruleContent"}], "behavior": …, "destination": …}`` its behavior for the session
                                                    (:meth:`~hookloop.permissions.PermissionPolicy.add_hook_rule`)
``{"type": "setMode", "mode": …}``                  the policy's mode for the session
``replaceRules``, ``removeRules``,                  not applied (a warning): hookloop never removes a rule a
``addDirectories``, ``removeDirectories``           user configured, nor widens the workspace, on a hook's word
==================================================  ==========================================================

What can never happen, whatever a hook asks:

* a rule added here overrides a deny (or ask) rule — rules merge most-restrictive-first, as always;
* an allow rule unlocks a protected path (``.git/``, ``.claude/``, shell start-up files …): refused;
* ``setMode`` to ``bypassPermissions``: refused (it would allow every call no rule restricts, for the whole
  session, on one hook's answer); every other mode is taken;
* a settings file is written: every ``destination`` (``session``, ``localSettings``, ``projectSettings``,
  ``userSettings``, ``cliArg``) applies to this Worker's session only.

A Worker without a permission policy has no rules to add to: updates are not applied (a warning says so). Each
applied or refused update is logged; :func:`apply_updates` returns the notes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from hookloop._frozen import FrozenJSON, thaw
from hookloop.permissions import PermissionConfigError

if TYPE_CHECKING:
    from hookloop.permissions import PermissionPolicy
    from hookloop.permissions._types import Behavior, PermissionMode

__all__ = ["REFUSED_MODES", "apply_updates"]

_log = logging.getLogger("hookloop.command_hooks.bridge")

REFUSED_MODES: frozenset[str] = frozenset({"bypassPermissions"})
"""Modes a hook's ``setMode`` can never switch the session to."""
_BEHAVIORS = ("allow", "ask", "deny")
_UNSUPPORTED = frozenset({"replaceRules", "removeRules", "addDirectories", "removeDirectories"})


def _rule_text(entry: object) -> str:
    if not isinstance(entry, dict):
        raise PermissionConfigError("a rule must be an object with toolName and ruleContent", source="hook")
    tool = entry.get("toolName")
    content = entry.get("ruleContent")
    if not isinstance(tool, str) or not tool:
        raise PermissionConfigError("rule.toolName: expected a non-empty string", source="hook")
    if content is None or content == "":
        return tool
    if not isinstance(content, str):
        raise PermissionConfigError("rule.ruleContent: expected a string", source="hook")
    return f"{tool}({content})"


def _apply_one(policy: PermissionPolicy, update: dict[str, object], source: str) -> list[str]:
    kind = update.get("type")
    if kind == "addRules":
        behavior = update.get("behavior")
        rules = update.get("rules")
        if behavior not in _BEHAVIORS or not isinstance(rules, list):
            return [f"addRules ignored: needs behavior allow/ask/deny and a rules array (got {behavior!r})"]
        notes = []
        for entry in rules:
            try:
                text = _rule_text(entry)
                policy.add_hook_rule(cast("Behavior", behavior), text, source=source)
            except PermissionConfigError as exc:
                notes.append(f"rule not added: {exc}")
            else:
                notes.append(f"added {behavior} rule {text} for this session")
        return notes
    if kind == "setMode":
        mode = update.get("mode")
        if not isinstance(mode, str):
            return ["setMode ignored: mode must be a string"]
        if mode in REFUSED_MODES and policy.mode != mode:
            return [f"setMode {mode} refused: a hook cannot switch the session to {mode}"]
        try:
            policy.mode = cast("PermissionMode", mode)
        except PermissionConfigError as exc:
            return [f"setMode ignored: {exc}"]
        return [f"permission mode set to {mode} for this session"]
    if kind in _UNSUPPORTED:
        return [f"{kind} is not applied (hookloop never removes configured rules or widens the workspace for a hook)"]
    return [f"unknown permission update type {kind!r} ignored"]


def apply_updates(policy: PermissionPolicy | None, updates: Sequence[FrozenJSON], *, hook: str) -> list[str]:
    """Apply ``updates`` (a PermissionRequest hook's ``updatedPermissions``) to ``policy`` for the session; the
    notes say what was applied or refused (each also logged). ``hook`` names the hook in the rules' source."""
    if not updates:
        return []
    if policy is None:
        note = "updatedPermissions not applied: the Worker has no permission policy to add them to"
        _log.warning("command hooks: %s (%s)", note, hook)
        return [note]
    notes: list[str] = []
    source = f"PermissionRequest hook {hook}"
    for raw in updates:
        update = thaw(raw)
        if not isinstance(update, dict):
            notes.append("a permission update must be an object; ignored")
            continue
        notes.extend(_apply_one(policy, cast("dict[str, object]", update), source))
    for note in notes:
        level = logging.INFO if note.startswith(("added ", "permission mode set")) else logging.WARNING
        _log.log(level, "command hooks: %s: %s", source, note)
    return notes
