"""`hookloop -p` / `hookloop run` as a `claude -p` user drives it: Claude Code's result fields and stream-json
messages, its flags, the prompt from stdin, the cost — real subprocesses; the priced runs talk to a local HTTP
server that plays a recorded Anthropic stream to the real SDK."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from screen_helpers import script

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]
FIXTURES = Path(__file__).parents[1] / "providers" / "fixtures"


def cli(
    *args: str, env: dict[str, str], cwd: Path, stdin: str | None = "", module: bool = False
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hookloop"] if module else HOOKLOOP
    return subprocess.run([*command, *args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=60)


def bash_then_done(project: Path, command: str = "cat notes.txt") -> Path:
    return script(
        project / "model.json",
        [[{"text": "Reading."}, {"tool": "Bash", "arguments": {"command": command}}], [{"text": "All done."}]],
    )


CLAUDE_FIELDS = {
    "type",
    "subtype",
    "is_error",
    "result",
    "num_turns",
    "duration_ms",
    "duration_api_ms",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "session_id",
}


def test_print_mode_json_has_claude_codes_result_fields(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read the notes", "--model", f"scripted:{model}", "--output-format", "json", "--yes",
              env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) >= CLAUDE_FIELDS
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert result["result"] == "All done."
    assert result["num_turns"] == 2
    assert isinstance(result["duration_ms"], int)
    assert result["duration_ms"] >= result["duration_api_ms"] >= 0
    assert result["total_cost_usd"] == 0.0  # the offline scripted model costs nothing
    assert set(result["usage"]) >= {"input_tokens", "output_tokens", "cache_read_input_tokens",
                                    "cache_creation_input_tokens"}  # fmt: skip
    assert result["session_id"].startswith("session_")
    assert result["permission_denials"] == []
    # hookloop's own fields stay beside them
    assert (result["status"], result["text"], result["turns"]) == ("finished", "All done.", 2)


def test_flags_may_come_before_p_and_run_accepts_p(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "Hi."}]])
    first = cli("--model", f"scripted:{model}", "-p", "hello", "--output-format", "json", env=env, cwd=project)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["result"] == "Hi."
    second = cli("run", "-p", "hello", "--model", f"scripted:{model}", env=env, cwd=project)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Hi."


def test_stream_json_has_claude_codes_messages_in_order(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--output-format", "stream-json", "--verbose", "--yes",
              env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    claude = [x for x in lines if x["type"] in ("system", "assistant", "user", "result")]
    assert [x["type"] for x in claude] == ["system", "assistant", "assistant", "user", "assistant", "result"]
    init = claude[0]
    assert init["subtype"] == "init"
    assert {"Bash", "Read", "Write", "Edit", "Glob", "Grep"} <= set(init["tools"])
    assert init["cwd"] == str(project)
    assert init["permissionMode"] == "default"
    assert claude[1]["message"]["content"] == [{"type": "text", "text": "Reading."}]
    tool_use = claude[2]["message"]["content"][0]
    assert (tool_use["type"], tool_use["name"], tool_use["input"]) == ("tool_use", "Bash", {"command": "cat notes.txt"})
    tool_result = claude[3]["message"]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert tool_result["tool_use_id"] == tool_use["id"]
    assert tool_result["content"].startswith("hello notes")
    assert tool_result["is_error"] is False
    assert claude[-1]["subtype"] == "success"
    assert claude[-1]["result"] == "All done."
    assert lines[-1] is claude[-1] or lines[-1] == claude[-1]  # the result is the last line
    assert len({x["session_id"] for x in claude}) == 1


def test_json_verbose_is_the_array_of_every_message(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--output-format", "json", "--verbose", "--yes",
              env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    messages = json.loads(out.stdout)
    assert [m["type"] for m in messages] == ["system", "assistant", "assistant", "user", "assistant", "result"]


def test_text_verbose_shows_tool_results_and_model_requests(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--verbose", "--yes", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "│ hello notes" in out.stderr
    assert "model request 1:" in out.stderr
    assert "model request 2:" in out.stderr
    assert "cost $0 (the offline scripted model)" in out.stderr


@pytest.mark.parametrize("how", ["dash", "missing"])
def test_the_prompt_can_come_from_stdin(project: Path, env: dict[str, str], how: str) -> None:
    model = script(project / "model.json", [[{"text": "Got it."}]])
    args = ["run", "-"] if how == "dash" else ["-p"]
    out = cli(*args, "--model", f"scripted:{model}", "--output-format", "json", stdin="line one\nline two\n",
              env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{result['session_id']}.state.json").read_text())
    assert state["history"][0]["content"][0]["text"] == "line one\nline two"


def test_piped_input_is_added_after_the_prompt_as_claude_p_does(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "Explained."}], [{"text": "Again."}]])
    out = cli("-p", "explain this error", "--model", f"scripted:{model}", "--output-format", "json",
              stdin="Traceback: boom\n", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    sid = json.loads(out.stdout)["session_id"]
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{sid}.state.json").read_text())
    assert state["history"][0]["content"][0]["text"] == "explain this error\n\nTraceback: boom"
    # from a file too; an empty pipe adds nothing
    (project / "error.log").write_text("from a file\n")
    with open(project / "error.log") as log:
        done = subprocess.run([*HOOKLOOP, "-p", "explain", "--model", f"scripted:{model}", "--output-format", "json"],
                              stdin=log, capture_output=True, text=True, env=env, cwd=project, timeout=60)  # fmt: skip
    sid = json.loads(done.stdout)["session_id"]
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{sid}.state.json").read_text())
    assert state["history"][0]["content"][0]["text"] == "explain\n\nfrom a file"


def test_an_empty_prompt_is_a_usage_error(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "x"}]])
    out = cli("run", "-", "--model", f"scripted:{model}", stdin="  \n", env=env, cwd=project)
    assert out.returncode == 2
    assert out.stderr.strip() == "hookloop: no prompt: stdin was empty"


def test_allowed_tools_run_without_asking_and_a_settings_deny_still_wins(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    # without a terminal an ask would pause (exit 3): the allow rule answers it
    out = cli("-p", "read", "--model", f"scripted:{model}", "--allowedTools", "Bash(cat:*),Read",
              "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"] == "All done."

    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(cat:*)"]}}))
    denied = cli("-p", "read", "--model", f"scripted:{bash_then_done(project)}", "--allowedTools", "Bash",
                 "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert denied.returncode == 0, denied.stderr
    result = json.loads(denied.stdout)
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert result["permission_denials"][0]["tool_input"] == {"command": "cat notes.txt"}


def test_deny_answers_are_permission_denials(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--deny", "--output-format", "json", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    [denial] = json.loads(out.stdout)["permission_denials"]
    assert denial["tool_name"] == "Bash"
    assert denial["tool_input"] == {"command": "cat notes.txt"}
    assert denial["tool_use_id"]


def test_a_rule_with_spaces_in_parentheses_stays_one_rule(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project, "git log --oneline")
    out = cli("-p", "log", "--model", f"scripted:{model}", "--allowedTools", "Bash(git log:*) Read",
              "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr  # allowed: it ran (git fails outside a repository; no matter)
    assert json.loads(out.stdout)["permission_denials"] == []
    bad = cli("-p", "x", "--model", f"scripted:{model}", "--allowedTools", "Bash(git log:*", env=env, cwd=project)
    assert bad.returncode == 2
    assert "'(' is never closed" in bad.stderr


def test_disallowed_tools_deny_and_a_bare_name_hides_the_tool(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--disallowedTools", "Bash", "--yes",
              "--output-format", "stream-json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    init = next(x for x in lines if x["type"] == "system")
    assert "Bash" not in init["tools"]
    assert "Read" in init["tools"]
    result = next(x for x in lines if x["type"] == "user")["message"]["content"][0]
    assert result["is_error"]  # the model asked for a tool it does not have: never run, even with --yes
    assert (project / "notes.txt").exists()

    narrow = cli("-p", "read", "--model", f"scripted:{bash_then_done(project)}", "--disallowedTools", "Bash(cat:*)",
                 "--yes", "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert narrow.returncode == 0, narrow.stderr
    assert [d["tool_name"] for d in json.loads(narrow.stdout)["permission_denials"]] == ["Bash"]


def test_disallowed_tools_survive_into_a_resume(project: Path, env: dict[str, str]) -> None:
    model = script(
        project / "model.json",
        [
            [{"tool": "Bash", "arguments": {"command": "ls"}}],
            [{"tool": "Bash", "arguments": {"command": "rm notes.txt"}}],
            [{"text": "Done."}],
        ],
    )
    paused = cli("-p", "go", "--model", f"scripted:{model}", "--disallowedTools", "Bash(rm:*)",
                 "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert paused.returncode == 3, paused.stderr
    checkpoint = json.loads(paused.stdout)["checkpoint_path"]
    resumed = cli("resume", checkpoint, "--yes", "--output-format", "json", env=env, cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert (project / "notes.txt").exists()  # --yes answers asks; the rm stayed denied
    assert [d["tool_input"] for d in json.loads(resumed.stdout)["permission_denials"]] == [{"command": "rm notes.txt"}]


def test_append_system_prompt_and_system_prompt(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "x"}], [{"text": "y"}]])
    out = cli("-p", "hi", "--model", f"scripted:{model}", "--append-system-prompt", "Always answer in French.",
              "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    sid = json.loads(out.stdout)["session_id"]
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{sid}.state.json").read_text())
    assert state["system"].startswith("You are a careful coding agent")
    assert state["system"].endswith("\n\nAlways answer in French.")
    out = cli("-p", "hi", "--model", f"scripted:{model}", "--system-prompt", "Be terse.",
              "--append-system-prompt", "Use lists.", "--output-format", "json", env=env, cwd=project)  # fmt: skip
    sid = json.loads(out.stdout)["session_id"]
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{sid}.state.json").read_text())
    assert state["system"] == "Be terse.\n\nUse lists."


def test_max_turns_ends_with_error_max_turns(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--max-turns", "1", "--yes", "--output-format", "json",
              env=env, cwd=project)  # fmt: skip
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert (result["subtype"], result["is_error"], result["result"]) == ("error_max_turns", True, None)
    assert result["num_turns"] == 1


def test_a_paused_run_says_so_in_claude_fields_too(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = cli("-p", "read", "--model", f"scripted:{model}", "--output-format", "json", env=env, cwd=project)
    assert out.returncode == 3
    result = json.loads(out.stdout)
    assert (result["subtype"], result["is_error"], result["status"]) == ("paused", True, "paused")
    assert result["resume_command"].startswith("hookloop resume ")


def test_continue_with_print_mode(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "One."}], [{"text": "Two."}]])
    first = cli("-p", "first", "--model", f"scripted:{model}", "--output-format", "json", env=env, cwd=project)
    second = cli("-p", "second", "-c", "--output-format", "json", env=env, cwd=project)
    assert second.returncode == 0, second.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert two["result"] == "Two."
    assert two["session_id"] == one["session_id"]
    third = cli("-p", "third", "--resume", one["session_id"], "--model", f"scripted:{model}",
                env=env, cwd=project)  # fmt: skip
    assert third.returncode == 1  # the script plays on where the session left it: here it has run out
    assert "the script has no more turns" in third.stderr


# -- cost, with a real provider client -------------------------------------------------------------------


class _Anthropic(BaseHTTPRequestHandler):
    body = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        type(self).seen.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def anthropic_env(env: dict[str, str]) -> Iterator[dict[str, str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Anthropic)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {**env, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}"}
    finally:
        server.shutdown()
        server.server_close()


def test_cost_of_a_known_model_in_json_and_at_the_end_of_text(project: Path, anthropic_env: dict[str, str]) -> None:
    out = cli("-p", "hi", "--model", "anthropic:claude-sonnet-4-6", "--output-format", "json",
              env=anthropic_env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["result"] == "Hello, world!"
    assert result["usage"]["input_tokens"] == 25
    assert result["usage"]["output_tokens"] == 15
    assert result["total_cost_usd"] == pytest.approx((25 * 3 + 15 * 15) / 1_000_000)  # $3 / $15 per MTok
    assert result["modelUsage"]["claude-sonnet-4-6"]["costUSD"] == pytest.approx(result["total_cost_usd"])
    text = cli("-p", "hi", "--model", "anthropic:claude-sonnet-4-6", env=anthropic_env, cwd=project)
    assert text.returncode == 0, text.stderr
    assert "cost $0.0003 (prices of " in text.stderr


def test_an_unknown_model_has_no_cost_not_zero(project: Path, anthropic_env: dict[str, str]) -> None:
    out = cli("-p", "hi", "--model", "anthropic:claude-future-9", "--output-format", "json",
              env=anthropic_env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["total_cost_usd"] is None
    assert result["modelUsage"]["claude-future-9"]["costUSD"] is None
    text = cli("-p", "hi", "--model", "anthropic:claude-future-9", env=anthropic_env, cwd=project)
    assert "cost unknown (claude-future-9 not in hookloop's price table)" in text.stderr


# -- --version, -h, python -m, completion ----------------------------------------------------------------


def test_version_help_alias_and_python_m(project: Path, env: dict[str, str]) -> None:
    from importlib.metadata import version

    for args, module in ((["--version"], False), (["-v"], False), (["--version"], True)):
        out = cli(*args, env=env, cwd=project, module=module)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"hookloop {version('hookloop')} (Python ")
    short, long = cli("-h", env=env, cwd=project), cli("--help", env=env, cwd=project)
    assert short.returncode == long.returncode == 0
    assert short.stdout == long.stdout
    assert "chat" in short.stdout
    assert "run" in short.stdout
    sub = cli("run", "-h", env=env, cwd=project)
    assert sub.returncode == 0
    assert "--allowedTools" in sub.stdout
    assert "--output-format" in sub.stdout
    module = cli("hooks", "-h", env=env, cwd=project, module=True)
    assert module.returncode == 0
    assert "validate" in module.stdout


def _launcher(tmp_path: Path) -> Path:
    """A ``hookloop`` on PATH, as the console script would be."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "hookloop"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -c "from hookloop.cli import main; main()" "$@"\n')
    launcher.chmod(0o755)
    return bindir


