"""The Worker: owns the history, the tools, the hooks, the interceptors and the permission policy, and runs
the model ↔ tools loop (the turn machine lives in :mod:`hookloop._loop`).

States (seed 000): **mutable** — system prompt, tools and history may be changed between runs; and
**cache_locked** — the prefix (system prompt, tools, the history so far) is frozen so a provider can cache it,
and runs only append. Hook registration works in both.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from hookloop._build import item_appended
from hookloop._checkpoint_auth import consume
from hookloop._frozen import FrozenDict, dumps
from hookloop._loop import _Run
from hookloop._run_base import _RunBase
from hookloop.checkpoint import Checkpoint, PendingCall, ResumeDecision
from hookloop.effects import current_effects
from hookloop.errors import Aborted, Cancelled, CheckpointError, WorkerError, WorkerStateError
from hookloop.hooks._dispatch import run_chain
from hookloop.hooks.events import (
    ON_ABORT,
    ON_PROMPT_SUBMIT,
    ON_STREAM_CHUNK,
    ON_STREAM_COMPLETE,
    ON_TEXT_DELTA,
    ON_TOOL_CALL_DELTA,
    ON_TURN_END,
    POST_TOOL_CALL,
    PRE_LLM_REQUEST,
    PRE_TOOL_CALL,
    SESSION_END,
    HookEvent,
    HookFn,
)
from hookloop.hooks.registry import HookRegistry
from hookloop.hooks.results import (
    OnTurnEndResult,
    PostToolCallResult,
    PreLlmRequestResult,
    PreToolCallResult,
    PromptSubmitResult,
    StreamHookResult,
)
from hookloop.hooks.summaries import (
    AbortInfo,
    PostToolCallInfo,
    PreLlmRequestInfo,
    PreToolCallInfo,
    PromptSubmitInfo,
    SessionEndInfo,
    SessionEndReason,
    StreamCompleteInfo,
    TurnEndInfo,
    rebuild,
    snapshot,
)
from hookloop.interceptors._base import InterceptorChain
from hookloop.interceptors.notifications import NotificationInjector
from hookloop.items import Item, Message, ProviderBlock, ToolCall, ToolResult, adopt, new_id
from hookloop.outcome import Outcome, Paused
from hookloop.providers.base import LLMClient
from hookloop.stream import StreamEvent, TextDelta, ToolCallDelta, Usage
from hookloop.timeline import (
    HookDecision,
    RunEnded,
    RunStarted,
    Timeline,
    TimelineEvent,
    TranscriptWriter,
)
from hookloop.tools._base import Tool
from hookloop.tools._registry import ToolRegistry, ToolServer

if TYPE_CHECKING:
    from hookloop.effects import Effects
    from hookloop.permissions import PermissionPolicy

__all__ = ["Approver", "DenialObserver", "Worker", "WorkerState"]

WorkerState = Literal["mutable", "cache_locked"]
Approver = Callable[[PendingCall], Awaitable[ResumeDecision | None]]
DenialObserver = Callable[[PendingCall], Awaitable[str | None]]
"""Told of each call the permission policy (a deny rule, or the mode) denied: the pending call carries the
reason and the denial result; a returned text is appended to the denial the model reads."""
"""Decides a permission ask without pausing (or returns None to let the next approver, or the pause, decide)."""
I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741


def json_size(value: object) -> int:
    """``len(json.dumps(value))`` for a JSON value, without serialising it: exact for ASCII text with nothing
    to escape, otherwise close (escapes and non-ASCII characters count once)."""
    cls = type(value)
    if cls is str:
        return len(value) + 2  # type: ignore[arg-type]
    if cls is int:
        return len(repr(value))
    if cls is MappingProxyType or cls is dict:
        size = 0
        for key, item in value.items():  # type: ignore[attr-defined]
            kind = type(item)  # strings and integers (most arguments) measured here, without a call
            if kind is str:
                size += len(key) + 8 + len(item)  # "key": "item",␠
            elif kind is int:
                size += len(key) + 6 + len(repr(item))
            else:
                size += len(key) + 6 + json_size(item)  # "key": item,␠
        return size if size else 2  # {…} is 2 characters; the last item has no ", "
    if cls is tuple or cls is list:
        size = 0
        for item in value:  # type: ignore[attr-defined]
            size += json_size(item) + 2
        return size if size else 2
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    return len(repr(value))


def estimate_tokens(item: Item) -> int:
    """A cheap token estimate (≈4 characters a token), computed once per item (tool-call arguments are
    measured with :func:`json_size`, never serialised again)."""
    cls = type(item)  # the exact classes first (every item the Worker holds), then subclasses
    if cls is ToolCall:
        return 8 + (json_size(item.arguments) if item.arguments else len(item.raw_arguments or "")) // 4  # type: ignore[union-attr]
    if cls is ToolResult:
        return 4 + len(item.content) // 4  # type: ignore[union-attr]
    if isinstance(item, Message):
        return 4 + len(item.text) // 4
    if isinstance(item, ToolCall):
        return 8 + (json_size(item.arguments) if item.arguments else len(item.raw_arguments or "")) // 4
    if isinstance(item, ToolResult):
        return 4 + len(item.content) // 4
    if isinstance(item, ProviderBlock):
        return 4 + len(dumps(item.data)) // 4
    return 4 + len(item.text) // 4


class TokenCount:
    """The token estimate of a history between two rewrites, counted incrementally as it is read: what
    :attr:`Worker.token_estimate` reads, and a :class:`~hookloop.hooks.PreLlmRequestInfo`'s ``token_estimate``
    (counted when a hook first reads it, for the history as it was when the input was made)."""

    __slots__ = ("counted", "history", "tokens")

    def __init__(self, history: list[Item]) -> None:
        self.history = history
        self.tokens = 0
        """The estimate of the first ``counted`` items."""
        self.counted = 0

    def upto(self, n: int) -> int:
        """The estimate of the first ``n`` items."""
        counted = self.counted
        if counted == n:
            return self.tokens
        if counted < n:
            self.tokens += sum([estimate_tokens(item) for item in self.history[counted:n]])
            self.counted = n
            return self.tokens
        return self.tokens - sum([estimate_tokens(item) for item in self.history[n:counted]])

    def detach(self) -> None:
        """The history is about to be rewritten: keep its items as they are for what still reads this count."""
        self.history = list(self.history)


class _HistoryView(Sequence[Item]):
    """A read-only, zero-copy view of the Worker's history (what requests carry)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[Item]) -> None:
        self._items = items

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        return iter(self._items)


