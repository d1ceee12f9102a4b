"""The Claude Code events hookloop fires from what it observes between steps, not from a hookloop event:
``PermissionDenied`` (the permission policy denied a call), ``CwdChanged`` (a tool's working directory moved:
the built-in Bash after ``cd``), ``FileChanged`` (a watched file changed, appeared or vanished) and
``ConfigChange`` (a settings file changed during a run). Private: the public surface is
:mod:`hookloop.command_hooks.bridge`.

Moments. The watches are compared with the files on disk after every tool call (a change a tool made is seen
right after that call) and when a prompt is submitted; the baseline is taken when a run starts. A change made
and undone between two moments is not seen. Detection is ``stat`` (mtime, size, inode, kind), not content.

* **PermissionDenied** — stdin ``tool_name``, ``tool_input``, ``tool_use_id``, ``reason``. It cannot undo the
  denial; ``hookSpecificOutput.retry: true`` adds a note to the denial the model reads that it may retry.
  Denials by the user, an approver or a hook's own ``deny`` do not fire it (Claude Code: the classifier's and
  the rules' denials).
* **CwdChanged** — stdin ``old_cwd``, ``new_cwd``; side effects only. ``watchPaths`` replaces the dynamic
  FileChanged watch list.
* **FileChanged** — stdin ``file_path`` (absolute), ``event`` (``change`` / ``add`` / ``unlink``); the matcher
  is a list of literal file names (``.envrc|.env``), matched against the file's name, and it also builds the
  watch list (names relative to the project directory); ``watchPaths`` from SessionStart, CwdChanged or
  FileChanged output replaces the dynamic part of the list (absolute, or relative to the project directory).
* **ConfigChange** — stdin ``source`` (``user_settings`` / ``project_settings`` / ``local_settings``) and
  ``file_path``; the matcher filters on ``source``. hookloop reads settings when a run's hooks are loaded, so a
  change never applies to the run in progress (it applies from the next load); ``decision: "block"`` (or exit 2)
  is reported and keeps it that way: Claude Code's "the change is not applied".
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from hookloop._frozen import JSONValue, thaw_object
from hookloop.checkpoint import PendingCall

from . import payloads as wire_in
from ._firing import Fired, Firing
from .extract import read_claude_json
from .model import HookSource

__all__ = ["MAX_WATCHED", "WatchedEvents", "config_source_name"]

_log = logging.getLogger("hookloop.command_hooks.bridge")
_Stamp = tuple[int, int, int, int] | None
"""(mtime_ns, size, inode, file type bits) or None when the path does not exist."""
_SOURCES: dict[str, str] = {
    "claude-user": "user_settings",
    "hookloop-user": "user_settings",
    "claude-project": "project_settings",
    "hookloop-project": "project_settings",
    "claude-local": "local_settings",
    "hookloop-local": "local_settings",
}
MAX_WATCHED = 1000
"""Paths FileChanged watches at most (each is ``stat``-ed after every tool call); more are ignored, loudly."""
_RETRY_NOTE = "A PermissionDenied hook says this call may be retried (for example in another way)."


def config_source_name(source: HookSource) -> str | None:
    """ConfigChange's ``source`` for a settings file (``None`` for Cline script folders)."""
    return _SOURCES.get(source.kind)


def _stamp(path: str) -> _Stamp:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, stat.S_IFMT(st.st_mode))


def _change(before: _Stamp, after: _Stamp) -> Literal["change", "add", "unlink"] | None:
    if before == after:
        return None
    if before is None:
        return "add"
    if after is None:
        return "unlink"
    return "change"


def _common(firing: Firing, session_id: str, event: str, *, mode: bool = False) -> dict[str, object]:
    facts = firing.claude_facts(session_id)
    data: dict[str, object] = {"session_id": facts.session_id, "transcript_path": facts.transcript_path}
    data["cwd"] = facts.cwd
    if mode:
        data["permission_mode"] = facts.permission_mode
    data["hook_event_name"] = event
    return data


def _watch_paths(fired: Fired) -> list[str] | None:
    """The ``watchPaths`` of the firing's Claude hooks (concatenated), or None when none gave any."""
    found: list[str] | None = None
    for hook, outcome in zip(fired.hooks, fired.outcomes, strict=False):
        if hook.protocol != "claude" or not outcome.ok:
            continue
        obj = read_claude_json(outcome.stdout)
        specific = obj.get("hookSpecificOutput") if obj is not None else None
        paths = specific.get("watchPaths") if isinstance(specific, dict) else None
        if isinstance(paths, list):
            found = [*(found or []), *(p for p in paths if isinstance(p, str) and p)]
    return found


