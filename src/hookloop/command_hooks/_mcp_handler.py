"""Claude Code's ``mcp_tool`` hook handler: call a tool of an MCP server connected to the Worker.

The handler names the ``server`` and its ``tool``; the call goes to the Worker's tool
``mcp__<server>__<tool>`` (an :class:`~hookloop.tools.mcp.MCPServer` passed in the Worker's tools), checked
against the tool's schema. ``input`` is the argument object: every ``${path}`` in its strings is replaced by the
value at that dotted path of the hook input (``${tool_input.file_path}``, ``${hook_event_name}``); a string that
is exactly one reference takes the value itself (an object stays an object), a missing path is ``""``. Without
``input`` the tool receives the hook input itself.

The tool's text result is read as a command hook's stdout with exit status 0 (JSON iff it starts with ``{``);
an error result is a non-blocking hook error, like a command that exited 1 — its text is the error. A server
that is not connected, an unknown tool, invalid arguments or a timeout (600 s default; 30 s on
UserPromptSubmit) are hook errors too, never decisions, unless the handler is ``failClosed``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hookloop._frozen import thaw_object
from hookloop.effects import current_effects
from hookloop.effects import perform as perform_effect
from hookloop.tools._base import ToolContext, ToolFailure, ToolInputError, render_output

from .model import (
    OUTPUT_CAP,
    ConfiguredHook,
    HookOutcome,
    McpToolHandler,
    hook_effect,
    outcome_from_json,
    outcome_to_json,
)

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["MCP_TOOL_TIMEOUT", "fill_template", "mcp_tool_timeout", "run_mcp_tool_hook"]

MCP_TOOL_TIMEOUT = 600.0
"""Seconds an ``mcp_tool`` handler may take without its own ``timeout`` (30 on UserPromptSubmit)."""
_PROMPT_TIMEOUT = 30.0
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}")
_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_timeout(event: str, handler: McpToolHandler) -> float:
    if handler.timeout is not None:
        return handler.timeout
    return _PROMPT_TIMEOUT if event == "UserPromptSubmit" else MCP_TOOL_TIMEOUT


def _lookup(payload: Mapping[str, object], path: str) -> object:
    value: object = payload
    for key in path.split("."):
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return ""
    return value


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fill_template(template: object, payload: Mapping[str, object]) -> object:
    """``template`` (plain JSON) with ``${dotted.path}`` references filled from ``payload`` (see the module
    docstring). Only strings are templated; keys are kept as they are."""
    if isinstance(template, str):
        whole = _REFERENCE.fullmatch(template)
        if whole is not None:
            return _lookup(payload, whole.group(1))
        return _REFERENCE.sub(lambda m: _as_text(_lookup(payload, m.group(1))), template)
    if isinstance(template, Mapping):
        return {str(k): fill_template(v, payload) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return [fill_template(v, payload) for v in template]
    return template


def _failed(
    hook: ConfiguredHook, message: str, *, timeout: float, started: float, kind: str = "spawn_failed"
) -> HookOutcome:
    return HookOutcome(
        name=hook.name,
        error_kind="timeout" if kind == "timeout" else "spawn_failed",
        error=message,
        timed_out=kind == "timeout",
        timeout=timeout,
        duration=time.perf_counter() - started,
    )


async def run_mcp_tool_hook(
    hook: ConfiguredHook,
    payload: Mapping[str, object],
    worker: Worker,
    *,
    session_id: str,
    output_cap: int = OUTPUT_CAP,
) -> HookOutcome:
    """Call the handler's tool with the templated input; the outcome reads like a command hook's (stdout = the
    tool's text, exit 0; an error result exits 1 with the text on stderr). A text longer than ``output_cap``
    bytes is cut and marked truncated (so it is never read as an answer). Never raises except cancellation.
    In a durable run the call is an effect (recorded, not repeated on replay)."""
    fire = functools.partial(_call_tool_hook, hook, payload, worker, session_id=session_id, output_cap=output_cap)
    if current_effects.get() is None:
        return await fire()
    call_id = payload.get("tool_use_id")
    return await perform_effect(
        "hook",
        *hook_effect(hook, call_id),
        fire,
        outcome_to_json,
        outcome_from_json,
    )


async def _call_tool_hook(
    hook: ConfiguredHook,
    payload: Mapping[str, object],
    worker: Worker,
    *,
    session_id: str,
    output_cap: int,
) -> HookOutcome:
    handler = hook.handler
    assert isinstance(handler, McpToolHandler)
    started = time.perf_counter()
    timeout = mcp_tool_timeout(hook.event, handler)
    name = f"mcp__{_SAFE.sub('_', handler.server)}__{_SAFE.sub('_', handler.tool)}"
    where = f"mcp_tool hook {handler.server}/{handler.tool}"
    tool = next((t for t in worker.tools if t.meta.name == name), None)
    if tool is None:
        servers = sorted({t.meta.server for t in worker.tools if (t.meta.server or "").startswith("mcp__")})
        known = ", ".join(s.removeprefix("mcp__") for s in servers) or "none"
        return _failed(
            hook,
            f"{where}: no tool {name!r} on the Worker (connected MCP servers: {known})",
            timeout=timeout,
            started=started,
        )
    template = thaw_object(handler.input) if handler.input is not None else None
    arguments = fill_template(template, payload) if template is not None else dict(payload)
    if not isinstance(arguments, dict):
        return _failed(hook, f"{where}: input must be an object", timeout=timeout, started=started)
    try:
        validated = tool.validate(arguments)
    except ToolInputError as exc:
        return _failed(hook, f"{where}: {exc}", timeout=timeout, started=started)
    except Exception as exc:
        return _failed(
            hook, f"{where}: cannot check the input: {type(exc).__name__}: {exc}", timeout=timeout, started=started
        )
    ctx = ToolContext(
        run_id="",
        session_id=session_id,
        call_id=f"hook:{hook.event}",
        tool_name=name,
        turn=0,
        workspace=worker.workspace,
    )
    try:
        async with asyncio.timeout(timeout):
            value = await tool.execute(validated, ctx)
    except TimeoutError:
        return _failed(hook, f"{where} timed out after {timeout:g} s", timeout=timeout, started=started, kind="timeout")
    except ToolFailure as exc:
        return _failed(hook, f"{where}: {exc}", timeout=timeout, started=started)
    except Exception as exc:
        return _failed(hook, f"{where} failed: {type(exc).__name__}: {exc}", timeout=timeout, started=started)
    text, is_error, _parts = render_output(value)  # the text rendering is what a hook reads
    data = text.encode("utf-8")
    cut = len(data) > output_cap
    data = data[:output_cap]
    return HookOutcome(
        name=hook.name,
        exit_code=1 if is_error else 0,
        stdout=b"" if is_error else data,
        stderr=data if is_error else b"",
        stdout_truncated=cut and not is_error,
        stderr_truncated=cut and is_error,
        timeout=timeout,
        duration=time.perf_counter() - started,
    )
