"""Smoke test of the providers section of ``python -m bench``: each API's client stream and raw SDK stream run
over the loopback reply and the section reports one judged row per API (no timing asserted)."""

from __future__ import annotations

import asyncio

from bench._measure import TINY

from bench import provider_stream


def test_providers_section_reports_a_judged_ratio_per_api() -> None:
    rows, data = asyncio.run(provider_stream.run(TINY))
    assert [row.measure.split(":")[0] for row in rows] == ["anthropic", "openai-chat", "openai-responses"]
    for row in rows:
        assert row.value > 0
        assert row.baseline is not None
        assert row.baseline > 0
        assert row.target == "≤ 1.3×"
        assert row.passed is not None
    assert data["deltas"] == 100
