"""Command hooks end to end: real bash and Python scripts, configured in settings files (or found as Cline
scripts), run by a real Worker driven by the scripted model. HOME and hookloop's home are temporary folders, so
the user's own settings are never read. No sleeps here: scripts may sleep; the tests synchronise on timeline
events and files."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookloop import (
    Aborted,
    Cancelled,
    Finished,
    Paused,
    ScriptedClient,
    ScriptedTurn,
    StopHookLoopError,
    Text,
    ToolResult,
    ToolUse,
    Worker,
    WorkerError,
    tool,
)
from hookloop.command_hooks.bridge import CommandHookCancelled, CommandHooks
from hookloop.command_hooks.runner import RunnerOptions
from hookloop.command_hooks.trust import trust
from hookloop.hooks import PRE_TOOL_CALL, Abort
from hookloop.items import Message
from hookloop.permissions import PermissionPolicy
from hookloop.providers.scripted import ScriptError
from hookloop.timeline import HookDecision, HookOutputLine, TimelineEvent
from hookloop.tools import Tool

from .conftest import is_alive

pytestmark = pytest.mark.anyio

FAST = RunnerOptions(kill_grace=0.2, drain_window=0.2)
PY = sys.executable


@dataclass
class Env:
    """A project with settings files, and the fake home folders it is loaded with."""

    root: Path
    project: Path
    home: Path
    hookloop_home: Path
    workers: list[Worker]

    def script(self, name: str, body: str, *, python: bool = False, folder: str = ".claude/hooks") -> Path:
        path = self.project / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shebang = f"#!{PY}" if python else "#!/bin/bash"
        path.write_text(f"{shebang}\n{body.strip()}\n")
        path.chmod(0o755)
        return path

    def settings(self, hooks: dict[str, Any], *, form: str = ".claude/settings.json") -> None:
        path = self.project / form
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": hooks}))

    def load(self, *, trust_project: bool = True, grace: float = 1.5) -> CommandHooks:
        return CommandHooks.load(
            self.project,
            home=self.home,
            hookloop_home=self.hookloop_home,
            trust_project=trust_project,
            options=FAST,
            background_grace=grace,
        )


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    project = tmp_path / "project"
    project.mkdir()
    environment = Env(tmp_path, project.resolve(), tmp_path / "home", tmp_path / "hookloop-home", [])
    yield environment
    for worker in environment.workers:
        worker.close()  # the transcript file


def group(command: str, *, matcher: str | None = None, **fields: Any) -> list[dict[str, Any]]:
    """One matcher group with one command handler."""
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **fields}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return [entry]


class Shell:
    """A fake Bash tool that records what it was asked to run (and runs nothing)."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool(name="Bash")
        async def bash(command: str, description: str = "") -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran: {command}"

        self.tool: Tool = bash


def worker_for(
    env: Env, turns: Sequence[Any], *, tools: Sequence[Tool] = (), grace: float = 1.5, **kwargs: Any
) -> tuple[Worker, ScriptedClient, list[TimelineEvent]]:
    client = ScriptedClient(list(turns))
    worker = Worker(client, tools=list(tools), transcript=env.root / "transcript.jsonl", **kwargs)
    env.workers.append(worker)
    events: list[TimelineEvent] = []
    worker.subscribe(events.append)
    env.load(grace=grace).install(worker)
    return worker, client, events


def hook_decisions(events: Sequence[TimelineEvent], event: str | None = None) -> list[HookDecision]:
    return [
        e
        for e in events
        if isinstance(e, HookDecision) and e.source != "command hooks" and (event is None or e.event == event)
    ]


def results(worker: Worker) -> list[ToolResult]:
    return [item for item in worker.history if isinstance(item, ToolResult)]


def request_text(client: ScriptedClient, index: int) -> str:
    parts: list[str] = []
    for item in client.requests[index].items:
        if isinstance(item, Message):
            parts.append(item.text)
        elif isinstance(item, ToolResult):
            parts.append(item.content)
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------------------
# PreToolUse
# --------------------------------------------------------------------------------------------------------------

GUARD_SH = """
input=$(cat)
case "$input" in
  *'rm -rf'*) echo "Blocked: recursive delete" >&2; exit 2 ;;
esac
exit 0
"""

GUARD_PY = """
import json, sys
data = json.load(sys.stdin)
if "rm -rf" in data["tool_input"].get("command", ""):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "Blocked: recursive delete"}}))
"""


