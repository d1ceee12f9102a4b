"""What every run store offers (a durable backend's database, a folder of checkpoints): the records the CLI's
``hookloop runs`` and the web inbox show, and the decisions they take.

A store never trusts what it shows for a decision: approving goes through :meth:`RunStore.approve`, which checks
the pause is the current one and not yet consumed (atomically: of two approvals of one pause exactly one wins),
and the continuation re-plans every call against the current permission policy as :meth:`hookloop.Worker.resume`
does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, TypeAlias

from hookloop.checkpoint import PendingCall, ResumeDecision
from hookloop.errors import HookloopError
from hookloop.stream import Usage

__all__ = [
    "PauseConsumed",
    "RunDetail",
    "RunNotFound",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "StaleDecision",
]

RunStatus: TypeAlias = Literal["queued", "running", "paused", "finished", "failed", "cancelled"]
"""``queued``: waiting for a worker process; ``running``: a worker is executing it (or it is being recovered
after a crash); ``paused``: waiting for a decision (no process holds it); ``finished``: ended normally (including
stopped by a hook); ``failed``: ended with an error (the error is in ``error``); ``cancelled``: cancelled."""


class RunNotFound(HookloopError, LookupError):
    """No run with this id in the store."""


class StaleDecision(HookloopError):
    """A decision for a pause that is not the run's current one (the run moved on, was cancelled, or the pause
    id does not match), or for calls that are not pending."""


class PauseConsumed(StaleDecision):
    """The pause was already decided (approved, denied or cancelled) — a second decision is refused."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One run as a list shows it."""

    run_id: str
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    prompt: str = ""
    """The run's first prompt (its first line may be shown cut)."""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    """None when the model's price is not known."""
    pending: tuple[PendingCall, ...] = ()
    """The calls waiting for a decision (only when ``status == "paused"``)."""
    pause_id: str | None = None
    """Names the current pause (a decision must name it, so a decision made on a stale page is refused)."""
    reason: str = ""
    """Why it paused, or how it ended."""
    error: str | None = None
    worker: str = ""
    """The registered Worker factory (or the CLI's) that runs it."""
    workspace: str | None = None
    """The directory the run works in, when the store knows it (an "allow always" rule is made relative to it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDetail(RunRecord):
    """One run, whole: its timeline as JSON events (the same events as the transcript: model turns, tool calls
    with arguments and results, every hook and permission decision with who made it and why) and its history."""

    events: tuple[Mapping[str, object], ...] = ()
    history: tuple[Mapping[str, object], ...] = ()
    """The run's items as JSON (``Item.to_json()``)."""
    text: str = ""
    """The final answer (finished runs)."""


class RunStore(Protocol):
    """Runs and their decisions, whatever holds them. Every method may be called from any process attached to
    the store; decisions take effect through the backend (a worker process picks up the continuation)."""

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The newest runs first (at most ``limit``), optionally only those with ``status``."""
        ...

    async def get_run(self, run_id: str) -> RunDetail:
        """One run, whole; :class:`RunNotFound` if there is none."""
        ...

    async def approve(
        self,
        run_id: str,
        decisions: Mapping[str, ResumeDecision],
        *,
        pause_id: str | None = None,
        messages: str | None = None,
    ) -> None:
        """Decide the run's current pause: one :class:`~hookloop.Approve` / :class:`~hookloop.AllowAlways` /
        :class:`~hookloop.Reject` per pending call (denying is a Reject with the reason), then continue it.
        ``pause_id`` (when given) must name the current pause. Raises :class:`RunNotFound`,
        :class:`StaleDecision` (not paused, wrong pause, unknown or missing calls, an edited input that fails the
        tool's schema) or :class:`PauseConsumed` (already decided). Returns once the decision is recorded and the
        continuation is queued; it does not wait for the run."""
        ...

    async def cancel(self, run_id: str) -> None:
        """Cancel the run: a queued or paused run ends at once as cancelled; a running one is cancelled where it
        runs (on_abort once, one result per tool call). A run that already ended is left as it is."""
        ...
