"""The model step: one stream, per event timeline → on_stream_chunk → on_text_delta / on_tool_call_delta.

The hottest path in hookloop (one pass per delta); see :meth:`_StreamStep._run_model_step`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from json.scanner import make_scanner
from types import AsyncGeneratorType
from typing import Any

from hookloop._build import (
    hook_decision,
    model_request_ended,
    model_request_started,
    text_message,
    tool_call,
    usage_sum,
)
from hookloop._frozen import EMPTY, FrozenDict, freeze_parsed
from hookloop._run_base import _RunBase, describe
from hookloop.effects import Effect, events_from_json, events_to_json
from hookloop.errors import (
    Aborted,
    ClientError,
)
from hookloop.hooks._dispatch import Handler, dispatch, dispatch_sync, raised, settle
from hookloop.hooks.events import (
    ON_STREAM_CHUNK,
    ON_STREAM_COMPLETE,
    ON_TEXT_DELTA,
    ON_TOOL_CALL_DELTA,
    HookEvent,
)
from hookloop.hooks.results import (
    _PLAIN,
    Continue,
    Pause,
)
from hookloop.hooks.summaries import (
    StreamCompleteInfo,
)
from hookloop.items import Item, ProviderBlock, Reasoning, ToolCall
from hookloop.providers.base import LLMRequest
from hookloop.stream import (
    BlockStart,
    BlockStop,
    NativeBlock,
    StopEvent,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)

__all__: list[str] = []

_NO_USAGE = Usage()


class _Block:
    __slots__ = ("call_id", "data", "kind", "meta", "name", "parts", "redacted", "signature")

    def __init__(
        self, kind: str, call_id: str | None = None, name: str | None = None, meta: FrozenDict = EMPTY
    ) -> None:
        self.kind = kind
        self.call_id = call_id
        self.name = name
        self.meta = meta
        self.parts: list[str] = []
        self.signature: str | None = None
        self.redacted: str | None = None
        self.data: FrozenDict = EMPTY  # a native block's whole content (kind "native"; name = provider)


class _Reply:
    """What one stream has built so far: blocks by index, usage, and the current text block's ``append``."""

    __slots__ = ("blocks", "count", "provider", "stop_reason", "text_index", "text_parts", "usage")

    def __init__(self, provider: str) -> None:
        self.blocks: dict[int, _Block] = {}
        self.count = 0  # events other than text deltas (each of those adds one part; counted at the end)
        self.usage: Usage | None = None
        self.stop_reason: str | None = None
        self.text_index = -1
        self.text_parts: Any = None  # the current text block's parts
        self.provider = provider

    def take(self, event: StreamEvent) -> None:
        """Record one event (the fast paths handle text deltas of the current block themselves)."""
        cls = type(event)
        if cls is TextDelta:
            text: TextDelta = event  # type: ignore[assignment]
            block = self.blocks.get(text.index)
            if block is None:
                self.blocks[text.index] = block = _Block("text")
            self.text_index, self.text_parts = text.index, block.parts
            block.parts.append(text.text)
            return
        self.count += 1
        if cls is ToolCallDelta:
            fragment: ToolCallDelta = event  # type: ignore[assignment]
            try:
                self.blocks[fragment.index].parts.append(fragment.fragment)
            except KeyError:
                raise ClientError(
                    f"the provider sent tool-call JSON for block {fragment.index} before starting it",
                    provider=self.provider,
                ) from None
        elif cls is BlockStart:
            start: BlockStart = event  # type: ignore[assignment]
            self.blocks[start.index] = _Block(start.kind, start.call_id, start.name, start.meta)
            if start.index == self.text_index:
                self.text_index = -1
        elif cls is BlockStop:
            return  # nothing to record (the common events first: each test costs every later event)
        elif cls is UsageEvent:
            reported: UsageEvent = event  # type: ignore[assignment]
            # A new Usage either way: the event's own may be changed by force by a hook that sees the event.
            given, so_far = reported.usage, _NO_USAGE if self.usage is None else self.usage
            self.usage = usage_sum(so_far, given) if type(given) is Usage else so_far + given
        elif cls is StopEvent:
            stop: StopEvent = event  # type: ignore[assignment]
            self.stop_reason = stop.reason
        elif cls is NativeBlock:
            native: NativeBlock = event  # type: ignore[assignment]
            block = self.blocks[native.index] = _Block("native", None, native.provider)
            block.data = native.data
            if native.index == self.text_index:
                self.text_index = -1
        elif cls is ThinkingDelta:
            thinking: ThinkingDelta = event  # type: ignore[assignment]
            block = self.blocks.get(thinking.index)
            if block is None:
                self.blocks[thinking.index] = block = _Block("thinking")
            if thinking.text:
                block.parts.append(thinking.text)
            if thinking.signature is not None:
                block.signature = thinking.signature
            if thinking.redacted is not None:
                block.redacted = thinking.redacted
        elif cls is StreamError:
            error: StreamError = event  # type: ignore[assignment]
            raise ClientError(
                f"{self.provider} stream error ({error.kind}): {error.message}",
                provider=self.provider,
                retryable=error.retryable,
            )

    @property
    def event_count(self) -> int:
        return self.count + sum(len(b.parts) for b in self.blocks.values() if b.kind == "text")