@pytest.mark.parametrize("kind", ["bash exit 2 + stderr", "python JSON permissionDecision deny"])
async def test_a_pretooluse_guard_blocks_rm_rf_and_the_model_gets_the_reason(env: Env, kind: str) -> None:
    python = kind.startswith("python")
    env.script("guard", GUARD_PY if python else GUARD_SH, python=python)
    env.settings({"PreToolUse": group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard', matcher="Bash")})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "rm -rf build"}), ToolUse("Bash", {"command": "ls"})], [Text("ok")]]
    worker, client, events = worker_for(env, turns, tools=[shell.tool])
    outcome = await worker.run("clean up")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["ls"]
    denied, allowed = results(worker)
    assert denied.is_error
    assert denied.content == "permission denied by hook 'command hooks': Blocked: recursive delete"
    assert not allowed.is_error
    assert "Blocked: recursive delete" in request_text(client, 1)
    first = hook_decisions(events, "PreToolUse")[0]
    assert (first.decision, first.reason, first.call_id) == ("Deny", "Blocked: recursive delete", "call_0001")
    assert first.source == f"Project: {env.project / '.claude' / 'settings.json'}"
    assert first.hook == '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard'


async def test_a_pretooluse_ask_pauses_the_run_labelled_with_the_hook_source(env: Env) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                     "permissionDecisionReason": "deploys need a person"}}  # fmt: skip
    env.settings({"PreToolUse": group(f"echo '{json.dumps(answer)}'", matcher="Bash")})
    shell = Shell()
    worker, _, _ = worker_for(env, [[ToolUse("Bash", {"command": "deploy prod"})], [Text("ok")]], tools=[shell.tool])
    outcome = await worker.run("ship it")
    assert isinstance(outcome, Paused)
    assert [p.tool_name for p in outcome.pending] == ["Bash"]
    assert "[Project] deploys need a person" in outcome.reason
    assert shell.ran == []


ALLOW_EVERYTHING = """
import json, sys
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                         "permissionDecisionReason": "hook says fine"}}))
"""


async def test_a_hook_allow_never_bypasses_a_deny_or_an_ask_rule(env: Env) -> None:
    env.script("allow.py", ALLOW_EVERYTHING, python=True)
    env.settings({"PreToolUse": group(f"{PY} .claude/hooks/allow.py")})
    shell = Shell()
    policy = PermissionPolicy(deny=["Bash(rm *)"], ask=["Bash(deploy *)"], workspace=env.project)
    turns = [[ToolUse("Bash", {"command": "rm -rf /"}), ToolUse("Bash", {"command": "git status"})], [Text("next")]]
    worker, _, _ = worker_for(env, [*turns, [ToolUse("Bash", {"command": "deploy prod"})]], tools=[shell.tool])
    worker.permissions = policy
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["git status"]  # the hook's allow settled the call no rule decided
    assert "permission denied" in results(worker)[0].content
    assert "Bash(rm *)" in results(worker)[0].content
    paused = await worker.run("and deploy")
    assert isinstance(paused, Paused)  # the ask rule still asks
    assert shell.ran == ["git status"]


REWRITE = """
import json, sys
data = json.load(sys.stdin)
command = data["tool_input"]["command"]
new = {"rm -rf build": "ls build", "ls": "rm -rf /"}[command]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                         "updatedInput": {**data["tool_input"], "command": new}}}))
"""


async def test_updated_input_rewrites_the_command_and_the_rules_see_the_rewritten_input(env: Env) -> None:
    env.script("rewrite.py", REWRITE, python=True)
    env.settings({"PreToolUse": group(f"{PY} $CLAUDE_PROJECT_DIR/.claude/hooks/rewrite.py", matcher="Bash")})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "rm -rf build"}), ToolUse("Bash", {"command": "ls"})], [Text("ok")]]
    worker, _, _ = worker_for(env, turns, tools=[shell.tool])
    worker.permissions = PermissionPolicy(deny=["Bash(rm *)"], mode="bypassPermissions", workspace=env.project)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["ls build"]  # rewritten away from the deny rule: allowed and run as rewritten
    rewritten_to_rm = results(worker)[1]
    assert rewritten_to_rm.is_error
    assert "Bash(rm *)" in rewritten_to_rm.content
    assert results(worker)[0].meta["executed_arguments"] == {"command": "ls build"}


async def test_the_if_filter_and_exec_form_from_the_reference_settings_example(env: Env) -> None:
    env.script("block-rm.sh", 'echo "rm is not allowed here" >&2\nexit 2')
    handler = {"if": "Bash(rm *)", "args": [], "timeout": 30, "statusMessage": "Checking command"}
    env.settings({"PreToolUse": group("${CLAUDE_PROJECT_DIR}/.claude/hooks/block-rm.sh", matcher="Bash", **handler)})
    shell = Shell()
    calls = [ToolUse("Bash", {"command": "git status"}), ToolUse("Bash", {"command": "cd src && rm -rf build"})]
    worker, _, events = worker_for(env, [calls, [Text("ok")]], tools=[shell.tool])
    await worker.run("go")
    assert shell.ran == ["git status"]
    assert results(worker)[1].content.endswith("rm is not allowed here")
    assert [d.call_id for d in hook_decisions(events, "PreToolUse")] == ["call_0002"]  # not spawned for git


@dataclass(frozen=True)
class Case:
    command: str
    ran: bool
    decision: str
    text: str = ""
    fields: tuple[tuple[str, Any], ...] = ()


def echo(obj: object, *, code: int = 0, stderr: str = "") -> str:
    err = f"echo {json.dumps(stderr)} >&2; " if stderr else ""
    return f"echo '{json.dumps(obj)}'; {err}exit {code}"


