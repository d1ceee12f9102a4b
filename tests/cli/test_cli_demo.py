"""`hookloop demo` tells the truth: what the model says follows the person's answer, every call that did not
run is shown, each hook decision is counted once, and the temporary project is gone afterwards."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from screen_helpers import Screen

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


def project_of(text: str) -> Path:
    match = re.search(r"an offline agent session in (\S+)", text)
    assert match, text
    return Path(match.group(1))


def row(lines: list[str], name: str) -> str:
    [found] = [line for line in lines if line.startswith(f"│ {name} ")]
    return found.split("│")[2].strip()


def test_answering_no_keeps_the_file_and_the_model_says_so(tmp_path: Path, env: dict[str, str]) -> None:
    screen = Screen(["demo"], env, tmp_path)
    screen.wait_for("allow once")
    screen.type("n\n")
    screen.wait_for("reason (optional)")
    screen.type("not today\n")
    assert screen.finish() == 0, screen.text()
    lines = screen.lines()
    assert '✗ Bash {"command": "rm notes.tmp"} not run: denied by the user: not today' in lines
    assert any(line.startswith('✗ Bash {"command": "rm -rf build"} not run') for line in lines)
    assert "- kept the scratch file notes.tmp (you declined its removal)" in lines
    assert not any("removed the scratch file" in line or "I removed notes.tmp" in line for line in lines)
    assert row(lines, "files") == "build/ kept: True · notes.tmp removed: False"
    assert row(lines, "hook decisions") == "1 Block, 1 Continue, 1 Deny"
    assert not project_of(screen.text()).exists()


def test_with_yes_the_file_goes_and_each_hook_decision_is_counted_once(tmp_path: Path, env: dict[str, str]) -> None:
    out = subprocess.run([*HOOKLOOP, "demo", "--yes"], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert "- removed the scratch file notes.tmp (approved)" in lines
    assert row(lines, "hook decisions") == "1 Block, 1 Continue, 1 Deny"
    assert row(lines, "tool calls") == "4 run (0 with an error result)"
    assert any(line.startswith('✗ Bash {"command": "rm -rf build"} not run') for line in lines)
    assert not project_of(out.stdout).exists()


def test_keep_keeps_the_project(tmp_path: Path, env: dict[str, str]) -> None:
    out = subprocess.run([*HOOKLOOP, "demo", "--yes", "--keep"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    root = project_of(out.stdout)
    assert (root / ".hookloop" / "transcript.jsonl").is_file()
    assert (root / "CHANGES.md").read_text() == "# Changes\n- removed notes.tmp\n"


def test_ctrl_c_at_the_prompt_still_removes_the_project(tmp_path: Path, env: dict[str, str]) -> None:
    screen = Screen(["demo"], env, tmp_path)
    screen.wait_for("allow once")
    root = project_of(screen.text())
    assert root.is_dir()
    screen.interrupt()
    assert screen.finish() == 130, screen.text()
    assert not root.exists()
    assert "Traceback" not in screen.text()
