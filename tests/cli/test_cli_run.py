"""`hookloop run` / `resume` as a person or a script uses them: real subprocesses, a pseudo-terminal for the
interactive approval and Ctrl-C paths. Offline: the model is a scripted file."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

import pytest
from screen_helpers import HOOKLOOP, Screen, script


def hookloop(*args: str, env: dict[str, str], cwd: Path, stdin: str | None = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=60)


def bash_then_done(project: Path, command: str = "cat notes.txt") -> Path:
    return script(
        project / "model.json",
        [[{"text": "Reading."}, {"tool": "Bash", "arguments": {"command": command}}], [{"text": "All done."}]],
    )


def test_a_non_interactive_ask_pauses_writes_a_checkpoint_and_resume_continues_in_a_new_process(
    project: Path, env: dict[str, str]
) -> None:
    model = bash_then_done(project)
    first = hookloop(
        "run", "read the notes", "--model", f"scripted:{model}", "--cwd", str(project), env=env, cwd=project
    )
    assert first.returncode == 3, first.stderr
    assert "paused" in first.stderr
    command = next(line.strip() for line in first.stderr.splitlines() if line.strip().startswith("hookloop resume"))
    checkpoint = command.split()[2]
    assert Path(checkpoint).is_file()
    second = hookloop("resume", checkpoint, "--yes", env=env, cwd=project)
    assert second.returncode == 0, second.stderr
    assert "All done." in second.stdout
    transcript = Path(second.stderr.split("transcript ")[-1].strip())
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    results = [x["item"] for x in lines if x["type"] == "item" and x["item"]["type"] == "tool_result"]
    assert results[0]["content"].startswith("hello notes")


def test_json_output_and_deny(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = hookloop(
        "run",
        "read",
        "--model",
        f"scripted:{model}",
        "--cwd",
        str(project),
        "--output-format",
        "json",
        "--deny",
        env=env,
        cwd=project,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["type"] == "result"
    assert result["status"] == "finished"
    assert result["text"] == "All done."
    lines = [json.loads(x) for x in Path(result["transcript_path"]).read_text().splitlines()]
    denied = [x["item"] for x in lines if x["type"] == "item" and x["item"]["type"] == "tool_result"]
    assert denied[0]["is_error"]
    assert "denied by --deny" in denied[0]["content"]


def test_stream_json_emits_one_documented_event_per_line(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = hookloop(
        "run", "read", "--model", f"scripted:{model}", "--cwd", str(project), "--output-format", "stream-json", "--yes",
        env=env, cwd=project,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[:2] == ["system", "run_started"]  # Claude Code's init message first
    assert types[-1] == "result"
    assert {"text_delta", "tool_started", "tool_ended", "item", "hook", "run_ended"} <= set(types)
    approval = next(e for e in events if e["type"] == "hook")
    assert (approval["event"], approval["hook"], approval["decision"]) == ("permission_request", "--yes", "Approve")


def test_a_paused_json_run_reports_the_pending_calls_and_the_resume_command(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    out = hookloop(
        "run",
        "read",
        "--model",
        f"scripted:{model}",
        "--cwd",
        str(project),
        "--output-format",
        "json",
        env=env,
        cwd=project,
    )
    assert out.returncode == 3
    result = json.loads(out.stdout)
    assert result["status"] == "paused"
    assert result["pending"][0]["tool"] == "Bash"
    assert result["pending"][0]["arguments"] == {"command": "cat notes.txt"}
    assert result["resume_command"].startswith("hookloop resume ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "x", "--bogus"], "No such option: --bogus"),
        (["run", "x"], "no model: pass --model"),
        (["run", "x", "--model", "nope:x"], "unknown model"),
        (["run", "x", "--model", "scripted:/missing.json"], "/missing.json"),
        (["run", "x", "--model", "scripted:m.json", "--output-format", "xml"], "--output-format 'xml'"),
        (["run", "x", "--model", "scripted:m.json", "--permission-mode", "yolo"], "--permission-mode 'yolo'"),
        (["run", "x", "--model", "scripted:m.json", "--yes", "--deny"], "cannot be used together"),
        (["run", "x", "--model", "scripted:m.json", "--settings", "/missing/settings.json"], "no such settings file"),
        (["run", "x", "--model", "scripted:m.json", "--cwd", "/does/not/exist"], "not a directory"),
        (["resume", "/missing.checkpoint.json"], "cannot read checkpoint"),
        (["resume", "garbage.json"], "checkpoint is not valid JSON"),
    ],
)
def test_usage_errors_are_one_clear_line_and_exit_code_2(
    project: Path, env: dict[str, str], args: list[str], message: str
) -> None:
    script(project / "m.json", [[{"text": "hi"}]])
    (project / "garbage.json").write_text("{not json")
    out = hookloop(*args, env=env, cwd=project)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert message in lines[0]
    assert "Traceback" not in out.stderr


def test_bad_settings_json_names_file_line_and_column(project: Path, env: dict[str, str]) -> None:
    script(project / "m.json", [[{"text": "hi"}]])
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text('{"permissions": {"allow": [}}')
    out = hookloop("run", "x", "--model", "scripted:m.json", env=env, cwd=project)
    assert out.returncode == 2
    assert ".hookloop/settings.json:1:" in out.stderr
    assert "invalid JSON" in out.stderr


def test_permission_rules_from_settings_apply(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project, "rm -rf notes.txt")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    out = hookloop(
        "run", "clean", "--model", f"scripted:{model}", "--output-format", "json", "--yes", env=env, cwd=project
    )
    assert out.returncode == 0, out.stderr
    assert (project / "notes.txt").exists()


def terminal(args: list[str], env: dict[str, str], cwd: Path) -> Screen:
    """The CLI in a pseudo-terminal as wide as the tests' COLUMNS (no line of it wraps)."""
    return Screen(args, env, cwd, columns=int(env["COLUMNS"]))