def pre(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


# The reference's output contract (§1.3) and its known traps (§7.3), one hook each, on `rm -rf build`.
REFERENCE_CASES = {
    "exit 2 blocks with stderr": Case("echo 'nope' >&2; exit 2", False, "Deny", "nope"),
    "exit 2 blocks even when JSON says allow": Case(
        echo(pre(permissionDecision="allow"), code=2, stderr="still no"), False, "Deny", "still no"
    ),
    "exit 2 with empty stderr blocks with a generic reason": Case("exit 2", False, "Deny", "exit status 2"),
    "JSON deny reason goes to the model": Case(
        echo(pre(permissionDecision="deny", permissionDecisionReason="json says no")), False, "Deny", "json says no"
    ),
    "deprecated decision block is deny": Case(echo({"decision": "block", "reason": "old"}), False, "Deny", "old"),
    "deprecated decision approve is allow": Case(echo({"decision": "approve"}), True, "Allow"),
    "other exit with valid JSON: the JSON decides": Case(
        echo(pre(permissionDecision="deny", permissionDecisionReason="json wins"), code=1), False, "Deny", "json wins"
    ),
    "other exit with plain output is a non-blocking error": Case("echo oops >&2; exit 1", True, "HookError", "oops"),
    "a missing script could not run: reported, not a silent allow": Case(
        "/nonexistent/guard.sh", True, "HookFailed", "could not run"
    ),
    "a missing script with failClosed denies": Case(
        "/nonexistent/guard.sh", False, "HookFailed", "failClosed", (("failClosed", True),)
    ),
    "an interpreter that cannot open the script is not a deny (claude-code#80697)": Case(
        f"{PY} /nonexistent/guard.py", True, "HookFailed", "can't open file"
    ),
    "a timeout could not run and fails open": Case("sleep 10", True, "HookFailed", "timed out", (("timeout", 0.3),)),
    "plain stdout on exit 0 is success": Case("echo 'looks fine {'", True, "Continue"),
    "JSON after log lines is plain text for Claude Code": Case(
        "echo 'checking...'; " + echo(pre(permissionDecision="deny")), True, "Continue"
    ),
    "a JSON object with the wrong field types is an error, not a decision": Case(
        echo(pre(permissionDecision=7)), True, "HookError", "permissionDecision"
    ),
}


@pytest.mark.parametrize("case", list(REFERENCE_CASES.values()), ids=list(REFERENCE_CASES))
async def test_documented_pretooluse_outputs_give_the_documented_decisions(
    env: Env, case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    env.settings({"PreToolUse": group(case.command, **dict(case.fields))})
    shell = Shell()
    worker, _, events = worker_for(
        env, [[ToolUse("Bash", {"command": "rm -rf build"})], [Text("ok")]], tools=[shell.tool]
    )
    with caplog.at_level(logging.WARNING, logger="hookloop.command_hooks.bridge"):
        outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == (["rm -rf build"] if case.ran else [])
    [decision] = hook_decisions(events, "PreToolUse")
    assert decision.decision == case.decision
    if case.text:
        assert case.text in (decision.reason or "")
    if not case.ran:
        assert case.text in results(worker)[0].content
    loud = case.decision in ("HookFailed", "HookError")
    assert any(case.decision in r.getMessage() for r in caplog.records) == loud


# --------------------------------------------------------------------------------------------------------------
# PostToolUse, UserPromptSubmit, SessionStart, Stop
# --------------------------------------------------------------------------------------------------------------


def post(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", **fields}}


async def test_posttooluse_context_block_reason_and_updated_output_reach_the_model(env: Env) -> None:
    env.settings(
        {
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": echo(post(additionalContext="lint: clean"))}],
                },
                {"hooks": [{"type": "command", "command": echo({"decision": "block", "reason": "format the file"})}]},
                {
                    "matcher": "Read",
                    "hooks": [{"type": "command", "command": echo(post(updatedToolOutput="[redacted]"))}],
                },
            ]
        }
    )

    @tool(name="Read", read_only=True)
    async def read(file_path: str) -> str:
        """Read a file."""
        return "SECRET=hunter2"

    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "make"}), ToolUse("Read", {"file_path": ".env"})], [Text("ok")]]
    worker, client, _ = worker_for(env, turns, tools=[shell.tool, read])
    await worker.run("go")
    bash_result, read_result = results(worker)
    assert bash_result.content.startswith("ran: make")
    assert "lint: clean" in bash_result.content
    assert "format the file" in bash_result.content
    assert read_result.content.startswith("[redacted]")
    assert "hunter2" not in request_text(client, 1)
    assert "lint: clean" in request_text(client, 1)


async def test_posttooluse_continue_false_stops_gracefully_after_the_batch(env: Env) -> None:
    env.settings({"PostToolUse": group(echo({"continue": False, "stopReason": "tests failed; stopping"}))})
    shell = Shell()
    worker, client, _ = worker_for(env, [[ToolUse("Bash", {"command": "pytest"})], [Text("never")]], tools=[shell.tool])
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert (outcome.reason, outcome.stop_reason) == ("stopped_by_hook", "tests failed; stopping")
    assert shell.ran == ["pytest"]
    assert len(client.requests) == 1


