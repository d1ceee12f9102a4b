"""The read-only stores of a DBOS database: :class:`SQLiteRuns` (the standard library's sqlite3, what ``hookloop
runs list|show`` opens on a SQLite file) answers exactly as :class:`DBOSRuns` (SQLAlchemy) on the same database,
and never writes to it; :func:`open_reader` picks it for a plain ``sqlite:///PATH``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hookloop.durable import RunNotFound
from hookloop.durable._dbos_read import DBOSRuns, SQLiteRuns, open_reader
from hookloop.durable._dbos_rows import COLUMNS
from hookloop.durable._dbos_tables import RUNS
from hookloop.durable.dbos import DBOSBackend

pytestmark = pytest.mark.anyio


def test_the_row_columns_are_the_tables() -> None:
    assert tuple(c.name for c in RUNS.c) == COLUMNS


async def test_sqlite_reader_answers_as_the_sqlalchemy_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    backend = DBOSBackend(url)
    try:
        ids = [await backend.start(f"prompt {i}", worker="nobody", options={"i": i}) for i in range(4)]
        await backend.cancel(ids[1])  # a queued run cancelled: ended, with its own status
    finally:
        await backend.close()
    fast, slow = open_reader(url), DBOSRuns(url)
    assert isinstance(fast, SQLiteRuns)
    try:
        for status in (None, "queued", "cancelled", "paused"):
            for limit in (1, 3, 200):
                listed = await fast.list_runs(status=status, limit=limit)
                assert listed == await slow.list_runs(status=status, limit=limit), (status, limit)
        assert [r.run_id for r in await fast.list_runs()] == list(reversed(ids))
        for run_id in ids:
            assert await fast.get_run(run_id) == await slow.get_run(run_id)
        with pytest.raises(RunNotFound):
            await fast.get_run("run_nope")
        with pytest.raises(RunNotFound):
            await fast.get_run("' OR '1'='1")  # a parameter, never SQL
    finally:
        await fast.close()
        await slow.close()


async def test_sqlite_reader_never_writes(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here.sqlite"
    reader = open_reader(f"sqlite:///{missing}")
    assert await reader.list_runs() == []
    with pytest.raises(RunNotFound):
        await reader.get_run("run_0")
    await reader.close()
    assert not missing.exists()  # a listing does not create the database

    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()  # a database without hookloop's tables yet
    before = empty.read_bytes()
    reader = open_reader(f"sqlite:///{empty}")
    assert await reader.list_runs(status="paused") == []
    await reader.close()
    assert empty.read_bytes() == before

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    backend = DBOSBackend(url)
    try:
        run_id = await backend.start("hi", worker="nobody")
    finally:
        await backend.close()
    database = tmp_path / "runs.sqlite"
    database.chmod(0o444)  # read-only file: still listed (and a write would fail, so none is tried)
    before = database.read_bytes()
    reader = open_reader(url)
    try:
        assert [r.run_id for r in await reader.list_runs()] == [run_id]
        assert (await reader.get_run(run_id)).prompt == "hi"
    finally:
        await reader.close()
    assert database.read_bytes() == before


def test_a_file_that_is_not_a_database_is_refused_at_once(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("this is not a database\n" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        open_reader(f"sqlite:///{junk}")


async def test_open_reader_falls_back_to_sqlalchemy_where_sqlite3_cannot_follow(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected sqlite"):
        open_reader("mysql://u@h/db")
    odd = open_reader(f"sqlite:///{tmp_path / 'x.sqlite'}?timeout=5")  # URL options: SQLAlchemy reads them
    assert isinstance(odd, DBOSRuns)
    await odd.close()
