"""Claude Code's subagent files: YAML frontmatter parsed strictly, clear errors naming the file and field, user
and project folders with the project winning, and nothing a definition says can add a tool or loosen a mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.agents import AgentDefinitionError, load_agents, parse_agent


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_the_frontmatter_fields_and_the_body_as_system_prompt() -> None:
    d = parse_agent(
        "---\nname: code-reviewer\ndescription: >\n  Reviews code.\n  Use after edits.\n"
        "tools: Read, Grep, Glob\ndisallowedTools: [Task]\nmodel: haiku\npermissionMode: plan\nmaxTurns: 7\n"
        "color: blue\n---\n\nYou are a reviewer.\n\nBe brief.\n"
    )
    assert d.name == "code-reviewer"
    assert d.description == "Reviews code. Use after edits."
    assert d.tools == ("Read", "Grep", "Glob")
    assert d.disallowed_tools == ("Agent",)
    assert (d.model, d.permission_mode, d.max_turns) == ("haiku", "plan", 7)
    assert d.system_prompt == "You are a reviewer.\n\nBe brief."
    inherit = parse_agent("---\nname: x\ndescription: d\nmodel: inherit\ntools:\n  - Read\n  - Agent(a, b)\n---\n")
    assert inherit.model is None
    assert inherit.tools == ("Read", "Agent")
    assert inherit.agents == ("a", "b")
    assert parse_agent("---\nname: x\ndescription: d\n---\n").tools is None  # omitted: the parent's tools


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "no YAML frontmatter"),
        ("---\nname: x\ndescription: d\n", "no closing"),
        ("---\nname: [x\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\nname: ../etc\ndescription: d\n---\n", "name:"),
        ("---\nname: x\n---\n", "description: required"),
        ("---\nname: x\ndescription: d\ntools: 3\n---\n", "tools: expected"),
        ("---\nname: x\ndescription: d\ntools: [Read, 3]\n---\n", r"tools\[1\]"),
        ("---\nname: x\ndescription: d\ntools: Write(/etc/**)\n---\n", "permission rule"),
        ("---\nname: x\ndescription: d\npermissionMode: yolo\n---\n", "permissionMode: expected one of"),
        ("---\nname: x\ndescription: d\nmaxTurns: 0\n---\n", "maxTurns"),
        ("---\nname: x\ndescription: d\nmaxTurns: true\n---\n", "maxTurns"),
        ("---\nname: x\ndescription: d\nmodel: ''\n---\n", "model:"),
        ("---\nname: x\ndescription: !!python/object/apply:os.system ['touch pwned']\n---\n", "not valid YAML"),
    ],
)
def test_a_bad_definition_is_refused_with_the_file_and_the_field(text: str, message: str) -> None:
    with pytest.raises(AgentDefinitionError, match=message):
        parse_agent(text, source=Path("/p/.claude/agents/x.md"))


def test_user_and_project_folders_load_and_the_project_wins(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write(home / ".claude" / "agents", "helper.md", "---\nname: helper\ndescription: user's\n---\nuser")
    write(home / ".claude" / "agents", "solo.md", "---\ndescription: from the stem\n---\nsolo")
    write(project / ".claude" / "agents", "helper.md", "---\nname: helper\ndescription: project's\n---\nproject")
    write(project / ".claude" / "agents", "bad.md", "---\nname: bad\n---\n")
    write(project / ".claude" / "agents", "huge.md", "---\nname: huge\ndescription: d\n---\n" + "x" * 300_000)
    write(project / ".claude" / "agents", "notes.txt", "not a definition")
    write(home / ".claude" / "agents", "old.md", "---\nname: old\ndescription: d\n---\nold")
    write(project / ".claude" / "agents", "old.md", "---\nname: old\ndescription: d\ndisabled: true\n---\n")
    loaded = load_agents(project, home=home)
    assert sorted(loaded.agents) == ["helper", "solo"]
    assert loaded.agents["helper"].description == "project's"
    assert loaded.agents["solo"].system_prompt == "solo"
    assert len(loaded.errors) == 2
    assert any("bad.md: description: required" in e for e in loaded.errors)
    assert any("huge.md: larger than" in e for e in loaded.errors)
    assert load_agents(tmp_path / "nowhere", home=tmp_path / "nobody").agents == {}
