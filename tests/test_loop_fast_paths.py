"""The shortcuts of a plain loop turn build exactly what the general paths build.

- Items, requests and tool contexts built on the hot path (``hookloop._build``) equal their constructors'.
- Tool-call arguments: ``freeze_parsed`` (wrapping what ``json.loads`` made) equals ``freeze_object``
  (copying it), and the parser's one-value scan reads (or refuses) every text as ``json.loads`` does.
- The stream loop with nobody listening records every event as the general loop does: same items, same
  errors, same event count.
- A call planned with no pre_tool_call interceptor or hook (``_plan``, no coroutine) ends as ``_plan_call`` leaves it.
- A request with nothing to run before it (``_plain_request``) is the request ``_request`` builds, and the
  notification injector still injects (and notification hooks still hear) whatever is pushed.
- ``FunctionTool.validate`` (pydantic on a dict copy) answers as ``model_validate`` on the frozen arguments.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import fields
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import add, echo, shape
from hookloop import Finished, ScriptedClient, Text, ToolContext, ToolUse, Worker, tool
from hookloop._batch import _Call
from hookloop._build import (
    hook_decision,
    item_appended,
    llm_request,
    model_request_ended,
    model_request_started,
    post_tool_call_info,
    pre_llm_request_info,
    text_message,
    tool_call,
    tool_context,
    tool_ended,
    tool_result,
    tool_started,
    usage_sum,
)
from hookloop._frozen import EMPTY, freeze_object, freeze_parsed, thaw
from hookloop._loop import _Run
from hookloop._stream import _Block, _parse_call
from hookloop.errors import ClientError
from hookloop.hooks import NOTIFICATION, ON_STREAM_CHUNK, ON_STREAM_COMPLETE, PRE_LLM_REQUEST, Continue
from hookloop.hooks.summaries import PostToolCallInfo, PreLlmRequestInfo
from hookloop.items import Message, TextPart, ToolCall, ToolResult
from hookloop.permissions import PermissionPolicy
from hookloop.providers.base import LLMRequest, ToolSpec
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from hookloop.timeline import (
    HookDecision,
    ItemAppended,
    ModelRequestEnded,
    ModelRequestStarted,
    ToolEnded,
    ToolStarted,
)
from hookloop.tools._base import format_validation_error

pytestmark = pytest.mark.anyio

ITEM_ID = re.compile(r"item_[0-9a-f]{24}")


# -- builders ------------------------------------------------------------------------------------------------


def test_each_builder_equals_its_constructor() -> None:
    meta = freeze_object({"source": "provider", "nested": [1, {"a": None}]})
    args = freeze_object({"x": 1, "y": ["z"]})

    call = tool_call("c1", "noop", args, None, meta)
    assert type(call) is ToolCall
    assert ITEM_ID.fullmatch(call.id)
    assert call == ToolCall(call_id="c1", name="noop", arguments=args, raw_arguments=None, id=call.id, meta=meta)
    bad = tool_call("c2", "noop", EMPTY, "{not json", EMPTY)
    assert bad == ToolCall(call_id="c2", name="noop", raw_arguments="{not json", id=bad.id)

    parts = (TextPart(text="a"),)
    result = tool_result("c1", "noop", "ok", True, meta, parts)
    assert type(result) is ToolResult
    assert ITEM_ID.fullmatch(result.id)
    assert result == ToolResult(
        call_id="c1", name="noop", content="ok", is_error=True, id=result.id, meta=meta, parts=parts
    )
    plain = tool_result("c3", "noop", "fine", False, EMPTY, ())
    assert plain == ToolResult(call_id="c3", name="noop", content="fine", id=plain.id)

    message = text_message("assistant", "hello", meta)
    assert type(message) is Message
    assert message == Message(role="assistant", content=(TextPart(text="hello"),), id=message.id, meta=meta)
    assert type(message.content[0]) is TextPart
    assert (
        message.to_json()
        == Message(role="assistant", content=(TextPart(text="hello"),), id=message.id, meta=meta).to_json()
    )

    ids = {call.id, bad.id, result.id, plain.id, message.id}
    assert len(ids) == 5  # fresh ids from the one pool

    def emit(event: Any) -> None:
        return None

    ctx = tool_context("run_1", "sess", "c1", "noop", 3, Path("/tmp"), None, emit)
    assert type(ctx) is ToolContext
    assert ctx == ToolContext(
        run_id="run_1", session_id="sess", call_id="c1", tool_name="noop", turn=3, workspace=Path("/tmp"), emit=emit
    )
    assert ctx.idempotency_key == "run_1:c1"

    assert item_appended(call) == ItemAppended(item=call)
    usage = Usage(input_tokens=3)
    total = usage_sum(Usage(1, 2, 3, 4), Usage(10, 20, 30, 40))
    assert type(total) is Usage
    assert total == Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40)
    assert model_request_started("r", 2, None, "p") == ModelRequestStarted(run_id="r", turn=2, model=None, provider="p")
    assert model_request_ended("r", 2, usage, "end_turn", None) == ModelRequestEnded(
        run_id="r", turn=2, usage=usage, stop_reason="end_turn"
    )
    assert tool_started("c1", "noop", args) == ToolStarted(call_id="c1", tool_name="noop", arguments=args)
    assert tool_ended("c1", "noop", True, 0.5) == ToolEnded(call_id="c1", tool_name="noop", is_error=True, seconds=0.5)
    decided = hook_decision("pre_tool_call", "guard", "python", "deny", "no", 0.25, "c1")
    assert type(decided) is HookDecision
    assert decided == HookDecision(
        event="pre_tool_call", hook="guard", source="python", decision="deny", reason="no", seconds=0.25, call_id="c1"
    )

    tool_meta = add.meta
    post = post_tool_call_info("r", "s", 2, "c1", "add", args, tool_meta, "3", False, 0.25, None, "a1", "explore")
    assert type(post) is PostToolCallInfo
    assert post == PostToolCallInfo(
        run_id="r",
        session_id="s",
        turn=2,
        call_id="c1",
        tool_name="add",
        arguments=args,
        meta=tool_meta,
        content="3",
        is_error=False,
        seconds=0.25,
        structured=None,
        agent_id="a1",
        agent_type="explore",
    )
    pre = pre_llm_request_info("r", "s", 2, None, 5, 40, (call,))
    assert type(pre) is PreLlmRequestInfo
    assert pre == PreLlmRequestInfo(
        run_id="r", session_id="s", turn=2, model=None, item_count=5, token_estimate=40, new_items=(call,)
    )
    with pytest.raises(AttributeError):  # still frozen
        object.__getattribute__(pre, "__setattr__")("turn", 3)

    spec = ToolSpec(name="noop", description="", input_schema=EMPTY)
    history: Sequence[Any] = ()
    request = llm_request("system", history, (spec,), "m", 100, 2, 7, "run_1")
    assert type(request) is LLMRequest
    assert request == LLMRequest(
        system="system", items=history, tools=(spec,), model="m", max_tokens=100, cache_prefix=2, turn=7, run_id="run_1"
    )


def test_builders_set_every_field() -> None:
    """A field added to one of these classes must be added to its builder (equality reads every field)."""
    built: list[Any] = [
        tool_call("c", "n", EMPTY, None, EMPTY),
        tool_result("c", "n", "", False, EMPTY, ()),
        text_message("user", "x", EMPTY),
        tool_context("r", "s", "c", "n", 1, None, None, None),
        llm_request(None, (), (), None, None, 0, 1, "r"),
        item_appended(text_message("user", "x", EMPTY)),
        tool_started("c", "n", EMPTY),
        tool_ended("c", "n", False, 0.0),
        hook_decision("e", "h", "s", "continue", None, 0.0, None),
        model_request_started("r", 1, None, "p"),
        model_request_ended("r", 1, None, None, "boom"),
        post_tool_call_info("r", "s", 1, "c", "n", EMPTY, add.meta, "", False, 0.0, None, None, None),
        pre_llm_request_info("r", "s", 1, None, 0, 0, ()),
        usage_sum(Usage(), Usage()),
    ]
    for obj in built:
        for f in fields(obj):
            getattr(obj, f.name)  # an unset slot raises AttributeError


# -- tool-call arguments -----------------------------------------------------------------------------------------

_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_json = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


def _shape_of(value: object) -> object:
    """The value with its exact container and leaf types (== alone says True for 1 == 1.0 == True)."""
    if isinstance(value, MappingProxyType):
        return ("frozen", [(k, type(k), _shape_of(v)) for k, v in value.items()])
    if isinstance(value, tuple):
        return ("tuple", [_shape_of(v) for v in value])
    return (type(value), value)


@given(st.dictionaries(st.text(max_size=6), _json, max_size=5))
def test_freeze_parsed_is_freeze_object(value: dict[str, Any]) -> None:
    text = json.dumps(value)
    wrapped, copied = freeze_parsed(json.loads(text)), freeze_object(json.loads(text))
    assert wrapped == copied
    assert _shape_of(wrapped) == _shape_of(copied)


def _reference_call(parts: list[str], call_id: str | None, name: str | None, index: int) -> ToolCall:
    """How tool-call arguments were read before the shortcut: json.loads, then freeze_object."""
    raw = "".join(parts)
    cid, nm = call_id or f"call_{index}", name or ""
    if not raw.strip():
        return ToolCall(call_id=cid, name=nm)
    try:
        value = json.loads(raw)
    except ValueError:
        return ToolCall(call_id=cid, name=nm, raw_arguments=raw)
    if not isinstance(value, dict):
        return ToolCall(call_id=cid, name=nm, raw_arguments=raw)
    return ToolCall(call_id=cid, name=nm, arguments=freeze_object(value))


_texts = st.one_of(
    st.builds(json.dumps, st.dictionaries(st.text(max_size=5), _json, max_size=4)),
    st.builds(lambda v: json.dumps(v, indent=2), st.dictionaries(st.text(max_size=5), _json, max_size=3)),
    st.builds(json.dumps, _json),  # any value: arrays, strings, numbers are not objects
    st.builds(
        lambda a, t, b: a + t + b,
        st.sampled_from(["", " ", "\n", "\t", "\ufeff"]),
        st.builds(json.dumps, st.dictionaries(st.text(max_size=3), _leaves, max_size=3)),
        st.sampled_from(["", " ", "\n", "x", "}", " {}", ",", "\x00"]),
    ),
    st.sampled_from(
        [
            '{"a": NaN}',
            '{"a": Infinity}',
            '{"a": 1, "a": 2}',
            '{"a": 1',
            '{"a" 1}',
            "{}",
            "[]",
            "",
            "  ",
            '{"a": "\\ud800"}',
            '{"a": 1}{"b": 2}',
            "nul",
            "-",
            '{"a": 1e400}',
            '{"\\u0041": 1}',
        ]
    ),
    st.text(max_size=12),
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    _texts,
    st.lists(st.integers(0, 40), max_size=3),
    st.sampled_from([None, "", "call_x"]),
    st.sampled_from([None, "", "t"]),
)
def test_the_argument_parser_reads_every_text_as_json_loads(
    text: str, cuts: list[int], call_id: str | None, name: str | None
) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    parts = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    block = _Block("tool_call", call_id, name)
    block.parts.extend(parts)
    got, want = _parse_call(block, 3), _reference_call(parts, call_id, name, 3)
    assert (got.call_id, got.name, got.raw_arguments, got.meta) == (
        want.call_id,
        want.name,
        want.raw_arguments,
        want.meta,
    )
    assert _shape_of(got.arguments) == _shape_of(want.arguments)
    assert type(got) is ToolCall
    assert ITEM_ID.fullmatch(got.id)


def test_the_parser_keeps_the_block_meta() -> None:
    meta = freeze_object({"item_id": "fc_1"})
    block = _Block("tool_call", "c", "t", meta)
    block.parts.append('{"x": 1}')
    assert _parse_call(block, 0).meta is meta
    bare = _Block("tool_call", "c", "t", MappingProxyType({}))  # an empty meta of the provider's own
    bare.parts.append('{"x": 1}')
    assert _parse_call(bare, 0).meta is EMPTY


# -- the stream loop -------------------------------------------------------------------------------------------


class _Events:
    """A client that plays one list of events per request."""

    provider = "test"

    def __init__(self, events: list[StreamEvent]) -> None:
        self.events = events

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        for event in self.events:
            yield event


_index = st.integers(0, 2)
_events = st.lists(
    st.one_of(
        st.builds(
            BlockStart,
            _index,
            st.sampled_from(["text", "tool_call", "thinking"]),
            st.sampled_from([None, "call_1"]),
            st.sampled_from([None, "noop"]),
            st.sampled_from([EMPTY, freeze_object({"k": "v"})]),
        ),
        st.builds(TextDelta, _index, st.sampled_from(["a", "bc", ""])),
        st.builds(ToolCallDelta, _index, st.sampled_from(['{"x"', ": 1}", "{}", " "])),
        st.builds(ThinkingDelta, _index, st.sampled_from(["", "hm"]), st.sampled_from([None, "sig"])),
        st.builds(NativeBlock, _index, st.just("test"), st.just(freeze_object({"type": "x"}))),
        st.builds(BlockStop, _index),
        st.builds(UsageEvent, st.builds(Usage, st.integers(0, 9), st.integers(0, 9))),
        st.builds(StopEvent, st.sampled_from(["end_turn", "tool_use"])),
    ),
    max_size=14,
)


async def _model_step(events: list[StreamEvent], *, watched: bool, hooked: bool) -> tuple[object, ...]:
    worker = Worker(_Events(events))
    counted: list[int] = []
    seen: list[object] = []
    worker.add_hook(ON_STREAM_COMPLETE, lambda info: counted.append(info.event_count) or Continue())
    if hooked:  # a chunk hook sends every event through the general loop
        worker.add_hook(ON_STREAM_CHUNK, lambda event: Continue())
    if watched:
        worker.subscribe(seen.append)
    run = _Run(worker, "run_x")
    try:
        items, calls = await run._run_model_step(run._plain_request())
    except ClientError as exc:
        return ("error", str(exc), seen)
    return (shape(items), [c.call_id for c in calls], run.last_text, run.stop_reason, run.usage, counted, seen)


@settings(max_examples=300, deadline=None)
@given(_events)
def test_the_stream_loops_without_hooks_record_what_the_general_loop_records(events: list[StreamEvent]) -> None:
    unwatched = asyncio.run(_model_step(events, watched=False, hooked=False))
    assert unwatched == asyncio.run(_model_step(events, watched=False, hooked=True))
    watched = asyncio.run(_model_step(events, watched=True, hooked=False))
    assert watched == asyncio.run(_model_step(events, watched=True, hooked=True))  # and the same events emitted


async def test_a_stream_that_is_not_a_generator_is_still_closed() -> None:
    closed: list[bool] = []

    class Stream:
        def __init__(self) -> None:
            self.events = iter([BlockStart(0, "text"), TextDelta(0, "hi"), StopEvent("end_turn")])

        def __aiter__(self) -> Stream:
            return self

        async def __anext__(self) -> StreamEvent:
            try:
                return next(self.events)
            except StopIteration:
                raise StopAsyncIteration from None

        async def aclose(self) -> None:
            closed.append(True)

    class Client:
        provider = "test"

        def stream(self, request: LLMRequest) -> Stream:
            return Stream()

    outcome = await Worker(Client()).run("go")  # type: ignore[arg-type]
    assert isinstance(outcome, Finished)
    assert outcome.text == "hi"
    assert closed == [True]


# -- planning a call ---------------------------------------------------------------------------------------------


@tool(name="Bash")
async def bash(command: str) -> str:
    """Pretend to run a command."""
    return command


_CALLS = [
    ToolCall(call_id="u", name="missing", arguments=freeze_object({})),
    ToolCall(call_id="r", name="add", raw_arguments="{oops"),
    ToolCall(call_id="m", name="add", arguments=freeze_object({"a": 1})),
    ToolCall(call_id="t", name="add", arguments=freeze_object({"a": "x", "b": 2})),
    ToolCall(call_id="e", name="add", arguments=freeze_object({"a": 1, "b": 2, "c": 3})),
    ToolCall(call_id="ok", name="add", arguments=freeze_object({"a": 1, "b": 2})),
    ToolCall(call_id="d", name="Bash", arguments=freeze_object({"command": "rm -rf build"})),
    ToolCall(call_id="q", name="Bash", arguments=freeze_object({"command": "git push"})),
    ToolCall(call_id="y", name="Bash", arguments=freeze_object({"command": "ls"})),
]


def _planned(c: _Call) -> tuple[object, ...]:
    result = None if c.result is None else (c.result.content, c.result.is_error, c.result.meta)
    return (c.state, c.reason, c.asked_by, c.denied, c.args, c.validated, c.input_edited_by, result)


@pytest.mark.parametrize(
    "policy", [None, PermissionPolicy(deny=["Bash(rm:*)"], ask=["Bash(git push:*)"], allow=["Bash(ls)"])]
)
@pytest.mark.parametrize("call", _CALLS, ids=[c.call_id for c in _CALLS])
async def test_planning_without_hooks_ends_as_the_general_planning(call: ToolCall, policy: Any) -> None:
    worker = Worker(ScriptedClient([[Text("-")]]), tools=[add, echo, bash], permissions=policy)
    run = _Run(worker, "run_x")
    general, plain = _Call(call, worker._tools.get(call.name)), _Call(call, worker._tools.get(call.name))
    await run._plan_call(general)
    assert run._plan(plain) is None  # planned at once: nothing to await
    assert _planned(plain) == _planned(general)


# -- the request -------------------------------------------------------------------------------------------------


async def test_the_plain_request_is_the_general_request() -> None:
    worker = Worker(ScriptedClient([[Text("-")]]), tools=[add], system="be brief", model="m", max_tokens=50)
    worker.set_history([Message.user("hi"), Message.assistant("hello")])
    run = _Run(worker, "run_x")
    run.turn = 4
    assert run._request_is_plain()
    plain = run._plain_request()
    run.last_sent = 0
    general = await run._request()
    assert plain == general
    assert run.last_sent == 2


async def test_a_request_with_something_to_run_first_takes_the_general_path() -> None:
    worker = Worker(ScriptedClient([[Text("-")]]))
    run = _Run(worker, "run_x")
    assert run._request_is_plain()
    worker.notify("the build finished")
    assert not run._request_is_plain()
    worker._notifier._pending.clear()
    assert run._request_is_plain()

    class Interceptor:
        async def pre_llm_request(self, ctx: object) -> None:
            return None

    hooked = Worker(ScriptedClient([[Text("-")]]))
    hooked.add_hook(PRE_LLM_REQUEST, lambda info: Continue())
    assert not _Run(hooked, "r")._request_is_plain()
    intercepted = Worker(ScriptedClient([[Text("-")]]))
    intercepted.add_interceptor(Interceptor())
    assert not _Run(intercepted, "r")._request_is_plain()


async def test_a_notification_pushed_during_a_run_still_reaches_the_next_request() -> None:
    heard: list[str] = []
    seen: list[list[str]] = []

    @tool
    async def ping() -> str:
        """Push a notification while the run is in flight."""
        worker.notify("deploy done", source="ci")
        return "pong"

    client = ScriptedClient([[ToolUse("ping", {})], [Text("ok")]])
    worker = Worker(client, tools=[ping])
    worker.add_hook(NOTIFICATION, lambda info: heard.append(info.text) or Continue())
    worker.add_hook(
        PRE_LLM_REQUEST,
        lambda info: seen.append([i.text for i in info.new_items if isinstance(i, Message)]) or Continue(),
    )
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert heard == ["deploy done"]
    assert any("deploy done" in text for text in seen[1])
    assert [i.text for i in worker.history if isinstance(i, Message) and i.meta.get("source") == "notification"] == [
        '<notification source="ci">\ndeploy done\n</notification>'
    ]


async def test_a_notification_reaches_the_request_with_no_hooks_at_all() -> None:
    @tool
    async def ping() -> str:
        """Push a notification while the run is in flight."""
        worker.notify("deploy done", source="ci")
        return "pong"

    requests: list[list[str]] = []

    class Recording(ScriptedClient):
        async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
            requests.append([i.text for i in request.items if isinstance(i, Message)])
            async for event in super().stream(request):
                yield event

    worker = Worker(Recording([[ToolUse("ping", {})], [Text("ok")]]), tools=[ping])
    assert isinstance(await worker.run("go"), Finished)
    assert requests[0] == ["go"]
    assert requests[1][-1] == '<notification source="ci">\ndeploy done\n</notification>'


# -- validation --------------------------------------------------------------------------------------------------


class _Point(pydantic.BaseModel):
    x: int
    y: int = 0


@tool
async def shapes(
    count: int,
    label: str = "none",
    tags: list[str] | None = None,
    ratio: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.5,
    point: _Point | None = None,
    mode: str | int = "a",
) -> str:
    """A tool with many kinds of parameter."""
    return "ok"


@tool
async def with_context(path: str, ctx: ToolContext) -> str:
    """A tool that takes its context."""
    return ctx.call_id


@pytest.mark.parametrize(
    "arguments",
    [
        {"count": 1},
        {"count": "2", "label": "x", "tags": ["a", "b"], "ratio": 1, "point": {"x": 1}, "mode": 3},
        {"count": 1, "point": {"x": "1", "y": 2}},
        {},
        {"count": "x"},
        {"count": 1, "extra": True},
        {"count": 1, "ratio": 2},
        {"count": 1, "tags": "ab"},
        {"count": 1, "point": {"x": 1, "z": 1}},
        {"count": 1, "point": [1, 2]},
        {"count": True, "mode": None},
    ],
)
def test_validation_answers_as_model_validate_on_the_frozen_arguments(arguments: dict[str, Any]) -> None:
    frozen = freeze_object(arguments)
    model = shapes._model
    try:
        expected: object = model.model_validate(frozen)
    except pydantic.ValidationError as exc:
        expected = format_validation_error("shapes", exc)
    else:
        expected = {name: getattr(expected, name) for name in model.model_fields}
    try:
        got: object = shapes.validate(frozen)
    except Exception as exc:
        got = str(exc)
    assert got == expected
    assert thaw(frozen) == arguments  # the arguments themselves are untouched


async def test_a_tool_with_a_context_parameter_still_gets_it() -> None:
    validated = with_context.validate(freeze_object({"path": "a"}))
    assert validated == {"path": "a"}
    ctx = tool_context("r", "s", "c9", "with_context", 1, None, None, None)
    assert await with_context.execute(validated, ctx) == "c9"
    assert validated == {"path": "a"}  # not changed by the call


def test_detached_copies_equal_the_items_and_share_no_object_but_leaves() -> None:
    from hookloop.items import DocumentPart, ImagePart, ProviderBlock, Reasoning, detached

    items: list[Any] = [
        tool_call("c", "t", freeze_object({"x": [1]}), None, freeze_object({"m": 1})),
        tool_result("c", "t", "ok", True, EMPTY, (TextPart(text="a"), ImagePart(media_type="image/png", data="AA=="))),
        tool_result("c", "t", "ok", False, EMPTY, ()),
        Message(role="user", content=(TextPart(text="hi"), DocumentPart(media_type="text/plain", url="u")), meta=EMPTY),
        text_message("assistant", "yo", EMPTY),
        Reasoning(text="hm", signature="sig", provider="p", redacted=None, meta=freeze_object({"k": "v"})),
        ProviderBlock(provider="p", data=freeze_object({"type": "x"})),
    ]
    for item in items:
        copy = detached(item)
        assert type(copy) is type(item)
        assert copy == item
        assert copy is not item
        for part_copy, part in zip(
            getattr(copy, "parts", getattr(copy, "content", ())),
            getattr(item, "parts", getattr(item, "content", ())),
            strict=True,
        ):
            assert part_copy == part
            assert part_copy is not part


# -- the token estimate ------------------------------------------------------------------------------------------


async def test_the_token_estimate_is_the_full_count_whenever_it_is_read() -> None:
    """Appended items are counted when the estimate is next read (nothing is counted for a run nobody asks):
    whenever it is read — by a hook every turn, after the run, after the history is replaced, after a resume —
    it is what counting the whole history gives."""
    from hookloop.checkpoint import Approve
    from hookloop.hooks import Ask
    from hookloop.worker import estimate_tokens

    def full(w: Worker) -> int:
        return sum(estimate_tokens(item) for item in w.history)

    script = [
        [ToolUse("add", {"a": 1, "b": 2})],
        [ToolUse("add", {"a": 3, "b": 4}), ToolUse("echo", {"text": "x" * 50})],
        [Text("done " * 30)],
    ]
    worker = Worker(ScriptedClient(script), tools=[add, echo])
    seen: list[tuple[int, int]] = []

    def hook(info: PreLlmRequestInfo) -> Continue:
        seen.append((info.token_estimate, full(worker)))
        return Continue()

    worker.add_pre_llm_request_hook(hook)
    await worker.run("go")
    assert len(seen) == 3
    assert [estimate for estimate, _ in seen] == [counted for _, counted in seen]
    assert seen[0][0] < seen[1][0] < seen[2][0]
    assert worker.token_estimate == full(worker)
    worker.set_history([Message.user("a much longer message " * 20)])
    assert worker.token_estimate == full(worker)
    # a run whose estimate nobody reads, then a read
    quiet = Worker(ScriptedClient(script), tools=[add, echo])
    await quiet.run("go")
    assert quiet.token_estimate == full(quiet) > 0
    # a resumed run starts from the checkpoint's history
    asking = Worker(ScriptedClient(script), tools=[add, echo])
    asking.add_pre_tool_call_hook(lambda info: Ask("check"))
    paused = await asking.run("go")
    assert asking.token_estimate == full(asking)
    resumed = Worker(ScriptedClient(script[1:]), tools=[add, echo])
    await resumed.resume(paused.checkpoint, {c.call_id: Approve() for c in paused.pending})  # type: ignore[union-attr]
    assert resumed.token_estimate == full(resumed) > 0
