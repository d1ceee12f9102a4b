"""A tool batch: plan each call (interceptors, hooks, permission), pause or run them in parallel, post-process
in call order, and record exactly one result per call — whatever happens."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Mapping, Sequence
from functools import partial
from time import perf_counter
from typing import Any, NoReturn, TypeAlias

from hookloop._build import post_tool_call_info, tool_context, tool_ended, tool_result, tool_started
from hookloop._frozen import EMPTY, FrozenDict, freeze_object, thaw_object
from hookloop._nested import NestedCall, NestedOutcome, nested_call
from hookloop._run_base import _RunBase, cap_text
from hookloop.checkpoint import AllowAlways, Approve, Checkpoint, PendingCall, Reject, ResumeDecision
from hookloop.effects import Effect
from hookloop.errors import (
    Aborted,
    CheckpointError,
)
from hookloop.hooks._dispatch import Handler, carries, display_name, raised, settle
from hookloop.hooks._tool_inputs import PreToolCallInfo, refs_when_unshared
from hookloop.hooks._tool_inputs import make as _make
from hookloop.hooks.events import (
    NOTIFICATION,
    POST_TOOL_BATCH,
    POST_TOOL_CALL,
    PRE_TOOL_CALL,
    HookEvent,
)
from hookloop.hooks.results import (
    _PLAIN,
    Abort,
    Allow,
    Ask,
    Continue,
    Deny,
    Pause,
    Skip,
    Stop,
)
from hookloop.hooks.summaries import (
    BatchCallInfo,
    NotificationInfo,
    PostToolBatchInfo,
    PostToolCallInfo,
)
from hookloop.interceptors._base import (
    InterceptorChain,
    ToolCallView,
    ToolResultView,
)
from hookloop.items import ContentPart, Item, TextPart, ToolCall, ToolResult, adopt_parts, item_from_json
from hookloop.outcome import Outcome, Paused
from hookloop.stream import Usage
from hookloop.timeline import HookDecision
from hookloop.tools._base import Tool, ToolContext, ToolFailure, ToolInputError, ToolMeta, ToolOutput, render_output

__all__: list[str] = []

_UNSHARED = refs_when_unshared()
"""``sys.getrefcount`` of a pre_tool_call input only one local holds (None: counts cannot tell, and -1 never
matches)."""
_refs: Any = sys.getrefcount if _UNSHARED is not None else (lambda value: -1)
_PASSES = PRE_TOOL_CALL.passes
_POST_PASSES = POST_TOOL_CALL.passes


def _vote(
    handler: Handler, result: object, edits: list[tuple[Handler, Any]] | None
) -> tuple[tuple[Any, Handler] | None, list[tuple[Handler, Any]] | None]:
    """A pre_tool_call hook's answer other than the plain ``Continue()``: (its decision, if it decided, else
    None; the declared edits and votes so far, with this one's)."""
    cls = type(result)
    if cls is Continue:
        if not result.has_edit:  # type: ignore[attr-defined]
            return None, edits  # a Continue() built by force, not the shared one: still nothing to record
    elif cls not in _PASSES:
        return settle(PRE_TOOL_CALL, handler, result), edits
    if edits is None:
        edits = []
    edits.append((handler, result))
    return None, edits


def _lone_failed(c: _Call, exc: Exception, event: HookEvent[Any, Any]) -> NoReturn:
    """What awaiting what planning or post-processing ``c`` returned raised: a lone async hook's failure becomes
    its HookError (an Aborted stays as it is); anything else (from :meth:`_ToolBatch._plan_call` or
    ``_post_call``) is raised again."""
    single, c.lone = c.lone, None
    if single is None or isinstance(exc, Aborted):
        raise exc
    raise raised(event, single, exc) from exc


def _post_answer(handler: Handler, answer: object) -> tuple[list[tuple[Handler, Any]], tuple[Any, Handler] | None]:
    """A lone post_tool_call hook's answer other than the plain ``Continue()``: (its edits, its decision)."""
    if type(answer) not in _POST_PASSES:
        return [], settle(POST_TOOL_CALL, handler, answer)
    return ([(handler, answer)] if carries(answer) else []), None


