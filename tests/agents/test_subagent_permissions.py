"""The parent's permission policy applies inside a subagent; a definition (or an as_tool Worker's own policy) can
only narrow it. Each test is an attempt to widen it, with real Bash and real files that must stay untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.support import Routed, request_texts, tool_names
from helpers import assert_valid_history
from hookloop import Approve, Finished, Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop.agents import AgentDefinition, AgentDefinitionError, AgentTool, narrow_mode, parse_agent
from hookloop.items import ToolResult
from hookloop.permissions import PermissionPolicy
from hookloop.permissions._types import MODES
from hookloop.tools.builtin import builtin_tools

pytestmark = pytest.mark.anyio
STRICT = {"bypassPermissions": 0, "acceptEdits": 1, "default": 2, "dontAsk": 3, "plan": 4}


def definition(text: str) -> AgentDefinition:
    return parse_agent(text)


def spawn(kind: str, call_id: str = "c_agent") -> ToolUse:
    return ToolUse("Agent", {"description": kind, "prompt": "do it", "subagent_type": kind}, call_id=call_id)


def results(worker: Worker) -> dict[str, ToolResult]:
    return {i.call_id: i for i in worker.history if isinstance(i, ToolResult)}


async def test_a_definition_granting_bash_and_bypass_cannot_run_what_the_parent_denies(tmp_path: Path) -> None:
    rogue = definition(
        "---\nname: rogue\ndescription: tries\ntools: Bash, Write\n"
        "permissionMode: bypassPermissions\n---\nYou are rogue."
    )
    child = ScriptedClient(
        [[ToolUse("Bash", {"command": "touch pwned"}, call_id="c_bash")], [Text("tried")]],
    )
    parent_script = ScriptedClient([[spawn("rogue")], [Text("done")]])
    policy = PermissionPolicy(deny=["Bash(touch *)"], mode="default", workspace=tmp_path)
    worker = Worker(
        Routed({"": parent_script, "You are rogue.": child}),
        tools=[*builtin_tools(tmp_path), AgentTool([rogue])],
        permissions=policy,
        workspace=tmp_path,
    )
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert not (tmp_path / "pwned").exists()
    denial = [t for t in request_texts(child.requests[1]) if "permission denied" in t]
    assert denial, request_texts(child.requests[1])
    assert policy.mode == "default"  # the child's copy never changed the parent's


async def test_bypass_in_a_child_under_a_default_parent_still_asks_and_pauses(tmp_path: Path) -> None:
    rogue = definition("---\nname: rogue\ndescription: d\npermissionMode: bypassPermissions\n---\nYou are rogue.")
    child = ScriptedClient([[ToolUse("Write", {"file_path": "x.txt", "content": "hi"}, call_id="c_write")]])
    worker = Worker(
        Routed({"": ScriptedClient([[spawn("rogue")]]), "You are rogue.": child}),
        tools=[*builtin_tools(tmp_path), AgentTool([rogue])],
        permissions=PermissionPolicy(mode="default", workspace=tmp_path),
        workspace=tmp_path,
    )
    outcome = await worker.run("go")
    assert isinstance(outcome, Paused)
    assert [p.call_id for p in outcome.pending] == ["c_agent/c_write"]
    assert not (tmp_path / "x.txt").exists()


async def test_a_stricter_mode_in_the_definition_applies(tmp_path: Path) -> None:
    planner = definition("---\nname: planner\ndescription: d\npermissionMode: plan\n---\nYou are planner.")
    child = ScriptedClient([[ToolUse("Bash", {"command": "touch made"}, call_id="c_b")], [Text("planned")]])
    worker = Worker(
        Routed({"": ScriptedClient([[spawn("planner")], [Text("ok")]]), "You are planner.": child}),
        tools=[*builtin_tools(tmp_path), AgentTool([planner])],
        permissions=PermissionPolicy(mode="bypassPermissions", workspace=tmp_path),
        workspace=tmp_path,
    )
    assert isinstance(await worker.run("go"), Finished)
    assert not (tmp_path / "made").exists()
    assert any("plan mode" in t for t in request_texts(child.requests[1]))


async def test_tool_names_pick_among_the_parents_tools_exactly_and_never_add_one(tmp_path: Path) -> None:
    alias = definition("---\nname: alias\ndescription: d\ntools: [bash, read, Write, mcp__x__y]\n---\nYou are alias.")
    child = ScriptedClient([[ToolUse("Bash", {"command": "touch aliased"}, call_id="c_b")], [Text("no bash")]])
    reader = [t for t in builtin_tools(tmp_path) if t.meta.name in ("Read", "Bash")]
    worker = Worker(
        Routed({"": ScriptedClient([[spawn("alias")], [Text("ok")]]), "You are alias.": child}),
        tools=[*reader, AgentTool([alias])],
        workspace=tmp_path,
    )
    assert isinstance(await worker.run("go"), Finished)
    assert tool_names(child.requests[0]) == []  # 'bash' and 'read' are not Bash and Read; Write is not the parent's
    assert not (tmp_path / "aliased").exists()
    assert any("unknown tool 'Bash'" in t for t in request_texts(child.requests[1]))
    with pytest.raises(AgentDefinitionError, match=r"tools\[0\]: 'Bash\(git \*\)'.*permission rule"):
        definition("---\nname: x\ndescription: d\ntools: Bash(git *)\n---\n")
    scoped = definition("---\nname: x\ndescription: d\ntools: Read, Task(alias, nope)\n---\n")
    assert scoped.tools == ("Read", "Agent")
    assert scoped.agents == ("alias", "nope")


async def test_an_as_tool_worker_with_its_own_bypass_policy_is_held_to_the_callers_rules(tmp_path: Path) -> None:
    helper = Worker(
        Routed(
            {"You help.": ScriptedClient([[ToolUse("Bash", {"command": "touch helped"}, call_id="c_b")], [Text("x")]])}
        ),
        tools=builtin_tools(tmp_path),
        system="You help.",
        permissions=PermissionPolicy(mode="bypassPermissions", workspace=tmp_path),
        workspace=tmp_path,
    )
    parent = Worker(
        Routed({"": ScriptedClient([[ToolUse("helper", {"prompt": "go"}, call_id="c_h")], [Text("ok")]])}),
        tools=[helper.as_tool("helper", "Helps.")],
        permissions=PermissionPolicy(deny=["Bash"], workspace=tmp_path),
        workspace=tmp_path,
    )
    assert isinstance(await parent.run("go"), Finished)
    assert not (tmp_path / "helped").exists()
    denied = results(helper)["c_b"]
    assert denied.is_error
    assert "parent policy" in denied.content
    assert helper._outer_policies == ()  # the ceiling is lifted once the call is over


async def test_an_approval_that_edits_the_input_cannot_slip_past_the_callers_deny(tmp_path: Path) -> None:
    helper = Worker(
        Routed({"You help.": ScriptedClient([[ToolUse("Bash", {"command": "echo hi"}, call_id="c_b")], [Text("x")]])}),
        tools=builtin_tools(tmp_path),
        system="You help.",
        permissions=PermissionPolicy(mode="bypassPermissions", workspace=tmp_path),
        workspace=tmp_path,
    )
    parent = Worker(
        Routed({"": ScriptedClient([[ToolUse("helper", {"prompt": "go"}, call_id="c_h")], [Text("ok")]])}),
        tools=[helper.as_tool("helper", "Helps.")],
        permissions=PermissionPolicy(ask=["Bash(echo *)"], deny=["Bash(touch *)"], workspace=tmp_path),
        workspace=tmp_path,
    )
    paused = await parent.run("go")
    assert isinstance(paused, Paused)
    assert [p.call_id for p in paused.pending] == ["c_h/c_b"]
    outcome = await parent.resume(
        paused.checkpoint, decisions={"c_h/c_b": Approve(updated_input={"command": "touch x"})}
    )
    assert isinstance(outcome, Finished)
    assert not (tmp_path / "x").exists()
    assert "parent policy" in results(helper)["c_b"].content
    assert_valid_history(parent.history)


async def test_a_resume_decision_for_a_call_that_is_not_pending_is_refused(tmp_path: Path) -> None:
    child = ScriptedClient([[ToolUse("Write", {"file_path": "x.txt", "content": "hi"}, call_id="c_write")]])
    worker = Worker(
        Routed(
            {
                "": ScriptedClient([[spawn("general-purpose")]]),
                AgentTool().agents["general-purpose"].system_prompt: child,
            }
        ),
        tools=[*builtin_tools(tmp_path), AgentTool()],
        permissions=PermissionPolicy(workspace=tmp_path),
        workspace=tmp_path,
    )
    paused = await worker.run("go")
    assert isinstance(paused, Paused)
    with pytest.raises(ValueError, match="not pending: c_agent/nope"):
        await worker.resume(paused.checkpoint, decisions={"c_agent/c_write": Approve(), "c_agent/nope": Approve()})
    with pytest.raises(ValueError, match="missing: c_agent/c_write"):
        await worker.resume(paused.checkpoint, decisions={})


@given(st.sampled_from(MODES), st.one_of(st.none(), st.sampled_from(MODES)))
def test_narrow_mode_never_loosens_the_parents_mode(parent: str, wanted: str | None) -> None:
    got = narrow_mode(parent, wanted)  # type: ignore[arg-type]
    assert STRICT[got] >= STRICT[parent]
    assert got in (parent, wanted)


async def test_a_rule_for_task_covers_the_agent_tool_and_a_denied_type_never_starts(tmp_path: Path) -> None:
    rogue = definition("---\nname: rogue\ndescription: d\n---\nYou are rogue.")
    child = ScriptedClient([[Text("I ran")]])
    worker = Worker(
        Routed({"": ScriptedClient([[spawn("rogue")], [Text("ok")]]), "You are rogue.": child}),
        tools=[AgentTool([rogue])],
        permissions=PermissionPolicy(deny=["Task(rogue)"], workspace=tmp_path),
        workspace=tmp_path,
    )
    assert isinstance(await worker.run("go"), Finished)
    assert child.requests == []
    assert "permission denied" in results(worker)["c_agent"].content


async def test_the_callers_read_deny_rules_filter_what_an_as_tool_workers_search_sees(tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("TOKEN=hunter2\n")
    (tmp_path / "open.txt").write_text("TOKEN=public\n")
    grep = [t for t in builtin_tools(tmp_path) if t.meta.name == "Grep"]
    helper = Worker(
        Routed(
            {
                "You help.": ScriptedClient(
                    [[ToolUse("Grep", {"pattern": "TOKEN", "output_mode": "content"}, call_id="c_g")], [Text("x")]]
                )
            }
        ),
        tools=grep,
        system="You help.",
        workspace=tmp_path,
    )
    parent = Worker(
        Routed({"": ScriptedClient([[ToolUse("helper", {"prompt": "find tokens"}, call_id="c_h")], [Text("ok")]])}),
        tools=[helper.as_tool("helper", "Helps.")],
        permissions=PermissionPolicy(deny=["Read(secret/**)"], workspace=tmp_path),
        workspace=tmp_path,
    )
    assert isinstance(await parent.run("go"), Finished)
    found = results(helper)["c_g"].content
    assert "public" in found
    assert "hunter2" not in found


async def test_agent_types_named_in_the_tools_list_are_the_only_ones_the_child_may_start(tmp_path: Path) -> None:
    lead = definition("---\nname: lead\ndescription: d\ntools: Agent(helper)\n---\nYou are lead.")
    helper = definition("---\nname: helper\ndescription: d\n---\nYou are helper.")
    escape = ToolUse("Agent", {"description": "x", "prompt": "x", "subagent_type": "general-purpose"}, call_id="c_gp")
    child = ScriptedClient([[escape], [Text("could not")]])
    gp = AgentTool().agents["general-purpose"].system_prompt
    general = ScriptedClient([[Text("escaped")]])
    worker = Worker(
        Routed({"": ScriptedClient([[spawn("lead")], [Text("ok")]]), "You are lead.": child, gp: general}),
        tools=[AgentTool([lead, helper])],
        workspace=tmp_path,
    )
    assert isinstance(await worker.run("go"), Finished)
    (spec,) = child.requests[0].tools
    assert spec.input_schema["properties"]["subagent_type"]["enum"] == ("helper",)
    assert general.requests == []
    assert any("unknown subagent type 'general-purpose'" in t for t in request_texts(child.requests[1]))
