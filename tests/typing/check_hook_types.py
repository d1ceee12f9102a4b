"""Type-checked by mypy --strict in CI (not run by pytest): hooks with the wrong signature are rejected.

Every ``# type: ignore[...]`` below MUST be needed: with ``warn_unused_ignores`` (strict), if hookloop ever
accepted the wrong hook, the ignore would become unused and mypy would fail.
"""

from __future__ import annotations

from typing import assert_type

from hookloop import Finished, Outcome, Paused, ScriptedClient, Worker
from hookloop.hooks import (
    PRE_TOOL_CALL,
    SUBAGENT_START,
    SUBAGENT_STOP,
    Abort,
    Continue,
    ContinueWithMessages,
    Finish,
    PostToolCallInfo,
    PreToolCallInfo,
    PreToolCallResult,
    Skip,
    SubagentStartInfo,
    SubagentStopInfo,
    TurnEndInfo,
)
from hookloop.stream import TextDelta

worker = Worker(ScriptedClient([]))


def guard(info: PreToolCallInfo) -> PreToolCallResult:
    return Skip("no") if info.tool_name == "Bash" else Continue()


async def async_guard(info: PreToolCallInfo) -> Continue | Abort:
    return Continue()


def post(info: PostToolCallInfo) -> Continue:
    return Continue()


def turn_end(info: TurnEndInfo) -> Finish:
    return Finish()


def text(delta: TextDelta) -> Continue:
    return Continue()


worker.add_pre_tool_call_hook(guard)
worker.add_pre_tool_call_hook(async_guard)
worker.add_hook(PRE_TOOL_CALL, guard)
worker.add_post_tool_call_hook(post)
worker.add_on_turn_end_hook(turn_end)
worker.add_on_text_delta_hook(text)
worker.hooks.pre_tool_call(guard)

# wrong input type for the event
worker.add_pre_tool_call_hook(post)  # type: ignore[arg-type]
worker.add_hook(PRE_TOOL_CALL, post)  # type: ignore[arg-type]
# a result the event does not accept
worker.add_on_turn_end_hook(guard)  # type: ignore[arg-type]
worker.add_on_text_delta_hook(turn_end)  # type: ignore[arg-type]


def wrong_result(info: PreToolCallInfo) -> Finish:
    return Finish()


worker.add_pre_tool_call_hook(wrong_result)  # type: ignore[arg-type]


async def outcome() -> None:
    result = await worker.run("hi")
    assert_type(result, Outcome)
    if isinstance(result, Finished):
        assert_type(result.text, str)
    else:
        assert_type(result, Paused)


# subagent events: typed like the others
def subagent_stop(info: SubagentStopInfo) -> Finish | ContinueWithMessages:
    return Finish() if info.stop_hook_active else ContinueWithMessages([])


def subagent_start(info: SubagentStartInfo) -> Continue:
    return Continue(additional_context=info.agent_type)


worker.add_hook(SUBAGENT_STOP, subagent_stop)
worker.add_hook(SUBAGENT_START, subagent_start)
worker.hooks.subagent_stop(subagent_stop)
worker.add_hook(SUBAGENT_STOP, guard)  # type: ignore[arg-type]
worker.add_hook(SUBAGENT_START, subagent_stop)  # type: ignore[arg-type]
