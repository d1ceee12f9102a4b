"""`hookloop chat` in a real pseudo-terminal, read as a person sees it: the bytes go through a terminal emulator
(pyte) and the tests read the rendered screen. The terminal is the process's controlling terminal, so a typed
Ctrl-C (\\x03) is delivered by the kernel as SIGINT, as in a real shell. Offline: the model is a scripted file."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from screen_helpers import HOOKLOOP, Screen, script, wait_until_idle

COLUMNS, LINES = 140, 60


def chat_screen(args: list[str], env: dict[str, str], cwd: Path) -> Screen:
    """The chat on a 140 x 60 terminal that is its controlling one (a typed Ctrl-C is SIGINT)."""
    return Screen(args, env, cwd, columns=COLUMNS, lines=LINES, controlling=True, term="xterm")


def transcript_items(env: dict[str, str], kind: str) -> list[dict[str, Any]]:
    items = []
    for transcript in (Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.jsonl"):
        for line in transcript.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "item" and record["item"]["type"] == kind:
                items.append(record["item"])
    return items


def test_turn_after_turn_on_the_rendered_screen_with_prompt_history(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "First answer."}], [{"text": "Second answer."}]])
    term = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    term.wait_for("/help for commands")
    term.wait_prompt()
    term.type("hello there\r")
    term.wait_for("First answer.")
    term.wait_prompt(2)
    term.type("and again\r")
    term.wait_for("Second answer.")
    lines = term.lines()
    # the answers are whole lines of their own, each after the prompt that asked for it
    assert lines.index("> hello there") < lines.index("First answer.") < lines.index("> and again")
    assert lines.index("> and again") < lines.index("Second answer.")
    term.wait_prompt(3)
    term.type("\x1b[A")  # up: the last prompt comes back for editing
    term.wait_for("> and again", count=2)
    term.type("\x1b[A")
    term.wait_for("> hello there", count=2)
    term.type("\x15/exit\r")  # Ctrl-U clears the recalled line
    assert term.finish() == 0
    history = (Path(env["HOOKLOOP_HOME"]) / "chat_history").read_text()
    assert "hello there" in history
    assert "and again" in history
    users = [m["content"][0]["text"] for m in transcript_items(env, "message") if m["role"] == "user"]
    assert users == ["hello there", "and again"]  # one conversation: the second turn follows the first


def test_ctrl_c_cancels_the_turn_its_processes_stopped_and_the_conversation_goes_on(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    started = tmp_path / "started"
    os.mkfifo(started)
    command = f"sleep 1000 & echo $! > {started}; wait"
    model = script(
        project / "model.json",
        [[{"text": "Waiting."}, {"tool": "Bash", "arguments": {"command": command}}], [{"text": "Fresh start."}]],
    )
    term = chat_screen(["chat", "--model", f"scripted:{model}", "--allowedTools", "Bash"], env, project)
    term.wait_prompt()
    term.type("wait forever\r")
    with open(started) as fifo:  # the tool's command is running
        sleeper = int(fifo.read().strip())
    term.wait_for("● Bash")
    term.type("\x03")  # Ctrl-C, through the terminal driver
    term.wait_for("turn cancelled; the conversation goes on")
    assert _gone(sleeper)
    term.wait_prompt(2)
    term.type("start again\r")
    term.wait_for("Fresh start.")
    term.wait_prompt(3)
    term.end_of_input()  # Ctrl-D ends the session
    assert term.finish() == 0
    results = transcript_items(env, "tool_result")
    assert len(results) == 1
    assert results[0]["is_error"]
    assert "cancel" in results[0]["content"]


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        select.select([], [], [], 0.05)
    return False


def test_an_ask_waits_at_the_prompt_approve_runs_it_and_text_refuses_with_a_reason(
    project: Path, env: dict[str, str]
) -> None:
    model = script(
        project / "model.json",
        [
            [{"tool": "Bash", "arguments": {"command": "cat notes.txt"}}],
            [{"text": "Read it."}],
            [{"tool": "Bash", "arguments": {"command": "rm notes.txt"}}],
            [{"text": "Keeping it."}],
        ],
    )
    term = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    term.wait_prompt()
    term.type("read the notes\r")
    term.wait_for("approval needed Bash")
    term.wait_for("/approve · /always (adds Bash(cat:*)) · /deny [reason]")
    term.wait_prompt(1, "approve? >")
    term.type("/approve\r")
    term.wait_for("Read it.")
    term.wait_prompt(2)
    term.type("remove them\r")
    term.wait_for("approval needed Bash", count=2)
    term.wait_prompt(2, "approve? >")
    term.type("no, keep the file\r")
    term.wait_for("Keeping it.")
    term.type("/exit\r")
    assert term.finish() == 0
    assert (project / "notes.txt").read_text() == "hello notes\n"
    results = transcript_items(env, "tool_result")
    assert results[0]["content"].startswith("hello notes")
    assert not results[0]["is_error"]
    assert results[1]["is_error"]
    assert "no, keep the file" in results[1]["content"]


def test_always_adds_the_rule_for_the_rest_of_the_session(project: Path, env: dict[str, str]) -> None:
    model = script(
        project / "model.json",
        [
            [{"tool": "Bash", "arguments": {"command": "cat notes.txt"}}],
            [{"text": "One."}],
            [{"tool": "Bash", "arguments": {"command": "cat notes.txt"}}],
            [{"text": "Two, unasked."}],
        ],
    )
    term = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    term.wait_prompt()
    term.type("read\r")
    term.wait_prompt(1, "approve? >")
    term.type("/always\r")
    term.wait_for("One.")
    term.type("read again\r")
    term.wait_for("Two, unasked.")
    assert term.text().count("approval needed") == 1
    term.type("/exit\r")
    assert term.finish() == 0


def test_slash_hooks_lists_the_configured_hooks_and_whether_they_run(project: Path, env: dict[str, str]) -> None:
    guard = project / "guard.sh"
    guard.write_text("#!/bin/sh\nexit 0\n")
    guard.chmod(0o755)
    (project / ".claude").mkdir()
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(guard)}]}]}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    model = script(project / "model.json", [[{"text": "unused"}]])
    term = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    term.wait_prompt()
    term.type("/hooks\r")
    term.wait_for("not run: project not trusted")
    line = next(x for x in term.lines() if "guard.sh" in x)
    assert "PreToolUse" in line
    assert "Bash" in line
    term.type("/bogus\r")
    term.wait_for("unknown command /bogus; /help lists them")
    term.type("/exit\r")
    assert term.finish() == 0

    trusted = chat_screen(["chat", "--model", f"scripted:{model}", "--trust-project-hooks"], env, project)
    trusted.wait_prompt()
    trusted.type("/hooks\r")
    trusted.wait_for("settings.json · runs)")
    trusted.type("/exit\r")
    assert trusted.finish() == 0


def test_continue_and_resume_go_on_with_the_last_session_in_a_new_process(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "Noted: 42."}], [{"text": "It was 42."}], [{"text": "Third."}]])
    first = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    first.wait_prompt()
    first.type("remember 42\r")
    first.wait_for("Noted: 42.")
    first.type("/session\r")
    first.wait_for("continue it later with: hookloop chat --resume ")
    session_id = first.text().split("continue it later with: hookloop chat --resume ")[1].split()[0]
    first.type("/exit\r")
    assert first.finish() == 0

    again = chat_screen(["chat", "--continue"], env, project)  # the model comes from the saved session too
    again.wait_for(f"continuing session {session_id}")
    again.wait_for("2 items of history")
    again.type("what was it?\r")
    again.wait_for("It was 42.")  # the script plays on where the first process left it
    again.type("/exit\r")
    assert again.finish() == 0

    by_id = chat_screen(["chat", "--resume", session_id], env, project)
    by_id.wait_for("4 items of history")
    by_id.wait_prompt()
    by_id.end_of_input()
    assert by_id.finish() == 0

    bare = subprocess.run(  # flags without a command: a chat, as `claude -c` is
        [*HOOKLOOP, "-c"], input="/session\n", capture_output=True, text=True, env=env, cwd=project, timeout=60
    )
    assert bare.returncode == 0, bare.stderr
    assert f"continuing session {session_id}" in bare.stderr

    printed = subprocess.run(
        [*HOOKLOOP, "-p", "one more", "--continue", "--output-format", "json"],
        capture_output=True, text=True, env=env, cwd=project, timeout=60,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    result = json.loads(printed.stdout)
    assert (result["result"], result["session_id"]) == ("Third.", session_id)
    users = [m["content"][0]["text"] for m in transcript_items(env, "message") if m["role"] == "user"]
    assert users == ["remember 42", "what was it?", "one more"]


def test_continue_refuses_what_it_cannot_continue(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    model = script(project / "model.json", [[{"text": "x"}]])
    base = [*HOOKLOOP, "chat", "--model", f"scripted:{model}"]

    def chat(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], capture_output=True, text=True, env=env, cwd=project, timeout=60)

    nothing = chat("--continue")
    assert nothing.returncode == 2
    assert f"--continue: no earlier session in {project}" in nothing.stderr
    traversal = chat("--resume", "../../etc/passwd")
    assert traversal.returncode == 2
    assert "not a session id" in traversal.stderr
    missing = chat("--resume", "session_nope")
    assert missing.returncode == 2
    assert "no such session" in missing.stderr

    printed = subprocess.run(
        [*HOOKLOOP, "-p", "hi", "--model", f"scripted:{model}"], capture_output=True, text=True, env=env, cwd=project
    )
    assert printed.returncode == 0, printed.stderr
    state = next((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.state.json"))
    data = json.loads(state.read_text())
    data["history"][0]["content"][0]["text"] = "forged"  # an edited session is not authentic any more
    state.write_text(json.dumps(data))
    forged = chat("--continue")
    assert forged.returncode == 2
    assert "unreadable session file(s) skipped" in forged.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    printed = subprocess.run(
        [*HOOKLOOP, "-p", "hi", "--model", f"scripted:{model}", "--output-format", "json"],
        capture_output=True, text=True, env=env, cwd=elsewhere,
    )  # fmt: skip
    other = json.loads(printed.stdout)["session_id"]
    wrong_dir = chat("--resume", other)
    assert wrong_dir.returncode == 2
    assert f"worked in {elsewhere}" in wrong_dir.stderr


def test_two_ctrl_c_at_the_prompt_end_the_session_sigterm_in_a_turn_exits_143(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    model = script(project / "model.json", [[{"text": "x"}]])
    term = chat_screen(["chat", "--model", f"scripted:{model}"], env, project)
    term.wait_prompt()
    term.type("half a line")
    term.wait_for("> half a line")  # as a person would: the text is on the screen, then Ctrl-C
    wait_until_idle(term.proc.pid)
    term.type("\x03")
    term.wait_for("(Ctrl-C again, Ctrl-D or /exit to quit)")
    term.wait_prompt(2)
    assert term.prompt_line() == ">"  # the half line is gone
    wait_until_idle(term.proc.pid)
    term.type("\x03")
    assert term.finish() == 0

    started = tmp_path / "started"
    os.mkfifo(started)
    command = f"echo go > {started}; sleep 1000"
    model = script(project / "model2.json", [[{"tool": "Bash", "arguments": {"command": command}}]])
    term = chat_screen(["chat", "--model", f"scripted:{model}", "--yes"], env, project)
    term.wait_prompt()
    term.type("wait\r")
    with open(started) as fifo:
        fifo.read()
    term.proc.send_signal(signal.SIGTERM)
    term.wait_for("cancelling the turn (SIGTERM)")
    assert term.finish() == 143
    assert list((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.state.json"))


def test_a_piped_chat_reads_one_line_per_turn_and_a_failed_turn_does_not_end_it(
    project: Path, env: dict[str, str]
) -> None:
    model = script(
        project / "model.json",
        [[{"tool": "Bash", "arguments": {"command": "cat notes.txt"}}], [{"text": "Read it."}]],
    )
    lines = "read\n/approve\nthis turn finds the script empty\n/cost\n"
    out = subprocess.run(
        [*HOOKLOOP, "chat", "--model", f"scripted:{model}"],
        input=lines, capture_output=True, text=True, env=env, cwd=project, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Read it." in out.stdout
    assert "the turn failed: ClientError: the script has no more turns" in out.stderr
    assert "3 model requests" in out.stderr  # /cost, after the failure (a request too): the session went on
    assert "cost $0 (the offline scripted model)" in out.stderr


def test_a_call_left_waiting_is_never_run_by_a_continued_session(project: Path, env: dict[str, str]) -> None:
    model = script(
        project / "model.json",
        [[{"tool": "Bash", "arguments": {"command": "rm notes.txt"}}], [{"text": "Fine."}]],
    )
    first = subprocess.run(
        [*HOOKLOOP, "chat", "--model", f"scripted:{model}"],
        input="remove the notes\n", capture_output=True, text=True, env=env, cwd=project, timeout=60,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "approval needed Bash" in first.stderr  # then end of input: the session ends waiting
    again = subprocess.run(
        [*HOOKLOOP, "chat", "--continue", "--yes"],
        input="go on\n", capture_output=True, text=True, env=env, cwd=project, timeout=60,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "note: Bash was waiting for approval when the session ended; it was not run" in again.stderr
    assert "Fine." in again.stdout
    assert (project / "notes.txt").exists()
    state = next((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.state.json"))
    results = [i for i in json.loads(state.read_text())["history"] if i["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True]
    assert "not executed" in results[0]["content"]


def test_mcp_servers_stay_open_for_the_whole_chat(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    server = str(Path(__file__).parents[1] / "tools" / "mcp_caps_server.py")
    starts = tmp_path / "starts.log"  # one line per server process started
    launch = f'echo started >> {starts}; exec "$0" "$@"'
    caps = {"command": "sh", "args": ["-c", launch, sys.executable, server, "stdio", "", str(tmp_path)]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"caps": caps}}))
    add = {"tool": "mcp__caps__add", "arguments": {"a": 2, "b": 3}}
    model = script(project / "model.json", [[add], [{"text": "Five."}], [add], [{"text": "Five again."}]])
    out = subprocess.run(
        [*HOOKLOOP, "chat", "--model", f"scripted:{model}", "--mcp-config", str(config), "--yes"],
        input="add\nadd again\n", capture_output=True, text=True, env=env, cwd=project, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Five." in out.stdout
    assert "Five again." in out.stdout
    assert starts.read_text().splitlines() == ["started"]  # one server for the whole session, not one per turn
    results = [(r["name"], r["content"], r["is_error"]) for r in transcript_items(env, "tool_result")]
    if "no answer to initialize" in out.stderr:  # a loaded machine missed the 5 s initialize: said once
        assert out.stderr.count("MCP server 'caps'") == 1
        assert all(is_error for _, _, is_error in results)
    else:
        assert results == [("mcp__caps__add", "5", False)] * 2
