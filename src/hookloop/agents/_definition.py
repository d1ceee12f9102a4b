"""Subagent definitions in Claude Code's format: ``.claude/agents/NAME.md`` with YAML frontmatter.

::

    ---
    name: reviewer
    description: Reviews a diff for bugs. Use after every change.
    tools: Read, Grep, Glob          # or a YAML list; omitted: every tool of the parent (never more)
    disallowedTools: Bash            # taken away from whatever ``tools`` gives
    model: inherit                   # inherit (default), sonnet, opus, haiku, or a model id
    permissionMode: plan             # only ever makes the parent's mode stricter
    maxTurns: 20
    ---
    You are a careful reviewer. …    (the body is the subagent's system prompt)

A definition can only narrow what the parent has: ``tools`` picks among the parent's tools by exact name (a
name the parent does not have gives nothing), and ``permissionMode`` applies only when it is stricter than the
parent's (see :func:`hookloop.agents.narrow_mode`). ``Agent(a, b)`` (or Claude Code's older ``Task(a, b)``) in
``tools`` lets the subagent start only the listed subagent types. Any other ``Tool(specifier)`` entry is an
error: a permission rule cannot be expressed as a tool list (put it in the settings' permission rules).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hookloop.permissions import PermissionMode

__all__ = ["AgentDefinition", "AgentDefinitionError", "LoadedAgents", "load_agents", "parse_agent"]

MAX_DEFINITION_BYTES = 256 * 1024
"""A definition file larger than this is refused (it is a prompt, not a data set)."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_TOOL = re.compile(r"([A-Za-z0-9_.-]+)(?:\((.*)\))?")
_MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


