"""Fixtures for the sandbox tests: real bubblewrap (a test that needs it FAILS when it is missing — `.ci/run`
installs it), a workspace and an outside directory under /var/tmp (not /tmp, which the sandbox replaces, so that
"outside" is really on the read-only root)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookloop.sandbox import BubblewrapBackend

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def backend() -> BubblewrapBackend:
    bwrap = BubblewrapBackend()
    availability = bwrap.availability()
    assert availability.available, f"these tests need bubblewrap: {availability.reason}"
    assert bwrap.network_bridge, "these tests need socat and bash"
    return bwrap


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hookloop-sbx-test-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ws(base: Path) -> Path:
    path = base / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside(base: Path) -> Path:
    path = base / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("OUTSIDE SECRET\n")
    return path
