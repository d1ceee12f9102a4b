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


def _mcp_collect_ignore() -> list[str]:
    """The real-server MCP tests are collected when .ci/run installed the servers (or CI asks for them: then a
    missing server fails the test instead of leaving it out)."""
    import os
    import shutil

    root = Path(os.environ.get("HOOKLOOP_MCP_SERVERS") or Path.home() / ".cache" / "hookloop-ci")
    ignore = []
    if "HOOKLOOP_MCP_SERVERS" not in os.environ and not (root / "pyservers" / "bin" / "mcp-server-time").exists():
        ignore.append("test_mcp_real_servers.py")
    node_ready = shutil.which("node") is not None and (root / "node" / "node_modules").is_dir()
    if os.environ.get("HOOKLOOP_CI_NODE") != "1" and not node_ready:
        ignore.append("test_mcp_node_servers.py")
    return ignore


collect_ignore = _mcp_collect_ignore()
