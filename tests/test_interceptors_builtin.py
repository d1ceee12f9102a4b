"""The built-in interceptors (issue 3): truncation, notification injection, compaction; on_turn_end views."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import assert_valid_history, echo
from hookloop import (
    ContextWindowExceeded,
    Finished,
    Message,
    Paused,
    ScriptedClient,
    Text,
    ToolCall,
    ToolResult,
    ToolUse,
    Worker,
    tool,
)
from hookloop._loop import history_problem
from hookloop.hooks import Ask, Cancel, Continue, NotificationInfo, PostCompactInfo, PreCompactInfo
from hookloop.interceptors import Compaction, ToolOutputTruncation, TurnEndView
from hookloop.interceptors.compaction import plan_compaction
from hookloop.interceptors.truncation import truncate_middle

pytestmark = pytest.mark.anyio


# -- truncation ----------------------------------------------------------------------------------------


def test_truncate_middle_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    text = "".join(f"line {i:04d}\n" for i in range(1000))
    out, cut = truncate_middle(text, 200, hint="read again with offset")
    assert out.startswith("line 0000\n")
    assert out.endswith("line 0999\n")
    assert cut > 0
    assert f"{cut} characters" in out
    assert "read again with offset" in out
    assert len(out) < 400
    assert truncate_middle("short", 10) == ("short", 0)


async def test_truncation_interceptor_caps_results_by_chars_or_tokens_and_records_the_original() -> None:
    @tool
    async def Read(file_path: str) -> str:
        return "x" * 5000

    worker = Worker(
        ScriptedClient([[ToolUse("Read", {"file_path": "big.txt"})], [Text("ok")]]),
        tools=[Read],
        interceptors=[ToolOutputTruncation(max_chars=10_000, max_tokens=250)],
    )
    seen: list[str] = []
    worker.add_post_tool_call_hook(lambda info: (seen.append(info.content), Continue())[1])
    await worker.run("read it")
    result = next(i for i in worker.history if isinstance(i, ToolResult))
    assert result.content.startswith("x" * 500)
    assert "cut by hookloop from a 5000-character output; read the file again with offset and limit" in result.content
    assert result.meta["truncated"] == {"original_chars": 5000, "cut_chars": 4000}
    assert seen == [result.content]  # the hook saw what the interceptor produced


# -- notifications ---------------------------------------------------------------------------------------


async def test_notify_from_another_thread_reaches_the_next_request_in_order_exactly_once() -> None:
    pushed = threading.Event()
    entered = threading.Event()

    @tool
    def wait_for_news() -> str:
        """Runs in a thread while another thread pushes notifications."""
        entered.set()
        assert pushed.wait(5)
        return "waited"

    client = ScriptedClient([[ToolUse("wait_for_news", {})], [ToolUse("echo", {"text": "again"})], [Text("ok")]])
    worker = Worker(client, tools=[wait_for_news, echo])
    delivered: list[tuple[str, str, str]] = []

    def on_note(info: NotificationInfo) -> None:
        delivered.append((info.kind, info.source, info.text))

    worker.hooks.notification(on_note)
    new_per_request: list[tuple[Any, ...]] = []
    worker.add_pre_llm_request_hook(lambda info: (new_per_request.append(info.new_items), Continue())[1])

    def pusher() -> None:
        assert entered.wait(5)  # the run is in flight, inside the tool
        worker.notify("build 1 passed", source="ci")
        worker.notify("build 2 failed", source="ci")
        pushed.set()

    thread = threading.Thread(target=pusher)
    thread.start()
    await worker.run("watch the builds")
    thread.join()

    def notes(items: Any) -> list[str]:
        return [i.text for i in items if isinstance(i, Message) and i.meta.get("source") == "notification"]

    assert notes(new_per_request[0]) == []
    assert notes(new_per_request[1]) == [
        '<notification source="ci">\nbuild 1 passed\n</notification>',
        '<notification source="ci">\nbuild 2 failed\n</notification>',
    ]
    assert notes(new_per_request[2]) == []  # kept in the history, never injected twice
    assert len(notes(worker.history)) == 2
    assert delivered == [("injected", "ci", "build 1 passed"), ("injected", "ci", "build 2 failed")]
    assert_valid_history(worker.history)


async def test_a_pause_for_approval_fires_a_permission_prompt_notification() -> None:
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "x"})]]), tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: Ask("confirm echo"))
    kinds: list[str] = []
    worker.hooks.notification(lambda info: kinds.append(info.kind))  # type: ignore[arg-type,func-returns-value]
    assert isinstance(await worker.run("go"), Paused)
    assert kinds == ["permission_prompt"]


# -- compaction ---------------------------------------------------------------------------------------------


def tool_turns(n: int) -> list[list[Any]]:
    return [
        [Text(f"step {i} " + "words " * 20), ToolUse("echo", {"text": f"result {i} " + "data " * 40})] for i in range(n)
    ]


class SummaryRouter:
    """The Worker's client: summary requests (no tools, the compaction instructions) go to ``summaries``."""

    provider = "scripted"

    def __init__(self, main: ScriptedClient, summaries: ScriptedClient) -> None:
        self.main, self.summaries = main, summaries

    def stream(self, request: Any) -> Any:
        is_summary = request.tools == () and (request.system or "").startswith("You compact")
        return (self.summaries if is_summary else self.main).stream(request)


