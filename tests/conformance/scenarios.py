"""Per-recording notes: the few recordings whose later requests the recording framework shaped itself, and the
recordings known to fail today.

``KNOWN_FAILING`` marks a recording as failing for a known, filed reason ("issue N item M: what"). The runner
still replays it and prints its differences, as ``KNOWN`` instead of ``FAIL``, and it does not fail the run;
when it passes it prints ``FIXED`` (remove the mark; ``--strict`` fails the run until then). Remove a mark in
the commit that fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KNOWN_FAILING", "SCENARIOS", "Scenario"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """How to replay one recording when the defaults do not fit.

    ``serve``: the interactions to answer, in order (default all); ``compare_requests``: compare hookloop's
    follow-ups with the recorded requests (False when the recording framework edited its history between
    requests; the round-trip rules against the replies still apply); ``renamed_ids``: ids the recording
    framework rewrote in its follow-up (recorded → what the provider sent); ``note``: why.
    """

    serve: tuple[int, ...] | None = None
    compare_requests: bool = True
    renamed_ids: dict[str, str] = field(default_factory=dict)
    note: str = ""


SCENARIOS: dict[str, Scenario] = {
    "resp_400_reasoning_without_following": Scenario(
        serve=(0, 2),
        compare_requests=False,
        note="pydantic-ai edited the history before its 2nd request (the recorded 400); hookloop's 2nd request "
        "is checked by the round-trip rules and answered with the recorded 3rd reply",
    ),
    "chat_groq_tool_use_failed": Scenario(
        serve=(0,),
        note="the 1st reply is an in-stream tool_use_failed error; pydantic-ai then retried on its own, "
        "hookloop ends the run with the error",
    ),
    "resp_bedrock_reasoning_tools": Scenario(
        renamed_ids={
            "resp_yqqp3b5eoaaatwfitarja6yi42umok5glfymrqxbh4wwznmisz2q:call_0": "call_0",
            "resp_3irkem3mb4qjb6cw3bfrozqwtev62iuhg5ygpmhx2j775j2hft5q:call_1": "call_1",
        },
        note="pydantic-ai prefixed Bedrock's call ids with the response id in its follow-ups",
    ),
    "chat_hf_together_500_tool_continuation": Scenario(
        compare_requests=False,
        note="pydantic-ai's follow-up left the call's arguments out (the request Together answered with a 500); "
        "hookloop's is checked by the round-trip rules and must end with the retryable server error",
    ),
    "chat_openrouter_kimi_c": Scenario(
        renamed_ids={"0": "llm_version:0"},
        note="simonw/llm renamed Fireworks' call id llm_version:0 to 0 in its follow-up",
    ),
}

_ISSUE = "issue 11 item"
KNOWN_FAILING: dict[str, str] = {
    "anth_pause_turn_stream": f"{_ISSUE} 1+2: server_tool_use blocks crash the stream; pause_turn ends the run",
    "anth_tool_search_stream": f"{_ISSUE} 1: server_tool_use / tool_search_tool_result blocks crash the stream",
    "anth_web_search_stream": f"{_ISSUE} 1: server_tool_use / web_search_tool_result blocks crash the stream",
    "chat_openrouter_kimi_a": f"{_ISSUE} 4: [DONE] without finish_reason is a connection error",
    "chat_openrouter_kimi_b": f"{_ISSUE} 4: [DONE] without finish_reason is a connection error",
    "chat_groq_tool_use_failed": f"{_ISSUE} 6: in-stream invalid_request_error classified retryable",
    "chat_openrouter_stream_error": f"{_ISSUE} 6: in-stream error code 400 classified retryable",
    "chat_mistral_thinking_chunks_stream": "not filed yet (conformance report): Mistral's typed content chunks "
    "(delta.content a list of thinking/text parts) crash OpenAIChatClient with a TypeError",
    "resp_400_reasoning_without_following": f"{_ISSUE} 3: assistant message id dropped after reasoning",
    "resp_bedrock_reasoning_tools": f"{_ISSUE} 3: function_call item ids dropped",
    "resp_deepseek_reasoning_tool": f"{_ISSUE} 3: function_call item ids dropped",
    "resp_llm_tool_stream": f"{_ISSUE} 3: function_call item ids dropped",
    "resp_phase_reasoning_text_call": f"{_ISSUE} 3: message id / phase / status and function_call ids dropped",
    "resp_usage_reasoning_call": f"{_ISSUE} 3: function_call item ids dropped",
}
