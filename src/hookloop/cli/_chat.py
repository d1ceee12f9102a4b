"""``hookloop chat``: a conversation with the agent in the terminal, turn after turn, in one Worker.

At the ``>`` prompt a line is sent to the model; its answer streams, tool calls and hook decisions show as in
``hookloop run``. Up and down recall earlier prompts (kept in ``$HOOKLOOP_HOME/chat_history``). Ctrl-C during a
turn cancels that turn — its tools and hooks are stopped, the history keeps what happened — and the
conversation goes on; a second Ctrl-C quits at once. At the prompt Ctrl-C clears it, twice in a row (or
Ctrl-D, or ``/exit``) ends the session. SIGTERM cancels the turn and ends the session (exit 143).

A permission ask stops the turn and waits at the prompt: ``/approve`` allows the call once, ``/always`` adds
the narrowest rule that covers it, ``/deny [reason]`` refuses it; with several calls waiting, a number picks
one (``/approve 2``). Any other text refuses the waiting calls with that text as the reason, which the model
reads — "no, do it this way". ``--yes`` / ``--deny`` answer every ask without stopping.

Other commands: ``/hooks`` lists the configured hooks and whether they run here, ``/cost`` the tokens and cost
so far, ``/session`` the session id and how to come back to it, ``/help``. A line starting with ``//`` is sent
as a message starting with ``/``.

The session is saved after every turn (see :mod:`hookloop.cli._store`): ``hookloop chat --continue`` (or
``hookloop -p … --continue``) goes on with the latest conversation of the project, ``--resume ID`` with a
named one, in a new process. As with ``claude``, flags without a command start a chat: ``hookloop -c`` is
``hookloop chat -c``.

Without a terminal (stdin piped) the chat reads one message a line and prints no prompts, so stdout holds only
the answers; asks still wait for a ``/approve`` line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from hookloop import AllowAlways, Approve, Cancelled, Finished, Paused, Reject, ResumeDecision, Worker, WorkerError
from hookloop._frozen import dumps
from hookloop._reaper import guard_descendants
from hookloop.cli._mcp import run_with_mcp_servers, session_mcp_plan
from hookloop.cli._print import (
    RunTracker,
    remove_disallowed_tools,
)
from hookloop.cli._session import (
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Approval,
    DomainApprover,
    RunOptions,
    TextRenderer,
    UsageError,
    build_worker,
    fixed_approver,
    home,
    kill_child_groups,
)
from hookloop.cli._store import SavedSession, restore, save_session
from hookloop.outcome import Outcome
from hookloop.permissions import suggest_rule

__all__ = ["Chat"]

HELP = """commands:
  /approve [N]       allow the waiting call(s) once
  /always [N]        allow and add the narrowest rule that covers the call
  /deny [reason]     refuse the waiting call(s); any other text refuses them with that text as the reason
  /hooks             the configured hooks, and whether they run in this session
  /cost              tokens and cost so far
  /session           this session's id and how to continue it later
  /help              this list
  /exit, /quit       end the session (Ctrl-D does too)
  //text             send "/text" as a message"""


