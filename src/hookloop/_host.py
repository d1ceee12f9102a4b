"""The turn machine's one interface to its Worker: everything ``_loop``, ``_stream``, ``_batch`` and ``_run_base``
may read or change of the Worker, and nothing else (mypy checks it: the run holds its Worker as a
:class:`RunHost`).

The state a run changes is the history — only through :meth:`RunHost._append` (one item at the end) and
:meth:`RunHost._replace_history` (a compaction) — the session's "allow always" approvals
(:meth:`RunHost._allow_always`) and the pause (:meth:`RunHost._checkpoint`). Everything else is configuration it
reads. The three kinds of effect a run performs — a model call, a tool call, an external hook firing — do not go
through the host but through the run's :class:`hookloop.effects.Effects` (see :mod:`hookloop.effects`), which is
what a durable backend wraps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hookloop._frozen import FrozenDict
    from hookloop._run_base import _RunBase
    from hookloop.checkpoint import Checkpoint
    from hookloop.hooks.events import HookEvent
    from hookloop.hooks.registry import HookRegistry
    from hookloop.interceptors._base import InterceptorChain
    from hookloop.interceptors.notifications import NotificationInjector
    from hookloop.items import Item
    from hookloop.permissions import PermissionPolicy
    from hookloop.providers.base import LLMClient
    from hookloop.timeline import Timeline
    from hookloop.tools._base import Tool
    from hookloop.tools._registry import ToolRegistry
    from hookloop.worker import Approver, DenialObserver, TokenCount

__all__ = ["RunHost"]


class RunHost(Protocol):
    """What a run may use of its Worker (the :class:`hookloop.Worker` implements it)."""

    # -- configuration (read only) ----------------------------------------------------------------------
    client: LLMClient
    model: str | None
    max_tokens: int | None
    max_turns: int
    max_forced_continuations: int
    max_pause_continuations: int
    permissions: PermissionPolicy | None
    workspace: Path | None
    tool_timeout: float | None
    context_cap: int
    output_cap: int
    session_id: str
    hooks: HookRegistry
    """The typed hooks, as one chain per event."""
    timeline: Timeline
    approvers: list[Approver]
    denial_observers: list[DenialObserver]
    _tools: ToolRegistry
    _interceptors: InterceptorChain
    _notifier: NotificationInjector
    """Delivers :meth:`hookloop.Worker.notify` texts; the run reports what it delivered."""
    _locked_prefix: int
    """How many leading items are cache-locked (sent as the request's cache prefix)."""
    _count: TokenCount
    """The history's token count (what :attr:`token_estimate` reads; pre_llm_request inputs read it later)."""

    @property
    def token_estimate(self) -> int:
        """The history's estimated size in tokens."""
        ...

    @property
    def system_prompt(self) -> str | None: ...

    @property
    def permission_mode(self) -> str | None: ...

    # -- the history ---------------------------------------------------------------------------------------
    _history: list[Item]
    """The history itself: read it, never change it in place (use :meth:`_append` / :meth:`_replace_history`)."""

    @property
    def _view(self) -> Sequence[Item]:
        """A read-only view of the history for interceptors."""
        ...

    def _append(self, item: Item) -> None:
        """Add ``item`` at the end of the history (the token estimate counts it when next read)."""
        ...

    def _replace_history(self, items: list[Item]) -> None:
        """Replace the whole history (a compaction): ``items`` is already validated."""
        ...

    # -- decisions and the pause -----------------------------------------------------------------------------

    def _decide_permission(
        self, tool: Tool, arguments: FrozenDict, votes: Sequence[tuple[str, str, str]]
    ) -> tuple[str, str, str]:
        """The permission decision on one call: the rules, the mode and the hooks' votes merged into
        (behavior, reason, decided_by)."""
        ...

    _outer_policies: tuple[PermissionPolicy, ...]
    """While the Worker runs as a subagent: the policies of the Workers it runs inside (each call must pass them
    too, in :meth:`_decide_permission`); empty otherwise."""

    def _read_filter(self, tool_name: str, arguments: Mapping[str, object]) -> Any:
        """The read filter for one call (:class:`hookloop.tools.ReadFilter`): this Worker's policy's and, inside a
        subagent, its parents'; None when nothing restricts reading."""
        ...

    def _allow_always(self, tool_name: str, rule: str | None, arguments: Mapping[str, object] | None = None) -> None:
        """Remember an "allow always" answer for the rest of the session."""
        ...

    def _checkpoint(self, run: _RunBase, *, batch: Any, kind: Any, reason: str) -> Checkpoint:
        """The checkpoint of ``run`` pausing now (kept as the Worker's pause)."""
        ...

    async def _fire_observer(self, event: HookEvent[Any, Any], handlers: Any, info: object) -> None:
        """Fire an event whose hooks decide nothing (failures are reported, never raised)."""
        ...
