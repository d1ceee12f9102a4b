"""``transcript_path`` is a transcript in Claude Code's JSONL format, written as the run goes (issue 12, item 5).
Real Stop hooks in the public style (a jq "did the answer say the tests pass" check, a Python checker that the
tests were run) and a PreToolUse hook that reads the transcript mid-run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker
from hookloop.command_hooks.transcript import ClaudeTranscript
from hookloop.items import Message, Reasoning, ToolCall, ToolResult
from hookloop.tools.builtin import builtin_tools

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import FAST, Env, group, worker_for

pytestmark = pytest.mark.anyio

# "Don't stop until the last message says the tests pass": the last assistant text, with jq.
LAST_MESSAGE_GATE = r"""
input=$(cat)
transcript=$(echo "$input" | jq -r '.transcript_path')
last=$(jq -rs '[.[] | select(.type == "assistant") | .message.content[]? | select(.type == "text") | .text]
               | last // ""' "$transcript")
echo "$last" >> "$CLAUDE_PROJECT_DIR/last-seen.txt"
case "$last" in
  *"tests pass"*) exit 0 ;;
  *) echo "Run the tests and say whether they pass before stopping." >&2; exit 2 ;;
esac
"""

# A checker in the style of the "verify before stop" plugins: were the tests run (a Bash tool_use whose command
# runs pytest, answered by a tool_result that is not an error)?
TESTS_RAN_CHECK = """
import json, sys
data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
uses, failed = {}, set()
with open(data["transcript_path"]) as handle:
    for line in handle:
        entry = json.loads(line)
        content = entry.get("message", {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                uses[block["id"]] = block["input"].get("command", "")
            if block.get("type") == "tool_result" and block.get("is_error"):
                failed.add(block["tool_use_id"])
ran = [cid for cid, cmd in uses.items() if "pytest" in cmd and cid not in failed]
if not ran:
    print(json.dumps({"decision": "block", "reason": "No passing pytest run found in this session."}))
"""


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_jq_stop_hook_reads_the_last_assistant_message_and_keeps_the_run_going(env: Env) -> None:
    env.script("gate.sh", LAST_MESSAGE_GATE)
    env.settings({"Stop": group(".claude/hooks/gate.sh")})
    turns = [[Text("I changed the parser.")], [Text("Done: all tests pass.")]]
    worker, client, _ = worker_for(env, turns)
    outcome = await worker.run("fix the parser")
    assert isinstance(outcome, Finished)
    assert len(client.requests) == 2  # blocked once, then the hook saw "tests pass" in the newest message
    assert (env.project / "last-seen.txt").read_text() == "I changed the parser.\nDone: all tests pass.\n"
    feedback = [m.text for m in worker.history if isinstance(m, Message) and m.role == "user"]
    assert any("Run the tests and say whether they pass" in text for text in feedback)


async def test_a_python_checker_finds_the_test_run_in_the_transcript(env: Env) -> None:
    env.script("check.py", TESTS_RAN_CHECK, python=True)
    env.settings({"Stop": group("python3 .claude/hooks/check.py")})
    turns = [
        [Text("Looks fine to me.")],
        [ToolUse("Bash", {"command": "echo '1 passed' # pytest -q"})],
        [Text("pytest: 1 passed")],
    ]
    worker, client, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    outcome = await worker.run("check the change")
    assert isinstance(outcome, Finished)
    assert outcome.text == "pytest: 1 passed"
    feedback = [m.text for m in worker.history if isinstance(m, Message) and m.role == "user"]
    assert any("No passing pytest run found" in text for text in feedback)
    assert len(client.requests) == 3


WATCH = """
import json, os, sys
data = json.load(sys.stdin)
lines = [json.loads(l) for l in open(data["transcript_path"])]
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen-at-pre.jsonl"), "a") as out:
    out.write(json.dumps({"call": data["tool_use_id"], "lines": lines}) + "\\n")
"""


async def test_the_transcript_is_written_incrementally_in_claude_codes_format(env: Env) -> None:
    env.script("watch.py", WATCH, python=True)
    env.settings({"PreToolUse": group("python3 .claude/hooks/watch.py")})
    turns = [
        [Text("Listing."), ToolUse("Bash", {"command": "echo one"})],
        [ToolUse("Bash", {"command": "exit 3"})],
        [Text("done")],
    ]
    worker, _, _ = worker_for(env, turns, tools=builtin_tools(env.project), workspace=env.project)
    await worker.run("go")
    seen = [json.loads(line) for line in (env.project / "seen-at-pre.jsonl").read_text().splitlines()]
    first, second = seen[0]["lines"], seen[1]["lines"]
    # At the first PreToolUse the file already has the prompt, the text and the tool_use being asked about.
    assert [(e["type"], e["message"]["content"] if e["type"] == "user" else e["message"]["content"][0]["type"])
            for e in first] == [("user", "go"), ("assistant", "text"), ("assistant", "tool_use")]  # fmt: skip
    assert first[2]["message"]["content"][0] == {
        "type": "tool_use",
        "id": seen[0]["call"],
        "name": "Bash",
        "input": {"command": "echo one"},
    }
    # At the second, the first result is there, appended after what was written before.
    assert second[:3] == first
    result = second[3]
    assert result["type"] == "user"
    assert result["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": seen[0]["call"], "content": "one", "is_error": False}
    ]
    everything = read_lines(env.root / "transcript.claude.jsonl")
    assert [e["parentUuid"] for e in everything] == [None, *[e["uuid"] for e in everything[:-1]]]
    assert len({e["uuid"] for e in everything}) == len(everything)
    for entry in everything:
        assert entry["sessionId"] == worker.session_id
        assert entry["cwd"] == str(env.project)
        assert entry["timestamp"].endswith("Z")
        assert "T" in entry["timestamp"]
        assert entry["type"] in ("user", "assistant")
        assert entry["isSidechain"] is False
    failure = everything[-2]["message"]["content"][0]
    assert (failure["type"], failure["is_error"]) == ("tool_result", True)
    assert everything[-1]["message"]["content"] == [{"type": "text", "text": "done"}]
    assert everything[-1]["message"]["role"] == "assistant"


async def test_without_a_worker_transcript_the_file_lives_in_a_private_folder(env: Env) -> None:
    env.settings({"UserPromptSubmit": group('jq -r .transcript_path > "$CLAUDE_PROJECT_DIR/where.txt"')})
    worker = Worker(ScriptedClient([[Text("hi")]]))
    env.load().install(worker)
    await worker.run("hello")
    path = Path((env.project / "where.txt").read_text().strip())
    assert path.name == f"{worker.session_id}.jsonl"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert read_lines(path)[0]["message"]["content"] == "hello"


async def test_an_explicit_transcript_dir_is_used(env: Env, tmp_path: Path) -> None:
    from hookloop.command_hooks.bridge import CommandHooks

    env.settings({"UserPromptSubmit": group('jq -r .transcript_path > "$CLAUDE_PROJECT_DIR/where.txt"')})
    folder = tmp_path / "claude-transcripts"
    folder.mkdir()
    hooks = CommandHooks.load(
        env.project,
        home=env.home,
        hookloop_home=env.hookloop_home,
        trust_project=True,
        options=FAST,
        transcript_dir=folder,
    )
    worker = Worker(ScriptedClient([[Text("hi")]]))
    hooks.install(worker)
    await worker.run("hello")
    assert (env.project / "where.txt").read_text().strip() == str(folder / f"{worker.session_id}.jsonl")


def test_every_item_kind_maps_to_its_claude_code_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    transcript = ClaudeTranscript(path, session_id="s1", cwd="/w", version="hookloop 1")
    context = Message.user("<hook-context>x</hook-context>", meta={"source": "hook_context"})
    history = [
        Message.system("be brief"),
        Message.user("hi"),
        context,
        Reasoning(text="think", signature="sig"),
        ToolCall(call_id="c1", name="Read", arguments={"file_path": "/w/a"}),
        ToolResult(call_id="c1", name="Read", content="text", is_error=False),
        Message.assistant("bye"),
    ]
    transcript.sync(history, model="claude-x")
    transcript.sync(history, model="claude-x")  # nothing new: nothing written twice
    lines = read_lines(path)
    assert [line["type"] for line in lines] == ["user", "user", "assistant", "assistant", "user", "assistant"]
    assert lines[1]["isMeta"] is True
    assert lines[2]["message"]["content"] == [{"type": "thinking", "thinking": "think", "signature": "sig"}]
    assert lines[4]["toolUseResult"] == "text"
    assert lines[5]["message"]["model"] == "claude-x"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_failed_write_is_tried_again_and_the_chain_stays_whole(tmp_path: Path) -> None:
    folder = tmp_path / "missing"
    transcript = ClaudeTranscript(folder / "t.jsonl", session_id="s1", cwd="/w", version="v")
    history = [Message.user("one"), Message.assistant("two")]
    with pytest.raises(OSError):
        transcript.sync(history)
    folder.mkdir()
    transcript.sync([*history, Message.user("three")])
    lines = read_lines(folder / "t.jsonl")
    assert [line["message"]["content"] for line in lines] == ["one", [{"type": "text", "text": "two"}], "three"]
    assert [line["parentUuid"] for line in lines] == [None, lines[0]["uuid"], lines[1]["uuid"]]


def test_hooks_replay_reads_the_transcript_back(tmp_path: Path) -> None:
    from hookloop.command_hooks.dryrun import read_transcript

    transcript = ClaudeTranscript(tmp_path / "t.jsonl", session_id="s", cwd="/w", version="v")
    transcript.sync(
        [
            Message.user("hi"),
            ToolCall(call_id="c1", name="Bash", arguments={"command": "ls"}),
            ToolResult(call_id="c1", name="Bash", content="x"),
            Message.assistant("done"),
        ]
    )
    steps = read_transcript(tmp_path / "t.jsonl")
    assert [(s.kind, s.text, s.tool_name, s.call_id) for s in steps] == [
        ("prompt", "hi", "", ""),
        ("tool_call", "", "Bash", "c1"),
    ]
