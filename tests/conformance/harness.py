"""One recording end to end: a loopback server answering its replies, the matching real client, a full Worker
run (or several), and the verdict.

The Worker is built from the first recorded request: its system prompt, its last user message as the prompt
(earlier messages, if any, become the history), and one tool per function tool it declares. Each tool answers
what the recorded follow-up requests say it answered (the ``tool_result`` / ``tool`` message /
``function_call_output`` for that call id, error flag included). A later recorded request that ends with a
new user message (and follows a reply without tool calls) is a new ``worker.run`` with that message; a
request equal to the one before it, after an error reply, is the SDK retrying (the client gets that many
``max_retries``); everything else is the Worker's own loop (tool results, continuations).

Checks, each a line in the verdict when it fails:

- requests: hookloop sends as many requests as the recording holds; one more is allowed only when the last
  recorded reply asked for tools (the Worker must send their results back, the recording stops before), and
  that extra request is still checked by the round-trip rules;
- (a) reply k as hookloop parsed it (:class:`ModelRequestEnded` and the items the Worker appended) against
  :func:`conformance.oracle.read_reply`: text, reasoning text (whitespace aside: frameworks join parts
  differently) and Anthropic signatures / redacted data, tool calls (id, name, arguments), stop reason, usage
  — or the error class and retryable flag the run must end with;
- (b) hookloop's request k against recorded request k (the first one too: the prompt, system prompt and history
  the Worker was given must reach the wire as recorded), and against reply k-1 (round trip), by
  :mod:`conformance.compare`.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.compare import canonical, diff_conversation, round_trip, system_prompt
from conformance.oracle import Reply, read_reply
from conformance.recording import API, Recording, normalise
from conformance.replay import ReplayServer, body_chunks
from conformance.scenarios import KNOWN_FAILING, SCENARIOS, Scenario
from hookloop import Message, Reasoning, ToolCall, Worker
from hookloop._frozen import freeze_object, thaw_object
from hookloop.errors import ClientError
from hookloop.items import Item
from hookloop.timeline import ItemAppended, ModelRequestEnded, ModelRequestStarted, TimelineEvent
from hookloop.tools import ToolContext, ToolMeta, ToolOutput

__all__ = ["Result", "run_recording"]


@dataclass(slots=True)
class Result:
    name: str
    api: str
    requests: str  # "sent/recorded"
    diffs: list[str] = field(default_factory=list)
    synthesised: bool = False
    known: str | None = None
    note: str = ""

    @property
    def passed(self) -> bool:
        return not self.diffs

    @property
    def verdict(self) -> str:
        if self.known is not None:
            return "FIXED" if self.passed else "KNOWN"
        return "PASS" if self.passed else "FAIL"


class RecordedTool:
    """A function tool declared by the recorded request, answering what the recording says it answered."""

    def __init__(self, name: str, description: str, schema: Mapping[str, Any], answers: dict[str, Any]) -> None:
        self._meta = ToolMeta(name=name, description=description, input_schema=freeze_object(dict(schema)))
        self._answers = answers

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        return arguments

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        content, is_error = self._answers.get(ctx.call_id, ("(the recording holds no result for this call)", False))
        return ToolOutput(content=content, is_error=is_error)


def _tools(api: API, request: dict[str, Any], answers: dict[str, Any]) -> list[RecordedTool]:
    tools = []
    for spec in request.get("tools") or ():
        if api == "anthropic":
            if spec.get("type") not in (None, "custom") or "input_schema" not in spec:
                continue  # a server tool (web search, tool search): the provider runs it
            tools.append(RecordedTool(spec["name"], spec.get("description", ""), spec["input_schema"], answers))
        elif spec.get("type") == "function":
            fn = spec.get("function", spec)
            tools.append(RecordedTool(fn["name"], fn.get("description") or "", fn.get("parameters") or {}, answers))
    return tools


def _answers(api: API, recording: Recording, renamed: dict[str, str]) -> dict[str, tuple[str, bool]]:
    out: dict[str, tuple[str, bool]] = {}
    for interaction in recording.interactions:
        for element in canonical(api, interaction.request, recorded=True):
            if api == "anthropic":
                for block in element.get("content", ()):
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        body = block.get("content", "")
                        text = body if isinstance(body, str) else str(body)
                        call = str(block["tool_use_id"])
                        out[renamed.get(call, call)] = (text, bool(block.get("is_error")))
            elif api == "chat" and element["role"] == "tool":
                call = str(element["tool_call_id"])
                out[renamed.get(call, call)] = (element["content"], False)
            elif api == "responses" and element.get("type") == "function_call_output":
                call = str(element["call_id"])
                out[renamed.get(call, call)] = (element["output"], False)
    return out


def _rename(value: Any, renamed: dict[str, str]) -> Any:
    if not renamed:
        return value
    if isinstance(value, str):
        return renamed.get(value, value)
    if isinstance(value, list):
        return [_rename(v, renamed) for v in value]
    if isinstance(value, dict):
        return {k: _rename(v, renamed) if k in _ID_KEYS or isinstance(v, (list, dict)) else v for k, v in value.items()}
    return value


_ID_KEYS = frozenset({"id", "call_id", "tool_call_id", "tool_use_id"})


def _prompt_and_history(api: API, request: dict[str, Any]) -> tuple[str, list[Item]]:
    """The last user message's text, and the items before it (without the system prompt)."""
    from hookloop.providers._anthropic_wire import from_anthropic
    from hookloop.providers._chat_wire import from_chat
    from hookloop.providers._responses_wire import from_responses

    items: list[Item]
    if api == "anthropic":
        items = from_anthropic(request.get("system"), request.get("messages") or [])
    elif api == "chat":
        _, items = from_chat(request.get("messages") or [])
        if items and isinstance(items[0], Message) and items[0].role == "system":
            items = items[1:]
    else:
        raw = request.get("input") or []
        entries = [{"type": "message", "role": "user", "content": raw}] if isinstance(raw, str) else raw
        _, items = from_responses(None, [dict(e, type=e.get("type", "message")) for e in entries])
    last = items[-1] if items else None
    if not isinstance(last, Message) or last.role != "user":
        raise ValueError("the first recorded request does not end with a user message")
    return last.text, items[:-1]