class _Call:
    """One tool call of a batch while it is planned, run and post-processed."""

    __slots__ = (
        "args",
        "asked_by",
        "call",
        "child",
        "child_decisions",
        "child_usage",
        "denied",
        "executed",
        "input_edited_by",
        "lone",
        "meta",
        "reason",
        "result",
        "seconds",
        "state",
        "structured",
        "tool",
        "validated",
    )

    def __init__(self, call: ToolCall, tool: Tool | None) -> None:
        self.call = call
        self.tool = tool
        self.meta: ToolMeta = tool.meta if tool is not None else None  # type: ignore[assignment]
        """The tool's metadata, read once for the call (a tool's ``meta`` may be a property); None only for an
        unknown tool, a call that fails before it is planned."""
        self.args: FrozenDict = call.arguments
        self.validated: Mapping[str, object] | None = None
        self.state = "ready"
        self.reason = ""
        self.asked_by = ""
        self.result: ToolResult | None = None
        self.executed = False
        self.denied = False
        self.input_edited_by: str | None = None
        self.lone: Handler | None = None
        """While a lone async pre_tool_call or post_tool_call hook runs: that hook (its coroutine is what
        :meth:`_ToolBatch._plan` / ``_post`` returned): what it raises is that hook's failure."""
        self.seconds = 0.0
        self.structured: FrozenDict | None = None
        self.child: Checkpoint | None = None
        """A subagent call: the paused child's checkpoint (to pause with, or to resume)."""
        self.child_decisions: dict[str, ResumeDecision] | None = None
        self.child_usage: Usage | None = None

    def fail(self, message: str, **meta: object) -> None:
        self.state = "done"
        self.result = ToolResult(
            call_id=self.call.call_id,
            name=self.call.name,
            content=message,
            is_error=True,
            meta=freeze_object(meta) if meta else EMPTY,
        )

    def deny(self, reason: str, decided_by: str) -> None:
        """The permission policy (a rule or the mode) denied the call; denial observers hear of it."""
        self.fail(f"permission denied ({decided_by}): {reason}".rstrip(": "), denied_by=decided_by)
        self.denied, self.reason = True, reason

    def pending(self) -> PendingCall:
        return PendingCall(
            call_id=self.call.call_id,
            tool_name=self.call.name,
            arguments=self.args,
            state=self.state,  # type: ignore[arg-type]
            reason=self.reason,
            asked_by=self.asked_by,
            result=self.result,
            child=self.child if self.state == "subagent" else None,
        )


