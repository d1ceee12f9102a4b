"""``prompt``, ``agent`` and ``mcp_tool`` hook handlers in live Worker runs: the judge model is hookloop's
scripted client (the same client the Worker uses, so its requests are recorded next to the main ones), the
agent's sub-run reads real files with the real Read tool, and ``mcp_tool`` calls a real MCP server (the SDK's
FastMCP over stdio, in a subprocess started by the test)."""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Any

import pytest

from hookloop import Finished, ScriptedTurn, Text, ToolResult, ToolUse, tool
from hookloop.command_hooks._llm_handlers import (
    AGENT_MAX_TURNS,
    Verdict,
    default_judge_timeout,
    parse_verdict,
    render_prompt,
)
from hookloop.command_hooks._mcp_handler import fill_template, mcp_tool_timeout
from hookloop.command_hooks.config import parse_settings
from hookloop.command_hooks.model import HookSource, McpToolHandler, PromptHandler
from hookloop.items import Message
from hookloop.providers.base import LLMRequest
from hookloop.providers.scripted import ScriptedClient

from .test_worker_command_hooks import Env, Shell, env, hook_decisions, results, worker_for

__all__ = ["env"]  # the fixture, imported for these tests

pytestmark = pytest.mark.anyio


def handler_group(handler: dict[str, Any], *, matcher: str | None = None) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        entry["matcher"] = matcher
    return [entry]


def verdict(ok: bool, reason: str | None = None, **extra: Any) -> list[Text]:
    answer: dict[str, Any] = {"ok": ok, **extra}
    if reason is not None:
        answer["reason"] = reason
    return [Text(json.dumps(answer))]


def judge_requests(client: ScriptedClient) -> list[LLMRequest]:
    return [r for r in client.requests if r.system and '"ok": true' in r.system]


def main_requests(client: ScriptedClient) -> list[LLMRequest]:
    return [r for r in client.requests if not (r.system and '"ok": true' in r.system)]


def user_text(request: LLMRequest) -> str:
    first = request.items[0]
    assert isinstance(first, Message)
    return first.text


# --------------------------------------------------------------------------------------------------------------
# prompt
# --------------------------------------------------------------------------------------------------------------

STOP_JUDGE = {
    "type": "prompt",
    "prompt": "Did the assistant run the test suite before it stopped? Hook input: $ARGUMENTS",
}


async def test_a_stop_prompt_hook_that_says_not_ok_keeps_the_run_going_with_its_reason(env: Env) -> None:
    env.settings({"Stop": handler_group(STOP_JUDGE)})
    turns = [
        [Text("I changed the parser.")],
        verdict(False, "Run the test suite before finishing."),
        [Text("Ran pytest: all green.")],
        verdict(True),
    ]
    worker, client, events = worker_for(env, turns)
    outcome = await worker.run("fix the parser")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Ran pytest: all green."
    first, second = judge_requests(client)
    asked = user_text(first)
    assert asked.startswith("Did the assistant run the test suite before it stopped? Hook input: {")
    assert "$ARGUMENTS" not in asked
    payload = json.loads(asked.split("Hook input: ", 1)[1])
    assert payload["hook_event_name"] == "Stop"
    assert payload["last_assistant_message"] == "I changed the parser."
    assert payload["stop_hook_active"] is False
    assert json.loads(user_text(second).split("Hook input: ", 1)[1])["stop_hook_active"] is True
    assert first.tools == ()
    later = main_requests(client)[1]
    assert any(isinstance(i, Message) and "Run the test suite before finishing." in i.text for i in later.items)
    decisions = [d.decision for d in hook_decisions(events, "Stop")]
    assert decisions == ["Block", "Continue"]


async def test_impossible_true_lets_the_run_finish(env: Env) -> None:
    env.settings({"Stop": handler_group(STOP_JUDGE)})
    turns = [[Text("No tests exist here.")], verdict(False, "run tests", impossible=True)]
    worker, client, _ = worker_for(env, turns)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert outcome.text == "No tests exist here."
    assert len(client.requests) == 2


BASH_JUDGE = {
    "type": "prompt",
    "prompt": "Is this shell command safe to run in a developer's checkout? Deny anything destructive.",
    "model": "claude-haiku-4-5",
}


