"""The shortcuts of the hot paths decide exactly as the general paths do.

- pre_tool_call hooks run inline at the call site when nobody watches the timeline (no dispatch coroutine),
  one hook or five; with a subscriber the same hooks go through ``run_chain``. Every kind of answer must have
  the same effect both ways: edits, votes, denials, skips, aborts, errors.
- ``json_size`` (the token estimate of tool-call arguments) is ``len(json.dumps(...))`` without serialising.
- Item ids come from a pool drawn ahead; they stay unique, also across a fork.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import add
from hookloop import Finished, HookError, Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop._frozen import freeze
from hookloop.errors import Aborted
from hookloop.hooks import (
    ON_TEXT_DELTA,
    POST_TOOL_CALL,
    PRE_TOOL_CALL,
    Abort,
    Allow,
    Ask,
    Continue,
    Deny,
    Pause,
    PreToolCallInfo,
    Skip,
    Stop,
)
from hookloop.items import Message
from hookloop.tools import ToolMeta
from hookloop.worker import json_size

pytestmark = pytest.mark.anyio

Hook = Callable[[PreToolCallInfo], Any]


def _as(hook: Hook, is_async: bool) -> Hook:
    if not is_async:
        return hook

    async def wrapped(info: PreToolCallInfo) -> Any:
        return hook(info)

    return wrapped


BEFORE: list[Hook] = [
    lambda info: Continue(),
    lambda info: Allow("fine"),
    lambda info: Continue(),
    lambda info: Continue(),
]
"""Hooks that pass on, ahead of the answering hook in the 5-hook chains."""


async def _run(hook: Hook, *, watched: bool, is_async: bool, before: int = 0) -> tuple[Worker, object, list[object]]:
    worker = Worker(ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("done")]]), tools=[add])
    for i, passing in enumerate(BEFORE[:before]):
        worker.add_hook(PRE_TOOL_CALL, _as(passing, is_async), name=f"passing {i}")
    worker.add_hook(PRE_TOOL_CALL, _as(hook, is_async), name="the hook")
    events: list[object] = []
    if watched:
        worker.subscribe(events.append)
    try:
        outcome: object = await worker.run("go")
    except Exception as exc:  # the error is part of what both paths must agree on
        outcome = exc
    return worker, outcome, events


def _summary(worker: Worker, outcome: object) -> tuple[object, ...]:
    results = [(r.content, r.is_error, dict(r.meta)) for r in worker.history if isinstance(r, ToolResult)]
    if isinstance(outcome, BaseException):
        return (type(outcome).__name__, str(outcome), results)
    if isinstance(outcome, Paused):
        return ("paused", [(p.state, p.reason, p.asked_by) for p in outcome.checkpoint.pending], results)
    assert isinstance(outcome, Finished)
    return ("finished", outcome.text, results)


ANSWERS: dict[str, Hook] = {
    "plain continue": lambda info: Continue(),
    "updated input": lambda info: Continue(updated_input={"a": 40, "b": 2}),
    "allow vote with input": lambda info: Allow("fine", updated_input={"a": 5, "b": 5}),
    "ask vote": lambda info: Ask("really?"),
    "deny": lambda info: Deny("no"),
    "skip": lambda info: Skip("not now"),
    "abort": lambda info: Abort("stop everything"),
    "wrong result": lambda info: None,
    "raises": lambda info: 1 / 0,
    "context not accepted": lambda info: Continue(additional_context="x"),
}


@pytest.mark.parametrize("before", [0, 4], ids=["1 hook", "5 hooks"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_a_hook_decides_the_same_inline_and_through_the_chain(answer: str, is_async: bool, before: int) -> None:
    """The inline chain (nobody watching) and run_chain (a subscriber) agree, for a lone hook and for the last
    of five."""
    inline_worker, inline, _ = await _run(ANSWERS[answer], watched=False, is_async=is_async, before=before)
    chain_worker, chained, events = await _run(ANSWERS[answer], watched=True, is_async=is_async, before=before)
    assert _summary(inline_worker, inline) == _summary(chain_worker, chained)
    if answer != "raises":  # the watched run did take the chain (which reports every answer)
        assert any(type(e).__name__ == "HookDecision" for e in events)
    if answer in ("wrong result", "raises", "context not accepted"):
        assert isinstance(inline, HookError)
        assert "the hook" in str(inline)
    if answer == "abort":
        assert isinstance(inline, Aborted)
    if answer == "updated input":
        assert _summary(inline_worker, inline)[2][0][0] == "42"
    if answer == "raises":  # the hook's own error is the HookError's cause, however the hook was awaited
        assert isinstance(inline.__cause__, ZeroDivisionError)


POST_ANSWERS: dict[str, Hook] = {
    "plain continue": lambda info: Continue(),
    "replace output": lambda info: Continue(replace_output=f"replaced {info.content}"),
    "context": lambda info: Continue(additional_context=f"about {info.tool_name}"),
    "replace and context": lambda info: Continue(replace_output="r", additional_context="c"),
    "stop": lambda info: Stop("enough"),
    "abort": lambda info: Abort("stop everything"),
    "wrong result": lambda info: None,
    "raises": lambda info: 1 / 0,
    "not a post_tool_call answer": lambda info: Deny("no"),
}


@pytest.mark.parametrize("answer", list(POST_ANSWERS))
async def test_a_post_tool_call_hook_decides_the_same_on_every_path(answer: str) -> None:
    """A lone sync post_tool_call hook runs with no coroutine; async, it runs in the batch's coroutine; with a
    subscriber, through run_chain. Every kind of answer has the same effect on all three: the results, the run's
    end, the error."""
    summaries = []
    for is_async, watched in ((False, False), (True, False), (False, True)):
        worker = Worker(
            ScriptedClient([[ToolUse("add", {"a": 1, "b": 2}), ToolUse("add", {"a": 3, "b": 4})], [Text("done")]]),
            tools=[add],
        )
        worker.add_hook(POST_TOOL_CALL, _as(POST_ANSWERS[answer], is_async), name="the hook")
        if watched:
            worker.subscribe(lambda event: None)
        try:
            outcome: object = await worker.run("go")
        except Exception as exc:
            outcome = exc
        summaries.append(_summary(worker, outcome))
    assert summaries[0] == summaries[1] == summaries[2]
    if answer in ("wrong result", "raises", "not a post_tool_call answer"):
        assert summaries[0][0] == "HookError"
        assert "the hook" in str(summaries[0][1])
    if answer == "replace output":
        assert [content for content, _, _ in summaries[0][2]] == ["replaced 3", "replaced 7"]
    if answer == "stop":
        assert summaries[0][0] == "finished"
        assert len(summaries[0][2]) == 2  # both calls answered, then the run finished


async def test_a_lone_async_hook_answers_for_each_call_of_a_reply_in_turn() -> None:
    """One async hook, nobody watching: the batch awaits the hook's own coroutine for each call (no coroutine of
    the Worker's around it) and concludes each call with that call's answer before the next call is planned."""
    seen: list[tuple[str, int]] = []

    async def guard(info: PreToolCallInfo) -> Continue | Deny:
        seen.append((info.call_id, int(info.arguments["a"])))
        return Deny("odd") if int(info.arguments["a"]) % 2 else Continue(updated_input={"a": 10, "b": 0})

    calls = [ToolUse("add", {"a": a, "b": 1}, call_id=f"c{a}") for a in (1, 2, 3, 4)]
    worker = Worker(ScriptedClient([calls, [Text("done")]]), tools=[add])
    worker.add_hook(PRE_TOOL_CALL, guard, name="guard")
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert seen == [("c1", 1), ("c2", 2), ("c3", 3), ("c4", 4)]
    results = [r for r in worker.history if isinstance(r, ToolResult)]
    assert [(r.call_id, r.is_error) for r in results] == [("c1", True), ("c2", False), ("c3", True), ("c4", False)]
    assert "permission denied by hook 'guard': odd" in results[0].content
    assert [r.content for r in results if not r.is_error] == ["10", "10"]


@pytest.mark.parametrize("event", [PRE_TOOL_CALL, POST_TOOL_CALL], ids=["pre_tool_call", "post_tool_call"])
async def test_cancelling_a_run_while_its_lone_async_hook_waits_keeps_one_result_per_call(event: Any) -> None:
    """A cancel that lands while a lone async pre_tool_call / post_tool_call hook is awaited (the batch awaits the
    hook's own coroutine) ends the run; every call of the batch has its one result in the history: failed as
    cancelled before it ran, or the result it ran to."""
    entered = asyncio.Event()

    async def waits(info: Any) -> Continue:
        entered.set()
        await asyncio.Event().wait()  # never set: only the cancel ends it
        return Continue()

    calls = [ToolUse("add", {"a": 1, "b": 1}, call_id="c1"), ToolUse("add", {"a": 2, "b": 2}, call_id="c2")]
    worker = Worker(ScriptedClient([calls, [Text("done")]]), tools=[add])
    worker.add_hook(event, waits, name="waits")
    task = asyncio.ensure_future(worker.run("go"))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = [r for r in worker.history if isinstance(r, ToolResult)]
    if event is PRE_TOOL_CALL:
        assert [(r.call_id, r.is_error) for r in results] == [("c1", True), ("c2", True)]
        assert all("cancelled" in r.content for r in results)
    else:
        assert [(r.call_id, r.content) for r in results] == [("c1", "2"), ("c2", "4")]


async def test_the_inline_hook_gets_a_private_input_every_call() -> None:
    """What a lone hook forces into its input (meta included) reaches neither the call nor the next call."""
    seen: list[tuple[str, str]] = []

    def vandal(info: PreToolCallInfo) -> Continue:
        seen.append((info.meta.name, info.meta.description))
        object.__setattr__(info.meta, "name", "forged")
        object.__setattr__(info.meta, "description", "forged")
        with pytest.raises(AttributeError):
            object.__setattr__(info, "tool_name", "forged")  # the input itself refuses it (a tuple)
        return Continue()

    worker = Worker(
        ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [ToolUse("add", {"a": 3, "b": 4})], [Text("ok")]]),
        tools=[add],
    )
    worker.add_pre_tool_call_hook(vandal)
    await worker.run("go")
    assert [r.content for r in worker.history if isinstance(r, ToolResult)] == ["3", "7"]
    assert seen == [(add.meta.name, add.meta.description)] * 2
    assert add.meta.name == "add"


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters='"\\')),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters='"\\')),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(JSON)
def test_json_size_is_the_length_of_the_json_text(value: object) -> None:
    assert json_size(freeze(value)) == len(json.dumps(value))


def test_json_size_stays_close_when_there_is_something_to_escape() -> None:
    value = {"path": 'C:\\dir\\"quoted"', "text": "héllo ✓"}
    assert abs(json_size(freeze(value)) - len(json.dumps(value, ensure_ascii=False))) <= 4


def test_item_ids_are_unique_and_a_forked_child_draws_its_own() -> None:
    ids = {Message.user(str(i)).id for i in range(2000)}
    assert len(ids) == 2000
    assert all(i.startswith("item_") and len(i) == 29 for i in ids)
    Message.user("leave ids in the pool")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.write(write, "\n".join(Message.user("child").id for _ in range(300)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_ids = set(pipe.read().split("\n"))
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 0
    parent_ids = {Message.user("parent").id for _ in range(300)}
    assert len(child_ids) == 300
    assert not child_ids & parent_ids
    assert not child_ids & ids


async def test_each_hook_of_a_chain_gets_its_own_input_even_from_a_vandal_that_keeps_it() -> None:
    """A hook that forces changes into its input — at once and later, while the next hook awaits — misleads
    neither the next hooks of the chain nor the call."""
    kept: list[PreToolCallInfo] = []
    seen: list[tuple[str, str, str, object]] = []

    class Forged(tuple):  # type: ignore[type-arg]  # PreToolCallInfo's layout: __class__ may become it
        __slots__ = ()
        tool_name = call_id = "forged"
        meta = ToolMeta(name="forged", description="forged", input_schema=freeze({}))

    def vandal(info: PreToolCallInfo) -> Continue:
        with pytest.raises(AttributeError):
            object.__setattr__(info, "tool_name", "forged")  # refused: a tuple's items never change
        object.__setattr__(info.meta, "name", "forged")  # a copy of its own
        object.__setattr__(info, "__class__", Forged)  # what CPython does allow
        kept.append(info)
        return Continue()

    async def watcher(info: PreToolCallInfo) -> Continue:
        for old in kept:  # the earlier hook's input changes again while this one runs
            object.__setattr__(old, "__class__", PreToolCallInfo)
            object.__setattr__(old, "__class__", Forged)
        seen.append((info.tool_name, info.meta.name, info.meta.description, info.call_id))
        return Continue()

    worker = Worker(ScriptedClient([[ToolUse("add", {"a": 1, "b": 2})], [Text("ok")]]), tools=[add])
    for hook in (vandal, watcher, vandal, watcher):
        worker.add_pre_tool_call_hook(hook)
    await worker.run("go")
    call_id = next(r.call_id for r in worker.history if isinstance(r, ToolResult))
    assert seen == [("add", "add", add.meta.description, call_id)] * 2
    assert [r.content for r in worker.history if isinstance(r, ToolResult)] == ["3"]
    assert len({id(info) for info in kept}) == 2


TEXT_ANSWERS: dict[str, Callable[[Any], Any]] = {
    "continue": lambda delta: Continue(),
    "abort on the third delta": lambda delta: Abort("enough") if "third" in delta.text else Continue(),
    "pause": lambda delta: Pause("wait"),
    "wrong result": lambda delta: None,
    "raises": lambda delta: 1 / 0,
}


async def _stream(answer: str, *, watched: bool, via_dispatch: bool = False) -> tuple[object, ...]:
    """Three sync on_text_delta hooks (the last one answers) on a reply of several text blocks and a tool call;
    ``via_dispatch`` adds a fourth, async, hook after them, so the chain goes through ``dispatch``."""
    client = ScriptedClient(
        [[Text("first second third fourth"), ToolUse("add", {"a": 1, "b": 2}), Text("more")], [Text("done")]],
        chunk_size=6,
    )
    worker = Worker(client, tools=[add])
    seen: list[tuple[str, int, str]] = []
    for name in ("one", "two"):
        worker.add_hook(
            ON_TEXT_DELTA,
            lambda delta, name=name: seen.append((name, delta.index, delta.text)) or Continue(),
            name=name,
        )
    worker.add_hook(ON_TEXT_DELTA, TEXT_ANSWERS[answer], name="the hook")
    if via_dispatch:

        async def last(delta: Any) -> Continue:
            return Continue()

        worker.add_hook(ON_TEXT_DELTA, last, name="last")
    if watched:
        worker.subscribe(lambda event: None)
    try:
        outcome: object = await worker.run("go")
    except Exception as exc:
        outcome = exc
    texts = [i.text for i in worker.history if isinstance(i, Message)]
    if isinstance(outcome, BaseException):
        return (type(outcome).__name__, str(outcome), seen, texts)
    assert isinstance(outcome, Finished)
    return ("finished", outcome.text, seen, texts)


@pytest.mark.parametrize("answer", list(TEXT_ANSWERS))
async def test_text_delta_hooks_decide_the_same_on_the_fast_stream_loop(answer: str) -> None:
    """Sync text hooks with nobody watching take their own stream loop; a subscriber sends the same hooks
    through the general loop. Same deltas seen, same order, same decisions and errors, same history."""
    fast, general = await _stream(answer, watched=False), await _stream(answer, watched=True)
    assert fast == general
    # and both inline loops decide as the dispatch function does
    assert fast == await _stream(answer, watched=False, via_dispatch=True)
    assert fast == await _stream(answer, watched=True, via_dispatch=True)
    if answer == "continue":
        assert fast[0] == "finished"
        assert fast[3][-1] == "done"
    else:
        assert fast[0] in ("Aborted", "HookError")