async def test_posttoolusefailure_fires_for_failed_calls_with_the_error(env: Env) -> None:
    env.script(
        "failure.py",
        'import json,sys\nd=json.load(sys.stdin)\nprint("saw: " + d["error"], file=sys.stderr)\nsys.exit(2)',
        python=True,
    )
    env.settings({"PostToolUseFailure": group(f"{PY} .claude/hooks/failure.py"), "PostToolUse": group("exit 2")})

    @tool
    async def flaky() -> str:
        """Always fails."""
        raise RuntimeError("disk full")

    worker, _, events = worker_for(env, [[ToolUse("flaky", {})], [Text("ok")]], tools=[flaky])
    await worker.run("go")
    [result] = results(worker)
    assert result.is_error
    assert "saw: tool 'flaky' failed: RuntimeError: disk full" in result.content
    assert [d.event for d in hook_decisions(events)] == ["PostToolUseFailure"]


async def test_userpromptsubmit_block_cancels_and_plain_stdout_becomes_context(env: Env) -> None:
    env.script(
        "prompt.py",
        """
import json, sys
prompt = json.load(sys.stdin)["prompt"]
if "password" in prompt:
    print(json.dumps({"decision": "block", "reason": "no secrets in prompts"}))
else:
    print("Reminder: the repo uses pnpm")
""",
        python=True,
    )
    env.settings({"UserPromptSubmit": group(f"{PY} .claude/hooks/prompt.py")}, form=".hookloop/settings.json")
    worker, client, _ = worker_for(env, [[Text("ok")]])
    with pytest.raises(Aborted, match="no secrets in prompts"):
        await worker.run("my password is hunter2")
    assert not any("hunter2" in getattr(i, "text", "") for i in worker.history)  # erased from context
    outcome = await worker.run("install deps")
    assert isinstance(outcome, Finished)
    assert "Reminder: the repo uses pnpm" in request_text(client, 0)


async def test_sessionstart_context_from_plain_stdout_and_json_reaches_the_first_request(env: Env) -> None:
    ctx = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "Open issues: 3"}}
    env.settings(
        {
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "echo 'Current branch: main'"}]},
                {"matcher": "resume", "hooks": [{"type": "command", "command": "echo 'never on startup'"}]},
                {"hooks": [{"type": "command", "command": echo(ctx)}]},
            ]
        }
    )
    worker, client, _ = worker_for(env, [[Text("ok")]])
    await worker.run("hi")
    first = request_text(client, 0)
    assert "Current branch: main" in first
    assert "Open issues: 3" in first
    assert "never on startup" not in first


STOP_PY = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.environ["CLAUDE_PROJECT_DIR"] + "/stop.log", "a") as log:
    log.write(json.dumps([data["stop_hook_active"], data["last_assistant_message"]]) + "\\n")
if not data["stop_hook_active"] or "always" in sys.argv:
    print(json.dumps({"decision": "block", "reason": "run the tests before finishing"}))
