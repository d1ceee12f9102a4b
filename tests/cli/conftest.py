from __future__ import annotations

import os
import sys
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


# The helper modules here (screen_helpers) are imported by name: pytest's importlib mode does not put this
# directory on sys.path.
sys.path.insert(0, str(Path(__file__).parent))
