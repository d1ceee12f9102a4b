"""The dispatch core: (event, handlers, input) → decision. Pure: no Worker, no I/O, no tasks.

Handlers run in registration order. A result in ``event.passes`` passes on (declared edits and permission
votes are appended to ``edits``); the first result in ``event.decides`` ends the chain and is returned with its
handler. ``None`` means every hook passed. A hook that raises, or returns something its event does not accept,
raises :class:`hookloop.errors.HookError` naming the hook and the event.

Hot-path rules (SPEC §10): the caller checks ``if chain:`` before calling, so nobody listening costs nothing;
all-sync chains use :func:`dispatch_sync`, which creates no coroutine; timing is measured only when an
``observe`` callback is given.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, TypeAlias

from hookloop.errors import HookError
from hookloop.hooks.events import HookEvent
from hookloop.hooks.results import Continue

__all__ = ["Handler", "Observe", "dispatch", "dispatch_sync"]

_NONE = type(None)


@dataclass(frozen=True, slots=True, eq=False)
class Handler:
    """A registered hook: classified sync/async once, at registration."""

    fn: Callable[[Any], Any]
    is_async: bool
    name: str
    source: str = "python"

    @classmethod
    def of(cls, fn: Callable[[Any], Any], *, name: str | None = None, source: str = "python") -> Handler:
        call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with an async __call__
        is_async = inspect.iscoroutinefunction(fn) or (
            call is not None and not inspect.isroutine(fn) and inspect.iscoroutinefunction(call)
        )
        label = name or getattr(fn, "__qualname__", None) or type(fn).__qualname__
        label = label.rsplit("<locals>.", 1)[-1]  # "outer.<locals>.guard" reads better as "guard"
        return cls(fn, is_async, label, source)


Observe: TypeAlias = Callable[[HookEvent[Any, Any], Handler, object, float], None]
"""Called after each hook with (event, handler, result, seconds) — only when someone watches."""


def _wrong_result(event: HookEvent[Any, Any], handler: Handler, result: object) -> HookError:
    accepted = ", ".join(sorted("None" if t is _NONE else t.__name__ for t in event.accepts))
    if inspect.isawaitable(result):
        hint = " (an awaitable from a hook registered as sync: make it `async def`)"
        if inspect.iscoroutine(result):
            result.close()
    elif result is None:
        hint = " (return Continue() to pass on)"
    else:
        hint = ""
    return HookError(
        f"returned {type(result).__name__}{hint}; {event.name} accepts {accepted}",
        hook=handler.name,
        event=event.name,
    )


def _raised(event: HookEvent[Any, Any], handler: Handler, exc: Exception) -> HookError:
    return HookError(f"raised {type(exc).__name__}: {exc}", hook=handler.name, event=event.name)


def _keep(cls: type, result: Any) -> bool:
    """Whether a passing result must be reported to the caller (declared edits, permission votes)."""
    return cls is not _NONE and (cls is not Continue or result.has_edit)


async def dispatch(
    event: HookEvent[Any, Any],
    handlers: tuple[Handler, ...],
    inp: object,
    edits: list[tuple[Handler, Any]] | None = None,
    observe: Observe | None = None,
) -> tuple[Any, Handler] | None:
    """Run ``handlers`` for ``event`` on ``inp``; see the module docstring."""
    passes = event.passes
    for handler in handlers:
        started = perf_counter() if observe is not None else 0.0
        try:
            result = handler.fn(inp)
            if handler.is_async:
                result = await result
        except Exception as exc:
            raise _raised(event, handler, exc) from exc
        if observe is not None:
            observe(event, handler, result, perf_counter() - started)
        cls = result.__class__
        if cls in passes:
            if edits is not None and _keep(cls, result):
                edits.append((handler, result))
        elif cls in event.decides:
            return result, handler
        else:
            raise _wrong_result(event, handler, result)
    return None


def dispatch_sync(
    event: HookEvent[Any, Any],
    handlers: tuple[Handler, ...],
    inp: object,
    edits: list[tuple[Handler, Any]] | None = None,
    observe: Observe | None = None,
) -> tuple[Any, Handler] | None:
    """:func:`dispatch` for chains with no async hook: no coroutine is created."""
    passes = event.passes
    for handler in handlers:
        started = perf_counter() if observe is not None else 0.0
        try:
            result = handler.fn(inp)
        except Exception as exc:
            raise _raised(event, handler, exc) from exc
        if observe is not None:
            observe(event, handler, result, perf_counter() - started)
        cls = result.__class__
        if cls in passes:
            if edits is not None and _keep(cls, result):
                edits.append((handler, result))
        elif cls in event.decides:
            return result, handler
        else:
            raise _wrong_result(event, handler, result)
    return None
