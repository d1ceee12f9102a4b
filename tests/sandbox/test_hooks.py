"""Command hooks under the sandbox: project hooks by default (``sandbox.hooks``), real hook scripts in a real
Worker run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import exists, make_sandbox

from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.model import CommandHandler, ConfiguredHook, HookSource
from hookloop.command_hooks.runner import RunnerOptions, run_hook
from hookloop.permissions import PermissionPolicy
from hookloop.sandbox import BubblewrapBackend, HookSandboxing
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio


def hook(command: str, kind: str) -> ConfiguredHook:
    return ConfiguredHook(
        event="PreToolUse",
        matcher="*",
        handler=CommandHandler(command=command),
        source=HookSource(kind=kind, path="/x/settings.json"),  # type: ignore[arg-type]
        json_path="hooks.PreToolUse[0].hooks[0]",
    )


@pytest.mark.parametrize(
    ("mode", "kind", "sandboxed"),
    [
        ("project", "claude-project", True),
        ("project", "hookloop-local", True),
        ("project", "claude-user", False),
        ("all", "claude-user", True),
        ("none", "claude-project", False),
    ],
)
async def test_which_hooks_run_sandboxed(
    ws: Path, outside: Path, backend: BubblewrapBackend, mode: HookSandboxing, kind: str, sandboxed: bool
) -> None:
    (ws / ".env").write_text("API_KEY=sk-live-123\n")
    sandbox = make_sandbox(ws, backend, deny=["Read(./.env)"], hooks=mode)
    command = f"cat {ws}/.env; echo pwned > {outside}/hooked; echo fine > {ws}/formatted"
    outcome = await run_hook(hook(command, kind), {}, project_dir=ws, options=RunnerOptions(sandbox=sandbox))
    assert (b"sk-live-123" in outcome.stdout) is not sandboxed
    assert exists(outside / "hooked") is not sandboxed
    assert exists(ws / "formatted")  # the workspace stays writable for formatters and the like


async def test_a_project_hook_in_a_worker_run_is_sandboxed(ws: Path, outside: Path, backend: BubblewrapBackend) -> None:
    (ws / ".claude").mkdir()
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": f"touch {ws}/hook-ran {outside}/from-hook; exit 0"}],
                }
            ]
        }
    }
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    sandbox = make_sandbox(ws, backend)
    client = ScriptedClient([[ToolUse("Bash", {"command": "echo ran"})], [Text("done")]])
    worker = Worker(
        client,
        tools=builtin_tools(Workspace(ws), sandbox=sandbox),
        workspace=ws,
        permissions=PermissionPolicy(allow=["Bash"], workspace=ws),
    )
    hooks = CommandHooks.load(
        ws,
        trust_project=True,
        home=ws.parent / "home",
        hookloop_home=ws.parent / "hlhome",
        options=RunnerOptions(sandbox=sandbox),
    )
    hooks.install(worker)
    assert isinstance(await worker.run("go"), Finished)
    assert exists(ws / "hook-ran")
    assert not exists(outside / "from-hook")
    worker.close()


async def test_a_missing_program_in_a_sandboxed_hook_is_not_found(ws: Path, backend: BubblewrapBackend) -> None:
    sandbox = make_sandbox(ws, backend)
    missing = ConfiguredHook(
        event="PreToolUse",
        matcher="*",
        handler=CommandHandler(command="/nonexistent/hook-program", args=()),
        source=HookSource(kind="claude-project", path="/x/settings.json"),
        json_path="hooks.PreToolUse[0].hooks[0]",
    )
    outcome = await run_hook(missing, {}, project_dir=ws, options=RunnerOptions(sandbox=sandbox))
    assert outcome.error_kind == "not_found"
    assert outcome.error is not None
    assert "/nonexistent/hook-program" in outcome.error


async def test_with_fail_if_unavailable_a_covered_hook_does_not_run_unsandboxed(ws: Path) -> None:
    from hookloop.sandbox import NoSandbox, Sandbox, SandboxSettings

    sandbox = Sandbox(
        SandboxSettings(enabled=True, fail_if_unavailable=True), workspace=ws, backend=NoSandbox("none in this test")
    )
    outcome = await run_hook(
        hook(f"touch {ws}/ran", "claude-project"), {}, project_dir=ws, options=RunnerOptions(sandbox=sandbox)
    )
    assert outcome.error_kind == "spawn_failed"
    assert not exists(ws / "ran")
    relaxed = Sandbox(SandboxSettings(enabled=True), workspace=ws, backend=NoSandbox("none in this test"))
    outcome = await run_hook(
        hook(f"touch {ws}/ran", "claude-project"), {}, project_dir=ws, options=RunnerOptions(sandbox=relaxed)
    )
    assert outcome.ok
    assert exists(ws / "ran")
