"""HTTP hooks against a real local http.server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hookloop.command_hooks.http_hooks import interpolate_header, url_allowed
from hookloop.command_hooks.model import ConfiguredHook, HookSource, HttpHandler
from hookloop.command_hooks.runner import RunnerOptions, run_all, run_hook
from hookloop.command_hooks.translate import translate_outcome

pytestmark = pytest.mark.anyio

PAYLOAD = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no",
    }
}


@dataclass
class Server:
    base: str
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server(base="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.requests.append((self.path, dict(self.headers.items()), body))
            if self.path == "/slow":
                state.release.wait(10)
            status, reply, extra = {
                "/deny": (200, json.dumps(DENY).encode(), {}),
                "/empty": (200, b"", {}),
                "/text": (200, b"hello", {}),
                "/error": (500, b'{"decision": "block"}', {}),
                "/redirect": (302, b"", {"Location": "/deny"}),
                "/slow": (200, b"", {}),
                "/huge": (200, json.dumps(DENY).encode() + b" " * (2 << 20), {}),
            }.get(self.path, (404, b"", {}))
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def http_hook(url: str, **kwargs: object) -> ConfiguredHook:
    return ConfiguredHook(
        event="PreToolUse",
        matcher=None,
        handler=HttpHandler(url=url, **kwargs),  # type: ignore[arg-type]
        source=HookSource(kind="hookloop-user", path="/test/settings.json"),
    )


async def test_posts_the_payload_and_reads_a_json_decision(server: Server, project: Path) -> None:
    hook = http_hook(server.base + "/deny")
    outcome = await run_hook(hook, PAYLOAD, project_dir=project)
    assert outcome.ok
    assert outcome.http_status == 200
    path, headers, body = server.requests[0]
    assert path == "/deny"
    assert json.loads(body) == PAYLOAD
    assert headers["Content-Type"] == "application/json"
    decision = translate_outcome(hook, outcome)
    assert decision.kind == "deny"
    assert decision.reason == "no"


async def test_headers_interpolate_only_allowed_variables(server: Server, project: Path) -> None:
    hook = http_hook(
        server.base + "/empty",
        headers=(("Authorization", "Bearer $TOKEN"), ("X-Secret", "[${SECRET}]"), ("X-Both", "${TOKEN}-$SECRET")),
        allowed_env_vars=("TOKEN",),
    )
    env = {"TOKEN": "t0k", "SECRET": "s3cret"}
    outcome = await run_hook(hook, PAYLOAD, project_dir=project, extra_env=env)
    assert outcome.ok
    headers = server.requests[0][1]
    assert headers["Authorization"] == "Bearer t0k"
    assert headers["X-Secret"] == "[]"
    assert headers["X-Both"] == "t0k-"
    # A global allowlist narrows what the hook itself allows.
    narrowed = RunnerOptions(http_env_allowlist=())
    await run_hook(hook, PAYLOAD, project_dir=project, extra_env=env, options=narrowed)
    assert server.requests[1][1]["Authorization"] == "Bearer "


async def test_url_allowlist(server: Server, project: Path) -> None:
    options = RunnerOptions(http_url_allowlist=(server.base + "/de*",))
    allowed, refused = await run_all(
        [http_hook(server.base + "/deny"), http_hook(server.base + "/empty")],
        PAYLOAD,
        project_dir=project,
        options=options,
    )
    assert allowed.ok
    assert refused.error_kind == "url_not_allowed"
    assert [path for path, _, _ in server.requests] == ["/deny"]


async def test_non_2xx_redirect_and_bodies(server: Server, project: Path) -> None:
    error = await run_hook(http_hook(server.base + "/error"), PAYLOAD, project_dir=project)
    assert error.error_kind == "http_error"
    assert error.http_status == 500
    redirect = await run_hook(http_hook(server.base + "/redirect"), PAYLOAD, project_dir=project)
    assert redirect.error_kind == "http_error"
    assert redirect.http_status == 302
    assert [path for path, _, _ in server.requests] == ["/error", "/redirect"]
    text_hook = http_hook(server.base + "/text")
    text = translate_outcome(text_hook, await run_hook(text_hook, PAYLOAD, project_dir=project))
    assert text.kind == "continue"
    assert text.failed
    empty_hook = http_hook(server.base + "/empty")
    empty = translate_outcome(empty_hook, await run_hook(empty_hook, PAYLOAD, project_dir=project))
    assert empty.kind == "continue"
    assert not empty.failed


@pytest.mark.parametrize("fail_closed", [False, True])
async def test_a_body_over_the_cap_is_a_hook_error_never_read(server: Server, project: Path, fail_closed: bool) -> None:
    hook = http_hook(server.base + "/huge", fail_closed=fail_closed)
    outcome = await run_hook(hook, PAYLOAD, project_dir=project)
    assert outcome.error_kind == "output_too_large"
    assert outcome.error is not None
    assert server.base + "/huge" in outcome.error
    decision = translate_outcome(hook, outcome)
    assert decision.errors == (outcome.error,)
    assert decision.kind == ("deny" if fail_closed else "continue")  # the valid JSON at the start is not read
    assert decision.reason != "no"  # not the JSON's own reason


async def test_timeout(server: Server, project: Path) -> None:
    hook = http_hook(server.base + "/slow", timeout=0.3)
    outcome = await run_hook(hook, PAYLOAD, project_dir=project)
    assert outcome.error_kind == "timeout"
    assert outcome.error is not None
    assert "0.3 s" in outcome.error
    server.release.set()


async def test_connection_refused(project: Path) -> None:
    with socket.socket() as probe:  # bound, never listening, while the hook runs: no other test's server takes it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        outcome = await run_hook(http_hook(f"http://127.0.0.1:{port}/x", timeout=5), PAYLOAD, project_dir=project)
    assert outcome.error_kind == "http_error"
    assert outcome.http_status is None


def test_url_allowed_rules() -> None:
    assert url_allowed("https://hooks.example.com/a", None)
    assert not url_allowed("file:///etc/passwd", None)
    assert not url_allowed("ftp://example.com/", None)
    assert not url_allowed("https://example.com/", ())
    assert url_allowed("https://hooks.example.com/a/b", ["https://hooks.example.com/*"])
    assert not url_allowed("https://evil.com/?https://hooks.example.com/", ["https://hooks.example.com/*"])
    assert not url_allowed("https://hooks.example.com.evil.com/", ["https://hooks.example.com/*"])


def test_interpolate_header() -> None:
    env = {"A": "1", "B": "2"}
    assert interpolate_header("$A ${A} $B ${B} $C $", ["A"], env) == "1 1    $"
