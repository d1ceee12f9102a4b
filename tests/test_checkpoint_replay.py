"""SPEC §7, issue 10 item 10: a checkpoint is consumed once — in the process and across processes (even racing
ones) — unless the caller forks it; tool calls keep their idempotency key on resume, and a fork gets new ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import whoami
from hookloop import (
    Approve,
    Checkpoint,
    CheckpointError,
    Finished,
    Paused,
    ScriptedClient,
    Text,
    ToolResult,
    ToolUse,
    Worker,
)
from hookloop.hooks import Ask
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import Workspace, builtin_tools

pytestmark = pytest.mark.anyio

APPEND = "echo ran >> ran.log"


def bash_worker(root: Path, turns: list[Any], **kw: Any) -> Worker:
    return Worker(
        ScriptedClient(turns),
        tools=builtin_tools(Workspace(root)),
        permissions=PermissionPolicy(workspace=root),  # default mode: Bash asks
        workspace=root,
        **kw,
    )


async def paused_append(root: Path) -> Paused:
    w = bash_worker(root, [[ToolUse("Bash", {"command": APPEND}, call_id="c1")], [Text("done")]])
    outcome = await w.run("append")
    assert isinstance(outcome, Paused)
    return outcome


def runs(root: Path) -> int:
    log = root / "ran.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


async def test_a_second_resume_in_the_same_worker_is_refused_and_the_tool_ran_once(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    w = bash_worker(tmp_path, [[Text("done")], [Text("again")]])
    assert isinstance(await w.resume(paused.checkpoint, {"c1": Approve()}), Finished)
    with pytest.raises(CheckpointError, match=r"already resumed at .* in this process.*fork=True"):
        await w.resume(paused.checkpoint, {"c1": Approve()})
    assert runs(tmp_path) == 1


async def test_the_process_remembers_even_with_another_ledger_and_a_fresh_worker(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    text = paused.checkpoint.dumps()
    first = bash_worker(tmp_path, [[Text("done")]], checkpoint_ledger=tmp_path / "ledger-a")
    await first.resume(text, {"c1": Approve()})
    second = bash_worker(tmp_path, [[Text("done")]], checkpoint_ledger=tmp_path / "ledger-b")
    with pytest.raises(CheckpointError, match="already resumed"):
        await second.resume(text, {"c1": Approve()})
    assert runs(tmp_path) == 1
    assert second.history == ()


async def test_a_failed_validation_does_not_consume_the_checkpoint(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    w = bash_worker(tmp_path, [[Text("done")]])
    with pytest.raises(ValueError, match="missing: c1"):
        await w.resume(paused.checkpoint, {})
    assert isinstance(await w.resume(paused.checkpoint, {"c1": Approve()}), Finished)


async def test_fork_resumes_again_as_a_new_run_with_new_idempotency_keys(tmp_path: Path) -> None:
    w = Worker(ScriptedClient([[ToolUse("whoami", {}, call_id="w1")], [Text("ok")]]), tools=[whoami])
    w.add_pre_tool_call_hook(lambda info: Ask("who wants to know"))
    paused = await w.run("who")
    assert isinstance(paused, Paused)
    text = paused.checkpoint.dumps()

    def seen(worker: Worker) -> list[str]:
        return [i.content for i in worker.history if isinstance(i, ToolResult)]

    plain = Worker(ScriptedClient([[Text("ok")]]), tools=[whoami])
    await plain.resume(text, {"w1": Approve()})
    assert seen(plain) == [f"{paused.run_id}|w1|{paused.run_id}:w1"]  # stable: the run's own key

    with pytest.raises(CheckpointError, match="already resumed"):
        await Worker(ScriptedClient([[Text("ok")]]), tools=[whoami]).resume(text, {"w1": Approve()})
    forked = Worker(ScriptedClient([[Text("ok")]]), tools=[whoami])
    done = await forked.resume(text, {"w1": Approve()}, fork=True)
    assert done.run_id.startswith(f"{paused.run_id}-fork-")
    assert seen(forked) == [f"{done.run_id}|w1|{done.run_id}:w1"]
    again = Worker(ScriptedClient([[Text("ok")]]), tools=[whoami])
    assert (await again.resume(text, {"w1": Approve()}, fork=True)).run_id != done.run_id


async def test_a_checkpoint_between_runs_is_consumed_once_too(tmp_path: Path) -> None:
    w = Worker(ScriptedClient([[Text("hello")]]))
    await w.run("hi")
    text = w.checkpoint("saved").dumps()
    assert isinstance(await Worker(ScriptedClient([[Text("more")]])).resume(text, messages="go on"), Finished)
    with pytest.raises(CheckpointError, match="already resumed"):
        await Worker(ScriptedClient([[Text("more")]])).resume(text, messages="go on")


async def test_an_unwritable_ledger_refuses_the_resume_before_anything_runs(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    w = bash_worker(tmp_path, [[Text("done")]], checkpoint_ledger=blocker / "ledger")
    with pytest.raises(CheckpointError, match=r"cannot record that checkpoint .* is being resumed"):
        await w.resume(paused.checkpoint.dumps(), {"c1": Approve()})
    assert runs(tmp_path) == 0


async def test_a_hand_made_checkpoint_with_a_path_for_a_nonce_is_refused(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    import dataclasses

    evil = dataclasses.replace(paused.checkpoint, nonce="../../outside")
    with pytest.raises(CheckpointError, match="nonce"):
        await bash_worker(tmp_path, [[Text("done")]]).resume(evil, {"c1": Approve()})
    assert not (tmp_path / "outside").exists()
    assert runs(tmp_path) == 0


RESUME = """
import asyncio, json, sys
from pathlib import Path
from hookloop import Approve, CheckpointError, ScriptedClient, Text, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import Workspace, builtin_tools

