"""The turn machine: one run (or resume) of a Worker, one method per concern.

``_Run.loop`` → ``_run_turn`` → ``_run_model_step`` (stream) → ``_run_tool_batch`` → ``_plan_call`` /
``_execute`` / ``_post`` → ``_turn_end``. Invariants kept here (SPEC §2):

- interceptors run before hooks at each point; the permission decision comes after pre_tool_call hooks;
- every tool call in the history gets exactly one result, whatever happens (finally-blocks fill the gaps);
- nothing per turn copies, serialises or re-scans the whole history.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

from hookloop._frozen import EMPTY, FrozenDict, freeze_object, thaw_object
from hookloop.checkpoint import AllowAlways, Checkpoint, PendingCall, Reject, ResumeDecision
from hookloop.errors import (
    Aborted,
    CheckpointError,
    ClientError,
    ContextWindowExceeded,
    HookError,
    HookloopError,
    MaxTurnsExceeded,
    StopHookLoopError,
)
from hookloop.hooks._dispatch import Handler, dispatch, dispatch_sync, display_name, raised, run_chain, settle
from hookloop.hooks.events import (
    NOTIFICATION,
    ON_PROMPT_SUBMIT,
    ON_STREAM_CHUNK,
    ON_STREAM_COMPLETE,
    ON_TEXT_DELTA,
    ON_TOOL_CALL_DELTA,
    ON_TURN_END,
    POST_COMPACT,
    POST_TOOL_BATCH,
    POST_TOOL_CALL,
    PRE_COMPACT,
    PRE_LLM_REQUEST,
    PRE_TOOL_CALL,
    SESSION_START,
    HookEvent,
)
from hookloop.hooks.results import (
    Abort,
    Allow,
    Ask,
    Cancel,
    Continue,
    ContinueWithMessages,
    Deny,
    Pause,
    Skip,
    Stop,
)
from hookloop.hooks.summaries import (
    BatchCallInfo,
    NotificationInfo,
    PostCompactInfo,
    PostToolBatchInfo,
    PostToolCallInfo,
    PreCompactInfo,
    PreLlmRequestInfo,
    PreToolCallInfo,
    PromptSubmitInfo,
    SessionStartInfo,
    StreamCompleteInfo,
    TurnEndInfo,
)
from hookloop.interceptors._base import (
    COMPACT,
    CompactionContext,
    InterceptorChain,
    RequestContext,
    ToolCallView,
    ToolResultView,
    TurnEndView,
)
from hookloop.items import Item, Message, Reasoning, TextPart, ToolCall, ToolResult
from hookloop.outcome import Finished, Outcome, Paused
from hookloop.providers.base import LLMRequest
from hookloop.stream import (
    BlockStart,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from hookloop.timeline import HookDecision, ToolEnded, ToolStarted
from hookloop.tools._base import Tool, ToolContext, ToolFailure, ToolInputError, render_output

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__: list[str] = []


def cap_text(text: str, cap: int, what: str) -> str:
    """Cap ``text`` at ``cap`` characters, marking the cut (never silent)."""
    if len(text) <= cap:
        return text
    cut = len(text) - cap
    return f"{text[:cap]}\n[… {cut} characters cut by hookloop: {what} is capped at {cap} characters]"


def describe(result: object) -> tuple[str, str | None]:
    """(decision name, reason or edit summary) for the timeline and transcript."""
    name = type(result).__name__
    if isinstance(result, Continue):
        edits = [
            k
            for k, v in (
                ("updated_input", result.updated_input),
                ("additional_context", result.additional_context),
                ("replace_output", result.replace_output),
            )
            if v is not None
        ]
        return name, ", ".join(edits) or None
    if isinstance(result, ContinueWithMessages):
        return name, " / ".join(i.text for i in result.items if isinstance(i, Message)) or None
    reason = getattr(result, "reason", None)
    return name, reason if isinstance(reason, str) else None


class _Block:
    __slots__ = ("call_id", "kind", "name", "parts", "redacted", "signature")

    def __init__(self, kind: str, call_id: str | None = None, name: str | None = None) -> None:
        self.kind = kind
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.signature: str | None = None
        self.redacted: str | None = None


class _Reply:
    """What one stream has built so far: blocks by index, usage, and the current text block's ``append``."""

    __slots__ = ("blocks", "count", "provider", "text_append", "text_index", "usage")

    def __init__(self, provider: str) -> None:
        self.blocks: dict[int, _Block] = {}
        self.count = 0  # events other than text deltas (each of those adds one part; counted at the end)
        self.usage: Usage | None = None
        self.text_index = -1
        self.text_append: Any = None
        self.provider = provider

    def take(self, event: StreamEvent) -> None:
        """Record one event (the fast paths handle text deltas of the current block themselves)."""
        cls = event.__class__
        if cls is TextDelta:
            text: TextDelta = event  # type: ignore[assignment]
            block = self.blocks.get(text.index)
            if block is None:
                self.blocks[text.index] = block = _Block("text")
            self.text_index, self.text_append = text.index, block.parts.append
            block.parts.append(text.text)
            return
        self.count += 1
        if cls is ToolCallDelta:
            fragment: ToolCallDelta = event  # type: ignore[assignment]
            try:
                self.blocks[fragment.index].parts.append(fragment.fragment)
            except KeyError:
                raise ClientError(
                    f"the provider sent tool-call JSON for block {fragment.index} before starting it",
                    provider=self.provider,
                ) from None
        elif cls is BlockStart:
            start: BlockStart = event  # type: ignore[assignment]
            self.blocks[start.index] = _Block(start.kind, start.call_id, start.name)
            if start.index == self.text_index:
                self.text_index = -1
        elif cls is ThinkingDelta:
            thinking: ThinkingDelta = event  # type: ignore[assignment]
            block = self.blocks.get(thinking.index)
            if block is None:
                self.blocks[thinking.index] = block = _Block("thinking")
            if thinking.text:
                block.parts.append(thinking.text)
            if thinking.signature is not None:
                block.signature = thinking.signature
            if thinking.redacted is not None:
                block.redacted = thinking.redacted
        elif cls is UsageEvent:
            reported: UsageEvent = event  # type: ignore[assignment]
            self.usage = reported.usage if self.usage is None else self.usage + reported.usage
        elif cls is StreamError:
            error: StreamError = event  # type: ignore[assignment]
            raise ClientError(
                f"{self.provider} stream error ({error.kind}): {error.message}",
                provider=self.provider,
                retryable=error.retryable,
            )

    @property
    def event_count(self) -> int:
        return self.count + sum(len(b.parts) for b in self.blocks.values() if b.kind == "text")


