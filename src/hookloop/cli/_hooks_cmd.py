"""``hookloop hooks list | validate | trust | untrust`` — see and check the hook configuration."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from hookloop.command_hooks.config import HookConfig, load_hook_config, resolve_hookloop_home
from hookloop.command_hooks.model import ClineScript, CommandHandler, ConfiguredHook, HttpHandler
from hookloop.command_hooks.trust import is_trusted, project_config_digest, trust, untrust
from hookloop.permissions import PermissionConfigError

hooks_app = typer.Typer(
    name="hooks",
    help="See, check, try and trust the hook configuration (Claude Code, Cline and hookloop settings).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

PROJECT = typer.Option(Path("."), "--cwd", help="The project directory.")
NO_CLAUDE = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files.")


def _load(cwd: Path, no_claude: bool) -> HookConfig:
    return load_hook_config(cwd.resolve(), include_claude=not no_claude)


def describe_handler(hook: ConfiguredHook) -> str:
    handler = hook.handler
    if isinstance(handler, CommandHandler):
        if handler.args is not None:
            return " ".join([handler.command, *handler.args])
        return handler.command
    if isinstance(handler, HttpHandler):
        return f"POST {handler.url}"
    assert isinstance(handler, ClineScript)
    return handler.path


@hooks_app.command("list")
def list_hooks(
    cwd: Path = PROJECT,
    no_claude_settings: bool = NO_CLAUDE,
    output_format: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """The effective hooks: event, matcher, what runs, timeout, the file it comes from, and trust state."""
    config = _load(cwd, no_claude_settings)
    trusted = is_trusted(cwd.resolve())
    rows = []
    for hook in config.hooks:
        project = hook.source.project_level
        rows.append(
            {
                "event": hook.event,
                "matcher": hook.matcher or "*",
                "type": type(hook.handler).__name__.replace("Handler", "").replace("ClineScript", "cline").lower(),
                "run": describe_handler(hook),
                "timeout": hook.timeout,
                "source": hook.source.path,
                "layer": hook.source.label,
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
        table.add_row(
            str(row["event"]), str(row["matcher"]), str(row["type"]), str(row["run"]), timeout,
            f"{row['source']} [{row['layer']}]", str(row["trust"]),
        )  # fmt: skip
    console.print(table)
    if config.disabled:
        console.print("[yellow]disableAllHooks is set: no hook runs[/]")


@hooks_app.command()
def validate(cwd: Path = PROJECT, no_claude_settings: bool = NO_CLAUDE) -> None:
    """Check every settings file (hooks and permissions); problems are reported with file and JSON path.
    Exit code 1 when any error is found."""
    from hookloop.cli._session import RunOptions, UsageError, build_policy, settings_layers

    config = _load(cwd, no_claude_settings)
    console = Console(soft_wrap=True, highlight=False)
    errors = 0
    for diagnostic in config.diagnostics:
        colour = {"error": "red", "warning": "yellow"}.get(diagnostic.severity, "dim")
        console.print(f"[{colour}]{diagnostic.severity}[/]: {diagnostic}", markup=True)
        errors += diagnostic.severity == "error"
    options = RunOptions(model="-", cwd=cwd.resolve(), include_claude=not no_claude_settings)
    try:
        build_policy(options, settings_layers(options))
    except (UsageError, PermissionConfigError) as exc:
        console.print(f"[red]error[/]: {exc}")
        errors += 1
    if errors:
        console.print(f"{errors} error(s)")
        raise typer.Exit(1)
    console.print(f"ok: {len(config.hooks)} hook(s), settings valid")


@hooks_app.command("trust")
def trust_cmd(cwd: Path = PROJECT) -> None:
    """Trust this project's hook configuration (its hash is recorded; a changed configuration needs trust
    again). Project hooks are code from the repository: read them first (`hookloop hooks list`)."""
    digest = trust(cwd.resolve())
    Console(highlight=False).print(f"trusted {cwd.resolve()} ({digest}) in {resolve_hookloop_home() / 'trusted.json'}")


@hooks_app.command("untrust")
def untrust_cmd(cwd: Path = PROJECT) -> None:
    """Remove the recorded trust for this project's hook configuration."""
    removed = untrust(cwd.resolve())
    Console(highlight=False).print(
        f"untrusted {cwd.resolve()}"
        if removed
        else f"{cwd.resolve()} was not trusted (digest {project_config_digest(cwd.resolve())})"
    )
