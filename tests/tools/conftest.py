"""Fixtures for the built-in tools: a real workspace in tmp_path and a directory outside it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hookloop.tools.builtin import Workspace

# pytest imports the modules here as tests.tools.* without putting this directory on sys.path; the test modules
# import their helpers as `builtin_helpers`, like the top-level tests import `helpers`.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, holding a secret the tools must never reveal."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("TOP SECRET\n")
    return path


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)