async def test_a_pretooluse_prompt_deny_ends_the_turn_by_default(env: Env) -> None:
    env.settings({"PreToolUse": handler_group(BASH_JUDGE, matcher="Bash")})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "rm -rf ~/projects"})], verdict(False, "Deletes the user's projects.")]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool], model="main-model")
    outcome = await worker.run("clean up")
    assert isinstance(outcome, Finished)
    assert (outcome.reason, outcome.stop_reason) == ("stopped_by_hook", "Deletes the user's projects.")
    assert shell.ran == []
    [denied] = results(worker)
    assert denied.is_error
    assert denied.content.endswith("Deletes the user's projects.")
    [judge] = judge_requests(client)
    assert judge.model == "claude-haiku-4-5"  # the handler's small model, not the Worker's
    assert main_requests(client)[0].model == "main-model"
    asked = user_text(judge)
    assert "\n\nARGUMENTS:\n" in asked  # no $ARGUMENTS: the input is appended
    assert json.loads(asked.split("ARGUMENTS:\n", 1)[1])["tool_input"] == {"command": "rm -rf ~/projects"}


async def test_a_judge_that_ended_the_turn_still_ends_it_after_the_batch_paused_and_resumed(env: Env) -> None:
    from hookloop import Approve, Paused
    from hookloop.permissions import PermissionPolicy

    env.settings({"PreToolUse": handler_group(BASH_JUDGE, matcher="Bash")})
    shell = Shell()
    policy = PermissionPolicy(ask=["Bash(git push:*)"], allow=["Bash(rm:*)"], workspace=env.project)
    calls = [ToolUse("Bash", {"command": "rm -rf ~/projects"}), ToolUse("Bash", {"command": "git push"})]
    turns = [calls, verdict(False, "Deletes the user's projects."), verdict(True)]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool], permissions=policy)
    paused = await worker.run("clean up and ship")
    assert isinstance(paused, Paused)
    outcome = await worker.resume(paused.checkpoint, {p.call_id: Approve() for p in paused.pending})
    assert isinstance(outcome, Finished)
    assert (outcome.reason, outcome.stop_reason) == ("stopped_by_hook", "Deletes the user's projects.")
    assert shell.ran == ["git push"]
    assert len(main_requests(client)) == 1


async def test_continue_on_block_returns_the_reason_as_the_tool_error_and_the_turn_goes_on(env: Env) -> None:
    env.settings({"PreToolUse": handler_group({**BASH_JUDGE, "continueOnBlock": True}, matcher="Bash")})
    shell = Shell()
    turns = [
        [ToolUse("Bash", {"command": "git push --force"}), ToolUse("Bash", {"command": "git status"})],
        verdict(False, "Force-pushes rewrite shared history."),
        verdict(True),
        [Text("I will not force-push.")],
    ]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool])
    outcome = await worker.run("ship it")
    assert isinstance(outcome, Finished)
    assert outcome.reason == "end_turn"
    assert shell.ran == ["git status"]
    push, status = results(worker)
    assert push.is_error
    assert "Force-pushes rewrite shared history." in push.content
    assert not status.is_error
    assert len(main_requests(client)) == 2


async def test_a_posttooluse_prompt_not_ok_ends_the_turn_unless_continue_on_block(env: Env) -> None:
    judge = {"type": "prompt", "prompt": "Did the command succeed without warnings? $ARGUMENTS"}
    env.settings({"PostToolUse": handler_group(judge, matcher="Bash")})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "make"})], verdict(False, "The build printed warnings.")]
    worker, _, _ = worker_for(env, turns, tools=[shell.tool])
    outcome = await worker.run("build")
    assert isinstance(outcome, Finished)
    assert (outcome.reason, outcome.stop_reason) == ("stopped_by_hook", "The build printed warnings.")

    env.settings({"PostToolUse": handler_group({**judge, "continueOnBlock": True}, matcher="Bash")})
    turns = [[ToolUse("Bash", {"command": "make"})], verdict(False, "The build printed warnings."), [Text("fixing")]]
    worker, _, _ = worker_for(env, turns, tools=[Shell().tool])
    outcome = await worker.run("build")
    assert isinstance(outcome, Finished)
    assert outcome.reason == "end_turn"
    [result] = results(worker)
    assert "The build printed warnings." in result.content


