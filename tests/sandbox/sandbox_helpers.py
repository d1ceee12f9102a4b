"""Running real Bash calls through a real sandbox."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from hookloop.permissions import PermissionPolicy
from hookloop.sandbox import BubblewrapBackend, NetworkSettings, Sandbox, SandboxSettings
from hookloop.tools import ToolContext, ToolOutput
from hookloop.tools.builtin import BashTool, Workspace

CTX = ToolContext(run_id="run", session_id="session", call_id="call", tool_name="Bash", turn=1)


def make_sandbox(
    ws: Path,
    backend: BubblewrapBackend,
    *,
    deny: Iterable[str] = (),
    allowed_domains: Iterable[str] = (),
    resolver: Mapping[str, tuple[str, int]] | None = None,
    **settings: object,
) -> Sandbox:
    policy = PermissionPolicy(deny=list(deny), workspace=ws)
    config = SandboxSettings(enabled=True, network=NetworkSettings(allowed_domains=tuple(allowed_domains)), **settings)  # type: ignore[arg-type]
    return Sandbox(config, workspace=ws, policy=policy, backend=backend, resolver=resolver)


async def bash(tool: BashTool, command: str, **fields: object) -> tuple[str, bool]:
    """(content, is_error) of one real Bash call."""
    result = await tool.execute({"command": command, **fields}, CTX)
    assert isinstance(result, ToolOutput)
    return result.content, result.is_error


def bash_tool(ws: Path, sandbox: Sandbox) -> BashTool:
    return BashTool(Workspace(ws), sandbox=sandbox)


def names(directory: Path) -> list[str]:
    """The sorted entry names of a directory (sync, for assertions in async tests)."""
    return sorted(p.name for p in directory.iterdir())


def exists(path: Path | str) -> bool:
    return Path(path).exists()


def git_repo(path: Path) -> None:
    """``git init`` with an identity (sync, outside the sandbox)."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "t@example.com"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "T"], check=True)