class _StreamStep(_RunBase):
    """Streams one model reply and builds its items."""

    def _stream_decided(self, event: HookEvent[Any, Any], decided: tuple[Any, Handler]) -> None:
        result, handler = decided
        decision, reason = describe(result)
        if self.w.timeline.subscribers:
            self.w.timeline.emit(hook_decision(event.name, handler.name, handler.source, decision, reason, 0.0, None))
        if isinstance(result, Pause):
            raise Aborted("Paused by stream hook", hook=handler.name, event=event.name)
        raise Aborted(result.reason, hook=handler.name, event=event.name)

    async def _run_model_step(self, request: LLMRequest) -> tuple[list[Item], list[ToolCall]]:
        """Stream one reply; per event: timeline, on_stream_chunk, then on_text_delta / on_tool_call_delta.

        The hottest path (one pass per delta): a text delta of the current block is appended without a dict
        lookup or a call; with nobody listening that is all the loop does. A lone text hook is called inline.
        """
        w = self.w
        chains = w.hooks.chains
        chunk_chain = chains[ON_STREAM_CHUNK.index]
        text_chain = chains[ON_TEXT_DELTA.index]
        tool_chain = chains[ON_TOOL_CALL_DELTA.index]
        emit = w.timeline.emit if w.timeline.subscribers else None
        reply = _Reply(w.client.provider)
        take = reply.take
        text_index = -1
        text_parts: Any = None  # the current text block's parts (its index: text_index)
        timeline = w.timeline
        if timeline.subscribers:
            timeline.emit(model_request_started(self.run_id, self.turn, request.model, w.client.provider))
        failure: str | None = None
        stream = w.client.stream(request) if self.effects is None else await self._recorded_reply(request)
        try:
            if emit is None and not chunk_chain and not text_chain and not tool_chain:
                # Nobody listening: the common events are recorded here as `take` would record them.
                blocks = reply.blocks
                async for event in stream:
                    if type(event) is TextDelta and event.index == text_index:
                        text_parts.append(event.text)
                        continue
                    cls = type(event)
                    if cls is ToolCallDelta:
                        block = blocks.get(event.index)  # type: ignore[union-attr]
                        if block is not None:
                            block.parts.append(event.fragment)  # type: ignore[union-attr]
                            reply.count += 1
                            continue
                    elif cls is BlockStart:
                        start: BlockStart = event  # type: ignore[assignment]
                        blocks[start.index] = _Block(start.kind, start.call_id, start.name, start.meta)
                        reply.count += 1
                        if start.index == text_index:
                            reply.text_index = text_index = -1
                        continue
                    elif cls is BlockStop:
                        reply.count += 1
                        continue
                    take(event)
                    text_index, text_parts = reply.text_index, reply.text_parts
            elif emit is not None and not chunk_chain and not text_chain and not tool_chain:
                # Watched, with no stream hook (a UI, a transcript, iter_run): each event is recorded as `take`
                # records it, then emitted; a stream error is raised after the subscribers saw it, as below.
                blocks = reply.blocks
                async for event in stream:
                    cls = type(event)
                    if cls is TextDelta and event.index == text_index:  # type: ignore[union-attr]
                        text_parts.append(event.text)  # type: ignore[union-attr]
                    elif cls is ToolCallDelta and event.index in blocks:  # type: ignore[union-attr]
                        blocks[event.index].parts.append(event.fragment)  # type: ignore[union-attr]
                        reply.count += 1
                    elif cls is BlockStop:
                        reply.count += 1
                    elif cls is not StreamError:
                        take(event)
                        text_index, text_parts = reply.text_index, reply.text_parts
                    emit(event)
                    if cls is StreamError:
                        take(event)  # raises
            elif not chunk_chain and not tool_chain and text_chain.all_sync:
                # Only sync on_text_delta hooks, watched or not (the UI-less case, iter_run): the general loop
                # below, with every test that cannot pass taken out — same order, same decisions, same errors.
                # A hook's plain Continue() is one shared object: one identity test passes it on.
                handlers = tuple(text_chain)
                async for event in stream:
                    if type(event) is not TextDelta:
                        if type(event) is StreamError:
                            if emit is not None:
                                emit(event)
                            take(event)  # raises, after the subscribers saw it (as below)
                        take(event)
                        text_index, text_parts = reply.text_index, reply.text_parts
                        if emit is not None:
                            emit(event)
                        continue
                    if event.index == text_index:
                        text_parts.append(event.text)
                    else:
                        take(event)
                        text_index, text_parts = reply.text_index, reply.text_parts
                    if emit is not None:
                        emit(event)
                    for handler in handlers:
                        fn = handler.fn  # (a slot read: `handler.fn(…)` is an uncached method lookup)
                        try:
                            result = fn(event)
                        except Aborted:
                            raise
                        except Exception as exc:
                            raise raised(ON_TEXT_DELTA, handler, exc) from exc
                        if result is not _PLAIN and type(result) is not Continue:
                            self._stream_decided(ON_TEXT_DELTA, settle(ON_TEXT_DELTA, handler, result))
            else:
                text_sync = tuple(text_chain) if text_chain and text_chain.all_sync else None
                text_single = text_chain.single if text_sync is None else None  # then an async hook
                single_fn = None if text_single is None else text_single.fn
                chunk_sync, tool_sync = chunk_chain.all_sync, tool_chain.all_sync  # (chains never change)
                async for event in stream:
                    # The reply takes what it needs from the event before any subscriber or hook sees it (they
                    # may force a change to it); a stream error is raised after they saw it.
                    cls = type(event)
                    if cls is TextDelta:
                        delta: TextDelta = event  # type: ignore[assignment]
                        if delta.index == text_index:
                            text_parts.append(delta.text)
                        else:
                            take(delta)
                            text_index, text_parts = reply.text_index, reply.text_parts
                    elif cls is not StreamError:
                        take(event)
                        text_index, text_parts = reply.text_index, reply.text_parts
                    if emit is not None:
                        emit(event)
                    if chunk_chain:
                        decided = (
                            dispatch_sync(ON_STREAM_CHUNK, chunk_chain, event)
                            if chunk_sync
                            else await dispatch(ON_STREAM_CHUNK, chunk_chain, event)
                        )
                        if decided is not None:
                            self._stream_decided(ON_STREAM_CHUNK, decided)
                    if cls is TextDelta:
                        text: TextDelta = event  # type: ignore[assignment]
                        if text_sync is not None:  # sync hooks: called inline, as in the loop above
                            for handler in text_sync:
                                fn = handler.fn
                                try:
                                    result = fn(text)
                                except Aborted:
                                    raise
                                except Exception as exc:
                                    raise raised(ON_TEXT_DELTA, handler, exc) from exc
                                if type(result) is not Continue:
                                    self._stream_decided(ON_TEXT_DELTA, settle(ON_TEXT_DELTA, handler, result))
                        elif text_single is not None:  # one async hook: called inline, no dispatch frame
                            try:
                                result = await single_fn(text)  # type: ignore[misc]
                            except Aborted:
                                raise
                            except Exception as exc:
                                raise raised(ON_TEXT_DELTA, text_single, exc) from exc
                            if type(result) is not Continue:
                                self._stream_decided(ON_TEXT_DELTA, settle(ON_TEXT_DELTA, text_single, result))
                        elif text_chain:  # async hooks among several
                            decided = await dispatch(ON_TEXT_DELTA, text_chain, text)
                            if decided is not None:
                                self._stream_decided(ON_TEXT_DELTA, decided)
                        continue
                    if cls is StreamError:
                        take(event)  # raises
                    if cls is ToolCallDelta and tool_chain:
                        decided = (
                            dispatch_sync(ON_TOOL_CALL_DELTA, tool_chain, event)
                            if tool_sync
                            else await dispatch(ON_TOOL_CALL_DELTA, tool_chain, event)
                        )
                        if decided is not None:
                            self._stream_decided(ON_TOOL_CALL_DELTA, decided)
        except BaseException as exc:
            failure = "cancelled" if isinstance(exc, asyncio.CancelledError) else f"{type(exc).__name__}: {exc}"
            raise
        finally:
            # An async generator that ran to its end is closed already (aclose would do nothing): no await.
            if type(stream) is not AsyncGeneratorType or stream.ag_frame is not None:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
            if timeline.subscribers:
                timeline.emit(model_request_ended(self.run_id, self.turn, reply.usage, reply.stop_reason, failure))
        got = reply.usage
        if got is not None:
            exact = type(got) is Usage and type(self.usage) is Usage
            self.usage = usage_sum(self.usage, got) if exact else self.usage + got
        self.stop_reason = reply.stop_reason
        complete = chains[ON_STREAM_COMPLETE.index]
        if complete:
            info = StreamCompleteInfo(turn=self.turn, event_count=reply.event_count)
            decided = await dispatch(ON_STREAM_COMPLETE, complete, info)
            if decided is not None:
                self._stream_decided(ON_STREAM_COMPLETE, decided)
        return self._build_reply(reply.blocks)

    async def _recorded_reply(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """The model call as an effect (a durable run): the reply's events are collected (and recorded by the
        backend), then replayed to the stream code below as if they streamed: hooks and interceptors see the
        same events on a replay as the first time."""
        assert self.effects is not None
        self.model_requests += 1
        client = self.w.client

        async def call() -> list[StreamEvent]:
            stream = client.stream(request)
            try:
                return [event async for event in stream]
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()

        events = await self.effects.perform(
            Effect(
                kind="model",
                key=f"model:{self.turn}.{self.model_requests}",
                describe={"turn": self.turn, "model": request.model, "provider": client.provider},
                perform=call,
                encode=events_to_json,
                decode=events_from_json,
            )
        )
        return _replay(events)

    def _build_reply(self, blocks: dict[int, _Block]) -> tuple[list[Item], list[ToolCall]]:
        items: list[Item] = []
        calls: list[ToolCall] = []
        texts: list[str] = []
        for index in sorted(blocks):
            block = blocks[index]
            if block.kind == "text":
                text = "".join(block.parts)
                if text:
                    texts.append(text)
                    items.append(text_message("assistant", text, block.meta))
            elif block.kind == "thinking":
                items.append(
                    Reasoning(
                        text="".join(block.parts),
                        signature=block.signature,
                        redacted=block.redacted,
                        provider=self.w.client.provider,
                        meta=block.meta,
                    )
                )
            elif block.kind == "native":
                items.append(ProviderBlock(provider=block.name or self.w.client.provider, data=block.data))
            else:
                call = _parse_call(block, index)
                calls.append(call)
                items.append(call)
        self.last_text = "\n".join(texts)
        return items, calls


_decoder = json.JSONDecoder()
_decode = _decoder.decode  # json.loads without its per-call checks (the text is always a str)
_scan: Any = make_scanner(_decoder)  # type: ignore[arg-type]  # one value at an index: (value, end) or StopIteration


def _parse_call(block: _Block, index: int) -> ToolCall:
    raw = "".join(block.parts)
    call_id = block.call_id or f"call_{index}"
    name = block.name or ""
    meta = block.meta if block.meta else EMPTY  # a call's meta is the block's when it has any
    if not raw.strip():
        return tool_call(call_id, name, EMPTY, None, meta)
    try:  # the usual text: one value, with no whitespace around it
        value, end = _scan(raw, 0)
    except (StopIteration, ValueError):
        end = -1
    if end != len(raw):  # anything else is read (or refused) as json.loads reads it
        try:
            value = _decode(raw)
        except ValueError:
            return tool_call(call_id, name, EMPTY, raw, meta)
    if type(value) is not dict:
        return tool_call(call_id, name, EMPTY, raw, meta)
    return tool_call(call_id, name, freeze_parsed(value), None, meta)


async def _replay(events: list[StreamEvent]) -> AsyncIterator[StreamEvent]:
    for event in events:
        yield event
