"""`hookloop run` with MCP servers from .mcp.json, settings and --mcp-config: a real stdio server subprocess, the
CLI as a subprocess, project servers started only once approved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]
SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_caps_server.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    turns = [[{"tool": "mcp__caps__add", "arguments": {"a": 2, "b": 3}}], [{"text": "All done."}]]
    (root / "model.json").write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return root


def server_entry(state: Path) -> dict[str, object]:
    return {"command": "${HOOKLOOP_TEST_PYTHON}", "args": [SERVER, "stdio", "", str(state)]}


def run(project: Path, env: dict[str, str], *flags: str, approve: bool = True) -> subprocess.CompletedProcess[str]:
    command = [*HOOKLOOP, "run", "go", "--model", f"scripted:{project / 'model.json'}", "--cwd", str(project)]
    return hookloop(project, env, *command[len(HOOKLOOP) :], *(["--yes"] if approve else []), *flags)


def hookloop(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**env, "HOOKLOOP_TEST_PYTHON": sys.executable}
    return subprocess.run(
        [*HOOKLOOP, *args, "--output-format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        input="",
        timeout=60,
    )


def tool_result(env: dict[str, str]) -> dict[str, object]:
    """The mcp__caps__add result in the session's transcript."""
    [transcript] = Path(env["HOOKLOOP_HOME"], "sessions").glob("*.jsonl")
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        item = event.get("item") or {}
        if event.get("type") == "item" and item.get("type") == "tool_result":
            return item
    raise AssertionError(f"no tool result in {transcript}: {transcript.read_text()}")


def user_settings(env: dict[str, str], data: dict[str, object]) -> None:
    folder = Path(env["HOME"], ".claude")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(data))


def test_an_approved_mcp_json_server_runs_and_its_tool_is_called(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"caps": server_entry(tmp_path)}}))
    user_settings(env, {"enabledMcpjsonServers": ["caps"]})
    out = run(project, env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["text"] == "All done."
    result = tool_result(env)
    assert (result["name"], result["content"], result["is_error"]) == ("mcp__caps__add", "5", False)


def test_a_project_server_nobody_approved_does_not_start_even_if_the_project_says_so(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"caps": server_entry(tmp_path)}}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    out = run(project, env)
    assert "project MCP server 'caps'" in out.stderr
    assert "was not started" in out.stderr
    assert "enabledMcpjsonServers" in out.stderr
    assert tool_result(env)["is_error"] is True  # unknown tool: the server never ran


def test_mcp_config_files_are_trusted_and_strict_ignores_the_rest(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"caps": server_entry(tmp_path)}}))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "/nonexistent/x"}}}))
    out = run(project, env, "--mcp-config", str(config), "--strict-mcp-config")
    assert out.returncode == 0, out.stderr
    assert "other" not in out.stderr  # .mcp.json was not read at all
    assert tool_result(env)["is_error"] is False


def test_a_bad_config_is_a_usage_error_naming_the_file_and_field(project: Path, env: dict[str, str]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"caps": {"type": "http", "url": 5}}}))
    out = run(project, env)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines == [f"hookloop: {project / '.mcp.json'}: mcpServers.caps.url: expected a string, got int"]


def test_a_paused_mcp_call_resumes_with_the_servers_of_the_resume_invocation(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"caps": server_entry(tmp_path)}}))
    first = run(project, env, "--mcp-config", str(config), approve=False)
    assert first.returncode == 3, first.stderr  # no terminal: the MCP call waits for approval
    [checkpoint] = Path(env["HOOKLOOP_HOME"], "checkpoints").glob("*.checkpoint.json")
    resumed = hookloop(project, env, "resume", str(checkpoint), "--yes", "--mcp-config", str(config))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["text"] == "All done."


def test_the_approval_question_shows_what_runs_including_the_variables_set() -> None:
    from hookloop.cli._mcp import describe
    from hookloop.tools.mcp_config import parse_mcp_servers

    stdio, remote = parse_mcp_servers(
        {
            "mem": {"command": "npx", "args": ["-y", "pkg"], "env": {"NODE_OPTIONS": "--require ./x.js"}},
            "gh": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer secret"}},
        },
        file=".mcp.json",
    )
    assert describe(stdio) == "npx -y pkg (env: NODE_OPTIONS)"
    assert describe(remote) == "http https://h/mcp (headers: Authorization)"
