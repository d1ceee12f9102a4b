"""Cline's tool vocabulary for classic Cline hooks: hookloop's (Claude Code's) built-in tools mapped to Cline's
tool names and parameter shapes in ``preToolUse``/``postToolUse``, and a Cline hook's rewritten parameters mapped
back. Pure functions.

Cline scripts test Cline's names (``execute_command``, ``write_to_file`` …) and read Cline's parameter keys
(``path``, not ``file_path``), so a script written for Cline must see them:

==================================  ==========================================================================
hookloop tool and input             Cline ``toolName`` and ``parameters`` (a string map)
==================================  ==========================================================================
``Bash {command, …}``               ``execute_command {command}``
``Write {file_path, content}``      ``write_to_file {path, content}``
``Read {file_path, offset, limit}`` ``read_file {path}``
``Edit {file_path, old_string,      ``replace_in_file {path, diff}``: one block in Cline's diff format
new_string}``                       (``------- SEARCH`` / ``=======`` / ``+++++++ REPLACE``)
``Grep {pattern, path, glob}``      ``search_files {path, regex, file_pattern}``
``Glob {pattern, path}``            ``list_files {path, recursive, file_pattern}`` (Cline's ``list_files`` has
                                    no pattern; ``file_pattern`` carries it, ``recursive`` is ``"true"`` when
                                    the pattern can reach below the first level)
``MultiEdit {file_path, edits}``     ``replace_in_file {path, diff}``, one block per edit
``LS {path}``                       ``list_files {path, recursive: "false"}``
``WebFetch {url, prompt}``          ``web_fetch {url}``
``mcp__<server>__<tool> {…}``       ``use_mcp_tool {server_name, tool_name, arguments}`` (``arguments`` JSON)
any other tool                      its own name; strings as they are, other values JSON-encoded
==================================  ==========================================================================

``path`` is what Cline's model sends: relative to the workspace root when the file is inside it, else absolute
(always normalised, so a ``..`` never hides where the file is). Fields Cline has no counterpart for (Bash
``description``/``timeout``, Read ``offset``/``limit``, Edit ``replace_all`` …) are left out.

The way back (:func:`from_cline`, for a Cline hook's ``overrideInput``): the mapped keys are mapped back onto the
call's original input (fields the hook cannot see keep their value); a rewrite that cannot be mapped — a diff that
is not exactly one SEARCH/REPLACE block, a rewritten MultiEdit, ``use_mcp_tool`` naming another server or tool,
arguments that are not a JSON object — raises :class:`ClineMappingError`: the caller denies the call rather than
run an input the hook did not approve.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TypeAlias

from hookloop._frozen import JSONValue, to_json_default

__all__ = ["ClineMappingError", "cline_tool", "from_cline", "parse_diff", "render_diff"]

JSONObject: TypeAlias = dict[str, JSONValue]

_SEARCH = "------- SEARCH"
_DIVIDER = "======="
_REPLACE = "+++++++ REPLACE"
_NAMES = {
    "Bash": "execute_command",
    "Write": "write_to_file",
    "Read": "read_file",
    "Edit": "replace_in_file",
    "Grep": "search_files",
    "Glob": "list_files",
}


class ClineMappingError(ValueError):
    """A Cline hook's rewritten parameters cannot be mapped back to the hookloop tool's input."""


def _text(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=to_json_default)


def _cline_path(value: JSONValue, cwd: str) -> str:
    """Relative to ``cwd`` when inside it, else absolute; normalised either way."""
    if not isinstance(value, str) or not value:
        return _text(value) if value is not None else ""
    absolute = os.path.normpath(value if os.path.isabs(value) else os.path.join(cwd, value))
    root = os.path.normpath(cwd)
    if absolute == root:
        return "."
    if absolute.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, root)
    return absolute


def render_diff(old: str, new: str) -> str:
    """One SEARCH/REPLACE block in Cline's ``replace_in_file`` diff format."""
    return f"{_SEARCH}\n{old}\n{_DIVIDER}\n{new}\n{_REPLACE}"


def parse_diff(diff: str) -> tuple[str, str]:
    """(search, replace) of exactly one SEARCH/REPLACE block (Cline's current markers, or the older
    ``<<<<<<< SEARCH`` / ``>>>>>>> REPLACE``); :class:`ClineMappingError` otherwise."""
    lines = diff.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    starts = [i for i, line in enumerate(lines) if line.rstrip() in (_SEARCH, "<<<<<<< SEARCH")]
    middles = [i for i, line in enumerate(lines) if line.rstrip() == _DIVIDER]
    ends = [i for i, line in enumerate(lines) if line.rstrip() in (_REPLACE, ">>>>>>> REPLACE")]
    if len(starts) != 1 or len(middles) != 1 or len(ends) != 1:
        raise ClineMappingError("replace_in_file diff: expected exactly one SEARCH/REPLACE block")
    start, middle, end = starts[0], middles[0], ends[0]
    if not start < middle < end or start != 0 or end != len(lines) - 1:
        raise ClineMappingError("replace_in_file diff: the SEARCH/REPLACE block is malformed")
    return "\n".join(lines[start + 1 : middle]), "\n".join(lines[middle + 1 : end])


def _split_mcp(tool_name: str) -> tuple[str, str] | None:
    if not tool_name.startswith("mcp__"):
        return None
    server, sep, tool = tool_name[5:].partition("__")
    return (server, tool) if sep and server and tool else None


