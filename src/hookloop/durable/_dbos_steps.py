"""One run segment's effects as DBOS steps: occurrence-numbered step names, the replay order, the decision digest.

**Step ids.** DBOS identifies a step by the order in which the workflow *starts* it (a counter in the workflow's
context) and checks its name on replay. The effects of a run start in a deterministic order except within a
parallel tool batch, where a call's later effects (its PostToolUse hook, a sequential tool's next call) start
when earlier ones *finish*. On a replay the recorded steps return at once, so they would start in another order.
:class:`StepEffects` therefore replays in the recorded order: before a step starts it waits until the next step
id is the one recorded under its name (a step that was never recorded — the one a crash interrupted — takes an
id that has no record, or one past the end). Past the recorded steps nothing waits.

**Determinism.** Each step's recorded outcome carries the digest of the decisions plain code (in-process hooks,
permission rules) took before it: per tool call for the effects of one call, over the whole run for a model
call. On replay a different digest raises :class:`NondeterministicReplay`, naming the decisions, before the
step is used: the run fails rather than following a decision it did not take the first time.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dbos import DBOS
from dbos._context import get_local_dbos_context

from hookloop.effects import DecisionLog, Effect, current_effects
from hookloop.errors import HookloopError
from hookloop.timeline import HookDecision

__all__ = ["DurableEffectFailed", "NondeterministicReplay", "StepEffects"]

T = TypeVar("T")

REPLAY_WAIT_SECONDS = 20.0
"""How long a replayed step waits for its recorded turn before the replay is declared divergent."""


class NondeterministicReplay(HookloopError):
    """A replay took another path than the recorded run: a hook decided differently on the same inputs, or an
    effect the run recorded was not asked for again. The run fails (it does not follow the new path)."""


class DurableEffectFailed(HookloopError):
    """A recorded effect had failed the first time; its replay raises this with the recorded error."""


class _Decisions:
    """The decision digests of one segment, fed from the timeline's HookDecision events, per scope (a tool call's
    id, or "" for the run). ``expected`` holds each scope's decisions as the recorded steps saw them: a replayed
    decision that differs from the recorded one at the same place is a divergence, noticed at once."""

    def __init__(self, expected: Mapping[str, list[str]]) -> None:
        self.run = DecisionLog()
        self.calls: dict[str, DecisionLog] = {}
        self._parts: dict[str, str] = {}
        """Call id → ``"<call id>=<its digest>"``, kept as each call's digest changes (not built per model call)."""
        self._order: list[str] = []
        """The call ids sorted (kept sorted as calls come)."""
        self._combined: tuple[str, str] | None = None
        """(run digest, the run's digest over every call) of the last model call, while no call digest changed."""
        self.expected = expected
        self.seen: dict[str, int] = {}
        self.diverged: str | None = None
        self.on_diverge: Callable[[], None] = lambda: None

    def add(self, event: HookDecision) -> None:
        entry = f"{event.event}/{event.hook}: {event.decision}"
        scope = event.call_id or ""
        if scope:
            log = self._call(scope)
            log.add(entry)
            self._parts[scope] = f"{scope}={log.digest}"
            self._combined = None
        else:
            self.run.add(entry)
        index = self.seen.get(scope, 0)
        self.seen[scope] = index + 1
        expected = self.expected.get(scope, [])
        if self.diverged is None and index < len(expected) and expected[index] != entry:
            where = f"call {scope}" if scope else "the run"
            self.diverged = (
                f"durable replay: a decision for {where} differs from the recorded run — recorded "
                f"{expected[index]!r}, on replay {entry!r}. An in-process hook or permission rule decided "
                "differently on the same inputs (hooks must be deterministic); the run fails instead of following "
                "the new decision"
            )
            self.on_diverge()

    def _call(self, call_id: str) -> DecisionLog:
        log = self.calls.get(call_id)
        if log is None:
            log = self.calls[call_id] = DecisionLog()
            bisect.insort(self._order, call_id)
            self._parts[call_id] = f"{call_id}="
            self._combined = None
        return log

    def take(self, call_id: str | None) -> tuple[str, tuple[str, ...]]:
        """A tool call's digest (``call_id``), or the run's: its own decisions and every call's digest, sorted by
        call id — ``sha256("\\n".join([run digest, *("<call id>=<digest>" sorted)]))[:32]``."""
        if call_id:
            return self._call(call_id).take()
        digest, entries = self.run.take()
        combined = self._combined
        if combined is None or combined[0] != digest:
            parts = self._parts
            text = "\n".join([digest, *(parts[c] for c in self._order)])
            combined = self._combined = (digest, hashlib.sha256(text.encode()).hexdigest()[:32])
        return combined[1], entries


