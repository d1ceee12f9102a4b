"""Every program under examples/ runs offline and does what it says: each in a fresh interpreter and directory
(``docs_runner``), and each check reads what the program really did — files written or left alone, the JSON
lines of the audit log, the checkpoint consumed once — besides its output."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from docs_runner import REPO, Ran, run_python

EXAMPLES = REPO / "examples"


def run_example(
    relative: str, *args: str, tmp_path: Path, cwd: Path | None = None, timeout: float = 45, stdin: str = ""
) -> Ran:
    work = cwd or tmp_path / "work"
    work.mkdir(exist_ok=True)
    return run_python([str(EXAMPLES / relative), *args], cwd=work, root=tmp_path, timeout=timeout, stdin=stdin)


def ok(ran: Ran) -> str:
    assert ran.returncode == 0, ran.describe()
    assert "Traceback" not in ran.stderr, ran.describe()
    return ran.stdout


def test_every_example_is_listed_and_tested() -> None:
    programs = {
        str(p.relative_to(EXAMPLES))
        for p in EXAMPLES.rglob("*.py")
        if "project" not in p.parts and p.name != "notes_server.py"
    }
    listed = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    tested = Path(__file__).read_text(encoding="utf-8")
    for program in programs:
        assert f"examples/{program}" in listed, f"{program} is not in examples/README.md"
        assert f'"{program}"' in tested, f"{program} is run by no test here"
    for named in re.findall(r"python (examples/\S+\.py)", listed):
        assert (REPO / named).is_file(), f"examples/README.md names {named}, which does not exist"


def test_guard(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    out = ok(run_example("guard.py", str(project), tmp_path=tmp_path))
    lines = out.splitlines()
    assert lines[0] == "RAN    ls"
    assert "build" in lines[1]
    for command in ("rm -rf build", 'cd src && "$(printf rm)" -rf ../build'):
        assert f"DENIED {command}" in lines
        assert 'rule "Bash(rm:*)"' in lines[lines.index(f"DENIED {command}") + 1]
    for command in ("sudo ls /root", "git push --force origin main"):
        assert f"DENIED {command}" in lines
        assert "hook 'guard'" in lines[lines.index(f"DENIED {command}") + 1]
    assert (project / "build" / "app.bin").read_text() == "artifact\n"  # nothing was deleted
    assert "build/ still there: True" in lines
    assert lines[-1].startswith("model: ")


def test_audit_log(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    out = ok(run_example("audit_log.py", str(log), tmp_path=tmp_path))
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    summary = [(r["turn"], r["tool"], r["status"]) for r in records]
    assert summary == [
        (1, "Read", "ok"),
        (1, "word_count", "ok"),
        (1, "Bash", "refused"),
        (1, "Telepathy", "refused"),
        (2, "Bash", "ok"),
    ]
    assert len({r["call_id"] for r in records}) == 5
    assert len({r["run_id"] for r in records}) == 1
    assert records[0]["arguments"] == {"file_path": "notes.txt"}
    assert "buy milk" in records[0]["result"]
    assert records[1]["result"] == "4"
    assert "Bash(rm:*)" in records[2]["result"]
    assert "unknown tool" in records[3]["result"]
    assert records[4]["result"].strip().startswith("2")  # wc -l really ran on the two-line file
    assert all(r["seconds"] >= 0 for r in records)
    assert records[2]["seconds"] == 0
    assert "model: Your notes have two lines and four words." in out


def test_audit_log_appends(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    ok(run_example("audit_log.py", str(log), tmp_path=tmp_path))
    ok(run_example("audit_log.py", str(log), tmp_path=tmp_path))
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 10
    assert len({r["run_id"] for r in records}) == 2


def test_approval_service_across_processes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    started = run_example("approval_service.py", "start", str(state), tmp_path=tmp_path)
    assert started.returncode == 3, started.describe()  # paused
    pending = json.loads((state / "pending.json").read_text(encoding="utf-8"))
    assert [(p["tool"], p["arguments"]["channel"]) for p in pending] == [("publish", "stable")]
    assert not (state / "published.txt").exists()  # nothing of the paused batch ran, not even the allowed beta
    assert stat.S_IMODE(os.stat(state / "checkpoint.json").st_mode) == 0o600

    call_id = pending[0]["call_id"]
    bad = run_example("approval_service.py", "decide", str(state), "call_nope", "approve", tmp_path=tmp_path)
    assert bad.returncode == 2
    assert "no pending call" in bad.stderr
    ok(run_example("approval_service.py", "decide", str(state), call_id, "reject", "freeze week", tmp_path=tmp_path))
    out = ok(run_example("approval_service.py", "resume", str(state), tmp_path=tmp_path))
    assert (state / "published.txt").read_text(encoding="utf-8") == "beta 2.0\n"  # the rejected call never ran
    assert "published 2.0 on beta" in out
    assert "freeze week" in out

    again = run_example("approval_service.py", "resume", str(state), tmp_path=tmp_path)
    assert again.returncode == 1, again.describe()
    assert "already resumed" in again.stderr, again.describe()
    assert (state / "published.txt").read_text(encoding="utf-8") == "beta 2.0\n"


def test_approval_service_refuses_a_tampered_checkpoint(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert run_example("approval_service.py", "start", str(state), tmp_path=tmp_path).returncode == 3
    path = state / "checkpoint.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["turn"] = data["turn"] + 1
    path.write_text(json.dumps(data), encoding="utf-8")
    call_id = json.loads((state / "pending.json").read_text(encoding="utf-8"))[0]["call_id"]
    ok(run_example("approval_service.py", "decide", str(state), call_id, "approve", tmp_path=tmp_path))
    resumed = run_example("approval_service.py", "resume", str(state), tmp_path=tmp_path)
    assert resumed.returncode == 1, resumed.describe()
    assert "cannot resume: CheckpointError" in resumed.stderr, resumed.describe()
    assert not (state / "published.txt").exists()


def test_approval_service_demo(tmp_path: Path) -> None:
    out = ok(run_example("approval_service.py", "demo", tmp_path=tmp_path))
    assert "PENDING" in out
    assert "DECIDED" in out
    assert "FINISHED Release report: published 2.0 on beta; published 2.0 on stable" in out


def test_stop_hook_validator(tmp_path: Path) -> None:
    out = ok(run_example("stop_hook_validator.py", tmp_path=tmp_path)).splitlines()
    assert out[:3] == [
        "turn 1 (continuations so far: 0): the answer is not JSON (Expecting value at line 1 column 1)",
        'turn 2 (continuations so far: 1): "priority" must be one of low, medium, high; "tags" must be a list of '
        "strings",
        "turn 3 (continuations so far: 2): valid",
    ]
    assert "accepted after 3 turns: {'title': 'Login crashes on Safari', 'priority': 'high', 'tags': " in out[3]
    told = [line for line in out if line.startswith("the model was told: Your answer was rejected")]
    assert len(told) == 2
    assert out[-1] == "stopped: StopHookLoopError after 3 model requests"  # 1 + max_forced_continuations


def test_mcp(tmp_path: Path) -> None:
    store = tmp_path / "notes.json"
    out = ok(run_example("mcp/agent.py", str(store), tmp_path=tmp_path))
    assert json.loads(store.read_text(encoding="utf-8")) == {"call": "Ada at 5", "groceries": "milk, eggs"}
    assert "server tools: mcp__notes__add_note, mcp__notes__delete_note, mcp__notes__list_notes" in out
    assert "mcp__notes__add_note: saved 'groceries' (1 notes)" in out  # the two writes ran in the model's order
    assert "mcp__notes__add_note: saved 'call' (2 notes)" in out
    assert 'mcp__notes__delete_note: DENIED permission denied (rule "mcp__notes__delete_note")' in out


def test_claude_code_hooks(tmp_path: Path) -> None:
    work = tmp_path / "copy"
    work.mkdir()
    out = ok(run_example("claude_code_hooks/run.py", str(work), tmp_path=tmp_path))
    project = work / "project"
    assert (project / ".claude" / "writes.log").read_text(encoding="utf-8") == "PostToolUse Write notes/todo.md\n"
    assert (project / "notes" / "todo.md").read_text(encoding="utf-8") == "- water the plants\n"
    assert (project / "notes" / "README.md").exists()  # rm -rf notes was blocked by the script
    assert "context from UserPromptSubmit: True" in out
    assert "Blocked by block_destructive.py: 'rm -rf notes' deletes data." in out
    assert 'rule "Read(./.env)"' in out
    assert "model requests: 3" in out
    assert "final answer: SUMMARY: one note added, nothing deleted." in out
    # The scripts are the repository's own files, unmodified and executable (as Claude Code runs them).
    for script in (EXAMPLES / "claude_code_hooks" / "project" / ".claude" / "hooks").iterdir():
        assert os.access(script, os.X_OK), f"{script} is not executable"


def test_durable_run(tmp_path: Path) -> None:
    out = ok(run_example("durable_run.py", tmp_path=tmp_path, timeout=120))
    assert out.splitlines() == ["paused", "finished"]
    assert (tmp_path / "work" / "durable-demo.sqlite").is_file()  # the run lives in the database


def test_hookserver_guard_py_answers_json_lines(tmp_path: Path) -> None:
    requests = [
        {"id": "1", "event": "PreToolUse", "input": {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}},
        {"id": "2", "event": "PreToolUse", "input": {"tool_name": "Bash", "tool_input": {"command": "ls"}}},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    out = ok(run_example("hookserver/guard.py", tmp_path=tmp_path, stdin=stdin))
    first, second = (json.loads(line) for line in out.splitlines())
    decision = first["stdout"]["hookSpecificOutput"]
    assert first["id"] == "1"
    assert decision["permissionDecision"] == "deny"
    assert second == {"id": "2", "exit_code": 0, "stdout": "", "stderr": ""}
