"""A :class:`~hookloop.durable.RunStore` over a folder of checkpoints: the paused runs ``hookloop run`` wrote
(``<run id>.checkpoint.json``, under ``--checkpoint-dir`` or ``$HOOKLOOP_HOME/checkpoints``), for the web inbox
without a durable backend.

A run's timeline is its session transcript (``$HOOKLOOP_HOME/sessions/<session id>.jsonl``, the events the CLI
wrote); the checkpoint's nonce names its current pause (``pause_id``). Approving consumes the pause once in the
same ledger ``hookloop resume`` uses (so of an inbox approval and a terminal resume exactly one wins), builds the
Worker exactly as ``hookloop resume`` builds it (the CLI's own builder: the *current* settings decide the
permission policy, never the checkpoint) and continues the run in this process, appending to the same
transcript; a new pause overwrites the checkpoint file with a new nonce. What the store learns of a run it
continued (finished, failed, cancelled) is kept in ``<folder>/.inbox/<run id>.json`` so a restarted server still
knows it; a checkpoint consumed elsewhere reads its end from the transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hookloop._checkpoint_auth import LEDGER_DIR, consume, resolve_hookloop_home
from hookloop.checkpoint import AllowAlways, Approve, Checkpoint, Reject, ResumeDecision
from hookloop.durable._store import PauseConsumed, RunDetail, RunNotFound, RunRecord, RunStatus, StaleDecision
from hookloop.errors import CheckpointError, HookloopError
from hookloop.stream import Usage
from hookloop.timeline import TimelineEvent

__all__ = ["CheckpointDirStore", "ResumeSettings"]

SUFFIX = ".checkpoint.json"
RUN_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")
MAX_EVENTS = 5000
"""At most this many timeline events are read from a transcript (the newest are kept)."""
_ENDED: dict[str, RunStatus] = {
    "finished": "finished",
    "aborted": "failed",
    "error": "failed",
    "cancelled": "cancelled",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeSettings:
    """What decides the permission policy of a run the store continues — like the flags of ``hookloop resume``
    (never the checkpoint's own options)."""

    permission_mode: str | None = None
    settings: tuple[Path, ...] = ()
    include_claude: bool = True
    trust_project_hooks: bool = False


@dataclass(slots=True)
class _Live:
    """A run this process continues."""

    status: RunStatus = "running"
    reason: str = ""
    error: str | None = None
    text: str = ""
    worker: Any = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _mtime(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return _now()


class _Direct:
    """Effects that perform each effect at once: used so that :meth:`hookloop.Worker.resume` leaves consuming
    the pause to this store (which did it, atomically, before the decision was accepted)."""

    async def perform(self, effect: Any) -> Any:
        return await effect.perform()


class CheckpointDirStore:
    """Paused runs as checkpoint files in ``folder`` (default ``$HOOKLOOP_HOME/checkpoints``).

    Implements :class:`~hookloop.durable.RunStore`. Approved runs continue in this process (in the running event
    loop); :meth:`close` cancels the ones still going (their checkpoint is written, as Ctrl-C does)."""

    def __init__(self, folder: Path | None = None, *, resume: ResumeSettings | None = None) -> None:
        self.folder = (folder or resolve_hookloop_home() / "checkpoints").resolve()
        self.resume_settings = resume or ResumeSettings()
        self._live: dict[str, _Live] = {}
        self._lock = asyncio.Lock()

    # -- reading -------------------------------------------------------------------------------------------

    def _path(self, run_id: str) -> Path:
        if RUN_ID.fullmatch(run_id) is None or run_id.startswith("."):
            raise RunNotFound(f"no run {run_id!r}")
        return self.folder / f"{run_id}{SUFFIX}"

    def _state_path(self, run_id: str) -> Path:
        return self.folder / ".inbox" / f"{run_id}.json"

    def _load(self, run_id: str) -> tuple[Checkpoint, Any]:
        from hookloop.cli._resume import load_cli_checkpoint
        from hookloop.cli._session import UsageError

        path = self._path(run_id)
        if not path.is_file():
            raise RunNotFound(f"no run {run_id!r} in {self.folder}")
        try:
            return load_cli_checkpoint(path)
        except UsageError as exc:
            raise StaleDecision(str(exc)) from None

    def _record(self, run_id: str, *, detail: bool) -> RunDetail:
        path = self._path(run_id)
        checkpoint, options = self._load(run_id)
        updated = _mtime(path)
        status: RunStatus = "paused"
        reason, error, text = checkpoint.reason, None, ""
        transcript = resolve_hookloop_home() / "sessions" / f"{checkpoint.session_id}.jsonl"
        live = self._live.get(run_id)
        saved = self._saved_state(run_id, checkpoint.nonce)
        consumed = (resolve_hookloop_home() / LEDGER_DIR / checkpoint.nonce).exists()
        events = _read_events(transcript) if detail or (consumed and live is None and saved is None) else []
        if live is not None:
            status, reason, error, text = live.status, live.reason or reason, live.error, live.text
            updated = _now() if live.status == "running" else updated
        elif saved is not None:
            status = saved.get("status", "finished")
            reason, error, text = saved.get("reason", ""), saved.get("error"), saved.get("text", "")
        elif consumed:
            ended = next((e for e in reversed(events) if e.get("type") == "run_ended"), None)
            outcome = str(ended.get("outcome", "")) if ended else ""
            status = _ENDED.get(outcome, "finished")
            reason = "continued elsewhere (hookloop resume)" + (f": {ended.get('detail')}" if ended else "")
        history = tuple(i.to_json() for i in checkpoint.history) if detail else ()
        pending = checkpoint.pending if status == "paused" else ()
        return RunDetail(
            run_id=run_id,
            status=status,
            created_at=_first_seen(transcript, updated),
            updated_at=updated,
            prompt=_first_prompt(checkpoint),
            turns=checkpoint.turn,
            usage=checkpoint.usage if isinstance(checkpoint.usage, Usage) else Usage(),
            pending=pending,
            pause_id=checkpoint.nonce if status == "paused" else None,
            reason=reason,
            error=error,
            worker="cli",
            workspace=None if options is None else str(options.cwd),
            events=tuple(events),
            history=history,
            text=text,
        )

    def _saved_state(self, run_id: str, nonce: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._state_path(run_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("nonce") != nonce or data.get("status") not in _ENDED.values():
            return None
        return data

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The checkpoint files of the folder (and the runs this process continues), newest first."""
        try:
            paths = sorted(self.folder.glob(f"*{SUFFIX}"), key=_mtime, reverse=True)
        except OSError:
            return []
        runs: list[RunRecord] = []
        for path in paths:
            run_id = path.name[: -len(SUFFIX)]
            try:
                record = self._record(run_id, detail=False)
            except (RunNotFound, StaleDecision):
                continue  # not ours, or unreadable: `hookloop resume` says why
            if status is None or record.status == status:
                runs.append(record)
            if len(runs) >= limit:
                break
        return runs

    async def get_run(self, run_id: str) -> RunDetail:
        """One run with its transcript's events; :class:`RunNotFound` if the folder has no such checkpoint."""
        return self._record(run_id, detail=True)

    async def wait_changed(self, run_id: str, seconds: float) -> None:
        """Return when a run this process continues has new events or a new status (or after ``seconds``)."""
        live = self._live.get(run_id)
        if live is None or live.status != "running":
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(live.changed.wait(), seconds)
        live.changed.clear()

    # -- deciding ------------------------------------------------------------------------------------------

    async def approve(
        self,
        run_id: str,
        decisions: Mapping[str, ResumeDecision],
        *,
        pause_id: str | None = None,
        messages: str | None = None,
    ) -> None:
        """Check the decision, consume the pause, and continue the run in this process (see the module doc)."""
        async with self._lock:
            live = self._live.get(run_id)
            if live is not None and live.status == "running":
                raise StaleDecision(f"run {run_id} is running; it has no pause to decide")
            checkpoint, saved = self._load(run_id)
            if pause_id is not None and pause_id != checkpoint.nonce:
                raise StaleDecision(f"run {run_id}: that pause is no longer the current one (reload the page)")
            if (resolve_hookloop_home() / LEDGER_DIR / checkpoint.nonce).exists():
                raise PauseConsumed(f"run {run_id}: this pause was already decided")
            pending = {c.call_id for c in checkpoint.pending}
            missing = sorted(pending - set(decisions))
            if missing:
                raise StaleDecision(f"run {run_id}: a decision is needed for every pending call; missing {missing}")
            open_calls = {c.call_id for c in checkpoint.batch if c.state != "done"}
            unknown = sorted(set(decisions) - open_calls)
            if unknown:
                raise StaleDecision(f"run {run_id}: not a pending call of this pause: {unknown}")
            session, worker = self._build(checkpoint, saved)
            try:
                self._check_edits(worker, checkpoint, decisions)
                consume(checkpoint.nonce, run_id=run_id, ledger=None, fork=False)
            except CheckpointError as exc:
                worker.close()
                raise PauseConsumed(f"run {run_id}: {exc}") from None
            except BaseException:
                worker.close()
                raise
            _record_decisions(session.transcript, checkpoint, decisions, messages)
            live = _Live(worker=worker)
            self._live[run_id] = live
            worker.subscribe(lambda event: self._on_event(live, event))
            live.task = asyncio.get_running_loop().create_task(
                self._continue(run_id, live, session, worker, checkpoint, dict(decisions), messages)
            )

    def _build(self, checkpoint: Checkpoint, saved: Any) -> tuple[Any, Any]:
        """The Worker ``hookloop resume --cwd <the run's directory>`` builds, and the CLI session around it."""
        from rich.console import Console

        from hookloop.cli._mcp import session_mcp_plan
        from hookloop.cli._resume import resume_options
        from hookloop.cli._session import Session, UsageError, build_worker

        if saved is None:
            raise StaleDecision(f"run {checkpoint.run_id}: a bare checkpoint (no CLI options): resume it in code")
        rs = self.resume_settings
        try:
            options, _ = resume_options(
                saved,
                model=None,
                cwd=saved.cwd,
                permission_mode=rs.permission_mode,  # type: ignore[arg-type]
                settings=list(rs.settings),
                include_claude=rs.include_claude,
                trust_project_hooks=rs.trust_project_hooks,
            )
            quiet = Console(file=io.StringIO(), highlight=False)
            session = Session(options=options, output="json", approval="pause", out=quiet, err=quiet)
            session.session_id = checkpoint.session_id
            worker, _ = build_worker(options, transcript=session.transcript, session_id=checkpoint.session_id)
            session.mcp = session_mcp_plan(options, "pause", quiet)
        except UsageError as exc:
            raise StaleDecision(f"run {checkpoint.run_id}: cannot continue it here: {exc}") from None
        return session, worker

    @staticmethod
    def _check_edits(worker: Any, checkpoint: Checkpoint, decisions: Mapping[str, ResumeDecision]) -> None:
        """An edited input must pass the tool's schema before the decision is accepted."""
        from hookloop.tools import ToolInputError

        calls = {c.call_id: c for c in checkpoint.batch}
        for call_id, decision in decisions.items():
            if isinstance(decision, AllowAlways) or not isinstance(decision, Approve):
                continue
            if decision.updated_input is None:
                continue
            name = calls[call_id].tool_name
            tool = next((t for t in worker.tools if t.meta.name == name), None)
            if tool is None:
                raise StaleDecision(f"{name}: not a tool of this Worker; its input cannot be edited here")
            try:
                tool.validate(decision.updated_input)
            except (ToolInputError, ValueError, TypeError) as exc:
                raise StaleDecision(f"the edited input does not fit {tool.meta.name}'s schema: {exc}") from None

    def _on_event(self, live: _Live, event: TimelineEvent) -> None:
        live.changed.set()

    async def _continue(
        self,
        run_id: str,
        live: _Live,
        session: Any,
        worker: Any,
        checkpoint: Checkpoint,
        decisions: dict[str, ResumeDecision],
        messages: str | None,
    ) -> None:
        from hookloop.cli._mcp import run_with_mcp_servers
        from hookloop.errors import Cancelled
        from hookloop.outcome import Paused

        async def start(w: Any) -> Any:
            return await w.resume(checkpoint, decisions, messages=messages, effects=_Direct())

        try:
            outcome = await run_with_mcp_servers(session.mcp, worker, session.options.cwd, session.err, start)
        except Cancelled:
            with contextlib.suppress(HookloopError, OSError):
                session.save(worker.checkpoint("cancelled from the inbox"), worker)
            self._end(run_id, live, "cancelled", "cancelled from the inbox")
        except Exception as exc:  # a provider or hook error ends the run as failed, as the CLI reports it
            self._end(run_id, live, "failed", "the run failed", error=f"{type(exc).__name__}: {exc}")
        else:
            if isinstance(outcome, Paused):
                session.save(outcome.checkpoint, worker)  # the new pause: same file, new nonce
                self._live.pop(run_id, None)
                live.status = "paused"
            else:
                live.text = outcome.text
                self._end(run_id, live, "finished", outcome.reason or "finished")
        finally:
            worker.close()
            live.changed.set()

    def _end(self, run_id: str, live: _Live, status: RunStatus, reason: str, *, error: str | None = None) -> None:
        live.status, live.reason, live.error = status, reason, error
        try:
            checkpoint, _ = self._load(run_id)
        except HookloopError:
            return
        state = {"nonce": checkpoint.nonce, "status": status, "reason": reason, "error": error, "text": live.text}
        path = self._state_path(run_id)
        with contextlib.suppress(OSError):
            path.parent.mkdir(mode=0o700, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state), encoding="utf-8")
            tmp.replace(path)

    async def cancel(self, run_id: str) -> None:
        """A paused run: its pause is consumed (it can no longer be approved) and it ends as cancelled. A run
        this process continues is cancelled where it runs. An ended run is left as it is."""
        async with self._lock:
            live = self._live.get(run_id)
            if live is not None and live.status == "running":
                live.worker.cancel()
                return
            checkpoint, _ = self._load(run_id)
            if self._record(run_id, detail=False).status != "paused":
                return
            try:
                consume(checkpoint.nonce, run_id=run_id, ledger=None, fork=False)
            except CheckpointError:
                return  # decided meanwhile (elsewhere): it is no longer paused here
            self._end(run_id, _Live(), "cancelled", "cancelled from the inbox before it continued")

    async def wait_idle(self) -> None:
        """Wait until every run this process continues has paused again or ended."""
        tasks = [live.task for live in self._live.values() if live.task is not None and not live.task.done()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Cancel the runs this process continues and wait for them to save their checkpoints."""
        tasks = []
        for live in self._live.values():
            if live.task is not None and not live.task.done():
                live.worker.cancel()
                tasks.append(live.task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _record_decisions(
    transcript: Path, checkpoint: Checkpoint, decisions: Mapping[str, ResumeDecision], messages: str | None
) -> None:
    """Append the inbox's decisions to the run's transcript (as ``hook`` lines from source ``inbox``), so the
    timeline says who decided each call and why."""
    names = {c.call_id: c.tool_name for c in checkpoint.batch}
    lines = []
    for call_id, decision in decisions.items():
        if isinstance(decision, Reject):
            verdict, reason = "Reject", decision.reason
        elif isinstance(decision, AllowAlways):
            verdict, reason = "AllowAlways", f"rule {decision.rule}" if decision.rule else "the narrowest rule"
        elif decision.updated_input is not None:
            verdict, reason = "Approve", "approved with an edited input"
        else:
            verdict, reason = "Approve", "approved once"
        lines.append(
            {
                "type": "hook",
                "event": "permission_request",
                "hook": "the user",
                "source": "inbox",
                "decision": verdict,
                "reason": f"{names.get(call_id, '?')}: {reason}",
                "call_id": call_id,
                "seconds": 0.0,
            }
        )
    if messages:
        lines.append(
            {
                "type": "hook",
                "event": "on_turn_end",
                "hook": "the user",
                "source": "inbox",
                "decision": "Continue",
                "reason": "continued with a message",
                "call_id": None,
                "seconds": 0.0,
            }
        )
    with contextlib.suppress(OSError), transcript.open("a", encoding="utf-8") as file:
        file.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _first_prompt(checkpoint: Checkpoint) -> str:
    for item in checkpoint.history:
        if getattr(item, "role", None) == "user":
            return "".join(getattr(p, "text", "") for p in getattr(item, "content", ()))
    return ""


def _first_seen(transcript: Path, default: datetime) -> datetime:
    try:
        return min(default, datetime.fromtimestamp(transcript.stat().st_ctime, UTC))
    except OSError:
        return default


def _read_events(transcript: Path) -> list[dict[str, Any]]:
    """The transcript's events (at most :data:`MAX_EVENTS`, the newest); unreadable lines are skipped."""
    try:
        with transcript.open(encoding="utf-8", errors="replace") as file:
            lines = file.readlines()
    except OSError:
        return []
    events = []
    for line in lines[-MAX_EVENTS:]:
        with contextlib.suppress(ValueError):
            data = json.loads(line)
            if isinstance(data, dict) and isinstance(data.get("type"), str):
                events.append(data)
    return events