async def test_a_judge_that_answers_garbage_or_times_out_is_a_hook_error_and_fails_open(env: Env) -> None:
    env.settings({"PreToolUse": handler_group({**BASH_JUDGE, "timeout": 0.5}, matcher="Bash")})
    shell = Shell()
    slow = ScriptedTurn(blocks=(Text('{"ok": false, "reason": "too late"}'),), delay=30.0)
    turns = [
        [ToolUse("Bash", {"command": "ls"})],
        [Text("Looks fine to me!")],
        [ToolUse("Bash", {"command": "pwd"})],
        slow,
        [Text("done")],
    ]
    worker, _, events = worker_for(env, turns, tools=[shell.tool])
    outcome = await worker.run("look around")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["ls", "pwd"]
    failed = [(d.decision, d.reason) for d in hook_decisions(events, "PreToolUse")]
    assert failed[0][0] == "HookFailed"
    assert "did not answer with a JSON object" in (failed[0][1] or "")
    assert failed[1][0] == "HookFailed"
    assert "timed out after 0.5 s" in (failed[1][1] or "")


async def test_a_userpromptsubmit_judge_cancels_the_prompt_and_a_permissionrequest_judge_decides_nothing(
    env: Env,
) -> None:
    from hookloop import Aborted, Paused
    from hookloop.permissions import PermissionPolicy

    prompt_judge = {"type": "prompt", "prompt": "Does this prompt contain a credential? $ARGUMENTS"}
    request_judge = {"type": "prompt", "prompt": "Approve this call? $ARGUMENTS"}
    env.settings(
        {
            "UserPromptSubmit": handler_group(prompt_judge),
            "PermissionRequest": handler_group(request_judge, matcher="Bash"),
        }
    )
    shell = Shell()
    policy = PermissionPolicy(ask=["Bash(deploy:*)"], workspace=env.project)
    turns = [
        verdict(False, "The prompt holds an API key."),
        verdict(True),
        [ToolUse("Bash", {"command": "deploy prod"})],
        verdict(True),  # a judge's ok on PermissionRequest is no approval
    ]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool], permissions=policy)
    with pytest.raises(Aborted, match="The prompt holds an API key"):
        await worker.run("use key sk-live-123 to deploy")
    assert not any("sk-live-123" in getattr(i, "text", "") for i in worker.history)
    paused = await worker.run("deploy")
    assert isinstance(paused, Paused)
    assert shell.ran == []
    assert len(judge_requests(client)) == 3


# --------------------------------------------------------------------------------------------------------------
# agent
# --------------------------------------------------------------------------------------------------------------


async def test_an_agent_hook_reads_the_workspace_with_read_only_tools_before_it_answers(env: Env) -> None:
    (env.project / "POLICY.md").write_text("Never push directly to main; open a pull request.\n")
    agent = {
        "type": "agent",
        "prompt": "Check the command against POLICY.md in the workspace. $ARGUMENTS",
        "continueOnBlock": True,
    }
    env.settings({"PreToolUse": handler_group(agent, matcher="Bash")})
    shell = Shell()

    def after_reading(request: LLMRequest) -> ScriptedTurn:
        read = [i for i in request.items if isinstance(i, ToolResult)]
        assert read
        assert "Never push directly to main" in read[-1].content
        return ScriptedTurn(blocks=tuple(verdict(False, "POLICY.md: never push directly to main.")))

    turns = [
        [ToolUse("Bash", {"command": "git push origin main"})],
        [ToolUse("Read", {"file_path": "POLICY.md"})],
        after_reading,
        [Text("I'll open a pull request instead.")],
    ]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool], workspace=env.project)
    outcome = await worker.run("publish")
    assert isinstance(outcome, Finished)
    assert shell.ran == []
    [denied] = results(worker)
    assert "POLICY.md: never push directly to main." in denied.content
    sub = client.requests[1]
    assert {spec.name for spec in sub.tools} == {"Read", "Grep", "Glob"}
    assert sub.system is not None
    assert "Read, Grep and Glob" in sub.system
    assert len(main_requests(client)) == 2  # the sub-run's requests carry the judge's system prompt
    assert all(not isinstance(i, ToolResult) or i.name != "Read" for i in worker.history)  # not in the main run


