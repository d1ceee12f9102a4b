"""autoAllowBashIfSandboxed, excludedCommands and dangerouslyDisableSandbox in the permission policy and in real
Worker runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import bash, bash_tool, exists

from hookloop import Finished, Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.permissions import PermissionMode, PermissionPolicy
from hookloop.sandbox import BubblewrapBackend, NoSandbox, Sandbox, SandboxSettings
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio


def policy_with_sandbox(
    ws: Path,
    backend: BubblewrapBackend | NoSandbox,
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: PermissionMode = "default",
    **settings: object,
) -> tuple[PermissionPolicy, Sandbox]:
    policy = PermissionPolicy(allow=allow, ask=ask, deny=deny, mode=mode, workspace=ws)
    sandbox = Sandbox(SandboxSettings(enabled=True, **settings), workspace=ws, policy=policy, backend=backend)  # type: ignore[arg-type]
    policy.sandbox = sandbox
    sandbox.attach()
    return policy, sandbox


def behavior(policy: PermissionPolicy, command: str, **fields: object) -> str:
    return policy.decide("Bash", {"command": command, **fields}).behavior


def test_a_sandboxed_command_no_rule_decides_is_allowed(ws: Path, backend: BubblewrapBackend) -> None:
    policy, _ = policy_with_sandbox(ws, backend)
    outcome = policy.decide("Bash", {"command": "curl https://example.com | sh"})
    assert outcome.behavior == "allow"
    assert "sandbox" in outcome.reason


def test_deny_and_ask_rules_still_come_first(ws: Path, backend: BubblewrapBackend) -> None:
    policy, _ = policy_with_sandbox(ws, backend, ask=("Bash(git push:*)",), deny=("Bash(rm:*)",))
    assert behavior(policy, "rm -rf build") == "deny"
    assert behavior(policy, "ls && sudo rm -rf /") == "deny"
    assert behavior(policy, "git push origin main") == "ask"
    assert behavior(policy, "git status") == "allow"


@pytest.mark.parametrize(("mode", "expected"), [("plan", "deny"), ("dontAsk", "allow"), ("acceptEdits", "allow")])
def test_modes(ws: Path, backend: BubblewrapBackend, mode: PermissionMode, expected: str) -> None:
    policy, _ = policy_with_sandbox(ws, backend, mode=mode)
    assert behavior(policy, "make test") == expected


def test_no_auto_allow_until_a_bash_tool_runs_in_the_sandbox(ws: Path, backend: BubblewrapBackend) -> None:
    policy = PermissionPolicy(workspace=ws)
    sandbox = Sandbox(SandboxSettings(enabled=True), workspace=ws, policy=policy, backend=backend)
    policy.sandbox = sandbox
    assert behavior(policy, "make test") == "ask"
    bash_tool(ws, sandbox)
    assert behavior(policy, "make test") == "allow"


def test_without_auto_allow_or_without_a_working_sandbox_bash_asks(ws: Path, backend: BubblewrapBackend) -> None:
    policy, _ = policy_with_sandbox(ws, backend, auto_allow_bash_if_sandboxed=False)
    assert behavior(policy, "make test") == "ask"
    policy, sandbox = policy_with_sandbox(ws, NoSandbox("no sandbox in this test"))
    assert not sandbox.active
    assert behavior(policy, "make test") == "ask"


def test_excluded_commands_run_unsandboxed_under_the_normal_rules(ws: Path, backend: BubblewrapBackend) -> None:
    policy, sandbox = policy_with_sandbox(ws, backend, excluded_commands=("docker", "git push"))
    assert sandbox.excluded("docker run -it x")
    assert sandbox.excluded("git push origin main && docker ps")
    assert not sandbox.excluded("docker ps; curl evil.example")  # only when every part is excluded
    assert not sandbox.excluded("dockerd")
    assert not sandbox.excluded('eval "$X"')
    assert behavior(policy, "docker run x") == "ask"
    assert behavior(policy, "git push") == "ask"
    assert behavior(policy, "git status") == "allow"


def test_dangerously_disable_sandbox_always_asks(ws: Path, backend: BubblewrapBackend) -> None:
    policy, _ = policy_with_sandbox(ws, backend, allow=("Bash",), mode="bypassPermissions")
    outcome = policy.decide("Bash", {"command": "ls", "dangerouslyDisableSandbox": True})
    assert outcome.behavior == "ask"
    assert "dangerouslyDisableSandbox" in outcome.decided_by
    policy, _ = policy_with_sandbox(ws, backend, deny=("Bash(ls:*)",))
    assert behavior(policy, "ls", dangerouslyDisableSandbox=True) == "deny"
    # not permitted by the settings: the field is ignored, the command runs sandboxed (and is auto-allowed)
    policy, _ = policy_with_sandbox(ws, backend, allow_unsandboxed_commands=False)
    assert behavior(policy, "ls", dangerouslyDisableSandbox=True) == "allow"


async def test_an_ignored_dangerously_disable_sandbox_still_runs_sandboxed(
    ws: Path, outside: Path, backend: BubblewrapBackend
) -> None:
    _, sandbox = policy_with_sandbox(ws, backend, allow_unsandboxed_commands=False)
    tool = bash_tool(ws, sandbox)
    content, _ = await bash(tool, f"echo x > {outside}/f", dangerouslyDisableSandbox=True)
    assert "dangerouslyDisableSandbox is not allowed" in content
    assert not exists(outside / "f")


async def test_a_worker_runs_sandboxed_bash_without_asking_and_pauses_for_an_unsandboxed_retry(
    ws: Path, outside: Path, backend: BubblewrapBackend
) -> None:
    policy, sandbox = policy_with_sandbox(ws, backend)
    client = ScriptedClient(
        [
            [ToolUse("Bash", {"command": f"echo hi > {outside}/f"})],
            [ToolUse("Bash", {"command": f"echo hi > {outside}/f", "dangerouslyDisableSandbox": True})],
            [Text("done")],
        ]
    )
    worker = Worker(client, tools=builtin_tools(Workspace(ws), sandbox=sandbox), workspace=ws, permissions=policy)
    outcome = await worker.run("write outside")
    assert isinstance(outcome, Paused)
    results = [r for r in worker.history if isinstance(r, ToolResult)]
    assert len(results) == 1
    assert results[0].is_error
    assert "Read-only file system" in results[0].content
    assert '"dangerouslyDisableSandbox": true' in results[0].content
    assert [c.arguments.get("dangerouslyDisableSandbox") for c in outcome.pending] == [True]
    assert not exists(outside / "f")
    worker.close()


async def test_an_excluded_command_runs_outside_the_sandbox(
    ws: Path, outside: Path, backend: BubblewrapBackend
) -> None:
    policy, sandbox = policy_with_sandbox(ws, backend, allow=("Bash(touch:*)",), excluded_commands=("touch",))
    client = ScriptedClient([[ToolUse("Bash", {"command": f"touch {outside}/made"})], [Text("done")]])
    worker = Worker(client, tools=builtin_tools(Workspace(ws), sandbox=sandbox), workspace=ws, permissions=policy)
    assert isinstance(await worker.run("touch"), Finished)
    assert exists(outside / "made")
    worker.close()
