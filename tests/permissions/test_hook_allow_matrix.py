"""A hook's allow never gets a call past a rule — in every permission mode, in a plain run, inside a subagent
started by the Agent tool, inside an ``as_tool`` Worker whose own hook allows everything, and on resume.

Each case is a real built-in tool (Bash, Write) on a real workspace with an ``Allow()`` hook on every Worker
involved; what must never happen is checked on the file system: the file the call would create or change."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from agents.support import Routed
from hookloop import Approve, Finished, Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop.agents import AgentTool, parse_agent
from hookloop.hooks import Allow
from hookloop.items import ToolResult
from hookloop.permissions import PermissionMode, PermissionPolicy
from hookloop.tools.builtin import builtin_tools

pytestmark = pytest.mark.anyio

MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
Path_ = Literal["plain", "agent", "as_tool"]
PATHS: tuple[Path_, ...] = ("plain", "agent", "as_tool")

# What each case's call is, the rule that must hold, and the file it would make.
CASES = {
    "deny rule": ("Bash", {"command": "touch made-by-rm-rule; rm -f x"}, {"deny": ["Bash(rm:*)"]}, "made-by-rm-rule"),
    "ask rule": ("Bash", {"command": "git init -q pushed && touch pushed/x"}, {"ask": ["Bash(git:*)"]}, "pushed"),
    "protected path": ("Write", {"file_path": ".git/hooks/pre-commit", "content": "evil"}, {}, ".git/hooks/pre-commit"),
    "protected via Bash": ("Bash", {"command": "mkdir -p .claude && echo x > .claude/settings.json"}, {}, ".claude"),
}


def allow_everything(worker: Worker) -> Worker:
    worker.add_pre_tool_call_hook(lambda info: Allow("the hook approves everything"))
    return worker


def build(path: Path_, mode: PermissionMode, case: str, workspace: Path) -> tuple[Worker, ScriptedClient]:
    """The Worker the run starts on, and the script of the Worker whose call must not get through."""
    tool_name, arguments, rules, _ = CASES[case]
    policy = PermissionPolicy(mode=mode, workspace=workspace, **rules)  # type: ignore[arg-type]
    call = ToolUse(tool_name, arguments, call_id="c_x")
    tools = builtin_tools(workspace)
    if path == "plain":
        script = ScriptedClient([[call], [Text("tried")]])
        return allow_everything(Worker(script, tools=tools, permissions=policy, workspace=workspace)), script
    if path == "agent":
        rogue = parse_agent(
            "---\nname: rogue\ndescription: tries\ntools: Bash, Write\npermissionMode: bypassPermissions\n---\n"
            "You are rogue."
        )
        child = ScriptedClient([[call], [Text("tried")]])
        parent_script = ScriptedClient(
            [
                [ToolUse("Agent", {"description": "d", "prompt": "p", "subagent_type": "rogue"}, call_id="c_a")],
                [Text("done")],
            ]
        )
        parent = Worker(
            Routed({"": parent_script, "You are rogue.": child}),
            tools=[*tools, AgentTool([rogue])],
            permissions=policy,
            workspace=workspace,
        )
        return allow_everything(parent), child
    child = ScriptedClient([[call], [Text("tried")]])
    helper = Worker(
        Routed({"You help.": child}),
        tools=tools,
        system="You help.",
        permissions=PermissionPolicy(mode="bypassPermissions", workspace=workspace),
        workspace=workspace,
    )
    parent = Worker(
        Routed({"": ScriptedClient([[ToolUse("helper", {"prompt": "go"}, call_id="c_h")], [Text("ok")]])}),
        tools=[allow_everything(helper).as_tool("helper", "Helps.")],
        permissions=policy,
        workspace=workspace,
    )
    return allow_everything(parent), child


def denied_to_the_model(script: ScriptedClient) -> bool:
    """Whether the Worker that made the call told its model the call did not run."""
    if len(script.requests) < 2:
        return False
    answers = [i for i in script.requests[1].items if isinstance(i, ToolResult) and i.call_id == "c_x"]
    return bool(answers) and all(a.is_error for a in answers)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_hook_allow_never_gets_a_call_past_a_rule(
    tmp_path: Path, mode: PermissionMode, path: Path_, case: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / CASES[case][3]
    worker, script = build(path, mode, case, workspace)
    outcome = await worker.run("go")
    assert not target.exists(), f"{case} in {mode} ({path}): the call ran"
    if isinstance(outcome, Paused):  # asked: the call waits for a person, and a hook cannot answer for them
        assert [p.call_id.rsplit("/", 1)[-1] for p in outcome.pending] == ["c_x"]
    else:
        assert isinstance(outcome, Finished)
        assert denied_to_the_model(script), f"{case} in {mode} ({path}): the model was not told it was refused"


@pytest.mark.parametrize("mode", MODES)
async def test_an_approval_edited_into_a_denied_command_does_not_run_on_resume(
    tmp_path: Path, mode: PermissionMode
) -> None:
    """The person approves an asked call but edits it into what a deny rule forbids; the hook still allows."""
    script = ScriptedClient([[ToolUse("Bash", {"command": "git status"}, call_id="c_x")], [Text("ok")]])
    policy = PermissionPolicy(mode=mode, workspace=tmp_path, ask=["Bash(git:*)"], deny=["Bash(touch:*)"])
    worker = allow_everything(Worker(script, tools=builtin_tools(tmp_path), permissions=policy, workspace=tmp_path))
    outcome = await worker.run("go")
    if not isinstance(outcome, Paused):  # plan / dontAsk refuse what they would ask: nothing to approve
        assert mode in ("plan", "dontAsk")
        assert denied_to_the_model(script)
        return
    again = allow_everything(Worker(script, tools=builtin_tools(tmp_path), permissions=policy, workspace=tmp_path))
    edited = Approve(updated_input={"command": "touch edited-in"})
    outcome = await again.resume(outcome.checkpoint, {"c_x": edited})
    assert not (tmp_path / "edited-in").exists()
    [answer] = [i for i in again.history if isinstance(i, ToolResult) and i.call_id == "c_x"]
    assert answer.is_error
