"""The resume command a stopped run prints is a working shell command (quoted: a checkpoint folder may hold
spaces), and a checkpoint with nothing waiting for a decision is not silently "resumed" into nothing."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from screen_helpers import Screen

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "my project"
    root.mkdir()
    return root


def script(project: Path, turns: list[list[dict[str, object]]]) -> str:
    path = project / "model.json"
    path.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return f"scripted:{path}"


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=60, input="")


def as_argv(command: str) -> list[str]:
    """A printed ``hookloop …`` command as the shell would split it, run with this test's interpreter."""
    words = shlex.split(command)
    assert words[0] == "hookloop"
    return [*HOOKLOOP, *words[1:]]


def test_the_pause_prints_a_quoted_resume_command_that_works_with_a_space_in_the_path(
    project: Path, env: dict[str, str]
) -> None:
    model = script(project, [[{"tool": "Bash", "arguments": {"command": "echo hi"}}], [{"text": "Done."}]])
    folder = project / "saved checkpoints"
    first = run([*HOOKLOOP, "run", "go", "--model", model, "--checkpoint-dir", str(folder)], env, project)
    assert first.returncode == 3, first.stderr
    [command] = [line.strip() for line in first.stderr.splitlines() if line.strip().startswith("hookloop resume")]
    argv = as_argv(command.split("   (or --deny)")[0])
    assert Path(argv[len(HOOKLOOP) + 1]).parent == folder
    second = run(argv, env, project)
    assert second.returncode == 0, second.stderr
    assert "Done." in second.stdout


def test_ctrl_c_prints_the_resume_command_and_a_bare_resume_says_a_message_is_needed(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    fifo = tmp_path / "started"
    import os

    os.mkfifo(fifo)
    model = script(
        project,
        [[{"tool": "Bash", "arguments": {"command": f"echo up > '{fifo}'; sleep 1000"}}], [{"text": "Carrying on."}]],
    )
    folder = project / "saved checkpoints"
    argv = ["run", "wait", "--model", model, "--yes", "--checkpoint-dir", str(folder)]
    screen = Screen(argv, env, project, columns=400)  # wide: the long command stays on one screen line
    with open(fifo) as started:
        assert started.read().strip() == "up"
    screen.interrupt()
    assert screen.finish() == 130, screen.text()
    lines = screen.lines()
    command = lines[lines.index("continue it with:") + 1]
    argv = as_argv(command)
    [checkpoint] = folder.glob("*.checkpoint.json")
    assert argv[len(HOOKLOOP) :][:3] == ["resume", str(checkpoint), "--message"]

    bare = run([*HOOKLOOP, "resume", str(checkpoint)], env, project)
    assert bare.returncode == 2, bare.stdout + bare.stderr
    [line] = bare.stderr.splitlines()
    assert "nothing waiting for a decision" in line
    assert "--message" in line

    argv[-1] = "please carry on"
    resumed = run(argv, env, project)  # the bare attempt did not use the checkpoint up
    assert resumed.returncode == 0, resumed.stderr
    assert "Carrying on." in resumed.stdout
