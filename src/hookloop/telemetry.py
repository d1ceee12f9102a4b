"""OpenTelemetry spans for runs, model requests, tool calls and hook executions (extra: ``hookloop[otel]``).

A timeline subscriber, so telemetry that is off costs nothing: install it and every run of the Worker emits,
following the OpenTelemetry GenAI semantic conventions::

    invoke_agent hookloop                  gen_ai.operation.name=invoke_agent, gen_ai.conversation.id, hookloop.outcome
    ├─ chat <model>                        gen_ai.operation.name=chat, gen_ai.request.model, gen_ai.provider.name,
    │                                      gen_ai.usage.input_tokens / output_tokens, gen_ai.response.finish_reasons
    ├─ hook pre_tool_call                  hookloop.hook.name / source / decision / reason (timed by the hook)
    └─ execute_tool <name>                 gen_ai.operation.name=execute_tool, gen_ai.tool.name, gen_ai.tool.call.id
       └─ invoke_agent <subagent type>     a subagent's run (hookloop.agents), nested the same way under its call

Errors set the span status (a failed model request, a tool error result, a run that did not finish)::

    from hookloop.telemetry import OpenTelemetry
    OpenTelemetry().install(worker)          # uses the global tracer provider
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("hookloop.telemetry needs OpenTelemetry: pip install 'hookloop[otel]'") from exc

from hookloop.timeline import (
    HookDecision,
    ModelRequestEnded,
    ModelRequestStarted,
    RunEnded,
    RunStarted,
    SubagentEnded,
    SubagentEvent,
    SubagentStarted,
    TimelineEvent,
    ToolEnded,
    ToolStarted,
)

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["OpenTelemetry"]

_PASSES = ("Continue", "Finish")


class OpenTelemetry:
    """Turns a Worker's timeline into spans. ``tracer`` defaults to ``trace.get_tracer("hookloop")``."""

    def __init__(self, tracer: Tracer | None = None, *, agent_name: str = "hookloop") -> None:
        self.tracer = tracer or trace.get_tracer("hookloop")
        self.agent_name = agent_name
        self._run: Span | None = None
        self._model: Span | None = None
        self._tools: dict[str, Span] = {}
        self._parent: Span | None = None
        """A subagent's telemetry: the span of the call that runs it."""
        self._agents: dict[str, OpenTelemetry] = {}

    def install(self, worker: Worker) -> Callable[[], None]:
        """Subscribe to ``worker``'s timeline; returns a function that stops the telemetry."""
        return worker.subscribe(self)

    def _child(self, name: str, kind: SpanKind = SpanKind.INTERNAL, start_time: int | None = None) -> Span:
        context = trace.set_span_in_context(self._run) if self._run is not None else None
        return self.tracer.start_span(name, context=context, kind=kind, start_time=start_time)

    def __call__(self, event: TimelineEvent) -> None:
        if isinstance(event, SubagentEvent):
            nested = self._agents.get(event.agent_id)
            if nested is not None:
                nested(event.event)
        elif isinstance(event, SubagentStarted):
            nested = OpenTelemetry(self.tracer, agent_name=event.agent_type)
            nested._parent = self._tools.get(event.call_id, self._run)
            self._agents[event.agent_id] = nested
        elif isinstance(event, SubagentEnded):
            self._agents.pop(event.agent_id, None)
        elif isinstance(event, RunStarted):
            context = trace.set_span_in_context(self._parent) if self._parent is not None else None
            self._run = self.tracer.start_span(
                f"invoke_agent {self.agent_name}", context=context, kind=SpanKind.INTERNAL
            )
            self._run.set_attributes(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": self.agent_name,
                    "gen_ai.conversation.id": event.session_id,
                    "hookloop.run_id": event.run_id,
                    "hookloop.source": event.source,
                }
            )
        elif isinstance(event, ModelRequestStarted):
            self._model = self._child(f"chat {event.model or event.provider}", SpanKind.CLIENT)
            self._model.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": event.provider,
                    "gen_ai.request.model": event.model or "",
                    "hookloop.turn": event.turn,
                }
            )
        elif isinstance(event, ModelRequestEnded) and self._model is not None:
            span, self._model = self._model, None
            if event.usage is not None:
                span.set_attribute("gen_ai.usage.input_tokens", event.usage.input_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", event.usage.output_tokens)
            if event.stop_reason is not None:
                span.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
            if event.error is not None:
                span.set_status(Status(StatusCode.ERROR, event.error))
            span.end()
        elif isinstance(event, ToolStarted):
            span = self._child(f"execute_tool {event.tool_name}")
            span.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.tool_name,
                    "gen_ai.tool.call.id": event.call_id,
                }
            )
            self._tools[event.call_id] = span
        elif isinstance(event, ToolEnded):
            tool_span = self._tools.pop(event.call_id, None)
            if tool_span is not None:
                if event.is_error:
                    tool_span.set_status(Status(StatusCode.ERROR, "the tool returned an error result"))
                tool_span.end()
        elif isinstance(event, HookDecision):
            end = time.time_ns()
            hook_span = self._child(f"hook {event.event}", start_time=end - int(event.seconds * 1e9))
            hook_span.set_attributes(
                {
                    "hookloop.hook.event": event.event,
                    "hookloop.hook.name": event.hook,
                    "hookloop.hook.source": event.source,
                    "hookloop.hook.decision": event.decision,
                }
            )
            if event.reason is not None:
                hook_span.set_attribute("hookloop.hook.reason", event.reason)
            if event.call_id is not None:
                hook_span.set_attribute("gen_ai.tool.call.id", event.call_id)
            if event.decision in ("HookError", "HookFailed"):
                hook_span.set_status(Status(StatusCode.ERROR, event.reason or event.decision))
            hook_span.end(end_time=end)
        elif isinstance(event, RunEnded) and self._run is not None:
            run, self._run = self._run, None
            for leftover in self._tools.values():  # cancelled mid-call: close what is open
                leftover.set_status(Status(StatusCode.ERROR, "the run ended before the tool finished"))
                leftover.end()
            self._tools.clear()
            run.set_attribute("hookloop.outcome", event.outcome)
            if event.outcome not in ("finished", "paused"):
                run.set_status(Status(StatusCode.ERROR, event.detail or event.outcome))
            run.end()
