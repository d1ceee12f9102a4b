"""SPEC §4.4 end to end: rules are enforced inside the Worker, after pre_tool_call hooks, and a hook's allow
never bypasses a deny or ask rule, while its deny or ask always tightens."""

from __future__ import annotations

from typing import Any

import pytest

from hookloop import AllowAlways, Finished, Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker, tool
from hookloop.hooks import Allow, Ask, Continue, Deny
from hookloop.permissions import PermissionPolicy

pytestmark = pytest.mark.anyio

ran: list[str] = []


@tool(name="Bash")
async def bash(command: str, description: str = "") -> str:
    """Pretend to run a command."""
    ran.append(command)
    return f"ran {command}"


@tool(name="Read", read_only=True)
async def read(file_path: str) -> str:
    """Pretend to read a file."""
    return f"read {file_path}"


def results(worker: Worker) -> list[ToolResult]:
    return [i for i in worker.history if isinstance(i, ToolResult)]


def worker_for(command: str, policy: PermissionPolicy, *extra: Any) -> Worker:
    return Worker(
        ScriptedClient([[ToolUse("Bash", {"command": command}, call_id="b1")], [Text("ok")]]),
        tools=[bash, read],
        permissions=policy,
    )


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


async def test_a_hook_allow_does_not_bypass_a_deny_rule() -> None:
    worker = worker_for("rm -rf build", PermissionPolicy(deny=["Bash(rm:*)"], allow=["Bash"]))
    worker.add_pre_tool_call_hook(lambda info: Allow("the hook thinks it is fine"))
    await worker.run("clean")
    result = results(worker)[0]
    assert result.is_error
    assert "Bash(rm:*)" in result.content
    assert ran == []


async def test_a_hook_allow_does_not_bypass_an_ask_rule() -> None:
    worker = worker_for("git push origin main", PermissionPolicy(ask=["Bash(git push:*)"], allow=["Bash"]))
    worker.add_pre_tool_call_hook(lambda info: Allow())
    outcome = await worker.run("ship")
    assert isinstance(outcome, Paused)
    assert "git push" in outcome.pending[0].asked_by
    assert ran == []


async def test_a_hook_deny_or_ask_tightens_an_allow_rule() -> None:
    worker = worker_for("npm run test:unit", PermissionPolicy(allow=["Bash(npm run:*)"]))
    worker.add_pre_tool_call_hook(lambda info: Deny("tests are frozen today"))
    await worker.run("test")
    assert "tests are frozen today" in results(worker)[0].content
    assert ran == []

    worker = worker_for("npm run test:unit", PermissionPolicy(allow=["Bash(npm run:*)"]))
    worker.add_pre_tool_call_hook(lambda info: Ask("double-check"))
    assert isinstance(await worker.run("test"), Paused)


async def test_permission_rules_see_the_input_a_hook_rewrote() -> None:
    worker = worker_for("ls", PermissionPolicy(allow=["Bash(ls:*)"], deny=["Bash(rm:*)"]))
    worker.add_pre_tool_call_hook(lambda info: Continue(updated_input={"command": "rm -rf /"}))
    await worker.run("list")
    assert results(worker)[0].is_error
    assert ran == []


async def test_default_mode_allows_read_only_tools_and_asks_for_the_rest_and_allow_always_remembers() -> None:
    turns: list[Any] = [
        [ToolUse("Read", {"file_path": "README.md"}, call_id="r1"), ToolUse("Bash", {"command": "make"}, call_id="b1")],
        [ToolUse("Bash", {"command": "make"}, call_id="b2")],
        [Text("built")],
    ]
    worker = Worker(ScriptedClient(turns), tools=[bash, read], permissions=PermissionPolicy(mode="default"))
    outcome = await worker.run("build")
    assert isinstance(outcome, Paused)
    assert [c.call_id for c in outcome.pending] == ["b1"]
    outcome = await worker.resume(outcome.checkpoint, {"b1": AllowAlways("Bash(make)")})
    assert isinstance(outcome, Finished)
    assert ran == ["make", "make"]
    assert [r.content for r in results(worker)] == ["read README.md", "ran make", "ran make"]


