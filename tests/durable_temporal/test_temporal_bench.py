"""Smoke test of the ``temporal`` benchmark section (``python -m bench --only temporal``) at tiny sizes: it starts
its own dev server, measures both figures and kills the server. No timing is asserted (SPEC §10)."""

from __future__ import annotations

import asyncio

from bench._measure import TINY

from bench import temporal


def test_the_temporal_section_reports_the_turn_cost_and_the_paused_memory() -> None:
    rows, data = asyncio.run(temporal.run(TINY))
    measures = {row.measure for row in rows}
    assert "durable turn (model + tool) vs bare 2-activity turn" in measures
    assert "worker memory per paused run (cache on)" in measures
    assert "worker memory per paused run (cache off)" in measures
    turn = next(r for r in rows if r.measure.startswith("durable turn"))
    assert turn.baseline is not None
    assert turn.baseline > 0
    assert set(data["per_turn_ns"]) == {"durable", "bare"}  # type: ignore[call-overload]
