"""Fixtures for the provider tests: the loopback wire server (see :mod:`providers.wire`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from providers.recordings import RECORDINGS
from providers.wire import WireServer

# Replays of real recorded traffic need the recordings folder (outside the repository); without it those
# modules are not collected at all, and the synthetic fixtures cover the same cases.
collect_ignore_glob = [] if RECORDINGS is not None else ["test_recorded_*.py"]


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    wire = WireServer()
    await wire.start()
    try:
        yield wire
    finally:
        await wire.stop()
