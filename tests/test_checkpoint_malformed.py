"""Issue 10 item 11: malformed checkpoints — 200 MB, 100,000-deep, wrong types anywhere, not UTF-8, not a
file — are one CheckpointError line naming the problem, never another exception."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from checkpoint_kit import KEY, get, paths, put, remac
from helpers import echo
from hookloop import (
    Approve,
    Checkpoint,
    CheckpointError,
    Finished,
    HookloopError,
    Paused,
    Reject,
    ScriptedClient,
    Text,
    ToolUse,
    Worker,
)
from hookloop.checkpoint import MAX_CHECKPOINT_BYTES, MAX_DEPTH
from hookloop.hooks import Ask, Continue, Pause, PreToolCallInfo

pytestmark = pytest.mark.anyio

WRONG: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x", [], [None], {}, {"a": []}]


def decide(info: PreToolCallInfo) -> Any:
    text = info.arguments.get("text")
    return Pause("look") if text == "p" else Ask("sure?") if text == "a" else Continue()


def echo_worker(**kw: Any) -> Worker:
    w = Worker(ScriptedClient([[Text("ok")]] * 3), tools=[echo], checkpoint_key=KEY, **kw)
    w.add_pre_tool_call_hook(decide)
    return w


async def saved() -> dict[str, Any]:
    turns: list[Any] = [
        [
            Text("three"),
            ToolUse("echo", {"text": "r", "n": [1, {"k": None}]}, call_id="r"),
            ToolUse("echo", {"text": "a"}, call_id="a"),
            ToolUse("echo", {"text": "p"}, call_id="p"),
            ToolUse("nosuch", {}, call_id="d"),
        ],
        [Text("ok")],
    ]
    w = Worker(ScriptedClient(turns), tools=[echo], system="s")
    w.add_pre_tool_call_hook(decide)
    paused = await w.run("go")
    assert isinstance(paused, Paused)
    data: dict[str, Any] = json.loads(paused.checkpoint.dumps(key=KEY))
    return data


def one_line(exc: pytest.ExceptionInfo[CheckpointError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith("checkpoint")
    return text


def test_a_200_mb_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.checkpoint.json"
    with big.open("wb") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: 200 MB long, nothing to read if the size check comes first
    with pytest.raises(CheckpointError, match=r"is 209715200 bytes, over the 67108864-byte limit; not read") as exc:
        Checkpoint.load(big)
    one_line(exc)


def test_200_mb_of_text_is_refused_before_it_is_parsed() -> None:
    text = b"[" + b" " * (200 * 1024 * 1024) + b"]"
    with pytest.raises(CheckpointError, match="over the 67108864-byte limit"):
        Checkpoint.loads(text)


async def test_the_limit_is_configurable(tmp_path: Path) -> None:
    data = await saved()
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    size = path.stat().st_size
    assert size < MAX_CHECKPOINT_BYTES
    with pytest.raises(CheckpointError, match=f"is {size} bytes, over the 100-byte limit"):
        Checkpoint.load(path, key=KEY, max_bytes=100)
    with pytest.raises(CheckpointError, match="over the 100-byte limit"):
        Checkpoint.loads(path.read_text(), key=KEY, max_bytes=100)
    assert Checkpoint.load(path, key=KEY, max_bytes=size).nonce == data["nonce"]


def test_100000_deep_json_is_a_checkpoint_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(CheckpointError, match="nested too deeply") as exc:
        Checkpoint.loads(deep)
    one_line(exc)
    inside = '{"version": 2, "options": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}"
    with pytest.raises(CheckpointError, match="nested too deeply"):
        Checkpoint.loads(inside)


def test_a_100000_deep_object_handed_to_from_json_is_a_checkpoint_error() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    with pytest.raises(CheckpointError, match=f"nested deeper than {MAX_DEPTH} levels"):
        Checkpoint.from_json({"version": 2, "options": {"x": value}})


async def test_nesting_just_past_the_limit_is_refused_even_with_a_valid_mac() -> None:
    data = await saved()
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH):
        deep = {"d": deep}
    data["options"] = {"deep": deep}
    with pytest.raises(CheckpointError, match="nested deeper"):
        Checkpoint.from_json(remac(data, KEY), key=KEY)
    data["options"] = {"deep": deep["d"]["d"]["d"]["d"]["d"]["d"]}  # within the limit: fine
    assert Checkpoint.from_json(remac(data, KEY), key=KEY).options["deep"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"\xff\xfe not utf-8", "not valid JSON"),
        ('{"version": NaN}', "NaN is not a JSON value"),
        ('{"version": Infinity}', "Infinity is not a JSON value"),
        ('{"version": ' + "9" * 5000 + "}", "not valid JSON"),
        ("", "not valid JSON"),
        ("null", "expected a JSON object, got NoneType"),
        ('"text"', "expected a JSON object, got str"),
        ('{"version": true}', "checkpoint.version: missing or not an integer"),
        ('{"version": 1, "digest": "abc"}', "unauthenticated checkpoint from an older hookloop"),
        ('{"version": 3}', "written by a newer hookloop"),
    ],
)
def test_text_that_is_no_checkpoint(text: str | bytes, message: str) -> None:
    with pytest.raises(CheckpointError, match=message) as exc:
        Checkpoint.loads(text)
    one_line(exc)


def test_something_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(CheckpointError, match=r"not a regular file|Is a directory"):
            Checkpoint.load(path)
    with pytest.raises(CheckpointError, match="No such file"):
        Checkpoint.load(tmp_path / "missing.json")


async def test_a_wrong_type_anywhere_even_with_a_valid_mac_is_a_checkpoint_error_or_harmless() -> None:
    data = await saved()
    refused: list[str] = []
    accepted = 0
    for path in paths(data):
        if not path or path[-1] in ("mac", "key_id"):
            continue
        for wrong in WRONG:
            changed = json.loads(json.dumps(data))
            if get(changed, path) == wrong:
                continue
            put(changed, path, wrong)
            forged = remac(changed, KEY)
            try:
                checkpoint = Checkpoint.from_json(forged, key=KEY)
            except CheckpointError as exc:
                refused.append(str(exc))
                continue
            accepted += 1
            decisions = {c.call_id: Reject("no") for c in checkpoint.pending}
            with contextlib.suppress(HookloopError, ValueError):  # refused cleanly, or a bad decision map
                await echo_worker().resume(checkpoint, decisions, fork=True)
    assert len(refused) > 400
    assert all("\n" not in m and m.startswith("checkpoint") for m in refused)
    assert accepted > 20  # texts, ids, metadata: any string or JSON value is as good as another there


async def test_batch_and_history_must_agree() -> None:
    data = await saved()
    cases: list[tuple[Any, str]] = [
        (lambda d: d["batch"][0].update(call_id="ghost"), "call 'ghost' is not in the history"),
        (lambda d: d["batch"][0].update(tool_name="Bash"), "tool_name: 'Bash', but the history's call is 'echo'"),
        (lambda d: d["batch"].append(dict(d["batch"][0])), "a call appears twice"),
        (lambda d: d["batch"][3].update(result=None), "a done call needs its result"),
        (lambda d: d["batch"][0].update(result=d["batch"][3]["result"]), "expected the tool_result item of call"),
        (lambda d: d.update(batch=[]), "a tool_calls pause cannot have 0 pending call"),
        (lambda d: d.update(pause_kind="turn_end"), "a turn_end pause cannot have 4 pending call"),
        (lambda d: d["history"].append(d["batch"][3]["result"]), "already answered in the history"),
        (lambda d: d["history"].insert(0, d["batch"][3]["result"]), "has no call before it"),
        (lambda d: d.update(turn=-1), "checkpoint.turn: expected a count"),
        (lambda d: d["usage"].update(input_tokens="9"), "checkpoint.usage.input_tokens: expected int"),
        (lambda d: d["usage"].update(extra=1), "checkpoint.usage: unknown field"),
        (lambda d: d.update(cache_prefix=99), "checkpoint.cache_prefix: 99 is outside the history"),
        (lambda d: d.update(nonce="../../etc/passwd"), "checkpoint.nonce: expected 32 lowercase hex digits"),
        (lambda d: d.update(surprise=1), "checkpoint: unknown field"),
        (lambda d: d["batch"][0].update(surprise=1), r"checkpoint.batch\[0\]: unknown field"),
        (lambda d: d.update(options=[]), "checkpoint.options: expected Mapping"),
    ]
    for mutate, message in cases:
        changed = json.loads(json.dumps(data))
        mutate(changed)
        with pytest.raises(CheckpointError, match=message):
            Checkpoint.from_json(remac(changed, KEY), key=KEY)


async def test_the_untouched_checkpoint_of_these_tests_resumes() -> None:
    data = await saved()
    w = echo_worker()
    outcome = await w.resume(data, {"a": Approve(), "p": Approve()}, key=KEY)
    assert isinstance(outcome, Finished)
    assert outcome.text == "ok"
