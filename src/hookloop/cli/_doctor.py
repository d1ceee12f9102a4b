"""``hookloop doctor``: what this machine offers hookloop — today, whether an OS sandbox can run here."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def doctor(
    cwd: Path = typer.Option(Path("."), "--cwd", help="The project whose settings to read."),
    no_claude_settings: bool = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files."),
) -> None:
    """Say whether the OS sandbox for Bash commands and hooks is available here, and why not.

    Exit code 0 when a sandbox backend works, 1 when none does (commands would run unsandboxed, or, with
    sandbox.failIfUnavailable, not at all), 2 for unreadable settings.
    """
    from hookloop.sandbox import Sandbox, SandboxConfigError
    from hookloop.settings import SettingsError, read_settings_layers

    out = Console(highlight=False, soft_wrap=True)
    if not cwd.is_dir():
        from hookloop.cli._errors import print_error

        print_error(f"--cwd {cwd}: not a directory")
        raise typer.Exit(2)
    try:
        layers = read_settings_layers(cwd.resolve(), include_claude=not no_claude_settings)
        sandbox = Sandbox.from_settings(layers, workspace=cwd.resolve())
    except (SettingsError, SandboxConfigError) as exc:
        from hookloop.cli._errors import print_error

        print_error(exc)
        raise typer.Exit(2) from None
    availability = sandbox.availability
    state = "available" if availability.available else "NOT available"
    out.print(f"sandbox backend: {sandbox.backend.name} — {state}: {availability.reason}", markup=False)
    for name, value in availability.details.items():
        out.print(f"  {name}: {value}", markup=False)
    settings = sandbox.settings
    enabled = "on" if settings.enabled else "off (turn it on with sandbox.enabled or hookloop run --sandbox)"
    out.print(f"sandbox in settings: {enabled}", markup=False)
    if settings.enabled and not availability.available:
        consequence = "hookloop refuses to start" if settings.fail_if_unavailable else "commands run UNSANDBOXED"
        out.print(f"  enabled but unavailable: {consequence}", markup=False)
    for note in settings.notes:
        out.print(f"  note: {note}", markup=False)
    raise typer.Exit(0 if availability.available else 1)
