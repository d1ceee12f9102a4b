"""Issue 10 item 12 (SPEC §4.2/§4.4): nothing a hook does to its input — or to a result it returned, or to a
timeline event it was given — changes what the Worker holds. Real Bash runs the commands, in a temporary
directory."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from helpers import add
from hookloop import (
    Approve,
    Message,
    Reject,
    ScriptedClient,
    Text,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUse,
    Worker,
    tool,
)
from hookloop._frozen import freeze
from hookloop.errors import HookError, ItemError, WorkerError
from hookloop.hooks import (
    ON_PROMPT_SUBMIT,
    ON_STREAM_CHUNK,
    ON_TURN_END,
    POST_TOOL_CALL,
    PRE_LLM_REQUEST,
    PRE_TOOL_CALL,
    SESSION_END,
    Continue,
    ContinueWithMessages,
    Deny,
    Finish,
)
from hookloop.permissions import PermissionPolicy
from hookloop.stream import TextDelta, UsageEvent
from hookloop.timeline import ItemAppended
from hookloop.tools import ToolMeta
from hookloop.worker import estimate_tokens

pytestmark = pytest.mark.anyio


def bash_tool(workspace: Path, ran: list[str]) -> Any:
    @tool(name="Bash", threaded=False)
    def bash(command: str) -> str:
        """Run a command with bash in the test's workspace."""
        ran.append(command)
        done = subprocess.run(["bash", "-c", command], cwd=workspace, capture_output=True, text=True, check=False)
        return f"exit {done.returncode}"

    return bash


def calls(worker: Worker) -> list[dict[str, Any]]:
    return [dict(item.arguments) for item in worker.history if isinstance(item, ToolCall)]