class Worker:
    """Runs the loop. See SPEC §2 for the call order; every public method documents its effect on state.

    A reply that stops with ``pause_turn`` (Anthropic pauses a long server-tool turn) is kept in the history and
    answered at once by another model request in the same turn — with no new user message, so the provider
    continues where it paused; ``pre_llm_request`` hooks see that request like any other. At most
    :attr:`max_pause_continuations` pauses in a row, then the run fails with :class:`ClientError`.

    Args:
        client: the model client (``ScriptedClient`` offline, or a provider client), or a model string as
            ``hookloop run --model`` takes it (``"anthropic:claude-sonnet-4-6"``, ``"openai:gpt-4o"``,
            ``"sonnet"``, ``"gpt-4o"``; see :func:`hookloop.providers.client_from_model_string`): the client is
            built at once, and a string that names no usable model (unknown provider, API key not set, SDK
            missing) raises :class:`~hookloop.providers.ModelSpecError` (a ``ValueError``) here, never at
            run time. Any other object without a ``stream`` method raises ``TypeError``.
        tools: tools and tool servers.
        system: the system prompt.
        model: passed to the client in each request.
        max_turns: model requests per run before :class:`MaxTurnsExceeded`.
        max_forced_continuations: on_turn_end continuations in a row before :class:`StopHookLoopError`.
        permissions: a :class:`hookloop.permissions.PermissionPolicy`; without one every call is allowed
            unless a hook says otherwise.
        interceptors: privileged interceptors, in order.
        workspace: directory handed to tools in their context (built-in tools resolve paths in it).
        tool_timeout: seconds before a tool call is cancelled and answered with a timeout error.
        context_cap / output_cap: caps (characters) on hook-added context and on replaced tool output.
        transcript: path of a JSONL transcript to append to (``transcript_path``; command hooks receive it).
        approvers: consulted, in order, before a run pauses for a permission ask: each returns a decision
            (``Approve``, ``AllowAlways``, ``Reject``) or None to pass; undecided calls pause the run.
        checkpoint_key: the key (bytes, at least 16) :meth:`resume` verifies serialised checkpoints with;
            default the per-user key ``$HOOKLOOP_HOME/checkpoint.key``. (Pass the same key to
            :meth:`Checkpoint.save` / :meth:`Checkpoint.dumps`.)
        checkpoint_ledger: the directory that records which checkpoints were resumed (default
            ``$HOOKLOOP_HOME/resumed``); share it between the processes that may resume the same checkpoint.
    """

    max_pause_continuations: int = 10
    """Replies in a row that may stop with ``pause_turn`` before the run fails (a server that pauses forever
    cannot loop forever); set it on the instance to change it."""

    def __init__(
        self,
        client: LLMClient | str,
        *,
        tools: Iterable[Tool | ToolServer] = (),
        system: str | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        max_turns: int = 50,
        max_forced_continuations: int = 8,
        permissions: PermissionPolicy | None = None,
        interceptors: Iterable[object] = (),
        workspace: str | Path | None = None,
        tool_timeout: float | None = None,
        context_cap: int = 10_000,
        output_cap: int = 100_000,
        transcript: str | Path | None = None,
        session_id: str | None = None,
        approvers: Iterable[Approver] = (),
        checkpoint_key: bytes | None = None,
        checkpoint_ledger: str | Path | None = None,
    ) -> None:
        if isinstance(client, str):
            from hookloop.providers.select import client_from_model_string

            client, named = client_from_model_string(client)
            model = model or named
        elif not callable(getattr(client, "stream", None)):
            raise TypeError(
                f"Worker(client=...): expected a model client (an LLMClient, such as ScriptedClient or "
                f"AnthropicClient) or a model string such as 'anthropic:claude-sonnet-4-6', got {type(client).__name__}"
            )
        self.client: LLMClient = client
        self.model = model
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.max_forced_continuations = max_forced_continuations
        self.permissions = permissions
        self.workspace = Path(workspace) if workspace is not None else None
        self.tool_timeout = tool_timeout
        self.context_cap = context_cap
        self.output_cap = output_cap
        self.session_id = session_id or new_id("session")
        self.hooks = HookRegistry()
        self.timeline = Timeline()
        self._tools = ToolRegistry(tools)
        self._system = system
        self._history: list[Item] = []
        self._view = _HistoryView(self._history)
        self._count = TokenCount(self._history)
        """The token estimate of the history, counted as it is read (a new count after each rewrite)."""
        self._locked_prefix = 0
        self._state: WorkerState = "mutable"
        self._interceptors = InterceptorChain()
        self._notifier = NotificationInjector()
        self._interceptors.add(self._notifier)
        for interceptor in interceptors:
            self._interceptors.add(interceptor)
        self.approvers: list[Approver] = list(approvers)
        self.denial_observers: list[DenialObserver] = []
        """Told of each policy denial before the batch goes on (command hooks' PermissionDenied)."""
        self.checkpoint_key = checkpoint_key
        self.checkpoint_ledger = Path(checkpoint_ledger) if checkpoint_ledger is not None else None
        self._run: _Run | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._paused: Checkpoint | None = None
        self._session_allowed: set[str] = set()
        self._outer_policies: tuple[PermissionPolicy, ...] = ()
        """While the Worker runs as a subagent: the policies of the Workers it runs inside. Every call must
        pass each of them too (the strictest decision wins), so a subagent never gets more than its parent."""
        self._transcript: TranscriptWriter | None = None
        if transcript is not None:
            self._transcript = TranscriptWriter(transcript)
            self.timeline.subscribe(self._transcript)

    # -- registration (seed 000 names; usable in any state) --------------------------------------------

    def add_hook(self, event: HookEvent[I, O], hook: HookFn[I, O], *, name: str | None = None) -> None:
        """Register ``hook`` for ``event`` (typed: the hook must fit the event)."""
        self.hooks.add(event, hook, name=name)

    def hook(self, event: HookEvent[I, O]) -> Callable[[HookFn[I, O]], HookFn[I, O]]:
        """Decorator form: ``@worker.hook(PRE_TOOL_CALL)``."""
        return self.hooks.hook(event)

    def add_hooks(self, provider: object) -> list[str]:
        """Register every method of ``provider`` named after an event; returns the event names."""
        return self.hooks.add_provider(provider)

    def add_on_prompt_submit_hook(self, hook: HookFn[PromptSubmitInfo, PromptSubmitResult]) -> None:
        self.hooks.add(ON_PROMPT_SUBMIT, hook)

    def add_pre_llm_request_hook(self, hook: HookFn[PreLlmRequestInfo, PreLlmRequestResult]) -> None:
        self.hooks.add(PRE_LLM_REQUEST, hook)

    def add_pre_tool_call_hook(self, hook: HookFn[PreToolCallInfo, PreToolCallResult]) -> None:
        self.hooks.add(PRE_TOOL_CALL, hook)

    def add_post_tool_call_hook(self, hook: HookFn[PostToolCallInfo, PostToolCallResult]) -> None:
        self.hooks.add(POST_TOOL_CALL, hook)

    def add_on_turn_end_hook(self, hook: HookFn[TurnEndInfo, OnTurnEndResult]) -> None:
        self.hooks.add(ON_TURN_END, hook)

    def add_on_abort_hook(self, hook: HookFn[AbortInfo, None]) -> None:
        self.hooks.add(ON_ABORT, hook)

    def add_on_text_delta_hook(self, hook: HookFn[TextDelta, StreamHookResult]) -> None:
        self.hooks.add(ON_TEXT_DELTA, hook)

    def add_on_tool_call_delta_hook(self, hook: HookFn[ToolCallDelta, StreamHookResult]) -> None:
        self.hooks.add(ON_TOOL_CALL_DELTA, hook)

    def add_on_stream_chunk_hook(self, hook: HookFn[StreamEvent, StreamHookResult]) -> None:
        self.hooks.add(ON_STREAM_CHUNK, hook)

    def add_on_stream_complete_hook(self, hook: HookFn[StreamCompleteInfo, StreamHookResult]) -> None:
        self.hooks.add(ON_STREAM_COMPLETE, hook)

    def add_interceptor(self, interceptor: object) -> None:
        """Append a privileged interceptor (runs before hooks at each point it implements)."""
        self._interceptors.add(interceptor)

    def as_tool(self, name: str, description: str, *, max_depth: int = 3) -> Tool:
        """This Worker as a tool another Worker may call: each call runs this Worker on the tool's ``prompt``
        as a subagent, in a fresh conversation (its history is replaced), and answers with its last reply.

        The calling Worker's rules follow it (:mod:`hookloop.agents`): every call this Worker makes must also
        pass the caller's permission policy, the caller's tool hooks, approvers, ``subagent_start`` and
        ``subagent_stop`` hooks fire for it, its usage rolls up, and its pause pauses the caller. A Worker runs
        one run at a time, so calls of this tool run one after another (``ToolMeta.sequential``)."""
        from hookloop.agents import WorkerTool

        return WorkerTool(self, name=name, description=description, max_depth=max_depth)

    def subscribe(self, fn: Callable[[TimelineEvent], object]) -> Callable[[], None]:
        """Follow the timeline; returns a function that unsubscribes."""
        return self.timeline.subscribe(fn)

    # -- state -----------------------------------------------------------------------------------------

    @property
    def state(self) -> WorkerState:
        return self._state

    @property
    def running(self) -> bool:
        return self._run is not None

    @property
    def history(self) -> tuple[Item, ...]:
        """A snapshot of the history (a copy: changing it changes nothing)."""
        return tuple(self._history)

    @property
    def transcript_path(self) -> Path | None:
        """Where the JSONL transcript is written (what command hooks receive as ``transcript_path``)."""
        return None if self._transcript is None else self._transcript.path

    @property
    def token_estimate(self) -> int:
        """Estimated tokens of the history, kept incrementally (never a re-scan): the items appended since the
        last read are counted when it is read, so a run nobody asks costs nothing."""
        return self._count.upto(len(self._history))

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(self._tools)

    @property
    def system_prompt(self) -> str | None:
        return self._system

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        self._require_mutable("change the system prompt")
        self._system = value

    @property
    def permission_mode(self) -> str | None:
        return None if self.permissions is None else str(self.permissions.mode)

    def _require_mutable(self, what: str) -> None:
        if self._state == "cache_locked":
            raise WorkerStateError(f"cannot {what}: the Worker is cache_locked (call unlock_cache() first)")
        if self._run is not None:
            raise WorkerStateError(f"cannot {what} while a run is in flight")

    def lock_cache(self) -> None:
        """Enter cache_locked: freeze the system prompt, the tools and the history so far (providers may
        cache that prefix). Runs keep appending."""
        self._state = "cache_locked"
        self._locked_prefix = len(self._history)

    def unlock_cache(self) -> None:
        """Back to mutable."""
        self._state = "mutable"
        self._locked_prefix = 0

    def set_history(self, items: Iterable[Item]) -> None:
        """Replace the history (mutable state only, not during a run). The Worker keeps copies (exact item
        classes, frozen mappings): changing the given objects later changes nothing; a non-item raises
        :class:`ItemError` naming its index."""
        self._require_mutable("replace the history")
        self._rewrite_history([adopt(item, where=f"history[{i}]") for i, item in enumerate(items)])
        self._paused = None

    def add_tool(self, tool: Tool | ToolServer) -> None:
        self._require_mutable("add a tool")
        self._tools.add(tool)

    def remove_tool(self, name: str) -> None:
        self._require_mutable("remove a tool")
        self._tools.remove(name)

    def _replace_history(self, items: list[Item]) -> None:
        """Install a compacted history (privileged; the compaction path only)."""
        self._rewrite_history(items)

    def _rewrite_history(self, items: list[Item]) -> None:
        """Replace the history's items: the old count keeps what it counted (hook inputs of before still read
        their estimate from it), and a new one starts."""
        self._count.detach()
        self._history[:] = items
        self._count = TokenCount(self._history)
        if self._state == "cache_locked":
            self._locked_prefix = len(items)

    def notify(self, text: str, *, source: str = "application") -> None:
        """Queue ``text`` for the model: it is added to the next model request as marked context, in arrival
        order, exactly once. Safe from any task or thread, during a run or between runs."""
        self._notifier.push(text, source=source)

    async def compact(self) -> bool:
        """Compact the history now (trigger "manual"), with the compaction interceptors you installed.
        Fires pre_compact (which may cancel) and post_compact. Returns True if the history changed."""
        if self._run is not None:
            raise WorkerStateError("cannot compact manually while a run is in flight")
        return await _Run(self, new_id("compact")).compact("manual")

    def _append(self, item: Item) -> None:
        self._history.append(item)
        if self.timeline.subscribers:
            self.timeline.emit(item_appended((item,)))  # copied when read: subscribers never hold the history's own

    # -- permissions -----------------------------------------------------------------------------------

    def _decide_permission(
        self, tool: Tool, arguments: FrozenDict, votes: Sequence[tuple[str, str, str]]
    ) -> tuple[str, str, str]:
        """Merge the rules, the mode and the hooks' votes: (behavior, reason, decided_by); a subagent's call
        must also pass the policy of each Worker it runs inside (no hook votes there: the strictest wins)."""
        decided = self._decide_own(tool, arguments, votes)
        if not self._outer_policies or decided[0] == "deny":
            return decided
        for outer in self._outer_policies:
            cwd = getattr(tool, "cwd", None)
            o = outer.decide(
                tool.meta.name, arguments, read_only=tool.meta.read_only, cwd=cwd if isinstance(cwd, Path) else None
            )
            if o.behavior == "deny":
                return "deny", o.reason, f"parent policy: {o.decided_by}"
            if o.behavior == "ask" and decided[0] == "allow":
                decided = ("ask", o.reason, f"parent policy: {o.decided_by}")
        return decided

    def _read_filter(self, tool_name: str, arguments: Mapping[str, object]) -> Any:
        """The read filter for one call: this Worker's policy's and, inside a subagent, its parents'."""
        policies = (self.permissions, *self._outer_policies) if self._outer_policies else (self.permissions,)
        filters = [f for p in policies if p is not None and (f := p.read_filter(tool_name, arguments)) is not None]
        if len(filters) <= 1:
            return filters[0] if filters else None
        return _AnyFilter(tuple(filters))

    def _decide_own(
        self, tool: Tool, arguments: FrozenDict, votes: Sequence[tuple[str, str, str]]
    ) -> tuple[str, str, str]:
        policy = self.permissions
        name = tool.meta.name
        if policy is None:
            asks = [v for v in votes if v[0] == "ask"] if votes else votes
            if asks:
                if name in self._session_allowed:
                    return "allow", "allowed always for this session", "session approval"
                return "ask", asks[0][1], f"hook {asks[0][2]!r}"
            return "allow", "", "no permission policy"
        from hookloop.permissions import HookVote

        # A tool that keeps a working directory between calls (the built-in Bash) exposes it as `cwd`: the
        # decision resolves the command's relative paths where it will really run. Parallel calls of one batch
        # all start before any of them ends, so they all start there too.
        cwd = getattr(tool, "cwd", None)
        outcome = policy.decide(
            name,
            arguments,
            hooks=[HookVote(behavior=b, reason=r, hook=h) for b, r, h in votes] if votes else [],  # type: ignore[arg-type]
            read_only=tool.meta.read_only,
            cwd=cwd if isinstance(cwd, Path) else None,
        )
        return outcome.behavior, outcome.reason, outcome.decided_by

    def _allow_always(self, tool_name: str, rule: str | None, arguments: Mapping[str, object] | None = None) -> None:
        """An "allow always" answer: add ``rule``, or the narrowest rule covering the call (``suggest_rule``);
        when no narrow rule exists (a compound or unanalysable command) the call is allowed once only."""
        if self.permissions is not None:
            if rule is None:
                from hookloop.permissions import suggest_rule

                rule = suggest_rule(tool_name, arguments or {}, self.permissions.workspace)
            if rule is not None:
                self.permissions.add_session_rule("allow", rule)
        self._session_allowed.add(tool_name)

    # -- running ---------------------------------------------------------------------------------------

    def _checkpoint(self, run: _RunBase, *, batch: Any, kind: Any, reason: str) -> Checkpoint:
        checkpoint = Checkpoint(
            run_id=run.run_id,
            session_id=self.session_id,
            system=self._system,
            history=tuple(self._history),
            batch=batch,
            pause_kind=kind,
            reason=reason,
            turn=run.turn,
            forced_continuations=run.forced,
            usage=run.usage,
            run_start=run.run_start,
            cache_prefix=self._locked_prefix,
        )
        self._paused = checkpoint
        return checkpoint

    async def run(self, prompt: str | Message, *, run_id: str | None = None, effects: Effects | None = None) -> Outcome:
        """Run the loop on a user prompt until the model finishes, a hook pauses, or an error ends it.

        Returns :class:`Finished` or :class:`Paused`; raises a :class:`WorkerError` subclass after on_abort
        fired (exactly once). session_start and session_end fire around every run.

        ``run_id`` names the run (default: a new random id); tools see it in their idempotency keys.
        ``effects`` is a durable backend's :class:`~hookloop.effects.Effects`: every model call, tool call and
        external hook firing of the run goes through it (see :mod:`hookloop.effects`); without it the Worker
        performs them directly.
        """
        user = prompt if isinstance(prompt, Message) else Message.user(prompt)
        if user.role != "user":
            raise ValueError(f"run() takes a user message, got role {user.role!r}")
        if run_id is not None and (not isinstance(run_id, str) or not run_id.strip()):
            raise ValueError(f"run_id: expected a non-empty string, got {run_id!r}")
        self._close_abandoned_pause()
        run = _Run(self, run_id or new_id("run"), run_start=len(self._history), effects=effects)

        async def body() -> Outcome:
            await run.session_start("startup", user.text)
            await run.submit(user)
            return await run.loop()

        return await self._drive(run, body, "startup")

    async def resume(
        self,
        checkpoint: Checkpoint | Mapping[str, object] | str,
        decisions: Mapping[str, ResumeDecision] | None = None,
        *,
        messages: Sequence[Item] | str | None = None,
        key: bytes | None = None,
        fork: bool = False,
        effects: Effects | None = None,
    ) -> Outcome:
        """Continue a paused run — in this Worker or a fresh one (same tools and hooks) in another process.

        ``checkpoint`` is a :class:`Checkpoint`, or its JSON (text or parsed), verified with ``key`` (default
        :attr:`checkpoint_key`, else the per-user key); one loaded with ``verify=False`` is refused.

        ``decisions`` maps call ids to :class:`Approve`, :class:`AllowAlways` or :class:`Reject`; every pending
        call needs one, and any other call of the batch that is not done may get one (a paused subagent's calls
        as ``<call id>/<child call id>``: the resume continues inside the subagent). The checkpoint's call
        states are not trusted: every call that is not done is planned again against the *current* permission
        policy on the arguments that will execute (an ``Approve(updated_input=...)``'s, validated): a deny rule
        denies it whatever the decision; a call the policy asks about runs only with an approving decision (or
        an approver's), and without one the run pauses again with a new checkpoint. A hook's pause or ask is
        answered by the decision (pre_tool_call hooks do not run again). For a run paused at on_turn_end,
        ``messages`` are appended and the loop continues; without them the run finishes.

        A checkpoint is consumed once: its nonce is recorded (in this process and in
        :attr:`checkpoint_ledger`) before anything runs, and a second resume raises :class:`CheckpointError`.
        ``fork=True`` resumes it again as a new run: a new run id ``<run id>-fork-<hex>``, so tools see new
        idempotency keys. Tools of a plain resume see the same ``run_id`` (and idempotency keys) as before.
        ``effects``: as for :meth:`run` (a durable backend's). The backend then owns consuming the checkpoint
        once (atomically, in its store: a replay after a crash resumes it again), so the ledger is not used.
        """
        key = key if key is not None else self.checkpoint_key
        if isinstance(checkpoint, str):
            checkpoint = Checkpoint.loads(checkpoint, key=key)
        elif not isinstance(checkpoint, Checkpoint):
            checkpoint = Checkpoint.from_json(checkpoint, key=key)
        elif not checkpoint.resumable:
            raise CheckpointError(
                "checkpoint: read with verify=False, for inspection only; load it verified to resume it"
            )
        decisions = dict(decisions or {})
        missing = [c.call_id for c in checkpoint.pending if c.call_id not in decisions]
        if missing:
            raise ValueError(f"resume needs a decision for every pending call; missing: {', '.join(missing)}")
        open_calls = checkpoint.open_calls()
        unknown = [k for k in decisions if k not in open_calls]
        if unknown:
            raise ValueError(f"resume got decisions for calls that are not pending: {', '.join(unknown)}")
        if self._run is not None:
            raise WorkerStateError("cannot resume while a run is in flight")
        if checkpoint.session_id != self.session_id and self._history:
            raise CheckpointError(
                f"checkpoint.session_id: {checkpoint.session_id} belongs to another session than this Worker's "
                "history; resume it in a fresh Worker"
            )
        run_id = f"{checkpoint.run_id}-fork-{os.urandom(4).hex()}" if fork else checkpoint.run_id
        if effects is None:  # a durable backend consumes the pause once in its own store (and replays it)
            consume(checkpoint.nonce, run_id=run_id, ledger=self.checkpoint_ledger, fork=fork)
        self.session_id = checkpoint.session_id
        self._rewrite_history(list(checkpoint.history))
        self._system = checkpoint.system
        self._paused = None
        run = _Run(
            self,
            run_id,
            turn=checkpoint.turn,
            forced=checkpoint.forced_continuations,
            usage=checkpoint.usage,
            run_start=checkpoint.run_start,
            effects=effects,
        )
        run.last_sent = len(self._history)
        run.forked = fork
        extra: tuple[Item, ...] = (Message.user(messages),) if isinstance(messages, str) else tuple(messages or ())

        async def body() -> Outcome:
            await run.session_start("resume")
            if checkpoint.pause_kind == "tool_calls":
                outcome = await run.resume_batch(checkpoint, decisions)
                if outcome is not None:
                    return outcome
                if run.stop is not None:
                    return run._finished()
            else:
                if not extra:
                    run.last_text = _last_assistant_text(self._history)
                    return run._finished()
                run.forced = 0
                for item in extra:
                    self._append(item)
            return await run.loop()

        return await self._drive(run, body, "resume")

    def checkpoint(self, reason: str = "saved") -> Checkpoint:
        """A checkpoint of the Worker as it is between runs (e.g. after a cancelled or failed run): resuming
        it with ``messages`` continues the conversation in any process; without them it finishes at once.
        A Worker that is paused returns the pause's own checkpoint."""
        if self._run is not None:
            raise WorkerStateError("cannot take a checkpoint while a run is in flight (it pauses or ends first)")
        if self._paused is not None:
            return self._paused
        return Checkpoint(
            run_id=new_id("run"),
            session_id=self.session_id,
            system=self._system,
            history=tuple(self._history),
            batch=(),
            pause_kind="turn_end",
            reason=reason,
            turn=0,
            forced_continuations=0,
            usage=Usage(),
            run_start=len(self._history),
            cache_prefix=self._locked_prefix,
        )

    def _close_abandoned_pause(self) -> None:
        """A new run after a pause that was never resumed: answer the waiting calls so the history stays valid."""
        checkpoint, self._paused = self._paused, None
        if checkpoint is None:
            return
        for call in checkpoint.batch:
            result = call.result or ToolResult(
                call_id=call.call_id,
                name=call.tool_name,
                content="not executed: the run paused for a decision and was not resumed",
                is_error=True,
            )
            self._append(result)

    async def _drive(self, run: _Run, body: Callable[[], Any], source: Literal["startup", "resume"]) -> Outcome:
        if self._run is not None:
            raise WorkerStateError("the Worker is already running; one run at a time")
        task = asyncio.current_task()
        assert task is not None, "Worker.run must be awaited inside a task"
        self._run, self._task = run, task
        self._loop, self._thread = asyncio.get_running_loop(), threading.get_ident()
        effects_token = current_effects.set(run.effects) if run.effects is not None else None
        if self.timeline.subscribers:
            self.timeline.emit(RunStarted(run_id=run.run_id, session_id=self.session_id, source=source))
        end: SessionEndReason = "error"
        try:
            try:
                outcome: Outcome = await body()
            except asyncio.CancelledError:
                run.ending = True
                if not run.cancel_requested:
                    end = "cancelled"
                    await self._fire_abort(run, "Cancelled", "CancelledError")
                    raise
                run.cancel_delivered = True
                task.uncancel()
                raise Cancelled() from None
            run.ending = True
            await _settle_late_cancel(run, task)
            end = "paused" if isinstance(outcome, Paused) else "finished"
            return outcome
        except WorkerError as exc:
            run.ending = True
            await _settle_late_cancel(run, task)
            exc.run_id = run.run_id
            end = "cancelled" if isinstance(exc, Cancelled) else "aborted" if isinstance(exc, Aborted) else "error"
            await self._fire_abort(run, exc.abort_reason, type(exc).__name__)
            raise
        except Exception as exc:
            run.ending = True
            await _settle_late_cancel(run, task)
            await self._fire_abort(run, str(exc) or type(exc).__name__, type(exc).__name__)
            raise
        finally:
            run.ending = True
            self._run = self._task = None
            self._loop = self._thread = None
            try:
                await self._fire_session_end(run, end)
            finally:
                if effects_token is not None:
                    current_effects.reset(effects_token)
            if self.timeline.subscribers:
                self.timeline.emit(RunEnded(run_id=run.run_id, outcome=end))

    async def _fire_abort(self, run: _Run, reason: str, error_type: str) -> None:
        chain = self.hooks.chains[ON_ABORT.index]
        if chain:
            info = AbortInfo(run_id=run.run_id, session_id=self.session_id, reason=reason, error_type=error_type)
            await _shielded(self._fire_observer(ON_ABORT, chain.handlers, info))

    async def _fire_session_end(self, run: _Run, reason: SessionEndReason) -> None:
        chain = self.hooks.chains[SESSION_END.index]
        if chain:
            info = SessionEndInfo(run_id=run.run_id, session_id=self.session_id, reason=reason)
            await _shielded(self._fire_observer(SESSION_END, chain.handlers, info))

    async def _fire_observer(self, event: HookEvent[Any, Any], handlers: Any, info: object) -> None:
        """Fire-and-forget events: each hook runs; one that fails (or asks to abort) is reported on the
        timeline, never raised (the run is already ending for its own reason), and the next one still runs.
        Each hook gets its own copy of ``info``."""
        pristine = snapshot(info) if len(handlers) > 1 else None
        for index, handler in enumerate(handlers):
            try:
                await run_chain(event, (handler,), info if pristine is None or index == 0 else rebuild(pristine))
            except WorkerError as exc:
                if self.timeline.subscribers:
                    self.timeline.emit(
                        HookDecision(
                            event=event.name,
                            hook=handler.name,
                            source=handler.source,
                            decision="HookError",
                            reason=str(exc),
                            seconds=0.0,
                        )
                    )

    def cancel(self) -> None:
        """Cancel the run in flight, from any task or thread. The run raises :class:`Cancelled` promptly
        (model stream closed, running tools cancelled), leaves a valid history and fires on_abort once.

        Does nothing when no run is in flight, and nothing once the run is cancelled or ending: a second
        ``cancel()`` — e.g. from an on_abort hook, or a second Ctrl-C — is ignored; the run still raises
        :class:`Cancelled` (or returns, if it had already finished), and every on_abort and session_end hook
        runs once, to completion. Those hooks are also shielded from a plain ``task.cancel()`` of the awaiting
        task: they complete first, then that cancellation propagates as :class:`asyncio.CancelledError`."""
        run, loop = self._run, self._loop
        if run is None or loop is None:
            return
        if threading.get_ident() == self._thread:
            self._cancel(run)
        else:
            loop.call_soon_threadsafe(self._cancel, run)

    def _cancel(self, run: _Run) -> None:
        """In the run's loop: cancel its task once, unless the run is already ending or gone."""
        task = self._task
        if self._run is not run or task is None or run.ending or run.cancel_requested:
            return
        run.cancel_requested = True
        task.cancel()

    async def iter_run(self, prompt: str | Message) -> AsyncIterator[TimelineEvent]:
        """Run and yield every timeline event as it happens (for UIs). The last event is
        :class:`RunEnded`; the outcome is then in :attr:`last_outcome`; errors are raised after the events.
        Leaving the loop early cancels the run."""
        buffer: collections.deque[TimelineEvent] = collections.deque()
        waiter: list[asyncio.Future[None]] = []

        def wake() -> None:
            if waiter:
                future = waiter.pop()
                if not future.done():
                    future.set_result(None)

        def collect(event: TimelineEvent) -> None:
            buffer.append(event)
            if waiter:  # a future exists only while the consumer waits on an empty buffer
                wake()

        unsubscribe = self.timeline.subscribe(collect)
        task = asyncio.ensure_future(self.run(prompt))
        task.add_done_callback(lambda _: wake())
        loop = asyncio.get_running_loop()
        try:
            while True:
                while buffer:
                    yield buffer.popleft()
                if task.done():
                    break
                future: asyncio.Future[None] = loop.create_future()
                waiter.append(future)
                await future
            while buffer:
                yield buffer.popleft()
            self.last_outcome = task.result()
        finally:
            unsubscribe()
            if not task.done():
                self.cancel()
                with contextlib.suppress(WorkerError, asyncio.CancelledError):
                    await task

    last_outcome: Outcome | None = None

    def close(self) -> None:
        """Close the transcript file, if any."""
        if self._transcript is not None:
            self._transcript.close()