class _Call:
    """One tool call of a batch while it is planned, run and post-processed."""

    __slots__ = (
        "args",
        "asked_by",
        "call",
        "executed",
        "input_edited_by",
        "reason",
        "result",
        "seconds",
        "state",
        "tool",
        "validated",
    )

    def __init__(self, call: ToolCall, tool: Tool | None) -> None:
        self.call = call
        self.tool = tool
        self.args: FrozenDict = call.arguments
        self.validated: Mapping[str, object] | None = None
        self.state = "ready"
        self.reason = ""
        self.asked_by = ""
        self.result: ToolResult | None = None
        self.executed = False
        self.input_edited_by: str | None = None
        self.seconds = 0.0

    def fail(self, message: str, **meta: object) -> None:
        self.state = "done"
        self.result = ToolResult(
            call_id=self.call.call_id,
            name=self.call.name,
            content=message,
            is_error=True,
            meta=freeze_object(meta) if meta else EMPTY,
        )

    def pending(self) -> PendingCall:
        return PendingCall(
            call_id=self.call.call_id,
            tool_name=self.call.name,
            arguments=self.args,
            state=self.state,  # type: ignore[arg-type]
            reason=self.reason,
            asked_by=self.asked_by,
            result=self.result,
        )


class _Run:
    """The state of one run or resume."""

    def __init__(
        self,
        worker: Worker,
        run_id: str,
        *,
        turn: int = 0,
        forced: int = 0,
        usage: Usage | None = None,
        run_start: int = 0,
    ) -> None:
        self.w = worker
        self.run_id = run_id
        self.session_id = worker.session_id
        self.turn = turn
        self.forced = forced
        self.usage = usage or Usage()
        self.run_start = run_start
        self.last_text = ""
        self.last_sent = run_start
        self.stop: tuple[str, str] | None = None
        self.cancel_requested = False

    # -- hooks -----------------------------------------------------------------------------------------

    def _observer(self, call_id: str | None = None) -> Any:
        timeline = self.w.timeline
        if not timeline.subscribers:
            return None

        def observe(event: HookEvent[Any, Any], handler: Handler, result: object, seconds: float) -> None:
            decision, reason = describe(result)
            timeline.emit(
                HookDecision(
                    event=event.name,
                    hook=handler.name,
                    source=handler.source,
                    decision=decision,
                    reason=reason,
                    seconds=seconds,
                    call_id=call_id,
                )
            )

        return observe

    async def hooks(
        self,
        event: HookEvent[Any, Any],
        inp: object,
        edits: list[tuple[Handler, Any]] | None = None,
        call_id: str | None = None,
    ) -> tuple[Any, Handler] | None:
        return await run_chain(event, self.w.hooks.chains[event.index], inp, edits, self._observer(call_id))

    def _context_block(self, handler: Handler, event: HookEvent[Any, Any], text: str) -> str:
        """Hook-added context as the model sees it: capped (the cut marked) and tagged with its origin."""
        body = cap_text(text, self.w.context_cap, "additional context from a hook")
        return f'<hook-context hook="{handler.name}" event="{event.name}">\n{body}\n</hook-context>'

    def _context_item(self, handler: Handler, event: HookEvent[Any, Any], text: str) -> Message:
        return Message.user(
            self._context_block(handler, event, text),
            meta={"source": "hook_context", "hook": handler.name, "event": event.name},
        )

    # -- start ---------------------------------------------------------------------------------------------

    async def session_start(self, source: Literal["startup", "resume"], prompt: str | None = None) -> None:
        if not self.w.hooks.chains[SESSION_START.index]:
            return
        edits: list[tuple[Handler, Any]] = []
        info = SessionStartInfo(run_id=self.run_id, session_id=self.session_id, source=source, prompt=prompt)
        await self.hooks(SESSION_START, info, edits)
        for handler, result in edits:
            if isinstance(result, Continue):
                self._reject_edits(SESSION_START, handler, result, allowed=("additional_context",))
                if result.additional_context:
                    self.w._append(self._context_item(handler, SESSION_START, result.additional_context))

    def _reject_edits(
        self, event: HookEvent[Any, Any], handler: Handler, result: Continue, *, allowed: tuple[str, ...]
    ) -> None:
        for name in ("updated_input", "additional_context", "replace_output"):
            if name not in allowed and getattr(result, name) is not None:
                raise HookError(
                    f"Continue({name}=…) is not accepted on {event.name}", hook=handler.name, event=event.name
                )

    async def submit(self, user: Message) -> None:
        """on_prompt_submit (once per run), then the user item enters the history."""
        if self.w.hooks.chains[ON_PROMPT_SUBMIT.index]:
            edits: list[tuple[Handler, Any]] = []
            info = PromptSubmitInfo(run_id=self.run_id, session_id=self.session_id, prompt=user.text, item=user)
            decided = await self.hooks(ON_PROMPT_SUBMIT, info, edits)
            if decided is not None:
                result, handler = decided
                assert isinstance(result, Cancel)
                raise Aborted(result.reason, hook=handler.name, event=ON_PROMPT_SUBMIT.name)
            self.w._append(user)
            for handler, result in edits:
                self._reject_edits(ON_PROMPT_SUBMIT, handler, result, allowed=("additional_context",))
                if result.additional_context:
                    self.w._append(self._context_item(handler, ON_PROMPT_SUBMIT, result.additional_context))
        else:
            self.w._append(user)

    # -- the loop ------------------------------------------------------------------------------------------

    async def loop(self) -> Outcome:
        while True:
            outcome = await self._run_turn()
            if outcome is not None:
                return outcome

    def _finished(self, reason: str = "end_turn") -> Finished:
        return Finished(
            run_id=self.run_id,
            text=self.last_text,
            items=tuple(self.w._history[self.run_start :]),
            usage=self.usage,
            turns=self.turn,
            reason="stopped_by_hook" if self.stop is not None else "end_turn",
            stop_reason=self.stop[1] if self.stop is not None else None,
        )

    async def _run_turn(self) -> Outcome | None:
        w = self.w
        if self.turn >= w.max_turns:
            raise MaxTurnsExceeded(w.max_turns)
        self.turn += 1
        request = await self._request()
        items, calls = await self._run_model_step(request)
        for item in items:
            w._append(item)
        if calls:
            outcome = await self._run_tool_batch([_Call(c, w._tools.get(c.name)) for c in calls], planned=False)
            if outcome is not None:
                return outcome
            if self.stop is not None:
                return self._finished()
            return None
        return await self._turn_end()

    async def _request(self) -> LLMRequest:
        w = self.w
        history = w._history
        items: Sequence[Item] = w._view
        system = w.system_prompt
        if w._interceptors.pre_llm_request:
            for attempt in (0, 1):
                ctx = RequestContext(
                    history=w._view,
                    system=system,
                    turn=self.turn,
                    run_id=self.run_id,
                    model=w.model,
                    token_estimate=w.token_estimate,
                    persist=w._append,
                )
                action = await InterceptorChain.run(w._interceptors.pre_llm_request, ctx)
                await self._deliver_notifications()
                if action == COMPACT and attempt == 0:
                    if await self.compact("auto"):
                        continue  # re-plan the request on the compacted history
                    self._check_window()
                break
            if ctx.edited_items is not None:
                items = ctx.edited_items
            system = ctx.system
        if w.hooks.chains[PRE_LLM_REQUEST.index]:
            info = PreLlmRequestInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                turn=self.turn,
                model=w.model,
                item_count=len(items),
                token_estimate=w.token_estimate,
                new_items=tuple(history[self.last_sent :]),
            )
            decided = await self.hooks(PRE_LLM_REQUEST, info)
            if decided is not None:
                result, handler = decided
                raise Aborted(result.reason, hook=handler.name, event=PRE_LLM_REQUEST.name)
        self.last_sent = len(history)
        return LLMRequest(
            system=system,
            items=items,
            tools=w._tools.specs(),
            model=w.model,
            max_tokens=w.max_tokens,
            cache_prefix=w._locked_prefix,
            turn=self.turn,
            run_id=self.run_id,
        )

    async def _deliver_notifications(self) -> None:
        delivered = self.w._notifier.take_delivered()
        if delivered and self.w.hooks.chains[NOTIFICATION.index]:
            for note in delivered:
                info = NotificationInfo(
                    run_id=self.run_id, session_id=self.session_id, text=note.text, source=note.source, kind="injected"
                )
                await self.w._fire_observer(NOTIFICATION, self.w.hooks.chains[NOTIFICATION.index].handlers, info)

    def _check_window(self) -> None:
        """After a compaction that did not happen: fail clearly if the history cannot fit the window."""
        windows = [getattr(i, "context_window", None) for i in self.w._interceptors]
        limits = [x for x in windows if isinstance(x, int)]
        if limits and self.w.token_estimate > min(limits):
            raise ContextWindowExceeded(self.w.token_estimate, min(limits), "compaction was cancelled or impossible")

    async def compact(self, trigger: Literal["auto", "manual"]) -> bool:
        """pre_compact hooks (may Cancel), the compaction interceptors, then post_compact. True if compacted."""
        w = self.w
        if not w._interceptors.compact:
            return False
        before_items, before_tokens = len(w._history), w.token_estimate
        if w.hooks.chains[PRE_COMPACT.index]:
            info = PreCompactInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                trigger=trigger,
                item_count=before_items,
                token_estimate=before_tokens,
            )
            if await self.hooks(PRE_COMPACT, info) is not None:
                return False
        ctx = CompactionContext(
            history=list(w._history),
            system=w.system_prompt,
            trigger=trigger,
            token_estimate=before_tokens,
            client=w.client,
            model=w.model,
        )
        await InterceptorChain.run(w._interceptors.compact, ctx)
        if not ctx.changed:
            return False
        problem = history_problem(ctx.history)
        if problem is not None:
            raise HookloopError(f"a compaction interceptor produced an invalid history: {problem}")
        w._replace_history(ctx.history)
        self.last_sent = 0
        if w.hooks.chains[POST_COMPACT.index]:
            done = PostCompactInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                trigger=trigger,
                summary=ctx.summary,
                items_before=before_items,
                items_after=len(w._history),
                tokens_before=before_tokens,
                tokens_after=w.token_estimate,
            )
            await w._fire_observer(POST_COMPACT, w.hooks.chains[POST_COMPACT.index].handlers, done)
        return True

    def _stream_decided(self, event: HookEvent[Any, Any], decided: tuple[Any, Handler]) -> None:
        result, handler = decided
        decision, reason = describe(result)
        if self.w.timeline.subscribers:
            self.w.timeline.emit(
                HookDecision(
                    event=event.name,
                    hook=handler.name,
                    source=handler.source,
                    decision=decision,
                    reason=reason,
                    seconds=0.0,
                )
            )
        if isinstance(result, Pause):
            raise Aborted("Paused by stream hook", hook=handler.name, event=event.name)
        raise Aborted(result.reason, hook=handler.name, event=event.name)

    async def _run_model_step(self, request: LLMRequest) -> tuple[list[Item], list[ToolCall]]:
        """Stream one reply; per event: timeline, on_stream_chunk, then on_text_delta / on_tool_call_delta.

        The hottest path (one pass per delta): a text delta of the current block is appended without a dict
        lookup or a call; with nobody listening that is all the loop does. A lone text hook is called inline.
        """
        w = self.w
        chains = w.hooks.chains
        chunk_chain = chains[ON_STREAM_CHUNK.index]
        text_chain = chains[ON_TEXT_DELTA.index]
        tool_chain = chains[ON_TOOL_CALL_DELTA.index]
        emit = w.timeline.emit if w.timeline.subscribers else None
        reply = _Reply(w.client.provider)
        take = reply.take
        text_index, text_append = -1, None
        stream = w.client.stream(request)
        try:
            if emit is None and not chunk_chain and not text_chain and not tool_chain:
                async for event in stream:
                    if event.__class__ is TextDelta and event.index == text_index:
                        text_append(event.text)  # type: ignore[misc]
                        continue
                    take(event)
                    text_index, text_append = reply.text_index, reply.text_append
            else:
                text_single = text_chain.single
                text_async = text_single is not None and text_single.is_async
                async for event in stream:
                    if emit is not None:
                        emit(event)
                    if chunk_chain:
                        decided = (
                            dispatch_sync(ON_STREAM_CHUNK, chunk_chain, event)
                            if chunk_chain.all_sync
                            else await dispatch(ON_STREAM_CHUNK, chunk_chain, event)
                        )
                        if decided is not None:
                            self._stream_decided(ON_STREAM_CHUNK, decided)
                    cls = event.__class__
                    if cls is TextDelta:
                        text: TextDelta = event  # type: ignore[assignment]
                        if text.index == text_index:
                            text_append(text.text)  # type: ignore[misc]
                        else:
                            take(text)
                            text_index, text_append = reply.text_index, reply.text_append
                        if text_single is not None:  # one hook: called inline, no dispatch frame
                            try:
                                result = text_single.fn(text)
                                if text_async:
                                    result = await result
                            except Aborted:
                                raise
                            except Exception as exc:
                                raise raised(ON_TEXT_DELTA, text_single, exc) from exc
                            if result.__class__ is not Continue:
                                self._stream_decided(ON_TEXT_DELTA, settle(ON_TEXT_DELTA, text_single, result))
                        elif text_chain:
                            decided = (
                                dispatch_sync(ON_TEXT_DELTA, text_chain, text)
                                if text_chain.all_sync
                                else await dispatch(ON_TEXT_DELTA, text_chain, text)
                            )
                            if decided is not None:
                                self._stream_decided(ON_TEXT_DELTA, decided)
                        continue
                    take(event)
                    text_index, text_append = reply.text_index, reply.text_append
                    if cls is ToolCallDelta and tool_chain:
                        decided = (
                            dispatch_sync(ON_TOOL_CALL_DELTA, tool_chain, event)
                            if tool_chain.all_sync
                            else await dispatch(ON_TOOL_CALL_DELTA, tool_chain, event)
                        )
                        if decided is not None:
                            self._stream_decided(ON_TOOL_CALL_DELTA, decided)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if reply.usage is not None:
            self.usage = self.usage + reply.usage
        complete = chains[ON_STREAM_COMPLETE.index]
        if complete:
            info = StreamCompleteInfo(turn=self.turn, event_count=reply.event_count)
            decided = await dispatch(ON_STREAM_COMPLETE, complete, info)
            if decided is not None:
                self._stream_decided(ON_STREAM_COMPLETE, decided)
        return self._build_reply(reply.blocks)

    def _build_reply(self, blocks: dict[int, _Block]) -> tuple[list[Item], list[ToolCall]]:
        items: list[Item] = []
        calls: list[ToolCall] = []
        texts: list[str] = []
        for index in sorted(blocks):
            block = blocks[index]
            if block.kind == "text":
                text = "".join(block.parts)
                if text:
                    texts.append(text)
                    items.append(Message(role="assistant", content=(TextPart(text=text),)))
            elif block.kind == "thinking":
                items.append(
                    Reasoning(
                        text="".join(block.parts),
                        signature=block.signature,
                        redacted=block.redacted,
                        provider=self.w.client.provider,
                    )
                )
            else:
                call = _parse_call(block, index)
                calls.append(call)
                items.append(call)
        self.last_text = "\n".join(texts)
        return items, calls

    # -- tools ---------------------------------------------------------------------------------------------

    async def _run_tool_batch(self, calls: list[_Call], *, planned: bool) -> Outcome | None:
        """Plan every call (interceptors, hooks, permission), pause if any needs a decision, else run the
        ready ones in parallel, post-process in call order, and append one result per call."""
        w = self.w
        paused = False
        ending = "not executed: the run ended before this call ran"
        try:
            if not planned:
                for c in calls:
                    await self._plan_call(c)
            if w.approvers and any(c.state == "approval" for c in calls):
                await self._consult_approvers(calls)
            if any(c.state in ("approval", "paused") for c in calls):
                paused = True
                outcome = self._pause_batch(calls)
                await self._notify_pause(outcome)
                return outcome
            ready = [c for c in calls if c.state == "ready"]
            if len(ready) == 1:
                await self._execute(ready[0])
            elif ready:
                async with asyncio.TaskGroup() as group:
                    for c in ready:
                        group.create_task(self._execute(c))
            for c in calls:
                if c.executed:
                    await self._post(c)
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

    async def _plan_call(self, c: _Call) -> None:
        w = self.w
        call, tool = c.call, c.tool
        if tool is None:
            names = ", ".join(sorted(t.meta.name for t in w._tools)) or "none"
            c.fail(f"unknown tool {call.name!r}; the available tools are: {names}")
            return
        if call.raw_arguments is not None:
            c.fail(f"the arguments for {call.name!r} are not a valid JSON object: {call.raw_arguments[:500]!r}")
            return
        meta = tool.meta
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
        votes: list[tuple[str, str, str]] = []
        if w.hooks.chains[PRE_TOOL_CALL.index]:
            info = PreToolCallInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                turn=self.turn,
                call_id=call.call_id,
                tool_name=call.name,
                arguments=c.args,
                meta=meta,
                permission_mode=w.permission_mode,
            )
            edits: list[tuple[Handler, Any]] = []
            decided = await self.hooks(PRE_TOOL_CALL, info, edits, call.call_id)
            for handler, result in edits:
                if isinstance(result, Ask):
                    votes.append(("ask", result.reason, handler.name))
                elif isinstance(result, Allow):
                    votes.append(("allow", result.reason, handler.name))
                else:
                    self._reject_edits(PRE_TOOL_CALL, handler, result, allowed=("updated_input",))
                if result.updated_input is not None:
                    c.args = result.updated_input
                    c.input_edited_by = handler.name
            if decided is not None:
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
                    return
            if c.state == "done":
                return
        if not self._validate(c):
            return
        behavior, reason, decided_by = w._decide_permission(tool, c.args, votes)
        if behavior == "deny":
            c.fail(f"permission denied ({decided_by}): {reason}".rstrip(": "), denied_by=decided_by)
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
            pending = c.pending()
            for approver in w.approvers:
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
                        w._allow_always(c.call.name, decision.rule)
                    c.state = "ready"
                break

    def _pause_batch(self, calls: list[_Call]) -> Paused:
        w = self.w
        waiting = [c for c in calls if c.state in ("approval", "paused")]
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

    async def _execute(self, c: _Call) -> None:
        w = self.w
        tool, call = c.tool, c.call
        assert tool is not None
        assert c.validated is not None
        ctx = ToolContext(
            run_id=self.run_id,
            session_id=self.session_id,
            call_id=call.call_id,
            tool_name=call.name,
            turn=self.turn,
            workspace=w.workspace,
        )
        timeline = w.timeline
        if timeline.subscribers:
            timeline.emit(ToolStarted(call_id=call.call_id, tool_name=call.name, arguments=c.args))
        started = perf_counter()
        is_error = True
        try:
            if w.tool_timeout is None:
                value = await tool.execute(c.validated, ctx)
            else:
                async with asyncio.timeout(w.tool_timeout):
                    value = await tool.execute(c.validated, ctx)
            content, is_error = render_output(value)
        except ToolFailure as exc:
            content = str(exc)
        except TimeoutError:
            content = f"tool {call.name!r} timed out after {w.tool_timeout} seconds"
        except Exception as exc:
            content = f"tool {call.name!r} failed: {type(exc).__name__}: {exc}"
        c.executed = True
        c.seconds = perf_counter() - started
        meta: dict[str, object] = {}
        if c.input_edited_by is not None:
            meta["input_edited_by"] = c.input_edited_by
            meta["executed_arguments"] = thaw_object(c.args)
        c.result = ToolResult(
            call_id=call.call_id,
            name=call.name,
            content=content,
            is_error=is_error,
            meta=freeze_object(meta) if meta else EMPTY,
        )
        if timeline.subscribers:
            timeline.emit(
                ToolEnded(
                    call_id=call.call_id,
                    tool_name=call.name,
                    is_error=is_error,
                    seconds=c.seconds,
                )
            )

    async def _post(self, c: _Call) -> None:
        """post_tool_call: interceptors, then hooks (Continue edits, Abort, Stop)."""
        w = self.w
        result = c.result
        assert result is not None
        assert c.tool is not None
        meta: dict[str, object] = dict(result.meta)
        content, is_error = result.content, result.is_error
        if w._interceptors.post_tool_call:
            view = ToolResultView(
                call_id=result.call_id,
                tool_name=result.name,
                arguments=thaw_object(c.args),
                content=content,
                is_error=is_error,
                meta=c.tool.meta,
                turn=self.turn,
                run_id=self.run_id,
            )
            await InterceptorChain.run(w._interceptors.post_tool_call, view)
            content, is_error = view.content, view.is_error
            meta.update(view.notes)
        if w.hooks.chains[POST_TOOL_CALL.index]:
            info = PostToolCallInfo(
                run_id=self.run_id,
                session_id=self.session_id,
                turn=self.turn,
                call_id=result.call_id,
                tool_name=result.name,
                arguments=c.args,
                meta=c.tool.meta,
                content=content,
                is_error=is_error,
                seconds=c.seconds,
            )
            edits: list[tuple[Handler, Any]] = []
            decided = await self.hooks(POST_TOOL_CALL, info, edits, result.call_id)
            contexts: list[str] = []
            added_by: list[str] = []
            for handler, edit in edits:
                self._reject_edits(POST_TOOL_CALL, handler, edit, allowed=("replace_output", "additional_context"))
                if edit.replace_output is not None:
                    content = cap_text(edit.replace_output, w.output_cap, "replaced tool output")
                    meta["output_replaced_by"] = handler.name
                if edit.additional_context:
                    contexts.append(self._context_block(handler, POST_TOOL_CALL, edit.additional_context))
                    added_by.append(handler.name)
            if contexts:
                content = "\n\n".join([content, *contexts])
                meta["context_added_by"] = added_by
            if decided is not None:
                decision, handler = decided
                if isinstance(decision, Abort):
                    c.result = _rebuild(result, content, is_error, meta)
                    raise Aborted(decision.reason, hook=handler.name, event=POST_TOOL_CALL.name)
                assert isinstance(decision, Stop)
                if self.stop is None:
                    self.stop = (handler.name, decision.reason)
        if content is not result.content or is_error is not result.is_error or meta != dict(result.meta):
            c.result = _rebuild(result, content, is_error, meta)

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
            last.result = _rebuild(
                last.result, "\n\n".join([last.result.content, *contexts]), last.result.is_error, meta
            )
        if decided is not None:
            decision, handler = decided
            if isinstance(decision, Abort):
                raise Aborted(decision.reason, hook=handler.name, event=POST_TOOL_BATCH.name)
            if self.stop is None:
                self.stop = (handler.name, decision.reason)

    # -- resume --------------------------------------------------------------------------------------------

    async def resume_batch(self, checkpoint: Checkpoint, decisions: Mapping[str, ResumeDecision]) -> Outcome | None:
        w = self.w
        calls: list[_Call] = []
        for pending in checkpoint.batch:
            call = _find_call(checkpoint.history, pending.call_id)
            c = _Call(call, w._tools.get(pending.tool_name))
            c.args = pending.arguments
            calls.append(c)
            if pending.state == "done":
                c.state, c.result = "done", pending.result
                continue
            if c.tool is None:
                c.fail(f"tool {pending.tool_name!r} is not available in the resuming Worker")
                continue
            if pending.needs_decision:
                decision = decisions[pending.call_id]
                if isinstance(decision, Reject):
                    c.fail(f"denied by the user: {decision.reason}", denied_by="user")
                    continue
                if isinstance(decision, AllowAlways):
                    w._allow_always(pending.tool_name, decision.rule)
                if pending.state == "paused":
                    # A hook paused on it: the approval answers the pause and any ask; deny rules still hold.
                    if not self._validate(c):
                        continue
                    behavior, reason, decided_by = w._decide_permission(c.tool, c.args, [])
                    if behavior == "deny":
                        c.fail(f"permission denied ({decided_by}): {reason}".rstrip(": "), denied_by=decided_by)
                    continue
            self._validate(c)
        return await self._run_tool_batch(calls, planned=True)

    # -- end of turn ---------------------------------------------------------------------------------------

    async def _turn_end(self) -> Outcome | None:
        w = self.w
        if w._interceptors.on_turn_end:
            view = TurnEndView(last_assistant_text=self.last_text, history=w._view, turn=self.turn, run_id=self.run_id)
            await InterceptorChain.run(w._interceptors.on_turn_end, view)
            if view.messages:
                self.forced += 1
                if self.forced > w.max_forced_continuations:
                    raise StopHookLoopError(self.forced - 1, None)
                for item in view.messages:
                    w._append(item)
                return None
        if not w.hooks.chains[ON_TURN_END.index]:
            return self._finished()
        info = TurnEndInfo(
            run_id=self.run_id,
            session_id=self.session_id,
            turn=self.turn,
            last_assistant_text=self.last_text,
            stop_hook_active=self.forced > 0,
            forced_continuations=self.forced,
            item_count=len(w._history),
        )
        decided = await self.hooks(ON_TURN_END, info)
        if decided is None:
            return self._finished()
        result, handler = decided
        if isinstance(result, ContinueWithMessages):
            self.forced += 1
            if self.forced > w.max_forced_continuations:
                raise StopHookLoopError(self.forced - 1, handler.name)
            if not result.items:
                raise HookError(
                    "ContinueWithMessages needs at least one item", hook=handler.name, event=ON_TURN_END.name
                )
            for item in result.items:
                w._append(item)
            return None
        assert isinstance(result, Pause)
        checkpoint = w._checkpoint(self, batch=(), kind="turn_end", reason=result.reason)
        return Paused(run_id=self.run_id, checkpoint=checkpoint, reason=result.reason, pending=())


