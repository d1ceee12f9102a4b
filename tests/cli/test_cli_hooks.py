"""`hookloop hooks list | validate | test | trust | untrust | replay` as subprocesses on real hook scripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]

GUARD = """#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
command = data["tool_input"].get("command", "")
print("checked", command, file=sys.stderr)
if "rm -rf" in command:
    sys.exit(2)
if command.startswith("ls"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                      "updatedInput": {"command": command + " -a"}}}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    guard = root / "guard.py"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"{sys.executable} {guard}"}]}]
        },
        "permissions": {"ask": ["Bash(git push:*)"]},
    }
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    return root


def hookloop(*args: str, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=60)


def test_list_shows_source_matcher_and_trust_and_trust_untrust_change_it(project: Path, env: dict[str, str]) -> None:
    listed = json.loads(hookloop("hooks", "list", "--format", "json", env=env, cwd=project).stdout)
    hook = listed["hooks"][0]
    assert (hook["event"], hook["matcher"], hook["type"], hook["layer"]) == ("PreToolUse", "Bash", "command", "Project")
    assert hook["source"] == str(project / ".claude" / "settings.json")
    assert hook["trust"].startswith("untrusted")
    trusted = hookloop("hooks", "trust", env=env, cwd=project)
    assert trusted.returncode == 0
    assert "trusted" in trusted.stdout
    assert (
        json.loads(hookloop("hooks", "list", "--format", "json", env=env, cwd=project).stdout)["hooks"][0]["trust"]
        == "trusted"
    )
    # a changed configuration needs trust again
    settings = project / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("Bash", "Bash|Write", 1))
    assert json.loads(hookloop("hooks", "list", "--format", "json", env=env, cwd=project).stdout)["hooks"][0][
        "trust"
    ].startswith("untrusted")
    hookloop("hooks", "trust", env=env, cwd=project)
    assert hookloop("hooks", "untrust", env=env, cwd=project).returncode == 0
    assert json.loads(hookloop("hooks", "list", "--format", "json", env=env, cwd=project).stdout)["hooks"][0][
        "trust"
    ].startswith("untrusted")


def test_validate_reports_every_problem_with_its_json_path_and_exits_1(project: Path, env: dict[str, str]) -> None:
    assert hookloop("hooks", "validate", env=env, cwd=project).returncode == 0
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"PreToolUze": [], "Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]},
                "permissions": {"allow": [42]},
            }
        )
    )
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    assert "hooks.PreToolUze: unknown event name 'PreToolUze'" in out.stdout
    assert "hooks.Stop[0].hooks[0].timeout" in out.stdout
    assert "permissions.allow[0]" in out.stdout


def test_hooks_test_runs_the_real_script_and_prints_a_documented_json_report(
    project: Path, env: dict[str, str]
) -> None:
    sample = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    out = hookloop(
        "hooks",
        "test",
        "PreToolUse",
        "--input",
        "-",
        "--format",
        "json",
        "--trust-project-hooks",
        env=env,
        cwd=project,
        stdin=sample,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    run = report["hooks"][0]
    assert (run["exit_code"], run["outcome"], run["decision"]["decision"]) == (2, "ok", "deny")
    assert run["stderr"] == "checked rm -rf /\n"
    assert report["merged"]["decision"] == "deny"

    (project / "ls.json").write_text(json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}}))
    out = hookloop("hooks", "test", "PreToolUse", "--input", "ls.json", "--trust-project-hooks", env=env, cwd=project)
    assert "merged decision: allow" in out.stdout
    assert 'updated input: {"command": "ls -a"}' in out.stdout
    # untrusted project hooks do not run, and the command says so
    out = hookloop("hooks", "test", "PreToolUse", "--input", "ls.json", env=env, cwd=project)
    assert "not trusted" in out.stdout
    assert "no hook matches" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hooks", "test", "PreToolUze", "--input", "-"], "PreToolUze"),
        (["hooks", "test", "PreToolUse", "--input", "/missing.json"], "/missing.json"),
        (["hooks", "test", "PreToolUse", "--input", "-"], "invalid JSON"),
        (["hooks", "replay", "/missing.jsonl"], "cannot read transcript"),
        (["hooks", "frobnicate"], "No such command"),
    ],
)
def test_hooks_usage_errors_are_one_line_exit_2(
    project: Path, env: dict[str, str], args: list[str], message: str
) -> None:
    out = hookloop(*args, env=env, cwd=project, stdin="{nope")
    assert out.returncode == 2, out.stdout + out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert message in lines[0]


def _use(call_id: str, command: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}


CLAUDE_TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "tidy up and push"}, "sessionId": "s1"},
    {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Sure."}, _use("t1", "ls")]},
    },
    {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
    },
    {
        "type": "assistant",
        "message": {"role": "assistant", "content": [_use("t2", "rm -rf build"), _use("t3", "git push origin main")]},
    },
]


def test_replay_of_a_claude_code_transcript_reports_allowed_denied_asked_rewritten_without_running_tools(
    project: Path, env: dict[str, str]
) -> None:
    (project / "build").mkdir()
    transcript = project / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in CLAUDE_TRANSCRIPT) + "\n")
    out = hookloop(
        "hooks", "replay", str(transcript), "--format", "json", "--trust-project-hooks", env=env, cwd=project
    )
    assert out.returncode == 0, out.stderr
    entries = json.loads(out.stdout)["entries"]
    summary = [(e["kind"], e["tool"], e["verdict"], e["rewritten"]) for e in entries]
    assert summary == [
        ("prompt", None, "passed", False),
        ("tool_call", "Bash", "allowed", True),
        ("tool_call", "Bash", "denied", False),
        ("tool_call", "Bash", "asked", False),
    ]
    assert entries[1]["updated_input"] == {"command": "ls -a"}
    assert "Bash(git push:*)" in entries[3]["decided_by"]
    assert (project / "build").is_dir()  # nothing was executed

    table = hookloop("hooks", "replay", str(transcript), "--trust-project-hooks", env=env, cwd=project)
    assert "1 allowed, 1 asked, 1 denied, 1 passed" in table.stdout


def test_replay_reads_hookloops_own_transcripts(project: Path, env: dict[str, str]) -> None:
    model = project / "model.json"
    model.write_text(
        json.dumps(
            {"turns": [{"blocks": [{"tool": "Bash", "arguments": {"command": "ls"}}]}, {"blocks": [{"text": "ok"}]}]}
        )
    )
    run = hookloop(
        "run",
        "look",
        "--model",
        f"scripted:{model}",
        "--output-format",
        "json",
        "--yes",
        "--trust-project-hooks",
        env=env,
        cwd=project,
    )
    assert run.returncode == 0, run.stderr
    transcript = json.loads(run.stdout)["transcript_path"]
    out = hookloop("hooks", "replay", transcript, "--format", "json", "--trust-project-hooks", env=env, cwd=project)
    entries = json.loads(out.stdout)["entries"]
    assert [(e["kind"], e["verdict"]) for e in entries] == [("prompt", "passed"), ("tool_call", "allowed")]