class _AnyFilter:
    """Several read filters as one: a path any of them denies is denied."""

    __slots__ = ("filters",)

    def __init__(self, filters: tuple[Any, ...]) -> None:
        self.filters = filters

    def denies(self, path: str) -> bool:
        return any(f.denies(path) for f in self.filters)


async def _shielded(hooks: Awaitable[None]) -> None:
    """Run ``hooks`` to completion in their own task even if the awaiting task is cancelled meanwhile; then let
    that cancellation through."""
    inner = asyncio.ensure_future(hooks)
    interrupted = False
    while not inner.done():
        try:
            await asyncio.wait((inner,))  # unlike ``await inner``, being cancelled here leaves ``inner`` running
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError
    inner.result()


async def _settle_late_cancel(run: _RunBase, task: asyncio.Task[Any]) -> None:
    """The body ended without surfacing the run's own cancellation (it ended first, or some code consumed it):
    take it now — delivered here if still pending — so it cannot hit the on_abort / session_end hooks, and
    keep the task's cancel count right. Any other cancellation still propagates."""
    if not run.cancel_requested or run.cancel_delivered:
        return
    run.cancel_delivered = True
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        if task.cancelling() > 1:  # someone else cancelled the task too
            task.uncancel()
            raise
    task.uncancel()


def _last_assistant_text(history: Sequence[Item]) -> str:
    for item in reversed(history):
        if isinstance(item, Message) and item.role == "assistant":
            return item.text
    return ""