class StepEffects:
    """The :class:`~hookloop.effects.Effects` of one segment running inside its DBOS workflow.

    ``recorded`` maps the step ids already recorded for this workflow (from an earlier, interrupted execution)
    to ``(name, output)``. ``on_decision`` is subscribed to the Worker's timeline."""

    def __init__(self, recorded: Mapping[int, tuple[str, str | None]]) -> None:
        self._names = {fid: name for fid, (name, _) in recorded.items()}
        self._outputs = dict(recorded.values())
        self._unused = set(self._outputs)
        self._last = max(recorded, default=0)
        self._seen: dict[str, int] = {}
        self._changed = asyncio.Event()
        expected: dict[str, list[str]] = {}
        for fid in sorted(recorded):
            output = recorded[fid][1]
            data = _parse(output)
            scope = data.get("scope")
            if isinstance(scope, str):
                expected.setdefault(scope, []).extend(str(e) for e in data.get("entries") or [])
        self._decisions = _Decisions(expected)
        self._decisions.on_diverge = self._wake
        self.performed = 0
        """Effects performed for real in this execution (not replayed)."""

    def on_decision(self, event: object) -> None:
        """Timeline subscriber. Decisions of background hooks (emitted where ``current_effects`` is None, see
        ``command_hooks._firing``) and of hooks cancelled at the end are timing-dependent: not digested."""
        if isinstance(event, HookDecision) and event.decision != "HookCancelled" and current_effects.get() is self:
            self._decisions.add(event)

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _name(self, key: str) -> str:
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        return f"{key}#{n}"

    async def perform(self, effect: Effect[T]) -> T:
        name = self._name(effect.key)
        if self._decisions.diverged is not None:
            raise NondeterministicReplay(self._decisions.diverged)
        call_id = effect.describe.get("call_id")
        scope = call_id if isinstance(call_id, str) else ""
        digest, entries = self._decisions.take(scope or None)
        recorded = self._outputs.get(name)
        if recorded is not None:
            self._check(name, digest, entries, recorded)
        if self._unused:
            await self._turn(name)
        failure: list[BaseException] = []

        async def step() -> str:
            self.performed += 1
            try:
                outcome = await effect.perform()
            except Exception as exc:
                failure.append(exc)
                error = f"{type(exc).__name__}: {exc}"
                return json.dumps({"error": error, "digest": digest, "entries": list(entries), "scope": scope})
            encoded = effect.encode(outcome)
            return json.dumps({"outcome": encoded, "digest": digest, "entries": list(entries), "scope": scope})

        output = await DBOS.run_step_async({"name": name}, step)
        if failure:
            raise failure[0]
        data = json.loads(output)
        if "error" in data:
            raise DurableEffectFailed(f"{name} (recorded): {data['error']}")
        return effect.decode(data["outcome"])

    def _check(self, name: str, digest: str, entries: tuple[str, ...], recorded: str) -> None:
        data = _parse(recorded)
        if data.get("digest") == digest:
            return
        was = "; ".join(data.get("entries") or []) or "(none)"
        now = "; ".join(entries) or "(none)"
        raise NondeterministicReplay(
            f"durable replay of step {name}: the decisions taken before it differ from the recorded run — "
            f"recorded: {was}; on replay: {now}. An in-process hook or permission rule decided differently on the "
            "same inputs (hooks must be deterministic); the run fails instead of following the new decision"
        )

    async def _turn(self, name: str) -> None:
        """Wait until the next step id is the one recorded for ``name`` (or unrecorded, for a new step)."""
        ctx = get_local_dbos_context()
        assert ctx is not None, "a durable step runs inside its workflow"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REPLAY_WAIT_SECONDS
        while True:
            if self._decisions.diverged is not None:
                raise NondeterministicReplay(self._decisions.diverged)
            next_id = ctx.function_id + 1
            at = self._names.get(next_id)
            if (at == name) if name in self._unused else (at is None or next_id > self._last):
                break
            if loop.time() > deadline:
                expected = at or "a step that was not recorded"
                raise NondeterministicReplay(
                    f"durable replay: step {name} was asked for where the recorded run had {expected} (id "
                    f"{next_id}); the run took another path than the recorded one"
                )
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), timeout=max(deadline - loop.time(), 0.01))
            except TimeoutError:
                continue
        self._unused.discard(name)
        # Wake the others: they run once this task is suspended inside run_step_async, after it took its id.
        self._wake()


def _parse(output: object) -> dict[str, Any]:
    """A recorded step output (the JSON text a step returned); {} for anything else."""
    if not isinstance(output, str):
        return {}
    try:
        data = json.loads(output)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
