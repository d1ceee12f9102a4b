"""The per-event hooks :meth:`~hookloop.command_hooks.bridge.CommandHooks.install` registers on a Worker: each
builds its event's stdin, fires the matching handlers and turns the merged answer into a hookloop result (the
table in :mod:`hookloop.command_hooks.bridge`). Private: the public surface is that module.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from hookloop._frozen import JSONValue, freeze_object, thaw_object
from hookloop._run_base import PROTOCOL_CONTEXT_SOURCE
from hookloop.checkpoint import Approve, PendingCall, Reject, ResumeDecision
from hookloop.hooks.events import (
    NOTIFICATION,
    ON_ABORT,
    ON_PROMPT_SUBMIT,
    ON_TURN_END,
    POST_COMPACT,
    POST_TOOL_BATCH,
    POST_TOOL_CALL,
    PRE_COMPACT,
    PRE_TOOL_CALL,
    SESSION_END,
    SESSION_START,
    SUBAGENT_START,
    SUBAGENT_STOP,
)
from hookloop.hooks.results import (
    Abort,
    Allow,
    Ask,
    Cancel,
    Continue,
    ContinueWithMessages,
    Deny,
    Finish,
    OnTurnEndResult,
    Pause,
    PostToolBatchResult,
    PostToolCallResult,
    PreCompactResult,
    PreToolCallResult,
    PromptSubmitResult,
    SessionStartResult,
    Stop,
    SubagentStartResult,
    SubagentStopResult,
)
from hookloop.hooks.summaries import (
    AbortInfo,
    NotificationInfo,
    PostCompactInfo,
    PostToolBatchInfo,
    PostToolCallInfo,
    PreCompactInfo,
    PreToolCallInfo,
    PromptSubmitInfo,
    SessionEndInfo,
    SessionStartInfo,
    SubagentStartInfo,
    SubagentStopInfo,
    TurnEndInfo,
)
from hookloop.items import Message

from . import payloads as wire_in
from ._firing import HOOK_NAME, CommandHookCancelled, Fired
from ._watch import WatchedEvents
from .cline_tools import ClineMappingError, from_cline
from .model import HookSource, PromptHandler
from .session_permissions import apply_updates
from .translate import CommandDecision, DecisionKind, merge_decisions

__all__ = ["EventHooks"]

_log = logging.getLogger("hookloop.command_hooks.bridge")
_SOURCE = PROTOCOL_CONTEXT_SOURCE  # the Worker takes this source's context as it is: see context_blocks
_CONTINUE = Continue()
_FINISH = Finish()
_FINISH_STOPPED = Finish()  # a Stop hook said continue: false: no asyncRewake message wakes the model either


class EventHooks(WatchedEvents):
    """One Worker's command hooks: :meth:`register` adds one ``"command hooks"`` hook per event in use."""

    turn_ended: str | None = None
    """A PreToolUse prompt/agent hook denied a call and ends the turn: the run stops after this batch."""

    def register(self, settings_files: Sequence[HookSource] = ()) -> None:
        """Add the in-process hooks; ``settings_files`` are the settings files ConfigChange watches (default:
        the files the configured hooks come from)."""
        w = self.worker
        add = w.hooks.add
        self.setup_watches(settings_files or list({h.source.path: h.source for h in self.config.hooks}.values()))
        watching = self.watching
        if self.has("SessionStart") or self.has(cline="TaskStart") or self.has(cline="TaskResume") or watching:
            add(SESSION_START, self.session_start, name=HOOK_NAME, source=_SOURCE)
        if self.has("UserPromptSubmit", "UserPromptSubmit") or watching:
            add(ON_PROMPT_SUBMIT, self.prompt_submit, name=HOOK_NAME, source=_SOURCE)
        pre = self.has("PreToolUse", "PreToolUse")
        if pre:
            add(PRE_TOOL_CALL, self.pre_tool_call, name=HOOK_NAME, source=_SOURCE)
        post = self.has("PostToolUse", "PostToolUse") or self.has("PostToolUseFailure")
        if pre or post or watching:
            add(POST_TOOL_CALL, self.post_tool_call, name=HOOK_NAME, source=_SOURCE)
        judges_calls = any(isinstance(h.handler, PromptHandler) for h in self.claude_hooks.get("PreToolUse", ()))
        if self.has("PostToolBatch") or judges_calls:
            add(POST_TOOL_BATCH, self.post_tool_batch, name=HOOK_NAME, source=_SOURCE)
        if self.has("PermissionDenied"):
            w.denial_observers.append(self.permission_denied)
        if self.has("Stop") or self.any_rewake:
            add(ON_TURN_END, self.turn_end, name=HOOK_NAME, source=_SOURCE)
        if self.has("SubagentStart"):
            add(SUBAGENT_START, self.subagent_start, name=HOOK_NAME, source=_SOURCE)
        if self.has("SubagentStop"):
            add(SUBAGENT_STOP, self.subagent_stop, name=HOOK_NAME, source=_SOURCE)
        if self.has("StopFailure"):
            add(ON_ABORT, self.abort, name=HOOK_NAME, source=_SOURCE)
        if self.has("Notification", "Notification"):
            add(NOTIFICATION, self.notification, name=HOOK_NAME, source=_SOURCE)
        if self.has("PreCompact", "PreCompact"):
            add(PRE_COMPACT, self.pre_compact, name=HOOK_NAME, source=_SOURCE)
        if self.has("PostCompact"):
            add(POST_COMPACT, self.post_compact, name=HOOK_NAME, source=_SOURCE)
        if self.has("PermissionRequest"):
            w.approvers.append(PermissionRequestApprover(self))
        if self.has("Elicitation") or self.has("ElicitationResult"):
            from ._elicitation import ElicitationHooks

            ElicitationHooks(self).register()
        add(SESSION_END, self.session_end, name=HOOK_NAME, source=_SOURCE)

    # -- events ---------------------------------------------------------------------------------------------

    async def session_start(self, info: SessionStartInfo) -> SessionStartResult:
        self.baseline()
        if info.source == "startup":  # a resumed batch still ends the turn a judge ended before the pause
            self.turn_ended = None
        cline: Literal["TaskStart", "TaskResume"] = "TaskStart" if info.source == "startup" else "TaskResume"
        # A run that continues a conversation (the session already has history) is Claude Code's
        # ``claude --continue``: SessionStart says ``resume``, so a ``startup`` hook (one-time set-up) does not
        # run again for every prompt of the session. The prompt of a starting run is not in the history yet.
        source: Literal["startup", "resume"] = "resume" if self.worker.history else info.source
        hooks = self.select("SessionStart", cline, target=source)
        if not hooks:
            return None
        payload = wire_in.session_start_input(self.claude_facts(info.session_id), source, model=self.worker.model)
        fired = await self.fire(
            hooks,
            payload,
            lambda: wire_in.cline_task(
                self.cline_facts(info.run_id), cline, message_count=len(self.worker.history), initial_task=info.prompt
            ),
            session_id=info.session_id,
        )
        self.take_watch_paths(fired)
        merged = fired.merged
        if merged.kind == "stop":
            raise _cancelled(fired, "SessionStart" if info.source == "startup" else cline)
        if merged.additional_context:
            return Continue(additional_context="\n\n".join(context_blocks(fired, "SessionStart")))
        return None

    async def prompt_submit(self, info: PromptSubmitInfo) -> PromptSubmitResult:
        await self.observe(info.session_id)
        hooks = self.select("UserPromptSubmit", "UserPromptSubmit")
        if not hooks:
            return _CONTINUE
        facts = self.claude_facts(info.session_id)
        fired = await self.fire(
            hooks,
            wire_in.user_prompt_submit_input(facts, info.prompt),
            lambda: wire_in.cline_user_prompt_submit(self.cline_facts(info.run_id), info.prompt),
            session_id=info.session_id,
        )
        merged = fired.merged
        if merged.kind == "stop":
            return Cancel(merged.stop_reason or "stopped by a UserPromptSubmit hook")
        if merged.kind == "block":
            return Cancel(merged.reason or "blocked by a UserPromptSubmit hook")
        if merged.additional_context:
            return Continue(additional_context="\n\n".join(context_blocks(fired, "UserPromptSubmit")))
        return _CONTINUE

    async def pre_tool_call(self, info: PreToolCallInfo) -> PreToolCallResult:
        tool_input = thaw_object(info.arguments)
        hooks = self.select("PreToolUse", "PreToolUse", target=info.tool_name, tool=(info.tool_name, tool_input))
        if not hooks:
            return _CONTINUE
        facts = self.claude_facts(info.session_id)
        fired = await self.fire(
            hooks,
            wire_in.pre_tool_use_input(facts, info.tool_name, tool_input, info.call_id),
            lambda: wire_in.cline_pre_tool_use(self.cline_facts(info.run_id), info.tool_name, tool_input),
            session_id=info.session_id,
            call_id=info.call_id,
        )
        if any(
            h.protocol == "cline" and d.updated_input is not None
            for h, d in zip(fired.hooks, fired.decisions, strict=True)
        ):
            fired = self.cline_rewrites(fired, info.tool_name, tool_input)
        merged = fired.merged
        contexts = list(merged.additional_context)
        kind = merged.kind
        if kind == "stop":
            if any(
                h.protocol == "cline" and not d.continue_ for h, d in zip(fired.hooks, fired.decisions, strict=True)
            ):
                raise _cancelled(fired, "PreToolUse")
            return Abort(merged.stop_reason or "stopped by a PreToolUse hook")
        if kind in ("deny", "block"):
            if fired.ends_turn:
                self.turn_ended = fired.ends_turn
            return Deny("\n\n".join([merged.reason or "denied by a PreToolUse hook", *contexts]))
        if contexts:
            self.pending_context[info.call_id] = context_blocks(fired, "PreToolUse")
        if kind == "defer":
            return Pause(merged.reason or "deferred by a PreToolUse hook")
        if kind == "ask":
            reason = _labelled_reasons(fired, "ask") or "a PreToolUse hook asks for approval"
            return Ask(reason, updated_input=merged.updated_input)
        if kind == "allow":
            return Allow(merged.reason or "", updated_input=merged.updated_input)
        if merged.updated_input is not None:
            return Continue(updated_input=merged.updated_input)
        return _CONTINUE

    def cline_rewrites(self, fired: Fired, tool_name: str, tool_input: dict[str, JSONValue]) -> Fired:
        """Cline hooks' ``overrideInput`` (Cline parameters) mapped back to the tool's input; one that cannot be
        mapped denies the call (never run an input the hook did not approve)."""
        decisions: list[CommandDecision] = []
        for hook, decision in zip(fired.hooks, fired.decisions, strict=True):
            if hook.protocol == "cline" and decision.updated_input is not None:
                try:
                    mapped = from_cline(tool_name, tool_input, thaw_object(decision.updated_input), self.cwd)
                    decision = replace(decision, updated_input=freeze_object(mapped))
                except ClineMappingError as exc:
                    reason = f"the PreToolUse hook {hook.name} rewrote the input in a way hookloop cannot map: {exc}"
                    if self.log_failures:  # else the deny's reason on the timeline says it
                        _log.warning("command hooks: %s", reason)
                    decision = replace(decision, kind="deny", reason=reason, updated_input=None)
            decisions.append(decision)
        return replace(fired, decisions=tuple(decisions), merged=merge_decisions(decisions))

    async def post_tool_call(self, info: PostToolCallInfo) -> PostToolCallResult:
        """PostToolUse / PostToolUseFailure, then what the call changed: CwdChanged, FileChanged, ConfigChange."""
        result = await self.post_tool_use(info)
        await self.observe(info.session_id, info.tool_name)
        return result

    async def post_tool_use(self, info: PostToolCallInfo) -> PostToolCallResult:
        texts = self.pending_context.pop(info.call_id, [])
        seconds = info.seconds
        claude = "PostToolUseFailure" if info.is_error else "PostToolUse"
        tool_input = thaw_object(info.arguments)
        hooks = self.select(claude, "PostToolUse", target=info.tool_name, tool=(info.tool_name, tool_input))
        if hooks:
            facts = self.claude_facts(info.session_id)
            millis = None if seconds is None else round(seconds * 1000)
            if info.is_error:
                payload: Mapping[str, object] = wire_in.post_tool_use_failure_input(
                    facts, info.tool_name, tool_input, info.call_id, info.content, duration_ms=millis
                )
            else:
                structured = None if info.structured is None else thaw_object(info.structured)
                response = wire_in.tool_response_of(info.tool_name, info.content, structured)
                payload = wire_in.post_tool_use_input(
                    facts, info.tool_name, tool_input, response, info.call_id, duration_ms=millis
                )
            fired = await self.fire(
                hooks,
                payload,
                lambda: wire_in.cline_post_tool_use(
                    self.cline_facts(info.run_id),
                    info.tool_name,
                    tool_input,
                    result=info.content,
                    success=not info.is_error,
                    execution_ms=millis or 0,
                ),
                session_id=info.session_id,
                call_id=info.call_id,
            )
            merged = fired.merged
            if merged.kind == "stop":
                return Stop(merged.stop_reason or f"stopped by a {claude} hook")
            if fired.ends_turn:
                return Stop(fired.ends_turn)
            texts.extend(context_blocks(fired, claude, block_reasons=merged.kind == "block"))
            replacement: object = merged.replace_output
            if replacement is not None and not isinstance(replacement, str):
                replacement = wire_in.replacement_text(info.tool_name, replacement)
                if replacement is None:
                    _log.warning(
                        "command hooks: updatedToolOutput for %s ignored: it does not match %s's output shape",
                        info.call_id,
                        info.tool_name,
                    )
            if replacement is not None or texts:
                text = replacement if isinstance(replacement, str) else None
                return Continue(additional_context="\n\n".join(texts) or None, replace_output=text)
        elif texts:
            return Continue(additional_context="\n\n".join(texts))
        return _CONTINUE

    async def post_tool_batch(self, info: PostToolBatchInfo) -> PostToolBatchResult:
        """PostToolBatch: block (or stop) ends the loop before the next model call; context reaches the model.
        A PreToolUse prompt/agent hook that ended the turn stops the run here too."""
        ended, self.turn_ended = self.turn_ended, None
        if ended is not None:
            return Stop(ended)
        hooks = self.select("PostToolBatch")
        if not hooks:
            return _CONTINUE
        calls = [(c.tool_name, thaw_object(c.arguments), c.call_id, c.content) for c in info.calls]
        payload = wire_in.post_tool_batch_input(self.claude_facts(info.session_id), calls)
        fired = await self.fire(hooks, payload, None, session_id=info.session_id)
        merged = fired.merged
        if merged.kind in ("block", "stop") or not merged.continue_:
            return Stop(merged.reason or merged.stop_reason or "stopped by a PostToolBatch hook")
        if merged.additional_context:
            return Continue(additional_context="\n\n".join(context_blocks(fired, "PostToolBatch")))
        return _CONTINUE

    async def turn_end(self, info: TurnEndInfo) -> OnTurnEndResult:
        """Stop hooks; then asyncRewake handlers still running are waited for, and their exit-2 messages wake
        the model (:mod:`hookloop.command_hooks.rewake`)."""
        stopped = await self.stop_hooks(info)
        if isinstance(stopped, ContinueWithMessages) or not self.any_rewake:
            return stopped
        if stopped is _FINISH_STOPPED:
            return _FINISH
        woken = await self.rewake.wake(self.rewake_wait)
        return ContinueWithMessages(woken) if woken else stopped

    async def stop_hooks(self, info: TurnEndInfo) -> OnTurnEndResult:
        hooks = self.select("Stop")
        if not hooks:
            return _FINISH
        facts = self.claude_facts(info.session_id)
        payload = wire_in.stop_input(
            facts, stop_hook_active=info.stop_hook_active, last_assistant_message=info.last_assistant_text
        )
        merged = (await self.fire(hooks, payload, None, session_id=info.session_id)).merged
        if merged.kind == "stop":
            return _FINISH_STOPPED
        texts: list[str] = []
        if merged.kind == "block":
            texts.append(f"Stop hook feedback:\n{merged.reason or 'keep going'}")
        texts.extend(merged.additional_context)
        if not texts:
            return _FINISH
        meta = {"source": "hook_context", "hook": HOOK_NAME, "event": "Stop"}
        return ContinueWithMessages([Message.user("\n\n".join(texts), meta=meta)])

    async def subagent_start(self, info: SubagentStartInfo) -> SubagentStartResult:
        """SubagentStart (matcher: the agent type): context for the subagent only; it cannot block."""
        hooks = self.select("SubagentStart", target=info.agent_type)
        if not hooks:
            return None
        facts = self.claude_facts(info.session_id)
        payload = wire_in.subagent_start_input(facts, agent_id=info.agent_id, agent_type=info.agent_type)
        fired = await self.fire(hooks, payload, None, session_id=info.session_id, call_id=info.call_id)
        blocks = context_blocks(fired, "SubagentStart")
        return Continue(additional_context="\n\n".join(blocks)) if blocks else None

    async def subagent_stop(self, info: SubagentStopInfo) -> SubagentStopResult:
        """SubagentStop (matcher: the agent type): ``decision: block`` sends the subagent back to work with the
        reason; ``continue: false`` lets it stop."""
        hooks = self.select("SubagentStop", target=info.agent_type)
        if not hooks:
            return _FINISH
        payload = wire_in.subagent_stop_input(
            self.claude_facts(info.session_id),
            agent_id=info.agent_id,
            agent_type=info.agent_type,
            agent_transcript_path=info.transcript_path or "",
            stop_hook_active=info.stop_hook_active,
            last_assistant_message=info.last_assistant_text,
        )
        merged = (await self.fire(hooks, payload, None, session_id=info.session_id, call_id=info.call_id)).merged
        if merged.kind == "stop":
            return _FINISH
        texts: list[str] = []
        if merged.kind == "block":
            texts.append(f"SubagentStop hook feedback:\n{merged.reason or 'keep going'}")
        texts.extend(merged.additional_context)
        if not texts:
            return _FINISH
        meta = {"source": "hook_context", "hook": HOOK_NAME, "event": "SubagentStop"}
        return ContinueWithMessages([Message.user("\n\n".join(texts), meta=meta)])

    async def abort(self, info: AbortInfo) -> None:
        error = wire_in.stop_failure_error(info.error_type)
        if error is None:
            return
        hooks = self.select("StopFailure", target=error)
        if hooks:
            payload = wire_in.stop_failure_input(self.claude_facts(info.session_id), error=error, message=info.reason)
            self.spawn(self.fire(hooks, payload, None, session_id=info.session_id, background=True))

    async def notification(self, info: NotificationInfo) -> None:
        hooks = self.select("Notification", "Notification", target=info.kind)
        if not hooks:
            return
        payload = wire_in.notification_input(self.claude_facts(info.session_id), info.text, info.kind)
        waiting = info.kind == "permission_prompt"

        def cline() -> Mapping[str, object]:
            facts = self.cline_facts(info.run_id)
            return wire_in.cline_notification(
                facts, event=info.kind, source=info.source, message=info.text, waiting_for_user=waiting
            )

        self.spawn(self.fire(hooks, payload, cline, session_id=info.session_id, background=True))

    async def pre_compact(self, info: PreCompactInfo) -> PreCompactResult:
        hooks = self.select("PreCompact", "PreCompact", target=info.trigger)
        if not hooks:
            return _CONTINUE
        payload = wire_in.pre_compact_input(self.claude_facts(info.session_id), info.trigger)
        with tempfile.TemporaryDirectory(prefix="hookloop-compact-") as folder:
            context_path = os.path.join(folder, "context.json")

            def cline() -> Mapping[str, object]:
                with open(context_path, "w", encoding="utf-8") as handle:
                    json.dump([item.to_json() for item in self.worker.history], handle, ensure_ascii=False)
                facts = self.cline_facts(info.run_id)
                return wire_in.cline_pre_compact(
                    facts, context_size=info.token_estimate, strategy=info.trigger, context_json_path=context_path
                )

            fired = await self.fire(hooks, payload, cline, session_id=info.session_id)
        merged = fired.merged
        if merged.kind == "stop":
            raise _cancelled(fired, "PreCompact")
        if merged.kind == "block":
            return Cancel(merged.reason or "blocked by a PreCompact hook")
        return _CONTINUE

    async def post_compact(self, info: PostCompactInfo) -> None:
        hooks = self.select("PostCompact", target=info.trigger)
        if hooks:
            payload = wire_in.post_compact_input(self.claude_facts(info.session_id), info.trigger, info.summary)
            await self.fire(hooks, payload, None, session_id=info.session_id)

    async def session_end(self, info: SessionEndInfo) -> None:
        """SessionEnd / TaskComplete / TaskCancel, then the background hooks of the run are drained: waited for
        up to ``background_grace`` seconds from now, then cancelled (their process groups killed); the processes
        hooks left running after they answered (:mod:`hookloop.command_hooks.kept`) get the same deadline, then
        are ended (SIGTERM, ``kill_grace``, SIGKILL) and reaped."""
        deadline = asyncio.get_running_loop().time() + self.background_grace
        try:
            reason = wire_in.session_end_reason(info.reason)
            cline = wire_in.cline_session_end_hook(info.reason)
            hooks = self.select("SessionEnd", cline, target=reason)
            if hooks:
                payload = wire_in.session_end_input(self.claude_facts(info.session_id), info.reason)
                run_id = info.run_id
                await self.fire(
                    hooks,
                    payload,
                    lambda: wire_in.cline_task(self.cline_facts(run_id), cline or "TaskComplete"),
                    session_id=info.session_id,
                )
        finally:
            self.transcript.current()  # the run's last items, for background hooks and for whoever reads it next
            try:
                await self.drain(deadline)
                self.rewake.close_run()  # wake-up messages not delivered: the next run starts with them
            finally:
                if info.reason != "paused":  # a paused call's PreToolUse context is delivered when it resumes
                    self.pending_context.clear()
                try:
                    if self.processes is not None:
                        await self.processes.close()  # hook processes live for one run (they restart lazily)
                finally:
                    if self.kept is not None:
                        await self.kept.release(deadline)  # what hooks left running ends with the session