# --------------------------------------------------------------------------------------------------------------
# mcp_tool
# --------------------------------------------------------------------------------------------------------------

# A secrets guard served over MCP, as a team might run it for several agents.
GUARD_SERVER = textwrap.dedent(
    '''
    import json
    import sys
    from pathlib import Path

    try:
        from mcp.server.mcpserver import MCPServer as FastMCP  # mcp 2.x
    except ImportError:
        from mcp.server.fastmcp import FastMCP  # mcp 1.x

    log = Path(sys.argv[1])
    app = FastMCP("guard", log_level="CRITICAL")


    @app.tool()
    def check_write(file_path: str, event: str) -> str:
        """Refuse writes to secret files."""
        with log.open("a") as f:
            f.write(json.dumps({"file_path": file_path, "event": event}) + "\\n")
        if file_path.endswith(".env"):
            return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                      "permissionDecisionReason": file_path + " holds secrets"}})
        return "{}"


    @app.tool()
    def flood() -> str:
        """Answers more than any hook output cap."""
        return "{" + " " * (2 << 20) + '"decision": "block"}'


    @app.tool()
    def broken(file_path: str) -> str:
        """Always fails."""
        raise RuntimeError("guard database unavailable")


    app.run()
    '''
)


def writer(written: list[str]) -> Any:
    @tool(name="Write")
    async def write(file_path: str, content: str) -> str:
        """Write a file."""
        written.append(file_path)
        return f"wrote {file_path}"

    return write


async def test_an_mcp_tool_hook_calls_the_server_with_templated_input_and_its_json_decides(env: Env) -> None:
    from hookloop.tools.mcp import MCPServer

    script = env.root / "guard_server.py"
    script.write_text(GUARD_SERVER)
    log = env.root / "guard.log"
    hook = {
        "type": "mcp_tool",
        "server": "guard",
        "tool": "check_write",
        "input": {"file_path": "${tool_input.file_path}", "event": "${hook_event_name}"},
    }
    env.settings({"PreToolUse": handler_group(hook, matcher="Write")})
    written: list[str] = []
    turns = [
        [ToolUse("Write", {"file_path": ".env", "content": "KEY=1"}), ToolUse("Write", {"file_path": "notes.txt",
                                                                                       "content": "hi"})],
        [Text("done")],
    ]  # fmt: skip
    async with MCPServer.stdio("guard", sys.executable, [str(script), str(log)]) as server:
        worker, _, events = worker_for(env, turns, tools=[server, writer(written)])
        outcome = await worker.run("write files")
    assert isinstance(outcome, Finished)
    assert written == ["notes.txt"]
    secret, notes = results(worker)
    assert secret.is_error
    assert secret.content.endswith(f"{env.project / '.env'} holds secrets")
    assert not notes.is_error
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [
        {"file_path": str(env.project / ".env"), "event": "PreToolUse"},
        {"file_path": str(env.project / "notes.txt"), "event": "PreToolUse"},
    ]
    assert [d.decision for d in hook_decisions(events, "PreToolUse")] == ["Deny", "Continue"]


async def test_an_mcp_tool_hook_error_or_a_missing_server_is_a_non_blocking_hook_error(env: Env) -> None:
    from hookloop.tools.mcp import MCPServer

    script = env.root / "guard_server.py"
    script.write_text(GUARD_SERVER)
    env.settings(
        {
            "PreToolUse": [
                {
                    "matcher": "Write",
                    "hooks": [
                        {"type": "mcp_tool", "server": "guard", "tool": "broken",
                         "input": {"file_path": "${tool_input.file_path}"}},
                        {"type": "mcp_tool", "server": "policy", "tool": "check"},
                        {"type": "mcp_tool", "server": "guard", "tool": "flood", "input": {}},
                    ],
                }
            ]
        }
    )  # fmt: skip
    written: list[str] = []
    turns = [[ToolUse("Write", {"file_path": "a.txt", "content": "x"})], [Text("done")]]
    async with MCPServer.stdio("guard", sys.executable, [str(script), str(env.root / "log")]) as server:
        worker, _, events = worker_for(env, turns, tools=[server, writer(written)])
        outcome = await worker.run("write")
    assert isinstance(outcome, Finished)
    assert written == ["a.txt"]
    broken, missing, flood = hook_decisions(events, "PreToolUse")
    assert broken.decision == "HookError"
    assert "status code 1: Error executing tool broken" in (broken.reason or "")
    assert missing.decision == "HookFailed"
    assert "no tool 'mcp__policy__check' on the Worker (connected MCP servers: guard)" in (missing.reason or "")
    assert flood.decision == "HookError"
    assert "more than the output cap" in (flood.reason or "")


