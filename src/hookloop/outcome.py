"""How a run ends when it does not raise: :class:`Finished` or :class:`Paused`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from hookloop.checkpoint import Checkpoint, PendingCall
from hookloop.items import Item
from hookloop.stream import Usage

__all__ = ["Finished", "Outcome", "Paused"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """The run completed. ``text`` is the model's last reply text; ``items`` what this run added to the history.

    ``reason``: ``end_turn`` (the model finished and on_turn_end agreed) or ``stopped_by_hook`` (a
    post_tool_call hook returned Stop; ``stop_reason`` says why).
    """

    run_id: str
    text: str
    items: tuple[Item, ...]
    usage: Usage
    turns: int
    reason: Literal["end_turn", "stopped_by_hook"] = "end_turn"
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Paused:
    """The run paused (a hook's Pause, or a permission ask). Resume with ``worker.resume(checkpoint, ...)``.

    ``pending`` lists the tool calls that need a decision, each with the rule or hook that asked and why.
    """

    run_id: str
    checkpoint: Checkpoint
    reason: str
    pending: tuple[PendingCall, ...]


Outcome: TypeAlias = Finished | Paused