"""


async def test_a_stop_hook_block_continues_once_then_stop_hook_active_lets_the_run_end(env: Env) -> None:
    env.script("stop.py", STOP_PY, python=True)
    env.settings({"Stop": group(PY, args=[str(env.project / ".claude/hooks/stop.py")])})
    worker, client, _ = worker_for(env, [[Text("done?")], [Text("tests pass, done")]])
    outcome = await worker.run("fix it")
    assert isinstance(outcome, Finished)
    assert outcome.text == "tests pass, done"
    assert "Stop hook feedback:\nrun the tests before finishing" in request_text(client, 1)
    logged = [json.loads(line) for line in (env.project / "stop.log").read_text().splitlines()]
    assert logged == [[False, "done?"], [True, "tests pass, done"]]


async def test_a_stop_hook_that_ignores_stop_hook_active_hits_the_workers_cap(env: Env) -> None:
    env.script("stop.py", STOP_PY, python=True)
    env.settings({"Stop": group(PY, args=[str(env.project / ".claude/hooks/stop.py"), "always"])})
    worker, _, _ = worker_for(env, [[Text(f"attempt {n}")] for n in range(5)], max_forced_continuations=2)
    with pytest.raises(StopHookLoopError):
        await worker.run("fix it")


# --------------------------------------------------------------------------------------------------------------
# Permission requests, notifications, cancellation
# --------------------------------------------------------------------------------------------------------------


def permission(behavior: str, **fields: Any) -> dict[str, Any]:
    decision = {"behavior": behavior, **fields}
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


async def test_permissionrequest_answers_an_ask_without_pausing(env: Env) -> None:
    env.settings(
        {
            "PermissionRequest": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "if": "Bash(npm *)", "command": echo(permission("allow"))}],
                },
                {
                    "hooks": [
                        {
                            "type": "command",
                            "if": "Bash(curl *)",
                            "command": echo(permission("deny", message="no network")),
                        }
                    ]
                },
            ]
        }
    )
    shell = Shell()
    calls = [ToolUse("Bash", {"command": "npm test"}), ToolUse("Bash", {"command": "curl example.com"})]
    worker, _, _ = worker_for(env, [calls, [Text("ok")]], tools=[shell.tool])
    worker.permissions = PermissionPolicy(ask=["Bash"], workspace=env.project)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["npm test"]
    assert results(worker)[1].content == "denied by command hooks (PermissionRequest): no network"


async def test_permissionrequest_deny_with_interrupt_ends_the_run(env: Env) -> None:
    env.settings({"PermissionRequest": group(echo(permission("deny", message="stop everything", interrupt=True)))})
    shell = Shell()
    worker, _, _ = worker_for(env, [[ToolUse("Bash", {"command": "rm -rf /"})]], tools=[shell.tool])
    worker.permissions = PermissionPolicy(ask=["Bash"], workspace=env.project)
    with pytest.raises(CommandHookCancelled, match="stop everything") as caught:
        await worker.run("go")
    assert caught.value.event == "PermissionRequest"
    assert shell.ran == []


SLOW_NOTIFY = """
echo "pid $$"
exec sleep 30
"""


async def test_a_slow_notification_hook_never_blocks_the_run_and_dies_with_it(env: Env) -> None:
    env.script("notify.sh", SLOW_NOTIFY)
    env.settings({"Notification": group(".claude/hooks/notify.sh", matcher="injected")})
    started = asyncio.Event()
    pids: list[int] = []

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, HookOutputLine) and event.line.startswith("pid "):
            pids.append(int(event.line.split()[1]))
            started.set()

    @tool
    async def probe() -> str:
        """Runs while the notification hook is still running."""
        await started.wait()
        return "hook alive" if is_alive(pids[0]) else "hook gone"

    worker, _, events = worker_for(env, [[ToolUse("probe", {})], [Text("done")]], tools=[probe], grace=0.1)
    worker.subscribe(watch)
    worker.notify("the build finished")
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert results(worker)[0].content == "hook alive"  # the run went on while the hook ran
    assert not is_alive(pids[0])  # and the run's end killed it
    [decision] = hook_decisions(events, "Notification")
    assert decision.decision == "HookCancelled"  # cut short at the end of the run, and said so
    assert decision.reason == "still running when the run ended; its process group was killed"


CANCEL_ME = """
trap '' TERM
echo "leader $$"
sleep 1000 &
echo "child $!"
wait
"""


async def test_cancelling_a_run_kills_the_running_hook_and_its_children(env: Env) -> None:
    env.script("slow.sh", CANCEL_ME)
    env.settings({"PreToolUse": group(".claude/hooks/slow.sh")})
    shell = Shell()
    worker, _, _ = worker_for(env, [[ToolUse("Bash", {"command": "ls"})], [Text("ok")]], tools=[shell.tool])
    pids: dict[str, int] = {}
    both = asyncio.Event()

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, HookOutputLine) and event.stream == "stdout":
            role, pid = event.line.split()
            pids[role] = int(pid)
            if len(pids) == 2:
                both.set()

    worker.subscribe(watch)
    run = asyncio.create_task(worker.run("go"))
    await both.wait()
    assert is_alive(pids["leader"])
    assert is_alive(pids["child"])
    worker.cancel()
    with pytest.raises(Cancelled):
        await run
    assert not is_alive(pids["leader"])
    assert not is_alive(pids["child"])
    assert shell.ran == []
    assert "cancelled" in results(worker)[0].content


async def test_an_async_handler_cannot_block_and_is_drained_at_the_end(env: Env) -> None:
    env.settings({"PreToolUse": group("echo 'no' >&2; exit 2", **{"async": True})})
    shell = Shell()
    worker, _, events = worker_for(env, [[ToolUse("Bash", {"command": "ls"})], [Text("ok")]], tools=[shell.tool])
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["ls"]
    assert [d.decision for d in hook_decisions(events, "PreToolUse")] == ["Deny"]  # reported, not applied


# --------------------------------------------------------------------------------------------------------------
# Cline scripts
# --------------------------------------------------------------------------------------------------------------

CLINE_CANCEL = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["HOOKLOOP_PROJECT_DIR"], "cline-input.json"), "w") as out:
    json.dump(data, out)
print("checking the tool call...")
print(json.dumps({"cancel": True, "errorMessage": "policy: no network access"}))
"""


async def test_a_cline_pretooluse_cancel_ends_the_run_with_commandhookcancelled(env: Env) -> None:
    env.script("PreToolUse", CLINE_CANCEL, python=True, folder=".clinerules/hooks")
    shell = Shell()
    aborts: list[str] = []
    worker, _, events = worker_for(env, [[ToolUse("Bash", {"command": "curl x", "timeout": 30})]], tools=[shell.tool])
    worker.add_on_abort_hook(lambda info: aborts.append(info.error_type))  # type: ignore[arg-type,func-returns-value]
    with pytest.raises(CommandHookCancelled) as caught:  # the run ends with the dedicated error itself
        await worker.run("go")
    cancelled = caught.value
    assert CommandHookCancelled.find(cancelled) is cancelled
    assert (cancelled.reason, cancelled.event, cancelled.protocol) == (
        "policy: no network access",
        "PreToolUse",
        "cline",
    )
    assert cancelled.hooks == (str(env.project / ".clinerules/hooks/PreToolUse"),)
    assert shell.ran == []
    assert len(aborts) == 1
    assert [d.decision for d in hook_decisions(events, "PreToolUse")] == ["Cancel"]
    sent = json.loads((env.project / "cline-input.json").read_text())
    assert set(sent) == {
        "clineVersion",
        "hookName",
        "timestamp",
        "taskId",
        "workspaceRoots",
        "userId",
        "model",
        "preToolUse",
    }
    assert sent["preToolUse"] == {"toolName": "execute_command", "parameters": {"command": "curl x"}}  # Cline names
    assert sent["hookName"] == "PreToolUse"
    assert sent["timestamp"].isdigit()
    assert sent["workspaceRoots"] == [str(env.project)]


