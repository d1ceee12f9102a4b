from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One empty workspace per corpus module (the evasion corpora decide commands, they never run them)."""
    return tmp_path_factory.mktemp("ws")
