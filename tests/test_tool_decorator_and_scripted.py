"""@tool builds schemas from type hints and validates; the scripted client streams like a provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import Field

from hookloop import (
    ClientError,
    ScriptedClient,
    ScriptedTurn,
    Text,
    Thinking,
    ToolContext,
    ToolDefinitionError,
    ToolUse,
    tool,
)
from hookloop._frozen import dumps
from hookloop.providers import LLMRequest
from hookloop.stream import BlockStart, BlockStop, StopEvent, TextDelta, ThinkingDelta, ToolCallDelta, Usage, UsageEvent
from hookloop.tools import ToolInputError, ToolRegistry

pytestmark = pytest.mark.anyio


def test_schema_comes_from_type_hints_and_docstring() -> None:
    @tool(read_only=True)
    def search(
        query: str, limit: Annotated[int, Field(ge=1, le=50)] = 10, mode: Literal["fast", "full"] = "fast"
    ) -> str:
        """Search the notes."""
        return query

    meta = search.meta
    assert meta.name == "search"
    assert meta.description == "Search the notes."
    assert meta.read_only
    schema = json.loads(dumps(meta.input_schema))
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"] == {"type": "string"}
    assert schema["properties"]["limit"]["maximum"] == 50
    assert schema["properties"]["mode"]["enum"] == ["fast", "full"]
    assert schema["additionalProperties"] is False


def test_validation_names_each_wrong_field() -> None:
    @tool
    def move(x: int, y: int) -> str:
        return f"{x},{y}"

    with pytest.raises(ToolInputError) as err:
        move.validate({"x": "left", "z": 1})
    text = str(err.value)
    assert "invalid arguments for tool 'move'" in text
    assert "field 'x': Input should be a valid integer" in text
    assert "field 'y': Field required" in text
    assert "field 'z': Extra inputs are not permitted" in text
    assert move.validate({"x": "3", "y": 4}) == {"x": 3, "y": 4}


def test_bad_tool_definitions_name_the_parameter() -> None:
    def untyped(a) -> str:  # type: ignore[no-untyped-def]
        return ""

    with pytest.raises(ToolDefinitionError, match="parameter 'a' has no type hint"):
        tool(untyped)

    def star(*args: int) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match=r"\*args/\*\*kwargs parameter 'args'"):
        tool(star)


async def test_context_parameter_is_injected_and_not_in_the_schema() -> None:
    @tool
    async def who(ctx: ToolContext, n: int = 1) -> str:
        return f"{ctx.call_id}:{n}"

    assert "ctx" not in who.meta.input_schema["properties"]  # type: ignore[operator]
    ctx = ToolContext(run_id="r", session_id="s", call_id="c", tool_name="who", turn=1)
    assert await who.execute(who.validate({}), ctx) == "c:1"
    assert ctx.idempotency_key == "r:c"


def test_registry_refuses_duplicate_names() -> None:
    @tool
    def a() -> str:
        return ""

    registry = ToolRegistry([a])
    with pytest.raises(ValueError, match="two tools are named 'a'"):
        registry.add(a)
    assert [s.name for s in registry.specs()] == ["a"]


async def collect(client: ScriptedClient, turn: int = 1) -> list[object]:
    request = LLMRequest(system=None, items=(), tools=(), turn=turn)
    return [e async for e in client.stream(request)]


async def test_scripted_client_streams_text_in_chunks_and_json_in_fragments() -> None:
    client = ScriptedClient(
        [
            ScriptedTurn(
                [Thinking("hmm", signature="s1"), Text("hello world"), ToolUse("t", {"a": 1}, call_id="c9")],
                usage=Usage(5, 7),
            )
        ],
        chunk_size=4,
        fragment_size=3,
    )
    events = await collect(client)
    assert events[0] == BlockStart(0, "thinking")
    assert ThinkingDelta(0, "", signature="s1") in events
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["hell", "o wo", "rld"]
    assert BlockStart(2, "tool_call", call_id="c9", name="t") in events
    fragments = [e.fragment for e in events if isinstance(e, ToolCallDelta)]
    assert "".join(fragments) == '{"a": 1}'
    assert all(len(f) <= 3 for f in fragments)
    assert events.count(BlockStop(1)) == 1
    assert events[-2:] == [UsageEvent(Usage(5, 7)), StopEvent("tool_use")]
    assert len(client.requests) == 1
    assert client.remaining == 0


async def test_scripted_client_says_clearly_when_the_script_runs_out_and_supports_functions() -> None:
    def dynamic(request: LLMRequest) -> ScriptedTurn:
        return ScriptedTurn([Text(f"turn {request.turn}")])

    client = ScriptedClient([dynamic])
    events = await collect(client, turn=4)
    assert TextDelta(0, "turn 4") in events
    with pytest.raises(ClientError, match="no more turns"):
        await collect(client)


def test_scripted_client_loads_a_json_script_and_reports_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"turns": [{"blocks": [{"text": "hi"}, {"tool": "Read", "arguments": {"file_path": "x"}}]}]})
    )
    client = ScriptedClient.from_file(path)
    assert client.remaining == 1
    path.write_text(json.dumps({"turns": [{"blocks": [{"video": 1}]}]}))
    with pytest.raises(ValueError, match=r"turns\[0\]\.blocks\[0\]: expected one of 'text', 'tool', 'thinking'"):
        ScriptedClient.from_file(path)
    with pytest.raises(ValueError, match="cannot read script"):
        ScriptedClient.from_file(tmp_path / "missing.json")