async def test_plan_mode_and_dont_ask_mode() -> None:
    worker = worker_for("make", PermissionPolicy(mode="dontAsk"))
    await worker.run("build")
    assert results(worker)[0].is_error
    assert ran == []

    worker = worker_for("make", PermissionPolicy(mode="bypassPermissions", deny=["Bash(rm:*)"]))
    await worker.run("build")
    assert ran == ["make"]


async def test_approvers_decide_asks_in_order_before_the_run_would_pause() -> None:
    from hookloop import Approve, PendingCall, Reject

    seen: list[str] = []

    async def undecided(call: PendingCall) -> None:
        seen.append(f"undecided:{call.call_id}")
        return None

    async def policy_service(call: PendingCall) -> Approve | Reject:
        seen.append(f"service:{call.call_id}")
        return Approve() if "make" in str(call.arguments["command"]) else Reject("only make is allowed")

    turns: list[Any] = [
        [ToolUse("Bash", {"command": "make"}, call_id="b1"), ToolUse("Bash", {"command": "curl x"}, call_id="b2")],
        [Text("ok")],
    ]
    worker = Worker(
        ScriptedClient(turns), tools=[bash], permissions=PermissionPolicy(), approvers=[undecided, policy_service]
    )
    events: list[Any] = []
    worker.subscribe(events.append)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert seen == ["undecided:b1", "service:b1", "undecided:b2", "service:b2"]
    assert ran == ["make"]
    assert "denied by policy_service: only make is allowed" in results(worker)[1].content
    decisions = [e for e in events if getattr(e, "event", None) == "permission_request"]
    assert [(d.hook, d.decision) for d in decisions] == [("policy_service", "Approve"), ("policy_service", "Reject")]


async def test_approvers_never_answer_a_hook_pause() -> None:
    from hookloop import Approve, PendingCall
    from hookloop.hooks import Pause

    async def yes(call: PendingCall) -> Approve:
        raise AssertionError("a hook's Pause must not reach approvers")

    worker = worker_for("make", PermissionPolicy(allow=["Bash"]))
    worker.approvers.append(yes)
    worker.add_pre_tool_call_hook(lambda info: Pause("a person must look"))
    assert isinstance(await worker.run("go"), Paused)


async def test_an_approval_may_rewrite_the_call_and_deny_rules_still_see_the_new_input() -> None:
    from hookloop import Approve, PendingCall

    async def safer(call: PendingCall) -> Approve:
        return Approve(updated_input={"command": str(call.arguments["command"]) + " --dry-run"})

    turns: list[Any] = [[ToolUse("Bash", {"command": "make deploy"}, call_id="b1")], [Text("ok")]]
    worker = Worker(ScriptedClient(turns), tools=[bash], permissions=PermissionPolicy(), approvers=[safer])
    await worker.run("deploy")
    assert ran == ["make deploy --dry-run"]
    assert results(worker)[0].meta["input_edited_by"] == "safer"

    async def sneaky(call: PendingCall) -> Approve:
        return Approve(updated_input={"command": "rm -rf /"})

    ran.clear()
    worker = Worker(
        ScriptedClient(turns), tools=[bash], permissions=PermissionPolicy(deny=["Bash(rm:*)"]), approvers=[sneaky]
    )
    await worker.run("deploy")
    assert ran == []
    assert "Bash(rm:*)" in results(worker)[0].content


async def test_resume_with_a_rewritten_approval() -> None:
    from hookloop import Approve

    worker = worker_for("make deploy", PermissionPolicy())
    paused = await worker.run("deploy")
    assert isinstance(paused, Paused)
    await worker.resume(paused.checkpoint, {"b1": Approve(updated_input={"command": "make test"})})
    assert ran == ["make test"]
    bad = worker_for("make deploy", PermissionPolicy())
    paused = await bad.run("deploy")
    assert isinstance(paused, Paused)
    await bad.resume(paused.checkpoint, {"b1": Approve(updated_input={"cmd": "oops"})})
    assert "field 'command': Field required" in results(bad)[0].content
    assert ran == ["make test"]
