"""docs/scripted-model.md says what the scripted model does; these tests hold it to that.

Its JSON scripts load, its Python block runs as written (``# prints:`` lines checked), every error it shows is
the error a real malformed script gets, and the behaviour it describes — defaults, streaming sizes, call ids,
injected errors, running out of turns, resuming a paused CLI run from the next turn — is what happens.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_markdown import code_blocks, missing_lines
from docs_runner import REPO, offline_env, run_python

from hookloop import ClientError, ScriptedClient, ToolResult, Worker, tool
from hookloop.providers import client_from_model_string
from hookloop.providers.base import LLMRequest
from hookloop.stream import StopEvent, StreamError, TextDelta, ToolCallDelta, UsageEvent

DOC = REPO / "docs" / "scripted-model.md"
BLOCKS = code_blocks(DOC)


def load(tmp_path: Path, script: object) -> ScriptedClient:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    return ScriptedClient.from_file(path)


async def events(client: ScriptedClient) -> list[object]:
    return [e async for e in client.stream(LLMRequest(system=None, items=(), tools=()))]


async def events_until_error(client: ScriptedClient) -> tuple[list[object], ClientError]:
    seen: list[object] = []
    try:
        async for event in client.stream(LLMRequest(system=None, items=(), tools=())):
            seen.append(event)
    except ClientError as exc:
        return seen, exc
    raise AssertionError(f"no ClientError after {seen}")


def test_every_json_script_in_the_doc_loads(tmp_path: Path) -> None:
    scripts = [b for b in BLOCKS if b.info == "json"]
    assert len(scripts) >= 2
    for block in scripts:
        data = json.loads(block.code)
        assert "turns" in data, block.where
        client = load(tmp_path, data)
        assert client.remaining == len(data["turns"]), block.where


def test_the_python_block_runs_as_written(tmp_path: Path) -> None:
    blocks = [b for b in BLOCKS if b.is_python]
    assert blocks
    for block in blocks:
        script = tmp_path / "block.py"
        script.write_text(block.code, encoding="utf-8")
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        ran = run_python([str(script)], cwd=work, root=tmp_path)
        assert ran.returncode == 0, ran.describe()
        assert not missing_lines(block.expected_lines, ran.stdout), ran.describe()


# Every line of the doc's "Mistakes in a script" block, with a script that produces it.
_MISTAKES: dict[str, Any] = {
    "turns[0]: unknown key 'block'": {"turns": [{"block": []}]},
    "turns[1].blocks[0]: expected one of 'text', 'tool', 'thinking' (both 'text' and 'tool')": {
        "turns": [{}, {"blocks": [{"text": "a", "tool": "Bash"}]}]
    },
    "turns[0].blocks[0].text: expected a string, got null": {"turns": [{"blocks": [{"text": None}]}]},
    "turns[2].stop_reason: expected one of end_turn, max_tokens, other, pause_turn, refusal, stop_sequence, "
    "tool_use, got 'done'": {"turns": [{}, {}, {"stop_reason": "done"}]},
    "turns[0].usage.output_tokens: expected a whole number >= 0, got -1": {"turns": [{"usage": {"output_tokens": -1}}]},
}


def test_every_error_the_doc_shows_is_real(tmp_path: Path) -> None:
    shown = next(b for b in BLOCKS if "unknown key 'block'" in b.code).code.splitlines()
    prefix = "hookloop: greeting.json: "
    assert all(line.startswith(prefix) for line in shown)
    messages = [line[len(prefix) :] for line in shown]
    for message in messages[:-1]:
        key = next(k for k in _MISTAKES if message.startswith(k))
        with pytest.raises(ValueError, match=re.escape(key)):
            load(tmp_path, _MISTAKES[key])
    assert messages[-1].startswith("cannot read script: ")
    (tmp_path / "bad.json").write_text('{"turns": [\n  {}\n  {}\n]}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: cannot read script: Expecting ',' delimiter"):
        ScriptedClient.from_file(tmp_path / "bad.json")


@pytest.mark.parametrize(
    ("script", "where"),
    [
        ([], "expected an object with a 'turns' list"),
        ({"turns": {}}, "expected an object with a 'turns' list"),
        ({"turns": [], "turn": []}, "unknown key 'turn'"),
        ({"turns": ["hi"]}, "turns[0]: expected an object, got a string"),
        ({"turns": [{"blocks": "hi"}]}, "turns[0].blocks: expected a list, got a string"),
        ({"turns": [{"blocks": [[]]}]}, "turns[0].blocks[0]: expected an object, got an array"),
        ({"turns": [{"blocks": [{}]}]}, "turns[0].blocks[0]: expected one of 'text', 'tool', 'thinking' (none)"),
        ({"turns": [{"blocks": [{"text": "a", "arguments": {}}]}]}, "turns[0].blocks[0]: unknown key 'arguments'"),
        ({"turns": [{"blocks": [{"tool": ""}]}]}, "turns[0].blocks[0].tool: expected a tool name"),
        ({"turns": [{"blocks": [{"tool": 3}]}]}, "turns[0].blocks[0].tool: expected a string, got a number"),
        ({"turns": [{"blocks": [{"tool": "Bash", "arguments": [1]}]}]}, "arguments: expected an object or a string"),
        ({"turns": [{"blocks": [{"tool": "Bash", "call_id": 5}]}]}, "call_id: expected a non-empty string, got 5"),
        ({"turns": [{"blocks": [{"thinking": "t", "signature": 1}]}]}, "signature: expected a string or null"),
        ({"turns": [{"usage": []}]}, "turns[0].usage: expected an object, got an array"),
        ({"turns": [{"usage": {"input": 1}}]}, "turns[0].usage: unknown key 'input'"),
        ({"turns": [{"usage": {"input_tokens": "many"}}]}, "usage.input_tokens: expected a whole number >= 0"),
        ({"turns": [{"usage": {"input_tokens": True}}]}, "usage.input_tokens: expected a whole number >= 0"),
        ({"turns": [{"delay": "x"}]}, "turns[0].delay: expected seconds (a number >= 0), got 'x'"),
        ({"turns": [{"delay": -1}]}, "turns[0].delay: expected seconds"),
        ({"turns": [{"error": "boom"}]}, "turns[0].error: expected an object"),
        ({"turns": [{"error": {"mode": "loud"}}]}, "turns[0].error.mode: expected 'raise' or 'event'"),
        ({"turns": [{"error": {"after_events": 1.5}}]}, "turns[0].error.after_events: expected a whole number"),
        ({"turns": [{"error": {"retryable": "yes"}}]}, "turns[0].error.retryable: expected true or false"),
        ({"turns": [{"error": {"text": "x"}}]}, "turns[0].error: unknown key 'text'"),
    ],
)
def test_a_malformed_script_is_one_error_naming_the_json_path(tmp_path: Path, script: object, where: str) -> None:
    with pytest.raises(ValueError, match=re.escape(where)) as caught:
        load(tmp_path, script)
    assert str(caught.value).startswith(f"{tmp_path / 'script.json'}")
    assert "\n" not in str(caught.value)


def test_comments_are_allowed_everywhere(tmp_path: Path) -> None:
    client = load(
        tmp_path,
        {
            "comment": "a demo",
            "turns": [
                {"comment": "t", "blocks": [{"text": "a", "comment": 1}, {"tool": "X", "comment": None}]},
                {"blocks": [{"thinking": "t", "comment": {}}], "error": {"comment": "e"}},
            ],
        },
    )
    assert client.remaining == 2


@pytest.mark.anyio
async def test_defaults_and_streaming_sizes(tmp_path: Path) -> None:
    client = load(
        tmp_path,
        {
            "turns": [
                {
                    "blocks": [
                        {"text": "0123456789abcdefghij"},
                        {"tool": "Read", "arguments": {"file_path": "a/b/c.txt"}},
                    ]
                },
                {"blocks": [{"text": "ok"}], "usage": {"output_tokens": 7}, "stop_reason": "max_tokens"},
                {"blocks": [{"tool": "Read"}, {"tool": "Read", "call_id": "mine"}, {"tool": "Read"}]},
            ]
        },
    )
    first = await events(client)
    assert [e.text for e in first if isinstance(e, TextDelta)] == ["01234567", "89abcdef", "ghij"]
    fragments = [e.fragment for e in first if isinstance(e, ToolCallDelta)]
    assert all(len(f) <= 12 for f in fragments)
    assert json.loads("".join(fragments)) == {"file_path": "a/b/c.txt"}
    usage = next(e for e in first if isinstance(e, UsageEvent)).usage
    assert (usage.input_tokens, usage.output_tokens) == (16, (20 + len(json.dumps({"file_path": "a/b/c.txt"}))) // 4)
    assert first[-1] == StopEvent("tool_use")

    second = await events(client)
    usage = next(e for e in second if isinstance(e, UsageEvent)).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (0, 7, 0)
    assert second[-1] == StopEvent("max_tokens")

    third = await events(client)
    ids = [getattr(e, "call_id", None) for e in third if getattr(e, "kind", None) == "tool_call"]
    assert ids == ["call_0002", "mine", "call_0004"]  # numbered over every tool block played

    with pytest.raises(ClientError, match=r"the script has no more turns \(played 3\)"):
        await events(client)


@pytest.mark.anyio
async def test_injected_errors(tmp_path: Path) -> None:
    client = load(
        tmp_path,
        {
            "turns": [
                {
                    "blocks": [{"text": "hello"}],
                    "error": {"message": "overloaded", "after_events": 2, "retryable": True},
                },
                {"blocks": [{"text": "hello"}], "error": {"message": "bad gateway", "mode": "event"}},
                {"blocks": [{"text": "hi"}], "error": {"after_events": 99}},
            ]
        },
    )
    seen, error = await events_until_error(client)
    assert str(error) == "overloaded"
    assert error.retryable
    assert len(seen) == 2
    assert await events(client) == [StreamError("bad gateway")]
    seen, error = await events_until_error(client)
    assert str(error) == "injected provider error"
    assert not error.retryable
    assert isinstance(seen[-1], StopEvent)  # the whole reply streamed first


@pytest.mark.anyio
async def test_string_arguments_play_malformed_json_and_the_call_fails_without_running(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    async def shell(command: str) -> str:
        """Run."""
        ran.append(command)
        return "ran"

    scripted = load(
        tmp_path,
        {"turns": [{"blocks": [{"tool": "shell", "arguments": '{"command": "ls"'}]}, {"blocks": [{"text": "ok"}]}]},
    )
    worker = Worker(scripted, tools=[shell])
    await worker.run("go")
    result = next(i for i in worker.history if isinstance(i, ToolResult))
    assert result.is_error
    assert "not a valid JSON object" in result.content
    assert ran == []


def test_model_string_loads_the_file_relative_to_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"turns": [{"blocks": [{"text": "hi"}]}]}', encoding="utf-8")
    client, model = client_from_model_string(f"scripted:{tmp_path / 's.json'}")
    assert isinstance(client, ScriptedClient)
    assert model is None
    assert client.remaining == 1


def _hookloop(args: list[str], *, cwd: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from hookloop.cli import main; main()", *args],
        cwd=cwd,
        env=offline_env(root),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_plays_the_greeting_and_resumes_a_paused_script_from_the_next_turn(tmp_path: Path) -> None:
    greeting = next(b for b in BLOCKS if b.info == "json")
    script = tmp_path / "greeting.json"
    script.write_text(greeting.code, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    # No terminal to ask: the Write call pauses the run (exit 3) with a checkpoint.
    paused = _hookloop(
        ["run", "write a greeting", "--model", f"scripted:{script}", "--cwd", str(project),
         "--checkpoint-dir", str(tmp_path / "cps")],
        cwd=tmp_path,
        root=tmp_path,
    )  # fmt: skip
    assert paused.returncode == 3, paused.stderr
    assert not (project / "hello.txt").exists()
    (checkpoint,) = (tmp_path / "cps").iterdir()
    resumed = _hookloop(["resume", str(checkpoint), "--yes"], cwd=project, root=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert (project / "hello.txt").read_text(encoding="utf-8") == "Hello!\n"
    assert "no more turns" not in resumed.stdout + resumed.stderr  # the second turn answered, not the first again


def test_cli_refuses_a_malformed_script_with_exit_2(tmp_path: Path) -> None:
    script = tmp_path / "greeting.json"
    script.write_text('{"turns": [{"block": []}]}', encoding="utf-8")
    ran = _hookloop(["run", "hi", "--model", f"scripted:{script}", "--cwd", str(tmp_path)], cwd=tmp_path, root=tmp_path)
    assert ran.returncode == 2
    assert "turns[0]: unknown key 'block'" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_the_doc_names_every_key_the_loader_accepts() -> None:
    from hookloop.providers import scripted

    text = DOC.read_text(encoding="utf-8")
    keys = {"turns", *scripted._TURN_KEYS, *scripted._ERROR_KEYS, *scripted._USAGE_FIELDS}
    for allowed in scripted._BLOCK_KEYS.values():
        keys |= allowed
    for stop_reason in scripted._STOP_REASONS:
        keys.add(stop_reason)
    undocumented = sorted(k for k in keys if f"`{k}`" not in text and f'"{k}"' not in text)
    assert not undocumented, f"docs/scripted-model.md does not mention {undocumented}"
