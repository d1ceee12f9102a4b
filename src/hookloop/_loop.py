"""The turn machine: one run (or resume) of a Worker, one method per concern.

``_Run.loop`` → ``_run_turn`` → ``_run_model_step`` (stream) → ``_run_tool_batch`` → ``_plan`` /
``_execute`` / ``_post`` → ``_turn_end``; a reply that stops with ``pause_turn`` is followed at once by another
model request in the same turn (``_continue_paused``). Invariants kept here (SPEC §2):

- interceptors run before hooks at each point; the permission decision comes after pre_tool_call hooks;
- every tool call in the history gets exactly one result, whatever happens (finally-blocks fill the gaps);
- nothing per turn copies, serialises or re-scans the whole history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from hookloop._batch import _Call, _ToolBatch
from hookloop._build import llm_request, pre_llm_request_info
from hookloop._run_base import cap_text, describe
from hookloop._stream import _StreamStep
from hookloop.errors import (
    Aborted,
    ClientError,
    ContextWindowExceeded,
    HookError,
    HookloopError,
    ItemError,
    MaxTurnsExceeded,
    StopHookLoopError,
)
from hookloop.hooks._dispatch import Handler, raised, settle
from hookloop.hooks.events import (
    NOTIFICATION,
    ON_PROMPT_SUBMIT,
    ON_TURN_END,
    POST_COMPACT,
    PRE_COMPACT,
    PRE_LLM_REQUEST,
    SESSION_START,
)
from hookloop.hooks.results import (
    Cancel,
    Continue,
    ContinueWithMessages,
    Pause,
)
from hookloop.hooks.summaries import (
    NotificationInfo,
    PendingTokens,
    PostCompactInfo,
    PreCompactInfo,
    PromptSubmitInfo,
    SessionStartInfo,
    TurnEndInfo,
    Undetached,
)
from hookloop.interceptors._base import (
    COMPACT,
    CompactionContext,
    InterceptorChain,
    RequestContext,
    TurnEndView,
)
from hookloop.items import Item, Message, ToolCall, ToolResult, adopt, detached
from hookloop.outcome import Outcome, Paused
from hookloop.providers.base import LLMRequest

__all__ = ["cap_text", "describe", "history_problem"]


class _Run(_StreamStep, _ToolBatch):
    """One run or resume: start, the turn loop, the request, compaction, the end of a turn."""

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

    async def submit(self, user: Message) -> None:
        """on_prompt_submit (once per run), then the user item enters the history."""
        adopted = adopt(user, where="prompt")  # the caller's object never enters the history
        assert isinstance(adopted, Message)
        user = adopted
        if self.w.hooks.chains[ON_PROMPT_SUBMIT.index]:
            edits: list[tuple[Handler, Any]] = []
            user_view = detached(user)
            assert isinstance(user_view, Message)
            info = PromptSubmitInfo(run_id=self.run_id, session_id=self.session_id, prompt=user.text, item=user_view)
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

    async def _run_turn(self) -> Outcome | None:
        w = self.w
        if self.turn >= w.max_turns:
            raise MaxTurnsExceeded(w.max_turns)
        self.turn += 1
        request = self._plain_request() if self._request_is_plain() else await self._request()
        items, calls = await self._run_model_step(request)
        for item in items:
            w._append(item)
        if not calls and self.stop_reason == "pause_turn":
            calls = await self._continue_paused()
        if calls:
            outcome = await self._run_tool_batch([_Call(c, w._tools.get(c.name)) for c in calls], planned=False)
            if outcome is not None:
                return outcome
            if self.stop is not None:
                return self._finished()
            return None
        return await self._turn_end()

    async def _continue_paused(self) -> list[ToolCall]:
        """The provider paused the turn (``pause_turn``): its content so far is in the history; request again,
        with no new user message, until it stops for another reason (at most ``max_pause_continuations``
        times). The turn's text is the text of all those replies. Returns the last reply's tool calls."""
        w = self.w
        pauses = 0
        calls: list[ToolCall] = []
        while not calls and self.stop_reason == "pause_turn":
            pauses += 1
            if pauses > w.max_pause_continuations:
                raise ClientError(
                    f"{w.client.provider}: the provider paused the turn {pauses} times in a row (pause_turn); "
                    f"max_pause_continuations={w.max_pause_continuations}",
                    provider=w.client.provider,
                )
            text = self.last_text
            items, calls = await self._run_model_step(await self._request())
            for item in items:
                w._append(item)
            if text:
                self.last_text = f"{text}\n{self.last_text}" if self.last_text else text
        return calls

    async def _request(self) -> LLMRequest:
        w = self.w
        history = w._history
        items: Sequence[Item] = w._view
        system = w.system_prompt
        if w._interceptors.pre_llm_request and not self._interceptors_idle():
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
        chain = w.hooks.chains[PRE_LLM_REQUEST.index]
        if chain:
            info = pre_llm_request_info(
                self.run_id,
                self.session_id,
                self.turn,
                w.model,
                len(items),
                PendingTokens((w._count, len(history))),  # counted if a hook reads it
                Undetached(history[self.last_sent :]),  # copied if a hook reads them
            )
            if len(chain) == 1 and not w.timeline.subscribers:  # one hook, nobody watching: as run_chain
                single = chain[0]
                fn = single.fn
                try:
                    result = fn(info)
                    if single.is_async:
                        result = await result
                except Aborted:
                    raise
                except Exception as exc:
                    raise raised(PRE_LLM_REQUEST, single, exc) from exc
                decided = None if type(result) in PRE_LLM_REQUEST.passes else settle(PRE_LLM_REQUEST, single, result)
            else:
                decided = await self.hooks(PRE_LLM_REQUEST, info)
            if decided is not None:
                result, handler = decided
                raise Aborted(result.reason, hook=handler.name, event=PRE_LLM_REQUEST.name)
        self.last_sent = len(history)
        return llm_request(
            system, items, w._tools.specs(), w.model, w.max_tokens, w._locked_prefix, self.turn, self.run_id
        )

    def _interceptors_idle(self) -> bool:
        """The only pre_llm_request interceptor is the Worker's own notification injector, with nothing to inject
        or report: running the interceptors would change nothing."""
        w = self.w
        pre = w._interceptors.pre_llm_request
        return not pre or (len(pre) == 1 and getattr(pre[0], "__self__", None) is w._notifier and w._notifier.idle)

    def _request_is_plain(self) -> bool:
        """No pre_llm_request hook, and interceptors that would change nothing (:meth:`_interceptors_idle`):
        `_request` would build the plain request (:meth:`_plain_request`)."""
        return not self.w.hooks.chains[PRE_LLM_REQUEST.index] and self._interceptors_idle()

    def _plain_request(self) -> LLMRequest:
        """`_request` when :meth:`_request_is_plain`: the same request, without a coroutine, a request context
        or an interceptor run."""
        w = self.w
        self.last_sent = len(w._history)
        return llm_request(
            w.system_prompt, w._view, w._tools.specs(), w.model, w.max_tokens, w._locked_prefix, self.turn, self.run_id
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
            try:
                given = tuple(result.items)
            except TypeError:
                given = ()
            if not given:
                raise HookError(
                    "ContinueWithMessages needs at least one item", hook=handler.name, event=ON_TURN_END.name
                )
            adopted = []
            for i, item in enumerate(given):
                try:
                    adopted.append(adopt(item, where=f"ContinueWithMessages.items[{i}]"))
                except ItemError as exc:
                    raise HookError(str(exc), hook=handler.name, event=ON_TURN_END.name) from None
            for item in adopted:  # copies: the hook keeps no handle on what enters the history
                w._append(item)
            return None
        assert isinstance(result, Pause)
        checkpoint = w._checkpoint(self, batch=(), kind="turn_end", reason=result.reason)
        return Paused(run_id=self.run_id, checkpoint=checkpoint, reason=result.reason, pending=())


def history_problem(items: Sequence[Item]) -> str | None:
    """Why ``items`` is not valid to send to a provider (a result before or without its call, a call answered
    twice), or None. Calls still waiting for results at the end are allowed (a batch may be in flight).

    A call id may come again once its call is answered: some providers number calls per reply (Bedrock's
    ``call_0``, ``call_1`` …), so a later turn reuses them; each result answers the open call before it."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        if isinstance(item, ToolCall):
            open_calls.add(item.call_id)
        elif isinstance(item, ToolResult):
            if item.call_id in open_calls:
                open_calls.discard(item.call_id)
                answered.add(item.call_id)
            elif item.call_id in answered:
                return f"item {index}: call {item.call_id!r} is answered twice"
            else:
                return f"item {index}: result for call {item.call_id!r} has no call before it"
    return None
