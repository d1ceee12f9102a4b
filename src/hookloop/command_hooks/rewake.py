"""``asyncRewake`` handlers: background hooks that can wake the model when they finish.

Claude Code runs an ``asyncRewake`` handler in the background; when it exits with status 2 after Claude went
idle, Claude is woken with the hook's stderr (stdout when stderr is empty) as a system reminder and works on.
What "wake" means for a library run (hookloop's choice; one rule, two moments):

* **While the run is open** — when the model ends its turn (on_turn_end, after any Stop hooks), the run waits
  for this Worker's asyncRewake handlers still running (each is bounded by its own ``timeout``, the whole wait
  by ``CommandHooks(rewake_wait=…)`` when set; cancelling the run cancels the wait). Every exit-2 message that
  arrived during the run (also one that arrived mid-turn) is added to the history as a user message,
  ``<hook-context hook="command hooks" event="asyncRewake">…``, and the run continues with another model turn:
  the model is woken. Exit 0 (or any other status) wakes nobody; the run finishes. These continuations count
  towards the Worker's cap on forced continuations, like a Stop hook's, so a hook that wakes the model on every
  turn end cannot loop forever.
* **After the run ended** — a message that could not be delivered (the run ended another way: a Stop hook's
  ``continue: false``, an error, a pause) or that arrives while the run's end drains the background hooks
  (``background_grace``) is queued with ``Worker.notify``: the next run (or resume) starts with it.

The message is the hook's stderr (stdout when stderr is empty), after the handler's ``rewakeMessage`` and a blank
line when the handler has one (``rewakeSummary``, a display-only label, is accepted and unused). Plain ``async``
handlers never wake anything; their context is queued with ``Worker.notify`` as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hookloop.items import Message

from .translate import CONTEXT_LIMIT, cap_text

__all__ = ["REWAKE_EVENT", "Rewake", "rewake_text"]

REWAKE_EVENT = "asyncRewake"
"""The ``event`` of a wake-up message (its ``meta`` and its ``<hook-context>`` tag)."""


def rewake_text(exit_code: int | None, stdout: str, stderr: str, *, prefix: str | None = None) -> str | None:
    """The wake-up message of a finished asyncRewake handler: stderr (else stdout) on exit 2, capped at Claude
    Code's 10 000 characters (the cut marked), after the handler's ``rewakeMessage`` prefix and a blank line
    when it has one; else ``None``."""
    if exit_code != 2:
        return None
    text = stderr.strip() or stdout.strip() or "an asyncRewake hook finished with exit status 2"
    return cap_text(f"{prefix}\n\n{text}" if prefix else text, CONTEXT_LIMIT)


class Rewake:
    """One Worker's asyncRewake handlers still running and the wake-up messages not yet delivered."""

    def __init__(self, hook_name: str, notify: Callable[[str, str], None], run_open: Callable[[], bool]) -> None:
        self._hook_name = hook_name
        self._notify = notify
        self._run_open = run_open
        self._running: set[asyncio.Task[Any]] = set()
        self._messages: list[tuple[str, str]] = []

    def track(self, task: asyncio.Task[Any]) -> None:
        """Watch a task running asyncRewake handlers (the turn end waits for it)."""
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def add(self, hook: str, text: str) -> None:
        """A handler finished with exit 2: deliver at the turn end, or with the next run if none is open."""
        if self._run_open():
            self._messages.append((hook, text))
        else:
            self._notify(text, f"asyncRewake hook {hook}")

    async def wake(self, wait: float | None = None) -> list[Message]:
        """At the turn end: wait for the running handlers (at most ``wait`` seconds in all; ``None``: as long as
        they run), then take the wake-up messages (oldest first). Handlers still running after ``wait`` go on in
        the background: their messages start the next run."""
        loop = asyncio.get_running_loop()
        deadline = None if wait is None else loop.time() + wait
        while self._running:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                break
            await asyncio.wait(set(self._running), timeout=left)
        messages, self._messages = self._messages, []
        meta = {"source": "hook_context", "hook": self._hook_name, "event": REWAKE_EVENT}
        tag = f'<hook-context hook="{self._hook_name}" event="{REWAKE_EVENT}">'
        return [Message.user(f"{tag}\n{text}\n</hook-context>", meta=meta) for _, text in messages]

    def close_run(self) -> None:
        """The run ended (its background hooks drained): messages not delivered go to the next run."""
        messages, self._messages = self._messages, []
        for hook, text in messages:
            self._notify(text, f"asyncRewake hook {hook}")
