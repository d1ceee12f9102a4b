"""A child's pause pauses the parent with one checkpoint; resume continues inside the child in a new process.
Claude Code's SubagentStart / SubagentStop command hooks run as real subprocesses, and hooks firing inside a
subagent get agent_id / agent_type."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from agents.support import Routed, request_texts
from hookloop import Checkpoint, Finished, Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop.agents import AgentDefinition, AgentTool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.errors import CheckpointError
from hookloop.items import ToolResult
from hookloop.permissions import PermissionPolicy

pytestmark = pytest.mark.anyio
SRC = Path(__file__).resolve().parents[2] / "src"
TESTS = Path(__file__).resolve().parents[1]

BUILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agents.support import Routed
    from hookloop import ScriptedClient, Text, ToolUse, Worker, tool
    from hookloop.agents import AgentDefinition, AgentTool
    from hookloop.permissions import PermissionPolicy

    def build(work: Path, parent_turns, child_turns) -> Worker:
        @tool
        async def deploy(target: str) -> str:
            '''Deploy (writes a marker file: proves where and how often it ran).'''
            with open(work / "deployed.log", "a") as f:
                f.write(f"{target}\\n")
            return f"deployed {target}"

        ops = AgentDefinition(name="ops", description="deploys", system_prompt="You are ops.", tools=("deploy",))
        client = Routed({"": ScriptedClient(parent_turns), "You are ops.": ScriptedClient(child_turns)})
        return Worker(
            client,
            tools=[deploy, AgentTool([ops])],
            permissions=PermissionPolicy(ask=["deploy"], workspace=work),
            workspace=work,
            checkpoint_key=b"k" * 32,
            checkpoint_ledger=work / "ledger",
        )
    """
)