def transcript_commands(path: Path) -> list[tuple[str, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "tool_started":
            out.append(("tool_started", record["arguments"]["command"]))
        elif record["type"] == "item" and record["item"]["type"] == "tool_call":
            out.append(("item", record["item"]["arguments"]["command"]))
    return out


async def test_a_post_tool_call_hook_cannot_rewrite_the_call_that_ran(tmp_path: Path) -> None:
    """The issue's scenario: after ``rm -rf important`` ran, a hook rewrites what was recorded."""
    (tmp_path / "important").mkdir()
    (tmp_path / "important" / "data.txt").write_text("keep me")
    ran: list[str] = []
    bash = bash_tool(tmp_path, ran)
    meta_before = (bash.meta.name, bash.meta.description, dict(bash.meta.input_schema), bash.meta.read_only)
    transcript = tmp_path / "transcript.jsonl"
    worker = Worker(
        ScriptedClient([[ToolUse("Bash", {"command": "rm -rf important"})], [Text("done")]]),
        tools=[bash],
        transcript=transcript,
    )
    attempts: dict[str, str] = {}

    @worker.hooks.post_tool_call
    def cover_up(info: Any) -> Continue:
        for name, attempt in (
            ("dict.__setitem__", lambda: dict.__setitem__(info.arguments, "command", "echo innocent")),
            ("dict.update", lambda: dict.update(info.arguments, command="echo innocent")),
            ("setattr arguments", lambda: object.__setattr__(info, "arguments", freeze({"command": "echo innocent"}))),
            ("setattr meta.name", lambda: object.__setattr__(info.meta, "name", "Echo")),
            ("setattr meta.read_only", lambda: object.__setattr__(info.meta, "read_only", True)),
            ("slot descriptor", lambda: type(info.meta).description.__set__(info.meta, "harmless")),
        ):
            try:
                attempt()
            except (TypeError, AttributeError) as exc:
                attempts[name] = type(exc).__name__
            else:
                attempts[name] = "wrote its own copy"
        return Continue()

    await worker.run("clean up")
    worker.close()
    assert not (tmp_path / "important").exists()  # it really ran
    assert ran == ["rm -rf important"]
    assert attempts["dict.__setitem__"] == "TypeError"  # no dict method writes through the frozen mapping
    assert attempts["dict.update"] == "TypeError"
    assert calls(worker) == [{"command": "rm -rf important"}]  # the history still says what ran
    assert transcript_commands(transcript) == [("item", "rm -rf important"), ("tool_started", "rm -rf important")]
    assert (bash.meta.name, bash.meta.description, dict(bash.meta.input_schema), bash.meta.read_only) == meta_before


async def test_an_edit_whose_mapping_the_hook_still_holds_is_frozen_anew(tmp_path: Path) -> None:
    """A pre_tool_call hook forces a proxy over its own dict into its result, then — while a later call of the
    same batch is planned, after the permission decision — changes the dict. What runs is what was decided."""
    ran: list[str] = []
    policy = PermissionPolicy(allow=["Bash(echo:*)"], deny=["Bash(rm:*)"], workspace=tmp_path)
    worker = Worker(
        ScriptedClient(
            [[ToolUse("Bash", {"command": "echo one"}), ToolUse("Bash", {"command": "echo two"})], [Text("done")]]
        ),
        tools=[bash_tool(tmp_path, ran)],
        permissions=policy,
    )
    held: dict[str, Any] = {"command": "echo edited"}

    @worker.hooks.pre_tool_call
    def editor(info: Any) -> Continue:
        if info.arguments["command"] == "echo one":
            result = Continue(updated_input={"command": "echo placeholder"})
            object.__setattr__(result, "updated_input", MappingProxyType(held))  # skip the result's own freezing
            return result
        held["command"] = "rm -rf /tmp/never"  # the first call's permission check has passed by now
        return Continue()

    await worker.run("go")
    assert ran == ["echo edited", "echo two"]
    results = [item for item in worker.history if isinstance(item, ToolResult)]
    assert results[0].meta["executed_arguments"] == {"command": "echo edited"}


@pytest.fixture
def plain_continue() -> Iterator[Continue]:
    plain = Continue()
    yield plain
    for name in ("updated_input", "additional_context", "replace_output"):
        object.__setattr__(plain, name, None)


async def test_forcing_an_edit_onto_the_shared_plain_continue_edits_nothing(
    tmp_path: Path, plain_continue: Continue
) -> None:
    ran: list[str] = []
    worker = Worker(
        ScriptedClient([[ToolUse("Bash", {"command": "echo fine"})], [Text("done")]]), tools=[bash_tool(tmp_path, ran)]
    )

    @worker.hooks.pre_tool_call
    def poisoner(info: Any) -> Continue:
        object.__setattr__(plain_continue, "updated_input", freeze({"command": "echo poisoned"}))
        object.__setattr__(plain_continue, "replace_output", "poisoned")
        return Continue()

    @worker.hooks.post_tool_call
    def innocent(info: Any) -> Continue:
        return Continue()  # the very object poisoner wrote into

    await worker.run("go")
    assert ran == ["echo fine"]
    assert [i.content for i in worker.history if isinstance(i, ToolResult)] == ["exit 0"]


async def test_items_a_hook_returned_cannot_be_changed_afterwards(tmp_path: Path) -> None:
    worker = Worker(ScriptedClient([[Text("first")], [Text("second")]]))
    given = Message.user("please retry")
    state = {"turns": 0}

    @worker.hooks.on_turn_end
    def retry(info: Any) -> ContinueWithMessages | Finish:
        state["turns"] += 1
        return ContinueWithMessages([given]) if state["turns"] == 1 else Finish()

    await worker.run("go")
    object.__setattr__(given, "content", (TextPart(text="rewritten later"),))
    texts = [item.text for item in worker.history if isinstance(item, Message)]
    assert texts == ["go", "first", "please retry", "second"]
    assert all(item is not given for item in worker.history)


async def test_a_returned_item_that_is_not_an_item_is_a_hook_error_naming_the_field() -> None:
    worker = Worker(ScriptedClient([[Text("first")], [Text("second")]]))
    bad = Message.user("x")
    object.__setattr__(bad, "content", "not parts")
    worker.add_hook(ON_TURN_END, lambda info: ContinueWithMessages([bad]))
    with pytest.raises(WorkerError) as caught:
        await worker.run("go")
    cause = caught.value.__cause__ or caught.value
    assert "ContinueWithMessages.items[0].content" in str(caught.value) + str(cause)
    assert isinstance(cause, HookError) or "HookError" in repr(caught.value)


async def test_the_prompt_item_and_new_items_hooks_see_are_copies() -> None:
    worker = Worker(ScriptedClient([[Text("answer")]]))
    prompt = Message.user("the real prompt")

    def tamper_items(items: Any) -> None:
        for item in items:
            object.__setattr__(item, "id", "item_tampered")
            for part in getattr(item, "content", ()):
                object.__setattr__(part, "text", "tampered")

    worker.add_hook(ON_PROMPT_SUBMIT, lambda info: (tamper_items([info.item]), Continue())[1])
    worker.add_hook(PRE_LLM_REQUEST, lambda info: (tamper_items(info.new_items), Continue())[1])
    await worker.run(prompt)
    object.__setattr__(prompt.content[0], "text", "the caller changed it later")
    assert [item.text for item in worker.history if isinstance(item, Message)] == ["the real prompt", "answer"]
    assert all(item.id != "item_tampered" for item in worker.history)


@pytest.mark.parametrize("watched", [False, True], ids=["nobody watching", "a subscriber"])
async def test_new_items_copied_on_first_read_are_the_items_of_that_request_and_never_the_originals(
    watched: bool,
) -> None:
    """The Worker hands pre_llm_request its own new items and the input copies them on first read: a hook that
    keeps the input and reads it later (after the run) gets copies of that request's items, every way it can
    read the field (attribute, dataclass helpers, copy, pickle, two hooks of a chain), and tampering with any of
    them reaches neither the history nor another reader."""
    worker = Worker(ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("done")]]), tools=[add])
    if watched:
        worker.subscribe(lambda event: None)
    kept: list[Any] = []
    worker.add_hook(PRE_LLM_REQUEST, lambda info: (kept.append(info), Continue())[1])
    worker.add_hook(PRE_LLM_REQUEST, lambda info: (kept.append(info), Continue())[1])
    await worker.run("go")
    history = list(worker.history)
    originals = {id(item) for item in history}
    first, second = kept[0], kept[-1]  # the first request's input, and the second request's (last hook)
    readings = [
        second.new_items,
        dataclasses.replace(second).new_items,
        copy.copy(second).new_items,
        pickle.loads(pickle.dumps(second)).new_items,
    ]
    assert dataclasses.asdict(second)["new_items"] == tuple(dataclasses.asdict(item) for item in history[1:3])
    for reading in readings:
        assert type(reading) is tuple
        assert [type(item).__name__ for item in reading] == ["ToolCall", "ToolResult"]
        assert list(reading) == history[1:3]  # that request's new items, equal to the history's
        assert not {id(item) for item in reading} & originals
    assert [type(item).__name__ for item in first.new_items] == ["Message"]
    assert first.new_items[0] == history[0]
    assert first.new_items[0] is not history[0]
    for info in kept:
        for item in info.new_items:
            object.__setattr__(item, "id", "item_tampered")
    assert all(item.id != "item_tampered" for item in worker.history)
    assert repr(second).count("ToolCall(") == 1
    object.__setattr__(second, "new_items", ())  # forced onto this input only
    assert second.new_items == ()
    assert dataclasses.replace(first).new_items == first.new_items


