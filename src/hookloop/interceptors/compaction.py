"""Context compaction: when a request grows past a threshold, replace the older history with a summary.

The cut is always at a *boundary*: a point where every earlier tool call already has its result and the next
item is not a tool result. So compaction never separates a call from its result and never leaves a dangling
result. The system messages and the first user message (the task's intent) are always kept, and so are the
most recent steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hookloop.errors import ClientError
from hookloop.interceptors._base import COMPACT, CompactionContext, RequestContext
from hookloop.items import Item, Message, ProviderBlock, Reasoning, ToolCall, ToolResult
from hookloop.providers.base import LLMRequest
from hookloop.stream import StreamError, TextDelta

__all__ = ["Compaction", "CompactionPlan", "plan_compaction", "render_for_summary"]

DEFAULT_INSTRUCTIONS = (
    "You compact an agent's conversation. Summarise the transcript below so the agent can continue the task: "
    "keep decisions, facts learned, files and commands touched, errors met and what remains to do. "
    "Be concise; use bullet points. Do not invent anything."
)


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """``head`` is kept, ``middle`` is replaced, ``tail`` is kept."""

    head: tuple[Item, ...]
    middle: tuple[Item, ...]
    tail: tuple[Item, ...]


def boundaries(history: Sequence[Item], start: int = 0) -> list[int]:
    """Indices ``i >= start`` where the history can be cut: no call is open before ``i``, ``history[i]`` is not
    a tool result, and it starts a step (a user message, or the first item of a model reply)."""
    open_calls: set[str] = set()
    out: list[int] = []
    previous: Item | None = None
    for i, item in enumerate(history):
        starts_step = (
            previous is None
            or isinstance(previous, ToolResult)
            or (isinstance(previous, Message) and previous.role != "assistant")
            or (isinstance(item, Message) and item.role == "user")
        )
        if i >= start and starts_step and not open_calls and not isinstance(item, ToolResult):
            out.append(i)
        previous = item
        if isinstance(item, ToolCall):
            open_calls.add(item.call_id)
        elif isinstance(item, ToolResult):
            open_calls.discard(item.call_id)
    return out


def plan_compaction(
    history: Sequence[Item], *, keep_recent_steps: int = 6, keep_recent_tokens: int | None = None
) -> CompactionPlan | None:
    """Decide what to replace (pure). None when there is nothing worth compacting.

    Keeps the leading system messages and the first user message, and the last ``keep_recent_steps``
    boundaries' worth of items (fewer if they exceed ``keep_recent_tokens``, but always the last step).
    """
    first_user = next((i for i, item in enumerate(history) if isinstance(item, Message) and item.role == "user"), None)
    if first_user is None:
        return None
    head_end = first_user + 1
    cuts = boundaries(history, head_end + 1)
    if len(cuts) <= keep_recent_steps:
        return None
    index = len(cuts) - keep_recent_steps
    if keep_recent_tokens is not None:
        from hookloop.worker import estimate_tokens

        while index < len(cuts) - 1 and sum(estimate_tokens(i) for i in history[cuts[index] :]) > keep_recent_tokens:
            index += 1
    cut = cuts[index]
    middle = tuple(history[head_end:cut])
    if not middle:
        return None
    return CompactionPlan(head=tuple(history[:head_end]), middle=middle, tail=tuple(history[cut:]))


def render_for_summary(items: Sequence[Item], *, per_item_chars: int = 2_000) -> str:
    """The items as a plain-text transcript for the summarising model (no tool-call structure to validate)."""
    lines: list[str] = []
    for item in items:
        label: str
        if isinstance(item, Message):
            text = item.text
            label = item.role
        elif isinstance(item, ToolCall):
            from hookloop._frozen import dumps

            text = dumps(item.arguments, ensure_ascii=False) if item.raw_arguments is None else item.raw_arguments
            label = f"tool call {item.name}"
        elif isinstance(item, ToolResult):
            text = item.content
            label = f"tool result {item.name}{' (error)' if item.is_error else ''}"
        else:
            assert isinstance(item, (Reasoning, ProviderBlock))
            continue
        if len(text) > per_item_chars:
            text = text[:per_item_chars] + f" […{len(text) - per_item_chars} characters omitted]"
        lines.append(f"[{label}] {text}")
    return "\n".join(lines)


class Compaction:
    """Compacts the history when a request's token estimate passes ``threshold_tokens`` (or
    ``threshold_ratio`` × ``context_window``).

    ``strategy="summarize"`` asks the Worker's client for a summary of the older part (one extra model
    request); ``"drop"`` replaces it with a marker. pre_compact hooks may cancel; if the history then does not
    fit ``context_window``, the run fails with :class:`hookloop.errors.ContextWindowExceeded`.
    """

    def __init__(
        self,
        *,
        context_window: int | None = None,
        threshold_tokens: int | None = None,
        threshold_ratio: float = 0.8,
        keep_recent_steps: int = 6,
        keep_recent_tokens: int | None = None,
        strategy: Literal["summarize", "drop"] = "summarize",
        instructions: str = DEFAULT_INSTRUCTIONS,
    ) -> None:
        if threshold_tokens is None and context_window is None:
            raise ValueError("Compaction needs threshold_tokens or context_window")
        self.context_window = context_window
        self.threshold = threshold_tokens if threshold_tokens is not None else int(context_window * threshold_ratio)  # type: ignore[operator]
        self.keep_recent_steps = keep_recent_steps
        self.keep_recent_tokens = keep_recent_tokens
        self.strategy = strategy
        self.instructions = instructions

    async def pre_llm_request(self, ctx: RequestContext) -> str | None:
        return COMPACT if ctx.token_estimate > self.threshold else None

    async def compact(self, ctx: CompactionContext) -> None:
        plan = plan_compaction(
            ctx.history, keep_recent_steps=self.keep_recent_steps, keep_recent_tokens=self.keep_recent_tokens
        )
        if plan is None:
            return
        if self.strategy == "summarize":
            summary = await self._summarise(ctx, plan.middle)
            body = f'<compacted-history items="{len(plan.middle)}">\n{summary}\n</compacted-history>'
        else:
            summary = ""
            body = f'<compacted-history items="{len(plan.middle)}">(older conversation dropped)</compacted-history>'
        marker = Message.user(body, meta={"source": "compaction", "items_replaced": len(plan.middle)})
        ctx.history = [*plan.head, marker, *plan.tail]
        ctx.summary = summary
        ctx.changed = True

    async def _summarise(self, ctx: CompactionContext, middle: Sequence[Item]) -> str:
        request = LLMRequest(
            system=self.instructions,
            items=(Message.user(render_for_summary(middle)),),
            tools=(),
            model=ctx.model,
        )
        parts: list[str] = []
        stream = ctx.client.stream(request)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, StreamError):
                    raise ClientError(
                        f"compaction: the summary request failed: {event.message}", provider=ctx.client.provider
                    )
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        return "".join(parts).strip() or "(the summariser returned nothing)"