RESUME = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from build_worker import build
    from hookloop import Approve, Checkpoint, Text

    work = Path(sys.argv[1])
    worker = build(work, [[Text("parent: shipped")]], [[Text("child: deployed prod")]])
    checkpoint = Checkpoint.load(work / "paused.json", key=b"k" * 32)
    decision = {call.call_id: Approve() for call in checkpoint.pending}
    outcome = asyncio.run(worker.resume(checkpoint, decisions=decision))
    print(json.dumps({
        "type": type(outcome).__name__,
        "text": getattr(outcome, "text", None),
        "results": [i.content for i in worker.history if getattr(i, "is_error", None) is not None],
    }))
    """
)


class Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


async def run_python(script: Path, arg: Path, env: dict[str, str]) -> Ran:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(arg), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=50)
    assert proc.returncode is not None
    return Ran(proc.returncode, out.decode(), err.decode())


async def test_a_pause_in_a_child_is_one_checkpoint_and_resumes_inside_the_child_in_a_new_process(
    tmp_path: Path,
) -> None:
    (tmp_path / "build_worker.py").write_text(BUILD)
    (tmp_path / "resume.py").write_text(RESUME)
    sys.path.insert(0, str(tmp_path))
    try:
        from build_worker import build  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    parent_turns = [[ToolUse("Agent", {"description": "ship", "prompt": "ship prod", "subagent_type": "ops"}, "c_ops")]]
    child_turns = [[Text("deploying"), ToolUse("deploy", {"target": "prod"}, call_id="c_dep")]]
    worker = build(tmp_path, parent_turns, child_turns)
    paused = await worker.run("ship it")
    assert isinstance(paused, Paused)
    assert [(p.call_id, p.tool_name, dict(p.arguments)) for p in paused.pending] == [
        ("c_ops/c_dep", "deploy", {"target": "prod"})
    ]
    (call,) = paused.checkpoint.batch
    assert call.state == "subagent"
    assert call.child is not None
    assert call.child.pending[0].state == "approval"
    assert not (tmp_path / "deployed.log").exists()
    path = paused.checkpoint.save(tmp_path / "paused.json", key=b"k" * 32)

    # the child's state is authenticated with the parent's: changing it is caught
    data = json.loads(path.read_text())
    data["batch"][0]["child"]["batch"][0]["arguments"]["target"] = "everything"
    with pytest.raises(CheckpointError, match="MAC mismatch"):
        Checkpoint.from_json(data, key=b"k" * 32)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS), str(tmp_path)])}
    done = await run_python(tmp_path / "resume.py", tmp_path, env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "type": "Finished",
        "text": "parent: shipped",
        "results": ["child: deployed prod"],
    }
    assert (tmp_path / "deployed.log").read_text() == "prod\n"
    # consumed once: a second resume of the same checkpoint (here, the child inside it) is refused
    again = await run_python(tmp_path / "resume.py", tmp_path, env)
    assert again.returncode != 0
    assert "already resumed" in again.stderr or "CheckpointError" in again.stderr
    assert (tmp_path / "deployed.log").read_text() == "prod\n"


HOOK = textwrap.dedent(
    """
    import json, sys
    data = json.load(sys.stdin)
    with open(sys.argv[1], "a") as log:
        log.write(json.dumps(data) + "\\n")
    event = data["hook_event_name"]
    if event == "SubagentStop" and not data["stop_hook_active"]:
        print(json.dumps({"decision": "block", "reason": "run the tests as well"}))
    elif event == "SubagentStart":
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "SubagentStart",
                                                 "additionalContext": "tests live in tests/"}}))
    """
)


async def test_subagent_start_and_a_subagent_stop_hook_that_blocks_once_as_claude_code_runs_them(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    script = project / ".claude" / "hook.py"
    script.write_text(HOOK)
    log = tmp_path / "payloads.jsonl"
    command = {"type": "command", "command": f"{sys.executable} {script} {log}"}
    settings = {
        "hooks": {
            "SubagentStart": [{"matcher": "review.*", "hooks": [command]}],
            "SubagentStop": [{"matcher": "reviewer", "hooks": [command]}],
            "PreToolUse": [{"matcher": "Read", "hooks": [command]}],
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    (project / "notes.txt").write_text("hello")
    reviewer = AgentDefinition(name="reviewer", description="reviews", system_prompt="You review.", tools=("Read",))
    child = ScriptedClient(
        [
            [ToolUse("Read", {"file_path": "notes.txt"}, call_id="c_read")],
            [Text("looks fine")],
            [Text("looks fine, tests pass")],
        ]
    )
    parent_script = ScriptedClient(
        [
            [
                ToolUse("Read", {"file_path": "notes.txt"}, call_id="c_top_read"),
                ToolUse(
                    "Agent", {"description": "review", "prompt": "review it", "subagent_type": "reviewer"}, "c_rev"
                ),
            ],
            [Text("reviewed")],
        ]
    )
    from hookloop.tools.builtin import ReadTool, Workspace

    worker = Worker(
        Routed({"": parent_script, "You review.": child}),
        tools=[ReadTool(Workspace(project)), AgentTool([reviewer])],
        workspace=project,
        permissions=PermissionPolicy(workspace=project),
        transcript=tmp_path / "t" / "session.jsonl",
    )
    CommandHooks.load(project, home=tmp_path / "home", hookloop_home=tmp_path / "hl", trust_project=True).install(
        worker
    )
    outcome = await worker.run("review notes")
    worker.close()
    assert isinstance(outcome, Finished)
    assert outcome.text == "reviewed"
    result = next(i for i in worker.history if isinstance(i, ToolResult) and i.call_id == "c_rev")
    assert result.content == "looks fine, tests pass"
    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    by_event: dict[str, list[dict[str, object]]] = {}
    for p in payloads:
        by_event.setdefault(str(p["hook_event_name"]), []).append(p)
    (start,) = by_event["SubagentStart"]
    agent_id = start["agent_id"]
    assert start["agent_type"] == "reviewer"
    assert isinstance(agent_id, str)
    assert start["session_id"] == worker.session_id
    stops = by_event["SubagentStop"]
    assert [(s["stop_hook_active"], s["last_assistant_message"]) for s in stops] == [
        (False, "looks fine"),
        (True, "looks fine, tests pass"),
    ]
    assert all(s["agent_id"] == agent_id and s["agent_type"] == "reviewer" for s in stops)
    transcript = Path(str(stops[0]["agent_transcript_path"]))
    assert transcript == tmp_path / "t" / "session" / "subagents" / f"agent-{agent_id}.jsonl"
    assert transcript.name in {p.name for p in (tmp_path / "t" / "session" / "subagents").iterdir()}
    # PreToolUse fired for the parent's own Read (no agent fields) and for the child's (with them)
    reads = by_event["PreToolUse"]
    assert [(r["tool_use_id"], r.get("agent_id"), r.get("agent_type")) for r in reads] == [
        ("c_top_read", None, None),
        ("c_read", agent_id, "reviewer"),
    ]
    # the SubagentStart context reached the child only; the block reason became its next instruction
    assert any("tests live in tests/" in t for t in request_texts(child.requests[0]))
    assert not any("tests live in tests/" in t for r in parent_script.requests for t in request_texts(r))
    assert any("run the tests as well" in t for t in request_texts(child.requests[2]))
