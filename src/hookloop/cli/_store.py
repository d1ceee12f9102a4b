"""Conversations the CLI can continue: ``hookloop chat`` and ``hookloop run`` save the session after every turn,
``--continue`` picks the latest one of the project, ``--resume ID`` a named one.

A session's state is a checkpoint (:meth:`hookloop.Worker.checkpoint`) with the CLI's options inside it, at
``$HOOKLOOP_HOME/sessions/<session id>.state.json`` next to the transcript ``<session id>.jsonl``. It is
authenticated with the user's checkpoint key like any checkpoint, so a file someone else wrote (or edited) is
refused. It carries the conversation only: the permission policy, hooks, tools and MCP servers come from the
invocation that continues it, never from the file, and a tool call that was waiting for an approval when the
session ended is answered "not executed" rather than run.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from hookloop import Checkpoint, ScriptedClient, ToolResult, Worker
from hookloop._frozen import freeze_object
from hookloop.cli._resume import load_cli_checkpoint
from hookloop.cli._session import CLI_FORMAT, RunOptions, UsageError, home
from hookloop.items import Item

__all__ = ["SavedSession", "find_session", "restore", "save_session", "session_file"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_SUFFIX = ".state.json"


@dataclass(frozen=True, slots=True)
class SavedSession:
    """A session found on disk: its checkpoint (verified) and the options it ran with."""

    path: Path
    checkpoint: Checkpoint
    options: RunOptions

    @property
    def session_id(self) -> str:
        return self.checkpoint.session_id


def session_file(session_id: str) -> Path:
    """Where the state of ``session_id`` lives; an id that is not a plain name is a usage error."""
    if not _SESSION_ID.match(session_id) or session_id in (".", ".."):
        raise UsageError(f"--resume {session_id!r}: not a session id (letters, digits, '-', '_' and '.')")
    return home() / "sessions" / f"{session_id}{_SUFFIX}"


def save_session(worker: Worker, options: RunOptions, reason: str) -> Path | None:
    """Write the state of ``worker``'s conversation (between runs); returns the path, None when nothing was
    said yet. The scripted model's position is saved so a continued offline session plays on."""
    if not worker.history or worker.running:
        return None
    if isinstance(worker.client, ScriptedClient):
        options.scripted_position = worker.client.position
    checkpoint = worker.checkpoint(reason)
    path = session_file(worker.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = freeze_object({"hookloop_cli": CLI_FORMAT, **options.to_json()})
    return dataclasses.replace(checkpoint, options=data).save(path, key=worker.checkpoint_key)


def _load(path: Path) -> SavedSession:
    checkpoint, options = load_cli_checkpoint(path)
    if options is None:
        raise UsageError(f"{path}: not a session the command line saved")
    return SavedSession(path, checkpoint, options)


def find_session(cwd: Path, session_id: str | None) -> SavedSession:
    """The session to continue in ``cwd``: ``session_id``'s, else the latest one saved in this directory.

    Raises UsageError when there is none, when the file is not authentic, or when the named session worked in
    another directory (the conversation is about that project; run from there)."""
    cwd = cwd.resolve()
    if session_id is not None:
        path = session_file(session_id)
        if not path.is_file():
            raise UsageError(f"--resume {session_id}: no such session (see {path.parent})")
        saved = _load(path)
        if saved.options.cwd.resolve() != cwd:
            raise UsageError(
                f"--resume {session_id}: the session worked in {saved.options.cwd}, not here ({cwd}); "
                "run from there or pass --cwd"
            )
        return saved
    folder = home() / "sessions"
    candidates = sorted(
        folder.glob(f"*{_SUFFIX}") if folder.is_dir() else [], key=lambda p: p.stat().st_mtime, reverse=True
    )
    problems: list[str] = []
    for path in candidates:
        try:
            saved = _load(path)
        except UsageError as exc:  # another user's or a damaged file: skipped, said if nothing else is found
            problems.append(str(exc))
            continue
        if saved.options.cwd.resolve() == cwd:
            return saved
    detail = f" ({len(problems)} unreadable session file(s) skipped: {problems[0]})" if problems else ""
    raise UsageError(f"--continue: no earlier session in {cwd}{detail}")


def restore(worker: Worker, saved: SavedSession) -> list[str]:
    """Give ``worker`` the saved conversation (its session id, its history); returns notes to show. A tool
    call the session was waiting to approve is answered "not executed" (it is never run from the file)."""
    checkpoint = saved.checkpoint
    history: list[Item] = list(checkpoint.history)
    notes: list[str] = []
    for call in checkpoint.batch:
        if call.result is not None:
            history.append(call.result)
            continue
        history.append(
            ToolResult(
                call_id=call.call_id,
                name=call.tool_name,
                content="not executed: the session ended while this call waited for a decision",
                is_error=True,
            )
        )
        notes.append(f"note: {call.tool_name} was waiting for approval when the session ended; it was not run")
    worker.session_id = checkpoint.session_id
    worker.set_history(history)
    return notes