class WatchedEvents(Firing):
    """PermissionDenied, CwdChanged, FileChanged and ConfigChange on top of :class:`Firing`."""

    watching = False
    """Any CwdChanged / FileChanged / ConfigChange hook is configured: :meth:`observe` has work."""

    def setup_watches(self, settings_files: Sequence[HookSource]) -> None:
        self.settings_files = tuple(s for s in settings_files if config_source_name(s) is not None)
        self.settings_stamps: dict[str, _Stamp] = {}
        self.static_watch: tuple[str, ...] = tuple(self._matcher_paths())
        self.dynamic_watch: tuple[str, ...] = ()
        self.file_stamps: dict[str, _Stamp] = {}
        self.tool_cwds: dict[str, Path] = {}
        self.watching = self.has("CwdChanged") or self.has("FileChanged") or self.has("ConfigChange")

    def _matcher_paths(self) -> Iterable[str]:
        for hook in self.claude_hooks.get("FileChanged", ()):
            for name in (hook.matcher or "").split("|"):
                name = name.strip()
                if name and name != "*":
                    yield self._absolute(name)

    def _absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.project_dir, os.path.expanduser(path)))

    def baseline(self) -> None:
        """Take the starting stamps (a run starts); later changes are measured from here."""
        if not self.watching:
            return
        if self.has("ConfigChange"):
            self.settings_stamps = {s.path: _stamp(s.path) for s in self.settings_files}
        self.file_stamps = {p: _stamp(p) for p in self.watched_files()}
        for tool in self.worker.tools:
            cwd = getattr(tool, "cwd", None)
            if isinstance(cwd, Path):
                self.tool_cwds[tool.meta.name] = cwd

    def watched_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.static_watch, *self.dynamic_watch)))

    def set_dynamic_watch(self, paths: Sequence[str]) -> None:
        room = max(MAX_WATCHED - len(self.static_watch), 0)
        if len(paths) > room:
            _log.warning("command hooks: watchPaths lists %d paths; FileChanged watches the first %d", len(paths), room)
        self.dynamic_watch = tuple(self._absolute(p) for p in paths[:room])
        for path in self.dynamic_watch:
            self.file_stamps.setdefault(path, _stamp(path))

    def take_watch_paths(self, fired: Fired) -> None:
        """A SessionStart / CwdChanged / FileChanged firing's ``watchPaths`` replace the dynamic watch list."""
        if self.has("FileChanged"):
            paths = _watch_paths(fired)
            if paths is not None:
                self.set_dynamic_watch(paths)

    async def observe(self, session_id: str, tool_name: str | None = None) -> None:
        """Compare what is watched with the disk (and ``tool_name``'s working directory) and fire the events
        for what changed, in order: CwdChanged, FileChanged, ConfigChange."""
        if not self.watching:
            return
        if tool_name is not None and self.has("CwdChanged"):
            await self._cwd_changed(session_id, tool_name)
        if self.has("FileChanged"):
            await self._files_changed(session_id)
        if self.has("ConfigChange"):
            await self._config_changed(session_id)

    async def _cwd_changed(self, session_id: str, tool_name: str) -> None:
        tool = next((t for t in self.worker.tools if t.meta.name == tool_name), None)
        cwd = getattr(tool, "cwd", None)
        if not isinstance(cwd, Path):
            return
        old = self.tool_cwds.get(tool_name)
        self.tool_cwds[tool_name] = cwd
        if old is None or old == cwd:
            return
        hooks = self.select("CwdChanged")
        if hooks:
            payload = _common(self, session_id, "CwdChanged")
            payload.update(old_cwd=str(old), new_cwd=str(cwd))
            self.take_watch_paths(await self.fire(hooks, payload, None, session_id=session_id))

    async def _files_changed(self, session_id: str) -> None:
        for path in self.watched_files():
            before = self.file_stamps.get(path)
            after = self.file_stamps[path] = _stamp(path)
            kind = _change(before, after)
            if kind is None:
                continue
            hooks = self.select("FileChanged", target=os.path.basename(path))
            if hooks:
                payload = _common(self, session_id, "FileChanged")
                payload.update(file_path=path, event=kind)
                self.take_watch_paths(await self.fire(hooks, payload, None, session_id=session_id))

    async def _config_changed(self, session_id: str) -> None:
        for source in self.settings_files:
            before = self.settings_stamps.get(source.path)
            after = self.settings_stamps[source.path] = _stamp(source.path)
            if _change(before, after) is None:
                continue
            name = config_source_name(source)
            hooks = self.select("ConfigChange", target=name)
            if not hooks:
                continue
            payload = _common(self, session_id, "ConfigChange")
            payload.update(source=name, file_path=source.path)
            merged = (await self.fire(hooks, payload, None, session_id=session_id)).merged
            verdict = "blocked" if merged.kind in ("block", "stop") else "not blocked"
            _log.info(
                "command hooks: %s changed during the run (ConfigChange %s); hookloop applies it from the next load",
                source.path,
                verdict,
            )

    async def permission_denied(self, pending: PendingCall) -> str | None:
        """PermissionDenied for one policy denial; the retry note when a hook answered ``retry: true``."""
        tool_input: Mapping[str, JSONValue] = thaw_object(pending.arguments)
        hooks = self.select("PermissionDenied", target=pending.tool_name, tool=(pending.tool_name, tool_input))
        if not hooks:
            return None
        session_id = self.worker.session_id
        payload = _common(self, session_id, "PermissionDenied", mode=True)
        payload.update(
            tool_name=pending.tool_name,
            tool_input=wire_in.absolute_tool_paths(pending.tool_name, tool_input, self.cwd),
            tool_use_id=pending.call_id,
            reason=pending.reason,
        )
        fired = await self.fire(hooks, payload, None, session_id=session_id, call_id=pending.call_id)
        for hook, outcome in zip(fired.hooks, fired.outcomes, strict=False):
            obj = read_claude_json(outcome.stdout) if hook.protocol == "claude" and outcome.ok else None
            specific = obj.get("hookSpecificOutput") if obj is not None else None
            if isinstance(specific, dict) and specific.get("retry") is True:
                return _RETRY_NOTE
        return None
