"""Issue 10 item 7 in the terminal: "allow always" proposes the narrowest rule, shows it, and adds only that."""

from __future__ import annotations

from pathlib import Path

import pytest
from screen_helpers import Screen, script

import hookloop


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_allow_always_adds_the_rule_it_shows(project: Path, env: dict[str, str]) -> None:
    model = script(
        project / "model.json",
        [
            [{"tool": "Bash", "arguments": {"command": "echo one > a.txt"}}],
            [{"tool": "Bash", "arguments": {"command": "echo two > b.txt"}}],
            [{"tool": "Bash", "arguments": {"command": "ls && pwd"}}],
            [{"text": "All done."}],
        ],
    )
    # the CLI subprocess imports this tree's hookloop
    env = {**env, "PYTHONPATH": str(Path(hookloop.__file__).parents[1])}
    term = Screen(["run", "go", "--model", f"scripted:{model}"], env, project, columns=int(env["COLUMNS"]))
    term.wait_for("[a] allow always (adds Bash(echo:*))")
    term.type("a\n")
    # `echo two` runs without a question; the compound `ls && pwd` needs two rules, so only once is offered
    term.wait_for("ls && pwd")
    term.wait_for("[y] allow once  [n] deny")
    assert (project / "b.txt").read_text() == "two\n"
    assert term.text().count("approval needed") == 2
    term.type("a\n")
    term.wait_for("no single narrow rule")
    term.type("y\n")
    term.wait_for("All done.")
    assert term.finish() == 0