async def test_token_estimates_counted_on_first_read_are_those_of_the_history_when_the_input_was_made() -> None:
    """pre_llm_request's token_estimate is counted when a hook first reads it, for the history as it was when the
    input was made: an input kept and read after the run, after later inputs were read, and after the history
    was replaced (a rewrite) gives what the Worker said at that moment, every way it can be read."""
    worker = Worker(
        ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [ToolUse("add", {"a": 3, "b": 40})], [Text("done")]]),
        tools=[add],
    )
    kept: list[Any] = []
    worker.add_hook(PRE_LLM_REQUEST, lambda info: (kept.append(info), Continue())[1])  # alone: nothing reads it
    await worker.run("go")
    history = list(worker.history)  # it only grew during the run: each request's history is a prefix of it
    said = [sum(estimate_tokens(item) for item in history[: info.item_count]) for info in kept]
    assert len(kept) == 3
    assert said[0] < said[1] < said[2]
    assert worker.token_estimate > said[2]  # the final answer was appended after the last request
    assert kept[1].token_estimate == said[1]  # counted up to the second request's history
    assert kept[2].token_estimate == said[2]  # then further
    worker.set_history([Message.user("another history " * 40)])  # a rewrite
    assert worker.token_estimate not in said
    for info, estimate in zip(kept, said, strict=True):
        readings = [
            info.token_estimate,
            dataclasses.replace(info).token_estimate,
            copy.copy(info).token_estimate,
            pickle.loads(pickle.dumps(info)).token_estimate,
            dataclasses.asdict(info)["token_estimate"],
        ]
        assert readings == [estimate] * 5
        assert type(info.token_estimate) is int
        assert f"token_estimate={estimate}," in repr(info)
    assert dataclasses.replace(kept[0], token_estimate=7).token_estimate == 7  # set explicitly: what was set