def test_bash_completion_completes_commands_and_options(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    bindir = _launcher(tmp_path)
    env = {**env, "PATH": f"{bindir}:{env['PATH']}"}
    shown = subprocess.run(["hookloop", "--show-completion", "bash"], capture_output=True, text=True, env=env,
                           cwd=project, timeout=60)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "_HOOKLOOP_COMPLETE" in shown.stdout
    (tmp_path / "completion.sh").write_text(shown.stdout)
    probe = (
        f"source {tmp_path / 'completion.sh'}\n"
        'COMP_WORDS=(hookloop ch); COMP_CWORD=1; COMP_LINE="hookloop ch"; COMP_POINT=${#COMP_LINE}\n'
        '_hookloop_completion hookloop; echo "commands: ${COMPREPLY[*]}"\n'
        'COMP_WORDS=(hookloop run --allowed); COMP_CWORD=2; COMP_LINE="hookloop run --allowed"\n'
        '_hookloop_completion hookloop; echo "options: ${COMPREPLY[*]}"\n'
    )
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, env=env, cwd=project, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "commands: chat" in out.stdout
    assert "options: --allowedTools" in out.stdout or "options: --allowed-tools" in out.stdout


def test_install_completion_writes_the_shell_setup(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    bindir = _launcher(tmp_path)
    env = {**env, "PATH": f"{bindir}:{env['PATH']}", "SHELL": "/bin/bash"}
    out = subprocess.run(["hookloop", "--install-completion", "bash"], capture_output=True, text=True, env=env,
                         cwd=project, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    home = Path(env["HOME"])
    assert "hookloop" in (home / ".bashrc").read_text()
    assert "_HOOKLOOP_COMPLETE" in next((home / ".bash_completions").glob("hookloop*")).read_text()


def test_allowed_tools_takes_several_values_as_claude_code_does(project: Path, env: dict[str, str]) -> None:
    model = script(
        project / "model.json",
        [
            [{"tool": "Bash", "arguments": {"command": "cat notes.txt"}}],
            [{"tool": "Read", "arguments": {"file_path": str(project / "notes.txt")}}],
            [{"text": "Both ran."}],
        ],
    )
    out = cli("-p", "--allowedTools", "Bash(cat:*)", "Read", "read the notes twice", "--model", f"scripted:{model}",
              "--output-format", "json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr  # no ask: both rules were read; the prompt stayed the prompt
    result = json.loads(out.stdout)
    assert result["result"] == "Both ran."
    state = json.loads((Path(env["HOOKLOOP_HOME"]) / "sessions" / f"{result['session_id']}.state.json").read_text())
    assert state["history"][0]["content"][0]["text"] == "read the notes twice"


def test_mcp_config_may_be_inline_json(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    server = str(Path(__file__).parents[1] / "tools" / "mcp_caps_server.py")
    inline = json.dumps({"mcpServers": {"caps": {"command": sys.executable, "args": [server, "stdio", "",
                                                                                      str(tmp_path)]}}})  # fmt: skip
    add = {"tool": "mcp__caps__add", "arguments": {"a": 2, "b": 3}}
    model = script(project / "model.json", [[add], [{"text": "Five."}]])
    out = cli("-p", "add", "--model", f"scripted:{model}", "--mcp-config", inline, "--yes", "--output-format",
              "stream-json", env=env, cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["type"] == "system"
    [status] = lines[0]["mcp_servers"]  # the inline server was configured and started
    assert status["name"] == "caps"
    if status["status"] == "connected":  # (a loaded machine may miss the 5 s initialize: then it says "failed")
        assert "mcp__caps__add" in lines[0]["tools"]
        result = next(x for x in lines if x["type"] == "user")["message"]["content"][0]
        assert (result["content"], result["is_error"]) == ("5", False)
    else:
        assert status["status"] == "failed"
        assert "mcp__caps__add" not in lines[0]["tools"]
        assert "MCP server 'caps'" in out.stderr
    [saved] = (Path(env["HOOKLOOP_HOME"]) / "mcp-configs").glob("*.json")
    assert saved.stat().st_mode & 0o777 == 0o600
