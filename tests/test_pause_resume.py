"""SPEC §7: pause, checkpoint, resume — same Worker, new Worker, another process — and bad checkpoints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers import assert_valid_history, echo, shape
from hookloop import (
    AllowAlways,
    Approve,
    Checkpoint,
    CheckpointError,
    Finished,
    Paused,
    Reject,
    ScriptedClient,
    Text,
    ToolResult,
    ToolUse,
    Worker,
)
from hookloop.hooks import Ask, Continue, Pause, PreToolCallInfo, SessionStartInfo

pytestmark = pytest.mark.anyio

TURNS: list[Any] = [
    [
        Text("I will run two things."),
        ToolUse("echo", {"text": "safe"}, call_id="c1"),
        ToolUse("echo", {"text": "risky"}, call_id="c2"),
    ],
    [Text("all done")],
]


def pause_on_risky(info: PreToolCallInfo) -> Pause | Continue:
    return Pause("needs a human") if info.arguments["text"] == "risky" else Continue()


async def test_resume_in_the_same_worker_equals_a_run_that_never_paused() -> None:
    plain = Worker(ScriptedClient(TURNS), tools=[echo])
    expected = await plain.run("go")
    assert isinstance(expected, Finished)

    worker = Worker(ScriptedClient(TURNS), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    assert [p.call_id for p in paused.pending] == ["c2"]
    assert paused.pending[0].reason == "needs a human"
    assert paused.pending[0].asked_by == "hook 'pause_on_risky'"
    assert [c.state for c in paused.checkpoint.batch] == ["ready", "paused"]
    # nothing ran yet: the batch waits for the decision
    assert not any(isinstance(i, ToolResult) for i in worker.history)

    done = await worker.resume(paused.checkpoint, {"c2": Approve()})
    assert isinstance(done, Finished)
    assert done.text == expected.text
    assert done.run_id == paused.run_id
    assert shape(worker.history) == shape(plain.history)
    assert done.turns == expected.turns
    assert_valid_history(worker.history)


async def test_resume_in_a_fresh_worker_from_json_and_session_start_says_resume() -> None:
    worker = Worker(ScriptedClient(TURNS), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    text = paused.checkpoint.dumps()

    fresh = Worker(ScriptedClient(TURNS[1:]), tools=[echo])
    sources: list[str] = []

    def on_start(info: SessionStartInfo) -> None:
        sources.append(info.source)

    fresh.hooks.session_start(on_start)
    done = await fresh.resume(text, {"c2": Reject("not on a Friday")})
    assert isinstance(done, Finished)
    assert sources == ["resume"]
    results = [i for i in fresh.history if isinstance(i, ToolResult)]
    assert [(r.content, r.is_error) for r in results] == [
        ("safe", False),
        ("denied by the user: not on a Friday", True),
    ]
    assert fresh.session_id == worker.session_id
    assert_valid_history(fresh.history)


RESUME_SCRIPT = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from helpers import echo
from hookloop import Approve, ScriptedClient, Text, Worker

async def main():
    worker = Worker(ScriptedClient([[Text("all done")]]), tools=[echo])
    outcome = await worker.resume(open(sys.argv[1]).read(), {{"c2": Approve()}})
    print(json.dumps({{"text": outcome.text, "history": [i.to_json() for i in worker.history]}}))

asyncio.run(main())
"""