class _ToolBatch(_RunBase):
    """Runs the tool calls of one model reply (and of a resumed batch)."""

    # -- tools ---------------------------------------------------------------------------------------------

    async def _run_tool_batch(self, calls: list[_Call], *, planned: bool) -> Outcome | None:
        """Plan every call (interceptors, hooks, permission), pause if any needs a decision, else run the
        ready ones in parallel, post-process in call order, and append one result per call.

        Scheduling rule: ready calls run in parallel, except calls whose tool is ``sequential``
        (:class:`~hookloop.tools.ToolMeta`): those of one tool server (``meta.server``) run one after another
        in the model's order, as one chain beside the parallel calls."""
        w = self.w
        paused = False
        ending = "not executed: the run ended before this call ran"
        try:
            if not planned:
                for c in calls:
                    pending = self._plan(c)
                    if pending is not None:  # an interceptor or an async hook (or a watched hook) runs first
                        try:
                            answer = await pending
                        except Exception as exc:
                            _lone_failed(c, exc, PRE_TOOL_CALL)
                        if c.lone is not None:  # a lone async hook's own coroutine: its answer, to conclude
                            self._planned(c, answer)
            if w.approvers and any(c.state == "approval" for c in calls):
                await self._consult_approvers(calls)
            if w.denial_observers and any(c.denied for c in calls):
                await self._report_denials(calls)
            ready = []
            for c in calls:  # one pass (no generator per test): the waiting calls pause the batch
                state = c.state
                if state == "ready":
                    ready.append(c)
                elif state == "approval" or state == "paused":
                    paused = True
            if paused:
                outcome = self._pause_batch(calls)
                await self._notify_pause(outcome)
                return outcome
            if len(ready) == 1:
                await self._execute(ready[0])
            elif ready:
                async with asyncio.TaskGroup() as group:
                    chains: dict[str, list[_Call]] = {}
                    for c in ready:
                        meta = c.meta
                        if meta.sequential:
                            chains.setdefault(meta.server, []).append(c)
                        else:
                            group.create_task(self._execute(c))
                    for chain in chains.values():
                        group.create_task(self._execute_in_order(chain))
            subagent = False
            interceptors, hook_chains = w._interceptors, w.hooks.chains
            for c in calls:
                if c.executed:
                    if interceptors.post_tool_call or hook_chains[POST_TOOL_CALL.index]:
                        pending = self._post(c)
                        if pending is not None:  # an interceptor, an async hook, several, or a subscriber
                            try:
                                answer = await pending
                            except Exception as exc:
                                _lone_failed(c, exc, POST_TOOL_CALL)
                            if c.lone is not None:  # a lone async hook's own coroutine: apply its answer
                                self._posted(c, answer)
                elif c.state == "subagent":
                    subagent = True
            if subagent:  # a subagent paused: the batch pauses with it
                for c in calls:
                    if c.executed:
                        c.state, c.executed = "done", False
                paused = True
                return self._pause_batch(calls)  # the subagent notified (the parent's notification hooks ran)
            if w.hooks.chains[POST_TOOL_BATCH.index]:
                await self._post_batch(calls)
            return None
        except asyncio.CancelledError:
            ending = "cancelled: the run was cancelled before this call finished"
            raise
        except Aborted as exc:
            ending = f"not executed: the run was aborted ({exc.reason})"
            raise
        finally:
            if not paused:
                for c in calls:
                    if c.result is None:
                        c.fail(ending)
                    assert c.result is not None
                    w._append(c.result)

    def _plan(self, c: _Call) -> Awaitable[object] | None:
        """Plan one call of a reply — pre_tool_call interceptors, hooks, validation, the permission decision —
        as the batch does for each call: with no coroutine when nothing asynchronous runs first (no interceptor,
        and only sync hooks with nobody watching, or none), and then None; else what to await: a lone async
        hook's own coroutine (then ``c.lone`` is that hook; the batch hands its answer to :meth:`_planned`, and
        what it raises is that hook's HookError), or :meth:`_plan_call`, which plans the same way with the awaits.

        Sync hooks are called here as run_chain would call them. The input is immutable (see
        hooks._tool_inputs): one hook gets a new one nothing else holds; the next hook gets the same one unless
        a hook kept it or swapped its class, and then a new one."""
        w = self.w
        chain = w.hooks.chains[PRE_TOOL_CALL.index]
        if w._interceptors.pre_tool_call or (
            chain and (w.timeline.subscribers or (not chain.all_sync and len(chain) != 1))
        ):
            return self._plan_call(c)
        if self._unplannable(c):
            return None
        votes: list[tuple[str, str, str]] | tuple[()] | None = ()
        if chain:
            call, policy = c.call, w.permissions
            meta = c.meta
            values = (
                call.call_id, call.name, c.args,
                self.meta_snapshot if meta is self.meta_of_snapshot else self._snapshot(meta),
                self.turn, None if policy is None else policy._mode,  # (an exact str, without the property)
                self.run_id, self.session_id, self.agent_id, self.agent_type,
            )  # fmt: skip  # the order of hooks._tool_inputs.ORDER
            if len(chain) == 1:
                single = chain[0]
                fn = single.fn  # (a slot read: calling `single.fn(…)` would look the attribute up as a method)
                try:
                    result = fn(_make(values))
                except Aborted:
                    raise
                except Exception as exc:
                    raise raised(PRE_TOOL_CALL, single, exc) from exc
                if single.is_async:  # its coroutine, for the batch to await (no coroutine of ours around it)
                    c.lone = single
                    return result  # type: ignore[no-any-return]
                if result is not _PLAIN:  # the plain answer: nothing to record (what `carries` says)
                    votes = self._hook_votes(c, *_vote(single, result, None))
            else:
                info = None
                given: list[tuple[Handler, Any]] | None = None
                for handler in chain:
                    if info is None or type(info) is not PreToolCallInfo or _refs(info) != _UNSHARED:
                        info = _make(values)
                    fn = handler.fn
                    try:
                        result = fn(info)
                    except Aborted:
                        raise
                    except Exception as exc:
                        raise raised(PRE_TOOL_CALL, handler, exc) from exc
                    if result is not _PLAIN:
                        ruling, given = _vote(handler, result, given)
                        if ruling is not None:
                            break
                else:
                    ruling = None
                if given is not None or ruling is not None:
                    votes = self._hook_votes(c, ruling, given)
        if votes is not None:
            self._conclude(c, votes)
        return None

    def _planned(self, c: _Call, answer: object) -> None:
        """The answer of the lone async hook whose coroutine :meth:`_plan` returned: record it, then validate and
        decide."""
        single, c.lone = c.lone, None
        assert single is not None
        votes: list[tuple[str, str, str]] | tuple[()] | None = ()
        if answer is not _PLAIN:
            votes = self._hook_votes(c, *_vote(single, answer, None))
        if votes is not None:
            self._conclude(c, votes)

    async def _plan_call(self, c: _Call) -> None:
        """:meth:`_plan` when an interceptor or an async hook runs first, or someone watches the hooks."""
        if self._unplannable(c):
            return
        w = self.w
        call, tool = c.call, c.tool
        assert tool is not None
        meta = c.meta
        if w._interceptors.pre_tool_call:
            view = ToolCallView(
                call_id=call.call_id,
                tool_name=call.name,
                arguments=thaw_object(c.args),
                meta=meta,
                turn=self.turn,
                run_id=self.run_id,
            )
            await InterceptorChain.run(w._interceptors.pre_tool_call, view)
            c.args = freeze_object(view.arguments)
        chain = w.hooks.chains[PRE_TOOL_CALL.index]
        votes: list[tuple[str, str, str]] | tuple[()] | None = ()
        if chain:
            policy = w.permissions
            values = (  # as in _plan
                call.call_id, call.name, c.args,
                self.meta_snapshot if meta is self.meta_of_snapshot else self._snapshot(meta),
                self.turn, None if policy is None else policy._mode,
                self.run_id, self.session_id, self.agent_id, self.agent_type,
            )  # fmt: skip
            if w.timeline.subscribers:  # each hook's decision also becomes a HookDecision on the timeline
                edits: list[tuple[Handler, Any]] = []
                fresh = partial(_make, values)
                decided = await self.hooks(PRE_TOOL_CALL, fresh(), edits, call.call_id, fresh)
                if edits or decided is not None:
                    votes = self._hook_votes(c, decided, edits)
            elif len(chain) == 1:  # nobody watching: as in _plan, with the await
                single = chain[0]
                fn = single.fn
                try:
                    result = fn(_make(values))
                    if single.is_async:
                        result = await result
                except Aborted:
                    raise
                except Exception as exc:
                    raise raised(PRE_TOOL_CALL, single, exc) from exc
                if result is not _PLAIN:
                    votes = self._hook_votes(c, *_vote(single, result, None))
            else:
                info = None
                given: list[tuple[Handler, Any]] | None = None
                for handler in chain:
                    if info is None or type(info) is not PreToolCallInfo or _refs(info) != _UNSHARED:
                        info = _make(values)
                    fn = handler.fn
                    try:
                        result = fn(info)
                        if handler.is_async:
                            result = await result
                    except Aborted:
                        raise
                    except Exception as exc:
                        raise raised(PRE_TOOL_CALL, handler, exc) from exc
                    if result is not _PLAIN:
                        ruling, given = _vote(handler, result, given)
                        if ruling is not None:
                            break
                else:
                    ruling = None
                if given is not None or ruling is not None:
                    votes = self._hook_votes(c, ruling, given)
        if votes is not None:
            self._conclude(c, votes)

    def _conclude(self, c: _Call, votes: list[tuple[str, str, str]] | tuple[()]) -> None:
        """Validation, then the permission decision with the hooks' votes (with no policy and no vote the
        decision is "allow": nothing to decide)."""
        w = self.w
        if self._validate(c) and (votes or w.permissions is not None or w._outer_policies):
            self._decide(c, votes)

    def _hook_votes(
        self, c: _Call, decided: tuple[Any, Handler] | None, edits: list[tuple[Handler, Any]] | None
    ) -> list[tuple[str, str, str]] | None:
        """After the pre_tool_call hooks, when one did more than pass: apply their declared edits, and return
        their permission votes — or None when one decided the call (skipped, denied, paused; Abort raises)."""
        votes: list[tuple[str, str, str]] = []
        for handler, result in edits or ():
            if isinstance(result, Ask):
                votes.append(("ask", result.reason, handler.name))
            elif isinstance(result, Allow):
                votes.append(("allow", result.reason, handler.name))
            else:
                self._reject_edits(PRE_TOOL_CALL, handler, result, allowed=("updated_input",))
            updated = result.updated_input
            if updated is not None:  # frozen anew: the hook may still hold what it returned
                c.args = freeze_object(updated)
                c.input_edited_by = handler.name
        if decided is None:
            return votes
        result, handler = decided
        if isinstance(result, Skip):
            c.fail(f"skipped by hook {handler.name!r}: {result.reason}", skipped_by=handler.name)
        elif isinstance(result, Deny):
            c.fail(f"permission denied by hook {handler.name!r}: {result.reason}", denied_by=handler.name)
        elif isinstance(result, Abort):
            raise Aborted(result.reason, hook=handler.name, event=PRE_TOOL_CALL.name)
        else:
            assert isinstance(result, Pause)
            c.state, c.reason, c.asked_by = "paused", result.reason, f"hook {handler.name!r}"
        return None

    def _unplannable(self, c: _Call) -> bool:
        """A call of an unknown tool or with arguments that are not a JSON object fails here (True)."""
        call = c.call
        if c.tool is None:
            names = ", ".join(sorted(t.meta.name for t in self.w._tools)) or "none"
            c.fail(f"unknown tool {call.name!r}; the available tools are: {names}")
            return True
        if call.raw_arguments is not None:
            c.fail(f"the arguments for {call.name!r} are not a valid JSON object: {call.raw_arguments[:500]!r}")
            return True
        return False

    def _decide(self, c: _Call, votes: list[tuple[str, str, str]] | tuple[()]) -> None:
        """The permission decision for a validated call, with the hooks' votes: deny fails it, ask waits."""
        assert c.tool is not None
        behavior, reason, decided_by = self.w._decide_permission(c.tool, c.args, votes)
        if behavior == "deny":
            c.deny(reason, decided_by)
        elif behavior == "ask":
            c.state, c.reason, c.asked_by = "approval", reason, decided_by

    def _validate(self, c: _Call) -> bool:
        assert c.tool is not None
        try:
            c.validated = c.tool.validate(c.args)
        except ToolInputError as exc:
            by = f" (after hook {c.input_edited_by!r} replaced the input)" if c.input_edited_by else ""
            c.fail(f"{exc}{by}")
            return False
        return True

    async def _consult_approvers(self, calls: list[_Call]) -> None:
        """Before pausing: each call a permission rule or hook asked about goes to the approvers in order (a
        terminal prompt, a PermissionRequest command hook, a policy service); the first decision wins, and
        calls nobody decided still pause. A hook's Pause is never answered here."""
        w = self.w
        for c in calls:
            if c.state != "approval":
                continue
            for approver in w.approvers:
                pending = c.pending()  # each approver its own: what one changes by force, the next never sees
                name = display_name(approver)
                started = perf_counter()
                decision = await approver(pending)
                if decision is None:
                    continue
                if w.timeline.subscribers:
                    w.timeline.emit(
                        HookDecision(
                            event="permission_request",
                            hook=name,
                            source="approver",
                            decision=type(decision).__name__,
                            reason=getattr(decision, "reason", None),
                            seconds=perf_counter() - started,
                            call_id=c.call.call_id,
                        )
                    )
                if isinstance(decision, Reject):
                    c.fail(f"denied by {name}: {decision.reason}", denied_by=name)
                else:
                    if isinstance(decision, AllowAlways):
                        w._allow_always(c.call.name, decision.rule, c.args)
                    c.state = "ready"
                    if isinstance(decision, Approve) and decision.updated_input is not None:
                        self._approve_checked(c, decision.updated_input, name)
                break

    async def _report_denials(self, calls: list[_Call]) -> None:
        """Each call the permission policy denied goes to the denial observers (PermissionDenied hooks); what
        they answer is appended to the denial the model reads."""
        for c in calls:
            if not c.denied:
                continue
            c.denied = False  # reported once
            notes = [note for observer in self.w.denial_observers if (note := await observer(c.pending()))]
            if notes and c.result is not None:
                c.result = _rebuild(c.result, "\n\n".join([c.result.content, *notes]), True, dict(c.result.meta))

    def _approve_checked(self, c: _Call, updated: FrozenDict | None, approver: str) -> None:
        """An approval that skipped the usual planning (a hook's pause, or a rewritten input): validate the
        input and let deny rules see it — the approval answers an ask, never a deny."""
        assert c.tool is not None
        if updated is not None:  # frozen anew: the approver may still hold what it returned
            c.args, c.input_edited_by = freeze_object(updated), approver
        if not self._validate(c):
            return
        behavior, reason, decided_by = self.w._decide_permission(c.tool, c.args, [])
        if behavior == "deny":
            c.deny(reason, decided_by)

    def _pause_batch(self, calls: list[_Call]) -> Paused:
        w = self.w
        waiting = [c for c in calls if c.state in ("approval", "paused", "subagent")]
        reason = "; ".join(
            f"{c.call.name}: {c.reason}" if c.reason else f"{c.call.name}: approval needed ({c.asked_by})"
            for c in waiting
        )
        checkpoint = w._checkpoint(self, batch=tuple(c.pending() for c in calls), kind="tool_calls", reason=reason)
        return Paused(run_id=self.run_id, checkpoint=checkpoint, reason=reason, pending=checkpoint.pending)

    async def _notify_pause(self, paused: Paused) -> None:
        chain = self.w.hooks.chains[NOTIFICATION.index]
        if chain:
            info = NotificationInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                text=f"approval needed: {paused.reason}",
                source="hookloop",
                kind="permission_prompt",
            )
            await self.w._fire_observer(NOTIFICATION, chain.handlers, info)

    async def _execute_in_order(self, chain: list[_Call]) -> None:
        """The sequential calls of one tool server, one after another in the model's order (ToolMeta.sequential);
        a failed call does not stop the next (each is answered on its own)."""
        for c in chain:
            await self._execute(c)

    async def _execute(self, c: _Call) -> None:
        w = self.w
        tool, call = c.tool, c.call
        assert tool is not None
        assert c.validated is not None
        policy = w.permissions
        timeline = w.timeline
        meta = c.meta
        ctx = tool_context(
            self.run_id,
            self.session_id,
            call.call_id,
            call.name,
            self.turn,
            w.workspace,
            None if policy is None and not w._outer_policies else w._read_filter(meta.name, c.args),
            timeline.emit if timeline.subscribers else None,
        )
        if timeline.subscribers:
            timeline.emit(tool_started(call.call_id, call.name, c.args))
        started = perf_counter()
        if meta.performs_effects:
            answer = await self._execute_nested(c, tool, ctx)
            if c.child is not None:  # the subagent paused: this call waits in the checkpoint
                c.state, c.reason, c.asked_by = "subagent", c.child.reason, f"subagent {call.name!r}"
                return
        elif self.effects is None:
            answer = await _answer(tool, c.validated, ctx, w.tool_timeout)
        else:
            answer = await self.effects.perform(
                Effect(
                    kind="tool",
                    key=f"tool:{self.turn}:{call.call_id}",
                    describe={
                        "turn": self.turn,
                        "call_id": call.call_id,
                        "tool": call.name,
                        "arguments": thaw_object(c.args),
                        "idempotency_key": ctx.idempotency_key,
                    },
                    perform=partial(_answer, tool, c.validated, ctx, w.tool_timeout),
                    encode=_answer_to_json,
                    decode=_answer_from_json,
                )
            )
        content, is_error, parts, structured = answer
        if structured is not None:
            c.structured = structured
        c.executed = True
        c.seconds = perf_counter() - started
        notes = (
            EMPTY
            if c.input_edited_by is None
            else freeze_object({"input_edited_by": c.input_edited_by, "executed_arguments": thaw_object(c.args)})
        )
        c.result = tool_result(call.call_id, call.name, content, is_error, notes, parts)
        if timeline.subscribers:
            timeline.emit(tool_ended(call.call_id, call.name, is_error, c.seconds))

    async def _execute_nested(self, c: _Call, tool: Tool, ctx: ToolContext) -> _ToolAnswer:
        """A tool that performs its own effects (a subagent): called directly, with what it needs from this run;
        its usage rolls up into the run's, and a child that paused leaves its checkpoint in ``c.child``."""
        assert c.validated is not None
        resume, c.child = c.child, None
        token = nested_call.set(
            NestedCall(
                worker=self.w,
                run_id=self.run_id,
                call_id=c.call.call_id,
                turn=self.turn,
                resume=resume,
                decisions=c.child_decisions,
                fork=self.forked,
            )
        )
        try:
            answer = await _answer(tool, c.validated, ctx, None, c)
        finally:
            nested_call.reset(token)
        if c.child_usage is not None:
            self.usage = self.usage + c.child_usage
        return answer

    def _post(self, c: _Call) -> Awaitable[object] | None:
        """post_tool_call for one executed call: with no coroutine when one sync hook runs and nobody watches
        (the common case), and then None; else what to await: a lone async hook's own coroutine (then ``c.lone``
        is that hook, and the batch hands its answer to :meth:`_posted`), or :meth:`_post_call` (interceptors,
        several hooks, or a subscriber). Called only when there is an interceptor or a hook (the batch checks)."""
        w = self.w
        chain = w.hooks.chains[POST_TOOL_CALL.index]
        if w._interceptors.post_tool_call or w.timeline.subscribers or len(chain) != 1:
            return self._post_call(c)
        result = c.result
        assert result is not None
        single = chain[0]
        fn = single.fn
        try:
            answer = fn(self._post_info(c, result, result.content, result.is_error))
        except Aborted:
            raise
        except Exception as exc:
            raise raised(POST_TOOL_CALL, single, exc) from exc
        if single.is_async:  # its coroutine, for the batch to await (no coroutine of ours around it)
            c.lone = single
            return answer  # type: ignore[no-any-return]
        if answer is not _PLAIN:  # else it passed, and nothing changed the result: nothing to rebuild
            c.lone = single
            self._posted(c, answer)
        return None

    def _posted(self, c: _Call, answer: object) -> None:
        """The answer of the lone post_tool_call hook ``c.lone`` (sync, or async: the coroutine :meth:`_post`
        returned), no interceptor having changed the result: its edits or decision."""
        single, c.lone = c.lone, None
        result = c.result
        assert single is not None
        assert result is not None
        if answer is not _PLAIN:
            edits, decided = _post_answer(single, answer)
            self._post_apply(c, result, result.content, result.is_error, result.parts, None, edits, decided)

    def _post_info(self, c: _Call, result: ToolResult, content: str, is_error: bool) -> PostToolCallInfo:
        """The post_tool_call input for ``c`` (``content`` and ``is_error`` as the interceptors left them)."""
        tool_meta = c.meta
        return post_tool_call_info(
            self.run_id,
            self.session_id,
            self.turn,
            result.call_id,
            result.name,
            c.args,
            # the snapshot: PostToolCallInfo.meta makes a new copy of it when first read (a hook may change its own)
            self.meta_snapshot if tool_meta is self.meta_of_snapshot else self._snapshot(tool_meta),
            content,
            is_error,
            c.seconds,
            c.structured if content == result.content else None,
            self.agent_id,
            self.agent_type,
        )

    async def _post_call(self, c: _Call) -> None:
        """:meth:`_post` when an interceptor, an async hook or several hooks run, or someone watches."""
        w = self.w
        result = c.result
        assert result is not None
        assert c.tool is not None
        meta: dict[str, object] | None = None  # the result's meta, copied when something adds to it
        content, is_error, parts = result.content, result.is_error, result.parts
        if w._interceptors.post_tool_call:
            view = ToolResultView(
                call_id=result.call_id,
                tool_name=result.name,
                arguments=thaw_object(c.args),
                content=content,
                is_error=is_error,
                meta=c.meta,
                turn=self.turn,
                run_id=self.run_id,
                parts=parts,
            )
            await InterceptorChain.run(w._interceptors.post_tool_call, view)
            if view.parts is not parts:
                parts = adopt_parts(view.parts, "post_tool_call interceptor: parts")  # exact, read-only
            elif view.content != content:
                parts = ()  # the text was rewritten: the model gets the rewrite, never the richer original
            content, is_error = view.content, view.is_error
            meta = dict(result.meta)
            meta.update(view.notes)
        post_chain = w.hooks.chains[POST_TOOL_CALL.index]
        if post_chain:
            info = self._post_info(c, result, content, is_error)
            if len(post_chain) == 1 and not w.timeline.subscribers:  # one hook, nobody watching: as run_chain
                single = post_chain[0]
                fn = single.fn
                try:
                    answer = fn(info)
                    if single.is_async:
                        answer = await answer
                except Aborted:
                    raise
                except Exception as exc:
                    raise raised(POST_TOOL_CALL, single, exc) from exc
                if answer is _PLAIN and meta is None:
                    return  # it passed, and no interceptor changed the result: nothing to rebuild
                edits, decided = _post_answer(single, answer)
                self._post_apply(c, result, content, is_error, parts, meta, edits, decided)
                return
            edits = []
            decided = await self.hooks(POST_TOOL_CALL, info, edits, result.call_id)
            self._post_apply(c, result, content, is_error, parts, meta, edits, decided)
            return
        self._post_apply(c, result, content, is_error, parts, meta, [], None)

    def _post_apply(
        self,
        c: _Call,
        result: ToolResult,
        content: str,
        is_error: bool,
        parts: tuple[ContentPart, ...],
        meta: dict[str, object] | None,
        edits: list[tuple[Handler, Any]],
        decided: tuple[Any, Handler] | None,
    ) -> None:
        """After post_tool_call's interceptors and hooks: apply the hooks' edits (replaced output, added
        context), then their decision (Abort raises, Stop finishes the run after this batch), and rebuild the
        result if anything changed it."""
        w = self.w
        contexts: list[str] = []
        added_by: list[str] = []
        for handler, edit in edits:
            self._reject_edits(POST_TOOL_CALL, handler, edit, allowed=("replace_output", "additional_context"))
            if edit.replace_output is not None:
                content = cap_text(edit.replace_output, w.output_cap, "replaced tool output")
                parts = ()
                if meta is None:
                    meta = dict(result.meta)
                meta["output_replaced_by"] = handler.name
            if edit.additional_context:
                contexts.append(self._context_block(handler, POST_TOOL_CALL, edit.additional_context))
                added_by.append(handler.name)
        if contexts:
            content = "\n\n".join([content, *contexts])
            if parts:
                parts = (*parts, *(TextPart(text=context) for context in contexts))
            if meta is None:
                meta = dict(result.meta)
            meta["context_added_by"] = added_by
        if decided is not None:
            decision, handler = decided
            if isinstance(decision, Abort):
                c.result = _rebuild(result, content, is_error, dict(result.meta) if meta is None else meta, parts)
                raise Aborted(decision.reason, hook=handler.name, event=POST_TOOL_CALL.name)
            assert isinstance(decision, Stop)
            if self.stop is None:
                self.stop = (handler.name, decision.reason)
        if (
            content is not result.content
            or is_error is not result.is_error
            or parts is not result.parts
            or (meta is not None and meta != dict(result.meta))
        ):
            c.result = _rebuild(result, content, is_error, dict(result.meta) if meta is None else meta, parts)

    async def _post_batch(self, calls: list[_Call]) -> None:
        """post_tool_batch: the whole batch, answered; context goes after the last result, Stop finishes."""
        summary = []
        for c in calls:
            if c.result is None:
                c.fail("not executed: the run ended before this call ran")
            assert c.result is not None
            summary.append(
                BatchCallInfo(
                    call_id=c.call.call_id,
                    tool_name=c.call.name,
                    arguments=c.args,
                    content=c.result.content,
                    is_error=c.result.is_error,
                )
            )
        info = PostToolBatchInfo(run_id=self.run_id, session_id=self.session_id, turn=self.turn, calls=tuple(summary))
        edits: list[tuple[Handler, Any]] = []
        decided = await self.hooks(POST_TOOL_BATCH, info, edits)
        contexts: list[str] = []
        for handler, edit in edits:
            self._reject_edits(POST_TOOL_BATCH, handler, edit, allowed=("additional_context",))
            if edit.additional_context:
                contexts.append(self._context_block(handler, POST_TOOL_BATCH, edit.additional_context))
        if contexts:
            last = calls[-1]
            assert last.result is not None
            meta: dict[str, object] = dict(last.result.meta)
            meta["batch_context_added_by"] = [h.name for h, e in edits if e.additional_context]
            rich = last.result.parts
            last.result = _rebuild(
                last.result,
                "\n\n".join([last.result.content, *contexts]),
                last.result.is_error,
                meta,
                (*rich, *(TextPart(text=context) for context in contexts)) if rich else (),
            )
        if decided is not None:
            decision, handler = decided
            if isinstance(decision, Abort):
                raise Aborted(decision.reason, hook=handler.name, event=POST_TOOL_BATCH.name)
            if self.stop is None:
                self.stop = (handler.name, decision.reason)

    # -- resume --------------------------------------------------------------------------------------------

    async def resume_batch(self, checkpoint: Checkpoint, decisions: Mapping[str, ResumeDecision]) -> Outcome | None:
        """Continue a paused batch. Nothing in the checkpoint approves anything: each call that is not done is
        planned again against the current policy (rules and mode, on the arguments that will execute), and
        only ``decisions`` (or the approvers) answer an ask; a hook's pause or ask is answered by its decision."""
        w = self.w
        calls: list[_Call] = []
        waiting: dict[str, tuple[str, str, str]] = {}  # call id → (state, reason, asked by) without a decision
        for pending in checkpoint.batch:
            c = _Call(_find_call(checkpoint.history, pending.call_id), w._tools.get(pending.tool_name))
            c.args = pending.arguments
            calls.append(c)
            if pending.state == "done":
                c.state, c.result = "done", pending.result
                continue
            if c.tool is None:
                c.fail(f"tool {pending.tool_name!r} is not available in the resuming Worker")
                continue
            if pending.state == "subagent" and pending.child is not None:
                self._resume_child(c, pending.child, decisions)
                continue
            decision = decisions.get(pending.call_id)
            if pending.needs_decision:
                waiting[pending.call_id] = (pending.state, pending.reason, pending.asked_by)
            if isinstance(decision, Reject):
                c.fail(f"denied by the user: {decision.reason}", denied_by="user")
                continue
            if isinstance(decision, AllowAlways):
                w._allow_always(pending.tool_name, decision.rule, c.args)
            if isinstance(decision, Approve) and decision.updated_input is not None:
                c.args, c.input_edited_by = decision.updated_input, "user"
            if not self._validate(c):
                continue
            behavior, reason, decided_by = w._decide_permission(c.tool, c.args, [])
            if behavior == "deny":
                c.deny(reason, decided_by)
            elif behavior == "ask":
                waiting[pending.call_id] = ("approval", reason, decided_by)
                if decision is None:
                    c.state, c.reason, c.asked_by = "approval", reason, decided_by
        if w.approvers and any(c.state == "approval" for c in calls):
            await self._consult_approvers(calls)
        if w.denial_observers and any(c.denied for c in calls):
            await self._report_denials(calls)
        if any(c.state == "approval" for c in calls):
            # Pausing again: a decision given now covers this resume only, so each call that needed one
            # waits for a decision again in the new checkpoint.
            for c in calls:
                if c.state == "ready" and c.call.call_id in waiting:
                    c.state, c.reason, c.asked_by = waiting[c.call.call_id]
                elif c.state == "ready" and c.child is not None:
                    c.state = "subagent"
            outcome = self._pause_batch(calls)
            await self._notify_pause(outcome)
            return outcome
        return await self._run_tool_batch(calls, planned=True)

    def _resume_child(self, c: _Call, child: Checkpoint, decisions: Mapping[str, ResumeDecision]) -> None:
        """A call whose subagent paused: it runs again and resumes the child with the decisions meant for it
        (``<call id>/<child call id>``, the prefix taken off). The call was cleared when it started; it is still
        checked against the current policy: a deny now denies it (the child is abandoned)."""
        assert c.tool is not None
        if not self._validate(c):
            return
        if not c.meta.performs_effects:
            c.fail(f"tool {c.call.name!r} of the resuming Worker does not run subagents; the paused one is abandoned")
            return
        behavior, reason, decided_by = self.w._decide_permission(c.tool, c.args, [])
        if behavior == "deny":
            c.deny(reason, decided_by)
            return
        prefix = f"{c.call.call_id}/"
        c.child = child
        c.child_decisions = {k[len(prefix) :]: v for k, v in decisions.items() if k.startswith(prefix)}


