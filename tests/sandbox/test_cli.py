"""`hookloop run --sandbox`, the ``sandbox`` settings through the CLI, and `hookloop doctor`: real subprocesses,
a scripted model file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


@pytest.fixture
def env(base: Path) -> dict[str, str]:
    home = base / "home"
    home.mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "HOOKLOOP_HOME": str(base / "hookloop-home"),
        "PYTHONPATH": SRC,
        "COLUMNS": "250",
        "NO_COLOR": "1",
    }


def hookloop(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def model(ws: Path, command: str) -> str:
    turns: list[list[dict[str, Any]]] = [[{"tool": "Bash", "arguments": {"command": command}}], [{"text": "done"}]]
    path = ws.parent / "model.json"
    path.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return f"scripted:{path}"


def settings(ws: Path, data: dict[str, Any]) -> None:
    (ws / ".hookloop").mkdir(exist_ok=True)
    (ws / ".hookloop" / "settings.json").write_text(json.dumps(data))


def test_run_with_sandbox_confines_bash_and_needs_no_approval(ws: Path, outside: Path, env: dict[str, str]) -> None:
    (ws / ".env").write_text("API_KEY=sk-live-123\n")
    settings(ws, {"permissions": {"deny": ["Read(./.env)"]}})
    command = f"cat .env; echo pwned > {outside}/f"
    out = hookloop("run", "go", "--model", model(ws, command), "--sandbox", "--output-format", "json", env=env, cwd=ws)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["status"] == "finished"
    assert not (outside / "f").exists()
    transcript = Path(json.loads(out.stdout.splitlines()[-1])["transcript_path"])
    text = transcript.read_text()
    assert "sk-live-123" not in text
    assert "Read-only file system" in text


def test_sandbox_enabled_in_settings(ws: Path, outside: Path, env: dict[str, str]) -> None:
    settings(ws, {"sandbox": {"enabled": True}})
    out = hookloop("run", "go", "--model", model(ws, f"touch {outside}/f"), "--output-format", "json", env=env, cwd=ws)
    assert out.returncode == 0, out.stderr
    assert not (outside / "f").exists()


def test_a_bad_sandbox_setting_is_a_usage_error_naming_file_and_path(ws: Path, env: dict[str, str]) -> None:
    settings(ws, {"sandbox": {"enabled": True, "network": {"allowedDomain": []}}})
    out = hookloop("run", "go", "--model", model(ws, "true"), env=env, cwd=ws)
    assert out.returncode == 2
    assert f"{ws}/.hookloop/settings.json: sandbox.network.allowedDomain: unknown key" in out.stderr


def test_fail_if_unavailable_refuses_to_start_and_otherwise_it_warns(ws: Path, env: dict[str, str]) -> None:
    settings(ws, {"sandbox": {"enabled": True, "failIfUnavailable": True, "bwrapPath": "/nonexistent/bwrap"}})
    out = hookloop("run", "go", "--model", model(ws, "true"), "--output-format", "json", env=env, cwd=ws)
    assert out.returncode == 2
    assert "the sandbox is required (sandbox.failIfUnavailable)" in out.stderr

    settings(ws, {"sandbox": {"enabled": True, "bwrapPath": "/nonexistent/bwrap"}})
    out = hookloop("run", "go", "--model", model(ws, "true"), "--output-format", "json", "--yes", env=env, cwd=ws)
    assert out.returncode == 0, out.stderr
    assert "Bash commands run UNSANDBOXED" in out.stderr


def test_doctor_says_whether_a_sandbox_is_available(ws: Path, env: dict[str, str]) -> None:
    out = hookloop("doctor", env=env, cwd=ws)
    assert out.returncode == 0, out.stderr
    assert "sandbox backend: bubblewrap — available" in out.stdout
    assert "bwrap:" in out.stdout
    assert "socat:" in out.stdout
    settings(ws, {"sandbox": {"enabled": True, "bwrapPath": "/nonexistent/bwrap"}})
    out = hookloop("doctor", env=env, cwd=ws)
    assert out.returncode == 1
    assert "NOT available" in out.stdout
    assert "commands run UNSANDBOXED" in out.stdout


def test_a_new_domain_is_an_approval_yes_lets_it_through_deny_refuses_it(ws: Path, env: dict[str, str]) -> None:
    command = "curl -sS http://unlisted.invalid/ 2>&1"
    out = hookloop("run", "go", "--model", model(ws, command), "--sandbox", "--output-format", "json", "--deny",
                   env=env, cwd=ws)  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = Path(json.loads(out.stdout.splitlines()[-1])["transcript_path"]).read_text()
    assert "blocked by the sandbox's network allow-list: unlisted.invalid" in text

    out = hookloop("run", "go", "--model", model(ws, command), "--sandbox", "--output-format", "json", "--yes",
                   env=env, cwd=ws)  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = Path(json.loads(out.stdout.splitlines()[-1])["transcript_path"]).read_text()
    assert "blocked by the sandbox's network allow-list" not in text
    assert "cannot reach unlisted.invalid" in text  # let through by the proxy; there is no such host


def test_at_a_terminal_a_new_domain_is_asked_once_per_host(ws: Path, env: dict[str, str]) -> None:
    import pty
    import select
    import time

    command = "curl -sS http://asked.invalid/a 2>&1; curl -sS http://asked.invalid/b 2>&1"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*HOOKLOOP, "run", "go", "--model", model(ws, command), "--sandbox", "--permission-mode", "acceptEdits"],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ws, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    screen = ""

    def read_until(text: str) -> None:
        nonlocal screen
        deadline = time.monotonic() + 30
        while text not in screen and (left := deadline - time.monotonic()) > 0:
            if select.select([master], [], [], left)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                screen += chunk.decode(errors="replace")
        assert text in screen, screen

    try:
        read_until("allow it for this session?")
        assert "wants to reach" in screen
        assert "asked.invalid" in screen.split("wants to reach", 1)[1]
        os.write(master, b"y\n")
        read_until("done in")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert screen.count("allow it for this session?") == 1
    text = next((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.jsonl")).read_text()
    assert text.count("cannot reach asked.invalid") == 2


def test_the_sandbox_flag_refuses_to_run_without_a_sandbox(ws: Path, env: dict[str, str]) -> None:
    settings(ws, {"sandbox": {"bwrapPath": "/nonexistent/bwrap"}})
    out = hookloop("run", "go", "--model", model(ws, "true"), "--sandbox", "--yes", env=env, cwd=ws)
    assert out.returncode == 2
    assert "--sandbox: no sandbox here" in out.stderr
