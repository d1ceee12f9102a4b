"""The built-in tools are named and shaped exactly like Claude Code's, so hooks and matchers written for Claude
Code work on them unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookloop._frozen import dumps
from hookloop.tools import Tool, ToolInputError
from hookloop.tools.builtin import Workspace, builtin_tools
from hookloop.tools.builtin._common import BuiltinTool

# Claude Code's documented tool_input fields: (all properties, required ones).
CLAUDE_CODE_TOOL_INPUT = {
    "Bash": ({"command", "description", "timeout", "run_in_background"}, {"command"}),
    "Read": ({"file_path", "offset", "limit"}, {"file_path"}),
    "Write": ({"file_path", "content"}, {"file_path", "content"}),
    "Edit": ({"file_path", "old_string", "new_string", "replace_all"}, {"file_path", "old_string", "new_string"}),
    "Glob": ({"pattern", "path"}, {"pattern"}),
    "Grep": (
        {
            "pattern",
            "path",
            "glob",
            "type",
            "output_mode",
            "-A",
            "-B",
            "-C",
            "-n",
            "-i",
            "head_limit",
            "offset",
            "multiline",
        },
        {"pattern"},
    ),
}
CLAUDE_CODE_TYPES = {
    "command": "string",
    "description": "string",
    "timeout": "number",
    "run_in_background": "boolean",
    "file_path": "string",
    "offset": "number",
    "limit": "number",
    "content": "string",
    "old_string": "string",
    "new_string": "string",
    "replace_all": "boolean",
    "pattern": "string",
    "path": "string",
    "glob": "string",
    "type": "string",
    "output_mode": "string",
    "-A": "number",
    "-B": "number",
    "-C": "number",
    "-n": "boolean",
    "-i": "boolean",
    "head_limit": "number",
    "multiline": "boolean",
}


def plain(schema: object) -> dict[str, Any]:
    value = json.loads(dumps(schema))
    assert isinstance(value, dict)
    return value


@pytest.fixture
def tools(ws: Workspace) -> dict[str, Tool]:
    return {t.meta.name: t for t in builtin_tools(ws)}


def test_builtin_tools_are_the_six_claude_code_tools_in_order(tools: dict[str, Tool]) -> None:
    assert list(tools) == ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
    assert all(isinstance(t, Tool) for t in tools.values())


@pytest.mark.parametrize("name", sorted(CLAUDE_CODE_TOOL_INPUT))
def test_input_schema_has_exactly_claude_codes_fields_required_and_types(tools: dict[str, Tool], name: str) -> None:
    schema = plain(tools[name].meta.input_schema)  # also proves a provider can send it as JSON
    properties, required = CLAUDE_CODE_TOOL_INPUT[name]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == properties
    assert set(schema["required"]) == required
    assert schema["additionalProperties"] is False
    for field, spec in schema["properties"].items():
        assert spec["type"] == CLAUDE_CODE_TYPES[field], (name, field)


@pytest.mark.parametrize("name", sorted(CLAUDE_CODE_TOOL_INPUT))
def test_the_validator_accepts_exactly_the_schema_fields(tools: dict[str, Tool], name: str) -> None:
    tool = tools[name]
    assert isinstance(tool, BuiltinTool)
    model_fields = {f.alias or n for n, f in tool.input_model.model_fields.items()}
    required = {f.alias or n for n, f in tool.input_model.model_fields.items() if f.is_required()}
    properties, schema_required = CLAUDE_CODE_TOOL_INPUT[name]
    assert model_fields == properties
    assert required == schema_required


def test_output_mode_enum_is_claude_codes(tools: dict[str, Tool]) -> None:
    spec = plain(tools["Grep"].meta.input_schema)["properties"]["output_mode"]
    assert set(spec["enum"]) == {"content", "files_with_matches", "count"}


def test_read_only_traits_match_claude_code(tools: dict[str, Tool]) -> None:
    assert {n for n, t in tools.items() if t.meta.read_only} == {"Read", "Glob", "Grep"}


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("Bash", {}, "command"),
        ("Bash", {"command": "true", "timeout": 600_001}, "timeout"),
        ("Bash", {"command": "true", "timeout": 0}, "timeout"),
        ("Bash", {"command": "true", "shell": "zsh"}, "shell"),
        ("Read", {"file_path": "a", "limit": 0}, "limit"),
        ("Read", {"file_path": "a", "offset": -1}, "offset"),
        ("Write", {"file_path": "a"}, "content"),
        ("Edit", {"file_path": "a", "old_string": "x"}, "new_string"),
        ("Edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "sometimes"}, "replace_all"),
        ("Glob", {"pattern": ""}, "pattern"),
        ("Grep", {"pattern": "x", "output_mode": "lines"}, "output_mode"),
        ("Grep", {"pattern": "x", "-A": -1}, "-A"),
    ],
)
def test_invalid_arguments_are_refused_naming_the_field(
    tools: dict[str, Tool], name: str, arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(ToolInputError) as info:
        tools[name].validate(arguments)
    assert f"field '{field}'" in str(info.value)
    assert repr(name) in str(info.value)


def test_validate_returns_the_arguments_as_given_with_claude_code_keys(tools: dict[str, Tool]) -> None:
    arguments = {"pattern": "x", "-i": True, "-C": 2, "output_mode": "content"}
    assert tools["Grep"].validate(arguments) == arguments
