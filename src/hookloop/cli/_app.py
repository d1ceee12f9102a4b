"""The typer application: ``demo``, ``run``, ``resume`` and the ``hooks`` tools."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from hookloop.cli._print import ClaudeSession
    from hookloop.cli._session import Approval, RunOptions
    from hookloop.cli._store import SavedSession

# Each command imports what it needs when it runs, and the app registers only the command it was asked for
# (register): `hookloop runs list` loads neither the Worker nor the chat, `hookloop --help` no backend.

app = typer.Typer(
    name="hookloop",
    help="An LLM agent runtime whose loop you extend with hooks. Try `hookloop demo`.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_USAGE = 2  # as hookloop.cli._session.EXIT_USAGE
OUTPUT_FORMATS = ("text", "json", "stream-json")
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


def fail(message: str) -> typer.Exit:
    from hookloop.cli._errors import print_error

    print_error(message)
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
def _root(
    version: bool = typer.Option(
        False, "--version", "-v", is_eager=True, callback=lambda value: print_version(value), help="Show the version."
    ),
) -> None:
    """hookloop: run agents; hang logic on every point of the loop.

    `hookloop -p PROMPT` runs one prompt and prints the answer (as `hookloop run`); `hookloop chat` talks
    (flags without a command, as in `hookloop -c`, start a chat).
    """


def print_version(value: bool) -> None:
    if value:
        from hookloop.cli._print import version_line

        print(version_line())
        raise typer.Exit(0)


@app.command()
def demo(
    yes: bool = typer.Option(False, "--yes", "-y", help="Answer approval prompts with 'allow once'."),
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary project (removed at the end otherwise)."),
) -> None:
    """Run a whole agent session offline: scripted model, tools, hooks, an approval — streamed to the terminal."""
    import asyncio

    from rich.console import Console

    from hookloop.cli.demo import run_demo

    console = Console()
    if not yes and not console.is_interactive:
        yes = True  # no terminal to ask in: behave as --yes, and say so
        console.print("[dim](no interactive terminal: approvals are answered as with --yes)[/]")
    raise typer.Exit(asyncio.run(run_demo(console, yes=yes, keep=keep)))


@app.command()
def run(
    prompt: str | None = typer.Argument(None, help="What the agent should do; '-' (or nothing) reads it from stdin."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="PROVIDER:MODEL — anthropic:<m>, openai:<m>, openai-responses:<m>, openai-compatible:<m>@<url>, "
        "scripted:<file> — or a well-known name (claude-sonnet-4-6, gpt-4o) or a Claude Code alias (sonnet, opus, "
        'haiku). Default: $HOOKLOOP_MODEL, $ANTHROPIC_MODEL, else "model" in a settings file.',
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
    system: str | None = typer.Option(None, "--system", "--system-prompt", help="Replace the default system prompt."),
    sandbox: bool = typer.Option(
        False,
        "--sandbox",
        help="Run Bash commands and project hooks in the OS sandbox; refuse to start without one (`hookloop doctor`).",
    ),
    mcp_config: list[str] = typer.Option(
        [], "--mcp-config", help='An MCP config file or JSON ({"mcpServers": …}, Claude Code\'s format); repeatable.'
    ),
    strict_mcp_config: bool = typer.Option(
        False, "--strict-mcp-config", help="Use only the --mcp-config servers (not .mcp.json or settings)."
    ),
    allowed_tools: list[str] = typer.Option(
        [],
        "--allowedTools",
        "--allowed-tools",
        help='Allow rules: "Bash(git log:*)" Read (comma or space separated).',
    ),
    disallowed_tools: list[str] = typer.Option(
        [], "--disallowedTools", "--disallowed-tools", help="Deny rules; a bare tool name also hides the tool."
    ),
    append_system_prompt: str | None = typer.Option(
        None, "--append-system-prompt", help="Add this to the end of the system prompt."
    ),
    continue_: bool = typer.Option(False, "--continue", "-c", help="Continue the latest session in this directory."),
    resume_id: str | None = typer.Option(None, "--resume", "-r", help="Continue the session with this id."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tool results and model requests; json: every message."),
    print_: bool = typer.Option(False, "--print", "-p", help="Print the answer and exit (what run always does)."),
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

    As `claude -p`: `hookloop -p PROMPT` is this command; the prompt may come from stdin ('-', or piped input
    added after it); --output-format json prints Claude Code's result fields (result, subtype, is_error,
    num_turns, duration_ms, total_cost_usd, usage, session_id, …), stream-json its system/assistant/user/result
    messages among hookloop's events. The session is saved: -c continues the latest one here, --resume ID one.
    """
    given = locals()  # the flags, before anything else is a local name
    from hookloop.cli._print import read_prompt
    from hookloop.cli._session import UsageError

    check_choice("--output-format", output_format, OUTPUT_FORMATS)
    options, restored = run_options(**run_flags(given))
    try:
        prompt = read_prompt(prompt)
    except UsageError as exc:
        raise fail(str(exc)) from None
    if durable is not None:
        from hookloop.cli._durable import run_durable

        raise typer.Exit(run_durable(durable, prompt, options, approval_from(yes, deny, "json"), output_format))
    session = _session(options, output_format, approval_from(yes, deny, output_format))
    session.verbose = verbose
    if restored is not None:
        session.session_id, session.restored = restored.session_id, restored

    async def start(worker: Any) -> Any:
        return await worker.run(prompt)

    raise typer.Exit(session.execute(session.wrap(start)))


