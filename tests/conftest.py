from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _private_hookloop_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOOKLOOP_HOME (the checkpoint key and the resume ledger live there), so no test
    reads or writes the real user's ~/.hookloop."""
    home = tmp_path_factory.mktemp("hookloop-home")
    monkeypatch.setenv("HOOKLOOP_HOME", str(home))
    return home
