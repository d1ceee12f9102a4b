"""OpenTelemetry spans from a real SDK tracer provider with an in-memory exporter (no mock)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from helpers import boom, echo
from hookloop import ClientError, ScriptedClient, ScriptedTurn, ScriptError, Text, ToolUse, Worker
from hookloop.hooks import Continue
from hookloop.telemetry import OpenTelemetry

pytestmark = pytest.mark.anyio


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def telemetry(exporter: InMemorySpanExporter) -> OpenTelemetry:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetry(provider.get_tracer("test"))


async def test_runs_model_requests_tools_and_hooks_become_genai_spans(exporter: InMemorySpanExporter) -> None:
    client = ScriptedClient([[ToolUse("echo", {"text": "hi"}, call_id="c1"), ToolUse("boom", {})], [Text("done")]])
    worker = Worker(client, tools=[echo, boom], model="m-1")
    worker.add_pre_tool_call_hook(lambda info: Continue(updated_input=dict(info.arguments)))
    telemetry(exporter).install(worker)
    await worker.run("go")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    run = spans["invoke_agent hookloop"]
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.conversation.id"] == worker.session_id
    assert run.attributes["hookloop.outcome"] == "finished"
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat m-1"]
    assert len(chats) == 2
    assert chats[0].attributes["gen_ai.usage.input_tokens"] == 16
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    tool = spans["execute_tool echo"]
    assert (tool.attributes["gen_ai.tool.name"], tool.attributes["gen_ai.tool.call.id"]) == ("echo", "c1")
    assert spans["execute_tool boom"].status.status_code is StatusCode.ERROR
    hook = spans["hook pre_tool_call"]
    assert hook.attributes["hookloop.hook.decision"] == "Continue"
    for child in (chats[0], tool, hook):
        assert child.parent is not None
        assert child.parent.span_id == run.context.span_id


async def test_a_failed_model_request_and_run_are_error_spans(exporter: InMemorySpanExporter) -> None:
    worker = Worker(ScriptedClient([ScriptedTurn([Text("partial")], error=ScriptError("overloaded", after_events=2))]))
    telemetry(exporter).install(worker)
    with pytest.raises(ClientError):
        await worker.run("q")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["chat scripted"].status.status_code is StatusCode.ERROR
    assert "overloaded" in (spans["chat scripted"].status.description or "")
    assert spans["invoke_agent hookloop"].status.status_code is StatusCode.ERROR


async def test_uninstalled_telemetry_emits_nothing(exporter: InMemorySpanExporter) -> None:
    worker = Worker(ScriptedClient([[Text("a")], [Text("b")]]))
    stop = telemetry(exporter).install(worker)
    await worker.run("one")
    count = len(exporter.get_finished_spans())
    stop()
    await worker.run("two")
    assert len(exporter.get_finished_spans()) == count
