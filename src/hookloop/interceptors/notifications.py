"""Notification injection: text from outside the loop reaches the model at its next request."""

from __future__ import annotations

import collections
from dataclasses import dataclass

from hookloop.interceptors._base import RequestContext
from hookloop.items import Message

__all__ = ["Notification", "NotificationInjector"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Notification:
    """One notification: its text and who sent it."""

    text: str
    source: str


class NotificationInjector:
    """Holds notifications pushed with ``worker.notify(text, source=...)`` — from any task or thread, while a
    run is in flight or between runs — and flushes them into the next model request as clearly marked context
    (``<notification source="…">…</notification>``), in arrival order, exactly once. The flushed items enter
    the history too, so later requests keep them. The Worker installs one automatically.
    """

    def __init__(self) -> None:
        # deque.append / popleft are atomic: safe across threads without a lock.
        self._pending: collections.deque[Notification] = collections.deque()
        self._delivered: list[Notification] = []

    def push(self, text: str, *, source: str) -> None:
        self._pending.append(Notification(text=text, source=source))

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def idle(self) -> bool:
        """Nothing pending and nothing flushed but not yet taken: its ``pre_llm_request`` would change nothing
        and :meth:`take_delivered` would return nothing (the Worker then skips both)."""
        return not self._pending and not self._delivered

    def take_delivered(self) -> list[Notification]:
        """The notifications flushed since the last call (the Worker fires notification hooks for them)."""
        delivered, self._delivered = self._delivered, []
        return delivered

    async def pre_llm_request(self, ctx: RequestContext) -> None:
        while self._pending:
            try:
                note = self._pending.popleft()
            except IndexError:  # another thread took the last one
                break
            body = f'<notification source="{note.source}">\n{note.text}\n</notification>'
            ctx.persist(Message.user(body, meta={"source": "notification", "from": note.source}))
            self._delivered.append(note)
