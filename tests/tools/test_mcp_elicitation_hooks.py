"""Claude Code's Elicitation / ElicitationResult command hooks on MCP elicitation: real hook scripts (the style of
public collections), a real SDK server subprocess asking for input."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from hookloop import ScriptedClient, Worker
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.tools.mcp import ElicitationRequest, ElicitationResponse, MCPServer, elicitation_routing

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("mcp_caps_server.py"))


def script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/bin/bash\nset -euo pipefail\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def worker_with_hooks(tmp_path: Path, hooks: dict[str, object], answer: ElicitationResponse | None) -> Worker:
    """A Worker with user-level command hooks and an application handler that answers ``answer``."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    worker = Worker(ScriptedClient([]), workspace=project)
    CommandHooks.load(project, home=home, hookloop_home=tmp_path / "hookloop-home", include_cline=False).install(worker)
    asked: list[ElicitationRequest] = []

    async def application(request: ElicitationRequest) -> ElicitationResponse | None:
        asked.append(request)
        return answer

    elicitation_routing(worker).handler = application
    worker.asked = asked  # type: ignore[attr-defined]
    return worker


def one(command: str, matcher: str = "") -> list[dict[str, object]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


async def call(server: MCPServer, tool: str) -> str:
    output = await server.call_tool(tool, {})
    assert isinstance(output, str), output
    return output


async def test_an_elicitation_hook_answers_for_the_user_and_sees_claude_codes_fields(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    answer = script(
        tmp_path,
        "answer.sh",
        f"cat > {seen}\n"
        'echo \'{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept", '
        '"content": {"email": "hook@example.com"}}}\'\n',
    )
    async with MCPServer.stdio("caps", sys.executable, [SERVER, "stdio", "", str(tmp_path)]) as server:
        worker = worker_with_hooks(tmp_path, {"Elicitation": one(answer, "caps")}, ElicitationResponse(action="cancel"))
        server.bind(worker)
        assert await call(server, "signup") == "accept:hook@example.com:False"
        assert worker.asked == []  # type: ignore[attr-defined]  # the hook answered: the application was not asked
        payload = json.loads(seen.read_text())
        assert payload["hook_event_name"] == "Elicitation"
        assert payload["session_id"] == worker.session_id
        assert payload["cwd"] == str((tmp_path / "project").resolve())
        assert (payload["mcp_server_name"], payload["message"], payload["mode"]) == (
            "caps",
            "Which email should I use?",
            "form",
        )
        assert set(payload["requested_schema"]["properties"]) == {"email", "subscribe"}
        seen.unlink()
        assert await call(server, "login") == "accept"  # url mode: same hook, accepted without content
        url_payload = json.loads(seen.read_text())
        assert (url_payload["mode"], url_payload["url"], url_payload["elicitation_id"]) == (
            "url",
            "https://example.com/login",
            "login-1",
        )
        assert "requested_schema" not in url_payload


async def test_exit_2_declines_and_a_matcher_for_another_server_does_not_fire(tmp_path: Path) -> None:
    deny = script(tmp_path, "deny.sh", 'echo "no elicitation from untrusted servers" >&2\nexit 2\n')
    sneaky = script(
        tmp_path,
        "sneaky.sh",
        'echo \'{"hookSpecificOutput": {"action": "accept", "content": {"email": "x@y.z", "password": "p"}}}\'\n',
    )
    accept = ElicitationResponse(action="accept", content={"email": "app@example.com"})
    async with MCPServer.stdio("caps", sys.executable, [SERVER, "stdio", "", str(tmp_path)]) as server:
        server.bind(worker_with_hooks(tmp_path, {"Elicitation": one(deny)}, accept))
        assert await call(server, "signup") == "decline"
        other = worker_with_hooks(tmp_path, {"Elicitation": one(deny, "github|memory")}, accept)
        server.bind(other)
        assert await call(server, "signup") == "accept:app@example.com:False"
        assert len(other.asked) == 1  # type: ignore[attr-defined]
        # a hook's accept with a field the server never asked for is declined, not sent
        server.bind(worker_with_hooks(tmp_path, {"Elicitation": one(sneaky)}, accept))
        assert await call(server, "signup") == "decline"


async def test_elicitation_result_hooks_see_the_answer_and_can_replace_or_decline_it(tmp_path: Path) -> None:
    seen = tmp_path / "result.json"
    block = script(tmp_path, "block.sh", f"cat > {seen}\nexit 2\n")
    cancel = script(tmp_path, "cancel.sh", 'echo \'{"hookSpecificOutput": {"action": "cancel"}}\'\n')
    broken = script(tmp_path, "broken.sh", "echo not json\nexit 1\n")
    accept = ElicitationResponse(action="accept", content={"email": "app@example.com", "subscribe": True})
    async with MCPServer.stdio("caps", sys.executable, [SERVER, "stdio", "", str(tmp_path)]) as server:
        server.bind(worker_with_hooks(tmp_path, {"ElicitationResult": one(block)}, accept))
        assert await call(server, "signup") == "decline"
        payload = json.loads(seen.read_text())
        assert payload["hook_event_name"] == "ElicitationResult"
        assert (payload["mcp_server_name"], payload["action"], payload["mode"]) == ("caps", "accept", "form")
        assert payload["content"] == {"email": "app@example.com", "subscribe": True}
        server.bind(worker_with_hooks(tmp_path, {"ElicitationResult": one(cancel)}, accept))
        assert await call(server, "signup") == "cancel"
        # a hook that fails decides nothing: the application's answer stands
        server.bind(worker_with_hooks(tmp_path, {"ElicitationResult": one(broken)}, accept))
        assert await call(server, "signup") == "accept:app@example.com:True"


def test_the_elicitation_events_are_loaded_as_fired(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    hooks = {"Elicitation": one("true", "caps"), "ElicitationResult": one("true")}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    loaded = CommandHooks.load(tmp_path, home=home, hookloop_home=tmp_path / "hh", include_cline=False)
    assert {h.event for h in loaded.hooks} == {"Elicitation", "ElicitationResult"}
    assert not [d for d in loaded.diagnostics if "does not fire" in d.message]
