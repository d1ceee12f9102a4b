"""The live-run fixture for the command-hook test modules beyond test_worker_command_hooks: a project with
settings files and temporary home folders (so the user's own settings are never read); Workers made for it are
closed at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_worker_command_hooks import Env


@pytest.fixture(name="env")
def env_fixture(tmp_path: Path) -> Iterator[Env]:
    project = tmp_path / "project"
    project.mkdir()
    environment = Env(tmp_path, project.resolve(), tmp_path / "home", tmp_path / "hookloop-home", [])
    yield environment
    for worker in environment.workers:
        worker.close()
