"""Shared by the MCP tests: the misbehaving server, and the real servers .ci/run installs."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hookloop import ToolResult, Worker

MISBEHAVING = Path(__file__).parent / "mcp_servers" / "misbehaving.py"
SLOW_START = 40.0  # seconds for a Python or node MCP server to start on a loaded CI machine (the default is 5)


@dataclass(frozen=True)
class Misbehaving:
    command: str
    state: Path

    def args(self, mode: str = "normal") -> list[str]:
        return [str(MISBEHAVING), str(self.state), mode]

    def calls(self) -> list[str]:
        path = self.state / "calls"
        return path.read_text().splitlines() if path.exists() else []

    def pid(self, name: str = "pid") -> int:
        return int((self.state / name).read_text())

    def running(self) -> list[int]:
        """The pids of every process (server or child) whose command line names this state directory."""
        needle = str(self.state).encode()
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        if needle in f.read() and alive(int(entry)):
                            found.append(int(entry))
                except OSError:
                    continue
        return found


def misbehaving(tmp_path: Path) -> Misbehaving:
    state = tmp_path / "state"
    state.mkdir()
    return Misbehaving(sys.executable, state)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def results(worker: Worker) -> list[ToolResult]:
    return [i for i in worker.history if isinstance(i, ToolResult)]


def real_servers() -> tuple[Path | None, Path | None]:
    """(the venv bin of the PyPI servers, the node_modules of the npm servers) that .ci/run installed.

    ``HOOKLOOP_MCP_SERVERS`` names the cache directory (``pyservers/bin``, ``node/node_modules``). When CI says
    node is there (``HOOKLOOP_CI_NODE=1``), a missing npm install fails the tests that need it."""
    root = os.environ.get("HOOKLOOP_MCP_SERVERS") or str(Path.home() / ".cache" / "hookloop-ci")
    py = Path(root) / "pyservers" / "bin"
    node = Path(root) / "node" / "node_modules"
    return (py if (py / "mcp-server-time").exists() else None, node if node.is_dir() else None)


def need_node_package(name: str) -> Path:
    """The entry script of the npm package ``name`` (e.g. ``@modelcontextprotocol/server-memory``); fails the
    test when it is missing."""
    _, node = real_servers()
    if node is None or not (node / name / "package.json").exists():
        pytest.fail(f"the npm package {name} is not installed (run .ci/run, or set HOOKLOOP_MCP_SERVERS)")
    import json

    package = json.loads((node / name / "package.json").read_text())
    bin_field = package.get("bin")
    entry = bin_field if isinstance(bin_field, str) else next(iter(bin_field.values()))
    return node / name / entry


def need_py_server(name: str) -> Path:
    py, _ = real_servers()
    if py is None or not (py / name).exists():
        pytest.fail(f"the PyPI MCP server {name} is not installed (run .ci/run, or set HOOKLOOP_MCP_SERVERS)")
    return py / name
