"""The DBOS backend with real worker processes on a real database (SQLite file, and a real PostgreSQL server):
SIGKILL at each kind of step and a second process finishes the run; pause → approve from another process → a
second worker finishes; double approval; cancel; a hook that decides differently on replay fails the run."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from durable.durable_kit import HERE, SRC, PgServer, Procs
from helpers import assert_valid_history
from hookloop import AllowAlways, Approve, Finished, Reject
from hookloop.durable import PauseConsumed, StaleDecision
from hookloop.durable.dbos import DBOSBackend
from hookloop.items import Item

# Real servers and worker processes: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


@pytest.fixture
async def backend(db_url: str) -> AsyncIterator[DBOSBackend]:
    b = await asyncio.to_thread(DBOSBackend, db_url)
    try:
        yield b
    finally:
        await b.close()


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plain(history: tuple[Any, ...] | list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in history:
        data = dict(item)
        data.pop("id", None)
        out.append(data)
    return out


def items(history: tuple[Any, ...]) -> tuple[Item, ...]:
    from hookloop.items import item_from_json

    return tuple(item_from_json(dict(i)) for i in history)


async def reference_history(tmp_path: Path) -> list[dict[str, Any]]:
    """The history of the same run in a plain Worker, uninterrupted (in its own folder)."""
    from durable.durable_app import app

    folder = tmp_path / "reference"
    folder.mkdir()
    worker = app({"dir": str(folder)})
    outcome = await worker.run("go", run_id="run-reference")
    assert isinstance(outcome, Finished)
    return plain([item.to_json() for item in worker.history])


async def start(backend: DBOSBackend, procs: Procs, **extra: object) -> str:
    return await backend.start(
        "go", worker="app", options={"dir": str(procs.folder), "url": procs.url, **extra}, run_id=None
    )


async def crash_and_finish(
    backend: DBOSBackend, procs: Procs, block: str, *, same_executor: bool = False
) -> tuple[str, dict[str, object]]:
    (procs.folder / f"block-{block}").write_text("")
    run_id = await start(backend, procs)
    first = procs.worker("first")
    ready = procs.ready()
    assert ready["what"] == ("hook" if block.startswith("hook") else block)
    procs.kill(first)
    if ready["what"] == "hook":
        procs.kill_pid(int(str(ready["pid"])))  # the hook's process, which the killed worker left
    else:
        assert ready["pid"] == first.pid
    second = procs.worker("first" if same_executor else "second")
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record.error
    procs.kill(second)
    return run_id, {"first": first.pid, "second": second.pid}


async def test_sigkill_during_a_tool_another_process_finishes_the_run(
    backend: DBOSBackend, procs: Procs, tmp_path: Path
) -> None:
    run_id, pids = await crash_and_finish(backend, procs, "tool-3")
    tools = lines(procs.folder / "tools.log")
    assert Counter(t["n"] for t in tools) == {1: 1, 2: 1, 3: 2}  # completed tools did not run again
    again = [t for t in tools if t["n"] == 3]
    assert [t["pid"] for t in again] == [pids["first"], pids["second"]]
    assert again[0]["key"] == again[1]["key"] == f"{run_id}:c3"  # the same idempotency key
    requests = lines(procs.folder / "requests.log")
    assert Counter(r["index"] for r in requests) == {0: 1, 1: 1, 2: 1}  # no model call sent again
    assert [r["pid"] for r in requests if r["index"] == 2] == [pids["second"]]
    assert Counter(h["n"] for h in lines(procs.folder / "hooks.log")) == {1: 1, 2: 1, 3: 1}
    detail = await backend.get_run(run_id)
    assert detail.text == "all done"
    assert_valid_history(items(detail.history))
    assert plain(detail.history) == await reference_history(tmp_path)


async def test_sigkill_during_a_model_call_the_same_executor_restarts_it(
    backend: DBOSBackend, procs: Procs, tmp_path: Path
) -> None:
    run_id, _ = await crash_and_finish(backend, procs, "model-1", same_executor=True)
    requests = lines(procs.folder / "requests.log")
    assert Counter(r["index"] for r in requests) == {0: 1, 1: 2, 2: 1}  # only the interrupted one again
    assert Counter(t["n"] for t in lines(procs.folder / "tools.log")) == {1: 1, 2: 1, 3: 1}
    detail = await backend.get_run(run_id)
    assert_valid_history(items(detail.history))
    assert plain(detail.history) == await reference_history(tmp_path)


async def test_sigkill_during_an_external_command_hook(backend: DBOSBackend, procs: Procs, tmp_path: Path) -> None:
    run_id, _ = await crash_and_finish(backend, procs, "hook-3")
    hooks = lines(procs.folder / "hooks.log")
    assert Counter(h["n"] for h in hooks) == {1: 1, 2: 1, 3: 2}  # the interrupted firing runs again, alone
    assert Counter(t["n"] for t in lines(procs.folder / "tools.log")) == {1: 1, 2: 1, 3: 1}
    assert Counter(r["index"] for r in lines(procs.folder / "requests.log")) == {0: 1, 1: 1, 2: 1}
    detail = await backend.get_run(run_id)
    assert plain(detail.history) == await reference_history(tmp_path)


async def test_sigkill_in_a_parallel_batch_after_the_other_call_finished(
    backend: DBOSBackend, procs: Procs, tmp_path: Path
) -> None:
    """c1 and c2 run at once; c2 finishes (recorded) while c1 runs; the replay must not depend on that order."""
    run_id, _ = await crash_and_finish(backend, procs, "tool-1-after-2")
    tools = lines(procs.folder / "tools.log")
    assert Counter(t["n"] for t in tools) == {1: 2, 2: 1, 3: 1}
    assert {t["key"] for t in tools if t["n"] == 1} == {f"{run_id}:c1"}
    detail = await backend.get_run(run_id)
    assert plain(detail.history) == await reference_history(tmp_path)


async def test_pause_then_approve_from_another_process_and_a_second_worker_finishes(
    backend: DBOSBackend, procs: Procs
) -> None:
    run_id = await start(backend, procs, ask=True)
    first = procs.worker("first")
    record = await backend.wait(run_id, timeout=50)
    procs.kill(first)  # no process holds the paused run
    assert record.status == "paused"
    assert [c.call_id for c in record.pending] == ["c3"]
    assert record.pause_id
    listed = await backend.list_runs(status="paused")
    assert [r.run_id for r in listed] == [run_id]

    with pytest.raises(StaleDecision, match="schema"):
        await backend.approve(run_id, {"c3": Approve(updated_input={"n": "three"})}, pause_id=record.pause_id)
    with pytest.raises(StaleDecision, match="missing"):
        await backend.approve(run_id, {}, pause_id=record.pause_id)
    with pytest.raises(StaleDecision, match="not the current"):
        await backend.approve(run_id, {"c3": Approve()}, pause_id="0-deadbeef")

    # Two processes approve the same pause at once: exactly one wins.
    script = (
        "import asyncio, sys\n"
        "from hookloop import Approve\n"
        "from hookloop.durable import PauseConsumed\n"
        "from hookloop.durable.dbos import DBOSBackend\n"
        "async def main():\n"
        "    b = DBOSBackend(sys.argv[1])\n"
        "    try:\n"
        "        await b.approve(sys.argv[2], {'c3': Approve()}, pause_id=sys.argv[3])\n"
        "    except PauseConsumed:\n"
        "        sys.exit(3)\n"
        "    finally:\n"
        "        await b.close()\n"
        "asyncio.run(main())\n"
    )
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    approvers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, procs.url, run_id, str(record.pause_id), env=env, cwd=HERE
        )
        for _ in range(2)
    ]
    codes = sorted([await p.wait() for p in approvers])
    assert codes == [0, 3]
    with pytest.raises(PauseConsumed):
        await backend.approve(run_id, {"c3": Approve()}, pause_id=record.pause_id)
    with pytest.raises(PauseConsumed):
        await backend.approve(run_id, {"c3": Approve()})

    procs.worker("second")
    done = await backend.wait(run_id, timeout=50)
    assert done.status == "finished", done.error
    tools = lines(procs.folder / "tools.log")
    assert Counter(t["n"] for t in tools) == {1: 1, 2: 1, 3: 1}
    assert Counter(r["index"] for r in lines(procs.folder / "requests.log")) == {0: 1, 1: 1, 2: 1}
    detail = await backend.get_run(run_id)
    assert detail.text == "all done"
    assert_valid_history(items(detail.history))
    assert any(e.get("type") == "hook" and e.get("decision") == "Ask" for e in detail.events)


async def test_a_denied_pause_continues_with_the_error_result(backend: DBOSBackend, procs: Procs) -> None:
    run_id = await start(backend, procs, ask=True)
    procs.worker("only")
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "paused"
    await backend.approve(run_id, {"c3": Reject("not today")}, pause_id=record.pause_id)
    done = await backend.wait(run_id, timeout=50)
    assert done.status == "finished", done.error
    assert Counter(t["n"] for t in lines(procs.folder / "tools.log")) == {1: 1, 2: 1}
    detail = await backend.get_run(run_id)
    results = [i for i in detail.history if i.get("type") == "tool_result" and i.get("call_id") == "c3"]
    assert len(results) == 1
    assert "not today" in json.dumps(results[0])


async def test_cancel_a_running_run_from_another_process(backend: DBOSBackend, procs: Procs) -> None:
    (procs.folder / "block-tool-3").write_text("")
    run_id = await start(backend, procs)
    worker = procs.worker("only")
    ready = procs.ready()
    assert ready["pid"] == worker.pid
    await backend.cancel(run_id)
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "cancelled"
    assert len(lines(procs.folder / "aborts.log")) == 1  # on_abort once, where it ran
    detail = await backend.get_run(run_id)
    assert_valid_history(items(detail.history))  # one result per tool call
    assert worker.poll() is None  # the worker process goes on serving
    await backend.cancel(run_id)  # a run that ended is left as it is
    assert (await backend.wait(run_id)).status == "cancelled"


async def test_cancel_a_queued_run_and_a_paused_run(backend: DBOSBackend, procs: Procs) -> None:
    queued = await start(backend, procs)
    await backend.cancel(queued)
    assert (await backend.wait(queued, timeout=5)).status == "cancelled"  # at once, no worker needed

    paused = await start(backend, procs, ask=True)
    worker = procs.worker("only")
    record = await backend.wait(paused, timeout=50)
    assert record.status == "paused"
    await backend.cancel(paused)
    assert (await backend.wait(paused, timeout=5)).status == "cancelled"
    with pytest.raises(StaleDecision):
        await backend.approve(paused, {"c3": Approve()}, pause_id=record.pause_id)
    assert_valid_history(items((await backend.get_run(paused)).history))
    assert (await backend.get_run(queued)).status == "cancelled"  # the worker never ran it
    assert Counter(r["index"] for r in lines(procs.folder / "requests.log")) == {0: 1, 1: 1}  # the paused run's
    assert worker.poll() is None


async def test_a_hook_that_decides_differently_on_replay_fails_the_run(backend: DBOSBackend, procs: Procs) -> None:
    (procs.folder / "block-tool-3").write_text("")
    run_id = await start(backend, procs)
    first = procs.worker("first")
    procs.ready()
    procs.kill(first)
    (procs.folder / "flip").write_text("")  # from now on the in-process hook denies step 1
    procs.worker("second")
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "failed"
    assert record.error is not None
    assert "NondeterministicReplay" in record.error
    assert "guard" in record.error
    assert "Deny" in record.error
    assert Counter(t["n"] for t in lines(procs.folder / "tools.log")) == {1: 1, 2: 1, 3: 1}  # nothing re-ran


async def test_continue_a_finished_run_with_a_new_prompt(backend: DBOSBackend, procs: Procs) -> None:
    run_id = await start(backend, procs)
    procs.worker("only")
    assert (await backend.wait(run_id, timeout=50)).status == "finished"
    await backend.continue_run(run_id, "and once more")
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "finished", record.error
    detail = await backend.get_run(run_id)
    texts = [json.dumps(i) for i in detail.history if i.get("type") == "message"]
    assert any("and once more" in t for t in texts)
    assert_valid_history(items(detail.history))


async def test_the_database_holds_history_and_decisions_but_no_secrets(
    backend: DBOSBackend, procs: Procs, request: pytest.FixtureRequest
) -> None:
    key = "sk-ant-api03-DURABLESECRET0123456789"
    run_id = await start(backend, procs)
    procs.worker("only", ANTHROPIC_API_KEY=key, HOOK_TOKEN="hooktoken-DURABLESECRET")
    assert (await backend.wait(run_id, timeout=50)).status == "finished"
    await backend.close()
    if procs.url.startswith("sqlite:///"):
        path = Path(procs.url.removeprefix("sqlite:///"))
        stored = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        stored = server.dump(procs.url.rsplit("/", 1)[1])
    assert b"all done" in stored  # the history is there
    assert b"DURABLESECRET" not in stored  # no API key, no hook environment


async def test_allow_always_holds_for_the_later_segments_of_the_run(backend: DBOSBackend, procs: Procs) -> None:
    run_id = await start(backend, procs, ask=True, twice=True)
    procs.worker("only")
    record = await backend.wait(run_id, timeout=50)
    assert record.status == "paused"
    await backend.approve(run_id, {"c3": AllowAlways()}, pause_id=record.pause_id)
    second = await backend.wait(run_id, timeout=50)
    assert second.status == "paused"  # a hook's Pause on step(4): allow always does not answer it
    assert [c.call_id for c in second.pending] == ["c4"]
    await backend.approve(run_id, {"c4": Approve()}, pause_id=second.pause_id)
    done = await backend.wait(run_id, timeout=50)
    assert done.status == "finished", done.error  # step(3) asked again, in a third segment: allowed always
    assert sorted(t["n"] for t in lines(procs.folder / "tools.log")) == [1, 2, 3, 3, 4]
