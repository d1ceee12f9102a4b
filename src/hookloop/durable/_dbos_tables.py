"""The DBOS backend's own tables (beside DBOS's system tables, in the same database) and the queries on them.

``hookloop_runs`` holds one row per run: its status, the segment being executed, what that segment does (start,
resume with decisions, continue with a prompt), the latest checkpoint (MAC'd), its history and timeline as JSON.
``hookloop_executors`` holds a heartbeat per worker process (so a live worker recovers a dead one's runs).
``hookloop_keys`` holds the checkpoint MAC key the processes attached to the database share.

Every decision is a conditional UPDATE (``WHERE status = 'paused' AND pause_id = :id``), so of two processes
deciding the same pause exactly one wins.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from ._dbos_rows import JSON_COLUMNS, UNLISTED, Row, row_from

__all__ = [
    "EXECUTORS",
    "KEYS",
    "RUNS",
    "Row",
    "create_tables",
    "make_engine",
]

METADATA = sa.MetaData()

RUNS = sa.Table(
    "hookloop_runs",
    METADATA,
    sa.Column("run_id", sa.String(200), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("worker", sa.String(200), nullable=False),
    sa.Column("options", sa.Text, nullable=False, default="{}"),
    sa.Column("prompt", sa.Text, nullable=False, default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("segment", sa.Integer, nullable=False, default=0),
    sa.Column("input", sa.Text, nullable=False, default="{}"),
    sa.Column("checkpoint", sa.Text, nullable=True),
    sa.Column("pause_id", sa.String(100), nullable=True),
    sa.Column("consumed_pause", sa.String(100), nullable=True),
    sa.Column("pending", sa.Text, nullable=False, default="[]"),
    sa.Column("result", sa.Text, nullable=False, default="{}"),
    sa.Column("history", sa.Text, nullable=False, default="[]"),
    sa.Column("events", sa.Text, nullable=False, default="[]"),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("cancel", sa.Integer, nullable=False, default=0),
    sa.Column("executor", sa.String(200), nullable=True),
    sa.Column("grants", sa.Text, nullable=False, default="[]"),
)

EXECUTORS = sa.Table(
    "hookloop_executors",
    METADATA,
    sa.Column("executor_id", sa.String(200), primary_key=True),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("seen_at", sa.Float, nullable=False),
)

KEYS = sa.Table(
    "hookloop_keys",
    METADATA,
    sa.Column("name", sa.String(50), primary_key=True),
    sa.Column("value", sa.String(200), nullable=False),
)


def sqlalchemy_url(url: str) -> sa.URL:
    """The SQLAlchemy URL for a backend URL (PostgreSQL through psycopg 3, which dbos depends on)."""
    parsed = sa.make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def make_engine(url: str) -> sa.Engine:
    """An engine on the backend's database, with the tables created."""
    parsed = sqlalchemy_url(url)
    if parsed.drivername.startswith("sqlite"):
        engine = sa.create_engine(parsed, connect_args={"timeout": 30})
    else:
        engine = sa.create_engine(parsed, pool_size=3, max_overflow=2, pool_pre_ping=True)
    create_tables(engine)
    return engine


def create_tables(engine: sa.Engine) -> None:
    """Create the tables that do not exist. Processes that start at once on a new database race between the
    check and the CREATE: the loser's CREATE fails ("already exists"), so it checks again (once per table at
    most); an error that is not that race comes back each time and is raised."""
    attempts = len(METADATA.tables) + 1
    for attempt in range(attempts):
        try:
            METADATA.create_all(engine, checkfirst=True)
            return
        except sa.exc.DBAPIError:
            if attempt == attempts - 1:
                raise


def shared_key(engine: sa.Engine) -> bytes:
    """The checkpoint MAC key kept in the database (created once; the first writer wins)."""
    with engine.begin() as conn:
        value = conn.execute(sa.select(KEYS.c.value).where(KEYS.c.name == "checkpoint")).scalar()
        if value is None:
            try:
                with conn.begin_nested():
                    conn.execute(sa.insert(KEYS).values(name="checkpoint", value=secrets.token_hex(32)))
            except sa.exc.IntegrityError:
                pass
            value = conn.execute(sa.select(KEYS.c.value).where(KEYS.c.name == "checkpoint")).scalar_one()
    return bytes.fromhex(str(value))


def to_row(raw: sa.Row[Any]) -> Row:
    return row_from(dict(raw._mapping))


def get_row(engine: sa.Engine, run_id: str, *, light: bool = False) -> Row | None:
    """The row of ``run_id`` (``light``: without history and events)."""
    columns = [c for c in RUNS.c if not (light and c.name in ("history", "events"))]
    with engine.connect() as conn:
        raw = conn.execute(sa.select(*columns).where(RUNS.c.run_id == run_id)).first()
    return None if raw is None else row_from(dict(raw._mapping))


def list_rows(engine: sa.Engine, *, status: str | None, limit: int) -> list[Row]:
    """The newest rows first, without the columns a listing does not show (:data:`UNLISTED`)."""
    columns = [c for c in RUNS.c if c.name not in UNLISTED]
    query = sa.select(*columns).order_by(RUNS.c.created_at.desc(), RUNS.c.run_id).limit(limit)
    if status is not None:
        query = query.where(RUNS.c.status == status)
    with engine.connect() as conn:
        return [row_from(dict(raw._mapping)) for raw in conn.execute(query).all()]


def insert_run(
    conn: sa.Connection,
    run_id: str,
    *,
    worker: str,
    options: Mapping[str, object],
    prompt: str,
    executor: str | None = None,
) -> None:
    """A new queued run (``executor``: the process that will execute it itself, for a run nobody queues)."""
    now = time.time()
    conn.execute(
        sa.insert(RUNS).values(
            run_id=run_id,
            status="queued",
            worker=worker,
            options=json.dumps(dict(options)),
            prompt=prompt,
            created_at=now,
            updated_at=now,
            segment=0,
            input=json.dumps({"kind": "start"}),
            executor=executor,
        )
    )


def update(conn: sa.Connection, run_id: str, where: Sequence[sa.ColumnElement[bool]], **values: object) -> int:
    """A conditional UPDATE of one run; returns how many rows changed (0 or 1)."""
    for name in JSON_COLUMNS:
        if name in values and not isinstance(values[name], str):
            values[name] = json.dumps(values[name])
    values["updated_at"] = time.time()
    result = conn.execute(sa.update(RUNS).where(RUNS.c.run_id == run_id, *where).values(**values))
    return int(result.rowcount)
