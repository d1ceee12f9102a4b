"""`hookloop hooks test` on a Cline guard: the script sees Cline's tool names (issue 12, item 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]

CLINE_GUARD = """#!/bin/bash
input=$(cat)
tool=$(echo "$input" | jq -r '.preToolUse.toolName')
echo "$tool $(echo "$input" | jq -c '.preToolUse.parameters')" >&2
case "$tool" in
  execute_command)
    cmd=$(echo "$input" | jq -r '.preToolUse.parameters.command')
    [[ "$cmd" == *"rm -rf"* ]] && { echo '{"cancel": true, "errorMessage": "rm -rf is not allowed"}'; exit 0; } ;;
  write_to_file)
    path=$(echo "$input" | jq -r '.preToolUse.parameters.path')
    [[ "$path" == *.env ]] && { echo '{"cancel": true, "errorMessage": "no .env writes"}'; exit 0; } ;;
esac
echo '{}'
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    folder = root / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    guard = folder / "PreToolUse"
    guard.write_text(CLINE_GUARD)
    guard.chmod(0o755)
    return root.resolve()


def hooks_test(sample: dict[str, object], *, env: dict[str, str], cwd: Path) -> dict[str, object]:
    out = subprocess.run(
        [*HOOKLOOP, "hooks", "test", "PreToolUse", "--input", "-", "--format", "json", "--trust-project-hooks"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        input=json.dumps(sample),
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, object] = json.loads(out.stdout)
    return report


@pytest.mark.parametrize(
    ("sample", "seen", "stop_reason"),
    [
        ({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}, 'execute_command {"command":"rm -rf /"}',
         "rm -rf is not allowed"),
        ({"tool_name": "Write", "tool_input": {"file_path": "app/.env", "content": "K=1"}},
         'write_to_file {"path":"app/.env","content":"K=1"}', "no .env writes"),
        ({"tool_name": "Bash", "tool_input": {"command": "ls"}}, 'execute_command {"command":"ls"}', None),
    ],
)  # fmt: skip
def test_hooks_test_gives_a_cline_guard_clines_tool_names(
    project: Path, env: dict[str, str], sample: dict[str, object], seen: str, stop_reason: str | None
) -> None:
    report = hooks_test(sample, env=env, cwd=project)
    (run,) = report["hooks"]  # type: ignore[misc]
    assert run["stderr"] == seen + "\n"
    merged = report["merged"]
    assert isinstance(merged, dict)
    assert merged["stop_reason"] == stop_reason
    assert merged["decision"] == ("stop" if stop_reason else "continue")