async def test_cline_posttooluse_cancel_is_soft_and_context_modification_reaches_the_model(env: Env) -> None:
    env.script(
        "PreToolUse",
        """
import json, sys
json.load(sys.stdin)
print("noise {")
print(json.dumps({"contextModification": "WORKSPACE_RULES: use pnpm"}))
""",
        python=True,
        folder=".clinerules/hooks",
    )
    env.script(
        "PostToolUse",
        'grep -q "npm stop" && echo \'{"cancel": true, "errorMessage": "enough for today"}\'; exit 0',
        folder=".clinerules/hooks",
    )
    shell = Shell()
    calls = [ToolUse("Bash", {"command": "npm i"}), ToolUse("Bash", {"command": "npm stop"})]
    worker, client, _ = worker_for(env, [calls, [Text("never")]], tools=[shell.tool])
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert (outcome.reason, outcome.stop_reason) == ("stopped_by_hook", "enough for today")
    assert shell.ran == ["npm i", "npm stop"]  # soft: the batch completed
    context = '<hook_context source="PreToolUse" type="workspace_rules">\nuse pnpm\n</hook_context>'
    assert context in results(worker)[0].content
    assert len(client.requests) == 1


# --------------------------------------------------------------------------------------------------------------
# Trust, transcript, exact stdin
# --------------------------------------------------------------------------------------------------------------


async def test_an_untrusted_project_configuration_does_not_run_until_trusted(env: Env) -> None:
    env.settings({"UserPromptSubmit": group("touch ran.txt")})
    user_settings = env.home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": group("touch user-ran.txt")}}))
    hooks = env.load(trust_project=False)
    assert any("not trusted" in d.message for d in hooks.diagnostics)
    worker = Worker(ScriptedClient([[Text("ok")], [Text("ok")]]))
    hooks.install(worker)
    await worker.run("hi")
    assert not (env.project / "ran.txt").exists()
    assert (env.project / "user-ran.txt").exists()  # user-level hooks need no trust
    trust(env.project, hookloop_home=env.hookloop_home)
    trusted = env.load(trust_project=False)
    assert not any("not trusted" in d.message for d in trusted.diagnostics)
    worker2 = Worker(ScriptedClient([[Text("ok")]]))
    trusted.install(worker2)
    await worker2.run("hi")
    assert (env.project / "ran.txt").exists()
    env.settings({"UserPromptSubmit": group("touch changed.txt")})  # a change needs trust again
    assert any("not trusted" in d.message for d in env.load(trust_project=False).diagnostics)


COPY_TRANSCRIPT = """
import json, os, shutil, sys
data = json.load(sys.stdin)
shutil.copy(data["transcript_path"], os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen.jsonl"))
print(data["transcript_path"])
"""


async def test_transcript_path_is_a_real_jsonl_file_with_the_runs_items(env: Env) -> None:
    env.script("copy.py", COPY_TRANSCRIPT, python=True)
    env.settings({"Stop": group(f"{PY} .claude/hooks/copy.py")})
    shell = Shell()
    worker, _, _ = worker_for(env, [[ToolUse("Bash", {"command": "ls"})], [Text("all done")]], tools=[shell.tool])
    await worker.run("list files")
    lines = [json.loads(line) for line in (env.project / "seen.jsonl").read_text().splitlines()]
    # Claude Code's format (test_claude_transcript has the details), beside hookloop's own transcript
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
    assert lines[0]["message"]["content"] == "list files"
    assert lines[1]["message"]["content"][0]["input"] == {"command": "ls"}
    assert lines[3]["message"]["content"] == [{"type": "text", "text": "all done"}]
    assert worker.transcript_path is not None
    assert (env.root / "transcript.claude.jsonl").read_text() == (env.project / "seen.jsonl").read_text()


DUMP = """
import json, os, sys
data = json.load(sys.stdin)
name = data.get("hook_event_name") or data.get("hookName")
env = {k: os.environ.get(k) for k in ("CLAUDE_PROJECT_DIR", "HOOKLOOP_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID")}
with open(os.path.join(sys.argv[1], name + ".jsonl"), "a") as out:
    out.write(json.dumps({"stdin": data, "env": env, "cwd": os.getcwd()}) + "\\n")
"""

