"""``hookloop hooks list | validate | trust | untrust`` — see and check the hook configuration."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hookloop._frozen import dumps

if TYPE_CHECKING:
    from hookloop.cli._settings_check import Problem
    from hookloop.command_hooks.config import HookConfig
    from hookloop.command_hooks.model import ConfiguredHook

# The command hooks load when a command runs, not when the app is built (`hookloop --help` stays fast).

hooks_app = typer.Typer(
    name="hooks",
    help="See, check, try and trust the hook configuration (Claude Code, Cline and hookloop settings).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

PROJECT = typer.Option(Path("."), "--cwd", help="The project directory.")
NO_CLAUDE = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files.")


def _load(cwd: Path, no_claude: bool) -> HookConfig:
    from hookloop.command_hooks.config import load_hook_config

    return load_hook_config(cwd.resolve(), include_claude=not no_claude)


def _problems(cwd: Path, no_claude: bool, config: HookConfig, *, check_commands: bool = False) -> list[Problem]:
    from hookloop.cli._settings_check import settings_problems
    from hookloop.settings import settings_files

    files = settings_files(cwd.resolve(), include_claude=not no_claude)
    return settings_problems(cwd.resolve(), config, files, check_commands=check_commands)


def _refuse_broken_settings(cwd: Path, no_claude: bool, config: HookConfig) -> None:
    """Broken settings are errors here too: each on one line of stderr, then exit 2 pointing at validate
    (a command that shows or runs hooks must not answer as if there were none)."""
    errors = [p for p in _problems(cwd, no_claude, config) if p.severity == "error"]
    if not errors:
        return
    from hookloop.cli._errors import error_console, one_line

    console = error_console()
    for problem in errors:
        console.print(f"error: {one_line(problem.text)}", markup=False)
    console.print(
        f"hookloop: the settings have {len(errors)} error(s); nothing was run — see `hookloop hooks validate`",
        markup=False,
    )
    raise typer.Exit(2)


def _runnable(cwd: Path, no_claude: bool, trust_project: bool, console: Console) -> HookConfig:
    """The configuration that would run: untrusted project hooks are left out (and said so)."""
    from hookloop.command_hooks.trust import apply_trust

    config = _load(cwd, no_claude)
    if trust_project:
        return config
    trusted = apply_trust(config, cwd.resolve())
    if trusted is not config:
        skipped = len(config.project_hooks)
        console.print(
            f"[yellow]this project's hook configuration is not trusted: its {skipped} hook(s) do not run and its "
            "settings (env, disableAllHooks, enabledPlugins) have no effect "
            "(`hookloop hooks trust`, or --trust-project-hooks)[/]"
        )
    return trusted


def _read_json_input(source: str) -> dict[str, object]:
    import sys

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"{source}: {exc.strerror or exc}", param_hint="--input") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{source}: invalid JSON ({exc})", param_hint="--input") from exc
    if not isinstance(data, dict):
        raise typer.BadParameter(f"{source}: expected a JSON object (the hook input)", param_hint="--input")
    return data


def describe_handler(hook: ConfiguredHook) -> str:
    from hookloop.command_hooks.model import (
        ClineScript,
        CommandHandler,
        HttpHandler,
        McpToolHandler,
        ProcessHandler,
        PromptHandler,
        PythonHandler,
    )

    handler = hook.handler
    if isinstance(handler, CommandHandler):
        if handler.args is not None:
            return " ".join([handler.command, *handler.args])
        return handler.command
    if isinstance(handler, HttpHandler):
        return f"POST {handler.url}"
    if isinstance(handler, PromptHandler):
        return handler.prompt + (f" (model {handler.model})" if handler.model else "")
    if isinstance(handler, McpToolHandler):
        return f"{handler.server}/{handler.tool}"
    if isinstance(handler, ProcessHandler):
        return " ".join([handler.command, *(handler.args or ())])
    if isinstance(handler, PythonHandler):
        return handler.callable
    assert isinstance(handler, ClineScript)
    return handler.path


def handler_type(hook: ConfiguredHook) -> str:
    """``command``, ``http``, ``prompt``, ``agent``, ``mcp_tool``, ``process``, ``python`` or ``cline``."""
    from hookloop.command_hooks.model import (
        ClineScript,
        HttpHandler,
        McpToolHandler,
        ProcessHandler,
        PromptHandler,
        PythonHandler,
    )

    handler = hook.handler
    if isinstance(handler, PromptHandler):
        return handler.kind
    if isinstance(handler, McpToolHandler):
        return "mcp_tool"
    if isinstance(handler, ProcessHandler):
        return "process"
    if isinstance(handler, PythonHandler):
        return "python"
    return "cline" if isinstance(handler, ClineScript) else "http" if isinstance(handler, HttpHandler) else "command"


def _origin(row: Mapping[str, object]) -> str:
    if row.get("plugin"):
        return f"plugin {row['plugin']}: {row['source']} [{row['layer']}]"
    return f"{row['source']} [{row['layer']}]"


@hooks_app.command("list")
def list_hooks(
    cwd: Path = PROJECT,
    no_claude_settings: bool = NO_CLAUDE,
    output_format: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """The effective hooks: event, matcher, what runs, timeout, the file it comes from, and trust state.
    Settings with errors are refused (exit 2; `hookloop hooks validate` says more)."""
    from hookloop.command_hooks.model import NEVER_FIRED_EVENTS
    from hookloop.command_hooks.trust import is_trusted

    config = _load(cwd, no_claude_settings)
    _refuse_broken_settings(cwd, no_claude_settings, config)
    trusted = is_trusted(cwd.resolve())
    rows = []
    for hook in config.hooks:
        project = hook.source.project_level
        rows.append(
            {
                "event": hook.event,
                "matcher": hook.matcher or "*",
                "if": hook.condition,
                "type": handler_type(hook),
                "fires": hook.protocol == "cline" or hook.event not in NEVER_FIRED_EVENTS,
                "run": describe_handler(hook),
                "timeout": hook.timeout,
                "source": hook.source.path,
                "layer": hook.source.label,
                "plugin": hook.source.plugin,
                "plugin_root": hook.source.plugin_root,
                "trust": ("trusted" if trusted else "untrusted (not run)") if project else "user",
            }
        )
    if output_format == "json":
        print(json.dumps({"hooks": rows, "disabled": config.disabled}, indent=2))
        return
    console = Console(soft_wrap=True)
    if not rows:
        console.print("no hooks configured")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("event", "matcher", "type", "run", "timeout", "source", "trust"):
        table.add_column(column, overflow="fold")
    for row in rows:
        timeout = "default" if row["timeout"] is None else f"{row['timeout']:g}s"
        event = str(row["event"]) if row["fires"] else f"{row['event']} (never fired by hookloop)"
        table.add_row(
            event, str(row["matcher"]) + (f" if {row['if']}" if row["if"] else ""), str(row["type"]),
            str(row["run"]), timeout,
            _origin(row), str(row["trust"]),
        )  # fmt: skip
    console.print(table)
    if config.disabled:
        console.print("[yellow]disableAllHooks is set: no hook runs[/]")


@hooks_app.command()
def validate(
    cwd: Path = PROJECT,
    no_claude_settings: bool = NO_CLAUDE,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show notes too (merged copies, trust, …)."),
) -> None:
    """Check every settings file once: hooks (events, fields, matchers, and that each command's program or
    script exists and is executable), permissions (rules, unknown keys), sandbox, model. Problems are reported
    with file and JSON path. Exit code 1 when any error is found."""
    from hookloop.cli._settings_check import Problem
    from hookloop.command_hooks.model import NEVER_FIRED_EVENTS

    config = _load(cwd, no_claude_settings)
    console = Console(soft_wrap=True, highlight=False)
    problems = _problems(cwd, no_claude_settings, config, check_commands=True)
    for hook in config.hooks:
        if hook.protocol == "claude" and hook.event in NEVER_FIRED_EVENTS:
            where = f"{hook.source.path}: {hook.json_path}"
            problems.append(Problem("warning", f"{where}: hookloop never fires {hook.event}; this hook never runs"))
    errors = 0
    for problem in problems:
        if problem.severity == "info" and not verbose:
            continue
        colour = {"error": "red", "warning": "yellow"}.get(problem.severity, "dim")
        console.print(f"[{colour}]{problem.severity}[/]: ", end="")
        console.print(problem.text, markup=False)
        errors += problem.severity == "error"
    if errors:
        console.print(f"{errors} error(s)")
        raise typer.Exit(1)
    console.print(f"ok: {len(config.hooks)} hook(s), settings valid")


@hooks_app.command("trust")
def trust_cmd(cwd: Path = PROJECT) -> None:
    """Trust this project's hook configuration (its hash is recorded; a changed configuration needs trust
    again). Project hooks are code from the repository: read them first (`hookloop hooks list`)."""
    from hookloop.command_hooks.config import resolve_hookloop_home
    from hookloop.command_hooks.trust import trust

    digest = trust(cwd.resolve())
    Console(highlight=False).print(f"trusted {cwd.resolve()} ({digest}) in {resolve_hookloop_home() / 'trusted.json'}")


@hooks_app.command("untrust")
def untrust_cmd(cwd: Path = PROJECT) -> None:
    """Remove the recorded trust for this project's hook configuration."""
    from hookloop.command_hooks.trust import project_config_digest, untrust

    removed = untrust(cwd.resolve())
    Console(highlight=False).print(
        f"untrusted {cwd.resolve()}"
        if removed
        else f"{cwd.resolve()} was not trusted (digest {project_config_digest(cwd.resolve())})"
    )