def _rebuild(result: ToolResult, content: str, is_error: bool, meta: dict[str, object]) -> ToolResult:
    return ToolResult(
        call_id=result.call_id,
        name=result.name,
        content=content,
        is_error=is_error,
        id=result.id,
        meta=freeze_object(meta) if meta else EMPTY,
    )


def _parse_call(block: _Block, index: int) -> ToolCall:
    raw = "".join(block.parts)
    call_id = block.call_id or f"call_{index}"
    name = block.name or ""
    if not raw.strip():
        return ToolCall(call_id=call_id, name=name)
    try:
        value = json.loads(raw)
    except ValueError:
        return ToolCall(call_id=call_id, name=name, raw_arguments=raw)
    if not isinstance(value, dict):
        return ToolCall(call_id=call_id, name=name, raw_arguments=raw)
    return ToolCall(call_id=call_id, name=name, arguments=freeze_object(value))


def _find_call(history: Sequence[Item], call_id: str) -> ToolCall:
    for item in reversed(history):
        if isinstance(item, ToolCall) and item.call_id == call_id:
            return item
    raise CheckpointError(f"checkpoint.batch: call {call_id!r} is not in the history")


def history_problem(items: Sequence[Item]) -> str | None:
    """Why ``items`` is not valid to send to a provider (a result before or without its call, a call answered
    twice), or None. Calls still waiting for results at the end are allowed (a batch may be in flight)."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        if isinstance(item, ToolCall):
            open_calls.add(item.call_id)
        elif isinstance(item, ToolResult):
            if item.call_id in answered:
                return f"item {index}: call {item.call_id!r} is answered twice"
            if item.call_id not in open_calls:
                return f"item {index}: result for call {item.call_id!r} has no call before it"
            open_calls.discard(item.call_id)
            answered.add(item.call_id)
    return None
