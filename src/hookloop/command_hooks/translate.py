"""What a command hook's answer means: pure functions from (event, exit code, stdout, stderr) to a decision.

One :class:`CommandDecision` per hook; :func:`merge_decisions` folds the decisions of all hooks of one firing.
The rules are Claude Code's (reference §1.3) and Cline's (§2.3), with hookloop's fixes of the known traps
(§7.3): a hook that could not run is a *hook error*, never a decision — unless the handler is ``failClosed``.

Claude Code, per exit status:

* **0** — stdout is JSON iff, stripped, it starts with ``{`` and parses as an object; else plain text. Plain
  text becomes context on UserPromptSubmit and SessionStart and is ignored elsewhere. A JSON object that fails
  validation (wrong field types, wrong ``hookEventName``) is a non-blocking error: the hook has no effect.
* **2** — on events that can block, it blocks even if the JSON says allow (the one thing JSON cannot
  override): PreToolUse → ``deny``; UserPromptSubmit, PostToolUse, PostToolUseFailure, PostToolBatch, Stop,
  PreCompact → ``block``. The reason is the JSON's own blocking reason if it gives one, else stderr, else a
  generic text (exit 2 with empty stderr still blocks). Other JSON fields (context, messages, ``continue``)
  still apply; invalid JSON is ignored but the block stands. SessionStart, SessionEnd, PostCompact: stderr is
  shown to the user. PermissionRequest: exit 2 is not honoured (a non-blocking error; use
  ``decision.behavior``). Notification: ignored.
* **other** — with a valid JSON object the JSON alone decides; otherwise a non-blocking error naming the
  status and the first stderr line.

What ``kind`` means per event: PreToolUse ``allow``/``ask``/``defer``/``deny`` (permission decisions; ``allow``
never bypasses the Worker's deny/ask rules); PermissionRequest ``allow``/``deny``; ``block`` on
UserPromptSubmit = reject and erase the prompt (reason shown to the user only); on PostToolUse /
PostToolUseFailure = show ``reason`` to the model next to the result; on PostToolBatch = stop the loop before
the next model call; on Stop = **keep going** with ``reason`` as the instruction (``additional_context`` on
Stop also continues, without the error label); on PreCompact = do not compact. ``stop`` = ``continue: false``:
the agent stops (``stop_reason`` shown to the user); it overrides everything else. ``continue`` = no opinion.

Fire-and-forget events (Notification, SessionEnd, PostCompact) honour only ``systemMessage``; StopFailure
ignores all output. Cline's ``cancel`` is honoured only on its cancellable events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from hookloop._frozen import FrozenDict, FrozenJSON, freeze, freeze_object

from .extract import extract_last_json_object, read_claude_json
from .model import CLINE_CANCELLABLE_EVENTS, CLINE_EVENTS, ConfiguredHook, HookOutcome

__all__ = [
    "CLINE_CONTEXT_LIMIT",
    "CONTEXT_LIMIT",
    "CommandDecision",
    "DecisionKind",
    "cap_text",
    "format_cline_context",
    "merge_decisions",
    "translate_claude",
    "translate_cline",
    "translate_failure",
    "translate_http",
    "translate_outcome",
]

CONTEXT_LIMIT = 10_000
"""Claude Code's cap on ``additionalContext``, ``systemMessage``, plain-stdout context and reasons."""
CLINE_CONTEXT_LIMIT = 50_000
"""Cline's cap on ``contextModification``."""
_CLINE_TRUNCATED = "\n\n[... context truncated due to size limit ...]"

