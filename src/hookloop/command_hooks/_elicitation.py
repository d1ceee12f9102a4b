"""Claude Code's ``Elicitation`` and ``ElicitationResult`` hook events on MCP elicitation
(:mod:`hookloop.tools._elicitation`). Private: installed by :class:`~hookloop.command_hooks.bridge.CommandHooks`.

``Elicitation`` fires when an MCP server bound to the Worker asks for user input, before the application is
asked (the matcher filters on the server name). stdin: the common fields plus ``mcp_server_name``, ``message``,
``mode`` (``form``/``url``), ``requested_schema`` (form) or ``url`` and ``elicitation_id`` (url). A hook
answers with ``hookSpecificOutput.action`` (``accept``/``decline``/``cancel``) and, for an accept, ``content``;
exit code 2 (or ``continue: false``, or ``decision: "block"``) declines. No answer: the application decides.

``ElicitationResult`` fires with the answer, before the server gets it: stdin adds ``action``, ``mode``,
``elicitation_id`` and ``content``; the same output replaces the answer, and exit code 2 turns it into
``decline``.

Several hooks: ``decline`` wins over ``cancel``, which wins over ``accept``; of several accepts the last with
content (configuration order) gives the content. A hook that fails or times out decides nothing (a
``failClosed`` one declines). Every accept is then checked against the request like any other answer — a hook
cannot send the server fields it did not ask for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hookloop._frozen import thaw_object
from hookloop.timeline import HookStarted
from hookloop.tools._elicitation import ElicitationRequest, ElicitationResponse, elicitation_routing

from . import payloads as wire_in
from ._firing import _source
from .model import ConfiguredHook, HookOutcome
from .runner import run_all
from .translate import CommandDecision, DecisionKind

if TYPE_CHECKING:
    from ._events import EventHooks

__all__ = ["ElicitationHooks"]

_RANK = {"accept": 0, "cancel": 1, "decline": 2}


class ElicitationHooks:
    """The two events on one Worker's elicitation routing."""

    def __init__(self, firing: EventHooks) -> None:
        self.firing = firing

    def register(self) -> None:
        routing = elicitation_routing(self.firing.worker)
        if self.firing.has("Elicitation"):
            routing.before.append(self.elicitation)
        if self.firing.has("ElicitationResult"):
            routing.after.append(self.elicitation_result)

    async def elicitation(self, request: ElicitationRequest) -> ElicitationResponse | None:
        payload = self._payload("Elicitation", request)
        if request.mode == "url":
            payload.update(url=request.url or "", elicitation_id=request.elicitation_id or "")
        else:
            payload["requested_schema"] = thaw_object(request.requested_schema or {})
        return await self._fire("Elicitation", request, payload)

    async def elicitation_result(
        self, request: ElicitationRequest, response: ElicitationResponse
    ) -> ElicitationResponse | None:
        payload = self._payload("ElicitationResult", request)
        payload["action"] = response.action
        if request.elicitation_id is not None:
            payload["elicitation_id"] = request.elicitation_id
        payload["content"] = thaw_object(response.content)
        return await self._fire("ElicitationResult", request, payload)

    def _payload(self, event: str, request: ElicitationRequest) -> dict[str, object]:
        facts = self.firing.claude_facts(self.firing.worker.session_id)
        data = wire_in._common(facts, event)
        data["mcp_server_name"] = request.server
        data["message"] = request.message
        data["mode"] = request.mode
        return data

    async def _fire(
        self, event: str, request: ElicitationRequest, payload: Mapping[str, object]
    ) -> ElicitationResponse | None:
        firing = self.firing
        hooks = firing.select(event, target=request.server)
        if not hooks:
            return None
        session_id = firing.worker.session_id
        timeline = firing.worker.timeline
        if timeline.subscribers:
            for hook in hooks:
                timeline.emit(HookStarted(event=event, hook=hook.name, source=_source(hook), call_id=None))
        outcomes = await run_all(
            hooks,
            payload,
            project_dir=firing.project_dir,
            options=firing.options,
            on_line=firing.line_streamer(),
            extra_env={"CLAUDE_CODE_SESSION_ID": session_id, "HOOKLOOP_SESSION_ID": session_id},
        )
        answers = [answer(hook, outcome) for hook, outcome in zip(hooks, outcomes, strict=True)]
        firing.report(hooks, outcomes, [decision for _, decision in answers], None)
        return merge([response for response, _ in answers])


def answer(hook: ConfiguredHook, outcome: HookOutcome) -> tuple[ElicitationResponse | None, CommandDecision]:
    """One hook's answer (``None``: no decision) and its report."""
    if not outcome.ok or outcome.stdout_truncated:
        error = outcome.error or f"hook {outcome.name} failed ({outcome.error_kind})"
        if hook.fail_closed:
            return ElicitationResponse(action="decline"), CommandDecision(kind="deny", reason=f"{error} (failClosed)")
        return None, CommandDecision(errors=(error,))
    if outcome.http_status is None and outcome.exit_code == 2:
        reason = outcome.stderr_text.strip() or "declined by the hook (exit code 2)"
        return ElicitationResponse(action="decline"), CommandDecision(kind="deny", reason=reason)
    if outcome.http_status is not None and not 200 <= outcome.http_status < 300:
        return None, CommandDecision(errors=(f"hook {outcome.name} answered HTTP {outcome.http_status}",))
    text = outcome.stdout_text.strip()
    if not text.startswith("{"):
        if outcome.http_status is None and outcome.exit_code not in (0, None):
            return None, CommandDecision(errors=(f"hook {outcome.name} exited {outcome.exit_code}",))
        return None, CommandDecision()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None, CommandDecision(errors=(f"hook {outcome.name} printed invalid JSON",))
    if not isinstance(data, dict):
        return None, CommandDecision()
    if data.get("continue") is False or data.get("decision") == "block":
        reason = str(data.get("stopReason") or data.get("reason") or "declined by the hook")
        return ElicitationResponse(action="decline"), CommandDecision(kind="deny", reason=reason)
    specific = data.get("hookSpecificOutput")
    action = specific.get("action") if isinstance(specific, dict) else None
    if action is None:
        return None, CommandDecision()
    if action not in _RANK:
        error = f"hook {outcome.name}: hookSpecificOutput.action {action!r} is not accept, decline or cancel"
        return None, CommandDecision(errors=(error,))
    content = specific.get("content") if isinstance(specific, dict) else None
    if content is not None and not isinstance(content, dict):
        error = f"hook {outcome.name}: hookSpecificOutput.content must be an object"
        return ElicitationResponse(action="decline"), CommandDecision(kind="deny", reason=error, errors=(error,))
    response = ElicitationResponse(action=action, content=content or {})
    kind: DecisionKind = "allow" if action == "accept" else "deny" if action == "decline" else "block"
    return response, CommandDecision(kind=kind, reason=f"action: {action}")


def merge(responses: Sequence[ElicitationResponse | None]) -> ElicitationResponse | None:
    """decline > cancel > accept; the content of the last accept that has some."""
    given = [r for r in responses if r is not None]
    if not given:
        return None
    strongest = max(given, key=lambda r: _RANK[r.action])
    if strongest.action != "accept":
        return ElicitationResponse(action=strongest.action)
    with_content = [r for r in given if r.content]
    return with_content[-1] if with_content else given[-1]
