"""The read side of the DBOS backend's store (``hookloop runs list`` / ``show``, the inbox's pages): hookloop's own
tables, never the ``dbos`` package, so a command that only reads starts fast.
:class:`~hookloop.durable.dbos.DBOSBackend` is :class:`DBOSRuns` plus everything that writes or executes;
:func:`open_reader` is the quickest reader for a URL (on a SQLite file, :class:`SQLiteRuns`: the standard library's
``sqlite3``, read only, without importing SQLAlchemy)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hookloop._checkpoint_auth import resolve_hookloop_home
from hookloop._frozen import freeze_object
from hookloop.checkpoint import PendingCall
from hookloop.stream import Usage

from ._dbos_rows import COLUMNS, UNLISTED, Row, row_from
from ._store import RunDetail, RunNotFound, RunRecord, RunStatus

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["DBOSRuns", "SQLiteRuns", "default_url", "open_reader", "record_of"]

_URLS = ("sqlite:///", "postgresql://", "postgres://", "postgresql+psycopg://")


def default_url() -> str:
    """``sqlite:///$HOOKLOOP_HOME/durable.sqlite`` (the folder is created)."""
    home = resolve_hookloop_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return f"sqlite:///{home / 'durable.sqlite'}"


class DBOSRuns:
    """The runs of a DBOS database, read only (list and show); ``url`` as for
    :class:`~hookloop.durable.dbos.DBOSBackend`. Constructing it connects and creates hookloop's tables."""

    def __init__(self, url: str | None = None) -> None:
        from . import _dbos_tables as tables

        self.url = _checked(url or default_url())
        self._engine: sa.Engine = tables.make_engine(self.url)

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The newest runs first (at most ``limit``), optionally only those with ``status``."""
        from . import _dbos_tables as tables

        rows = await asyncio.to_thread(tables.list_rows, self._engine, status=status, limit=limit)
        return [record_of(r) for r in rows]

    async def get_run(self, run_id: str) -> RunDetail:
        """One run, whole; :class:`RunNotFound` if there is none."""
        from . import _dbos_tables as tables

        return detail_of(run_id, await asyncio.to_thread(tables.get_row, self._engine, run_id))

    async def close(self) -> None:
        """Release the database connections."""
        await asyncio.to_thread(self._engine.dispose)


class SQLiteRuns:
    """The runs of a DBOS backend's SQLite file, read only with the standard library's ``sqlite3`` (list and show,
    as :class:`DBOSRuns`). It never writes: a file that does not exist, or holds no runs table yet, has no runs
    (and is not created); one that is not a SQLite database is an error at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self._connection: sqlite3.Connection | None = None
        if self.path.exists():
            # mode=ro: nothing this reader does can change the file; timeout: wait out a writer's lock.
            uri = f"file:{_quote_path(self.path)}?mode=ro"
            self._connection = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
            self._connection.row_factory = sqlite3.Row
            try:
                self._has_table = self._query("SELECT 1 FROM sqlite_master WHERE name = 'hookloop_runs'", ()) != []
            except sqlite3.DatabaseError:
                self._connection.close()
                raise

    def _query(self, sql: str, parameters: tuple[object, ...]) -> list[sqlite3.Row]:
        assert self._connection is not None
        return self._connection.execute(sql, parameters).fetchall()

    def _rows(self, sql: str, parameters: tuple[object, ...]) -> list[Row]:
        if self._connection is None or not self._has_table:
            return []
        return [row_from(dict(raw)) for raw in self._query(sql, parameters)]

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The newest runs first (at most ``limit``), optionally only those with ``status``."""
        columns = ", ".join(c for c in COLUMNS if c not in UNLISTED)
        where, parameters = ("WHERE status = ?", (status,)) if status is not None else ("", ())
        sql = f"SELECT {columns} FROM hookloop_runs {where} ORDER BY created_at DESC, run_id LIMIT ?"
        rows = await asyncio.to_thread(self._rows, sql, (*parameters, limit))
        return [record_of(r) for r in rows]

    async def get_run(self, run_id: str) -> RunDetail:
        """One run, whole; :class:`RunNotFound` if there is none."""
        sql = f"SELECT {', '.join(COLUMNS)} FROM hookloop_runs WHERE run_id = ?"
        rows = await asyncio.to_thread(self._rows, sql, (run_id,))
        return detail_of(run_id, rows[0] if rows else None)

    async def close(self) -> None:
        """Close the file."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def open_reader(url: str | None = None) -> DBOSRuns | SQLiteRuns:
    """The quickest read-only store for ``url`` (as for :class:`DBOSRuns`): :class:`SQLiteRuns` for a plain
    ``sqlite:///PATH``, else :class:`DBOSRuns` (PostgreSQL, or a SQLite URL with a driver, options or escapes)."""
    chosen = _checked(url or default_url())
    path = chosen.removeprefix("sqlite:///")
    if chosen.startswith("sqlite:///") and path and path != ":memory:" and not {"?", "%"} & set(path):
        return SQLiteRuns(path)  # a path with options or escapes is SQLAlchemy's to read
    return DBOSRuns(chosen)


def _checked(url: str) -> str:
    if not url.startswith(_URLS):
        raise ValueError(f"DBOS store url: expected sqlite:///… or postgresql://…, got {url!r}")
    return url


def _quote_path(path: Path) -> str:
    """``path`` for a ``file:`` URI (``?`` and ``#`` would end the path; ``%`` starts an escape)."""
    return str(path).replace("%", "%25").replace("?", "%3F").replace("#", "%23")


def detail_of(run_id: str, row: Row | None) -> RunDetail:
    """The :class:`RunDetail` of a whole row; :class:`RunNotFound` when there is none."""
    if row is None:
        raise RunNotFound(f"no run {run_id!r}")
    base = record_of(row)
    fields = {name: getattr(base, name) for name in RunRecord.__dataclass_fields__}
    return RunDetail(
        **fields,
        events=tuple(row.events),
        history=tuple(row.history),
        text=str(row.result.get("text", "")),
    )


def record_of(row: Row) -> RunRecord:
    usage = row.result.get("usage") or {}
    pending = tuple(
        PendingCall(
            call_id=str(p["call_id"]),
            tool_name=str(p["tool_name"]),
            arguments=freeze_object(p.get("arguments") or {}),
            state=p.get("state", "approval"),
            reason=str(p.get("reason", "")),
            asked_by=str(p.get("asked_by", "")),
        )
        for p in row.pending
    )
    return RunRecord(
        run_id=row.run_id,
        status=row.status,  # type: ignore[arg-type]
        created_at=datetime.fromtimestamp(row.created_at, tz=UTC),
        updated_at=datetime.fromtimestamp(row.updated_at, tz=UTC),
        prompt=row.prompt,
        turns=int(row.result.get("turns", 0)),
        usage=Usage(**{k: int(v) for k, v in usage.items()}),
        pending=pending,
        pause_id=row.pause_id,
        reason=str(row.result.get("reason", "")),
        error=row.error,
        worker=row.worker,
    )