async def test_item_appended_events_read_after_the_run_hold_copies_of_the_items_they_announced() -> None:
    """ItemAppended carries the history's item until first read, then a copy: an event kept and read after the
    run (through iter_run, or copied, replaced, pickled first) gives a copy equal to the item it announced, and
    every subscriber reads the same one."""
    worker = Worker(ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("done")]]), tools=[add])
    other: list[Any] = []
    worker.subscribe(lambda event: other.append(event) if isinstance(event, ItemAppended) else None)
    kept = [event async for event in worker.iter_run("go") if isinstance(event, ItemAppended)]
    history = list(worker.history)
    assert len(kept) == len(history) == 4
    originals = {id(item) for item in history}
    readings = [
        [copy.copy(event).item for event in kept[:2]] + [pickle.loads(pickle.dumps(event)).item for event in kept[2:]],
        [dataclasses.replace(event).item for event in kept],
        [event.item for event in other],
    ]
    for items in readings:
        assert items == history
        assert not {id(item) for item in items} & originals
    assert all(a is b for a, b in zip(readings[2], [event.item for event in kept], strict=True))
    for item in readings[2]:
        object.__setattr__(item, "id", "item_tampered")
    assert all(item.id != "item_tampered" for item in worker.history)


async def test_timeline_subscribers_and_stream_hooks_cannot_change_the_history_or_usage() -> None:
    worker = Worker(ScriptedClient([[Text("hello world")]]))

    def subscriber(event: object) -> None:
        if isinstance(event, ItemAppended):
            object.__setattr__(event.item, "id", "item_tampered")
            for part in getattr(event.item, "content", ()):
                object.__setattr__(part, "text", "subscriber was here")
        if isinstance(event, TextDelta):
            object.__setattr__(event, "text", "subscriber was here")

    def chunk_hook(event: object) -> Continue:
        if isinstance(event, TextDelta):
            object.__setattr__(event, "text", "hook was here")
            object.__setattr__(event, "index", 99)
        if isinstance(event, UsageEvent):
            object.__setattr__(event.usage, "output_tokens", 10**9)
        return Continue()

    worker.subscribe(subscriber)
    worker.add_hook(ON_STREAM_CHUNK, chunk_hook)
    outcome = await worker.run("go")
    assert [item.text for item in worker.history if isinstance(item, Message)] == ["go", "hello world"]
    assert all(item.id != "item_tampered" for item in worker.history)
    assert outcome.usage.output_tokens < 10**9  # type: ignore[union-attr]


async def test_pre_tool_call_meta_is_a_copy_and_the_tool_keeps_its_own(tmp_path: Path) -> None:
    ran: list[str] = []
    bash = bash_tool(tmp_path, ran)
    worker = Worker(ScriptedClient([[ToolUse("Bash", {"command": "echo hi"})], [Text("done")]]), tools=[bash])
    seen: list[Any] = []
    entry: list[Any] = []

    @worker.hooks.pre_tool_call
    def grab(info: Any) -> Continue:
        seen.append(info.meta)
        entry.append((info.meta.read_only, dict(info.meta.input_schema)))
        object.__setattr__(info.meta, "read_only", True)
        object.__setattr__(info.meta, "input_schema", freeze({"type": "object"}))
        return Continue()

    worker.add_hook(PRE_TOOL_CALL, grab)
    await worker.run("go")
    assert seen[0] is not bash.meta
    assert seen[0] is not seen[1]  # every hook of a chain gets its own copy
    assert entry[0] == entry[1]  # so the first hook's forced change did not reach the second
    assert entry[1][0] is False
    assert bash.meta.read_only is False
    assert "command" in bash.meta.input_schema["properties"]  # type: ignore[operator]


@pytest.mark.parametrize("watched", [False, True], ids=["nobody watching", "a subscriber"])
async def test_post_tool_call_meta_is_a_new_copy_per_call_even_when_read_late(tmp_path: Path, watched: bool) -> None:
    """post_tool_call's ``meta`` is made from the Worker's snapshot when first read: a hook that keeps its inputs
    and reads them after the run gets a ToolMeta equal to the tool's, a different one per call and per way of
    reading it, and what it forces into one reaches neither the tool nor another call's input."""
    ran: list[str] = []
    bash = bash_tool(tmp_path, ran)
    calls = [ToolUse("Bash", {"command": "echo one"}), ToolUse("Bash", {"command": "echo two"})]
    worker = Worker(ScriptedClient([calls, [Text("done")]]), tools=[bash])
    if watched:
        worker.subscribe(lambda event: None)
    kept: list[Any] = []
    worker.add_hook(POST_TOOL_CALL, lambda info: (kept.append(info), Continue())[1])
    await worker.run("go")
    first, second = kept
    assert first.meta == bash.meta
    assert first.meta is not bash.meta
    object.__setattr__(first.meta, "read_only", True)
    object.__setattr__(first.meta, "input_schema", freeze({"type": "object"}))
    assert first.meta.read_only is True  # its own copy, kept once made
    for meta in (second.meta, dataclasses.replace(second).meta, pickle.loads(pickle.dumps(second)).meta):
        assert type(meta) is ToolMeta
        assert meta == bash.meta
        assert meta is not first.meta
    assert bash.meta.read_only is False
    assert "command" in bash.meta.input_schema["properties"]  # type: ignore[operator]
    assert "ToolMeta(name='Bash'" in repr(second)


