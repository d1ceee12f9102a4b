"""The Temporal workflow of one durable run: a small state machine over JSON, deterministic by construction.

It never runs hookloop code. Each run segment (the first run, each continuation after a decision) is one driver
activity (``hookloop.segment``, :mod:`hookloop.durable._temporal_segment`) that runs the Worker. Each effect the
driver meets — a model call, a tool call, an external hook firing — it asks this workflow to perform (the
``perform`` update): the workflow schedules it as its own activity (``hookloop.effect``, id ``<segment>/<name>``)
on the driver's own task queue (:mod:`hookloop.durable._temporal_effects`), records its outcome with the digest of
the decisions taken before it, and answers. A name already recorded is answered at once (a retried driver replays
it; nothing runs again), two attempts asking for one name share one activity, and a name whose activity was
scheduled on a driver that died is scheduled again on the asking driver's queue. The driver reads the record with
the ``recorded`` query when it is retried.

Between segments the workflow waits for a decision (the ``approve`` update) or a cancel (the ``cancel`` signal)
without any activity: a paused run holds no worker slot, and any worker on the task queue continues it; there it
may continue as new (when Temporal suggests it, or after ``continue_as_new_after`` history events), carrying its
state and memo. The run's record for ``hookloop runs`` is kept in the memo ``hookloop``, so listing and showing
runs needs no worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

__all__ = [
    "EFFECT_ACTIVITY",
    "EVENTS_KEY",
    "HISTORY_KEY",
    "MEMO_KEY",
    "SEGMENT_ACTIVITY",
    "WORKFLOW_NAME",
    "RunWorkflow",
]

WORKFLOW_NAME = "hookloop.run"
SEGMENT_ACTIVITY = "hookloop.segment"
EFFECT_ACTIVITY = "hookloop.effect"
MEMO_KEY = "hookloop"
HISTORY_KEY = "hookloop.history"
EVENTS_KEY = "hookloop.events"
_BIG = {"history": HISTORY_KEY, "events": EVENTS_KEY}
"""The run's history and timeline live only in the memo (under their own keys, written when they change), not in
the workflow's state: a paused run in a worker's workflow cache holds them once, as the memo's encoded bytes."""
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
)


@dataclass(eq=False)
class _Slot:
    """The activity of one effect of the running segment, while it runs."""

    handle: workflow.ActivityHandle[str]
    queue: str
    digest: str
    entries: list[str]


