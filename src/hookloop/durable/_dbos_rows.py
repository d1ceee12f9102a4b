"""One ``hookloop_runs`` row of the DBOS backend's database, parsed (:class:`Row`), from whichever driver read it:
SQLAlchemy (:mod:`._dbos_tables`, every backend operation) or the standard library's ``sqlite3`` (:mod:`._dbos_read`,
the fast read-only listing). No SQLAlchemy here."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["COLUMNS", "JSON_COLUMNS", "UNLISTED", "Row", "row_from"]

COLUMNS = (
    "run_id", "status", "worker", "options", "prompt", "created_at", "updated_at", "segment", "input", "checkpoint",
    "pause_id", "consumed_pause", "pending", "result", "history", "events", "error", "cancel", "executor", "grants",
)  # fmt: skip
"""The columns of ``hookloop_runs``, in the table's order (:data:`._dbos_tables.RUNS` declares their types)."""
JSON_COLUMNS = ("options", "input", "pending", "result", "history", "events", "grants")
"""The columns that hold JSON text."""
UNLISTED = ("history", "events", "checkpoint")
"""The columns a listing leaves out (the bulk of a row): :func:`row_from` fills them empty."""
_EMPTY: Mapping[str, object] = {"history": "[]", "events": "[]", "checkpoint": None}


@dataclass(frozen=True, slots=True)
class Row:
    """One ``hookloop_runs`` row, parsed."""

    run_id: str
    status: str
    worker: str
    options: dict[str, Any]
    prompt: str
    created_at: float
    updated_at: float
    segment: int
    input: dict[str, Any]
    checkpoint: str | None
    pause_id: str | None
    consumed_pause: str | None
    pending: list[dict[str, Any]]
    result: dict[str, Any]
    history: list[dict[str, Any]]
    events: list[dict[str, Any]]
    error: str | None
    cancel: bool
    executor: str | None
    grants: list[dict[str, Any]]
    """The run's "allow always" answers ({tool, rule, arguments}): every later segment's Worker gets them."""


def row_from(raw: Mapping[str, Any]) -> Row:
    """The :class:`Row` of a mapping of column → stored value; a column of :data:`UNLISTED` that is missing (not
    selected) is empty."""
    data = {**_EMPTY, **raw}
    for name in JSON_COLUMNS:
        data[name] = json.loads(data[name])
    data["cancel"] = bool(data["cancel"])
    return Row(**data)