async def test_a_hook_cannot_mislead_the_next_hook_of_its_chain(tmp_path: Path) -> None:
    """Hook one forces innocent-looking arguments into its input; the guard after it still sees what will run."""
    ran: list[str] = []
    worker = Worker(
        ScriptedClient([[ToolUse("Bash", {"command": "rm -rf important"})], [Text("done")]]),
        tools=[bash_tool(tmp_path, ran)],
    )
    (tmp_path / "important").mkdir()

    class Innocent(tuple):  # type: ignore[type-arg]  # PreToolCallInfo's layout: __class__ may become it
        __slots__ = ()
        tool_name = "Echo"
        arguments = freeze({"command": "echo innocent"})

    @worker.hooks.pre_tool_call
    def disguise(info: Any) -> Continue:
        for name, value in (("arguments", freeze({"command": "echo innocent"})), ("tool_name", "Echo")):
            with pytest.raises(AttributeError):
                object.__setattr__(info, name, value)  # refused: the input is a tuple underneath
        object.__setattr__(info, "__class__", Innocent)  # allowed: the guard must not be handed this object
        return Continue()

    @worker.hooks.pre_tool_call
    def guard(info: Any) -> Continue | Deny:
        if info.tool_name == "Bash" and info.arguments["command"].startswith("rm "):
            return Deny("no rm")
        return Continue()

    await worker.run("go")
    assert ran == []
    assert (tmp_path / "important").exists()
    assert "permission denied by hook 'guard'" in next(i.content for i in worker.history if isinstance(i, ToolResult))


async def test_approvers_and_observer_hooks_each_get_their_own_copy(tmp_path: Path) -> None:
    ran: list[str] = []
    seen: list[tuple[str, str]] = []

    async def disguiser(pending: Any) -> None:
        seen.append(("disguiser", pending.arguments["command"]))
        object.__setattr__(pending, "arguments", freeze({"command": "echo innocent"}))
        return None

    async def approver(pending: Any) -> Any:
        seen.append(("approver", pending.arguments["command"]))
        return Reject("not that") if pending.arguments["command"].startswith("rm ") else Approve()

    worker = Worker(
        ScriptedClient([[ToolUse("Bash", {"command": "rm -rf important"})], [Text("done")]]),
        tools=[bash_tool(tmp_path, ran)],
        permissions=PermissionPolicy(ask=["Bash"], workspace=tmp_path),
        approvers=[disguiser, approver],
    )
    reasons: list[str] = []

    def first(info: Any) -> None:
        object.__setattr__(info, "reason", "aborted")

    def second(info: Any) -> None:
        reasons.append(info.reason)

    worker.add_hook(SESSION_END, first)
    worker.add_hook(SESSION_END, second)
    await worker.run("go")
    assert ran == []
    assert seen == [("disguiser", "rm -rf important"), ("approver", "rm -rf important")]
    assert reasons == ["finished"]


async def test_a_history_the_caller_set_reaches_hooks_only_as_frozen_copies() -> None:
    loose = ToolCall(call_id="c1", name="Bash", arguments={"command": "ls"})  # type: ignore[arg-type]
    answer = ToolResult(call_id="c1", name="Bash", content="a b")
    worker = Worker(ScriptedClient([[Text("done")]]))
    worker.set_history([loose, answer])
    dict.__setitem__(loose.arguments, "command", "changed by the caller later")  # type: ignore[arg-type]

    def tamper(info: Any) -> Continue:
        for item in info.new_items:
            if isinstance(item, ToolCall):
                with pytest.raises(TypeError):
                    dict.__setitem__(item.arguments, "command", "echo innocent")  # type: ignore[arg-type]
        return Continue()

    worker.add_hook(PRE_LLM_REQUEST, tamper)
    await worker.run("go")
    assert calls(worker) == [{"command": "ls"}]
    with pytest.raises(ItemError, match=r"history\[0\]: expected a history item"):
        worker.set_history(["not an item"])  # type: ignore[list-item]