def _structured(value: Mapping[str, object]) -> FrozenDict | None:
    """A tool's structured result, frozen; one that is not JSON is dropped with a warning (never an error: the
    model-facing result is what counts)."""
    try:
        return freeze_object(value)
    except (TypeError, ValueError) as exc:
        logging.getLogger("hookloop").warning("a tool's structured result is not JSON and is left out: %s", exc)
        return None


def _rebuild(
    result: ToolResult, content: str, is_error: bool, meta: dict[str, object], parts: tuple[ContentPart, ...] = ()
) -> ToolResult:
    return ToolResult(
        call_id=result.call_id,
        name=result.name,
        content=content,
        is_error=is_error,
        id=result.id,
        meta=freeze_object(meta) if meta else EMPTY,
        parts=parts,
    )


def _find_call(history: Sequence[Item], call_id: str) -> ToolCall:
    for item in reversed(history):
        if isinstance(item, ToolCall) and item.call_id == call_id:
            return item
    raise CheckpointError(f"checkpoint.batch: call {call_id!r} is not in the history")


_ToolAnswer: TypeAlias = tuple[str, bool, tuple[ContentPart, ...], FrozenDict | None]
"""What one tool execution answered: (content, is_error, parts, structured) — a tool effect's outcome."""


async def _answer(
    tool: Tool, validated: Any, ctx: ToolContext, limit: float | None, nested: _Call | None = None
) -> _ToolAnswer:
    """Run the tool once and turn whatever it returns or raises into its answer (a failure is an error answer).
    ``nested``: the call of a tool that performs its own effects; a :class:`NestedOutcome` leaves its usage and
    paused child there."""
    name = ctx.tool_name
    try:
        if limit is None:
            value = await tool.execute(validated, ctx)
        else:
            async with asyncio.timeout(limit):
                value = await tool.execute(validated, ctx)
        if type(value) is str:  # what render_output makes of text
            return value, False, (), None
        if isinstance(value, NestedOutcome):
            if nested is not None:
                nested.child_usage, nested.child = value.usage, value.paused
            value = value.output
        content, is_error, parts = render_output(value)
        structured = (
            _structured(value.structured) if isinstance(value, ToolOutput) and value.structured is not None else None
        )
        return content, is_error, parts, structured
    except ToolFailure as exc:
        return str(exc), True, (), None
    except TimeoutError:
        return f"tool {name!r} timed out after {limit} seconds", True, (), None
    except Exception as exc:
        return f"tool {name!r} failed: {type(exc).__name__}: {exc}", True, (), None


def _answer_to_json(answer: _ToolAnswer) -> object:
    content, is_error, parts, structured = answer
    result = ToolResult(call_id="-", name="-", content=content, is_error=is_error, parts=parts, id="-")
    return {"result": result.to_json(), "structured": None if structured is None else thaw_object(structured)}


def _answer_from_json(data: object) -> _ToolAnswer:
    if not isinstance(data, Mapping):
        raise ValueError("recorded tool answer: expected an object")
    result = item_from_json(data.get("result"), where="recorded tool answer")
    structured = data.get("structured")
    if not isinstance(result, ToolResult) or not (structured is None or isinstance(structured, Mapping)):
        raise ValueError("recorded tool answer: expected a tool result and a structured object or null")
    return result.content, result.is_error, result.parts, None if structured is None else freeze_object(structured)
