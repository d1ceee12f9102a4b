"""A transcript in Claude Code's JSONL format, the file command hooks receive as ``transcript_path``.

Real hooks read it: Stop hooks look for the last assistant message, todo checkers and loop plugins scan the
tool calls. hookloop's own transcript (:class:`~hookloop.timeline.TranscriptWriter`) has another schema, so the
command hooks of a Worker keep this one beside it: one JSON object a line, one line per history item, in
history order, appended as the run goes — before every command-hook firing the items added since the last one
are written, so a hook always sees everything up to the moment it fires (a Stop hook sees the final answer).

Every line has Claude Code's envelope: ``type`` (``user`` / ``assistant``), ``message`` (``role`` and
``content`` blocks), ``uuid``, ``parentUuid`` (the previous line's, ``null`` on the first), ``sessionId``,
``cwd``, ``timestamp`` (ISO 8601, UTC, milliseconds), ``version``, ``isSidechain: false``,
``userType: "external"``. The items:

================================  ===================================================================
history item                      line
================================  ===================================================================
user Message                      ``user``; ``content`` the text (a string, as Claude Code writes a
                                  typed prompt); hook-added context also has ``isMeta: true``
assistant Message                 ``assistant``; ``content`` ``[{type: "text", text}]``, ``message.id``,
                                  ``message.model``, ``message.type: "message"``
Reasoning                         ``assistant``; ``[{type: "thinking", thinking, signature}]``
ToolCall                          ``assistant``; ``[{type: "tool_use", id, name, input}]``
ToolResult                        ``user``; ``[{type: "tool_result", tool_use_id, content, is_error}]``
                                  and ``toolUseResult`` (the result text)
system Message, ProviderBlock     not written (Claude Code's transcript has no such lines)
================================  ===================================================================

Like Claude Code, each content block is its own line (an assistant reply with text and two tool calls is
three ``assistant`` lines). A rewritten history (compaction) is not rewritten in the file: items not yet
written are appended after what is there. The file is created with mode 0600.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hookloop._frozen import JSONValue, thaw_object, to_json_default
from hookloop.items import Item, Message, Reasoning, ToolCall, ToolResult

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["ClaudeTranscript", "TranscriptKeeper"]

_log = logging.getLogger("hookloop.command_hooks.bridge")


class TranscriptKeeper:
    """The Claude Code–format transcript of one Worker's command hooks: where it lives and keeping it current.

    The file is ``<folder>/<session id>.jsonl`` when a folder is given; else beside the Worker's own transcript
    (``run.jsonl`` → ``run.claude.jsonl``); else in a private temporary folder (mode 0700) removed when this
    keeper is collected or the process exits. A new session id (a Worker resumed from another session's
    checkpoint) starts a new file.
    """

    def __init__(self, worker: Worker, folder: str | os.PathLike[str] | None, *, cwd: str, version: str) -> None:
        self._worker = weakref.ref(worker)
        self._folder = Path(folder) if folder is not None else None
        self._cwd = cwd
        self._version = version
        self._current: ClaudeTranscript | None = None
        self._failed = False

    def _path(self, worker: Worker) -> Path:
        if self._folder is None:
            own = worker.transcript_path
            if own is not None:
                return own.resolve().with_name(own.name.removesuffix(".jsonl") + ".claude.jsonl")
            temporary = tempfile.mkdtemp(prefix="hookloop-claude-transcript-")
            weakref.finalize(self, shutil.rmtree, temporary, True)
            self._folder = Path(temporary)
        return self._folder.resolve() / f"{worker.session_id}.jsonl"

    def current(self) -> str:
        """The transcript path, the file brought up to date first; ``""`` when it cannot be written (logged
        once)."""
        worker = self._worker()
        if worker is None:
            return ""
        try:
            transcript = self._current
            if transcript is None or transcript.session_id != worker.session_id:
                path = self._path(worker)
                transcript = self._current = ClaudeTranscript(
                    path, session_id=worker.session_id, cwd=self._cwd, version=self._version
                )
            transcript.sync(worker.history, model=worker.model)
        except OSError as exc:
            if not self._failed:
                self._failed = True
                _log.warning("command hooks: cannot write the Claude Code transcript: %s", exc)
            return ""
        return str(transcript.path)


class ClaudeTranscript:
    """One Claude Code–format transcript file, kept in step with a history by :meth:`sync`."""

    def __init__(self, path: str | os.PathLike[str], *, session_id: str, cwd: str, version: str) -> None:
        self.path = Path(path)
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self._written: set[str] = set()
        self._parent: str | None = None
        self._model: str | None = None
        self._seen = 0
        self._last_id: str | None = None

    def sync(self, history: Sequence[Item], *, model: str | None = None) -> None:
        """Append a line for every item of ``history`` not written yet (by item id), in order; create the file
        (mode 0600) if it does not exist. Raises ``OSError`` when it cannot be written (nothing is counted as
        written then: the next sync tries the same lines again)."""
        self._model = model
        start = 0
        seen = self._seen
        if seen and len(history) >= seen and history[seen - 1].id == self._last_id:
            start = seen  # the usual case: the history only grew since the last sync
        parent = self._parent
        new_ids: list[str] = []
        lines: list[str] = []
        for item in history[start:]:
            if item.id in self._written:
                continue
            new_ids.append(item.id)
            entry = self._entry(item)
            if entry is not None:
                lines.append(json.dumps(entry, ensure_ascii=False, default=to_json_default))
        if lines or not self.path.exists():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as handle:
                    handle.write("".join(line + "\n" for line in lines))
            except OSError:
                self._parent = parent
                raise
        self._written.update(new_ids)
        self._seen = len(history)
        self._last_id = history[-1].id if history else None

    def _entry(self, item: Item) -> dict[str, JSONValue] | None:
        if isinstance(item, Message):
            if item.role == "user":
                extra: dict[str, JSONValue] = {}
                if item.meta.get("source") == "hook_context":
                    extra["isMeta"] = True
                return self._line("user", {"role": "user", "content": item.text}, extra)
            if item.role == "assistant":
                return self._assistant(item.id, [{"type": "text", "text": item.text}])
            return None
        if isinstance(item, Reasoning):
            block: dict[str, JSONValue] = {"type": "thinking", "thinking": item.text}
            if item.signature is not None:
                block["signature"] = item.signature
            return self._assistant(item.id, [block])
        if isinstance(item, ToolCall):
            use: dict[str, JSONValue] = {
                "type": "tool_use",
                "id": item.call_id,
                "name": item.name,
                "input": thaw_object(item.arguments),
            }
            return self._assistant(item.id, [use])
        if isinstance(item, ToolResult):
            result: dict[str, JSONValue] = {
                "type": "tool_result",
                "tool_use_id": item.call_id,
                "content": item.content,
                "is_error": item.is_error,
            }
            message: dict[str, JSONValue] = {"role": "user", "content": [result]}
            return self._line("user", message, {"toolUseResult": item.content})
        return None

    def _assistant(self, item_id: str, content: list[JSONValue]) -> dict[str, JSONValue]:
        message: dict[str, JSONValue] = {
            "id": item_id,
            "type": "message",
            "role": "assistant",
            "model": self._model or "unknown",
            "content": content,
        }
        return self._line("assistant", message, {})

    def _line(self, kind: str, message: dict[str, JSONValue], extra: dict[str, JSONValue]) -> dict[str, JSONValue]:
        own = str(uuid.uuid4())
        now = datetime.datetime.now(datetime.UTC)
        entry: dict[str, JSONValue] = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "type": kind,
            "message": message,
            "uuid": own,
            "timestamp": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            **extra,
        }
        self._parent = own
        return entry
