"""The conformance harness itself: it passes a faithful replay and fails each kind of difference it promises to
catch. The recordings here are built from the provider test fixtures (tests/providers/fixtures) so these tests
run without the shared recordings folder; the real recordings are replayed by ``scripts/conformance``
(``.ci/run`` runs it)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance import __main__ as cli
from conformance import harness, scenarios
from conformance.recording import load

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).parents[1] / "providers" / "fixtures"
CALL = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
ARGS = {"location": "San Francisco, CA", "unit": "fahrenheit"}
TOOL = {"name": "get_weather", "description": "The weather", "input_schema": {"type": "object", "properties": {}}}
SSE = {"content-type": "text/event-stream; charset=utf-8"}


def tool_recording() -> dict[str, Any]:
    """A two-request Anthropic tool round: the tool call, then the answer after its result."""
    user = {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]}
    first = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": [user], "tools": [TOOL], "stream": True}
    assistant = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Okay, let's check the weather for San Francisco, CA:"},
            {"type": "tool_use", "id": CALL, "name": "get_weather", "input": ARGS},
        ],
    }
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CALL, "content": "18 F, fog"}]}
    second = dict(first, messages=[user, assistant, result])
    uri = "https://api.anthropic.com/v1/messages"
    return {
        "name": "self_tool",
        "source": {"repo": "-", "path": "-", "commit": "-"},
        "interactions": [
            {"uri": uri, "request": first, "status": 200, "headers": SSE, "body": read("anthropic/tool")},
            {"uri": uri, "request": second, "status": 200, "headers": SSE, "body": read("anthropic/text")},
        ],
    }


def read(name: str) -> str:
    return (FIXTURES / f"{name}.sse").read_text(encoding="utf-8")


async def replay(tmp_path: Path, data: dict[str, Any]) -> harness.Result:
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return await harness.run_recording(load(path))


async def test_a_faithful_replay_passes(tmp_path: Path) -> None:
    result = await replay(tmp_path, tool_recording())
    assert result.diffs == []
    assert (result.verdict, result.requests) == ("PASS", "2/2")


async def test_a_different_call_id_in_the_recorded_follow_up_fails(tmp_path: Path) -> None:
    data = tool_recording()
    data["interactions"][1]["request"]["messages"][1]["content"][1]["id"] = "toolu_other"
    result = await replay(tmp_path, data)
    assert result.verdict == "FAIL"
    assert any("id differs" in d and "toolu_other" in d for d in result.diffs), result.diffs


async def test_a_block_order_difference_fails(tmp_path: Path) -> None:
    data = tool_recording()
    content = data["interactions"][1]["request"]["messages"][1]["content"]
    content.reverse()
    result = await replay(tmp_path, data)
    assert any("recorded [tool_use" in d for d in result.diffs), result.diffs


async def test_a_dropped_reply_block_fails_the_round_trip_even_when_the_recording_dropped_it_too(
    tmp_path: Path,
) -> None:
    # Served reply 0 carries a thinking block hookloop keeps; a recorded follow-up without it still makes
    # the comparison with the recorded request fail (one block fewer), and the round-trip rule holds.
    data = tool_recording()
    data["interactions"][1]["request"]["messages"][1]["content"].pop(0)
    result = await replay(tmp_path, data)
    assert result.verdict == "FAIL"
    assert any(d.startswith("request 1[1] assistant") or "request 1[1]" in d for d in result.diffs), result.diffs


async def test_a_request_the_recording_does_not_hold_fails(tmp_path: Path) -> None:
    data = tool_recording()
    data["interactions"].append(copy.deepcopy(data["interactions"][1]))
    result = await replay(tmp_path, data)
    assert "hookloop sent 2 requests, the recording has 3" in result.diffs


async def test_an_overloaded_reply_must_raise_a_retryable_overloaded_error(tmp_path: Path) -> None:
    data = tool_recording()
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data["interactions"] = [
        dict(data["interactions"][0], status=529, headers={"content-type": "application/json"}, body=json.dumps(body))
    ]
    result = await replay(tmp_path, data)
    assert result.diffs == []


async def test_a_mid_stream_error_event_is_compared_with_its_class(tmp_path: Path) -> None:
    data = tool_recording()
    data["interactions"] = [dict(data["interactions"][0], body=read("anthropic/error_midstream"))]
    result = await replay(tmp_path, data)
    assert result.verdict == "PASS", result.diffs


async def test_a_non_streamed_reply_is_served_as_its_event_stream(tmp_path: Path) -> None:
    data = tool_recording()
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Foggy, 18 F."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 5},
    }
    first = dict(data["interactions"][0]["request"], stream=False)
    data["interactions"] = [
        dict(
            data["interactions"][0],
            request=first,
            headers={"content-type": "application/json"},
            body=json.dumps(message),
        )
    ]
    result = await replay(tmp_path, data)
    assert (result.verdict, result.synthesised) == ("PASS", True), result.diffs


async def test_known_failing_marks_print_known_and_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenarios, "KNOWN_FAILING", {"self_tool": "issue 0 item 0"})
    monkeypatch.setattr(harness, "KNOWN_FAILING", scenarios.KNOWN_FAILING)
    assert (await replay(tmp_path, tool_recording())).verdict == "FIXED"
    data = tool_recording()
    data["interactions"][1]["request"]["messages"][1]["content"][1]["input"] = {"location": "Paris"}
    assert (await replay(tmp_path, data)).verdict == "KNOWN"


def test_the_runner_prints_a_table_and_fails_on_a_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tool_recording(), tool_recording()
    bad["name"] = "self_bad"
    bad["interactions"][1]["request"]["messages"][1]["content"][1]["input"] = {"location": "Paris"}
    for data in (good, bad):
        (tmp_path / f"{data['name']}.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("HOOKLOOP_RECORDINGS", str(tmp_path))
    assert cli.main(["self_tool"]) == 0
    assert cli.main([]) == 1
    out = capsys.readouterr().out
    assert "self_tool" in out
    assert "PASS" in out
    assert "FAIL self_bad" in out
    assert "input differs" in out
