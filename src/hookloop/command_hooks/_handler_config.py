"""Settings parsing of the handler types that run in process: ``prompt`` / ``agent`` (Claude Code's fields
``prompt``, ``model``, ``continueOnBlock``) and ``mcp_tool`` (``server``, ``tool``, ``input``), plus the common
``timeout``, ``if``, ``statusMessage``, ``failClosed``. Called by :mod:`hookloop.command_hooks._parse`'s parser,
which reports every problem with its JSON path; kept apart from it (the handlers themselves live in
:mod:`._llm_handlers` and :mod:`._mcp_handler`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hookloop._frozen import freeze_object

from ._parse import child
from .model import Handler, McpToolHandler, PromptHandler

if TYPE_CHECKING:
    from ._parse import Parser

__all__ = ["model_handler"]


_PROMPT_FIELDS = frozenset(
    {"type", "prompt", "model", "continueOnBlock", "timeout", "if", "statusMessage", "failClosed"}
)
_MCP_TOOL_FIELDS = frozenset({"type", "server", "tool", "input", "timeout", "if", "statusMessage", "failClosed"})
_NO_MODEL_EVENTS = frozenset({"SessionStart", "Setup"})
"""Claude Code runs only command and mcp_tool handlers on these."""


def model_handler(parser: Parser, kind: str, entry: Mapping[str, object], path: str) -> Handler | None:
    """``prompt`` / ``agent`` (Claude Code's fields ``prompt``, ``model``, ``continueOnBlock``) or ``mcp_tool``
    (``server``, ``tool``, ``input``), plus the common ``timeout``, ``if``, ``statusMessage``, ``failClosed``."""
    event = path.split("[", 1)[0].removeprefix("hooks.").strip('"')
    ok = True
    if kind == "mcp_tool":
        parser.unknown_fields(entry, _MCP_TOOL_FIELDS, path)
        server, tool, raw_input = entry.get("server"), entry.get("tool"), entry.get("input")
        for key, value in (("server", server), ("tool", tool)):
            if not isinstance(value, str) or not value.strip():
                parser.expected(child(path, key), "a non-empty string", value)
                ok = False
        if raw_input is not None and not isinstance(raw_input, dict):
            parser.expected(child(path, "input"), "an object of tool arguments", raw_input)
            ok = False
        common = parser.common(entry, path)
        if common is None or not ok:
            return None
        timeout, condition, fail_closed, status = common
        assert isinstance(server, str)
        assert isinstance(tool, str)
        return McpToolHandler(
            server=server,
            tool=tool,
            input=freeze_object(raw_input) if isinstance(raw_input, dict) else None,
            timeout=timeout,
            condition=condition,
            status_message=status,
            fail_closed=fail_closed,
        )
    parser.unknown_fields(entry, _PROMPT_FIELDS, path)
    if event in _NO_MODEL_EVENTS:
        parser.report("error", child(path, "type"), f"{event} runs only command and mcp_tool handlers; skipped")
        return None
    prompt, model = entry.get("prompt"), entry.get("model")
    if not isinstance(prompt, str) or not prompt.strip():
        parser.expected(child(path, "prompt"), "a non-empty string", prompt)
        ok = False
    if model is not None and (not isinstance(model, str) or not model.strip()):
        parser.expected(child(path, "model"), "a model name", model)
        ok = False
    keep_going = parser.flag(entry, "continueOnBlock", path)
    common = parser.common(entry, path)
    if common is None or keep_going is None or not ok:
        return None
    timeout, condition, fail_closed, status = common
    assert isinstance(prompt, str)
    return PromptHandler(
        kind="agent" if kind == "agent" else "prompt",
        prompt=prompt,
        model=model if isinstance(model, str) else None,
        continue_on_block=keep_going,
        timeout=timeout,
        condition=condition,
        status_message=status,
        fail_closed=fail_closed,
    )
