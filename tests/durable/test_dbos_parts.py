"""Parts of the DBOS backend that need no worker process: background hooks stay outside the durable effects, a
dead executor is told from a live one, decisions round-trip as JSON, bad URLs and options are refused, and
processes that create the tables at once on a new database both succeed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar

import pytest
import sqlalchemy as sa

from hookloop import AllowAlways, Approve, Reject, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.durable import RunNotFound
from hookloop.durable import _dbos_tables as tables
from hookloop.durable._decisions import decision_from_json, decision_to_json
from hookloop.durable.dbos import DBOSBackend, _dead
from hookloop.effects import Effect

pytestmark = pytest.mark.anyio
T = TypeVar("T")


class Recording:
    def __init__(self) -> None:
        self.keys: list[str] = []

    async def perform(self, effect: Effect[T]) -> T:
        self.keys.append(effect.key)
        return await effect.perform()


async def test_a_background_command_hook_is_not_a_durable_effect(tmp_path: Path) -> None:
    """An ``async: true`` hook fires at a time no replay reproduces: it runs outside the run's effects (so it is not
    a step whose order DBOS would check); the blocking hook of the same event is one."""

    @tool
    async def ping() -> str:
        """Ping."""
        return "pong"

    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    marker = tmp_path / "background-ran"
    script = f"import pathlib, sys; sys.stdin.read(); pathlib.Path({str(marker)!r}).write_text('yes')"
    settings = {
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "ping",
                    "hooks": [
                        {"type": "command", "command": f"{sys.executable} -c {json.dumps(script)}", "async": True},
                        {"type": "command", "command": f"{sys.executable} -c 'import sys; sys.stdin.read()'"},
                    ],
                }
            ]
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    worker = Worker(ScriptedClient([[ToolUse("ping", {}, call_id="p1")], [Text("done")]]), tools=[ping])
    CommandHooks.load(project, home=tmp_path / "home", hookloop_home=tmp_path / "hl", trust_project=True).install(
        worker
    )
    recording = Recording()
    await worker.run("go", run_id="r-bg", effects=recording)
    assert marker.read_text() == "yes"  # the background hook ran (drained at session end)
    hooks = [k for k in recording.keys if k.startswith("hook:")]
    assert len(hooks) == 1, hooks  # only the blocking one went through the effects


def test_a_dead_executor_is_told_from_a_live_one() -> None:
    host = socket.gethostname()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    now = 1000.0
    beat = SimpleNamespace
    assert _dead(beat(host=host, pid=gone.pid, seen_at=now), host, now, 30.0)  # same host, process gone
    assert not _dead(beat(host=host, pid=os.getpid(), seen_at=now), host, now, 30.0)
    assert not _dead(beat(host="elsewhere", pid=1, seen_at=now - 5), host, now, 30.0)  # heartbeat is fresh
    assert _dead(beat(host="elsewhere", pid=1, seen_at=now - 31), host, now, 30.0)  # lease expired
    assert _dead(beat(host=host, pid=os.getpid(), seen_at=now - 31), host, now, 30.0)


def test_decisions_round_trip_as_json() -> None:
    for decision in (
        Approve(),
        Approve(updated_input={"n": 2, "deep": {"a": [1]}}),
        AllowAlways("Bash(ls:*)"),
        Reject(),
    ):
        data = json.loads(json.dumps(decision_to_json(decision)))
        assert decision_from_json(data) == decision
    with pytest.raises(ValueError, match="unknown type"):
        decision_from_json({"type": "yes please"})


async def test_the_store_refuses_bad_input_with_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected sqlite"):
        DBOSBackend("mysql://nope")
    backend = DBOSBackend(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        with pytest.raises(RunNotFound):
            await backend.get_run("run_missing")
        with pytest.raises(RunNotFound):
            await backend.approve("run_missing", {})
        with pytest.raises(ValueError, match="options must be JSON"):
            await backend.start("go", options={"when": object()})
        run_id = await backend.start("go", run_id="run-fixed")
        with pytest.raises(ValueError, match="already exists"):
            await backend.start("go", run_id="run-fixed")
        with pytest.raises(TypeError, match="not Approve"):
            await backend.approve(run_id, {"c1": "yes"})  # type: ignore[dict-item]
        listed = await backend.list_runs()
        assert [(r.run_id, r.status, r.prompt) for r in listed] == [("run-fixed", "queued", "go")]
        await backend.cancel(run_id)
        assert (await backend.get_run(run_id)).status == "cancelled"
    finally:
        await backend.close()


async def test_the_default_database_is_under_hookloop_home() -> None:
    home = Path(os.environ["HOOKLOOP_HOME"])  # each test's own (tests/conftest.py)
    backend = DBOSBackend()
    try:
        assert backend.url == f"sqlite:///{home / 'durable.sqlite'}"
        assert (home / "durable.sqlite").exists()
    finally:
        await backend.close()


def test_processes_creating_the_tables_at_once_both_succeed(tmp_path: Path) -> None:
    """Another writer creates a table between this one's check and its CREATE (what two processes starting at
    once on a new database do): this one's CREATE fails "already exists", it checks again and succeeds."""
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    mine, other = sa.create_engine(url), sa.create_engine(url)
    raced: list[str] = []

    def create_it_first(target: sa.Table, connection: sa.Connection, **kw: object) -> None:
        if not raced:
            raced.append(target.name)
            target.create(other)  # committed by the other engine before this CREATE runs

    sa.event.listen(tables.EXECUTORS, "before_create", create_it_first)
    try:
        tables.create_tables(mine)
    finally:
        sa.event.remove(tables.EXECUTORS, "before_create", create_it_first)
        other.dispose()
    assert raced == ["hookloop_executors"]
    assert set(sa.inspect(mine).get_table_names()) == set(tables.METADATA.tables)
    mine.dispose()


def test_an_error_creating_the_tables_that_is_not_the_race_is_raised(tmp_path: Path) -> None:
    path = tmp_path / "read-only.sqlite"
    path.touch()
    engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    with pytest.raises(sa.exc.OperationalError, match="readonly"):
        tables.create_tables(engine)
    engine.dispose()