# --------------------------------------------------------------------------------------------------------------
# Configuration, defaults, pure helpers
# --------------------------------------------------------------------------------------------------------------

SOURCE = HookSource(kind="hookloop-user", path="/test/settings.json")


def test_the_handler_fields_parse_with_claude_codes_names_and_bad_ones_are_named() -> None:
    layer = parse_settings(
        {
            "hooks": {
                "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?", "model": "small", "timeout": 10}]}],
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {"type": "agent", "prompt": "check $ARGUMENTS", "continueOnBlock": True,
                             "if": "Bash(git *)", "statusMessage": "judging"},
                            {"type": "mcp_tool", "server": "s", "tool": "t", "input": {"p": "${tool_input.command}"}},
                            {"type": "mcp_tool", "server": "", "tool": "t", "input": []},
                            {"type": "prompt", "prompt": "", "continueOnBlock": "yes", "model": 3},
                        ],
                    }
                ],
            }
        },
        SOURCE,
    )  # fmt: skip
    stop, agent, mcp = (h.handler for h in layer.hooks)
    assert stop == PromptHandler(kind="prompt", prompt="done?", model="small", timeout=10.0)
    assert isinstance(agent, PromptHandler)
    assert (agent.kind, agent.continue_on_block, agent.condition, agent.status_message) == (
        "agent", True, "Bash(git *)", "judging",
    )  # fmt: skip
    assert isinstance(mcp, McpToolHandler)
    assert (mcp.server, mcp.tool, dict(mcp.input or {})) == ("s", "t", {"p": "${tool_input.command}"})
    problems = {(d.path, d.message) for d in layer.diagnostics}
    assert ("hooks.PreToolUse[0].hooks[2].server", "expected a non-empty string, got a string") in problems
    assert ("hooks.PreToolUse[0].hooks[2].input", "expected an object of tool arguments, got an array") in problems
    assert ("hooks.PreToolUse[0].hooks[3].prompt", "expected a non-empty string, got a string") in problems
    assert ("hooks.PreToolUse[0].hooks[3].continueOnBlock", "expected a boolean, got a string") in problems
    assert ("hooks.PreToolUse[0].hooks[3].model", "expected a model name, got a number") in problems


def test_default_timeouts_are_claude_codes() -> None:
    assert default_judge_timeout(PromptHandler(kind="prompt", prompt="x")) == 30.0
    assert default_judge_timeout(PromptHandler(kind="agent", prompt="x")) == 60.0
    assert default_judge_timeout(PromptHandler(kind="agent", prompt="x", timeout=5)) == 5
    handler = McpToolHandler(server="s", tool="t")
    assert mcp_tool_timeout("PreToolUse", handler) == 600.0
    assert mcp_tool_timeout("UserPromptSubmit", handler) == 30.0
    assert AGENT_MAX_TURNS == 50


def test_templates_arguments_and_verdicts() -> None:
    payload = {"tool_input": {"file_path": "/p/a.py", "edits": [1, 2]}, "hook_event_name": "PreToolUse"}
    template = {"path": "${tool_input.file_path}", "msg": "event ${hook_event_name} on ${tool_input.file_path}",
                "raw": "${tool_input}", "first": "${tool_input.edits.0}", "missing": "${nope.x}", "n": 3}  # fmt: skip
    assert fill_template(template, payload) == {
        "path": "/p/a.py",
        "msg": "event PreToolUse on /p/a.py",
        "raw": {"file_path": "/p/a.py", "edits": [1, 2]},
        "first": 1,
        "missing": "",
        "n": 3,
    }
    assert render_prompt("x $ARGUMENTS y", {"a": 1}) == 'x {\n  "a": 1\n} y'
    assert parse_verdict('Sure. {"ok": false, "reason": "no"}').ok is False  # type: ignore[union-attr]
    assert parse_verdict('{"ok": "yes"}') == '"ok" must be true or false'
    assert isinstance(parse_verdict("fine"), str)
    fenced = parse_verdict('```json\n{"ok": false, "reason": "tests failing", "impossible": false}\n```')
    assert fenced == Verdict(ok=False, reason="tests failing")


