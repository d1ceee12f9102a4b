"""The dispatch core: (event, handlers, input) → decision. Pure: no Worker, no I/O, no tasks.

Handlers run in registration order. A result in ``event.passes`` passes on; the first result in
``event.decides`` ends the chain and is returned with its handler. ``None`` means every hook passed. A hook that
raises, or returns something its event does not accept, raises :class:`hookloop.errors.HookError` naming the
hook and the event. :func:`run_chain` also collects declared edits and permission votes and times each hook.

Hot-path rules (SPEC §10): the caller checks ``if chain:`` (a C-level tuple test) before calling, so nobody
listening costs nothing; all-sync chains use :func:`dispatch_sync`, which creates no coroutine; the rare
paths (a decision, a wrong result) are out of line in :func:`settle`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, TypeAlias

from hookloop.errors import Aborted, HookError
from hookloop.hooks.events import HookEvent
from hookloop.hooks.results import Continue
from hookloop.hooks.summaries import rebuild, snapshot

__all__ = [
    "Handler",
    "Observe",
    "carries",
    "dispatch",
    "dispatch_sync",
    "display_name",
    "raised",
    "run_chain",
    "settle",
]

_NONE = type(None)
_PLAIN = Continue()
"""The shared plain ``Continue()``: never read for edits (a hook could force fields onto it)."""


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
        return cls(fn, is_async, name or display_name(fn), source)


def display_name(fn: object) -> str:
    """A readable name for a callable: an explicit ``name`` attribute, else its qualified name without the
    enclosing functions ("outer.<locals>.guard" reads better as "guard")."""
    explicit = getattr(fn, "name", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    label = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return str(label).rsplit("<locals>.", 1)[-1]


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


def settle(event: HookEvent[Any, Any], handler: Handler, result: object) -> tuple[Any, Handler]:
    """The rare path: ``result`` did not pass on. Returns (result, handler) if the event accepts it as a
    decision, else raises the HookError that says what was wrong."""
    if type(result) in event.decides:
        return result, handler
    raise _wrong_result(event, handler, result)


def raised(event: HookEvent[Any, Any], handler: Handler, exc: Exception) -> HookError:
    """The HookError for a hook that raised ``exc`` (raise it ``from exc``)."""
    return _raised(event, handler, exc)


def dispatch_sync(event: HookEvent[Any, Any], handlers: tuple[Handler, ...], inp: object) -> tuple[Any, Handler] | None:
    """Run an all-sync chain: no coroutine is created. None if every hook passed on."""
    passes = event.passes
    for handler in handlers:
        fn = handler.fn  # (a slot read: `handler.fn(…)` would look the attribute up as a method, uncached)
        try:
            result = fn(inp)
        except Aborted:
            raise  # a deliberate end of the run (e.g. a command hook's cancel), not a bug
        except Exception as exc:
            raise _raised(event, handler, exc) from exc
        if type(result) not in passes:
            return settle(event, handler, result)
    return None


async def dispatch(
    event: HookEvent[Any, Any], handlers: tuple[Handler, ...], inp: object
) -> tuple[Any, Handler] | None:
    """Run a chain with async hooks (sync ones are called directly). None if every hook passed on."""
    passes = event.passes
    calls = getattr(handlers, "calls", None)  # a Chain precomputes (fn, is_async) pairs
    if calls is None:
        calls = tuple((h.fn, h.is_async) for h in handlers)
    for fn, is_async in calls:
        try:
            result = fn(inp)
            if is_async:
                result = await result
        except Aborted:
            raise  # a deliberate end of the run (e.g. a command hook's cancel), not a bug
        except Exception as exc:
            raise _raised(event, _owner(handlers, fn), exc) from exc
        if type(result) not in passes:
            return settle(event, _owner(handlers, fn), result)
    return None


def _owner(handlers: tuple[Handler, ...], fn: Callable[[Any], Any]) -> Handler:
    return next(h for h in handlers if h.fn is fn)


def carries(result: object) -> bool:
    """A passing ``result`` that :func:`run_chain` reports into ``edits``: a declared edit or a permission vote
    (anything but None and a plain ``Continue()``). For call sites that call a lone hook inline."""
    cls = type(result)
    return cls is not _NONE and (cls is not Continue or (result is not _PLAIN and result.has_edit))  # type: ignore[attr-defined]


async def run_chain(
    event: HookEvent[Any, Any],
    handlers: tuple[Handler, ...],
    inp: object,
    edits: list[tuple[Handler, Any]] | None = None,
    observe: Observe | None = None,
    fresh: Callable[[], object] | None = None,
) -> tuple[Any, Handler] | None:
    """:func:`dispatch` that also reports passing results carrying declared edits or permission votes into
    ``edits`` (in order) and calls ``observe`` after each hook. For the per-call and per-turn events.

    ``fresh``, when given, builds a new input equal to ``inp`` from values nothing can change (the caller's
    own): it replaces the snapshot-and-rebuild copy each later hook gets."""
    passes = event.passes
    # Each hook after the first gets its own copy of the input: one that forces a change into its input
    # cannot mislead the next (a guard, say). One-hook chains copy nothing.
    many = len(handlers) > 1
    pristine = snapshot(inp) if many and fresh is None else None
    for handler in handlers:
        started = perf_counter() if observe is not None else 0.0
        fn = handler.fn  # (a slot read: `handler.fn(…)` would look the attribute up as a method, uncached)
        try:
            result = fn(inp)
            if handler.is_async:
                result = await result
        except Aborted:
            raise  # a deliberate end of the run (e.g. a command hook's cancel), not a bug
        except Exception as exc:
            raise _raised(event, handler, exc) from exc
        if observe is not None:
            observe(event, handler, result, perf_counter() - started)
        if type(result) not in passes:
            return settle(event, handler, result)
        if edits is not None and carries(result):
            edits.append((handler, result))
        if pristine is not None:
            inp = rebuild(pristine)
        elif many and fresh is not None:
            inp = fresh()
    return None