root = Path(sys.argv[2])

async def main():
    worker = Worker(ScriptedClient([[Text("done")]]), tools=builtin_tools(Workspace(root)),
                    permissions=PermissionPolicy(workspace=root), workspace=root)
    try:
        outcome = await worker.resume(Path(sys.argv[1]).read_text(), {"c1": Approve()}, fork=sys.argv[3] == "fork")
    except CheckpointError as exc:
        print(json.dumps({"error": str(exc)}))
    else:
        print(json.dumps({"outcome": type(outcome).__name__, "run_id": outcome.run_id}))

asyncio.run(main())
"""


def resume_in(path: Path, root: Path, script: Path, mode: str = "plain") -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.Popen(
        [sys.executable, str(script), str(path), str(root), mode], stdout=subprocess.PIPE, text=True, env=env
    )


def result(proc: subprocess.Popen[str]) -> dict[str, str]:
    out, _ = proc.communicate(timeout=50)
    assert proc.returncode == 0
    data: dict[str, str] = json.loads(out)
    return data


async def test_a_second_process_is_refused_and_a_fork_is_allowed(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    path = paused.checkpoint.save(tmp_path / "run.checkpoint.json")
    script = tmp_path / "resume.py"
    script.write_text(RESUME)
    assert result(resume_in(path, tmp_path, script)) == {"outcome": "Finished", "run_id": paused.run_id}
    refused = result(resume_in(path, tmp_path, script))
    assert "already resumed at" in refused["error"]
    assert "fork=True" in refused["error"]
    assert runs(tmp_path) == 1
    forked = result(resume_in(path, tmp_path, script, "fork"))
    assert forked["run_id"].startswith(paused.run_id + "-fork-")
    assert runs(tmp_path) == 2


async def test_of_processes_racing_to_resume_one_checkpoint_exactly_one_wins(tmp_path: Path) -> None:
    paused = await paused_append(tmp_path)
    path = paused.checkpoint.save(tmp_path / "run.checkpoint.json")
    script = tmp_path / "resume.py"
    script.write_text(RESUME)
    procs = [resume_in(path, tmp_path, script) for _ in range(4)]
    outcomes = [result(p) for p in procs]
    assert sorted("outcome" in o for o in outcomes) == [False, False, False, True]
    assert runs(tmp_path) == 1
    assert Checkpoint.load(path).nonce == paused.checkpoint.nonce  # the file itself is unchanged
