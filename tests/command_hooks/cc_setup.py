"""Shared set-up for the issue-12 configuration tests: fake HOME / hookloop home / project, the CLI as a
subprocess, Workers with the command hooks installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import hookloop
from hookloop import ScriptedClient, ToolResult, Worker, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.runner import RunnerOptions
from hookloop.tools import Tool

PY = sys.executable
FAST = RunnerOptions(kill_grace=0.2, drain_window=0.2)
SOURCE_ROOT = str(Path(hookloop.__file__).resolve().parents[1])
CLI = [PY, "-c", "from hookloop.cli import main; main()"]


@dataclass
class Setup:
    root: Path
    home: Path
    hookloop_home: Path
    project: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    workers: list[Worker] = field(default_factory=list)

    def write(self, path: Path, text: str, *, executable: bool = False) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if executable:
            path.chmod(0o755)
        return path

    def script(self, path: Path, body: str, *, python: bool = False) -> Path:
        shebang = f"#!{PY}" if python else "#!/bin/bash"
        return self.write(path, f"{shebang}\n{body.strip()}\n", executable=True)

    def user_settings(self, data: dict[str, Any]) -> None:
        self.write(self.home / ".claude" / "settings.json", json.dumps(data))

    def project_settings(self, data: dict[str, Any], name: str = "settings.json") -> None:
        self.write(self.project / ".claude" / name, json.dumps(data))

    def cli_env(self) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": SOURCE_ROOT,
            "HOME": str(self.home),
            "HOOKLOOP_HOME": str(self.hookloop_home),
            "COLUMNS": "250",
            "NO_COLOR": "1",
            **self.extra_env,
        }

    def cli(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*CLI, *args, "--cwd", str(self.project)],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.cli_env(),
            timeout=60,
            check=False,
        )
        if check:
            assert done.returncode == 0, done.stderr + done.stdout
        return done

    def hooks_test(self, event: str, payload: dict[str, Any], *extra: str) -> dict[str, Any]:
        args = ("hooks", "test", event, "--input", "-", "--format", "json", *extra)
        done = self.cli(*args, stdin=json.dumps(payload), check=False)
        report: dict[str, Any] = json.loads(done.stdout)
        # exit 1 exactly when a hook did not answer (could not run, crashed, timed out)
        failed = any(run["outcome"] != "ok" for run in report["hooks"])
        assert done.returncode == (1 if failed else 0), done.stderr + done.stdout
        return report

    def load(self, *, trust_project: bool = False) -> CommandHooks:
        return CommandHooks.load(
            self.project, home=self.home, hookloop_home=self.hookloop_home, trust_project=trust_project, options=FAST
        )

    def worker(
        self, turns: Sequence[Any], tools: Sequence[Tool], *, trust_project: bool = False, **kwargs: Any
    ) -> Worker:
        worker = Worker(
            ScriptedClient(list(turns)), tools=list(tools), transcript=self.root / "transcript.jsonl", **kwargs
        )
        self.workers.append(worker)
        self.load(trust_project=trust_project).install(worker)
        return worker


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    made = Setup(tmp_path, home, tmp_path / "hookloop-home", project.resolve())
    yield made
    for worker in made.workers:
        worker.close()


def results(worker: Worker) -> list[ToolResult]:
    return [item for item in worker.history if isinstance(item, ToolResult)]


class Shell:
    """A Bash stand-in that records commands (the hooks under test are real; the tool is not the subject)."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool(name="Bash")
        async def bash(command: str, description: str = "") -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran: {command}"

        self.tool: Tool = bash


def pre_tool(command: str) -> dict[str, Any]:
    return {
        "session_id": "s-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
    }
