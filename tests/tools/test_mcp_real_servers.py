"""Real PyPI MCP servers (``mcp-server-time``, ``mcp-server-git``, installed by .ci/run into a venv of their own):
tool calls through a Worker, their annotations kept as claims. Collected when .ci/run installed them (or
``HOOKLOOP_MCP_SERVERS`` is set, and then a missing server fails): see tests/tools/conftest.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp_helpers import SLOW_START, need_py_server, results

from hookloop import Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop.permissions import PermissionPolicy
from hookloop.tools.mcp import MCPServer, MCPTool

pytestmark = pytest.mark.anyio


async def test_time_server_read_only_claims_are_asked_about_until_trusted(tmp_path: Path) -> None:
    command = str(need_py_server("mcp-server-time"))
    call = [ToolUse("mcp__time__get_current_time", {"timezone": "UTC"}, call_id="t")]
    async with MCPServer.stdio("time", command, init_timeout=SLOW_START) as server:
        tool = {t.meta.name: t for t in server.list_tools()}["mcp__time__get_current_time"]
        assert isinstance(tool, MCPTool)
        assert tool.annotations["readOnlyHint"] is True
        asked = Worker(
            ScriptedClient([call, [Text("x")]]), tools=[server], permissions=PermissionPolicy(workspace=tmp_path)
        )
        assert isinstance(await asked.run("what time is it?"), Paused)
    async with MCPServer.stdio("time", command, init_timeout=SLOW_START, trust_annotations=True) as server:
        trusted = Worker(
            ScriptedClient([call, [Text("noon")]]), tools=[server], permissions=PermissionPolicy(workspace=tmp_path)
        )
        with anyio.fail_after(50):
            await trusted.run("what time is it?")
    [result] = results(trusted)
    assert not result.is_error
    assert json.loads(result.content)["timezone"] == "UTC"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository: one commit, one untracked file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "b.txt").write_text("untracked\n")
    return repo


async def test_git_server_reads_a_real_repository_in_one_parallel_batch(repo: Path) -> None:
    command = str(need_py_server("mcp-server-git"))
    client = ScriptedClient(
        [
            [
                ToolUse("mcp__git__git_status", {"repo_path": str(repo)}, call_id="s"),
                ToolUse("mcp__git__git_log", {"repo_path": str(repo)}, call_id="l"),
            ],
            [Text("done")],
        ]
    )
    async with MCPServer.stdio("git", command, ["--repository", str(repo)], init_timeout=SLOW_START) as server:
        worker = Worker(client, tools=[server], permissions=PermissionPolicy(allow=["mcp__git__*"]))
        with anyio.fail_after(50):
            await worker.run("what changed?")
    status, log = results(worker)
    assert not status.is_error
    assert "b.txt" in status.content
    assert not log.is_error
    assert "first commit" in log.content
