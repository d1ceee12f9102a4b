"""The pure dispatch core, without a Worker: order, short-circuit, edits, errors (Hypothesis)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop import HookError
from hookloop.hooks import (
    ON_ABORT,
    ON_TEXT_DELTA,
    PRE_TOOL_CALL,
    Abort,
    Allow,
    Ask,
    Continue,
    Deny,
    HookRegistry,
    Pause,
    Skip,
)
from hookloop.hooks._dispatch import Handler, dispatch, dispatch_sync, run_chain
from hookloop.stream import TextDelta

PRE_RESULTS = [
    Continue(),
    Continue(updated_input={"x": 1}),
    Allow("ok"),
    Ask("why"),
    Skip("no"),
    Abort("stop"),
    Pause(),
    Deny("nope"),
]


def handlers_for(results: list[Any], calls: list[int], *, use_async: list[bool]) -> tuple[Handler, ...]:
    out = []
    for i, (result, is_async) in enumerate(zip(results, use_async, strict=True)):
        if is_async:

            async def fn(inp: object, i: int = i, result: Any = result) -> Any:
                calls.append(i)
                return result
        else:

            def fn(inp: object, i: int = i, result: Any = result) -> Any:  # type: ignore[misc]
                calls.append(i)
                return result

        out.append(Handler.of(fn, name=f"h{i}"))
    return tuple(out)


@given(st.lists(st.sampled_from(PRE_RESULTS), max_size=8), st.data())
def test_handlers_run_in_order_until_the_first_decisive_result(results: list[Any], data: st.DataObject) -> None:
    use_async = data.draw(st.lists(st.booleans(), min_size=len(results), max_size=len(results)))
    calls: list[int] = []
    handlers = handlers_for(results, calls, use_async=use_async)
    edits: list[tuple[Handler, Any]] = []
    decided = asyncio.run(run_chain(PRE_TOOL_CALL, handlers, object(), edits))
    decisive = [i for i, r in enumerate(results) if type(r) in PRE_TOOL_CALL.decides]
    stop = decisive[0] if decisive else len(results)
    assert calls == list(range(min(stop + 1, len(results))))
    if decisive:
        assert decided is not None
        assert decided[0] is results[stop]
        assert decided[1].name == f"h{stop}"
    else:
        assert decided is None
    expected_edits = [r for r in results[:stop] if not (type(r) is Continue and not r.has_edit)]
    assert [r for _, r in edits] == expected_edits
    if not any(use_async):
        calls2: list[int] = []
        sync_handlers = handlers_for(results, calls2, use_async=use_async)
        decided2 = dispatch_sync(PRE_TOOL_CALL, sync_handlers, object())
        assert calls2 == calls
        assert (decided2 is None) == (decided is None)
        calls3: list[int] = []
        decided3 = asyncio.run(dispatch(PRE_TOOL_CALL, handlers_for(results, calls3, use_async=use_async), object()))
        assert calls3 == calls
        assert (decided3 is None) == (decided is None)


def test_sync_dispatch_creates_no_coroutine(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = HookRegistry()
    registry.on_text_delta(lambda d: Continue())
    chain = registry.chain(ON_TEXT_DELTA)
    assert chain.all_sync
    assert chain.single is not None
    import sys

    created: list[str] = []

    def tracer(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_flags & 0x80:  # CO_COROUTINE
            created.append(frame.f_code.co_name)

    sys.setprofile(tracer)
    try:
        dispatch_sync(ON_TEXT_DELTA, chain, TextDelta(0, "x"))
    finally:
        sys.setprofile(None)
    assert created == []
    # the probe does see coroutines: the async path creates one
    sys.setprofile(tracer)
    try:
        asyncio.run(dispatch(ON_TEXT_DELTA, chain, TextDelta(0, "x")))
    finally:
        sys.setprofile(None)
    assert "dispatch" in created


def test_async_hooks_make_the_chain_async_and_removal_restores_it() -> None:
    registry = HookRegistry()

    async def a(d: TextDelta) -> Continue:
        return Continue()

    registry.on_text_delta(lambda d: Continue())
    registry.on_text_delta(a)
    assert not registry.chain(ON_TEXT_DELTA).all_sync
    assert registry.remove(ON_TEXT_DELTA, a)
    assert registry.chain(ON_TEXT_DELTA).all_sync
    assert len(registry) == 1


def test_callable_objects_with_async_call_are_classified_async() -> None:
    class Guard:
        async def __call__(self, info: object) -> Continue:
            return Continue()

    assert Handler.of(Guard()).is_async
    assert Handler.of(Guard()).name == "Guard"


def test_wrong_results_and_exceptions_become_hook_errors() -> None:
    bad = Handler.of(lambda i: "yes", name="bad")
    with pytest.raises(HookError, match="hook 'bad' on pre_tool_call: returned str"):
        dispatch_sync(PRE_TOOL_CALL, (bad,), object())

    async def coro_from_sync(i: object) -> Continue:
        return Continue()

    wrapped = Handler(fn=lambda i: coro_from_sync(i), is_async=False, name="looks_sync")
    with pytest.raises(HookError, match="make it `async def`"):
        dispatch_sync(PRE_TOOL_CALL, (wrapped,), object())

    def raiser(i: object) -> Continue:
        raise ValueError("bug")

    with pytest.raises(HookError, match="raised ValueError: bug") as err:
        dispatch_sync(PRE_TOOL_CALL, (Handler.of(raiser),), object())
    assert isinstance(err.value.__cause__, ValueError)


def test_observer_events_accept_only_none() -> None:
    ok = Handler.of(lambda i: None, name="ok")
    assert dispatch_sync(ON_ABORT, (ok,), object()) is None
    chatty = Handler.of(lambda i: Continue(), name="chatty")
    with pytest.raises(HookError, match="on_abort accepts None"):
        dispatch_sync(ON_ABORT, (chatty,), object())


def test_provider_objects_register_every_method_named_after_an_event() -> None:
    class Audit:
        def pre_tool_call(self, info: object) -> Continue:
            return Continue()

        async def on_abort(self, info: object) -> None:
            return None

        def unrelated(self) -> None: ...

    registry = HookRegistry()
    assert registry.add_provider(Audit()) == ["pre_tool_call", "on_abort"]
    assert registry.chain(PRE_TOOL_CALL).handlers[0].name == "Audit.pre_tool_call"
    with pytest.raises(TypeError, match="implements no hook event method"):
        registry.add_provider(object())
    with pytest.raises(TypeError, match="must be callable"):
        registry.add(PRE_TOOL_CALL, "not a function")  # type: ignore[arg-type]
