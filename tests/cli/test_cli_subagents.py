"""`hookloop run` with subagents defined in .claude/agents/: the Agent tool is offered, the display nests the
child's progress, and a child's pause is resumed by `hookloop resume` in a new process. Real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]

READER = """---
name: reader
description: Reads files and reports what they say.
tools: Bash, Read
---
You read files for the main agent and report briefly.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "reader.md").write_text(READER)
    (root / ".claude" / "agents" / "broken.md").write_text("no frontmatter here\n")
    (root / "notes.txt").write_text("hello notes\n")
    turns: list[list[dict[str, Any]]] = [
        [
            {
                "tool": "Agent",
                "arguments": {"description": "read notes", "prompt": "read notes.txt", "subagent_type": "reader"},
            }
        ],
        [{"text": "reading"}, {"tool": "Bash", "arguments": {"command": "cat notes.txt"}}],
        [{"text": "the notes say hello"}],
        [{"text": "All done: hello."}],
    ]
    (root / "model.json").write_text(json.dumps({"turns": [{"blocks": b} for b in turns]}))
    return root


def hookloop(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input="", timeout=60)


def test_run_offers_the_agent_tool_and_shows_the_childs_progress_nested(project: Path, env: dict[str, str]) -> None:
    model = project / "model.json"
    out = hookloop(
        "run", "summarise", "--model", f"scripted:{model}", "--cwd", str(project), "--yes", env=env, cwd=project
    )
    assert out.returncode == 0, out.stderr
    assert "All done: hello." in out.stdout
    assert "◆ subagent reader starts: read notes" in out.stderr
    assert "│ ● reader Bash" in out.stderr
    assert "◆ subagent reader finished" in out.stderr
    assert "broken.md" in out.stderr  # a refused definition is reported, the others load
    stream = hookloop(
        "run", "summarise", "--model", f"scripted:{model}", "--cwd", str(project), "--yes",
        "--output-format", "stream-json", env=env, cwd=project,
    )  # fmt: skip
    assert stream.returncode == 0, stream.stderr
    events = [json.loads(line) for line in stream.stdout.splitlines()]
    nested = [
        e["event"]["tool"] for e in events if e["type"] == "subagent_event" and e["event"]["type"] == "tool_ended"
    ]
    assert nested == ["Bash"]
    assert [e["type"] for e in events if e["type"].startswith("subagent_") and e["type"] != "subagent_event"] == [
        "subagent_started",
        "subagent_ended",
    ]


def test_a_childs_ask_pauses_the_run_and_resume_continues_inside_the_child(project: Path, env: dict[str, str]) -> None:
    model = project / "model.json"
    first = hookloop("run", "summarise", "--model", f"scripted:{model}", "--cwd", str(project), env=env, cwd=project)
    assert first.returncode == 3, first.stderr
    command = next(line.strip() for line in first.stderr.splitlines() if line.strip().startswith("hookloop resume"))
    second = hookloop("resume", command.split()[2], "--yes", env=env, cwd=project)
    assert second.returncode == 0, second.stderr
    assert "All done: hello." in second.stdout
    assert "◆ subagent reader resumes" in second.stderr
