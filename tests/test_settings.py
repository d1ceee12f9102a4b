"""Settings files: precedence, merging, clear errors, and the permission policy they define."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookloop.settings import SettingsError, load_permission_policy, read_settings_layers, settings_files


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".claude").mkdir(parents=True)
    monkeypatch.delenv("HOOKLOOP_HOME", raising=False)
    return folder


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_files_are_read_lowest_precedence_first_and_rules_merge(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    write(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(ls:*)"]}})
    write(project / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    write(
        project / ".hookloop" / "settings.local.json",
        {"permissions": {"ask": ["Bash(git push:*)"], "defaultMode": "plan"}},
    )
    files = settings_files(project, home=home)
    assert files[0] == home / ".claude" / "settings.json"
    assert files[-1] == project / ".hookloop" / "settings.local.json"
    assert [Path(p) for p, _ in read_settings_layers(project, home=home)] == [
        home / ".claude" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".hookloop" / "settings.local.json",
    ]
    policy = load_permission_policy(project, home=home)
    assert policy.mode == "plan"
    assert policy.decide("Bash", {"command": "ls -la"}).behavior == "allow"
    assert policy.decide("Bash", {"command": "rm -rf x"}).behavior == "deny"
    assert policy.decide("Bash", {"command": "git push"}).behavior == "ask"
    without_claude = load_permission_policy(project, home=home, include_claude=False)
    assert without_claude.check("Bash", {"command": "rm x"}) is None  # the deny rule lived in .claude/


def test_errors_name_the_file_line_and_column(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    bad = project / ".hookloop" / "settings.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"permissions": {"allow": [1,]}}')
    with pytest.raises(SettingsError, match=r"settings.json:1:\d+: invalid JSON"):
        read_settings_layers(project, home=home)
    bad.write_text('{"permissions": {"allow": [42]}}')
    with pytest.raises(SettingsError, match=r"permissions\.allow\[0\]"):
        load_permission_policy(project, home=home)
    with pytest.raises(SettingsError, match="no such settings file"):
        read_settings_layers(project, home=home, extra=[tmp_path / "missing.json"])