class PermissionRequestApprover:
    """PermissionRequest hooks, consulted before a run pauses on a permission ask."""

    name = f"{HOOK_NAME} (PermissionRequest)"

    def __init__(self, installation: EventHooks) -> None:
        self.installation = installation

    async def __call__(self, pending: PendingCall) -> ResumeDecision | None:
        inst = self.installation
        tool_input = thaw_object(pending.arguments)
        hooks = inst.select("PermissionRequest", target=pending.tool_name, tool=(pending.tool_name, tool_input))
        if not hooks:
            return None
        session_id = inst.worker.session_id
        payload = wire_in.permission_request_input(inst.claude_facts(session_id), pending.tool_name, tool_input)
        fired = await inst.fire(hooks, payload, None, session_id=session_id, call_id=pending.call_id)
        merged = fired.merged
        if merged.kind == "stop" or (merged.kind == "deny" and merged.interrupt):
            raise _cancelled(fired, "PermissionRequest")
        if merged.kind == "deny":
            return Reject(merged.reason or "denied by a PermissionRequest hook")
        if merged.kind == "allow":
            for hook, decision in zip(fired.hooks, fired.decisions, strict=True):
                if decision.kind == "allow" and decision.updated_permissions:
                    apply_updates(inst.worker.permissions, decision.updated_permissions, hook=hook.name)
            return Approve(updated_input=merged.updated_input)
        return None