TRUST = typer.Option(False, "--trust-project-hooks", help="Run untrusted project hooks too.")


@hooks_app.command("test")
def hooks_test(
    event: str = typer.Argument(
        ...,
        help="A Claude Code event (PreToolUse, PostToolUse, Stop, SessionStart, …) or a Cline hook name "
        "(TaskStart, TaskResume, TaskCancel, TaskComplete, PreToolUse, PostToolUse, UserPromptSubmit, "
        "Notification, PreCompact).",
    ),
    input_file: str = typer.Option(
        ...,
        "--input",
        help="The hook input as JSON (a file, or - for stdin): Claude Code's shape, or a verbatim Cline payload.",
    ),
    tool: str | None = typer.Option(None, "--tool", help="Match as this tool (overrides tool_name)."),
    timeout: float | None = typer.Option(
        None, "--timeout", help="Seconds each hook may run (replaces configured and default timeouts)."
    ),
    output_format: str = typer.Option("text", "--format", help="text or json"),
    cwd: Path = PROJECT,
    no_claude_settings: bool = NO_CLAUDE,
    trust_project_hooks: bool = TRUST,
) -> None:
    """Run the hooks configured for EVENT on a sample input: each hook's output, exit code, timing and
    decision, and the merged decision.

    A Claude Code shaped input runs the Claude Code hooks of the event and the Cline scripts of the same moment
    (with the Cline payload hookloop would build); a Cline payload (it has hookName / clineVersion / taskId)
    goes verbatim to the Cline scripts of EVENT.

    --format json prints one object: {"event", "target", "hooks": [{"source", "layer", "plugin", "protocol",
    "command", "matcher",
    "exit_code", "outcome", "error", "timed_out", "duration_ms", "stdout", "stderr", "decision"}], "merged":
    {"decision", "reason", "updated_input", "additional_context", "system_message", "continue", "stop_reason",
    "replace_output", "errors"}, "env_file", "env_exports"}.
    """
    import asyncio

    from hookloop.command_hooks.dryrun import runner_options, try_event
    from hookloop.command_hooks.model import CLAUDE_EVENTS, CLINE_EVENTS

    if event not in CLAUDE_EVENTS and event not in CLINE_EVENTS:
        names = sorted({*CLAUDE_EVENTS, *CLINE_EVENTS})
        raise typer.BadParameter(f"{event!r}: expected one of {', '.join(names)}", param_hint="EVENT")
    if output_format not in ("text", "json"):
        raise typer.BadParameter(f"{output_format!r}: expected text or json", param_hint="--format")
    if timeout is not None and not (timeout > 0 and timeout < float("inf")):
        raise typer.BadParameter(f"{timeout}: expected a positive number of seconds", param_hint="--timeout")
    payload = _read_json_input(input_file)
    console = Console(soft_wrap=True, highlight=False, stderr=output_format == "json")
    _refuse_broken_settings(cwd, no_claude_settings, _load(cwd, no_claude_settings))
    config = _runnable(cwd, no_claude_settings, trust_project_hooks, console)
    options = runner_options(config)
    report = asyncio.run(
        try_event(config, event, payload, project_dir=cwd.resolve(), tool=tool, options=options, hook_timeout=timeout)
    )
    failed = [run for run in report.runs if not run.outcome.ok]
    if output_format == "json":
        print(json.dumps(report.to_json(), indent=2))
        if failed:
            raise typer.Exit(1)
        return
    if not report.runs:
        console.print(f"no hook matches {event}" + (f" for {report.target}" if report.target else ""))
    for run in report.runs:
        data = run.to_json()
        verdict = f"[bold]{run.decision.kind}[/]" + (f": {escape(run.decision.reason)}" if run.decision.reason else "")
        if not run.outcome.ok:
            verdict = f"[red]could not run ({run.outcome.error_kind})[/]"
        console.print(
            f"[bold]{escape(str(data['command']))}[/]  [dim]{escape(str(data['source']))} [{data['layer']}][/]\n"
            f"  exit {data['exit_code']} · {data['outcome']} · {data['duration_ms']:.1f} ms → {verdict}"
        )
        for stream in ("stdout", "stderr"):
            text = str(data[stream]).rstrip()
            if text:
                console.print(f"  {stream}:", markup=False)
                for line in text.splitlines()[:40]:
                    console.print(f"    {line}", markup=False)
    merged = report.merged
    console.print(f"\nmerged decision: [bold]{merged.kind}[/]" + (f" — {merged.reason}" if merged.reason else ""))
    if merged.updated_input is not None:
        console.print(f"  updated input: {dumps(merged.updated_input)}", markup=False)
    for text in merged.additional_context:
        console.print(f"  added context: {text}", markup=False)
    if not merged.continue_:
        console.print(f"  stops the run: {merged.stop_reason or ''}", markup=False)
    if report.env_exports:
        console.print(f"  CLAUDE_ENV_FILE ({report.env_file}) for later Bash commands:", markup=False)
        for line in report.env_exports.splitlines()[:40]:
            console.print(f"    {line}", markup=False)
    if failed:
        for run in failed:
            console.print("[red]hook did not answer[/]: ", end="")
            console.print(run.outcome.error or f"{run.hook.name}: {run.outcome.error_kind}", markup=False)
        console.print(
            f"[red]{len(failed)} hook(s) could not run, crashed or timed out[/]: the merged decision above is "
            "reached without them (see `hookloop hooks validate`)"
        )
        raise typer.Exit(1)