class AgentDefinitionError(ValueError):
    """A definition file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDefinition:
    """One subagent type. ``tools`` None: the parent's tools (all of them); ``agents`` None: any subagent type
    (when the definition gives the subagent the Agent tool at all)."""

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    agents: tuple[str, ...] | None = None
    model: str | None = None
    permission_mode: PermissionMode | None = None
    max_turns: int | None = None
    disabled: bool = False
    """``disabled: true`` in the frontmatter: :func:`load_agents` leaves it out."""
    source: Path | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class LoadedAgents:
    """What :func:`load_agents` found: the definitions by name, and one message per file that was refused."""

    agents: Mapping[str, AgentDefinition]
    errors: tuple[str, ...] = ()


def _split(text: str, where: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise AgentDefinitionError(f"{where}: no YAML frontmatter (the file must start with a '---' line)")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise AgentDefinitionError(f"{where}: the frontmatter has no closing '---' line")


def _names(value: object, where: str, key: str) -> list[str]:
    if isinstance(value, str):
        items: list[object] = _comma_split(value)
    elif isinstance(value, list):
        items = list(value)
    else:
        raise AgentDefinitionError(f"{where}: {key}: expected a comma-separated string or a list of tool names")
    names: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise AgentDefinitionError(f"{where}: {key}[{index}]: expected a tool name, got {item!r:.60}")
        names.append(item.strip())
    return names


def _comma_split(text: str) -> list[object]:
    """``"Read, Agent(a, b), Grep"`` → ``["Read", "Agent(a, b)", "Grep"]`` (commas inside parentheses kept)."""
    parts: list[object] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if isinstance(p, str) and p.strip()]


def _tools(value: object, where: str) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """(tool names, subagent types the Agent tool may start or None for any)."""
    tools: list[str] = []
    agents: list[str] | None = None
    for index, entry in enumerate(_names(value, where, "tools")):
        match = _TOOL.fullmatch(entry)
        if match is None:
            raise AgentDefinitionError(f"{where}: tools[{index}]: {entry!r} is not a tool name")
        name, spec = match.group(1), match.group(2)
        if name == "Task":
            name = "Agent"  # Claude Code's former name of the Agent tool
        if spec is not None:
            if name != "Agent":
                raise AgentDefinitionError(
                    f"{where}: tools[{index}]: {entry!r}: only Agent(type, …) takes a specifier here; restrict "
                    f"{name} with a permission rule in the settings instead"
                )
            types = [t.strip() for t in spec.split(",") if t.strip()]
            agents = [*(agents or []), *types]
        if name not in tools:
            tools.append(name)
    return tuple(tools), None if agents is None else tuple(agents)


def parse_agent(text: str, *, source: Path | None = None) -> AgentDefinition:
    """One definition from the text of its file; :class:`AgentDefinitionError` says what is wrong and where."""
    where = str(source) if source is not None else "agent definition"
    if len(text.encode("utf-8", "replace")) > MAX_DEFINITION_BYTES:
        raise AgentDefinitionError(f"{where}: larger than {MAX_DEFINITION_BYTES} bytes")
    front, body = _split(text, where)
    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        raise AgentDefinitionError(f"{where}: the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise AgentDefinitionError(f"{where}: the frontmatter must be a mapping of fields")
    name = data.get("name")
    if name is None and source is not None:
        name = source.stem
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise AgentDefinitionError(f"{where}: name: expected letters, digits, '-', '_' or '.', got {name!r:.60}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise AgentDefinitionError(f"{where}: description: required (when the model should use this subagent)")
    tools: tuple[str, ...] | None = None
    agents: tuple[str, ...] | None = None
    if data.get("tools") is not None:
        tools, agents = _tools(data["tools"], where)
    disallowed: tuple[str, ...] = ()
    if data.get("disallowedTools") is not None:
        taken = _names(data["disallowedTools"], where, "disallowedTools")
        disallowed = tuple("Agent" if n == "Task" else n for n in taken)
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise AgentDefinitionError(f"{where}: model: expected a model name or 'inherit'")
    mode = data.get("permissionMode")
    if mode is not None and mode not in _MODES:
        raise AgentDefinitionError(f"{where}: permissionMode: expected one of {', '.join(_MODES)}, got {mode!r:.60}")
    max_turns = data.get("maxTurns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise AgentDefinitionError(f"{where}: maxTurns: expected a positive integer, got {max_turns!r:.60}")
    return AgentDefinition(
        name=name,
        description=description.strip(),
        system_prompt=body.strip(),
        tools=tools,
        disallowed_tools=disallowed,
        agents=agents,
        model=None if model is None or model.strip() == "inherit" else model.strip(),
        permission_mode=mode,
        max_turns=max_turns,
        disabled=data.get("disabled") is True,
        source=source,
    )


def load_agents(project_dir: str | Path | None = None, *, home: str | Path | None = None) -> LoadedAgents:
    """The definitions in ``~/.claude/agents/*.md`` and ``<project>/.claude/agents/*.md`` (a project definition
    replaces a user one of the same name, as in Claude Code). A file that cannot be used is left out with a
    message in ``errors``; the others still load. ``home`` defaults to ``$HOME``; ``project_dir`` to the current
    directory."""
    home_dir = Path(home) if home is not None else Path(os.path.expanduser("~"))
    project = Path(project_dir) if project_dir is not None else Path.cwd()
    found: dict[str, AgentDefinition] = {}
    errors: list[str] = []
    folders = [home_dir / ".claude" / "agents", project / ".claude" / "agents"]
    if folders[0].resolve() == folders[1].resolve():
        folders = folders[1:]
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                if not path.is_file():
                    continue
                if path.stat().st_size > MAX_DEFINITION_BYTES:
                    raise AgentDefinitionError(f"{path}: larger than {MAX_DEFINITION_BYTES} bytes")
                definition = parse_agent(path.read_text(encoding="utf-8"), source=path)
            except (AgentDefinitionError, OSError, UnicodeDecodeError) as exc:
                errors.append(str(exc) if isinstance(exc, AgentDefinitionError) else f"{path}: {exc}")
                continue
            if definition.disabled:
                found.pop(definition.name, None)  # a disabled project definition also hides the user's
                continue
            found[definition.name] = definition
    return LoadedAgents(agents=found, errors=tuple(errors))