def context_blocks(fired: Fired, event: str, *, block_reasons: bool = False) -> list[str]:
    """The model-visible context of one firing, one block per hook and entry, in configuration order: a Claude
    hook's text (already capped at Claude Code's 10 000 characters) in hookloop's ``<hook-context>`` tag, named
    ``command hooks`` and the event (a configured command line may hold secrets: the model never sees it); a
    Cline hook's ``<hook_context>`` block (capped at Cline's 50 000) as it is. The Worker adds no cap or wrapper
    of its own (:data:`~hookloop._run_base.PROTOCOL_CONTEXT_SOURCE`), so one hook's long context never cuts
    another's. ``block_reasons``: a PostToolUse ``decision: block`` reason is shown to the model too, before
    that hook's context."""
    blocks: list[str] = []
    for hook, decision in zip(fired.hooks, fired.decisions, strict=True):
        texts = list(decision.additional_context)
        if block_reasons and decision.kind == "block" and decision.reason:
            texts.insert(0, decision.reason)
        for text in texts:
            if hook.protocol == "cline" and text in decision.additional_context:
                blocks.append(text)
            else:
                blocks.append(f'<hook-context hook="{HOOK_NAME}" event="{event}">\n{text}\n</hook-context>')
    return blocks


def _labelled_reasons(fired: Fired, kind: DecisionKind) -> str:
    """The reasons of the hooks that chose ``kind``, each tagged with its source label (``[Project] …``), as
    Claude Code labels an ask prompt."""
    reasons = [
        f"[{hook.source.label}] {decision.reason}"
        for hook, decision in zip(fired.hooks, fired.decisions, strict=True)
        if decision.kind == kind and decision.reason
    ]
    return "\n".join(dict.fromkeys(reasons))


def _cancelled(fired: Fired, event: str) -> CommandHookCancelled:
    stopping = [
        (hook, decision)
        for hook, decision in zip(fired.hooks, fired.decisions, strict=True)
        if not decision.continue_ or decision.interrupt
    ]
    protocol: Literal["claude", "cline"] = stopping[0][0].protocol if stopping else "claude"
    merged = fired.merged
    reason = merged.stop_reason or merged.reason or f"a {event} hook stopped the run"
    return CommandHookCancelled(reason, event=event, hooks=[hook.name for hook, _ in stopping], protocol=protocol)
