"""Each effect of a durable run on Temporal as its own activity, performed in the process that drives the run.

**Why a worker-specific task queue.** An effect (a model call, a tool call, an external hook firing) is a closure
of the live Worker — its client, its tools, its hook processes, the context variables of the call — so it can only
be performed in the process whose segment activity (the *driver*, :mod:`hookloop.durable._temporal_segment`) built
it. Temporal's documented pattern for such affinity is a task queue per worker process: every process that serves
hookloop runs, besides the temporalio Worker on the shared task queue (workflows and driver activities), a second
one on ``<task_queue>/effects/<uuid>`` for the activity ``hookloop.effect`` only. The driver registers each pending
:class:`~hookloop.effects.Effect` here (keyed by workflow id, segment and effect name) before it asks the workflow
to perform it; the workflow schedules ``hookloop.effect`` on the driver's queue; the activity finds the effect here,
performs it in the driver's context and returns its encoded outcome. The effect is thus an activity in the
workflow's history (its id ``<segment>/<name>``, its summary saying what it is) while it behaves exactly as in a
plain run.

**Attempts.** An activity attempt that is lost — its heartbeat stopped, the server restarted — is retried by
Temporal on the same queue; a retry in the same process *joins* the execution that is still running (or returns
the outcome it already has): an effect is never performed twice in one process because an attempt was lost. Only
a model call that failed with a retryable provider error (:attr:`hookloop.errors.ClientError.retryable`) is
performed again, up to ``model_attempts`` times in all (``retry_after`` is honoured). A tool's or a hook's own
failure is its outcome (an error result, the hook's error), as in a plain run, and is not retried. When the
driver's process dies, its queue has no poller: the driver's next attempt, on another worker, asks for the same
effect and the workflow schedules it again on the new queue — the interrupted effect runs again there, a tool with
the same idempotency key (:attr:`hookloop.tools.ToolContext.idempotency_key`).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from hookloop.effects import Effect

from ._temporal_workflow import EFFECT_ACTIVITY

__all__ = ["EffectTable", "summary"]

Key = tuple[str, int, str]
"""(workflow id, segment, effect name)."""


@dataclass(eq=False, slots=True)
class Entry:
    """One effect waiting in this process: the drivers that wait for it (``refs``), and its execution."""

    effect: Effect[Any]
    context: contextvars.Context
    refs: int = 1
    task: asyncio.Task[Any] | None = None
    cancelled: bool = False

    def failure(self) -> BaseException | None:
        """The exception the last execution raised (None: none ran, it runs, or it succeeded)."""
        task = self.task
        if task is None or not task.done() or task.cancelled():
            return None
        return task.exception()


class EffectTable:
    """The effects pending in one serving process, and the ``hookloop.effect`` activity that performs them."""

    def __init__(self, queue: str) -> None:
        self.queue = queue
        """This process's own task queue (``<task_queue>/effects/<uuid>``)."""
        self._entries: dict[Key, Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def enter(self, key: Key, effect: Effect[Any]) -> Entry:
        """Register ``effect`` before asking the workflow to perform it; a driver attempt of the same segment in
        this process that asks for the same name shares the entry (and its execution)."""
        entry = self._entries.get(key)
        if entry is not None and not entry.cancelled:
            entry.refs += 1
            return entry
        entry = self._entries[key] = Entry(effect=effect, context=contextvars.copy_context())
        return entry

    def leave(self, key: Key, entry: Entry) -> None:
        """A driver stopped waiting for ``entry`` (it has the outcome, or it was cancelled)."""
        entry.refs -= 1
        if entry.refs <= 0 and self._entries.get(key) is entry:
            del self._entries[key]

    async def cancel(self, key: Key, entry: Entry) -> None:
        """The driver was cancelled while waiting: unless another driver waits for it too, cancel the execution
        (the tool, the model stream, the hook process) and wait until it stopped, as a plain run's cancel does."""
        if entry.refs > 1:
            return
        entry.cancelled = True
        task = entry.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})

    @activity.defn(name=EFFECT_ACTIVITY)
    async def perform(self, request: dict[str, Any]) -> str:
        """Perform the effect ``request`` names (``segment``, ``name``, ``kind``) in this process; returns
        ``{"outcome": …}`` as JSON. ``EffectFailed`` (the effect's own failure), ``EffectLost`` (no driver
        waits for it here any more), ``EffectCancelled`` (its driver was cancelled) otherwise."""
        info = activity.info()
        name = str(request["name"])
        entry = self._entries.get((info.workflow_id or "", int(request["segment"]), name))
        if entry is None or entry.cancelled:
            lost = f"{name}: no driver waits for this effect in this process any more"
            raise ApplicationError(lost, type="EffectLost", non_retryable=True)
        task = entry.task
        if task is None or (task.done() and _perform_again(entry)):
            entry.task = task = asyncio.create_task(_perform(entry.effect), context=entry.context.copy())
        every = info.heartbeat_timeout.total_seconds() / 3 if info.heartbeat_timeout else 10.0
        while not task.done():  # heartbeating while it runs (a long tool): a dead process is noticed
            activity.heartbeat()
            await asyncio.wait({task}, timeout=max(every, 0.05))  # a cancel of this attempt leaves it running
        if task.cancelled() or entry.cancelled:
            raise ApplicationError(f"{name}: its run was cancelled", type="EffectCancelled", non_retryable=True)
        failure = task.exception()
        if failure is not None:
            retryable = entry.effect.kind == "model" and getattr(failure, "retryable", False) is True
            delay = getattr(failure, "retry_after", None)
            wait = timedelta(seconds=float(delay)) if retryable and isinstance(delay, int | float) else None
            raise ApplicationError(
                f"{type(failure).__name__}: {failure}",
                type="EffectFailed",
                non_retryable=not retryable,
                next_retry_delay=wait,
            )
        try:
            return json.dumps({"outcome": entry.effect.encode(task.result())})
        except (TypeError, ValueError) as exc:
            raise ApplicationError(
                f"{name}: its outcome cannot be recorded as JSON: {exc}", type="EffectFailed", non_retryable=True
            ) from None


async def _perform(effect: Effect[Any]) -> Any:
    return await effect.perform()


def _perform_again(entry: Entry) -> bool:
    """A finished execution is performed again by a new attempt only if it was a model call that failed with a
    retryable error; a success is returned again, anything else is its outcome."""
    task = entry.task
    assert task is not None
    if task.cancelled():
        return False
    failure = task.exception()
    return failure is not None and entry.effect.kind == "model" and getattr(failure, "retryable", False) is True


def summary(effect: Effect[Any]) -> str:
    """What the Temporal UI shows for the effect's activity: its kind and what it is."""
    d = effect.describe
    if effect.kind == "tool":
        text = f"tool {d.get('tool')} {d.get('call_id')} (turn {d.get('turn')}, key {d.get('idempotency_key')})"
    elif effect.kind == "model":
        text = f"model {d.get('provider')}:{d.get('model')} (turn {d.get('turn')})"
    else:
        call = d.get("call_id")
        text = f"hook {d.get('event')} {d.get('hook')}" + (f" for {call}" if call else "")
    return text[:200]
