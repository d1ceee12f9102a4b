"""Fixtures for the provider tests: the loopback wire server (see :mod:`providers.wire`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from providers.wire import WireServer


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    wire = WireServer()
    await wire.start()
    try:
        yield wire
    finally:
        await wire.stop()
