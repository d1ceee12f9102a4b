"""The Temporal workflow of one durable run: a small state machine over JSON, deterministic by construction.

It never runs hookloop code. Each run segment (the first run, each continuation after a decision) is one activity
(``hookloop.segment``, :mod:`hookloop.durable._temporal_segment`) that runs the Worker; the activity records each
effect of the segment in this workflow with the ``record`` update, and reads them back with the ``recorded``
query when it is retried after a crash. Between segments the workflow waits for a decision (the ``approve``
update) or a cancel (the ``cancel`` signal) without any activity: a paused run holds no worker resources, and any
worker on the task queue continues it. The run's record for ``hookloop runs`` is kept in the memo ``hookloop``,
so listing and showing runs needs no worker.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

__all__ = ["MEMO_KEY", "SEGMENT_ACTIVITY", "WORKFLOW_NAME", "RunWorkflow"]

WORKFLOW_NAME = "hookloop.run"
SEGMENT_ACTIVITY = "hookloop.segment"
MEMO_KEY = "hookloop"
_MEMO_FIELDS = (
    "run_id",
    "status",
    "segment",
    "prompt",
    "worker",
    "created_at",
    "pending",
    "pause_id",
    "consumed",
    "result",
    "error",
    "events",
    "history",
)


@workflow.defn(name=WORKFLOW_NAME)
class RunWorkflow:
    """One run. Its input (and result) is the run's state as JSON; see :func:`initial_state`."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.recorded: dict[str, str] = {}
        self.decision: dict[str, Any] | None = None
        self.cancel_requested = False
        self.activity: workflow.ActivityHandle[Any] | None = None

    @workflow.run
    async def run(self, state: dict[str, Any]) -> dict[str, Any]:
        self.state = state
        config = state["config"]
        while True:
            if self.cancel_requested:
                self._set(status="cancelled")
                break
            self.recorded = {}
            self._set(status="running")
            out = await self._segment(config)
            self.state["events"] = [*self.state["events"], *out.get("events", [])]
            if "history" in out:
                self.state["history"] = out["history"]
            if "result" in out:
                self.state["result"] = out["result"]
            status = str(out.get("status", "failed"))
            if status == "paused" and self.cancel_requested:
                self._set(status="cancelled", history=out.get("cancel_history", self.state["history"]))
                break
            if status != "paused":
                if status == "finished":
                    self.state["checkpoint"] = out.get("checkpoint")
                self._set(status=status, error=out.get("error"))
                break
            self._set(
                status="paused",
                checkpoint=out["checkpoint"],
                pending=out["pending"],
                pause_id=out["pause_id"],
                cancel_history=out.get("cancel_history"),
            )
            await workflow.wait_condition(lambda: self.decision is not None or self.cancel_requested)
            decision, self.decision = self.decision, None
            self.state["consumed"] = [*self.state["consumed"], self.state["pause_id"]]
            if decision is None:  # cancelled while paused: the waiting calls get a "not executed" result
                history = self.state.pop("cancel_history", None) or self.state["history"]
                self._set(status="cancelled", history=history, pending=[], pause_id=None)
                break
            self.state.pop("cancel_history", None)
            self.state["grants"] = [*self.state["grants"], *decision.get("grants", [])]
            self.state["spec"] = {
                "kind": "resume",
                "decisions": decision["decisions"],
                "messages": decision.get("messages"),
            }
            self.state["segment"] += 1
            self.state["pending"], self.state["pause_id"] = [], None
        self.state.pop("cancel_history", None)
        return self.state

    async def _segment(self, config: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        request = {
            key: state[key]
            for key in ("run_id", "segment", "spec", "worker", "options", "checkpoint", "grants", "prompt")
        }
        self.activity = workflow.start_activity(
            SEGMENT_ACTIVITY,
            request,
            task_queue=config["task_queue"],
            start_to_close_timeout=timedelta(days=3650),
            heartbeat_timeout=timedelta(seconds=float(config["heartbeat_timeout"])),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=0.2),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=5),
                maximum_attempts=0,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        try:
            result: dict[str, Any] = await self.activity
            return result
        except ActivityError as exc:
            if self.cancel_requested:
                return {"status": "cancelled"}
            return {"status": "failed", "error": f"the segment activity failed: {exc.cause or exc}"}
        finally:
            self.activity = None

    def _set(self, **values: Any) -> None:
        self.state.update(values)
        self.state["updated_at"] = workflow.now().timestamp()
        memo = {name: self.state.get(name) for name in _MEMO_FIELDS}
        memo["updated_at"] = self.state["updated_at"]
        workflow.upsert_memo({MEMO_KEY: memo})

    # -- decisions ------------------------------------------------------------------------------------------

    @workflow.update(name="approve")
    def approve(self, request: dict[str, Any]) -> None:
        """Consume the current pause with ``request`` (``pause_id``, ``decisions``, ``messages``, ``grants``).
        Checked again here (not only in the validator): of two approvals in one activation, one wins."""
        self._check(request)
        self.decision = request

    @approve.validator
    def _validate_approve(self, request: dict[str, Any]) -> None:
        self._check(request)

    def _check(self, request: dict[str, Any]) -> None:
        state, pause_id = self.state, request.get("pause_id")
        consumed = state.get("consumed", [])
        decided = self.decision is not None
        if state.get("status") != "paused" or decided or self.cancel_requested:
            last = state.get("pause_id") if decided else (consumed[-1] if consumed else None)
            if last is not None and pause_id in (None, last) and state.get("status") != "cancelled":
                raise ApplicationError(f"the pause {last} was already decided", type="PauseConsumed")
            raise ApplicationError(f"the run is {state.get('status')}, not paused", type="StaleDecision")
        if pause_id is not None and pause_id != state.get("pause_id"):
            if pause_id in consumed:
                raise ApplicationError(f"the pause {pause_id} was already decided", type="PauseConsumed")
            raise ApplicationError(
                f"pause {pause_id} is not the current one ({state.get('pause_id')})", type="StaleDecision"
            )
        waiting = {str(p["call_id"]) for p in state.get("pending", [])}
        given = set(request.get("decisions", {}))
        if given - waiting:
            unknown = ", ".join(sorted(given - waiting))
            raise ApplicationError(f"decisions for calls that are not pending: {unknown}", type="StaleDecision")
        if waiting - given:
            missing = ", ".join(sorted(waiting - given))
            raise ApplicationError(f"every pending call needs a decision; missing: {missing}", type="StaleDecision")

    @workflow.signal(name="cancel")
    def cancel(self) -> None:
        """Cancel the run: a paused run ends as cancelled; a running segment's activity is cancelled (the Worker
        is cancelled where it runs)."""
        self.cancel_requested = True
        if self.activity is not None and not self.activity.done():
            self.activity.cancel()

    # -- the effects of the running segment ------------------------------------------------------------------

    @workflow.update(name="record")
    def record(self, request: dict[str, Any]) -> str:
        """Record one effect's output for the running segment; returns the recorded output (the first recorded
        wins: an attempt that lost the race gets the other's)."""
        if request.get("segment") != self.state.get("segment") or self.state.get("status") != "running":
            raise ApplicationError("the segment is no longer running", type="StaleSegment")
        return self.recorded.setdefault(str(request["name"]), str(request["output"]))

    @workflow.query(name="recorded")
    def get_recorded(self, segment: int) -> dict[str, str]:
        """The outputs recorded for ``segment`` (empty once it ended)."""
        return dict(self.recorded) if segment == self.state.get("segment") else {}

    @workflow.query(name="state")
    def get_state(self) -> dict[str, Any]:
        return self.state


def initial_state(
    *,
    run_id: str,
    prompt: str,
    worker: str,
    options: dict[str, Any],
    created_at: float,
    config: dict[str, Any],
) -> dict[str, Any]:
    """The state a new run starts with."""
    return {
        "run_id": run_id,
        "status": "queued",
        "segment": 0,
        "spec": {"kind": "start"},
        "prompt": prompt,
        "worker": worker,
        "options": options,
        "created_at": created_at,
        "updated_at": created_at,
        "config": config,
        "checkpoint": None,
        "pending": [],
        "pause_id": None,
        "consumed": [],
        "grants": [],
        "result": {},
        "error": None,
        "events": [],
        "history": [],
    }