class Chat:
    """One interactive session: a Worker, a prompt loop, an event loop that runs only during a turn."""

    def __init__(
        self, options: RunOptions, approval: Approval, out: Console, err: Console, restored: SavedSession | None
    ) -> None:
        self.options, self.approval, self.out, self.err = options, approval, out, err
        self.restored = restored
        self.session_id = restored.session_id if restored is not None else None
        self.pending: Paused | None = None
        self.decisions: dict[str, ResumeDecision] = {}
        self.exit_code = EXIT_OK
        self.tracker: RunTracker | None = None
        self.loop = asyncio.new_event_loop()
        self.worker: Worker | None = None
        self.renderer = TextRenderer(out, err)
        self.pause: Callable[[], None] = getattr(self.renderer, "pause", self.renderer.stop_spinner)
        """Before saying something between events: the model's text line closed, no spinner."""
        self._mcp_done: asyncio.Event | None = None
        self._mcp_task: asyncio.Task[Any] | None = None

    # -- setup ------------------------------------------------------------------------------------------

    def _build(self) -> Worker:
        from hookloop.items import new_id

        session_id = self.session_id or new_id("session")
        self.session_id = session_id
        transcript = home() / "sessions" / f"{session_id}.jsonl"
        worker, notes = build_worker(self.options, transcript=transcript, session_id=session_id)
        self.worker = worker
        plan = session_mcp_plan(self.options, self.approval, self.err)
        for note in [*notes, *plan.notes]:
            self.err.print(f"[yellow]{escape(note)}[/]", highlight=False)
        fixed = fixed_approver(self.approval)
        if fixed is not None:
            worker.approvers.append(fixed)
        sandbox = getattr(worker.permissions, "sandbox", None)
        if sandbox is not None:
            sandbox.ask_domain = DomainApprover(self.approval, self.err, self.pause).ask
        guard_descendants()
        worker.subscribe(self.renderer)
        if plan.servers:
            self._open_mcp(worker, plan)
        if self.restored is not None:
            for note in restore(worker, self.restored):
                self.err.print(note, markup=False, highlight=False)
        remove_disallowed_tools(worker, self.options.disallowed_tools)
        mode = self.options.permission_mode or (worker.permissions.mode if worker.permissions else "default")
        self.tracker = RunTracker(session_id=session_id, cwd=self.options.cwd, permission_mode=str(mode))
        self.tracker.attach(worker)
        return worker

    def _open_mcp(self, worker: Worker, plan: Any) -> None:
        """Open the MCP servers in a task that holds them for the whole session (the loop only runs during
        turns; between them the servers simply wait)."""
        ready, done = asyncio.Event(), asyncio.Event()
        self._mcp_done = done

        async def hold(_: Worker) -> None:
            ready.set()
            await done.wait()

        async def opened() -> None:
            task = asyncio.ensure_future(run_with_mcp_servers(plan, worker, self.options.cwd, self.err, hold))
            self._mcp_task = task
            waiting = asyncio.ensure_future(ready.wait())
            await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            if task.done():
                task.result()

        self.loop.run_until_complete(opened())

    def _close(self) -> None:
        if self._mcp_done is not None and self._mcp_task is not None:
            self._mcp_done.set()
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self._mcp_task)
        if self.worker is not None:
            self.worker.close()
        self.renderer.stop_spinner()
        self.loop.close()

    # -- the prompt loop ----------------------------------------------------------------------------------

    def run(self) -> int:
        """The session; returns the exit code."""
        try:
            worker = self._build()
        except UsageError as exc:
            self.err.print(f"hookloop: {exc}", markup=False, highlight=False)
            self.loop.close()
            return EXIT_USAGE
        try:
            self._greet(worker)
            history = _enable_history()
            interrupts = 0
            terminal = sys.stdin.isatty()  # piped: one message a line, and stdout holds only the answers
            while self.exit_code == EXIT_OK:
                try:
                    line = input(("approve? > " if self.pending else "> ") if terminal else "")
                except EOFError:
                    self.err.print("")
                    break
                except KeyboardInterrupt:
                    interrupts += 1
                    if interrupts >= 2:
                        self.err.print("")
                        break
                    self.err.print("\n(Ctrl-C again, Ctrl-D or /exit to quit)", highlight=False)
                    continue
                interrupts = 0
                if history is not None:
                    history()
                if not self._handle(worker, line):
                    break
            if self.tracker is not None and self.tracker.requests:
                self._cost()
            return self.exit_code
        finally:
            self._save(worker)
            self._close()

    def _greet(self, worker: Worker) -> None:
        what = "continuing session" if self.restored is not None else "session"
        self.err.print(
            f"[bold]hookloop chat[/] · {what} {self.session_id} · model {escape(self.options.model)} · "
            f"{len(worker.history)} items of history · /help for commands",
            highlight=False,
        )

    def _handle(self, worker: Worker, line: str) -> bool:
        """One line from the prompt; False ends the session."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("//"):
            return self._message(worker, text[1:])
        if text.startswith("/"):
            command, _, rest = text.partition(" ")
            return self._command(worker, command.lower(), rest.strip())
        if self.pending is not None:
            if text.lower() in ("y", "yes"):
                return self._decide(worker, "/approve", "")
            if text.lower() in ("a", "always"):
                return self._decide(worker, "/always", "")
            if text.lower() in ("n", "no"):
                return self._decide(worker, "/deny", "")
            return self._decide(worker, "/deny", text)
        return self._message(worker, text)

    def _command(self, worker: Worker, command: str, rest: str) -> bool:
        if command in ("/exit", "/quit"):
            return False
        if command in ("/approve", "/always", "/deny", "/allow"):
            if self.pending is None:
                self.err.print("nothing is waiting for a decision", highlight=False)
                return True
            return self._decide(worker, "/approve" if command == "/allow" else command, rest)
        if command == "/hooks":
            self._list_hooks()
        elif command == "/cost":
            self._cost()
        elif command == "/session":
            self.err.print(
                f"session {self.session_id}; continue it later with: hookloop chat --resume {self.session_id} "
                f"(or --continue in {self.options.cwd})",
                highlight=False,
            )
        elif command == "/help":
            self.err.print(HELP, markup=False, highlight=False)
        else:
            self.err.print(
                f"unknown command {command}; /help lists them (//text sends '/text')", markup=False, highlight=False
            )
        return True

    # -- turns ----------------------------------------------------------------------------------------------

    def _message(self, worker: Worker, text: str) -> bool:
        if self.pending is not None:
            self.err.print("a tool call waits for your decision: /approve, /always or /deny [reason]")
            return True
        return self._turn(worker, lambda: worker.run(text))

    def _turn(self, worker: Worker, start: Callable[[], Awaitable[Outcome]]) -> bool:
        """Run one turn (a message, or a resume after decisions) under Ctrl-C handling; False ends the session."""
        stopped: list[signal.Signals] = []

        def interrupt(signum: signal.Signals) -> None:
            stopped.append(signum)
            if len(stopped) == 1:
                name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
                self.pause()
                self.err.print(f"\n[yellow]cancelling the turn ({name})… (Ctrl-C again to quit at once)[/]")
                worker.cancel()
            else:
                kill_child_groups()
                os._exit(130 if signum == signal.SIGINT else EXIT_TERMINATED)

        for signum in (signal.SIGINT, signal.SIGTERM):
            self.loop.add_signal_handler(signum, interrupt, signum)
        outcome: Outcome | None = None
        try:
            outcome = self.loop.run_until_complete(start())
        except Cancelled:
            self.err.print("[yellow]turn cancelled; the conversation goes on[/]", highlight=False)
        except Exception as exc:  # the turn failed (provider, hook, checkpoint …): say it, keep the session
            self.pause()
            self.err.print(f"[red]the turn failed: {type(exc).__name__}: {escape(str(exc))}[/]", highlight=False)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.loop.remove_signal_handler(signum)
            self.pause()
        if isinstance(outcome, Paused):
            self.pending, self.decisions = outcome, {}
            self._show_pending()
        elif isinstance(outcome, Finished):
            self.pending = None
        self._save(worker)
        if stopped and stopped[0] == signal.SIGTERM:
            self.exit_code = EXIT_TERMINATED
            return False
        return True

    def _show_pending(self) -> None:
        assert self.pending is not None
        waiting = [c for c in self.pending.pending if c.call_id not in self.decisions]
        workspace = self.options.cwd
        for number, call in enumerate(waiting, 1):
            label = f"[{number}] " if len(waiting) > 1 else ""
            arguments = escape(dumps(call.arguments, ensure_ascii=False)[:500])
            self.err.print(
                f"\n[bold magenta]approval needed[/] {escape(label)}[bold]{escape(call.tool_name)}[/] {arguments}",
                highlight=False,
            )
            why = f"  asked by {call.asked_by}: {call.reason or 'no reason given'}"
            self.err.print(why, markup=False, highlight=False)
            rule = suggest_rule(call.tool_name, call.arguments, workspace)
            always = f" · /always (adds {rule})" if rule is not None else ""
            self.err.print(f"  /approve{always} · /deny [reason]", markup=False, highlight=False)

    def _decide(self, worker: Worker, command: str, rest: str) -> bool:
        assert self.pending is not None
        waiting = [c for c in self.pending.pending if c.call_id not in self.decisions]
        chosen = waiting
        reason = rest
        if rest and (command != "/deny" or (rest.isdigit() and len(waiting) > 1)):
            if not rest.isdigit() or not 1 <= int(rest) <= len(waiting):
                self.err.print(f"{command} N: N is the number of a waiting call (1–{len(waiting)})")
                return True
            chosen, reason = [waiting[int(rest) - 1]], ""
        for call in chosen:
            if command == "/approve":
                self.decisions[call.call_id] = Approve()
            elif command == "/always":
                rule = suggest_rule(call.tool_name, call.arguments, self.options.cwd)
                if rule is None:
                    self.err.print(
                        f"no single narrow rule covers {call.tool_name} here; use /approve",
                        markup=False,
                        highlight=False,
                    )
                    return True
                self.decisions[call.call_id] = AllowAlways(rule)
            else:
                self.decisions[call.call_id] = Reject(reason or "denied at the terminal")
        if any(c.call_id not in self.decisions for c in self.pending.pending):
            self._show_pending()
            return True
        paused, decisions = self.pending, dict(self.decisions)
        self.pending, self.decisions = None, {}
        return self._turn(worker, lambda: worker.resume(paused.checkpoint, decisions))

    # -- commands ---------------------------------------------------------------------------------------------

    def _cost(self) -> None:
        tracker = self.tracker
        if tracker is None or not tracker.requests:
            self.err.print("no model requests yet")
            return
        usage = tracker.usage
        self.err.print(
            f"{len(tracker.requests)} model requests · {usage.input_tokens} in / {usage.output_tokens} out "
            f"({usage.cache_read_tokens} cache read, {usage.cache_write_tokens} cache write) · {tracker.cost_line()}",
            highlight=False,
        )

    def _list_hooks(self) -> None:
        from hookloop.cli._hooks_cmd import describe_handler
        from hookloop.command_hooks.config import load_hook_config
        from hookloop.command_hooks.trust import apply_trust

        try:
            config = load_hook_config(self.options.cwd, include_claude=self.options.include_claude)
        except Exception as exc:  # a settings file that cannot be read: say so, the chat goes on
            self.err.print(f"hooks: cannot read the configuration: {exc}", markup=False, highlight=False)
            return
        runnable = config if self.options.trust_project_hooks else apply_trust(config, self.options.cwd)
        running = {id(h) for h in runnable.hooks}
        python = [
            (event, handler)
            for event, chain in zip(_event_names(), self._worker_chains(), strict=True)
            for handler in chain
            if handler.source not in ("command hooks",)
        ]
        if not config.hooks and not python:
            self.err.print("no hooks configured (see hookloop hooks list / validate)", highlight=False)
            return
        if config.disabled:
            self.err.print("disableAllHooks is set: no command hook runs", highlight=False)
        for hook in config.hooks:
            runs = "runs" if id(hook) in running else "not run: project not trusted (hookloop hooks trust)"
            line = (
                f"  {hook.event:<18} {hook.matcher or '*':<14} {describe_handler(hook)}  ({hook.source.path} · {runs})"
            )
            self.err.print(line, markup=False, highlight=False)
        for event, handler in python:
            self.err.print(f"  {event:<18} {'*':<14} {handler.name}  ({handler.source})", markup=False, highlight=False)

    def _worker_chains(self) -> list[Any]:
        assert self.worker is not None
        return list(self.worker.hooks.chains)

    def _save(self, worker: Worker) -> None:
        try:
            save_session(worker, self.options, "chat")
        except (OSError, UsageError, ValueError) as exc:
            self.err.print(f"hookloop: the session could not be saved: {exc}", markup=False, highlight=False)
        except WorkerError:
            pass  # a run in flight (a quit at once): the last saved state stands


def _event_names() -> list[str]:
    from hookloop.hooks import ALL_EVENTS

    return [event.name for event in ALL_EVENTS]


def _enable_history() -> Callable[[], None] | None:
    """Prompt history with readline when stdin is a terminal: up/down recall earlier prompts, kept in
    ``$HOOKLOOP_HOME/chat_history`` (1000 lines). Returns a function that saves it (None: no history)."""
    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return None
    path = home() / "chat_history"
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
            os.chmod(path, 0o600)

    return save
