"""Fixtures: a project with a fresh HOME and HOOKLOOP_HOME, and a real `hookloop serve` over its checkpoints."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from inbox_helpers import HOOKLOOP, SOURCE_ROOT, Project, Server


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project folder, a fresh HOME and HOOKLOOP_HOME (for the subprocesses and for this process)."""
    root = tmp_path / "project"
    root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": SOURCE_ROOT,
        "HOME": str(home),
        "HOOKLOOP_HOME": str(tmp_path / "hookloop-home"),
        "COLUMNS": "250",
        "NO_COLOR": "1",
    }
    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.setenv("HOOKLOOP_HOME", env["HOOKLOOP_HOME"])
    return Project(root, env)


@pytest.fixture
def server(project: Project) -> Iterator[Server]:
    """A real `hookloop serve --port 0` over the project's checkpoints; stopped (by PID) at the end."""
    process = subprocess.Popen(
        [*HOOKLOOP, "serve", "--port", "0", "--checkpoint-dir", str(project.checkpoints)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=project.env,
        cwd=project.root,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        second = process.stdout.readline()
        assert first.startswith("hookloop inbox for "), (first, process.stderr.read() if process.stderr else "")
        url = second.strip()
        assert url.startswith("http://127.0.0.1:"), second
        assert "?token=" in url, second
        yield Server(process, url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode is not None
