"""The ``sandbox`` settings object: Claude Code's keys, layer merging, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.sandbox import SandboxConfigError, SandboxSettings, parse_sandbox_settings


def test_defaults_follow_claude_code(tmp_path: Path) -> None:
    settings = parse_sandbox_settings([], workspace=tmp_path)
    assert settings == SandboxSettings()
    assert not settings.enabled
    assert settings.auto_allow_bash_if_sandboxed
    assert settings.allow_unsandboxed_commands
    assert not settings.fail_if_unavailable
    assert settings.hooks == "project"


def test_layers_merge_arrays_and_the_highest_scalar_wins(tmp_path: Path) -> None:
    user = str(tmp_path / "home" / ".claude" / "settings.json")
    project = str(tmp_path / "proj" / ".claude" / "settings.json")
    layers = [
        (
            user,
            {
                "sandbox": {
                    "enabled": True,
                    "excludedCommands": ["docker"],
                    "network": {"allowedDomains": ["github.com"]},
                    "filesystem": {"allowWrite": ["~/.cache", "//opt/build"]},
                }
            },
        ),
        (
            project,
            {
                "sandbox": {
                    "autoAllowBashIfSandboxed": False,
                    "excludedCommands": ["git push"],
                    "network": {"allowedDomains": ["*.npmjs.org", "GitHub.com"], "allowLocalBinding": True},
                    "filesystem": {"denyWrite": ["/build"], "denyRead": ["./secrets"]},
                    "hooks": "all",
                }
            },
        ),
    ]
    settings = parse_sandbox_settings(layers, workspace=tmp_path / "proj", home=tmp_path / "home")
    assert settings.enabled
    assert not settings.auto_allow_bash_if_sandboxed
    assert settings.excluded_commands == ("docker", "git push")
    assert settings.network.allowed_domains == ("github.com", "*.npmjs.org")
    assert settings.network.allow_local_binding
    assert settings.filesystem.allow_write == (str(tmp_path / "home" / ".cache"), "/opt/build")
    assert settings.filesystem.deny_write == (str(tmp_path / "proj" / "build"),)
    assert settings.filesystem.deny_read == (str(tmp_path / "proj" / "secrets"),)
    assert settings.hooks == "all"


@pytest.mark.parametrize(
    ("sandbox", "where", "problem"),
    [
        ({"enabeld": True}, "sandbox.enabeld", "unknown key"),
        ({"enabled": "yes"}, "sandbox.enabled", "true or false"),
        ({"network": {"allowedDomains": "github.com"}}, "sandbox.network.allowedDomains", "list of strings"),
        ({"network": {"allowedDomains": ["ok.com", "http://x"]}}, "sandbox.network.allowedDomains[1]", "host name"),
        ({"network": {"allowedHosts": []}}, "sandbox.network.allowedHosts", "unknown key"),
        ({"filesystem": {"allowWrite": [""]}}, "sandbox.filesystem.allowWrite[0]", "non-empty string"),
        ({"filesystem": []}, "sandbox.filesystem", "JSON object"),
        ({"hooks": "some"}, "sandbox.hooks", '"none", "project", "all"'),
        ({"bwrapPath": "bwrap"}, "sandbox.bwrapPath", "absolute path"),
        ("on", "sandbox", "JSON object"),
    ],
)
def test_bad_settings_name_the_file_and_the_json_path(
    tmp_path: Path, sandbox: object, where: str, problem: str
) -> None:
    source = str(tmp_path / ".claude" / "settings.json")
    with pytest.raises(SandboxConfigError) as caught:
        parse_sandbox_settings([(source, {"sandbox": sandbox})], workspace=tmp_path)
    assert str(caught.value).startswith(f"{source}: {where}: ")
    assert problem in str(caught.value)
    assert caught.value.json_path == where


def test_known_claude_code_keys_hookloop_does_not_use_are_accepted_with_a_note(tmp_path: Path) -> None:
    settings = parse_sandbox_settings(
        [
            (
                "/p/.claude/settings.json",
                {"sandbox": {"enableWeakerNestedSandbox": True, "network": {"httpProxyPort": 8080}}},
            )
        ],
        workspace=tmp_path,
    )
    assert len(settings.notes) == 2
    assert "sandbox.enableWeakerNestedSandbox" in settings.notes[0]
    assert "sandbox.network.httpProxyPort" in settings.notes[1]
