"""The typer application."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console

app = typer.Typer(
    name="hookloop",
    help="An LLM agent runtime whose loop you extend with hooks. Try `hookloop demo`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """hookloop: run agents; hang logic on every point of the loop."""


@app.command()
def demo(
    yes: bool = typer.Option(False, "--yes", "-y", help="Answer approval prompts with 'allow once'."),
) -> None:
    """Run a whole agent session offline: scripted model, tools, hooks, an approval — streamed to the terminal."""
    from hookloop.cli.demo import run_demo

    console = Console()
    if not yes and not console.is_interactive:
        yes = True  # no terminal to ask in: behave as --yes, and say so
        console.print("[dim](no interactive terminal: approvals are answered as with --yes)[/]")
    raise typer.Exit(asyncio.run(run_demo(console, yes=yes)))