def _recursive(pattern: str) -> bool:
    return "**" in pattern or "/" in pattern.strip("/")


def cline_tool(tool_name: str, tool_input: Mapping[str, JSONValue], cwd: str) -> tuple[str, dict[str, str]]:
    """Cline's ``toolName`` and ``parameters`` for a hookloop tool call (the table in the module docstring)."""
    get = tool_input.get
    if tool_name == "Bash":
        return "execute_command", {"command": _text(get("command", ""))}
    if tool_name in ("Write", "Read", "Edit"):
        params = {"path": _cline_path(get("file_path"), cwd)}
        if tool_name == "Write":
            params["content"] = _text(get("content", ""))
        elif tool_name == "Edit":
            params["diff"] = render_diff(_text(get("old_string", "")), _text(get("new_string", "")))
        return _NAMES[tool_name], params
    if tool_name == "Grep":
        params = {"path": _cline_path(get("path") or cwd, cwd), "regex": _text(get("pattern", ""))}
        if get("glob") is not None:
            params["file_pattern"] = _text(get("glob"))
        return "search_files", params
    if tool_name == "Glob":
        pattern = _text(get("pattern", ""))
        params = {"path": _cline_path(get("path") or cwd, cwd), "recursive": "true" if _recursive(pattern) else "false"}
        params["file_pattern"] = pattern
        return "list_files", params
    if tool_name == "MultiEdit":
        edits = get("edits")
        blocks = [
            render_diff(_text(e.get("old_string", "")), _text(e.get("new_string", "")))
            for e in (edits if isinstance(edits, list) else [])
            if isinstance(e, dict)
        ]
        return "replace_in_file", {"path": _cline_path(get("file_path"), cwd), "diff": "\n\n".join(blocks)}
    if tool_name == "LS":
        return "list_files", {"path": _cline_path(get("path") or cwd, cwd), "recursive": "false"}
    if tool_name == "WebFetch":
        return "web_fetch", {"url": _text(get("url", ""))}
    mcp = _split_mcp(tool_name)
    if mcp is not None:
        arguments = json.dumps(dict(tool_input), ensure_ascii=False, default=to_json_default)
        return "use_mcp_tool", {"server_name": mcp[0], "tool_name": mcp[1], "arguments": arguments}
    return tool_name, {key: _text(value) for key, value in tool_input.items()}


def _absolute(value: JSONValue, cwd: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise ClineMappingError(f"{key}: expected a non-empty string")
    return os.path.normpath(value if os.path.isabs(value) else os.path.join(cwd, value))


def _string(params: Mapping[str, JSONValue], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ClineMappingError(f"{key}: expected a string")
    return value


def _decode(value: JSONValue, original: JSONValue) -> JSONValue:
    """A string-map value back to the original's type (JSON-decoded when the original was not a string)."""
    if isinstance(value, str) and original is not None and not isinstance(original, str):
        try:
            decoded: JSONValue = json.loads(value)
        except ValueError:
            return value
        return decoded
    return value


def from_cline(
    tool_name: str, original: Mapping[str, JSONValue], params: Mapping[str, JSONValue], cwd: str
) -> JSONObject:
    """The hookloop input for a Cline hook's rewritten ``params`` of the call ``tool_name(original)`` (see the
    module docstring). Raises :class:`ClineMappingError` when they cannot be mapped back."""
    data: JSONObject = dict(original)
    if tool_name == "Bash":
        command = _string(params, "command")
        if command is not None:
            data["command"] = command
        return data
    if tool_name in ("Write", "Read", "Edit"):
        if params.get("path") is not None:
            data["file_path"] = _absolute(params.get("path"), cwd, "path")
        if tool_name == "Write" and (content := _string(params, "content")) is not None:
            data["content"] = content
        if tool_name == "Edit" and (diff := _string(params, "diff")) is not None:
            data["old_string"], data["new_string"] = parse_diff(diff)
        return data
    if tool_name == "MultiEdit":
        if params.get("diff") is not None or params.get("path") is not None:
            raise ClineMappingError("a rewritten MultiEdit cannot be mapped back (several SEARCH/REPLACE blocks)")
        return data
    if tool_name in ("Grep", "Glob", "LS"):
        if params.get("path") is not None:
            data["path"] = _absolute(params.get("path"), cwd, "path")
        if tool_name == "LS":
            return data
        pattern_key, pattern_field = ("regex", "pattern") if tool_name == "Grep" else ("file_pattern", "pattern")
        if (pattern := _string(params, pattern_key)) is not None:
            data[pattern_field] = pattern
        if tool_name == "Grep" and (glob := _string(params, "file_pattern")) is not None:
            data["glob"] = glob
        return data
    mcp = _split_mcp(tool_name)
    if mcp is not None:
        for key, expected in (("server_name", mcp[0]), ("tool_name", mcp[1])):
            given = params.get(key)
            if given is not None and given != expected:
                raise ClineMappingError(f"use_mcp_tool {key}: {given!r} is not the called tool's {expected!r}")
        arguments = params.get("arguments")
        if arguments is None:
            return data
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ClineMappingError(f"use_mcp_tool arguments: not JSON ({exc})") from None
        if not isinstance(arguments, dict):
            raise ClineMappingError("use_mcp_tool arguments: expected a JSON object")
        return dict(arguments)
    for key, value in params.items():
        data[key] = _decode(value, original.get(key))
    return data
