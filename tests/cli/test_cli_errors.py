"""CLI error messages: one line on a pipe, the command line's own advice (never ``pass api_key=``), a
connection failure that names the URL and what to check; a settings ``"model"`` in Claude Code's form works.
Real subprocesses, real local servers (or a port nothing listens on)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from screen_helpers import HeldModel

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


def hookloop(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input="", timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root


@pytest.fixture
def closed_url() -> Iterator[str]:
    """A local URL nothing listens on: its port stays bound (never listening) for the whole test, so a connection
    is refused — a port merely free a moment ago could be taken meanwhile by another test's server, which then got
    this test's request (and this test a reply it never expected)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def server() -> Iterator[HeldModel]:
    held = HeldModel("pong")
    held.release()
    try:
        yield held
    finally:
        held.close()


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    for library_advice in ("api_key=", "base_url=", "verify=", "fork=True"):
        assert library_advice not in out.stderr
    return lines[0]


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "sonnet", "opus", "anthropic:claude-haiku-4-5"])
def test_a_claude_code_model_in_settings_reaches_anthropic_and_a_refused_connection_names_the_url(
    project: Path, env: dict[str, str], closed_url: str, model: str
) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps({"model": model}))
    env = {**env, "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": closed_url}
    out = hookloop("run", "hi", env=env, cwd=project)
    assert out.returncode == 1, out.stderr
    line = one_line(out)
    assert line.startswith("hookloop: anthropic: cannot connect to ")
    assert f"{closed_url}/v1/messages" in line
    assert "ANTHROPIC_BASE_URL" in line  # what to check


def test_an_openai_compatible_server_that_is_down_is_named_with_what_to_do(
    project: Path, env: dict[str, str], closed_url: str
) -> None:
    out = hookloop("run", "hi", "--model", f"openai-compatible:llama3@{closed_url}/v1", env=env, cwd=project)
    assert out.returncode == 1
    line = one_line(out)
    assert f"{closed_url}/v1/chat/completions" in line
    assert "is the server running" in line


def test_a_well_known_openai_name_in_settings_runs_against_the_configured_server(
    project: Path, env: dict[str, str], server: HeldModel
) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps({"model": "gpt-4o"}))
    env = {**env, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.url}
    out = hookloop("run", "ping", "--output-format", "json", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["text"] == "pong"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("sonnet", "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY="),
        ("gpt-4o", "OPENAI_API_KEY is not set: export OPENAI_API_KEY="),
        ("llama3", "openai-compatible:llama3@http://localhost:11434/v1"),
        ("openai-compatible:llama3", "needs a server URL"),
    ],
)
def test_a_model_that_cannot_be_used_is_one_line_of_command_line_advice(
    project: Path, env: dict[str, str], model: str, message: str
) -> None:
    out = hookloop("run", "hi", "--model", model, env=env, cwd=project)
    assert out.returncode == 2
    assert message in one_line(out)


def test_a_bad_model_in_settings_names_the_file(project: Path, env: dict[str, str]) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps({"model": "gemini-2.5-pro"}))
    line = one_line(hookloop("run", "hi", env=env, cwd=project))
    assert line.startswith(f'hookloop: {path}: "model": unknown model')


def test_long_messages_stay_on_one_line_when_stderr_is_a_pipe(project: Path, env: dict[str, str]) -> None:
    deep = "/nowhere/" + "a-rather-long-directory-name/" * 12
    out = hookloop("run", "hi", "--model", "scripted:x.json", "--cwd", deep, env=env, cwd=project)
    assert out.returncode == 2
    assert deep.rstrip("/") in one_line(out)


def test_a_replayed_checkpoint_points_at_the_fork_flag(project: Path, env: dict[str, str]) -> None:
    script = project / "m.json"
    turns = [{"blocks": [{"tool": "Bash", "arguments": {"command": "echo hi"}}]}, {"blocks": [{"text": "ok"}]}]
    script.write_text(json.dumps({"turns": turns}))
    paused = hookloop("run", "go", "--model", f"scripted:{script}", "--output-format", "json", env=env, cwd=project)
    checkpoint = json.loads(paused.stdout)["checkpoint_path"]
    assert hookloop("resume", checkpoint, "--yes", env=env, cwd=project).returncode == 0
    again = hookloop("resume", checkpoint, "--yes", env=env, cwd=project)
    assert again.returncode == 2
    line = one_line(again)
    assert "already resumed" in line
    assert "--fork" in line
    assert "fork=True" not in line