COMMON = {"session_id", "transcript_path", "cwd", "hook_event_name"}
MODE = COMMON | {"permission_mode"}
# What each event's stdin carries here; every key is documented in reference §1.2 (optional ones included).
EXPECTED_CLAUDE = {
    "SessionStart": COMMON | {"source", "model"},
    "UserPromptSubmit": MODE | {"prompt"},
    "PreToolUse": MODE | {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": MODE | {"tool_name", "tool_input"},
    "PostToolUse": MODE | {"tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"},
    "PostToolUseFailure": MODE | {"tool_name", "tool_input", "tool_use_id", "error", "duration_ms"},
    "Notification": COMMON | {"message", "notification_type"},
    "Stop": MODE | {"stop_hook_active", "last_assistant_message"},
    "StopFailure": COMMON | {"error", "error_details", "last_assistant_message"},
    "PreCompact": COMMON | {"trigger", "custom_instructions"},
    "PostCompact": COMMON | {"trigger", "compact_summary"},
    "SessionEnd": COMMON | {"reason"},
}
DOCUMENTED_COMMON = COMMON | {"prompt_id", "permission_mode", "effort", "agent_id", "agent_type"}
DOCUMENTED = {
    "SessionStart": {"source", "model", "agent_type", "session_title"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": {"tool_name", "tool_input", "permission_suggestions"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt", "duration_ms"},
    "Notification": {"message", "title", "notification_type"},
    "Stop": {"stop_hook_active", "last_assistant_message", "background_tasks", "session_crons"},
    "StopFailure": {"error", "error_details", "last_assistant_message"},
    "PreCompact": {"trigger", "custom_instructions"},
    "PostCompact": {"trigger", "compact_summary"},
    "SessionEnd": {"reason"},
}


def dumped(folder: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()]


async def test_each_claude_event_gets_exactly_the_documented_stdin_fields(env: Env) -> None:
    from hookloop.interceptors import Compaction

    dump = env.script("dump.py", DUMP, python=True)
    out = env.root / "dumps"
    out.mkdir()
    env.settings({event: group(PY, args=[str(dump), str(out)]) for event in EXPECTED_CLAUDE})
    shell = Shell()

    @tool
    async def flaky() -> str:
        """Always fails."""
        raise RuntimeError("disk full")

    turns = [
        [ToolUse("Bash", {"command": "ls"}), ToolUse("flaky", {})],
        [Text("done")],
        [ToolUse("Bash", {"command": "deploy prod"})],
        ScriptedTurn(error=ScriptError("the provider is overloaded")),
    ]
    worker, _, _ = worker_for(env, turns, tools=[shell.tool, flaky], model="scripted-model", grace=10)
    worker.add_interceptor(Compaction(threshold_tokens=10**9, strategy="drop", keep_recent_steps=1))
    worker.notify("heads up")
    assert isinstance(await worker.run("go"), Finished)
    assert await worker.compact()
    worker.permissions = PermissionPolicy(ask=["Bash(deploy *)"], mode="bypassPermissions", workspace=env.project)
    assert isinstance(await worker.run("deploy"), Paused)
    with pytest.raises(WorkerError, match="overloaded"):
        await worker.run("again")

    for event, expected in EXPECTED_CLAUDE.items():
        records = dumped(out, event)
        for record in records:
            keys = set(record["stdin"])
            assert keys == expected, (event, keys ^ expected)
            assert keys <= DOCUMENTED_COMMON | DOCUMENTED[event], event
            assert record["stdin"]["hook_event_name"] == event
            assert record["stdin"]["session_id"] == worker.session_id
            assert worker.transcript_path is not None  # the Claude Code-format transcript lives beside it
            assert record["stdin"]["transcript_path"] == str(worker.transcript_path.with_suffix(".claude.jsonl"))
            assert record["stdin"]["cwd"] == record["cwd"] == str(env.project)
            assert record["env"] == {
                "CLAUDE_PROJECT_DIR": str(env.project),
                "HOOKLOOP_PROJECT_DIR": str(env.project),
                "CLAUDE_CODE_SESSION_ID": worker.session_id,
            }
    first = dumped(out, "PreToolUse")[0]["stdin"]
    assert (first["tool_name"], first["tool_input"], first["tool_use_id"]) == ("Bash", {"command": "ls"}, "call_0001")
    assert first["permission_mode"] == "bypassPermissions"  # no policy yet: every call is allowed
    # the later runs continue the session's conversation: Claude Code's ``--continue`` says "resume"
    assert [r["stdin"]["source"] for r in dumped(out, "SessionStart")] == ["startup", "resume", "resume"]
    assert [r["stdin"]["reason"] for r in dumped(out, "SessionEnd")] == ["other"] * 3
    assert [r["stdin"]["notification_type"] for r in dumped(out, "Notification")] == ["injected", "permission_prompt"]
    assert dumped(out, "PostToolUseFailure")[0]["stdin"]["error"] == "tool 'flaky' failed: RuntimeError: disk full"
    assert dumped(out, "PermissionRequest")[0]["stdin"]["permission_mode"] == "bypassPermissions"
    assert dumped(out, "StopFailure")[0]["stdin"]["error"] == "unknown"
    assert dumped(out, "PreCompact")[0]["stdin"]["trigger"] == "manual"


async def test_each_cline_event_gets_the_classic_camelcase_payload(env: Env) -> None:
    from hookloop import Approve
    from hookloop.interceptors import Compaction

    out = env.root / "dumps"
    out.mkdir()
    events = ["TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "PreToolUse", "PostToolUse",
              "UserPromptSubmit", "Notification", "PreCompact"]  # fmt: skip
    for name in events:
        env.script(name, DUMP.replace("sys.argv[1]", repr(str(out))), python=True, folder=".clinerules/hooks")
    shell = Shell()
    turns = [
        [ToolUse("Bash", {"command": "ls"})],
        [Text("done")],
        [ToolUse("Bash", {"command": "deploy"})],
        [Text("ok")],
    ]
    worker, _, _ = worker_for(env, [*turns, [ToolUse("Bash", {"command": "x"})]], tools=[shell.tool])
    worker.add_interceptor(Compaction(threshold_tokens=10**9, strategy="drop", keep_recent_steps=1))
    await worker.run("go")
    await worker.compact()
    worker.permissions = PermissionPolicy(ask=["Bash(deploy*)"], mode="bypassPermissions", workspace=env.project)
    paused = await worker.run("deploy")
    assert isinstance(paused, Paused)
    await worker.resume(paused.checkpoint, {p.call_id: Approve() for p in paused.pending})
    worker.add_hook(PRE_TOOL_CALL, lambda info: Abort("the user stopped it"))
    with pytest.raises(Aborted):
        await worker.run("once more")

    top = {"clineVersion", "hookName", "timestamp", "taskId", "workspaceRoots", "userId", "model"}
    bodies = {
        "TaskStart": {"taskMetadata", "initialTask"},
        "TaskResume": {"taskMetadata", "previousState"},
        "TaskCancel": {"taskMetadata"},
        "TaskComplete": {"taskMetadata"},
        "PreToolUse": {"toolName", "parameters"},
        "PostToolUse": {"toolName", "parameters", "result", "success", "executionTimeMs"},
        "UserPromptSubmit": {"prompt", "attachments"},
        "Notification": {"event", "source", "message", "waitingForUserInput", "requiresUserAction", "severity"},
        "PreCompact": {"taskId", "ulid", "contextSize", "compactionStrategy", "contextJsonPath"},
    }
    for name in events:
        key = name[0].lower() + name[1:]
        for record in dumped(out, name):
            sent = record["stdin"]
            assert set(sent) == top | {key}, name
            assert set(sent[key]) == bodies[name], name
            assert sent["hookName"] == name
            assert sent["model"] == {"provider": "scripted", "slug": "unknown"}
    assert [r["stdin"]["taskId"] for r in dumped(out, "TaskResume")] == [paused.run_id]
    assert dumped(out, "PostToolUse")[0]["stdin"]["postToolUse"]["result"] == "ran: ls"
    assert len(dumped(out, "TaskComplete")) == 2
    assert len(dumped(out, "TaskCancel")) == 1


# --------------------------------------------------------------------------------------------------------------
# PostToolBatch
# --------------------------------------------------------------------------------------------------------------

BATCH_SPY = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "batch.json"), "w") as out:
    json.dump(data, out)
