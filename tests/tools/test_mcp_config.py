"""MCP server configuration in Claude Code's format: parsing, ${VAR} expansion, errors naming file and field,
project-server approval; and one configured server opened for real."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hookloop.tools.mcp_config import (
    MCPConfigError,
    MCPServerConfig,
    approve_project_servers,
    expand_vars,
    load_mcp_config,
    parse_mcp_servers,
)

SERVER = str(Path(__file__).with_name("mcp_caps_server.py"))


def write(tmp_path: Path, data: object, name: str = ".mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_the_three_transports_parse_with_variables_expanded(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "memory": {"command": "${TOOL_DIR}/npx", "args": ["-y", "${PKG:-server-memory}"], "env": {"K": "$X"}},
                "github": {
                    "type": "http",
                    "url": "https://api.example.com/${PATH_PART:-mcp}",
                    "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
                    "oauth": {"clientId": "ignored"},
                },
                "events": {"type": "sse", "url": "http://127.0.0.1:${PORT:-8000}/sse"},
                "typed": {"type": "stdio", "command": "srv"},
            }
        },
    )
    environ = {"TOOL_DIR": "/opt/bin", "GITHUB_TOKEN": "tok", "PORT": ""}
    servers = load_mcp_config(path, environ=environ, project=True)
    assert [s.name for s in servers] == ["memory", "github", "events", "typed"]
    memory, github, events, typed = servers
    assert (memory.transport, memory.command, memory.args) == ("stdio", "/opt/bin/npx", ("-y", "server-memory"))
    assert dict(memory.env) == {"K": "$X"}  # only ${...} is expanded
    assert (github.transport, github.url) == ("http", "https://api.example.com/mcp")
    assert dict(github.headers) == {"Authorization": "Bearer tok"}
    assert events.url == "http://127.0.0.1:/sse"  # set but empty: Claude Code keeps the empty value
    assert typed.transport == "stdio"
    assert all(s.project and s.source == str(path) for s in servers)
    assert "tok" not in repr(github)  # header values never in a repr


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", r"\.mcp\.json: line 1 column 2: invalid JSON"),
        ([], r'expected a JSON object with an "mcpServers" object'),
        ({"servers": {}}, r'no "mcpServers" key'),
        ({"mcpServers": []}, r"mcpServers: expected an object of servers, got list"),
        ({"mcpServers": {"a": "npx"}}, r"mcpServers\.a: expected an object, got str"),
        ({"mcpServers": {"a": {}}}, r'mcpServers\.a\.command: missing \(a stdio server needs "command"\)'),
        ({"mcpServers": {"a": {"command": ["npx"]}}}, r"mcpServers\.a\.command: expected a string, got list"),
        ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, r"mcpServers\.a\.args: expected a list of strings"),
        ({"mcpServers": {"a": {"command": "x", "args": [1]}}}, r"mcpServers\.a\.args\[0\]: expected a string"),
        ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, r"mcpServers\.a\.env\.K: expected a string"),
        ({"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}, r'mcpServers\.a\.type: expected "stdio"'),
        ({"mcpServers": {"a": {"url": "http://x"}}}, r'needs "type": "http" or "sse"'),
        ({"mcpServers": {"a": {"type": None, "command": "x"}}}, r'mcpServers\.a\.type: expected "stdio".*got null'),
        ({"mcpServers": {"a": {"type": "http"}}}, r"mcpServers\.a\.url: missing"),
        ({"mcpServers": {"a": {"type": "http", "url": "file:///etc"}}}, r"mcpServers\.a\.url: expected an http"),
        ({"mcpServers": {"a": {"type": "sse", "url": "http://h", "command": "x"}}}, r'has "url", not "command"'),
        ({"mcpServers": {"a": {"command": "${NOPE_UNSET}"}}}, r"mcpServers\.a\.command: .*\$\{NOPE_UNSET\} is not set"),
        ({"mcpServers": {"a__b": {"command": "x"}}}, r"mcpServers\.a__b: a server name may use"),
        ({"mcpServers": {"a.b": {"command": "x"}}}, r"mcpServers\.a\.b: a server name may use"),
        (
            {"mcpServers": {"a": {"type": "http", "url": "http://h", "headers": {"X": "${EVIL}"}}}},
            r"mcpServers\.a\.headers\.X: the value holds CR, LF or NUL",
        ),
        (
            {"mcpServers": {"a": {"type": "http", "url": "http://h", "headers": {"Bad Name": "v"}}}},
            r"mcpServers\.a\.headers: 'Bad Name' is not a valid header name",
        ),
    ],
)
def test_a_bad_config_names_the_file_and_the_field(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(MCPConfigError, match=message) as caught:
        load_mcp_config(path, environ={"EVIL": "v\r\nX-Injected: 1"})
    assert str(caught.value).startswith(str(path))


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError, match=r"no such MCP config file"):
        load_mcp_config(tmp_path / "absent.json")


def test_expansion_defaults_apply_only_when_unset() -> None:
    env = {"SET": "v", "EMPTY": ""}
    assert expand_vars("${SET:-d}|${EMPTY:-d}|${UNSET:-d}|${UNSET:-}", env, "x") == "v||d|"
    assert expand_vars("no vars $HOME ${", env, "x") == "no vars $HOME ${"


def test_settings_mcp_servers_parse_with_the_settings_file_named(tmp_path: Path) -> None:
    [server] = parse_mcp_servers({"s": {"command": "c"}}, file="/u/settings.json")
    assert (server.source, server.project) == ("/u/settings.json", False)
    with pytest.raises(MCPConfigError, match=r"^/u/settings\.json: mcpServers\.s\.command: empty"):
        parse_mcp_servers({"s": {"command": " "}}, file="/u/settings.json")


def test_project_servers_need_approval_from_the_users_own_settings() -> None:
    a = MCPServerConfig(name="a", transport="stdio", command="x", project=True)
    b = MCPServerConfig(name="b", transport="stdio", command="x", project=True)
    mine = MCPServerConfig(name="mine", transport="stdio", command="x", project=False)
    nobody = approve_project_servers([a, b, mine], [], [])
    assert (nobody.approved, nobody.pending) == ((mine,), (a, b))
    named = approve_project_servers([a, b], [{"enabledMcpjsonServers": ["b"]}], [])
    assert (named.approved, named.pending) == ((b,), (a,))
    everything = approve_project_servers([a, b], [{"enableAllProjectMcpServers": True}], [])
    assert everything.approved == (a, b)
    # the project's own files cannot approve (they are not among the trusted layers) but can disable
    project_layer = {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["a"]}
    split = approve_project_servers([a, b], [{"enableAllProjectMcpServers": True}], [project_layer])
    assert (split.approved, split.disabled) == ((b,), (a,))
    assert approve_project_servers([a], [{"enableAllProjectMcpServers": "yes"}], []).pending == (a,)


@pytest.mark.anyio
async def test_a_configured_stdio_server_opens(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"mcpServers": {"caps": {"command": "${PY}", "args": [SERVER, "stdio", "", str(tmp_path)]}}},
        "servers.json",
    )
    [config] = load_mcp_config(path, environ={"PY": sys.executable})
    async with config.session() as server:
        assert await server.call_tool("add", {"a": 1, "b": 2}) == "3"


@pytest.mark.anyio
async def test_a_configured_server_opens_with_the_servers_options(tmp_path: Path) -> None:
    """MCPServerConfig.open/session take MCPServer's options (trust_annotations, sequential, timeouts, client)."""
    from hookloop.tools.mcp import MCPClientOptions

    path = write(tmp_path, {"mcpServers": {"caps": {"command": sys.executable, "args": [SERVER, "stdio", "", "x"]}}})
    [config] = load_mcp_config(path)
    roots = [tmp_path.resolve()]  # noqa: ASYNC240 - a test, one stat
    async with config.session(
        trust_annotations=True, sequential=False, call_timeout=30, client=MCPClientOptions(roots=roots)
    ) as server:
        tools = {t.meta.name: t.meta for t in server.list_tools()}
        assert tools["mcp__caps__wait"].read_only  # its readOnlyHint, trusted
        assert not tools["mcp__caps__add"].sequential
        assert json.loads(str(await server.call_tool("roots", {}))) == [roots[0].as_uri()]
    with pytest.raises(ValueError, match="init_timeout must be a positive number"):
        await config.open(init_timeout=-1)