# --------------------------------------------------------------------------------------------------------------
# `hookloop run`: a prompt hook in a live CLI run (scripted model file), and `hooks test` says where it runs
# --------------------------------------------------------------------------------------------------------------


def test_hookloop_run_with_a_pretooluse_prompt_judge_stops_a_destructive_command(env: Env) -> None:
    from .test_watched_events import cli

    env.settings({"PreToolUse": handler_group(BASH_JUDGE, matcher="Bash")})
    (env.project / "data").mkdir()
    (env.project / "data" / "keep.txt").write_text("precious")
    model = env.root / "model.json"
    model.write_text(
        json.dumps(
            {
                "turns": [
                    {"blocks": [{"text": "Cleaning."}, {"tool": "Bash", "arguments": {"command": "rm -rf data"}}]},
                    {"blocks": [{"text": json.dumps({"ok": False, "reason": "rm -rf deletes the data folder"})}]},
                ]
            }
        )
    )
    ran = cli("run", "clean up", "--model", f"scripted:{model}", "--cwd", str(env.project), "--yes",
              "--trust-project-hooks", project=env.project, tmp=env.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert (env.project / "data" / "keep.txt").read_text() == "precious"
    assert "rm -rf deletes the data folder" in ran.stdout + ran.stderr

    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    tried = cli("hooks", "test", "PreToolUse", "--input", "-", "--format", "json", "--trust-project-hooks",
                project=env.project, tmp=env.root, stdin=json.dumps(payload))  # fmt: skip
    assert tried.returncode == 1, tried.stderr  # the hook could not run here: `hooks test` says so (exit 1)
    [hook] = json.loads(tried.stdout)["hooks"]
    assert "prompt handlers run only inside a Worker" in hook["error"]
    assert json.loads(tried.stdout)["merged"]["decision"] == "continue"


# --------------------------------------------------------------------------------------------------------------
# A real provider wire: the Anthropic client against the loopback Messages API server
# --------------------------------------------------------------------------------------------------------------


def anthropic_text(text: str) -> list[bytes]:
    """The recorded text reply (tests/providers/fixtures/anthropic/text.sse) saying ``text`` in one delta."""
    from providers.wire import sse_events

    events = [e for e in sse_events("anthropic/text") if b'"text_delta"' not in e]
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
    at = next(i for i, e in enumerate(events) if b"content_block_stop" in e)
    events.insert(at, f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n".encode())
    return events


async def test_a_stop_judge_with_its_own_small_model_over_the_anthropic_wire(env: Env) -> None:
    from hookloop.providers.anthropic import AnthropicClient
    from providers.wire import Reply, WireServer

    env.settings({"Stop": handler_group({**STOP_JUDGE, "model": "claude-haiku-4-5"})})
    server = WireServer()
    await server.start()
    sse = {"content-type": "text/event-stream; charset=utf-8"}
    for text in ("Edited.", '{"ok": false, "reason": "Run the tests."}', "Tests pass.", '{"ok": true}'):
        server.replies.append(Reply(200, sse, anthropic_text(text)))
    try:
        async with AnthropicClient(
            "claude-sonnet-4-6", api_key="sk-ant-test", base_url=server.base_url, max_retries=0
        ) as client:
            from hookloop import Worker

            worker = Worker(client, transcript=env.root / "t.jsonl")
            env.workers.append(worker)
            env.load().install(worker)
            outcome = await worker.run("fix it")
    finally:
        await server.stop()
    assert isinstance(outcome, Finished)
    assert outcome.text == "Tests pass."
    main, judge, again, _ = (seen.body for seen in server.requests)
    assert (main["model"], judge["model"]) == ("claude-sonnet-4-6", "claude-haiku-4-5")
    assert "tools" not in judge
    assert '"ok": true' in judge["system"][0]["text"]
    [asked] = judge["messages"]
    assert '"last_assistant_message": "Edited."' in asked["content"][0]["text"]
    assert "Run the tests." in json.dumps(again["messages"][-1])
