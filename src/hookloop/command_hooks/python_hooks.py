"""``{"type": "python", "callable": "package.module:function"}`` handlers: typed in-process hooks from hookloop's
own settings files.

The callable is imported when the command hooks are installed on a Worker and registered on the typed event its
Claude Code event stands for (``PreToolUse`` → ``pre_tool_call``, ``Stop`` → ``on_turn_end`` …, see
:data:`~hookloop.command_hooks._own_handlers.PYTHON_EVENTS`), exactly as :meth:`hookloop.Worker.add_hook` would:
it receives the frozen summary and returns a hook result (``Continue``, ``Deny`` …), sync or async. On the tool
events the group's ``matcher`` selects the tools it sees. It is trusted like the file it comes from (a project's
``.hookloop/settings.json`` only once the project is trusted). Importing runs the module's code: the module must
be importable (installed, or on ``PYTHONPATH``); trust covers the settings file, not the module's source.

A callable that cannot be imported is a warning and the hook is left out — or, with ``"failClosed": true`` on
``PreToolUse``, every call it would have seen is denied with the import error as the reason.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hookloop.hooks.events import ALL_EVENTS
from hookloop.hooks.results import Continue, Deny

from ._own_handlers import PYTHON_EVENTS
from .matchers import matcher_matches
from .model import ConfiguredHook, PythonHandler

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["install_python_hooks", "load_callable"]

_log = logging.getLogger("hookloop.command_hooks")
_EVENTS = {event.name: event for event in ALL_EVENTS}
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})


def load_callable(reference: str) -> Callable[..., Any]:
    """``package.module:function`` (or ``module:Class.method``) imported; a clear ``ImportError`` otherwise."""
    module_name, _, attribute = reference.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise ImportError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ImportError(f"{module_name!r} has no {attribute!r}") from None
    if not callable(target):
        raise ImportError(f"{reference!r} is not callable")
    return target  # type: ignore[no-any-return]


def install_python_hooks(worker: Worker, hooks: Sequence[ConfiguredHook]) -> None:
    """Register every ``python`` handler of ``hooks`` on ``worker``, in configuration order."""
    for hook in hooks:
        handler = hook.handler
        if not isinstance(handler, PythonHandler):
            continue
        event = _EVENTS[PYTHON_EVENTS[hook.event]]
        where = f"{hook.source.path}: {hook.json_path}"
        try:
            fn = load_callable(handler.callable)
        except ImportError as exc:
            if handler.fail_closed and hook.event == "PreToolUse":
                _log.error(
                    "command hooks: python hook %s (%s): %s; its calls are denied (failClosed)",
                    handler.callable,
                    where,
                    exc,
                )
                fn = _denier(f"python hook {handler.callable} could not be loaded: {exc}")
            else:
                _log.warning("command hooks: python hook %s (%s): %s; left out", handler.callable, where, exc)
                continue
        if hook.event in _TOOL_EVENTS and hook.matcher is not None:
            fn = _matching(fn, hook.matcher, hook.event)
        worker.add_hook(event, fn, name=hook.name)


def _denier(reason: str) -> Callable[[Any], Deny]:
    def deny(info: Any) -> Deny:
        return Deny(reason)

    return deny


def _matching(fn: Callable[..., Any], matcher: str, event: str) -> Callable[..., Any]:
    """``fn`` only for the tools ``matcher`` selects (the others get ``Continue()``); sync stays sync."""
    if inspect.iscoroutinefunction(fn):

        async def run_async(info: Any) -> Any:
            if not matcher_matches(matcher, info.tool_name, event=event):
                return Continue()
            return await fn(info)

        return run_async

    def run(info: Any) -> Any:
        if not matcher_matches(matcher, info.tool_name, event=event):
            return Continue()
        return fn(info)

    return run
