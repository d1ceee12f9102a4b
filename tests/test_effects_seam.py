"""The effect seam (hookloop.effects): every model call, tool call and external hook firing of a run goes
through the run's Effects; a replay from the recorded outcomes gives the same history without performing any."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TypeVar

import pytest

from effects_kit import Recording, Replay
from helpers import assert_valid_history
from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop._frozen import freeze_object
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.effects import Effect, event_from_json, event_to_json
from hookloop.hooks import Continue, PreToolCallInfo
from hookloop.items import Item
from hookloop.stream import (
    BlockStart,
    NativeBlock,
    StopEvent,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    Usage,
    UsageEvent,
)

pytestmark = pytest.mark.anyio
T = TypeVar("T")


def plain(items: tuple[Item, ...]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        data = item.to_json()
        data.pop("id", None)
        out.append(data)
    return out


def make(tmp_path: Path, ran: list[str]) -> Worker:
    @tool
    async def deploy(target: str) -> str:
        """Deploy somewhere."""
        ran.append(target)
        return f"deployed {target}"

    project = tmp_path / "project"
    hooks_dir = project / ".claude"
    hooks_dir.mkdir(parents=True, exist_ok=True)
    script = hooks_dir / "guard.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "if data['tool_input'].get('target') == 'prod':\n"
        "    print('no prod', file=sys.stderr); sys.exit(2)\n"
    )
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "deploy", "hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}
            ]
        }
    }
    (hooks_dir / "settings.json").write_text(json.dumps(settings))
    client = ScriptedClient(
        [
            [Text("deploying"), ToolUse("deploy", {"target": "staging"}), ToolUse("deploy", {"target": "prod"})],
            [Text("staging is up; prod was refused")],
        ]
    )
    worker = Worker(client, tools=[deploy])
    CommandHooks.load(project, home=tmp_path / "home", hookloop_home=tmp_path / "hl", trust_project=True).install(
        worker
    )
    return worker


async def test_a_replay_from_recorded_effects_gives_the_same_history_and_performs_nothing(tmp_path: Path) -> None:
    ran: list[str] = []
    worker = make(tmp_path, ran)
    recording = Recording()
    outcome = await worker.run("ship it", run_id="run-seam", effects=recording)
    assert isinstance(outcome, Finished)
    assert ran == ["staging"]
    kinds = [kind for kind, _, _ in recording.log]
    assert kinds.count("model") == 2
    assert kinds.count("tool") == 1
    assert kinds.count("hook") == 2  # the PreToolUse firing of each call
    names = [name for _, name, _ in recording.log]
    assert "tool:1:" in names[[k for k, _, _ in recording.log].index("tool")]
    assert_valid_history(worker.history)

    again: list[str] = []
    replayed = make(tmp_path / "b", again)
    outcome2 = await replayed.run("ship it", run_id="run-seam", effects=Replay(recording))
    assert isinstance(outcome2, Finished)
    assert again == []  # the tool did not run again
    assert plain(replayed.history) == plain(worker.history)
    assert outcome2.text == outcome.text


async def test_a_plain_run_builds_no_effect_and_the_effects_do_not_leak_into_the_next_run(tmp_path: Path) -> None:
    ran: list[str] = []
    worker = make(tmp_path, ran)
    recording = Recording()
    await worker.run("ship it", effects=recording)
    count = len(recording.log)
    worker2 = make(tmp_path / "c", ran)
    await worker2.run("ship it")  # no effects: nothing more is recorded anywhere
    assert len(recording.log) == count


async def test_the_tool_effect_carries_the_idempotency_key_and_in_process_hooks_run_on_replay(tmp_path: Path) -> None:
    seen: list[str] = []

    @tool
    async def pay(amount: int) -> str:
        """Pay."""
        return f"paid {amount}"

    def hook(info: PreToolCallInfo) -> Continue:
        seen.append(info.tool_name)
        return Continue()

    described: list[dict[str, object]] = []

    class Describing(Recording):
        async def perform(self, effect: Effect[T]) -> T:
            described.append(dict(effect.describe))
            return await super().perform(effect)

    def build() -> Worker:
        w = Worker(ScriptedClient([[ToolUse("pay", {"amount": 3}, call_id="c1")], [Text("done")]]), tools=[pay])
        w.add_pre_tool_call_hook(hook)
        return w

    rec = Describing()
    await build().run("pay", run_id="r1", effects=rec)
    tool_effect = next(d for d in described if "idempotency_key" in d)
    assert tool_effect["idempotency_key"] == "r1:c1"
    assert tool_effect["arguments"] == {"amount": 3}
    await build().run("pay", run_id="r1", effects=Replay(rec))
    assert seen == ["pay", "pay"]  # plain code runs again on replay


def test_stream_events_round_trip_through_json() -> None:
    events: list[StreamEvent] = [
        BlockStart(index=0, kind="text"),
        TextDelta(index=0, text="hé"),
        ThinkingDelta(index=1, text="t", signature="sig"),
        NativeBlock(
            index=2, provider="anthropic", data=freeze_object({"type": "server_tool_use", "input": {"q": [1, 2]}})
        ),
        UsageEvent(usage=Usage(input_tokens=3, output_tokens=4)),
        StopEvent(reason="end_turn"),
    ]
    for event in events:
        again = event_from_json(json.loads(json.dumps(event_to_json(event))))
        assert again == event
    with pytest.raises(ValueError, match="unknown type"):
        event_from_json({"type": "nope"})
