"""Broken settings are errors everywhere (`hooks list`, `hooks test`, `run`), `hooks validate` catches the
common mistakes (misspelt keys, missing or non-executable hook scripts, keys set twice), each problem is said
once, and `hooks test` says plainly when a hook could not run. Real subprocesses on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


def hookloop(*args: str, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root


def settings(project: Path, data: object) -> Path:
    path = project / ".claude" / "settings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def command_hook(event: str, command: str, matcher: str | None = None) -> dict[str, object]:
    group: dict[str, object] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {event: [group]}}


PAYLOAD = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}})
TRAILING_COMMA = '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],}}'


@pytest.mark.parametrize(
    "args",
    [
        ["hooks", "list"],
        ["hooks", "list", "--format", "json"],
        ["hooks", "test", "PreToolUse", "--input", "-"],
        ["hooks", "test", "PreToolUse", "--input", "-", "--format", "json"],
    ],
)
@pytest.mark.parametrize(
    "broken",
    [TRAILING_COMMA, {"hooks": {"PreToolUze": []}}, {"permissions": {"alow": ["Bash"]}}],
    ids=["trailing-comma", "unknown-event", "misspelt-permissions-key"],
)
def test_hooks_list_and_test_refuse_broken_settings_and_point_at_validate(
    project: Path, env: dict[str, str], args: list[str], broken: object
) -> None:
    path = settings(project, broken)
    out = hookloop(*args, env=env, cwd=project, stdin=PAYLOAD)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "no hooks configured" not in out.stdout
    assert "merged decision" not in out.stdout
    assert str(path) in out.stderr
    assert "hookloop hooks validate" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_misspelt_permissions_key_stops_a_run_before_it_starts(project: Path, env: dict[str, str]) -> None:
    settings(project, {"permissions": {"dney": ["Bash(rm:*)"]}})
    (project / "m.json").write_text(json.dumps({"turns": [{"blocks": [{"text": "hi"}]}]}))
    out = hookloop("run", "x", "--model", "scripted:m.json", env=env, cwd=project)
    assert out.returncode == 2
    [line] = out.stderr.splitlines()
    assert "permissions.dney: unknown key 'dney'; did you mean 'deny'?" in line


def test_validate_catches_misspelt_and_unknown_permission_keys(project: Path, env: dict[str, str]) -> None:
    settings(project, {"permissions": {"alow": ["Bash(ls:*)"], "deny": ["Read(.env)"], "frobnicate": True}})
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    assert "permissions.alow: unknown key 'alow'; did you mean 'allow'?" in out.stdout
    assert "warning: " in out.stdout
    assert "permissions.frobnicate: unknown key; ignored" in out.stdout


def write_script(path: Path, *, executable: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\ncat > /dev/null\n")
    path.chmod(0o755 if executable else 0o644)
    return path


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("./hooks/missing.sh", "./hooks/missing.sh: no such file"),
        ("$CLAUDE_PROJECT_DIR/.claude/hooks/gone.py", ".claude/hooks/gone.py: no such file"),
        ('"${CLAUDE_PROJECT_DIR}/.claude/hooks/gone.py" --flag', ".claude/hooks/gone.py: no such file"),
        ("./hooks/plain.sh", "./hooks/plain.sh: not executable (chmod +x"),
        ("python3 hooks/absent.py", "hooks/absent.py: no such file"),
        ("no-such-program-hookloop-test --x", "no-such-program-hookloop-test: command not found on PATH"),
        ("./hooks", "./hooks: is a directory"),
    ],
)
def test_validate_reports_a_hook_whose_program_or_script_cannot_run(
    project: Path, env: dict[str, str], command: str, message: str
) -> None:
    write_script(project / "hooks" / "plain.sh", executable=False)
    path = settings(project, command_hook("PreToolUse", command, "Bash"))
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1, out.stdout
    [line] = [line for line in out.stdout.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {path}: hooks.PreToolUse[0].hooks[0].command: ")
    assert message in line


@pytest.mark.parametrize(
    "command",
    [
        "./hooks/ok.sh",
        "$CLAUDE_PROJECT_DIR/hooks/ok.sh",
        "python3 hooks/ok.sh",
        "python3 -c 'print(1)'",
        "echo hi && ./anything-else",
        "$SOME_VARIABLE/decided-at-run-time.sh",
        "cat | jq .",
    ],
)
def test_validate_accepts_hook_commands_that_can_run(project: Path, env: dict[str, str], command: str) -> None:
    write_script(project / "hooks" / "ok.sh")
    settings(project, command_hook("PreToolUse", command, "Bash"))
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert "command:" not in out.stdout, out.stdout
    if "jq" not in command:  # jq may be missing on the machine; only the first program is judged anyway
        assert out.returncode == 0, out.stdout


def test_validate_reports_a_json_error_once(project: Path, env: dict[str, str]) -> None:
    settings(project, TRAILING_COMMA)
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    errors = [line for line in out.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out.stdout
    assert "invalid JSON" in errors[0]
    assert "1 error(s)" in out.stdout


def test_validate_reports_a_key_set_twice(project: Path, env: dict[str, str]) -> None:
    write_script(project / "hooks" / "ok.sh")
    hook = '[{"hooks": [{"type": "command", "command": "./hooks/ok.sh"}]}]'
    settings(project, f'{{"hooks": {{"PreToolUse": {hook}, "PreToolUse": {hook}}}}}')
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    assert "key 'PreToolUse' appears twice in one object" in out.stdout


def test_a_settings_file_read_as_two_layers_reports_each_problem_once(project: Path, env: dict[str, str]) -> None:
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"permissions": {"alow": []}}))
    env = {**env, "HOOKLOOP_HOME": str(project / ".hookloop")}  # the project's .hookloop is the hookloop home
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    assert out.stdout.count("unknown key 'alow'") == 1, out.stdout


def test_hooks_test_says_plainly_that_a_hook_could_not_run(project: Path, env: dict[str, str]) -> None:
    settings(project, command_hook("PreToolUse", "./hooks/missing.sh", "Bash"))
    out = hookloop("hooks", "test", "PreToolUse", "--input", "-", "--trust-project-hooks", env=env, cwd=project,
                   stdin=PAYLOAD)  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "→ could not run (not_found)" in out.stdout
    assert "1 hook(s) could not run, crashed or timed out" in out.stdout
    as_json = hookloop("hooks", "test", "PreToolUse", "--input", "-", "--trust-project-hooks", "--format", "json",
                       env=env, cwd=project, stdin=PAYLOAD)  # fmt: skip
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["hooks"][0]["outcome"] == "not_found"


def test_a_run_says_each_settings_problem_once(project: Path, env: dict[str, str]) -> None:
    write_script(project / "hooks" / "ok.sh")
    data = {"hooks": {"PreToolUze": [], **command_hook("Stop", "./hooks/ok.sh")["hooks"]}}  # type: ignore[dict-item]
    settings(project, data)
    (project / "m.json").write_text(json.dumps({"turns": [{"blocks": [{"text": "hi"}]}]}))
    out = hookloop("run", "x", "--model", "scripted:m.json", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("unknown event name 'PreToolUze'") == 1, out.stderr
    assert out.stderr.count("not trusted") == 1, out.stderr


def test_a_hook_that_cannot_run_is_reported_once_per_firing(project: Path, env: dict[str, str]) -> None:
    settings(project, command_hook("Stop", "./hooks/missing.sh"))
    (project / "m.json").write_text(json.dumps({"turns": [{"blocks": [{"text": "hi"}]}]}))
    out = hookloop("run", "x", "--model", "scripted:m.json", "--trust-project-hooks", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("not found") == 1, out.stderr  # the script's own stderr line, once
    assert out.stderr.count("could not run (exit 127)") == 1, out.stderr


def test_validate_reports_a_misspelt_section_and_warns_about_a_model_run_cannot_use(
    project: Path, env: dict[str, str]
) -> None:
    settings(project, {"hoks": {"Stop": []}, "model": "gemini-2.5-pro", "theme": "dark"})
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1
    assert "hoks: unknown setting; did you mean 'hooks'?" in out.stdout
    assert "warning: " in out.stdout
    assert "model: unknown model 'gemini-2.5-pro'" in out.stdout
    assert "theme" not in out.stdout  # a Claude Code setting hookloop does not read is left alone
    settings(project, {"model": "sonnet"})
    ok = hookloop("hooks", "validate", env=env, cwd=project)
    assert ok.returncode == 0, ok.stdout
    assert "model" not in ok.stdout


def test_validate_reports_an_if_condition_that_is_not_a_permission_rule(project: Path, env: dict[str, str]) -> None:
    write_script(project / "hooks" / "ok.sh")
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./hooks/ok.sh", "if": "Bash(git push"}]}
    settings(project, {"hooks": {"PreToolUse": [group]}})
    out = hookloop("hooks", "validate", env=env, cwd=project)
    assert out.returncode == 1, out.stdout
    assert "hooks.PreToolUse[0].hooks[0].if: " in out.stdout
    assert "the hook would run on every call" in out.stdout