def test_interactive_approval_in_a_terminal(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    term = terminal(["run", "read", "--model", f"scripted:{model}"], env, project)
    term.wait_for("allow once")
    assert "asked by mode" in term.text()
    term.type("y\n")
    term.wait_for("All done.")
    assert term.finish() == 0


def test_interactive_deny_with_a_reason(project: Path, env: dict[str, str]) -> None:
    model = bash_then_done(project)
    term = terminal(["run", "read", "--model", f"scripted:{model}"], env, project)
    term.wait_for("allow once")
    term.type("n\n")
    term.wait_for("reason")
    term.type("not now\n")
    term.wait_for("All done.")
    assert term.finish() == 0
    transcript = next((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.jsonl"))
    assert "not now" in transcript.read_text()


def test_ctrl_c_cancels_cleanly_kills_the_tool_and_saves_a_checkpoint(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    fifo = tmp_path / "sleeper-started"
    os.mkfifo(fifo)
    model = bash_then_done(project, f"sleep 1000 & echo $! > {fifo}; wait")
    term = terminal(["run", "wait", "--model", f"scripted:{model}", "--yes"], env, project)
    with open(fifo) as started:  # blocks until the tool's command is running
        sleeper = int(started.read().strip())
    term.interrupt()
    code = term.finish()
    assert code == 130, term.text()
    assert "cancelled" in term.text()
    checkpoints = list((Path(env["HOOKLOOP_HOME"]) / "checkpoints").glob("*.checkpoint.json"))
    assert len(checkpoints) == 1
    saved = json.loads(checkpoints[0].read_text())
    assert saved["options"]["hookloop_cli"] == 2
    results = [i for i in saved["history"] if i["type"] == "tool_result"]
    assert "cancelled" in results[0]["content"]
    assert gone(sleeper), term.text()


def gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (dead, or a zombie nobody reaped yet); polls for up to 4 s."""
    for _ in range(200):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        select.select([], [], [], 0.02)
    return False


def test_the_demo_asks_for_the_approval_in_a_terminal(tmp_path: Path, env: dict[str, str]) -> None:
    term = terminal(["demo"], env, tmp_path)
    term.wait_for("allow once")
    assert "run paused" in term.text()
    term.type("y\n")
    term.wait_for("run summary")
    assert term.finish() == 0
    assert "notes.tmp removed: True" in term.text()


def test_a_second_ctrl_c_quits_at_once_and_takes_the_hook_processes_along(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    fifo = tmp_path / "hook-started"
    os.mkfifo(fifo)
    done = tmp_path / "hook-finished"
    slow_end = project / "slow_end.sh"
    slow_end.write_text(f"#!/bin/bash\necho $$ > {fifo}\nsleep 30\ntouch {done}\n")
    slow_end.chmod(0o755)
    (project / ".hookloop").mkdir()
    hooks = {"SessionEnd": [{"hooks": [{"type": "command", "command": str(slow_end), "timeout": 30}]}]}
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    model = script(project / "model.json", [[{"tool": "Bash", "arguments": {"command": "sleep 1000"}}]])
    term = terminal(["run", "wait", "--model", f"scripted:{model}", "--yes", "--trust-project-hooks"], env, project)
    term.wait_for("Bash")
    term.interrupt()  # first Ctrl-C: cancel; the run ends and SessionEnd hooks run (this one takes 30 s)
    with open(fifo) as started:  # blocks until the hook is running
        hook_pid = int(started.read().strip())
    term.interrupt()  # second Ctrl-C: quit now
    assert term.finish() == 130
    assert gone(hook_pid)
    assert not done.exists()


def test_a_running_hook_shows_a_spinner_with_its_name_and_stream_json_reports_it(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    release = tmp_path / "release"
    os.mkfifo(release)
    slow = project / "slow_guard.sh"
    slow.write_text(f"#!/bin/bash\ncat > /dev/null\nread line < {release}\nexit 0\n")
    slow.chmod(0o755)
    (project / ".hookloop").mkdir()
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(slow)}]}]}
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    model = bash_then_done(project)
    term = terminal(["run", "read", "--model", f"scripted:{model}", "--yes", "--trust-project-hooks"], env, project)
    term.wait_for("running slow_guard.sh")  # shown while the hook is still blocked on the FIFO
    with open(release, "w") as gate:
        gate.write("go\n")
    term.wait_for("All done.")
    assert term.finish() == 0

    # the same run as stream-json: hook_started precedes the hook's decision
    args = ["run", "read", "--model", f"scripted:{bash_then_done(project)}", "--yes", "--trust-project-hooks"]
    proc = subprocess.Popen(
        [*HOOKLOOP, *args, "--output-format", "stream-json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=project,
    )
    with open(release, "w") as gate:  # blocks until the hook's `read` opens the FIFO
        gate.write("go\n")
    out, _ = proc.communicate(timeout=60)
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types.index("hook_started") < types.index("hook")


def test_the_model_can_come_from_a_settings_file(project: Path, env: dict[str, str]) -> None:
    model = script(project / "model.json", [[{"text": "configured"}]])
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"model": f"scripted:{model}"}))
    out = hookloop("run", "hi", "--output-format", "json", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["text"] == "configured"


@pytest.mark.parametrize("output", ["text", "json"])
def test_sigterm_is_handled_like_ctrl_c_checkpoint_children_killed_exit_143(
    project: Path, env: dict[str, str], tmp_path: Path, output: str
) -> None:
    fifo = tmp_path / "sleeper-started"
    os.mkfifo(fifo)
    model = bash_then_done(project, f"sleep 1000 & echo $! > {fifo}; wait")
    proc = subprocess.Popen(
        [*HOOKLOOP, "run", "wait", "--model", f"scripted:{model}", "--yes", "--output-format", output],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=project,
    )
    with open(fifo) as started:  # blocks until the tool's command is running
        sleeper = int(started.read().strip())
    proc.send_signal(signal.SIGTERM)  # to the CLI alone, as a service manager or `kill` would
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert gone(sleeper)
    checkpoints = list((Path(env["HOOKLOOP_HOME"]) / "checkpoints").glob("*.checkpoint.json"))
    assert len(checkpoints) == 1
    saved = json.loads(checkpoints[0].read_text())
    assert saved["reason"] == "cancelled by SIGTERM"
    results = [i for i in saved["history"] if i["type"] == "tool_result"]
    assert "cancelled" in results[0]["content"]
    transcript = next((Path(env["HOOKLOOP_HOME"]) / "sessions").glob("*.jsonl"))
    assert "sleep 1000" in transcript.read_text()
    if output == "json":
        result = json.loads(out.splitlines()[-1])
        assert result["status"] == "cancelled"
        assert result["checkpoint_path"] == str(checkpoints[0])
    else:
        assert "cancelled by SIGTERM" in err


def test_sigkill_of_hookloop_run_takes_the_tool_processes_along_escapees_included(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    fifo, escaped = tmp_path / "started", tmp_path / "escaped"
    os.mkfifo(fifo)
    command = (
        f"setsid sh -c 'echo $$ > {escaped}; exec sleep 1000' >/dev/null 2>&1 &\n"
        f"while [ ! -s {escaped} ]; do sleep 0.01; done\n"
        f"sleep 1000 & echo $$ $! > {fifo}; wait"
    )
    model = bash_then_done(project, command)
    proc = subprocess.Popen(
        [*HOOKLOOP, "run", "wait", "--model", f"scripted:{model}", "--yes", "--output-format", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=project,
    )
    with open(fifo) as started:  # blocks until the tool's command is running
        shell, sleeper = (int(word) for word in started.read().split())
    proc.kill()  # SIGKILL: no handler, no cleanup of its own runs
    assert proc.wait(timeout=30) == -signal.SIGKILL
    for pid in (shell, sleeper, int(escaped.read_text())):
        assert gone(pid), f"process {pid} outlived the SIGKILLed CLI"
