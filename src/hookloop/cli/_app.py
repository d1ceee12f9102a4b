"""The typer application: ``demo``, ``run``, ``resume`` and the ``hooks`` tools."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from hookloop.cli._resume import load_cli_checkpoint, resume_options
from hookloop.cli._session import (
    EXIT_USAGE,
    Approval,
    OutputFormat,
    RunOptions,
    Session,
    UsageError,
)

app = typer.Typer(
    name="hookloop",
    help="An LLM agent runtime whose loop you extend with hooks. Try `hookloop demo`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

OUTPUT_FORMATS = ("text", "json", "stream-json")
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


def fail(message: str) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"hookloop: {message}", markup=False, highlight=False)
    return typer.Exit(EXIT_USAGE)


def approval_from(yes: bool, deny: bool, output: str) -> Approval:
    if yes and deny:
        raise fail("--yes and --deny cannot be used together")
    if yes:
        return "yes"
    if deny:
        return "deny"
    interactive = output == "text" and os.isatty(0) and os.isatty(2)
    return "ask" if interactive else "pause"


def check_choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise fail(f"{name} {value!r}: expected one of {', '.join(choices)}")


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


@app.command()
def run(
    prompt: str = typer.Argument(..., help="What the agent should do."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="PROVIDER:MODEL — anthropic:<m>, openai:<m>, openai-responses:<m>, openai-compatible:<m>@<url>, "
        'scripted:<file>. Default: $HOOKLOOP_MODEL, else "model" in a settings file.',
    ),
    cwd: Path = typer.Option(Path("."), "--cwd", help="The project directory the tools work in."),
    permission_mode: str | None = typer.Option(None, "--permission-mode", help=f"One of {', '.join(MODES)}."),
    max_turns: int = typer.Option(50, "--max-turns", min=1, help="Model requests before the run stops."),
    settings: list[Path] = typer.Option([], "--settings", help="An extra settings file (highest precedence)."),
    no_claude_settings: bool = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files."),
    trust_project_hooks: bool = typer.Option(
        False, "--trust-project-hooks", help="Run this project's hooks without recorded trust (non-interactive use)."
    ),
    output_format: str = typer.Option(
        "text", "--output-format", help="text, json or stream-json (one JSON event a line)."
    ),
    yes: bool = typer.Option(False, "--yes", help="Approve every permission ask once, without asking."),
    deny: bool = typer.Option(False, "--deny", help="Deny every permission ask."),
    checkpoint_dir: Path | None = typer.Option(None, "--checkpoint-dir", help="Where paused runs are saved."),
    system: str | None = typer.Option(None, "--system", help="Replace the default system prompt."),
    sandbox: bool = typer.Option(
        False,
        "--sandbox",
        help="Run Bash commands and project hooks in the OS sandbox; refuse to start without one (`hookloop doctor`).",
    ),
    mcp_config: list[Path] = typer.Option(
        [], "--mcp-config", help='An MCP config file ({"mcpServers": …}, Claude Code\'s format); repeatable.'
    ),
    strict_mcp_config: bool = typer.Option(
        False, "--strict-mcp-config", help="Use only the --mcp-config servers (not .mcp.json or settings)."
    ),
    durable: str | None = typer.Option(
        None,
        "--durable",
        metavar="[URL]",
        help="A durable run in the database at URL (default: $HOOKLOOP_DURABLE_URL, else HOOKLOOP_HOME): prints "
        "the run id, returns when it finishes or pauses; see hookloop runs / hookloop worker.",
    ),
) -> None:
    """Run an agent with the built-in tools (Read, Write, Edit, Bash, Glob, Grep) in a project directory.

    MCP servers come from .mcp.json (project servers start once approved), settings ``mcpServers`` and
    --mcp-config files; their tools are named mcp__<server>__<tool>.

    Permission asks are put to you in the terminal; without a terminal (and without --yes/--deny) the run
    pauses, writes a checkpoint and exits with code 3. Ctrl-C cancels cleanly (exit 130; SIGTERM the same, exit
    143); twice quits at once.
    """
    check_choice("--output-format", output_format, OUTPUT_FORMATS)
    check_choice("--permission-mode", permission_mode, MODES)
    model = (
        model or os.environ.get("HOOKLOOP_MODEL") or _settings_model(cwd.resolve(), settings, not no_claude_settings)
    )
    if not model:
        raise fail('no model: pass --model PROVIDER:MODEL, set HOOKLOOP_MODEL, or put "model" in a settings file')
    options = RunOptions(
        model=model,
        cwd=cwd.resolve(),
        permission_mode=permission_mode,  # type: ignore[arg-type]
        max_turns=max_turns,
        settings=[p.resolve() for p in settings],
        include_claude=not no_claude_settings,
        trust_project_hooks=trust_project_hooks,
        checkpoint_dir=checkpoint_dir.resolve() if checkpoint_dir else None,
        system=system,
        sandbox=sandbox,
        mcp_config=[p.resolve() for p in mcp_config],
        strict_mcp_config=strict_mcp_config,
    )
    if durable is not None:
        from hookloop.cli._durable import run_durable

        raise typer.Exit(run_durable(durable, prompt, options, approval_from(yes, deny, "json"), output_format))
    session = _session(options, output_format, approval_from(yes, deny, output_format))

    async def start(worker: Any) -> Any:
        return await worker.run(prompt)

    raise typer.Exit(session.execute(start))


def _settings_model(cwd: Path, extra: list[Path], include_claude: bool) -> str | None:
    """The ``model`` of the highest-precedence settings file that names one in PROVIDER:MODEL form (Claude
    Code's own ``"model": "sonnet"`` aliases are not hookloop model strings and are ignored)."""
    from hookloop.settings import SettingsError, read_settings_layers

    try:
        layers = read_settings_layers(cwd, extra=extra, include_claude=include_claude)
    except SettingsError:
        return None  # reported properly when the session loads its settings
    for _, data in reversed(layers):
        value = data.get("model")
        if isinstance(value, str) and ":" in value:
            return value
    return None


@app.command()
def resume(
    checkpoint: Path = typer.Argument(..., help="A checkpoint file written by a paused or cancelled run."),
    yes: bool = typer.Option(False, "--yes", help="Approve every pending call once."),
    deny: bool = typer.Option(False, "--deny", help="Deny every pending call."),
    message: str | None = typer.Option(None, "--message", help="Continue the conversation with this message."),
    model: str | None = typer.Option(None, "--model", "-m", help="Override the model the run used."),
    cwd: Path | None = typer.Option(None, "--cwd", help="Resume in this directory (default: the run's own)."),
    permission_mode: str | None = typer.Option(None, "--permission-mode", help=f"One of {', '.join(MODES)}."),
    settings: list[Path] = typer.Option([], "--settings", help="An extra settings file (highest precedence)."),
    no_claude_settings: bool = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files."),
    trust_project_hooks: bool = typer.Option(
        False, "--trust-project-hooks", help="Run this project's hooks without recorded trust (non-interactive use)."
    ),
    fork: bool = typer.Option(False, "--fork", help="Resume a checkpoint that was already resumed, as a new run."),
    output_format: str = typer.Option("text", "--output-format", help="text, json or stream-json."),
    mcp_config: list[Path] = typer.Option([], "--mcp-config", help="An MCP config file (as for run); repeatable."),
    strict_mcp_config: bool = typer.Option(False, "--strict-mcp-config", help="Use only the --mcp-config servers."),
) -> None:
    """Continue a paused run in this process — decisions from --yes/--deny, or asked in the terminal.

    The checkpoint must be authentic (made with this user's key) and not resumed before (--fork to resume it
    again). The current settings and flags decide the permission policy, never the checkpoint: every call that
    is not done is checked again, and the run must continue in the directory it worked in (or --cwd).
    """
    check_choice("--output-format", output_format, OUTPUT_FORMATS)
    check_choice("--permission-mode", permission_mode, MODES)
    try:
        saved, saved_options = load_cli_checkpoint(checkpoint)
        options, notes = resume_options(
            saved_options,
            model=model,
            cwd=cwd,
            permission_mode=permission_mode,  # type: ignore[arg-type]
            settings=settings,
            include_claude=not no_claude_settings,
            trust_project_hooks=trust_project_hooks,
        )
    except UsageError as exc:
        raise fail(f"{checkpoint}: {exc}" if not str(exc).startswith(str(checkpoint)) else str(exc)) from None
    # MCP servers run code: like the settings, they come from this invocation, never from the checkpoint.
    options.mcp_config, options.strict_mcp_config = [p.resolve() for p in mcp_config], strict_mcp_config
    if saved_options is not None and saved_options.mcp_config and not options.mcp_config:
        notes.append("note: the paused run had --mcp-config files; this resume reads only the ones you pass")
    approval = approval_from(yes, deny, output_format)
    session = _session(options, output_format, approval)
    session.session_id = saved.session_id
    console = session.err
    for note in notes:
        console.print(note, markup=False, highlight=False)

    async def start(worker: Any) -> Any:
        from hookloop import Approve, Reject, ResumeDecision

        decisions: dict[str, ResumeDecision] = {}
        for call in saved.pending:
            if approval == "yes":
                decisions[call.call_id] = Approve()
            elif approval == "deny":
                decisions[call.call_id] = Reject("denied by --deny")
            elif approval == "ask":
                answer = await worker.approvers[-1](call)
                decisions[call.call_id] = answer
            else:
                raise UsageError(
                    f"{len(saved.pending)} call(s) wait for a decision: pass --yes or --deny (no terminal to ask in)"
                )
        return await worker.resume(saved, decisions, messages=message, fork=fork)

    try:
        code = session.execute(start)
    except UsageError as exc:
        console.print(f"hookloop: {exc}", markup=False, highlight=False)
        code = EXIT_USAGE
    raise typer.Exit(code)


def _session(options: RunOptions, output: str, approval: Approval) -> Session:
    out = Console(soft_wrap=True, highlight=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    fmt: OutputFormat = "json" if output == "json" else "stream-json" if output == "stream-json" else "text"
    return Session(options=options, output=fmt, approval=approval, out=out, err=err)


def _register_hooks() -> None:
    from hookloop.cli._doctor import doctor
    from hookloop.cli._hooks_cmd import hooks_app
    from hookloop.cli._serve import serve

    app.add_typer(hooks_app, name="hooks")
    app.command()(doctor)
    app.command()(serve)
    _register_durable()


def _register_durable() -> None:
    from hookloop.cli._runs import runs_app, worker

    app.add_typer(runs_app, name="runs")
    app.command()(worker)


_register_hooks()