def _new_prompt(api: API, before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """The new user message ``after`` ends with, when it is a new run after ``before``'s reply."""
    prior, now = canonical(api, before, recorded=True), canonical(api, after, recorded=True)
    if len(now) <= len(prior) or not now:
        return None
    last = now[-1]
    if last.get("role") != "user" or last.get("type", "message") != "message":
        return None
    if api == "anthropic":
        texts = [b["text"] for b in last["content"] if b.get("type") == "text"]
        if len(texts) != len(last["content"]):
            return None
        return "".join(texts)
    return str(last.get("content", ""))


def _client(api: API, recording: Recording, base_url: str, retries: int) -> Any:
    first = recording.interactions[0].request
    model = str(first.get("model") or "model")
    if api == "anthropic":
        from hookloop.providers.anthropic import AnthropicClient

        thinking = first.get("thinking")
        return AnthropicClient(
            model,
            api_key="sk-ant-conformance",
            base_url=base_url,
            max_retries=retries,
            thinking=thinking if isinstance(thinking, dict) else None,
        )
    if api == "chat":
        from hookloop.providers.openai_chat import OpenAIChatClient

        return OpenAIChatClient(model, api_key="sk-conformance", base_url=base_url + "/v1", max_retries=retries)
    from hookloop.providers.openai_responses import OpenAIResponsesClient

    reasoning = first.get("reasoning")
    kept = {k: v for k, v in reasoning.items() if isinstance(v, str)} if isinstance(reasoning, dict) else None
    return OpenAIResponsesClient(
        model, api_key="sk-conformance", base_url=base_url + "/v1", max_retries=retries, reasoning=kept or None
    )


@dataclass(slots=True)
class _Turn:
    ended: ModelRequestEnded | None = None
    items: list[Item] = field(default_factory=list)


def _parsed_diffs(where: str, reply: Reply, turn: _Turn, signatures: bool) -> list[str]:
    diffs: list[str] = []
    if turn.ended is None:
        return [f"{where}: the model request never ended"]
    text = "".join(i.text for i in turn.items if isinstance(i, Message) and i.role == "assistant")
    if text != reply.text:
        diffs.append(
            f"{where}: reply text {reply.text[:60]!r}…({len(reply.text)}), hookloop {text[:60]!r}…({len(text)})"
        )
    reasoning = [i for i in turn.items if isinstance(i, Reasoning)]
    squash = ["".join(r.text.split()) for r in reasoning]
    if squash != ["".join(t.split()) for t in reply.reasoning]:
        want_sizes = [len(t) for t in reply.reasoning]
        diffs.append(f"{where}: reasoning {want_sizes} chars per block, hookloop {[len(t) for t in squash]}")
    if signatures:
        ours = [r.redacted if r.redacted is not None else (r.signature or "") for r in reasoning]
        if ours != reply.signatures:
            diffs.append(f"{where}: thinking signatures / redacted data differ from the reply's")
    calls = [
        (c.call_id, c.name, c.raw_arguments if c.raw_arguments is not None else thaw_object(c.arguments))
        for c in turn.items
        if isinstance(c, ToolCall)
    ]
    want = [(c.call_id, c.name, c.arguments) for c in reply.tool_calls]
    if normalise(calls) != normalise(want):
        diffs.append(f"{where}: tool calls {want}, hookloop {calls}")
    if turn.ended.stop_reason != reply.stop:
        diffs.append(f"{where}: stop reason {reply.stop!r}, hookloop {turn.ended.stop_reason!r}")
    if reply.usage is not None:
        u = turn.ended.usage
        ours_usage = (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) if u else None
        if ours_usage != reply.usage:
            diffs.append(f"{where}: usage (in, out, cache read, cache write) {reply.usage}, hookloop {ours_usage}")
    return diffs


async def run_recording(recording: Recording) -> Result:
    """Replay ``recording`` and return its verdict (never raises for a hookloop failure: it is a diff)."""
    api = recording.api
    scenario = SCENARIOS.get(recording.name, Scenario())
    served = [recording.interactions[i] for i in (scenario.serve or range(len(recording.interactions)))]
    renamed = scenario.renamed_ids
    replies = [read_reply(api, i) for i in served]
    result = Result(recording.name, api, "", known=KNOWN_FAILING.get(recording.name), note=scenario.note)

    # The plan: SDK retries, and the prompts of later runs.
    retries = run = 0
    prompts: dict[int, str] = {}  # served index → the prompt of the run that starts with it
    for k in range(1, len(served)):
        if normalise(served[k].request) == normalise(served[k - 1].request) and served[k - 1].status >= 400:
            run += 1
            retries = max(retries, run)
            continue
        run = 0
        prompt = None if replies[k - 1].tool_calls else _new_prompt(api, served[k - 1].request, served[k].request)
        if prompt is not None:
            prompts[k] = prompt
    first = served[0].request
    prompt, history = _prompt_and_history(api, first)
    answers = _answers(api, recording, renamed)
    chunks = [body_chunks(api, i) for i in served]
    result.synthesised = any(c.synthesised for c in chunks)

    turns: list[_Turn] = []

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, ModelRequestStarted):
            turns.append(_Turn())
        elif isinstance(event, ModelRequestEnded) and turns:
            turns[-1].ended = event
        elif isinstance(event, ItemAppended) and turns:
            item = event.item
            if (
                not (isinstance(item, Message) and item.role in ("user", "system"))
                and type(item).__name__ != "ToolResult"
            ):
                turns[-1].items.append(item)

    error: BaseException | None = None
    async with ReplayServer(chunks) as server:
        client = _client(api, recording, server.base_url, retries)
        try:
            worker = Worker(client, tools=_tools(api, first, answers), system=system_prompt(api, first))
            worker.subscribe(watch)
            if history:
                worker.set_history(history)
            starts = [prompt] + [prompts[k] for k in sorted(prompts)]
            for text in starts:
                await worker.run(text)
        except ClientError as exc:
            error = exc
        except Exception as exc:
            error = exc
            result.diffs.append(
                f"run raised {type(exc).__name__}: {exc} at {traceback.format_tb(exc.__traceback__)[-1].strip()}"
            )
        finally:
            await client.aclose()
    sent = server.requests
    result.requests = f"{len(sent)}/{len(served)}"

    # Which recorded reply each hookloop request got: one per request, in order (SDK retries included).
    extra_allowed = bool(replies[-1].tool_calls) and replies[-1].error is None
    if len(sent) < len(served) or len(sent) > len(served) + (1 if extra_allowed else 0):
        result.diffs.append(f"hookloop sent {len(sent)} requests, the recording has {len(served)}")

    # (a) the parsed replies. Retried error replies are consumed by the SDK; only model requests that ended
    # are in `turns`, in order.
    turn_of: dict[int, int] = {}
    t = 0
    for k in range(min(len(sent), len(served))):
        retried = k + 1 < len(served) and replies[k].error is not None and k + 1 < len(sent)
        if retried:
            continue
        turn_of[k] = t
        t += 1
    for k, reply in enumerate(replies[: len(sent)]):
        where = f"reply {k}"
        if k not in turn_of:
            continue
        if reply.error is not None:
            got = (type(error).__name__, getattr(error, "retryable", None)) if error is not None else None
            if got != (reply.error.kind, reply.error.retryable):
                result.diffs.append(
                    f"{where}: {reply.error.said!r} must raise {reply.error.describe()}, hookloop "
                    + (f"raised {got[0]}(retryable={got[1]}): {error}" if got else "raised nothing")
                )
            continue
        index = turn_of[k]
        if index >= len(turns):
            result.diffs.append(f"{where}: no model request recorded on the timeline")
            continue
        result.diffs += _parsed_diffs(where, reply, turns[index], signatures=api == "anthropic")
    if error is not None and not any(r.error for r in replies[: len(sent)]):
        end_of_recording = extra_allowed and len(sent) == len(served) + 1
        if not (end_of_recording and "conformance_end" in str(error)):
            result.diffs.append(f"run failed: {type(error).__name__}: {error}")

    # (b) the follow-up requests.
    for k in range(len(sent)):
        where = f"request {k}"
        if k < len(served) and (scenario.compare_requests or k == 0):
            recorded = _rename(served[k].request, renamed)
            result.diffs += diff_conversation(api, recorded, sent[k], where)
        if k >= 1 and replies[k - 1].error is None:
            result.diffs += round_trip(api, replies[k - 1], sent[k - 1], sent[k], where)
    return result