print(json.dumps({"decision": "block", "reason": "two commands per turn is enough"}))
"""


async def test_posttoolbatch_sees_the_whole_batch_once_and_block_stops_before_the_next_model_call(env: Env) -> None:
    spy = env.script("batch.py", BATCH_SPY, python=True)
    env.settings({"PostToolBatch": group(str(spy))})
    shell = Shell()
    turns = [[ToolUse("Bash", {"command": "ls"}, call_id="b1"), ToolUse("Bash", {"command": "pwd"}, call_id="b2")]]
    worker, client, events = worker_for(env, [*turns, [Text("never asked")]], tools=[shell.tool])
    outcome = await worker.run("look around")
    assert isinstance(outcome, Finished)
    assert outcome.reason == "stopped_by_hook"
    assert outcome.stop_reason == "two commands per turn is enough"
    assert len(client.requests) == 1  # the loop stopped before the next model call
    sent = json.loads((env.project / "batch.json").read_text())
    assert sent["hook_event_name"] == "PostToolBatch"
    assert [(c["tool_name"], c["tool_input"], c["tool_use_id"]) for c in sent["tool_calls"]] == [
        ("Bash", {"command": "ls"}, "b1"),
        ("Bash", {"command": "pwd"}, "b2"),
    ]
    assert all(isinstance(c["tool_response"], str) for c in sent["tool_calls"])
    assert [d.decision for d in hook_decisions(events, "PostToolBatch")] == ["Block"]


async def test_permissionrequest_allow_with_updated_input_runs_the_rewritten_call(env: Env) -> None:
    rewrite = permission("allow", updatedInput={"command": "npm test -- --ci"})
    env.settings({"PermissionRequest": group(echo(rewrite), matcher="Bash")})
    shell = Shell()
    worker, _, _ = worker_for(env, [[ToolUse("Bash", {"command": "npm test"})], [Text("ok")]], tools=[shell.tool])
    worker.permissions = PermissionPolicy(ask=["Bash"], workspace=env.project)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert shell.ran == ["npm test -- --ci"]


async def test_pretooluse_context_of_a_call_that_pauses_reaches_the_model_when_it_resumes(env: Env) -> None:
    from hookloop import Approve

    asked = pre(permissionDecision="ask", permissionDecisionReason="confirm", additionalContext="runs in CI mode")
    env.settings({"PreToolUse": group(echo(asked), matcher="Bash")})
    shell = Shell()
    worker, _, _ = worker_for(
        env, [[ToolUse("Bash", {"command": "make"}, call_id="m1")], [Text("ok")]], tools=[shell.tool]
    )
    paused = await worker.run("build")
    assert isinstance(paused, Paused)
    await worker.resume(paused.checkpoint, {"m1": Approve()})
    assert shell.ran == ["make"]
    assert "runs in CI mode" in results(worker)[0].content
