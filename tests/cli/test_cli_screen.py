"""What a person sees in a terminal: each test runs the CLI in a real pseudo-terminal and reads the screen as
rendered by a terminal emulator (pyte), after every ``\\r`` and erase-line, not the byte stream."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from screen_helpers import HeldModel, Screen


def script(project: Path, turns: list[list[dict[str, object]]]) -> str:
    path = project / "model.json"
    path.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return f"scripted:{path}"


def stop_hook(project: Path) -> None:
    """A Stop hook (a real script that runs a moment): its spinner starts right after the model's last word."""
    hook = project / "stop.sh"
    hook.write_text("#!/bin/sh\ncat > /dev/null\necho checked >&2\n")
    hook.chmod(0o755)
    (project / ".hookloop").mkdir()
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    (project / ".hookloop" / "settings.json").write_text(json.dumps(settings))


def test_the_demo_summary_keeps_its_last_bullet_on_screen(tmp_path: Path, env: dict[str, str]) -> None:
    screen = Screen(["demo", "--yes"], env, tmp_path)
    assert screen.finish() == 0, screen.text()
    lines = screen.lines()
    assert "Done. I removed notes.tmp and wrote CHANGES.md." in lines
    summary = lines.index("Summary:")
    assert lines[summary + 1 : summary + 5] == [
        "- removed the scratch file notes.tmp (approved)",
        "- kept build/ (rm -rf is blocked here)",
        "- recorded the change in CHANGES.md",
        "- config.ini holds an API key (masked)",
    ]


@pytest.mark.parametrize("with_stop_hook", [False, True], ids=["plain", "stop-hook"])
def test_a_one_line_answer_appears_on_its_own_line(project: Path, env: dict[str, str], with_stop_hook: bool) -> None:
    if with_stop_hook:
        stop_hook(project)
    model = script(project, [[{"text": "The answer is 42."}]])
    screen = Screen(["run", "question", "--model", model, "--trust-project-hooks"], env, project)
    assert screen.finish() == 0, screen.text()
    lines = screen.lines()
    assert "The answer is 42." in lines, screen.text()
    assert any(line.startswith("done in 1 turns") for line in lines[lines.index("The answer is 42.") + 1 :])
    assert not any("running" in line for line in lines)  # the spinner erased itself


def test_text_after_a_tool_call_starts_a_new_line_and_the_tool_line_is_not_glued_to_it(
    project: Path, env: dict[str, str]
) -> None:
    model = script(
        project,
        [
            [{"text": "Reading"}, {"tool": "Read", "arguments": {"file_path": "notes.txt"}}],
            [{"text": "It says hello."}],
        ],
    )
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    screen = Screen(["run", "read", "--model", model], env, project)
    assert screen.finish() == 0, screen.text()
    lines = screen.lines()
    assert lines[lines.index("Reading") + 1].startswith('● Read {"file_path": "notes.txt"}')
    assert "It says hello." in lines


def test_a_spinner_shows_while_the_model_has_not_sent_its_first_byte(project: Path, env: dict[str, str]) -> None:
    held = HeldModel("Hello from the model.")
    try:
        env = {**env, "OPENAI_COMPATIBLE_API_KEY": "local"}
        screen = Screen(["run", "hi", "--model", f"openai-compatible:held-model@{held.url}"], env, project)
        screen.wait_for("waiting for held-model")
        assert held.requested.wait(30)
        screen.wait_for("s)")  # the elapsed seconds are shown
        held.release()
        assert screen.finish() == 0, screen.text()
    finally:
        held.close()
    lines = screen.lines()
    assert "Hello from the model." in lines
    assert not any("waiting for" in line for line in lines), screen.text()


def bash_twice(project: Path) -> str:
    return script(
        project,
        [
            [{"tool": "Bash", "arguments": {"command": "echo first > first.txt"}}],
            [{"tool": "Bash", "arguments": {"command": "echo second > second.txt"}}],
            [{"text": "Finished."}],
        ],
    )


def test_ctrl_d_at_the_approval_prompt_denies_without_taking_the_next_line_as_a_reason(
    project: Path, env: dict[str, str]
) -> None:
    screen = Screen(["run", "write two files", "--model", bash_twice(project)], env, project)
    screen.wait_for("allow once")
    screen.end_of_input()  # Ctrl-D at the prompt
    screen.wait_for("no answer (end of input): denied")
    screen.wait_for("allow once", count=2)  # the next question was asked, not a reason
    assert "reason (optional)" not in screen.text()
    screen.type("y\n")
    assert screen.finish() == 0, screen.text()
    assert not (project / "first.txt").exists()
    assert (project / "second.txt").read_text() == "second\n"
    lines = screen.lines()
    assert any(line.startswith('✗ Bash {"command": "echo first > first.txt"} not run') for line in lines), lines
    assert "Finished." in lines


def test_ctrl_d_at_the_reason_prompt_denies_with_no_reason(project: Path, env: dict[str, str]) -> None:
    screen = Screen(["run", "write two files", "--model", bash_twice(project)], env, project)
    screen.wait_for("allow once")
    screen.type("n\n")
    screen.wait_for("reason (optional)")
    screen.end_of_input()
    screen.wait_for("allow once", count=2)
    screen.type("y\n")
    assert screen.finish() == 0, screen.text()
    assert not (project / "first.txt").exists()
    assert (project / "second.txt").exists()


def test_a_denied_call_is_shown_with_its_reason(project: Path, env: dict[str, str]) -> None:
    model = script(project, [[{"tool": "Bash", "arguments": {"command": "rm -rf notes.txt"}}], [{"text": "Ok."}]])
    (project / ".hookloop").mkdir()
    (project / ".hookloop" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    screen = Screen(["run", "clean", "--model", model], env, project)
    assert screen.finish() == 0, screen.text()
    [line] = [line for line in screen.lines() if line.startswith("✗")]
    assert line.startswith('✗ Bash {"command": "rm -rf notes.txt"} not run:'), line
    assert "Bash(rm:*)" in line
    assert (project / "notes.txt").exists()
    assert os.path.exists(project / "notes.txt")