DecisionKind: TypeAlias = Literal["continue", "allow", "ask", "defer", "deny", "block", "stop"]
_PERMISSIONS: dict[str, DecisionKind] = {"allow": "allow", "deny": "deny", "ask": "ask", "defer": "defer"}
_RANK: dict[DecisionKind, int] = {
    "continue": 0,
    "allow": 1,
    "ask": 2,
    "defer": 3,
    "deny": 4,
    "block": 5,
    "stop": 6,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandDecision:
    """The neutral meaning of one hook's answer (or of several, merged). See the module docstring for what
    ``kind`` does on each event."""

    kind: DecisionKind = "continue"
    reason: str | None = None
    """Why (deny/block: shown to the model, except on UserPromptSubmit; allow/ask: shown to the user)."""
    updated_input: FrozenDict | None = None
    """PreToolUse/PermissionRequest: the complete replacement tool input (with allow, ask or no decision)."""
    additional_context: tuple[str, ...] = ()
    """Model-visible context, each entry capped (10 000 characters; Cline 50 000) with a visible marker."""
    system_message: tuple[str, ...] = ()
    """Messages for the user (``systemMessage``, stderr of exit 2 on session events, Cline ``errorMessage``)."""
    continue_: bool = True
    """``False`` when a hook said ``continue: false`` (or Cline ``cancel: true``): the agent stops."""
    stop_reason: str | None = None
    suppress_output: bool = False
    """``suppressOutput`` (accepted; Claude Code currently gives it no effect)."""
    replace_output: FrozenJSON | None = None
    """PostToolUse ``updatedToolOutput`` (or legacy ``updatedMCPToolOutput``); the caller checks it matches the
    tool's output shape. ``None`` = keep the output (a hook cannot replace it with JSON null)."""
    updated_permissions: tuple[FrozenJSON, ...] = ()
    """PermissionRequest allow: permission rule updates."""
    interrupt: bool = False
    """PermissionRequest deny with ``interrupt: true``: also stop the agent."""
    errors: tuple[str, ...] = ()
    """Non-blocking hook errors (could not run, bad output, exit 1 …): shown, never a decision."""

    @property
    def failed(self) -> bool:
        return bool(self.errors)


@dataclass(frozen=True, slots=True)
class _Rules:
    exit2: Literal["deny", "block", "user", "invalid", "ignore"]
    output: Literal["full", "message_only", "ignored"] = "full"
    decision_block: bool = False
    context: bool = False
    plain_context: bool = False
    fail_closed: DecisionKind = "continue"


_RULES: dict[str, _Rules] = {
    "SessionStart": _Rules("user", context=True, plain_context=True),
    "SessionEnd": _Rules("user", output="message_only"),
    "UserPromptSubmit": _Rules("block", decision_block=True, context=True, plain_context=True, fail_closed="block"),
    "PreToolUse": _Rules("deny", context=True, fail_closed="deny"),
    "PermissionRequest": _Rules("invalid", fail_closed="deny"),
    "PostToolUse": _Rules("block", decision_block=True, context=True),
    "PostToolUseFailure": _Rules("block", decision_block=True, context=True),
    "PostToolBatch": _Rules("block", decision_block=True, context=True, fail_closed="block"),
    "Notification": _Rules("ignore", output="message_only"),
    "Stop": _Rules("block", decision_block=True, context=True),
    "SubagentStop": _Rules("block", decision_block=True, context=True),
    "SubagentStart": _Rules("user", context=True),
    "StopFailure": _Rules("ignore", output="ignored"),
    "PreCompact": _Rules("block", decision_block=True, fail_closed="block"),
    "PostCompact": _Rules("user", output="message_only"),
    # Fired by hookloop.command_hooks._events / _watch; PermissionDenied's ``retry`` and the ``watchPaths`` of
    # CwdChanged / FileChanged are read there from the raw output.
    "PermissionDenied": _Rules("ignore", output="message_only"),
    "ConfigChange": _Rules("block", decision_block=True),
    "CwdChanged": _Rules("ignore", output="message_only"),
    "FileChanged": _Rules("ignore", output="message_only"),
    # The action/content answer is read by command_hooks/_elicitation.py; here exit 2 (and failClosed) declines.
    "Elicitation": _Rules("deny", fail_closed="deny"),
    "ElicitationResult": _Rules("deny", fail_closed="deny"),
}


def _rules(event: str) -> _Rules:
    try:
        return _RULES[event]
    except KeyError:
        raise ValueError(f"no command-hook translation for event {event!r}") from None


def cap_text(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, ending with a visible marker when cut."""
    if len(text) <= limit:
        return text
    marker = f"\n[… hook output truncated: {len(text)} characters, limit {limit}]"
    return text[: max(limit - len(marker), 0)] + marker


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]


# --------------------------------------------------------------------------------------------------------------
# Claude Code
# --------------------------------------------------------------------------------------------------------------


class _Invalid(Exception):
    """The JSON object does not follow the event's output schema."""


def _get(obj: Mapping[str, object], key: str, kind: type, what: str) -> object:
    value = obj.get(key)
    if value is not None and not isinstance(value, kind):
        raise _Invalid(f"{key}: expected {what}")
    return value


def _str(obj: Mapping[str, object], key: str) -> str | None:
    value = _get(obj, key, str, "a string")
    return value if isinstance(value, str) else None


def _bool(obj: Mapping[str, object], key: str) -> bool | None:
    value = _get(obj, key, bool, "a boolean")
    return value if isinstance(value, bool) else None


def _obj(obj: Mapping[str, object], key: str) -> Mapping[str, object] | None:
    value = _get(obj, key, dict, "an object")
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A schema-valid output, reduced to what this event honours."""

    decision: CommandDecision
    blocking_reason: str | None
    """The JSON's own reason when it makes a blocking decision (used as the exit-2 message)."""


def _parse_claude(event: str, obj: Mapping[str, object], limit: int) -> _Parsed:
    rules = _rules(event)
    cont = _bool(obj, "continue")
    stop_reason = _str(obj, "stopReason")
    suppress = _bool(obj, "suppressOutput") or False
    system = _str(obj, "systemMessage")
    _str(obj, "terminalSequence")  # validated only: hooks get no terminal here, so there is nothing to write
    decision = _str(obj, "decision")
    reason = _str(obj, "reason")
    specific = _obj(obj, "hookSpecificOutput") or {}
    name = _str(specific, "hookEventName")
    if name is not None and name != event:
        raise _Invalid(f"hookSpecificOutput.hookEventName: {name!r} does not match the event {event!r}")
    messages = (cap_text(system, limit),) if system else ()
    if rules.output == "ignored":
        return _Parsed(CommandDecision(), None)
    if rules.output == "message_only":
        return _Parsed(CommandDecision(system_message=messages, suppress_output=suppress), None)

    kind: DecisionKind = "continue"
    out_reason: str | None = None
    blocking: str | None = None
    updated_input: FrozenDict | None = None
    replace_output: FrozenJSON | None = None
    permissions: tuple[FrozenJSON, ...] = ()
    interrupt = False
    contexts: list[str] = []

    if decision is not None and decision not in ("block", "approve"):
        raise _Invalid(f'decision: expected "block", got {decision!r}')
    if rules.context:
        context = _str(specific, "additionalContext")
        if context:
            contexts.append(cap_text(context, limit))

    if event == "PreToolUse":
        permission = _str(specific, "permissionDecision")
        if permission is not None and permission not in _PERMISSIONS:
            raise _Invalid(f"hookSpecificOutput.permissionDecision: unknown value {permission!r}")
        permission_reason = _str(specific, "permissionDecisionReason")
        if permission is not None:
            kind = _PERMISSIONS[permission]
            out_reason = permission_reason
        elif decision == "approve":  # deprecated spelling of allow
            kind, out_reason = "allow", reason
        elif decision == "block":  # deprecated spelling of deny
            kind, out_reason = "deny", reason
        if kind == "deny":
            blocking = out_reason
        raw_input = _obj(specific, "updatedInput")
        if raw_input is not None and kind in ("allow", "ask", "continue"):
            updated_input = freeze_object(raw_input)
    elif event == "PermissionRequest":
        verdict = _obj(specific, "decision")
        if verdict is not None:
            behavior = _str(verdict, "behavior")
            if behavior not in ("allow", "deny"):
                raise _Invalid(f"hookSpecificOutput.decision.behavior: expected allow or deny, got {behavior!r}")
            message = _str(verdict, "message")
            raw_input = _obj(verdict, "updatedInput")
            raw_permissions = _get(verdict, "updatedPermissions", list, "an array")
            wants_interrupt = _bool(verdict, "interrupt") or False
            if behavior == "allow":
                kind = "allow"
                updated_input = freeze_object(raw_input) if raw_input is not None else None
                if isinstance(raw_permissions, list):
                    permissions = tuple(freeze(p) for p in raw_permissions)
            else:
                kind, out_reason, interrupt = "deny", message, wants_interrupt
    elif rules.decision_block and decision == "block":
        if event in ("Stop", "SubagentStop") and not reason:
            raise _Invalid(f'reason: required when decision is "block" on {event}')
        kind, out_reason = "block", reason
        blocking = reason
    if event == "PostToolUse":
        for key in ("updatedToolOutput", "updatedMCPToolOutput"):
            if specific.get(key) is not None:
                replace_output = freeze(specific[key])
                break

    if kind in ("deny", "block") and not out_reason:
        out_reason = f"blocked by a {event} hook (no reason given)"
    decision_out = CommandDecision(
        kind=kind,
        reason=cap_text(out_reason, limit) if out_reason else None,
        updated_input=updated_input,
        additional_context=tuple(contexts),
        system_message=messages,
        suppress_output=suppress,
        replace_output=replace_output,
        updated_permissions=permissions,
        interrupt=interrupt,
    )
    if cont is False:
        decision_out = _stopped(decision_out, stop_reason, limit)
    return _Parsed(decision_out, blocking)


def _stopped(decision: CommandDecision, stop_reason: str | None, limit: int) -> CommandDecision:
    """``continue: false`` overrides the event's own decision; an input rewrite no longer matters."""
    return replace(
        decision,
        kind="stop",
        continue_=False,
        stop_reason=cap_text(stop_reason, limit) if stop_reason else None,
        updated_input=None,
        replace_output=None,
        updated_permissions=(),
    )


def translate_claude(
    event: str, exit_code: int, stdout: str, stderr: str, *, context_limit: int = CONTEXT_LIMIT
) -> CommandDecision:
    """The decision of a Claude Code command hook that ran to completion (see the module docstring)."""
    rules = _rules(event)
    obj = read_claude_json(stdout)
    parsed: _Parsed | None = None
    invalid: str | None = None
    if obj is not None:
        try:
            parsed = _parse_claude(event, obj, context_limit)
        except _Invalid as exc:
            invalid = f"{event} hook returned invalid JSON output: {exc}"

    if exit_code == 2 and rules.exit2 in ("deny", "block"):
        base = parsed.decision if parsed is not None else CommandDecision()
        message = (parsed.blocking_reason if parsed is not None else None) or stderr.strip()
        reason = cap_text(message, context_limit) if message else f"blocked by a {event} hook (exit status 2)"
        blocked = CommandDecision(
            kind=rules.exit2,
            reason=reason,
            additional_context=base.additional_context,
            system_message=base.system_message,
            suppress_output=base.suppress_output,
        )
        if not base.continue_:
            blocked = _stopped(blocked, base.stop_reason, context_limit)
        return replace(blocked, errors=(invalid,)) if invalid else blocked

    if parsed is not None:
        return parsed.decision
    errors = (invalid,) if invalid else ()
    if exit_code == 0:
        text = stdout.strip()
        if obj is None and rules.plain_context and text:
            return CommandDecision(additional_context=(cap_text(text, context_limit),))
        return CommandDecision(errors=errors)
    if rules.output == "ignored" or rules.exit2 == "ignore":
        return CommandDecision(errors=errors)
    if exit_code == 2 and rules.exit2 == "user":
        text = stderr.strip()
        return CommandDecision(system_message=(cap_text(text, context_limit),) if text else (), errors=errors)
    detail = _first_line(stderr)
    notice = f"{event} hook error: Failed with non-blocking status code {exit_code}"
    if exit_code == 2 and rules.exit2 == "invalid":
        notice += f" (exit 2 does not block {event}; return decision.behavior instead)"
    return CommandDecision(errors=(*errors, f"{notice}: {detail}" if detail else notice))


def translate_http(event: str, status: int, body: str, *, context_limit: int = CONTEXT_LIMIT) -> CommandDecision:
    """An HTTP hook's answer: 2xx + empty body = no opinion; 2xx + JSON object = parsed like stdout with
    exit 0; anything else is a non-blocking error (HTTP hooks cannot block by status code)."""
    _rules(event)
    if not 200 <= status < 300:
        return CommandDecision(errors=(f"{event} HTTP hook answered status {status}",))
    if not body.strip():
        return CommandDecision()
    obj = read_claude_json(body)
    if obj is None:
        return CommandDecision(errors=(f"{event} HTTP hook answered with a body that is not a JSON object",))
    try:
        return _parse_claude(event, obj, context_limit).decision
    except _Invalid as exc:
        return CommandDecision(errors=(f"{event} HTTP hook returned invalid JSON output: {exc}",))


# --------------------------------------------------------------------------------------------------------------
# Cline
# --------------------------------------------------------------------------------------------------------------


def format_cline_context(event: str, text: str, *, limit: int = CLINE_CONTEXT_LIMIT) -> str:
    """Cline's injected block: ``<hook_context source="Event" type="…">…</hook_context>``.

    A first line ``TYPE_NAME: rest`` (upper-case letters and underscores) sets ``type="type_name"`` and is
    replaced by ``rest``; otherwise ``type="general"``. Text over ``limit`` is cut with Cline's marker.
    """
    if len(text) > limit:
        text = text[:limit] + _CLINE_TRUNCATED
    kind = "general"
    first, sep, rest = text.partition("\n")
    head, colon, tail = first.partition(":")
    if colon and head and all(c.isupper() or c == "_" for c in head) and any(c.isupper() for c in head):
        kind = head.lower()
        text = tail.lstrip() + sep + rest
    return f'<hook_context source="{event}" type="{kind}">\n{text}\n</hook_context>'


def translate_cline(
    event: str, exit_code: int, stdout: str, stderr: str, *, context_limit: int = CLINE_CONTEXT_LIMIT
) -> CommandDecision:
    """A classic Cline hook's answer. The last complete JSON object on stdout counts, whatever the exit code;
    fields of the wrong type (or the retired ``shouldContinue``) mean "no JSON". Without JSON: exit 0 = no
    opinion, non-zero = a non-blocking error. ``cancel: true`` on a cancellable event stops the task
    (``errorMessage`` is the stop reason; a cancelling hook's context is dropped, as Cline's SDK adapter does);
    on other events it is ignored, and Notification ignores ``contextModification`` too. PreToolUse also takes
    the Cline SDK's ``overrideInput`` (an object of **Cline** parameters: the caller maps it back to the tool's
    input with :func:`~hookloop.command_hooks.cline_tools.from_cline`)."""
    if event not in CLINE_EVENTS:
        raise ValueError(f"no Cline hook named {event!r}")
    obj = extract_last_json_object(stdout)
    problem: str | None = None
    if obj is not None:
        if "shouldContinue" in obj:
            problem = f'{event} hook: "shouldContinue" is no longer supported; return {{"cancel": true}} to cancel'
        else:
            for key, kind in (
                ("cancel", bool),
                ("contextModification", str),
                ("errorMessage", str),
                ("overrideInput", dict),
            ):
                if key in obj and obj[key] is not None and not isinstance(obj[key], kind):
                    what = "an object" if kind is dict else f"a {kind.__name__}"
                    problem = f"{event} hook returned invalid JSON output: {key}: expected {what}"
        if problem is not None:
            obj = None
    if obj is None:
        errors = (problem,) if problem else ()
        if exit_code != 0:
            detail = _first_line(stderr)
            notice = f"{event} hook failed with exit code {exit_code}"
            errors = (*errors, f"{notice}: {detail}" if detail else notice)
        return CommandDecision(errors=errors)
    cancel = obj.get("cancel") is True
    context = obj.get("contextModification")
    message = obj.get("errorMessage")
    error_message = message if isinstance(message, str) and message else None
    if cancel and event in CLINE_CANCELLABLE_EVENTS:
        return CommandDecision(
            kind="stop",
            continue_=False,
            stop_reason=error_message or f"{event} hook requested cancellation",
        )
    contexts: tuple[str, ...] = ()
    if isinstance(context, str) and context and event != "Notification":
        contexts = (format_cline_context(event, context, limit=context_limit),)
    override = obj.get("overrideInput")
    return CommandDecision(
        additional_context=contexts,
        system_message=(cap_text(error_message, CONTEXT_LIMIT),) if error_message else (),
        updated_input=freeze_object(override) if isinstance(override, dict) and event == "PreToolUse" else None,
    )


# --------------------------------------------------------------------------------------------------------------
# Failures, dispatch, merge
# --------------------------------------------------------------------------------------------------------------


def translate_failure(event: str, error: str, *, fail_closed: bool = False) -> CommandDecision:
    """A hook that could not answer (not found, not executable, crashed, timed out, HTTP failure).

    Fail-open by default: a non-blocking error, no decision. With ``failClosed`` the event's blocking
    decision (PreToolUse/PermissionRequest ``deny``; UserPromptSubmit, PostToolBatch, PreCompact ``block``)
    with the error as the reason; events that cannot block stay fail-open.
    """
    kind = _RULES[event].fail_closed if event in _RULES else "continue"
    if fail_closed and kind != "continue":
        return CommandDecision(kind=kind, reason=cap_text(f"{error} (failClosed)"), errors=(error,))
    return CommandDecision(errors=(error,))


def translate_outcome(hook: ConfiguredHook, outcome: HookOutcome) -> CommandDecision:
    """The decision for one runner outcome of ``hook`` (dispatches on protocol and handler type).

    An answer cut at the output cap (``stdout_truncated``) is a hook error like one that could not run — even
    when the outcome says ``ok`` — and fails closed for a ``failClosed`` handler: a cut answer is never read."""
    if outcome.ok and outcome.stdout_truncated:
        outcome = replace(
            outcome,
            error_kind="output_too_large",
            error=f"hook {outcome.name} answered more than the output cap; the answer was discarded, not read",
        )
    if not outcome.ok:
        error = outcome.error or f"hook {outcome.name} failed ({outcome.error_kind})"
        if hook.protocol == "cline":
            return CommandDecision(errors=(error,))
        return translate_failure(hook.event, error, fail_closed=hook.fail_closed)
    if hook.protocol == "cline":
        return translate_cline(hook.event, outcome.exit_code or 0, outcome.stdout_text, outcome.stderr_text)
    if outcome.http_status is not None:
        return translate_http(hook.event, outcome.http_status, outcome.stdout_text)
    return translate_claude(hook.event, outcome.exit_code or 0, outcome.stdout_text, outcome.stderr_text)


def merge_decisions(decisions: Sequence[CommandDecision]) -> CommandDecision:
    """Fold the decisions of every hook of one firing, given in configuration order.

    * kind: the most restrictive wins — ``stop`` > ``block`` > ``deny`` > ``defer`` > ``ask`` > ``allow`` >
      ``continue``; its reasons are joined (configuration order, duplicates dropped). ``continue: false`` from
      any hook stops the agent; the first stop reason is kept.
    * ``updated_input``: only when the merged kind is ``allow``/``ask``/``continue``; if several hooks rewrote
      the input, the **last in configuration order wins** (deterministic, unlike Claude Code's "last to
      finish") and an error notice says it was overridden. Same rule for ``replace_output``.
    * contexts, messages and errors: all kept, in order. ``suppress_output``/``interrupt``: any.
      ``updated_permissions``: those of ``allow`` decisions when the merged kind is ``allow``.
    """
    if not decisions:
        return CommandDecision()
    if len(decisions) == 1:
        return decisions[0]
    kind = max((d.kind for d in decisions), key=_RANK.__getitem__)
    reasons = _unique(d.reason for d in decisions if d.kind == kind and d.reason)
    errors = [e for d in decisions for e in d.errors]
    stopped = [d for d in decisions if not d.continue_]
    stop_reason = next((d.stop_reason for d in stopped if d.stop_reason), None)

    updated_input: FrozenDict | None = None
    if kind in ("allow", "ask", "continue"):
        rewrites = [d.updated_input for d in decisions if d.updated_input is not None]
        if rewrites:
            updated_input = rewrites[-1]
            if any(r != updated_input for r in rewrites):
                errors.append(
                    f"{len(rewrites)} hooks returned different updatedInput; "
                    "the last one in configuration order was used"
                )
    outputs = [d.replace_output for d in decisions if d.replace_output is not None]
    replace_output = outputs[-1] if outputs else None
    if any(o != replace_output for o in outputs):
        errors.append(f"{len(outputs)} hooks replaced the tool output; the last one in configuration order was used")
    permissions = (
        tuple(p for d in decisions if d.kind == "allow" for p in d.updated_permissions) if kind == "allow" else ()
    )
    return CommandDecision(
        kind=kind,
        reason="\n".join(reasons) or None,
        updated_input=updated_input,
        additional_context=tuple(c for d in decisions for c in d.additional_context),
        system_message=tuple(m for d in decisions for m in d.system_message),
        continue_=not stopped,
        stop_reason=stop_reason,
        suppress_output=any(d.suppress_output for d in decisions),
        replace_output=replace_output,
        updated_permissions=permissions,
        interrupt=any(d.interrupt for d in decisions),
        errors=tuple(errors),
    )


def _unique(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