def chat(
    model: str | None = typer.Option(None, "--model", "-m", help="PROVIDER:MODEL, as for run."),
    cwd: Path = typer.Option(Path("."), "--cwd", help="The project directory the tools work in."),
    permission_mode: str | None = typer.Option(None, "--permission-mode", help="As for run."),
    max_turns: int = typer.Option(50, "--max-turns", min=1, help="Model requests per message before it stops."),
    settings: list[Path] = typer.Option([], "--settings", help="An extra settings file (highest precedence)."),
    no_claude_settings: bool = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files."),
    trust_project_hooks: bool = typer.Option(
        False, "--trust-project-hooks", help="Run this project's hooks without recorded trust."
    ),
    system: str | None = typer.Option(None, "--system", "--system-prompt", help="Replace the default system prompt."),
    append_system_prompt: str | None = typer.Option(None, "--append-system-prompt", help="Add to the system prompt."),
    allowed_tools: list[str] = typer.Option([], "--allowedTools", "--allowed-tools", help="Allow rules."),
    disallowed_tools: list[str] = typer.Option([], "--disallowedTools", "--disallowed-tools", help="Deny rules."),
    mcp_config: list[str] = typer.Option([], "--mcp-config", help="An MCP config file or JSON; repeatable."),
    strict_mcp_config: bool = typer.Option(False, "--strict-mcp-config", help="Use only the --mcp-config servers."),
    sandbox: bool = typer.Option(False, "--sandbox", help="Run Bash commands and project hooks in the OS sandbox."),
    continue_: bool = typer.Option(False, "--continue", "-c", help="Continue the latest session in this directory."),
    resume_id: str | None = typer.Option(None, "--resume", "-r", help="Continue the session with this id."),
    yes: bool = typer.Option(False, "--yes", help="Approve every permission ask once, without asking."),
    deny: bool = typer.Option(False, "--deny", help="Deny every permission ask."),
) -> None:
    """Talk to the agent, turn after turn: Ctrl-C cancels a turn, /approve answers an ask, /hooks lists hooks.

    The session is saved after every turn; --continue goes on with the latest one of this directory, --resume
    ID with a named one. /help lists the commands.
    """
    given = locals()  # the flags, before anything else is a local name
    from rich.console import Console

    from hookloop.cli._chat import Chat

    if yes and deny:
        raise fail("--yes and --deny cannot be used together")
    options, restored = run_options(**run_flags(given))
    approval: Approval = "yes" if yes else "deny" if deny else "ask"
    out = Console(soft_wrap=True, highlight=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    raise typer.Exit(Chat(options, approval, out, err, restored).run())


def run_flags(given: dict[str, Any]) -> dict[str, Any]:
    """The parameters of :func:`run_options` among a command's flags (its ``locals()`` on entry)."""
    return {name: given[name] for name in _RUN_FLAGS if name in given}


def run_options(
    *,
    model: str | None,
    cwd: Path,
    permission_mode: str | None,
    max_turns: int,
    settings: list[Path],
    no_claude_settings: bool,
    trust_project_hooks: bool,
    system: str | None,
    append_system_prompt: str | None,
    sandbox: bool,
    mcp_config: list[str],
    strict_mcp_config: bool,
    allowed_tools: list[str],
    disallowed_tools: list[str],
    continue_: bool,
    resume_id: str | None,
    checkpoint_dir: Path | None = None,
) -> tuple[RunOptions, SavedSession | None]:
    """What ``run`` and ``chat`` start from, out of their common flags: the options, and the saved session that
    ``--continue`` / ``--resume ID`` names (None without them). The model is ``--model``, else
    ``$HOOKLOOP_MODEL``, ``$ANTHROPIC_MODEL``, the continued session's, the settings files' ``model``; a
    continued scripted model plays on where the session left it. A bad flag is a usage error (typer.Exit 2)."""
    from hookloop.cli._print import mcp_config_paths, split_tool_rules, system_prompt
    from hookloop.cli._session import RunOptions, UsageError
    from hookloop.cli._store import find_session

    check_choice("--permission-mode", permission_mode, MODES)
    try:
        restored = find_session(cwd, resume_id) if continue_ or resume_id is not None else None
        allowed, disallowed = split_tool_rules(allowed_tools), split_tool_rules(disallowed_tools)
    except UsageError as exc:
        raise fail(str(exc)) from None
    model = (
        model
        or os.environ.get("HOOKLOOP_MODEL")
        or os.environ.get("ANTHROPIC_MODEL")
        or (restored.options.model if restored is not None else None)
        or _settings_model(cwd.resolve(), settings, not no_claude_settings)
    )
    if not model:
        raise fail(
            "no model: pass --model (e.g. --model sonnet or --model openai:gpt-4o), set HOOKLOOP_MODEL, or put "
            '"model" in a settings file'
        )
    options = RunOptions(
        model=model,
        cwd=cwd.resolve(),
        permission_mode=permission_mode,  # type: ignore[arg-type]
        max_turns=max_turns,
        settings=[p.resolve() for p in settings],
        include_claude=not no_claude_settings,
        trust_project_hooks=trust_project_hooks,
        checkpoint_dir=checkpoint_dir.resolve() if checkpoint_dir else None,
        system=system_prompt(system, append_system_prompt),
        sandbox=sandbox,
        mcp_config=mcp_config_paths(mcp_config),
        strict_mcp_config=strict_mcp_config,
        allowed_tools=allowed,
        disallowed_tools=disallowed,
    )
    if restored is not None and restored.options.model == options.model:
        options.scripted_position = restored.options.scripted_position
    return options, restored


_RUN_FLAGS = tuple(inspect.signature(run_options).parameters)


def _settings_model(cwd: Path, extra: list[Path], include_claude: bool) -> str | None:
    """The ``model`` of the highest-precedence settings file that sets one — ``PROVIDER:MODEL``, a well-known
    name (``claude-sonnet-4-6``, ``gpt-4o``) or a Claude Code alias (``sonnet``, ``opus``, ``haiku``); one that
    names no model hookloop can run is an error naming the file."""
    from hookloop.cli._errors import describe_error
    from hookloop.providers.select import ModelSpecError, resolve_model_string
    from hookloop.settings import SettingsError, read_settings_layers

    try:
        layers = read_settings_layers(cwd, extra=extra, include_claude=include_claude)
    except SettingsError as exc:
        raise fail(describe_error(exc)) from None
    for path, data in reversed(layers):
        value = data.get("model")
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise fail(f'{path}: "model": expected a model name such as "sonnet" or "openai:gpt-4o"')
        try:
            return resolve_model_string(value)
        except ModelSpecError as exc:
            raise fail(f'{path}: "model": {describe_error(exc)}') from None
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
    from hookloop.cli._resume import load_cli_checkpoint, resume_options
    from hookloop.cli._session import UsageError

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
        raise fail(str(exc) if str(checkpoint) in str(exc) else f"{checkpoint}: {exc}") from None
    if saved.pause_kind == "turn_end" and not saved.pending and message is None:
        # Nothing waits for a decision (a Ctrl-C or on_turn_end checkpoint): without a message the run would
        # finish at once, doing nothing. Refused before the checkpoint is consumed, so it can be retried.
        import shlex

        again = shlex.join(["hookloop", "resume", str(checkpoint), "--message", "what to do next"])
        raise fail(f"{checkpoint}: the run stopped ({saved.reason}) with nothing waiting for a decision; "
                   f"continue it with a message: {again}")  # fmt: skip
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
        code = session.execute(session.wrap(start))
    except UsageError as exc:
        from hookloop.cli._errors import print_error

        print_error(exc, console)
        code = EXIT_USAGE
    raise typer.Exit(code)


def _session(options: RunOptions, output: str, approval: Approval) -> ClaudeSession:
    from rich.console import Console

    from hookloop.cli._print import ClaudeSession
    from hookloop.cli._session import OutputFormat

    out = Console(soft_wrap=True, highlight=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    fmt: OutputFormat = "json" if output == "json" else "stream-json" if output == "stream-json" else "text"
    return ClaudeSession(options=options, output=fmt, approval=approval, out=out, err=err)


def _hooks() -> None:
    from hookloop.cli._hooks_cmd import hooks_app

    app.add_typer(hooks_app, name="hooks")


def _doctor() -> None:
    from hookloop.cli._doctor import doctor

    app.command()(doctor)


def _serve() -> None:
    from hookloop.cli._serve import serve

    app.command()(serve)


def _chat() -> None:
    app.command()(chat)


def _runs() -> None:
    from hookloop.cli._runs import runs_app

    app.add_typer(runs_app, name="runs")


def _worker() -> None:
    from hookloop.cli._runs import worker

    app.command()(worker)


_VERBS: dict[str, Callable[[], None]] = {
    "hooks": _hooks,
    "doctor": _doctor,
    "serve": _serve,
    "chat": _chat,
    "runs": _runs,
    "worker": _worker,
}
"""The commands defined in modules of their own, in the order the help lists them (after demo, run, resume)."""
_registered: set[str] = set()


def register(verb: str | None = None) -> typer.Typer:
    """The app, with the command ``verb`` added (importing only its module); with every command when ``verb`` is
    None or names none of them (the root help, a shell-completion request, a mistyped command's message)."""
    for name in [verb] if verb in _VERBS else list(_VERBS):
        if name not in _registered:
            _VERBS[name]()
            _registered.add(name)
    return app
