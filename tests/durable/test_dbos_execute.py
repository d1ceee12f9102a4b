"""A run executed by the process that started it (``start(queue=False)`` then ``execute``, what ``hookloop run
--durable`` does): it executes that run and no other queued run of the database; if that process is SIGKILLed
mid-run, a serving process recovers the run; if it dies before beginning, a serving process queues the run. And
``close()`` after ``serve()`` or ``execute()`` in the same event loop never raises, the loop working on. Real
processes on a real database (SQLite file and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from durable.durable_app import app
from durable.durable_kit import Procs
from hookloop.durable.dbos import DBOSBackend

# Real servers and worker processes: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_execute_runs_its_own_run_only_and_close_never_raises(db_url: str, tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    backend = await asyncio.to_thread(DBOSBackend, db_url)
    backend.register("app", app)
    try:
        queued = [
            await backend.start("go", worker="app", options={"dir": str(theirs), "url": db_url}),
            await backend.start("go", worker="not-registered-here"),  # serving it would fail it
        ]
        run_id = await backend.start("go", worker="app", options={"dir": str(mine), "url": db_url}, queue=False)
        with pytest.raises(ValueError, match="queue=False"):
            await backend.execute(queued[0])  # a queued run is the workers' to execute
        record = await backend.execute(run_id)
        assert (record.run_id, record.status) == (run_id, "finished"), record.error
        assert Counter(int(str(t["n"])) for t in lines(mine / "tools.log")) == {1: 1, 2: 1, 3: 1}
        assert not (theirs / "tools.log").exists()
        assert [(await backend.get_run(q)).status for q in queued] == ["queued", "queued"]
        assert (await backend.get_run(run_id)).text == "all done"  # the loop's to_thread works after execute
        with pytest.raises(ValueError, match="queue=False"):
            await backend.execute(run_id)  # once
    finally:
        await backend.close()
        await backend.close()  # a second close does nothing


async def test_close_after_serve_in_the_same_loop(db_url: str, tmp_path: Path) -> None:
    backend = await asyncio.to_thread(DBOSBackend, db_url)
    backend.register("app", app)
    try:
        serving = asyncio.create_task(backend.serve())
        run_id = await backend.start("go", worker="app", options={"dir": str(tmp_path), "url": db_url})
        assert (await backend.wait(run_id, timeout=50)).status == "finished"
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        assert [r.run_id for r in await backend.list_runs()] == [run_id]  # to_thread after serve
    finally:
        await backend.close()


async def test_a_killed_executing_process_run_is_recovered_by_a_worker(db_url: str, procs: Procs) -> None:
    (procs.folder / "block-tool-3").write_text("")
    first, run_id = procs.here("execute", "here-1")
    assert procs.ready()["pid"] == first.pid
    procs.kill(first)
    worker = procs.worker("second")
    backend = await asyncio.to_thread(DBOSBackend, db_url)
    try:
        record = await backend.wait(run_id, timeout=50)
        assert record.status == "finished", record.error
        tools = lines(procs.folder / "tools.log")
        assert Counter(int(str(t["n"])) for t in tools) == {1: 1, 2: 1, 3: 2}  # completed tools did not run again
        assert [t["pid"] for t in tools if t["n"] == 3] == [first.pid, worker.pid]
    finally:
        await backend.close()


async def test_a_run_whose_process_died_before_beginning_it_is_queued_by_a_worker(db_url: str, procs: Procs) -> None:
    worker = procs.worker("adopter")  # serving already: it takes the run only once its process is dead
    gone, run_id = procs.here("orphan", "here-2")
    assert gone.wait(timeout=50) == 0
    backend = await asyncio.to_thread(DBOSBackend, db_url)
    try:
        record = await backend.wait(run_id, timeout=50)
        assert record.status == "finished", record.error
        assert {t["pid"] for t in lines(procs.folder / "tools.log")} == {worker.pid}
    finally:
        await backend.close()
