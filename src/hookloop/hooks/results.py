"""Hook results: one frozen class per meaning, shared across events.

Each event accepts its own subset (see :mod:`hookloop.hooks.events`); returning anything else — ``None``
included — ends the run with a :class:`hookloop.errors.HookError` naming the hook and the event.

=====================  ==============================================================================
result                 effect
=====================  ==============================================================================
``Continue()``         pass on to the next hook; may carry a *declared edit* the Worker validates
``Finish()``           on_turn_end: let the run finish (passes on to the next hook)
``Skip(reason)``       pre_tool_call: do not run this call; it gets an error result with the reason
``Abort(reason)``      end the run: raises :class:`hookloop.errors.Aborted`
``Cancel(reason)``     on_prompt_submit / pre_llm_request: end the run (``Aborted``)
``Pause(reason)``      pre_tool_call / on_turn_end: end the run as ``Paused`` with a checkpoint
``Stop(reason)``       post_tool_call: finish gracefully after this tool batch (no further model turn)
``ContinueWithMessages(items)``  on_turn_end: append the items and run another turn
``Allow`` / ``Ask`` / ``Deny``   pre_tool_call permission votes, merged with the rules (deny > ask > allow)
=====================  ==============================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from hookloop._frozen import FrozenDict, freeze_object
from hookloop.items import Item, Message

__all__ = [
    "Abort",
    "Allow",
    "Ask",
    "Cancel",
    "Continue",
    "ContinueWithMessages",
    "Deny",
    "Finish",
    "OnTurnEndResult",
    "Pause",
    "PostToolBatchResult",
    "PostToolCallResult",
    "PreCompactResult",
    "PreLlmRequestResult",
    "PreToolCallResult",
    "PromptSubmitResult",
    "SessionStartResult",
    "Skip",
    "Stop",
    "StreamHookResult",
    "SubagentStartResult",
    "SubagentStopResult",
]


def _frozen_input(value: Mapping[str, object] | None) -> FrozenDict | None:
    return None if value is None else freeze_object(value)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Continue:
    """Pass on to the next hook, optionally with a declared edit (validated and applied by the Worker).

    - ``updated_input`` (pre_tool_call): new tool arguments, validated against the tool's input schema;
      invalid → the call gets an error result and nothing executes. Permission rules see the new input.
    - ``additional_context`` (on_prompt_submit, post_tool_call, session_start): text added for the model,
      capped (the cut is marked).
    - ``replace_output`` (post_tool_call): replaces the tool result's content, capped.
    """

    updated_input: FrozenDict | None = None
    additional_context: str | None = None
    replace_output: str | None = None

    def __new__(
        cls,
        *,
        updated_input: Mapping[str, object] | None = None,
        additional_context: str | None = None,
        replace_output: str | None = None,
    ) -> Continue:
        # A plain Continue() is one shared instance: hooks on hot paths return it at no cost.
        if updated_input is None and additional_context is None and replace_output is None:
            try:
                return _PLAIN
            except NameError:  # building _PLAIN itself
                pass
        self = object.__new__(cls)
        object.__setattr__(self, "updated_input", _frozen_input(updated_input))
        object.__setattr__(self, "additional_context", additional_context)
        object.__setattr__(self, "replace_output", replace_output)
        return self

    def __reduce__(self) -> tuple[object, ...]:
        return (_continue, (self.updated_input, self.additional_context, self.replace_output))

    @property
    def has_edit(self) -> bool:
        return not (self.updated_input is None and self.additional_context is None and self.replace_output is None)


_PLAIN = Continue()


def _continue(updated_input: FrozenDict | None, additional_context: str | None, replace_output: str | None) -> Continue:
    return Continue(updated_input=updated_input, additional_context=additional_context, replace_output=replace_output)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finish:
    """on_turn_end: the final answer is acceptable (passes on to the next hook)."""


@dataclass(frozen=True, slots=True)
class Skip:
    """pre_tool_call: do not execute this call; it gets an error result carrying ``reason``."""

    reason: str = "skipped by hook"


@dataclass(frozen=True, slots=True)
class Abort:
    """End the whole run now: ``run`` raises :class:`hookloop.errors.Aborted` with ``reason``."""

    reason: str


@dataclass(frozen=True, slots=True)
class Cancel:
    """on_prompt_submit / pre_llm_request: cancel the run (raises :class:`hookloop.errors.Aborted`)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Pause:
    """Pause the run: it ends as :class:`hookloop.Paused` with a checkpoint to resume from.

    On stream events a Pause cannot be honoured mid-stream and ends the run as
    ``Aborted("Paused by stream hook")``.
    """

    reason: str = "paused by hook"


@dataclass(frozen=True, slots=True)
class Stop:
    """post_tool_call: finish gracefully once this tool batch is recorded (no further model request)."""

    reason: str = "stopped by hook"


@dataclass(frozen=True, slots=True)
class ContinueWithMessages:
    """on_turn_end: append ``items`` to the history and run another turn (e.g. "fix the JSON and retry")."""

    items: tuple[Item, ...]

    def __init__(self, items: Sequence[Item] | str) -> None:
        if isinstance(items, str):
            items = (Message.user(items),)
        object.__setattr__(self, "items", tuple(items))


@dataclass(frozen=True, slots=True, kw_only=True)
class Allow:
    """pre_tool_call permission vote: allow. Never overrides a deny or ask *rule*; may carry updated input."""

    reason: str = ""
    updated_input: FrozenDict | None = None

    def __init__(self, reason: str = "", *, updated_input: Mapping[str, object] | None = None) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "updated_input", _frozen_input(updated_input))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """pre_tool_call permission vote: ask a person (the run pauses for approval, or an approver answers).
    Passes on to later hooks. ``updated_input`` is what the person is asked about (validated, and checked by
    the rules, like any declared edit)."""

    reason: str = ""
    updated_input: FrozenDict | None = None

    def __init__(self, reason: str = "", *, updated_input: Mapping[str, object] | None = None) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "updated_input", _frozen_input(updated_input))


@dataclass(frozen=True, slots=True)
class Deny:
    """pre_tool_call permission vote: deny. Ends the chain; the call gets an error result with ``reason``."""

    reason: str = ""


PromptSubmitResult: TypeAlias = Continue | Cancel
PreLlmRequestResult: TypeAlias = Continue | Cancel
PreToolCallResult: TypeAlias = Continue | Skip | Abort | Pause | Allow | Ask | Deny
PostToolCallResult: TypeAlias = Continue | Abort | Stop
OnTurnEndResult: TypeAlias = Finish | ContinueWithMessages | Pause
StreamHookResult: TypeAlias = Continue | Abort | Pause
SessionStartResult: TypeAlias = Continue | None
PreCompactResult: TypeAlias = Continue | Cancel
PostToolBatchResult: TypeAlias = Continue | Abort | Stop
SubagentStartResult: TypeAlias = Continue | None
SubagentStopResult: TypeAlias = Finish | ContinueWithMessages
