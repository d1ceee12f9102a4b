"""The read side of the DBOS backend's store (``hookloop runs list`` / ``show``, the inbox's pages): only
SQLAlchemy and hookloop's own tables, never the ``dbos`` package, so a command that only reads starts fast.
:class:`~hookloop.durable.dbos.DBOSBackend` is this plus everything that writes or executes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from hookloop._checkpoint_auth import resolve_hookloop_home
from hookloop._frozen import freeze_object
from hookloop.checkpoint import PendingCall
from hookloop.stream import Usage

from . import _dbos_tables as tables
from ._store import RunDetail, RunNotFound, RunRecord, RunStatus

__all__ = ["DBOSRuns", "default_url", "record_of"]


def default_url() -> str:
    """``sqlite:///$HOOKLOOP_HOME/durable.sqlite`` (the folder is created)."""
    home = resolve_hookloop_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return f"sqlite:///{home / 'durable.sqlite'}"


class DBOSRuns:
    """The runs of a DBOS database, read only (list and show); ``url`` as for
    :class:`~hookloop.durable.dbos.DBOSBackend`. Constructing it connects and creates hookloop's tables."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        if not self.url.startswith(("sqlite:///", "postgresql://", "postgres://", "postgresql+psycopg://")):
            raise ValueError(f"DBOS store url: expected sqlite:///… or postgresql://…, got {self.url!r}")
        self._engine = tables.make_engine(self.url)

    async def list_runs(self, *, status: RunStatus | None = None, limit: int = 200) -> Sequence[RunRecord]:
        """The newest runs first (at most ``limit``), optionally only those with ``status``."""
        rows = await asyncio.to_thread(tables.list_rows, self._engine, status=status, limit=limit)
        return [record_of(r) for r in rows]

    async def get_run(self, run_id: str) -> RunDetail:
        """One run, whole; :class:`RunNotFound` if there is none."""
        row = await asyncio.to_thread(tables.get_row, self._engine, run_id)
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

    async def close(self) -> None:
        """Release the database connections."""
        await asyncio.to_thread(self._engine.dispose)


def record_of(row: tables.Row) -> RunRecord:
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