@workflow.defn(name=WORKFLOW_NAME)
class RunWorkflow:
    """One run. Its input (and result) is the run's state as JSON; see :func:`initial_state`."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.decision: dict[str, Any] | None = None
        self.cancel_requested = False
        self.activity: workflow.ActivityHandle[Any] | None = None
        # the running segment's effects: recorded outcomes, activities in flight, the current driver attempt
        self.open = False
        self.recorded: dict[str, dict[str, Any]] = {}
        self.slots: dict[str, _Slot] = {}
        self.scheduled: dict[str, int] = {}
        self.attempt = 0

    @workflow.run
    async def run(self, state: dict[str, Any]) -> dict[str, Any]:
        carried = {name: state.pop(name) for name in _BIG if name in state}  # a new run, a continued one
        self.state = state
        config = state["config"]
        if carried:
            self._set(**carried)
        while True:
            if self.cancel_requested:
                self._set(status="cancelled")
                break
            self._set(status="running")
            out = await self._segment(config)
            kept: dict[str, Any] = {}
            if out.get("events"):
                kept["events"] = [*self._big("events"), *out["events"]]
            if "history" in out:
                kept["history"] = out["history"]
            if "result" in out:
                self.state["result"] = out["result"]
            status = str(out.get("status", "failed"))
            if status == "paused" and self.cancel_requested:
                history = [*kept.get("history", self._big("history")), *out.get("cancel_tail", [])]
                self._set(status="cancelled", **(kept | {"history": history}))
                break
            if status != "paused":
                if status == "finished":
                    self.state["checkpoint"] = out.get("checkpoint")
                self._set(status=status, error=out.get("error"), **kept)
                break
            self._set(
                **kept,
                status="paused",
                checkpoint=out["checkpoint"],
                pending=out["pending"],
                pause_id=out["pause_id"],
                cancel_tail=out.get("cancel_tail", []),
            )
            await workflow.wait_condition(lambda: self.decision is not None or self.cancel_requested)
            decision, self.decision = self.decision, None
            self.state["consumed"] = [*self.state["consumed"], self.state["pause_id"]]
            tail = self.state.pop("cancel_tail", None) or []
            if decision is None:  # cancelled while paused: the waiting calls get a "not executed" result
                self._set(status="cancelled", history=[*self._big("history"), *tail], pending=[], pause_id=None)
                break
            self.state["grants"] = [*self.state["grants"], *decision.get("grants", [])]
            self.state["spec"] = {
                "kind": "resume",
                "decisions": decision["decisions"],
                "messages": decision.get("messages"),
            }
            self.state["segment"] += 1
            self.state["pending"], self.state["pause_id"] = [], None
            if self._continue_as_new_now(config):
                await workflow.wait_condition(workflow.all_handlers_finished)
                if not self.cancel_requested:  # the same workflow id, a fresh history; clients follow the id
                    self.state["status"] = "running"  # what the new execution's memo says until its first task
                    memo = {MEMO_KEY: self._memo(), **{key: self._big(name) for name, key in _BIG.items()}}
                    workflow.continue_as_new(self.state, memo=memo)
        self.state.pop("cancel_tail", None)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.state | {name: self._big(name) for name in _BIG}

    def _continue_as_new_now(self, config: dict[str, Any]) -> bool:
        """Between segments: when Temporal suggests it (the history grew long), or after ``continue_as_new_after``
        events of history (a deployment's own bound; tests set it low)."""
        info = workflow.info()
        limit = config.get("continue_as_new_after")
        if isinstance(limit, int) and limit > 0 and info.get_current_history_length() >= limit:
            return True
        return info.is_continue_as_new_suggested()

    async def _segment(self, config: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        request = {
            key: state[key]
            for key in ("run_id", "segment", "spec", "worker", "options", "checkpoint", "grants", "prompt")
        }
        self.open, self.recorded, self.slots, self.scheduled, self.attempt = True, {}, {}, {}, 0
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
            summary=f"segment {state['segment']} of run {state['run_id']}"[:200],
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
            self.open = False  # effects still in flight belong to attempts that lost their place: stop them
            for slot in self.slots.values():
                slot.handle.cancel()
            self.recorded, self.slots, self.scheduled = {}, {}, {}

    def _set(self, **values: Any) -> None:
        big = {_BIG[name]: values.pop(name) for name in list(values) if name in _BIG}
        self.state.update(values)
        self.state["updated_at"] = workflow.now().timestamp()
        workflow.upsert_memo({MEMO_KEY: self._memo(), **big})

    def _big(self, name: str) -> list[Any]:
        """The run's history or timeline, from the memo (decoded when needed, never kept decoded)."""
        value = workflow.memo_value(_BIG[name], [])
        return list(value) if isinstance(value, list) else []

    def _memo(self) -> dict[str, Any]:
        memo = {name: self.state.get(name) for name in _MEMO_FIELDS}
        memo["updated_at"] = self.state["updated_at"]
        return memo

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

    @workflow.update(name="perform")
    async def perform(self, request: dict[str, Any]) -> dict[str, Any]:
        """Perform one effect of the running segment as an activity (see the module docstring) and answer its
        record: ``{"output" | "error", "digest", "entries"}``; only ``{"digest", "entries"}`` when the asking
        driver's digest is not the one of the attempt that scheduled it (the driver reports the replay as not
        deterministic). ``request``: ``segment``, ``name``, ``kind``, ``describe``, ``summary``, ``digest``,
        ``entries``, ``attempt`` (the driver's), ``queue`` (the driver's effect queue)."""
        segment, name, attempt = int(request["segment"]), str(request["name"]), int(request["attempt"])
        self._current(segment, attempt)
        self.attempt = max(self.attempt, attempt)
        while True:
            done = self.recorded.get(name)
            if done is not None:
                return done
            slot = self.slots.get(name)
            if slot is not None and slot.digest != request["digest"]:
                return {"digest": slot.digest, "entries": slot.entries}
            if slot is None or slot.queue != request["queue"]:
                if slot is not None:  # scheduled on a driver that is gone: again on the asking one's queue
                    slot.handle.cancel()
                slot = self.slots[name] = self._schedule(segment, name, request)
            try:
                output = await slot.handle
            except ActivityError as exc:
                self._current(segment, attempt)
                if self.slots.get(name) is not slot:
                    continue  # a later attempt scheduled it again on its own queue: wait for that one
                del self.slots[name]
                cause = exc.cause
                if isinstance(cause, ApplicationError) and cause.type == "EffectFailed":
                    failed = {"error": cause.message, "digest": slot.digest, "entries": slot.entries}
                    return self.recorded.setdefault(name, failed)
                why = getattr(cause, "message", None) or type(cause).__name__
                raise ApplicationError(f"the activity of {name} was lost: {why}", type="EffectLost") from None
            if self.slots.get(name) is slot:
                del self.slots[name]
            return self.recorded.setdefault(name, {"output": output, "digest": slot.digest, "entries": slot.entries})

    @perform.validator
    def _validate_perform(self, request: dict[str, Any]) -> None:
        self._current(int(request["segment"]), int(request["attempt"]))

    def _current(self, segment: int, attempt: int) -> None:
        if not self.open or segment != self.state.get("segment"):
            raise ApplicationError(f"segment {segment} is no longer running", type="StaleSegment")
        if attempt < self.attempt:
            raise ApplicationError(
                f"driver attempt {attempt} of segment {segment} was superseded by attempt {self.attempt}",
                type="StaleSegment",
            )

    def _schedule(self, segment: int, name: str, request: dict[str, Any]) -> _Slot:
        config = self.state["config"]
        count = self.scheduled.get(name, 0)
        self.scheduled[name] = count + 1
        kind = str(request["kind"])
        if kind == "model":  # a retryable provider error is tried again (the effect activity decides which)
            policy = RetryPolicy(
                initial_interval=timedelta(seconds=1),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=30),
                maximum_attempts=int(config.get("model_attempts", 3)),
            )
        else:  # only a lost attempt is retried, and it joins the execution still running in the driver's process
            policy = RetryPolicy(
                initial_interval=timedelta(seconds=0.2), backoff_coefficient=2.0, maximum_interval=timedelta(seconds=5)
            )
        handle: workflow.ActivityHandle[str] = workflow.start_activity(
            EFFECT_ACTIVITY,
            {"segment": segment, "name": name, "kind": kind, "describe": request.get("describe")},
            task_queue=str(request["queue"]),
            activity_id=f"{segment}/{name}" + (f"/{count}" if count else ""),
            summary=str(request.get("summary") or name)[:200],
            start_to_close_timeout=timedelta(days=3650),
            heartbeat_timeout=timedelta(seconds=float(config["heartbeat_timeout"])),
            retry_policy=policy,
            cancellation_type=workflow.ActivityCancellationType.TRY_CANCEL,
        )
        queue, digest = str(request["queue"]), str(request["digest"])
        return _Slot(handle=handle, queue=queue, digest=digest, entries=list(request["entries"]))

    @workflow.query(name="recorded")
    def get_recorded(self, segment: int) -> dict[str, dict[str, Any]]:
        """The records of ``segment``'s effects (empty once it ended)."""
        return dict(self.recorded) if self.open and segment == self.state.get("segment") else {}

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