async def test_resume_in_another_process_produces_the_same_history(tmp_path: Path) -> None:
    plain = Worker(ScriptedClient(TURNS), tools=[echo])
    await plain.run("go")

    worker = Worker(ScriptedClient(TURNS), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    path = paused.checkpoint.save(tmp_path / "run.checkpoint.json")
    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT.format(tests=str(Path(__file__).parent)))
    proc = await anyio.run_process([sys.executable, str(script), str(path)], check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["text"] == "all done"
    resumed = [{k: v for k, v in item.items() if k != "id"} for item in out["history"]]
    assert resumed == shape(plain.history)


async def test_permission_ask_from_a_hook_pauses_and_allow_always_answers_later_asks() -> None:
    turns: list[Any] = [
        [ToolUse("echo", {"text": "one"}, call_id="a1")],
        [ToolUse("echo", {"text": "two"}, call_id="a2")],
        [Text("fin")],
    ]
    worker = Worker(ScriptedClient(turns), tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: Ask("echo writes to the screen"))
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    assert paused.pending[0].state == "approval"
    assert paused.pending[0].asked_by == "hook '<lambda>'"
    done = await worker.resume(paused.checkpoint, {"a1": AllowAlways()})
    # the second ask for the same tool is answered by the session approval
    assert isinstance(done, Finished)
    assert [r.content for r in worker.history if isinstance(r, ToolResult)] == ["one", "two"]


async def test_resume_requires_a_decision_for_every_pending_call() -> None:
    worker = Worker(ScriptedClient(TURNS), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    with pytest.raises(ValueError, match="missing: c2"):
        await worker.resume(paused.checkpoint, {})
    with pytest.raises(ValueError, match="not pending: zz"):
        await worker.resume(paused.checkpoint, {"c2": Approve(), "zz": Approve()})


async def test_a_new_run_after_an_abandoned_pause_keeps_the_history_valid() -> None:
    worker = Worker(ScriptedClient([*TURNS[:1], [Text("fresh start")]]), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    done = await worker.run("never mind, something else")
    assert isinstance(done, Finished)
    assert_valid_history(worker.history)
    abandoned = [r for r in worker.history if isinstance(r, ToolResult)]
    assert all("was not resumed" in r.content for r in abandoned)


async def test_turn_end_pause_resumes_with_messages_or_finishes() -> None:
    worker = Worker(ScriptedClient([[Text("draft 1")], [Text("draft 2")]]))
    first = [True]

    def review(info: Any) -> Any:
        if first[0]:
            first[0] = False
            return Pause("human review")
        from hookloop.hooks import Finish

        return Finish()

    worker.add_on_turn_end_hook(review)
    paused = await worker.run("write")
    assert isinstance(paused, Paused)
    done = await worker.resume(paused.checkpoint, messages="shorter please")
    assert isinstance(done, Finished)
    assert done.text == "draft 2"

    worker2 = Worker(ScriptedClient([[Text("only draft")]]))
    worker2.add_on_turn_end_hook(lambda info: Pause("look"))
    paused2 = await worker2.run("write")
    assert isinstance(paused2, Paused)
    finished = await worker2.resume(paused2.checkpoint)
    assert isinstance(finished, Finished)
    assert finished.text == "only draft"


async def paused_checkpoint() -> dict[str, Any]:
    worker = Worker(ScriptedClient(TURNS), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    return paused.checkpoint.to_json()


async def test_checkpoint_round_trips_exactly() -> None:
    data = await paused_checkpoint()
    again = Checkpoint.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data


async def test_a_checkpoint_from_a_newer_version_is_refused_clearly() -> None:
    data = await paused_checkpoint()
    data["version"] = 99
    with pytest.raises(CheckpointError, match="written by a newer hookloop"):
        Checkpoint.from_json(data)


async def test_a_checkpoint_edited_by_hand_is_refused_and_verify_false_is_for_inspection_only() -> None:
    data = await paused_checkpoint()
    data["history"][0]["content"][0]["text"] = "something else"
    with pytest.raises(CheckpointError, match="changed after it was written"):
        Checkpoint.from_json(data)
    inspected = Checkpoint.from_json(data, verify=False)
    assert inspected.history[0].to_json()["content"][0]["text"] == "something else"  # type: ignore[index]
    assert not inspected.resumable
    worker = Worker(ScriptedClient(TURNS[1:]), tools=[echo])
    with pytest.raises(CheckpointError, match="verify=False, for inspection only"):
        await worker.resume(inspected, {"c2": Approve()})
    with pytest.raises(CheckpointError, match="changed after it was written"):
        await worker.resume(data, {"c2": Approve()})
    assert worker.history == ()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.__setitem__("history", "nope"), "checkpoint.history: expected list"),
        (lambda d: d["history"][1].__setitem__("type", "mystery"), "history[1].type: unknown item type 'mystery'"),
        (lambda d: d["batch"][0].__setitem__("state", "limbo"), "checkpoint.batch[0].state"),
        (lambda d: d.__setitem__("run_start", 999), "checkpoint.run_start: 999 is outside the history"),
        (lambda d: d.__setitem__("turn", "three"), "checkpoint.turn: expected int"),
        (lambda d: d.__setitem__("pause_kind", "coffee"), "checkpoint.pause_kind"),
    ],
)
async def test_malformed_checkpoints_name_the_field(mutate: Any, message: str) -> None:
    data = await paused_checkpoint()
    mutate(data)
    with pytest.raises(CheckpointError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Checkpoint.from_json(data, verify=False)


def test_garbage_checkpoint_text_is_a_checkpoint_error() -> None:
    with pytest.raises(CheckpointError, match="not valid JSON"):
        Checkpoint.loads("{nope")
    with pytest.raises(CheckpointError, match="expected a JSON object"):
        Checkpoint.loads("[]")


async def test_a_call_id_reused_in_a_later_turn_pauses_and_resumes_in_a_new_worker() -> None:
    # Bedrock numbers calls per reply (call_0, call_1 …): a later turn reuses an answered id.
    turns: list[Any] = [
        [ToolUse("echo", {"text": "safe"}, call_id="call_0")],
        [ToolUse("echo", {"text": "risky"}, call_id="call_0")],
        [Text("all done")],
    ]
    worker = Worker(ScriptedClient(turns), tools=[echo])
    worker.add_pre_tool_call_hook(pause_on_risky)
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    assert [p.call_id for p in paused.pending] == ["call_0"]
    fresh = Worker(ScriptedClient(turns[2:]), tools=[echo])
    done = await fresh.resume(paused.checkpoint.dumps(), {"call_0": Approve()})
    assert isinstance(done, Finished)
    assert_valid_history(fresh.history)
    results = [i.content for i in fresh.history if isinstance(i, ToolResult)]
    assert results == ["safe", "risky"]
