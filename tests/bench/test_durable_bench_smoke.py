"""Smoke test of the durable section of ``python -m bench`` (``--only durable``): at tiny sizes every figure is
produced on a real DBOS database — SQLite for the turn and paused-run figures, a throw-away PostgreSQL server and
real worker processes for the throughput — and nothing it started is left running. No timing is asserted."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from bench._measure import TINY
from bench._report import Row

from bench import durable


def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] != "Z":
                found.add(int(entry))
    return found


def _by_measure(rows: list[Row]) -> dict[str, Row]:
    assert all(r.section == durable.SECTION for r in rows), rows
    return {r.measure.split(",")[0]: r for r in rows}


def test_sqlite_figures() -> None:
    before = _children()
    rows, data = asyncio.run(durable.run_sqlite(TINY))
    found = _by_measure(rows)
    turn = found["durable turn: model call + tool call (SQLite)"]
    assert turn.baseline is not None
    assert turn.baseline > 0
    assert turn.target == "≤ 1.3×"
    assert turn.passed is not None
    for measure in (
        "database size",
        "hookloop runs list (CLI process)",
        "approve → first model call of the continuation",
    ):
        assert found[measure].passed is not None, found[measure]
        assert found[measure].value > 0, found[measure]
    assert found["database size"].unit == "bytes"
    assert data["paused_runs"] == durable.SIZES["tiny"].paused
    assert _children() <= before


def test_postgres_throughput_with_worker_processes() -> None:
    before = _children()
    rows = asyncio.run(durable.run_postgres(TINY))
    one, two = rows
    assert "1 worker process" in one.measure
    assert "2 worker processes" in two.measure
    assert one.value > 0, rows
    assert two.value > 0, rows
    assert two.baseline == one.value
    assert two.ratio is not None
    assert _children() <= before
