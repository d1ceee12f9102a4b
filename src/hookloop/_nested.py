"""What the turn machine and a tool that runs a Worker of its own (a subagent) share. Private.

A tool whose :class:`~hookloop.tools.ToolMeta` has ``performs_effects`` is called by the turn machine directly,
never as one opaque tool effect: it performs its own effects (a subagent's model and tool calls), each recorded
by a durable backend under the parent call's prefix (:class:`PrefixedEffects`). While it runs, :data:`nested_call`
holds what it needs from the parent run (the parent Worker, the call, the paused state to resume), and it answers
with a :class:`NestedOutcome`: its output, the usage to roll up, and the child's checkpoint when the child paused
(then the parent pauses too, with one checkpoint that holds the child's).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from hookloop.stream import Usage

if TYPE_CHECKING:
    from hookloop.checkpoint import Checkpoint, ResumeDecision
    from hookloop.effects import Effect, Effects

__all__ = ["AgentFrame", "NestedCall", "NestedOutcome", "PrefixedEffects", "current_agent", "nested_call"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentFrame:
    """The subagent the current task runs inside (hooks firing there see ``agent_id`` / ``agent_type``)."""

    agent_id: str
    agent_type: str
    depth: int
    """1 inside a subagent of the top-level Worker, 2 inside a subagent of a subagent, …"""
    call_id: str
    transcript_path: str | None = None


current_agent: ContextVar[AgentFrame | None] = ContextVar("hookloop_agent", default=None)
"""The innermost subagent of the current task (None: the top-level Worker)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NestedCall:
    """Set by the turn machine around one call of a ``performs_effects`` tool."""

    worker: Any
    """The parent Worker (typed loosely: this module imports no Worker)."""
    run_id: str
    call_id: str
    turn: int
    resume: Checkpoint | None = None
    """The child's checkpoint when the call resumes a paused child."""
    decisions: Mapping[str, ResumeDecision] | None = None
    """The resume decisions for the child's calls (their ids without the parent call's prefix)."""
    fork: bool = False
    """The parent resumes as a fork: the child does too."""


nested_call: ContextVar[NestedCall | None] = ContextVar("hookloop_nested_call", default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class NestedOutcome:
    """What a ``performs_effects`` tool answers: ``output`` (anything a tool may return), ``usage`` to add to the
    parent run's, and ``paused`` — the child's checkpoint when it paused (``output`` is then ignored)."""

    output: object = ""
    usage: Usage | None = None
    paused: Checkpoint | None = None


class PrefixedEffects:
    """A run's effects as a child sees them: each key prefixed (``agent:<call id>/model:1.1``), so the child's
    effects are recorded in the parent run's store apart from the parent's own and from each other child's."""

    __slots__ = ("inner", "prefix")

    def __init__(self, inner: Effects, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    async def perform(self, effect: Effect[T]) -> T:
        return await self.inner.perform(replace(effect, key=f"{self.prefix}{effect.key}"))
