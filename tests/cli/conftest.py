from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import hookloop

# The CLI subprocesses import the hookloop these tests import (a worktree's src, not whatever the venv installed).
SOURCE_ROOT = str(Path(hookloop.__file__).resolve().parents[1])


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment CLI subprocesses run in: a fresh HOME and HOOKLOOP_HOME, so no real user file is read."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": SOURCE_ROOT,
        "HOME": str(home),
        "HOOKLOOP_HOME": str(tmp_path / "hookloop-home"),
        "COLUMNS": "250",
        "NO_COLOR": "1",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with one file, notes.txt ("hello notes")."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello notes\n")
    return root


# The helper modules here (screen_helpers) are imported by name: pytest's importlib mode does not put this
# directory on sys.path.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _kill_leftovers() -> Iterator[None]:
    """A test that failed half-way leaves no program of its terminals behind (to fail a later test with its
    ResourceWarning)."""
    from screen_helpers import STARTED

    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