@hooks_app.command("replay")
def replay_cmd(
    transcript: Path = typer.Argument(..., help="A hookloop JSONL transcript or a Claude Code session JSONL."),
    output_format: str = typer.Option("table", "--format", help="table or json"),
    cwd: Path = PROJECT,
    no_claude_settings: bool = NO_CLAUDE,
    trust_project_hooks: bool = TRUST,
) -> None:
    """Feed a recorded session through today's hooks and permission rules, without executing any tool: per
    prompt and tool call, what would have been allowed, denied, asked or rewritten."""
    import asyncio

    from hookloop.cli._session import RunOptions, UsageError, build_policy, settings_layers
    from hookloop.command_hooks.dryrun import TranscriptError, read_transcript, replay

    if output_format not in ("table", "json"):
        raise typer.BadParameter(f"{output_format!r}: expected table or json", param_hint="--format")
    _refuse_broken_settings(cwd, no_claude_settings, _load(cwd, no_claude_settings))
    try:
        steps = read_transcript(transcript)
        options = RunOptions(model="-", cwd=cwd.resolve(), include_claude=not no_claude_settings)
        policy = build_policy(options, settings_layers(options))
    except (TranscriptError, UsageError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    console = Console(soft_wrap=True, highlight=False, stderr=output_format == "json")
    config = _runnable(cwd, no_claude_settings, trust_project_hooks, console)
    from hookloop.command_hooks.dryrun import runner_options

    entries = asyncio.run(
        replay(steps, config, project_dir=cwd.resolve(), policy=policy, options=runner_options(config))
    )
    if output_format == "json":
        print(json.dumps({"transcript": str(transcript), "entries": [e.to_json() for e in entries]}, indent=2))
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("line", "step", "verdict", "why"):
        table.add_column(column, overflow="fold")
    colours = {
        "allowed": "green",
        "passed": "green",
        "denied": "red",
        "blocked": "red",
        "stopped": "red",
        "asked": "magenta",
    }
    for entry in entries:
        step = entry.step
        what = step.text[:80] if step.kind == "prompt" else f"{step.tool_name} {dumps(step.tool_input or {})[:100]}"
        verdict = f"[{colours.get(entry.verdict, 'white')}]{entry.verdict}[/]" + (
            " (rewritten)" if entry.rewritten else ""
        )
        why = entry.reason or entry.decided_by
        table.add_row(str(step.line), what, verdict, why)
    console.print(table)
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.verdict] = counts.get(entry.verdict, 0) + 1
    console.print(", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) or "nothing to replay")
