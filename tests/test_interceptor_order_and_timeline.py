"""Interceptors run before hooks and hooks see what they produced; timeline subscribers; the demo command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import echo
from hookloop import Aborted, Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Abort, Continue, Pause, PostToolCallInfo, PreLlmRequestInfo, PreToolCallInfo
from hookloop.interceptors import STOP_CHAIN, RequestContext, ToolCallView, ToolResultView

pytestmark = pytest.mark.anyio


class Sanitiser:
    """An application interceptor: rewrites arguments and masks results, and sees the request copy."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def pre_llm_request(self, ctx: RequestContext) -> None:
        self.log.append(f"interceptor.pre_llm_request:{len(ctx.items)}")

    async def pre_tool_call(self, call: ToolCallView) -> None:
        self.log.append("interceptor.pre_tool_call")
        call.arguments["text"] = str(call.arguments["text"]).upper()

    async def post_tool_call(self, result: ToolResultView) -> None:
        self.log.append("interceptor.post_tool_call")
        result.content = result.content.replace("SECRET", "******")
        result.notes["masked_by"] = "Sanitiser"


class Stopper:
    async def pre_tool_call(self, call: ToolCallView) -> str:
        return STOP_CHAIN


async def test_interceptors_run_first_and_hooks_observe_their_output() -> None:
    log: list[str] = []
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "the secret"})], [Text("ok")]]), tools=[echo])
    worker.add_interceptor(Sanitiser(log))

    def pre_llm(info: PreLlmRequestInfo) -> Continue:
        log.append("hook.pre_llm_request")
        return Continue()

    def pre(info: PreToolCallInfo) -> Continue:
        log.append(f"hook.pre_tool_call:{info.arguments['text']}")
        return Continue()

    def post(info: PostToolCallInfo) -> Continue:
        log.append(f"hook.post_tool_call:{info.content}")
        return Continue()

    worker.add_pre_llm_request_hook(pre_llm)
    worker.add_pre_tool_call_hook(pre)
    worker.add_post_tool_call_hook(post)
    await worker.run("go")
    assert log == [
        "interceptor.pre_llm_request:1",
        "hook.pre_llm_request",
        "interceptor.pre_tool_call",
        "hook.pre_tool_call:THE SECRET",
        "interceptor.post_tool_call",
        "hook.post_tool_call:THE ******",
        "interceptor.pre_llm_request:3",
        "hook.pre_llm_request",
    ]
    result = next(i for i in worker.history if isinstance(i, ToolResult))
    assert result.content == "THE ******"
    assert result.meta["masked_by"] == "Sanitiser"


async def test_a_hook_can_still_stop_what_an_interceptor_prepared_and_stop_chain_skips_later_interceptors() -> None:
    log: list[str] = []
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "x"})], [Text("ok")]]), tools=[echo])
    worker.add_interceptor(Stopper())
    worker.add_interceptor(Sanitiser(log))
    worker.add_pre_tool_call_hook(lambda info: Abort(f"saw {info.arguments['text']}"))
    with pytest.raises(Aborted, match="saw x"):
        await worker.run("go")
    assert "interceptor.pre_tool_call" not in log


def test_an_interceptor_must_implement_a_point() -> None:
    worker = Worker(ScriptedClient([]))
    with pytest.raises(TypeError, match="implements none of"):
        worker.add_interceptor(object())


async def test_a_failing_timeline_subscriber_never_breaks_the_run() -> None:
    worker = Worker(ScriptedClient([[Text("fine")]]))
    got: list[Any] = []

    def broken(event: object) -> None:
        raise RuntimeError("subscriber bug")

    worker.subscribe(broken)
    unsubscribe = worker.subscribe(got.append)
    outcome = await worker.run("q")
    assert outcome.text == "fine"  # type: ignore[union-attr]
    assert got
    unsubscribe()
    count = len(got)
    worker.client = ScriptedClient([[Text("again")]])
    await worker.run("q2")
    assert len(got) == count


async def test_on_abort_fires_once_for_a_failed_resume(tmp_path: Path) -> None:
    worker = Worker(ScriptedClient([[ToolUse("echo", {"text": "x"}, call_id="c1")], [Text("ok")]]), tools=[echo])
    worker.add_pre_tool_call_hook(lambda info: Pause("wait"))
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    reasons: list[str] = []
    worker.add_on_abort_hook(lambda info: reasons.append(info.reason))  # type: ignore[arg-type,func-returns-value]
    worker.add_post_tool_call_hook(lambda info: Abort("post says no"))
    from hookloop import Approve

    with pytest.raises(Aborted):
        await worker.resume(paused.checkpoint, {"c1": Approve()})
    assert reasons == ["post says no"]


def test_hookloop_demo_runs_offline_and_shows_each_hook_decision() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from hookloop.cli import main; main()", "demo", "--yes", "--keep"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "250", "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": "/nonexistent"},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "hook .hookloop/hooks/guard.py (Project: " in out
    assert "on PreToolUse → Deny: rm -rf is blocked in this project" in out
    assert "on PostToolUse → Continue: context: formatted CHANGES.md (trailing spaces removed)" in out
    assert "on Stop → Block: Answer as a 'Summary:' bullet list" in out
    assert "interceptor MaskSecrets masked a secret in Read's output" in out
    assert 'run paused — Bash: needs approval under rule "Bash(rm:*)"' in out
    assert "--yes answers 'allow once'" in out
    assert "sk-live" not in out
    assert "build/ kept: True · notes.tmp removed: True" in out
    assert "run summary" in out
    import re

    root = re.search(r"(/\S*hookloop-demo-\w+)", out)
    assert root is not None
    project = Path(root.group(1))
    assert (project / "CHANGES.md").read_text() == "# Changes\n- removed notes.tmp\n"  # the formatter hook ran
    try:
        lines = [json.loads(x) for x in (project / ".hookloop" / "transcript.jsonl").read_text().splitlines()]
        assert any(x["type"] == "hook" and x["hook"] == ".hookloop/hooks/guard.py" for x in lines)
    finally:
        shutil.rmtree(project)  # --keep kept it for these checks
