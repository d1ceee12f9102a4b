"""PermissionPolicy.from_settings: Claude Code's "permissions" key across user → project → local layers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from hookloop.permissions import PermissionConfigError, PermissionPolicy, RuleMatch


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / "docs").mkdir()
    return root


def layers(project: Path, home: Path) -> list[tuple[str | Path, Mapping[str, object]]]:
    return [
        (
            home / ".claude" / "settings.json",
            {"permissions": {"allow": ["Bash(git:*)", "Read(~/notes/**)"], "defaultMode": "acceptEdits"}},
        ),
        (
            project / ".claude" / "settings.json",
            {"permissions": {"deny": ["Bash(git push --force:*)", "Edit(/docs/**)"], "ask": ["Bash(git push:*)"]}},
        ),
        (
            str(project / ".claude" / "settings.local.json"),
            {"permissions": {"allow": ["Bash(make:*)"], "additionalDirectories": ["../shared"]}, "model": "x"},
        ),
    ]


def test_lists_merge_across_layers_and_keep_their_source(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    policy = PermissionPolicy.from_settings(layers(project, home), workspace=project)
    user = str(home / ".claude" / "settings.json")
    proj = str(project / ".claude" / "settings.json")
    local = str(project / ".claude" / "settings.local.json")
    assert policy.check("Bash", {"command": "git log"}) == RuleMatch(behavior="allow", rule="Bash(git:*)", source=user)
    assert policy.check("Bash", {"command": "make"}) == RuleMatch(behavior="allow", rule="Bash(make:*)", source=local)
    assert policy.check("Bash", {"command": "git push"}) == RuleMatch(
        behavior="ask", rule="Bash(git push:*)", source=proj
    )
    # A later layer's allow does not loosen an earlier deny: deny > ask > allow, whatever the layer.
    assert policy.check("Bash", {"command": "git push --force"}) == RuleMatch(
        behavior="deny", rule="Bash(git push --force:*)", source=proj
    )
    outcome = policy.decide("Bash", {"command": "git push --force"})
    assert outcome.decided_by == f'rule "Bash(git push --force:*)" ({proj})'


def test_single_slash_rules_are_relative_to_the_project_of_the_settings_file(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    policy = PermissionPolicy.from_settings(layers(project, home), workspace=project / "docs")
    edit = {"file_path": str(project / "docs" / "a.md"), "old_string": "a", "new_string": "b"}
    assert policy.check("Edit", edit) is not None  # `/docs/**` in .claude/settings.json → <project>/docs/**


def test_default_mode_from_the_last_layer_that_sets_it_unless_overridden(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert PermissionPolicy.from_settings(layers(project, home), workspace=project).mode == "acceptEdits"
    overridden = [*layers(project, home), ("managed", {"permissions": {"defaultMode": "plan"}})]
    assert PermissionPolicy.from_settings(overridden, workspace=project).mode == "plan"
    assert PermissionPolicy.from_settings(overridden, workspace=project, mode="dontAsk").mode == "dontAsk"
    assert PermissionPolicy.from_settings([], workspace=project).mode == "default"


def test_additional_directories_are_relative_to_the_settings_project(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    policy = PermissionPolicy.from_settings(layers(project, tmp_path / "home"), workspace=project)
    assert policy.decide("Read", {"file_path": str(shared / "x")}).behavior == "allow"
    assert policy.decide("Read", {"file_path": str(tmp_path / "x")}).behavior == "ask"


def test_home_rules(monkeypatch: pytest.MonkeyPatch, project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    policy = PermissionPolicy.from_settings(layers(project, home), workspace=project)
    assert policy.decide("Read", {"file_path": str(home / "notes" / "a.txt")}).behavior == "allow"


def test_layers_without_permissions_and_unknown_keys_are_ignored(project: Path) -> None:
    policy = PermissionPolicy.from_settings(
        [("user", {"hooks": {}}), ("project", {"permissions": {"future": True, "deny": ["Bash"]}})],
        workspace=project,
    )
    assert policy.check("Bash", {"command": "ls"}) == RuleMatch(behavior="deny", rule="Bash", source="project")


@pytest.mark.parametrize(
    ("document", "json_path", "fragment"),
    [
        ({"permissions": {"allow": ["Bash", "Read", "Edit", "Bash(ls"]}}, "permissions.allow[3]", "parenthesis"),
        ({"permissions": {"deny": [1]}}, "permissions.deny[0]", "must be a string"),
        ({"permissions": {"ask": "Bash"}}, "permissions.ask", "must be a list"),
        ({"permissions": ["Bash"]}, "permissions", "must be a JSON object"),
        ({"permissions": {"defaultMode": "auto"}}, "permissions.defaultMode", "unknown permission mode"),
        ({"permissions": {"additionalDirectories": "x"}}, "permissions.additionalDirectories", "must be a list"),
        ({"permissions": {"additionalDirectories": ["ok", ""]}}, "permissions.additionalDirectories[1]", "non-empty"),
        ({"permissions": {"allow": ["WebFetch(example.com)"]}}, "permissions.allow[0]", "domain:"),
    ],
)
def test_errors_name_the_file_and_the_json_path(
    project: Path, document: Mapping[str, object], json_path: str, fragment: str
) -> None:
    settings = project / ".claude" / "settings.local.json"
    with pytest.raises(PermissionConfigError) as caught:
        PermissionPolicy.from_settings([("user", {}), (settings, document)], workspace=project)
    error = caught.value
    assert error.source == str(settings)
    assert error.json_path == json_path
    assert fragment in error.problem
    assert str(error).startswith(f"{settings}: {json_path}: ")


def test_a_settings_document_that_is_not_an_object(project: Path) -> None:
    with pytest.raises(PermissionConfigError, match=r"^user: settings must be a JSON object$"):
        PermissionPolicy.from_settings([("user", ["not", "an", "object"])], workspace=project)  # type: ignore[list-item]


def test_config_error_is_a_hookloop_error_and_a_value_error() -> None:
    from hookloop.errors import HookloopError

    assert issubclass(PermissionConfigError, HookloopError)
    assert issubclass(PermissionConfigError, ValueError)
