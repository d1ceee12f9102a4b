from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment CLI subprocesses run in: a fresh HOME and HOOKLOOP_HOME, so no real user file is read."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ["PATH"],
        # the hookloop under test (this tree's src/), not whatever the venv has installed
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        "HOME": str(home),
        "HOOKLOOP_HOME": str(tmp_path / "hookloop-home"),
        "COLUMNS": "250",
        "NO_COLOR": "1",
    }
