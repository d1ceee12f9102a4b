"""Settings layers, diagnostics with JSON paths, dedup, matchers, Cline discovery and the launcher."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hookloop.command_hooks.config import (
    load_hook_config,
    parse_settings,
    resolve_hookloop_home,
)
from hookloop.command_hooks.discovery import launcher_for
from hookloop.command_hooks.matchers import match_target, matcher_error, matcher_matches
from hookloop.command_hooks.model import ClineScript, CommandHandler, HookSource, HttpHandler

SOURCE = HookSource(kind="claude-project", path="/p/.claude/settings.json")


def cmd(command: str, **extra: object) -> dict[str, object]:
    return {"type": "command", "command": command, **extra}


def settings(event: str = "PreToolUse", *groups: dict[str, object]) -> dict[str, object]:
    return {"hooks": {event: list(groups)}}


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


# --- diagnostics --------------------------------------------------------------------------------------------


# (id, settings document, expected diagnostics as (severity, path, message fragment), commands still loaded)
DIAGNOSTIC_CASES: list[tuple[str, object, list[tuple[str, str, str]], list[str]]] = [
    (
        "bad-timeout-keeps-siblings",
        settings("PreToolUse", {"matcher": "Bash", "hooks": [cmd("ok.sh"), cmd("bad.sh", timeout=-1)]}),
        [("error", "hooks.PreToolUse[0].hooks[1].timeout", "expected a positive number")],
        ["ok.sh"],
    ),
    (
        "timeout-not-a-number",
        settings("Stop", {"hooks": [cmd("a", timeout="30")]}),
        [("error", "hooks.Stop[0].hooks[0].timeout", "expected a positive number")],
        [],
    ),
    (
        "timeout-in-milliseconds-warns",
        settings("Stop", {"hooks": [cmd("a", timeout=5000)]}),
        [("warning", "hooks.Stop[0].hooks[0].timeout", "looks like milliseconds")],
        ["a"],
    ),
    (
        "unknown-event-suggests",
        {"hooks": {"PreTooluse": [{"hooks": [cmd("x")]}], "Stop": [{"hooks": [cmd("y")]}]}},
        [("error", "hooks.PreTooluse", "unknown event name 'PreTooluse'; did you mean 'PreToolUse'?")],
        ["y"],
    ),
    (
        "known-but-not-fired",
        settings("TeammateIdle", {"hooks": [cmd("s")]}),
        [("info", "hooks.TeammateIdle", "hookloop does not fire TeammateIdle")],
        ["s"],
    ),
    ("hooks-not-object", {"hooks": []}, [("error", "hooks", "expected an object")], []),
    ("top-not-object", [1], [("error", "", "expected a JSON object")], []),
    ("event-not-list", {"hooks": {"Stop": {}}}, [("error", "hooks.Stop", "expected an array of matcher groups")], []),
    ("group-not-object", settings("Stop", "x"), [("error", "hooks.Stop[0]", "expected a matcher group")], []),  # type: ignore[arg-type]
    (
        "matcher-not-string",
        settings("PreToolUse", {"matcher": ["Bash"], "hooks": [cmd("a")]}),
        [("error", "hooks.PreToolUse[0].matcher", "expected a string")],
        [],
    ),
    (
        "matcher-bad-regex",
        settings("PreToolUse", {"matcher": "Bash(", "hooks": [cmd("a")]}, {"matcher": "Edit", "hooks": [cmd("b")]}),
        [("error", "hooks.PreToolUse[0].matcher", "invalid regular expression")],
        ["b"],
    ),
    (
        "matcher-on-event-without-matchers",
        settings("Stop", {"matcher": "Bash", "hooks": [cmd("a")]}),
        [("info", "hooks.Stop[0].matcher", "ignored")],
        ["a"],
    ),
    (
        "hooks-missing",
        settings("Stop", {"matcher": "*"}),
        [("error", "hooks.Stop[0].hooks", "expected an array of handlers")],
        [],
    ),
    (
        "type-missing",
        settings("Stop", {"hooks": [{"command": "a"}]}),
        [("error", "hooks.Stop[0].hooks[0].type", "missing")],
        [],
    ),
    (
        "type-unknown",
        settings("Stop", {"hooks": [{"type": "shell", "command": "a"}]}),
        [("error", "hooks.Stop[0].hooks[0].type", 'got "shell"')],
        [],
    ),
    (
        "prompt-on-sessionstart",
        settings("SessionStart", {"hooks": [{"type": "prompt", "prompt": "ok?"}, cmd("b")]}),
        [("error", "hooks.SessionStart[0].hooks[0].type", "runs only command and mcp_tool handlers")],
        ["b"],
    ),
    (
        "command-empty",
        settings("Stop", {"hooks": [cmd("  ")]}),
        [("error", "hooks.Stop[0].hooks[0].command", "expected a non-empty string")],
        [],
    ),
    (
        "args-not-strings",
        settings("Stop", {"hooks": [cmd("a", args=["x", 1])]}),
        [("error", "hooks.Stop[0].hooks[0].args[1]", "expected a string, got a number")],
        [],
    ),
    (
        "if-not-string",
        settings("PreToolUse", {"hooks": [cmd("a", **{"if": 3})]}),
        [("error", "hooks.PreToolUse[0].hooks[0].if", "permission rule")],
        [],
    ),
    (
        "failclosed-not-bool",
        settings("Stop", {"hooks": [cmd("a", failClosed="yes")]}),
        [("error", "hooks.Stop[0].hooks[0].failClosed", "expected a boolean")],
        [],
    ),
    (
        "unknown-field-warns",
        settings("Stop", {"hooks": [cmd("a", timout=3)]}),
        [("warning", "hooks.Stop[0].hooks[0].timout", "unknown field")],
        ["a"],
    ),
    (
        "http-bad-url",
        settings("Stop", {"hooks": [{"type": "http", "url": "file:///etc/passwd"}]}),
        [("error", "hooks.Stop[0].hooks[0].url", "http:// or https://")],
        [],
    ),
    (
        "http-header-not-string",
        settings("Stop", {"hooks": [{"type": "http", "url": "https://x", "headers": {"X-A": 1}}]}),
        [("error", 'hooks.Stop[0].hooks[0].headers["X-A"]', "expected a string")],
        [],
    ),
    (
        "http-env-var-with-dollar",
        settings("Stop", {"hooks": [{"type": "http", "url": "https://x", "allowedEnvVars": ["$TOKEN"]}]}),
        [("warning", "hooks.Stop[0].hooks[0].allowedEnvVars[0]", "not a bare variable name")],
        ["https://x"],
    ),
]


@pytest.mark.parametrize(
    ("document", "expected", "loaded"),
    [case[1:] for case in DIAGNOSTIC_CASES],
    ids=[case[0] for case in DIAGNOSTIC_CASES],
)
def test_diagnostics_name_the_json_path(
    document: object, expected: list[tuple[str, str, str]], loaded: list[str]
) -> None:
    layer = parse_settings(document, SOURCE)
    got = [(d.severity, d.path, d.message) for d in layer.diagnostics]
    assert len(got) == len(expected), got
    for (severity, path, message), (want_severity, want_path, fragment) in zip(got, expected, strict=True):
        assert (severity, path) == (want_severity, want_path)
        assert fragment in message
    assert [hook.name for hook in layer.hooks] == loaded


def test_diagnostic_text_names_file_and_path() -> None:
    layer = parse_settings(settings("PreToolUse", {"hooks": [cmd("a"), cmd("b", timeout=0)]}), SOURCE)
    assert str(layer.diagnostics[0]) == (
        "/p/.claude/settings.json: hooks.PreToolUse[0].hooks[1].timeout: expected a positive number (seconds)"
    )


def test_handlers_are_parsed_completely() -> None:
    document = settings(
        "PreToolUse",
        {
            "matcher": "Bash",
            "hooks": [
                cmd(
                    "check.sh",
                    args=["--strict"],
                    timeout=30,
                    failClosed=True,
                    statusMessage="Checking",
                    **{"if": "Bash(rm *)"},
                ),
                {
                    "type": "http",
                    "url": "https://h.example/x",
                    "headers": {"A": "$T"},
                    "allowedEnvVars": ["T"],
                    "timeout": 5,
                },
                cmd("bg.sh", **{"async": True}),
            ],
        },
    )
    layer = parse_settings(document, SOURCE)
    assert layer.diagnostics == ()
    first, second, third = layer.hooks
    assert first.handler == CommandHandler(
        command="check.sh",
        args=("--strict",),
        timeout=30.0,
        condition="Bash(rm *)",
        fail_closed=True,
        status_message="Checking",
    )
    assert first.json_path == "hooks.PreToolUse[0].hooks[0]"
    assert first.matcher == "Bash"
    assert second.handler == HttpHandler(
        url="https://h.example/x", headers=(("A", "$T"),), allowed_env_vars=("T",), timeout=5.0
    )
    assert isinstance(third.handler, CommandHandler)
    assert third.handler.run_async


def test_invalid_json_file_is_one_diagnostic(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"hooks": {,}}')
    write_json(project / ".hookloop" / "settings.json", settings("Stop", {"hooks": [cmd("still-loads")]}))
    config = load_hook_config(project, home=home, include_cline=False)
    assert [h.name for h in config.hooks] == ["still-loads"]
    (diag,) = config.diagnostics
    assert diag.severity == "error"
    assert diag.file.endswith(".claude/settings.json")
    assert "invalid JSON" in diag.message


# --- layers, dedup, scalar settings ------------------------------------------------------------------------------


def make_layers(project: Path, home: Path) -> None:
    write_json(home / ".claude" / "settings.json", settings("Stop", {"hooks": [cmd("claude-user"), cmd("shared")]}))
    write_json(home / ".hookloop" / "settings.json", settings("Stop", {"hooks": [cmd("hookloop-user")]}))
    write_json(project / ".claude" / "settings.json", settings("Stop", {"hooks": [cmd("claude-project")]}))
    write_json(project / ".hookloop" / "settings.json", settings("Stop", {"hooks": [cmd("hookloop-project")]}))
    write_json(project / ".claude" / "settings.local.json", settings("Stop", {"hooks": [cmd("shared", timeout=9)]}))
    write_json(project / ".hookloop" / "settings.local.json", settings("Stop", {"hooks": [cmd("hookloop-local")]}))


def test_layers_merge_in_precedence_order_and_dedupe(tmp_path: Path, home: Path) -> None:
    from hookloop.command_hooks.config import dedupe

    project = tmp_path / "p"
    make_layers(project, home)
    config = load_hook_config(project, home=home, include_cline=False, environ={})
    assert [(h.name, h.source.kind) for h in config.hooks] == [
        ("claude-user", "claude-user"),
        ("shared", "claude-user"),
        ("hookloop-user", "hookloop-user"),
        ("claude-project", "claude-project"),
        ("hookloop-project", "hookloop-project"),
        ("shared", "claude-local"),
        ("hookloop-local", "hookloop-local"),
    ]
    # defined in two files: one firing runs it once, as the highest layer defines it
    fired = dedupe(config.for_event("Stop"))
    assert [(h.name, h.source.kind) for h in fired if h.name == "shared"] == [("shared", "claude-local")]
    assert next(h for h in fired if h.name == "shared").timeout == 9.0
    (dup,) = config.diagnostics
    assert dup.severity == "info"
    assert dup.file.endswith(".claude/settings.json")
    assert "runs once" in dup.message
    assert [h.source.label for h in config.hooks] == ["User", "User", "User", "Project", "Project", "Local", "Local"]


def test_claude_files_can_be_skipped(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    make_layers(project, home)
    config = load_hook_config(project, home=home, include_claude=False, include_cline=False, environ={})
    assert [h.name for h in config.hooks] == ["hookloop-user", "hookloop-project", "hookloop-local"]


def test_one_file_keeps_every_handler_and_args_make_a_different_handler() -> None:
    from hookloop.command_hooks.config import dedupe, merge_layers

    document = settings(
        "PreToolUse",
        {"matcher": "Bash", "hooks": [cmd("a"), cmd("a", args=["x"])]},
        {"matcher": "Edit", "hooks": [cmd("a")]},
        {"matcher": "Bash", "hooks": [cmd("a", timeout=3)]},
        {"matcher": "*", "hooks": [cmd("b")]},
        {"hooks": [cmd("b")]},
    )
    config = merge_layers([parse_settings(document, SOURCE)])
    assert len(config.hooks) == 6
    # all from one file: Claude Code merges only copies from different settings files
    assert len(dedupe(config.for_event("PreToolUse", "Bash"))) == 5
    assert not config.diagnostics


def test_hookloop_home_from_environment(tmp_path: Path, home: Path) -> None:
    own = tmp_path / "own-home"
    write_json(own / "settings.json", settings("Stop", {"hooks": [cmd("from-env-home")]}))
    config = load_hook_config(tmp_path / "p", home=home, include_cline=False, environ={"HOOKLOOP_HOME": str(own)})
    assert [h.name for h in config.hooks] == ["from-env-home"]
    assert resolve_hookloop_home(home=home, environ={}) == home / ".hookloop"


@pytest.mark.parametrize(
    ("user", "project_value", "disabled"),
    [(True, None, True), (True, False, False), (None, True, True), (False, None, False)],
)
def test_disable_all_hooks_highest_layer_wins(
    tmp_path: Path, home: Path, user: bool | None, project_value: bool | None, disabled: bool
) -> None:
    project = tmp_path / "p"
    user_doc: dict[str, Any] = settings("Stop", {"hooks": [cmd("u")]})
    if user is not None:
        user_doc["disableAllHooks"] = user
    project_doc: dict[str, Any] = {} if project_value is None else {"disableAllHooks": project_value}
    write_json(home / ".claude" / "settings.json", user_doc)
    write_json(project / ".claude" / "settings.json", project_doc)
    config = load_hook_config(project, home=home, include_cline=False, environ={})
    assert config.disabled is disabled
    assert [h.name for h in config.hooks] == ([] if disabled else ["u"])


def test_http_allowlists_intersect_across_layers(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    write_json(
        home / ".claude" / "settings.json",
        {"allowedHttpHookUrls": ["https://a/*", "https://b/*"], "httpHookAllowedEnvVars": ["T"]},
    )
    write_json(project / ".claude" / "settings.json", {"allowedHttpHookUrls": ["https://b/*", "https://evil/*"]})
    config = load_hook_config(project, home=home, include_cline=False, environ={})
    assert config.http_url_allowlist == ("https://b/*",)
    assert config.http_env_allowlist == ("T",)


# --- selecting hooks for a firing --------------------------------------------------------------------------------


def test_for_event_filters_by_event_matcher_and_condition(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    write_json(
        project / ".hookloop" / "settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [cmd("bash-only", **{"if": "Bash(git *)"})]},
                    {"matcher": "Edit|Write", "hooks": [cmd("edits")]},
                    {"hooks": [cmd("all-tools")]},
                ],
                "Stop": [{"hooks": [cmd("stop-with-if", **{"if": "Bash(x)"}), cmd("stop")]}],
            }
        },
    )
    script = project / ".clinerules" / "hooks" / "PreToolUse"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    config = load_hook_config(project, home=home, environ={}, platform="linux")
    assert [h.name for h in config.for_event("PreToolUse", "Bash")] == ["bash-only", "all-tools", str(script)]
    assert [h.name for h in config.for_event("PreToolUse", "Write")] == ["edits", "all-tools", str(script)]
    assert [h.name for h in config.for_event("Stop")] == ["stop"]  # `if` outside tool events never runs
    assert config.for_event("PreToolUse", "Bash")[0].condition == "Bash(git *)"


# --- matchers ------------------------------------------------------------------------------------------------


MATCHER_TABLE: list[tuple[str | None, str | None, bool, str | None]] = [
    # matcher, value, matches, event
    (None, "Bash", True, "PreToolUse"),
    ("", "Bash", True, "PreToolUse"),
    ("*", "anything", True, "PreToolUse"),
    ("Bash", "Bash", True, "PreToolUse"),
    ("Bash", "bash", False, "PreToolUse"),  # case-sensitive
    ("Bash", "BashOutput", False, "PreToolUse"),  # exact, not a prefix
    ("Edit|Write", "Write", True, "PreToolUse"),
    ("Edit|Write", "NotebookEdit", False, "PreToolUse"),
    ("Edit, Write", "Write", True, "PreToolUse"),  # comma lists, spaces trimmed
    ("code-reviewer", "senior-code-reviewer", False, "SubagentStart"),  # hyphens are exact
    ("Edit.*", "NotebookEdit", True, "PreToolUse"),  # regexes are unanchored
    ("^Edit.*$", "NotebookEdit", False, "PreToolUse"),
    ("mcp__memory", "mcp__memory__create_entities", False, "PreToolUse"),  # exact string matches no tool
    ("mcp__memory__.*", "mcp__memory__create_entities", True, "PreToolUse"),
    ("mcp__.*__write.*", "mcp__fs__write_file", True, "PreToolUse"),
    ("(?<tool>Bash)", "Bash", True, "PreToolUse"),  # JavaScript named group
    ("Bash(", "Bash(", False, "PreToolUse"),  # invalid regex matches nothing
    ("Bash", None, False, "PreToolUse"),
    ("startup", "startup", True, "SessionStart"),
    ("manual", "auto", False, "PreCompact"),
    ("Bash", "Anything", True, "Stop"),  # no matcher support: ignored
    ("Bash", None, True, "UserPromptSubmit"),
    ("rate-limit", "xrate-limitx", True, "StopFailure"),  # narrower exact set: "-" makes it a regex
    ("rate_limit", "rate_limit_2", False, "StopFailure"),
    ("Bash", "Bash", True, None),
]


@pytest.mark.parametrize(("matcher", "value", "matches", "event"), MATCHER_TABLE)
def test_matcher_semantics(matcher: str | None, value: str | None, matches: bool, event: str | None) -> None:
    assert matcher_matches(matcher, value, event=event) is matches


def test_matcher_error_and_targets() -> None:
    assert matcher_error("Bash(") is not None
    assert matcher_error("Bash|Edit") is None
    assert matcher_error(None) is None
    assert match_target("PreToolUse", {"tool_name": "Bash"}) == "Bash"
    assert match_target("SessionStart", {"source": "resume"}) == "resume"
    assert match_target("Notification", {"notification_type": "idle_prompt"}) == "idle_prompt"
    assert match_target("Stop", {"tool_name": "Bash"}) is None


# --- Cline discovery and launcher ----------------------------------------------------------------------------------


def make_script(path: Path, executable: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho '{}'\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def test_cline_discovery(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    own = tmp_path / "own"
    user_script = make_script(home / "Documents" / "Cline" / "Hooks" / "TaskStart")
    own_script = make_script(own / "hooks" / "PreToolUse")
    project_script = make_script(project / ".clinerules" / "hooks" / "PreToolUse")
    make_script(project / ".clinerules" / "hooks" / "PostToolUse", executable=False)
    make_script(project / ".clinerules" / "hooks" / "UserPromptSubmit.sh")
    make_script(project / ".clinerules" / "hooks" / "helper.sh")
    os.symlink(project_script, project / ".clinerules" / "hooks" / "TaskComplete")  # one script, two events
    make_script(own / "hooks" / "Notification")
    os.symlink(own / "hooks" / "Notification", home / "Documents" / "Cline" / "Hooks" / "Notification")

    config = load_hook_config(project, home=home, hookloop_home=own, platform="linux")
    found = [(h.event, h.handler, h.source.kind) for h in config.hooks]
    assert found == [
        ("TaskStart", ClineScript(path=str(user_script)), "cline-user"),
        ("Notification", ClineScript(path=str(home / "Documents/Cline/Hooks/Notification")), "cline-user"),
        ("PreToolUse", ClineScript(path=str(own_script)), "hookloop-scripts"),
        ("TaskComplete", ClineScript(path=str(project / ".clinerules/hooks/TaskComplete")), "cline-project"),
        ("PreToolUse", ClineScript(path=str(project_script)), "cline-project"),
    ]
    messages = sorted((d.severity, d.message.split(":")[0]) for d in config.diagnostics)
    assert messages == [
        ("info", "Notification"),  # the same file through a symlink runs once
        ("info", "PostToolUse"),  # not executable: disabled
        ("warning", "UserPromptSubmit.sh"),  # extensions are ignored on Unix
    ]
    assert all(
        h.protocol == "cline" and h.source.project_level == (h.source.kind == "cline-project") for h in config.hooks
    )


def test_cline_discovery_on_windows_uses_ps1_only(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    ps1 = make_script(project / ".clinerules" / "hooks" / "PreToolUse.ps1", executable=False)
    make_script(project / ".clinerules" / "hooks" / "PostToolUse")
    config = load_hook_config(project, home=home, hookloop_home=tmp_path / "own", platform="win32")
    assert [(h.event, h.name) for h in config.hooks] == [("PreToolUse", str(ps1))]
    assert [d.message.split(":")[0] for d in config.diagnostics] == ["PostToolUse"]


@pytest.mark.parametrize(
    ("path", "platform", "argv"),
    [
        ("/p/.clinerules/hooks/PreToolUse", "linux", ["/p/.clinerules/hooks/PreToolUse"]),
        ("/p/.clinerules/hooks/PreToolUse", "darwin", ["/p/.clinerules/hooks/PreToolUse"]),
        (
            r"C:\p\.clinerules\hooks\PreToolUse.ps1",
            "win32",
            [
                "powershell",
                "-NoProfile",
                "-NonInteractive",
                "-ExecutionPolicy",
                "Bypass",
                "-File",
                r"C:\p\.clinerules\hooks\PreToolUse.ps1",
            ],
        ),
        (
            r"C:\p\hook.PS1",
            "win32",
            ["powershell", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", r"C:\p\hook.PS1"],
        ),
        (r"C:\p\hook.exe", "win32", [r"C:\p\hook.exe"]),
        ("/p/hook.ps1", "linux", ["/p/hook.ps1"]),
    ],
)
def test_launcher_for(path: str, platform: str, argv: list[str]) -> None:
    assert launcher_for(path, platform) == argv