async def test_compaction_summarises_the_older_part_with_the_workers_client() -> None:
    main = ScriptedClient([*tool_turns(6), [Text("final")]])
    summaries = ScriptedClient([[Text("SUMMARY: echoed six times")]] * 6)
    compaction = Compaction(threshold_tokens=600, keep_recent_steps=2)
    worker = Worker(SummaryRouter(main, summaries), tools=[echo], interceptors=[compaction])
    events: list[Any] = []
    worker.hooks.pre_compact(lambda info: (events.append(info), Continue())[1])
    worker.hooks.post_compact(events.append)  # type: ignore[arg-type]
    outcome = await worker.run("please echo things")
    assert isinstance(outcome, Finished)
    assert outcome.text == "final"
    pre = [e for e in events if isinstance(e, PreCompactInfo)]
    post = [e for e in events if isinstance(e, PostCompactInfo)]
    assert len(post) >= 1
    assert len(pre) >= len(post)
    assert pre[0].trigger == "auto"
    assert post[0].summary == "SUMMARY: echoed six times"
    assert post[0].items_after < post[0].items_before
    assert post[0].tokens_after < post[0].tokens_before
    history = worker.history
    assert history[0].text == "please echo things"  # type: ignore[union-attr]
    marker = history[1]
    assert isinstance(marker, Message)
    assert marker.meta["source"] == "compaction"
    assert "SUMMARY: echoed six times" in marker.text
    assert history_problem(history) is None
    assert_valid_history(history)
    summary_request = summaries.requests[0]
    assert summary_request.tools == ()
    assert "[tool call echo]" in summary_request.items[0].text  # type: ignore[union-attr]


async def test_pre_compact_cancel_keeps_the_history_and_a_window_overflow_fails_clearly() -> None:
    client = ScriptedClient([*tool_turns(4), [Text("final")]])
    worker = Worker(
        client, tools=[echo], interceptors=[Compaction(threshold_tokens=300, strategy="drop", keep_recent_steps=1)]
    )
    worker.hooks.pre_compact(lambda info: Cancel("keep everything"))
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert not any(isinstance(i, Message) and i.meta.get("source") == "compaction" for i in worker.history)

    worker2 = Worker(
        ScriptedClient([*tool_turns(4), [Text("final")]]),
        tools=[echo],
        interceptors=[Compaction(context_window=400, threshold_ratio=0.5, strategy="drop", keep_recent_steps=1)],
    )
    worker2.hooks.pre_compact(lambda info: Cancel("no"))
    with pytest.raises(ContextWindowExceeded, match="context window is 400"):
        await worker2.run("go")
    assert_valid_history(worker2.history)


async def test_manual_compaction_drops_the_older_part() -> None:
    worker = Worker(ScriptedClient([*tool_turns(5), [Text("done")]]), tools=[echo])
    worker.add_interceptor(Compaction(threshold_tokens=10**9, strategy="drop", keep_recent_steps=2))
    await worker.run("go")
    before = len(worker.history)
    triggers: list[str] = []
    worker.hooks.pre_compact(lambda info: (triggers.append(info.trigger), Continue())[1])
    assert await worker.compact()
    assert triggers == ["manual"]
    assert len(worker.history) < before
    assert "older conversation dropped" in worker.history[1].text  # type: ignore[union-attr]
    assert_valid_history(worker.history)


# Random valid histories: user prompts and model replies whose tool calls are all answered (results in any order).
@st.composite
def histories(draw: st.DrawFn) -> list[Any]:
    items: list[Any] = [Message.system("sys")] if draw(st.booleans()) else []
    items.append(Message.user("the task"))
    counter = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "reply", "tools"]))
        if kind == "user":
            items.append(Message.user("more"))
        elif kind == "reply":
            items.append(Message.assistant("text"))
        else:
            if draw(st.booleans()):
                items.append(Message.assistant("calling"))
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(ToolCall(call_id=f"c{counter}", name="t"))
            items.extend(calls)
            results = [ToolResult(call_id=c.call_id, name="t", content="r") for c in calls]
            items.extend(draw(st.permutations(results)))
    return items


@given(histories(), st.integers(1, 5))
@settings(max_examples=300, deadline=None)
def test_compaction_always_leaves_a_history_valid_to_send(history: list[Any], keep: int) -> None:
    assert history_problem(history) is None
    plan = plan_compaction(history, keep_recent_steps=keep)
    if plan is None:
        return
    compacted = [*plan.head, Message.user("summary"), *plan.tail]
    assert history_problem(compacted) is None
    calls = {i.call_id for i in compacted if isinstance(i, ToolCall)}
    results = {i.call_id for i in compacted if isinstance(i, ToolResult)}
    assert calls == results  # no call separated from its result, no dangling result
    assert any(isinstance(i, Message) and i.text == "the task" for i in plan.head)  # the intent is kept
    assert list(plan.head) + list(plan.middle) + list(plan.tail) == history
    assert plan.tail
    assert not isinstance(plan.tail[0], ToolResult)


async def test_an_on_turn_end_interceptor_can_send_the_model_back_to_work() -> None:
    class RequireTests:
        async def on_turn_end(self, view: TurnEndView) -> None:
            if "tests pass" not in view.last_assistant_text:
                view.messages.append(Message.user("Run the tests first."))

    client = ScriptedClient([[Text("done")], [Text("done, tests pass")]])
    worker = Worker(client, interceptors=[RequireTests()])
    outcome = await worker.run("fix it")
    assert isinstance(outcome, Finished)
    assert outcome.text == "done, tests pass"
    assert any(isinstance(i, Message) and i.text == "Run the tests first." for i in worker.history)
