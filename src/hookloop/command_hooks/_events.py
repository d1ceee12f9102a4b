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
from typing import Literal

from hookloop._frozen import thaw_object
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
    TurnEndInfo,
)
from hookloop.items import Message

from . import payloads as wire_in
from ._firing import HOOK_NAME, CommandHookCancelled, Fired
from ._watch import WatchedEvents
from .model import HookSource, PromptHandler
from .translate import DecisionKind

__all__ = ["EventHooks"]

_log = logging.getLogger("hookloop.command_hooks.bridge")
_SOURCE = "command hooks"
_CONTINUE = Continue()
_FINISH = Finish()


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
        if self.has("Stop"):
            add(ON_TURN_END, self.turn_end, name=HOOK_NAME, source=_SOURCE)
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
        if w.transcript_path is None:
            _log.info('command hooks: the Worker keeps no transcript; hooks receive transcript_path ""')

    # -- events ---------------------------------------------------------------------------------------------

    async def session_start(self, info: SessionStartInfo) -> SessionStartResult:
        self.baseline()
        if info.source == "startup":  # a resumed batch still ends the turn a judge ended before the pause
            self.turn_ended = None
        cline: Literal["TaskStart", "TaskResume"] = "TaskStart" if info.source == "startup" else "TaskResume"
        hooks = self.select("SessionStart", cline, target=info.source)
        if not hooks:
            return None
        payload = wire_in.session_start_input(self.claude_facts(info.session_id), info.source, model=self.worker.model)
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
            return Continue(additional_context="\n\n".join(merged.additional_context))
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
            return Continue(additional_context="\n\n".join(merged.additional_context))
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
            self.pending_context[info.call_id] = contexts
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
                payload = wire_in.post_tool_use_input(
                    facts, info.tool_name, tool_input, info.content, info.call_id, duration_ms=millis
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
            if merged.kind == "block" and merged.reason:
                texts.append(merged.reason)
            texts.extend(merged.additional_context)
            replacement = merged.replace_output
            if replacement is not None and not isinstance(replacement, str):
                _log.warning(
                    "command hooks: updatedToolOutput for %s ignored: hookloop tool output is a string", info.call_id
                )
                replacement = None
            if replacement is not None or texts:
                return Continue(additional_context="\n\n".join(texts) or None, replace_output=replacement)
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
        merged = (await self.fire(hooks, payload, None, session_id=info.session_id)).merged
        if merged.kind in ("block", "stop") or not merged.continue_:
            return Stop(merged.reason or merged.stop_reason or "stopped by a PostToolBatch hook")
        if merged.additional_context:
            return Continue(additional_context="\n\n".join(merged.additional_context))
        return _CONTINUE

    async def turn_end(self, info: TurnEndInfo) -> OnTurnEndResult:
        hooks = self.select("Stop")
        if not hooks:
            return _FINISH
        facts = self.claude_facts(info.session_id)
        payload = wire_in.stop_input(
            facts, stop_hook_active=info.stop_hook_active, last_assistant_message=info.last_assistant_text
        )
        merged = (await self.fire(hooks, payload, None, session_id=info.session_id)).merged
        if merged.kind == "stop":
            return _FINISH
        texts: list[str] = []
        if merged.kind == "block":
            texts.append(f"Stop hook feedback:\n{merged.reason or 'keep going'}")
        texts.extend(merged.additional_context)
        if not texts:
            return _FINISH
        meta = {"source": "hook_context", "hook": HOOK_NAME, "event": "Stop"}
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
        up to ``background_grace`` seconds from now, then cancelled (their process groups killed)."""
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
            try:
                await self.drain(deadline)
            finally:
                if info.reason != "paused":  # a paused call's PreToolUse context is delivered when it resumes
                    self.pending_context.clear()


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
            if merged.updated_permissions:
                _log.warning(
                    "command hooks: PermissionRequest updatedPermissions for %s are not applied (hookloop keeps "
                    "session rules through AllowAlways only)",
                    pending.call_id,
                )
            return Approve(updated_input=merged.updated_input)
        return None


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
