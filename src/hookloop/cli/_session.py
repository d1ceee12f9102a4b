"""What ``hookloop run`` and ``hookloop resume`` share: settings, the Worker, approvals, output, Ctrl-C.

Exit codes: 0 finished, 1 the run failed (aborted, hook error, provider error), 2 bad usage (flags, files,
settings), 3 paused waiting for an approval (a checkpoint was written), 130 cancelled with Ctrl-C (SIGINT), 143
cancelled by SIGTERM — handled exactly like Ctrl-C: the run is cancelled, its tool and hook processes are
stopped, the transcript is kept and a checkpoint written. A second signal quits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.text import Text as RichText

from hookloop import (
    AllowAlways,
    Approve,
    Cancelled,
    Checkpoint,
    CheckpointError,
    Finished,
    HookloopError,
    Paused,
    PendingCall,
    Reject,
    ResumeDecision,
    ScriptedClient,
    Worker,
    WorkerError,
)
from hookloop._frozen import dumps, freeze_object
from hookloop._reaper import guard_descendants
from hookloop.cli._errors import describe_error, one_line, print_error
from hookloop.cli._mcp import run_with_mcp_servers, session_mcp_plan
from hookloop.cli._render import TextRenderer as TextRenderer  # re-exported: the run, resume and demo renderer
from hookloop.command_hooks.config import resolve_hookloop_home
from hookloop.items import new_id
from hookloop.outcome import Outcome
from hookloop.permissions import PermissionConfigError, PermissionMode, PermissionPolicy, suggest_rule
from hookloop.permissions._types import MODES as PERMISSION_MODES
from hookloop.settings import SettingsError, read_settings_layers
from hookloop.timeline import event_to_json

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PAUSED, EXIT_CANCELLED, EXIT_TERMINATED = 0, 1, 2, 3, 130, 143
_STOP_SIGNALS = {signal.SIGINT: ("Ctrl-C", EXIT_CANCELLED), signal.SIGTERM: ("SIGTERM", EXIT_TERMINATED)}
OutputFormat = Literal["text", "json", "stream-json"]
Approval = Literal["ask", "yes", "deny", "pause"]
CLI_FORMAT = 2
"""2: the options live inside the checkpoint (authenticated with it). 1 kept them beside it and is refused."""


class UsageError(HookloopError):
    """A problem with what the user asked for: printed as one line, exit code 2."""


@dataclass(slots=True, kw_only=True)
class RunOptions:
    """Everything that shapes a session; saved next to a checkpoint so ``resume`` rebuilds the same Worker."""

    model: str
    cwd: Path
    permission_mode: PermissionMode | None = None
    max_turns: int = 50
    settings: list[Path] = field(default_factory=list)
    include_claude: bool = True
    trust_project_hooks: bool = False
    checkpoint_dir: Path | None = None
    system: str | None = None
    scripted_position: int = 0
    """For ``scripted:`` models: turns of the script already played (a resume continues from there)."""
    sandbox: bool = False
    """``--sandbox``: run Bash commands and project hooks in the OS sandbox whatever ``sandbox.enabled`` says."""
    mcp_config: list[Path] = field(default_factory=list)
    """``--mcp-config`` files (trusted: the user named them)."""
    strict_mcp_config: bool = False
    """``--strict-mcp-config``: only the ``--mcp-config`` servers (no ``.mcp.json``, no settings ``mcpServers``)."""
    allowed_tools: list[str] = field(default_factory=list)
    """``--allowedTools`` rules: allow rules of the highest-precedence layer (a settings deny still wins)."""
    disallowed_tools: list[str] = field(default_factory=list)
    """``--disallowedTools`` rules: deny rules (a resume keeps them: they only narrow)."""

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode,
            "max_turns": self.max_turns,
            "settings": [str(p) for p in self.settings],
            "include_claude": self.include_claude,
            "trust_project_hooks": self.trust_project_hooks,
            "checkpoint_dir": None if self.checkpoint_dir is None else str(self.checkpoint_dir),
            "system": self.system,
            "scripted_position": self.scripted_position,
            "sandbox": self.sandbox,
            "mcp_config": [str(p) for p in self.mcp_config],
            "strict_mcp_config": self.strict_mcp_config,
            "allowed_tools": list(self.allowed_tools),
            "disallowed_tools": list(self.disallowed_tools),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunOptions:
        """Rebuild from :meth:`to_json`; a field of the wrong type raises UsageError naming it."""

        def get(name: str, kind: type | tuple[type, ...], default: object = None) -> Any:
            value = data.get(name, default)
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
                raise UsageError(f"checkpoint.options.{name}: expected {kind}, got {type(value).__name__}")
            return value

        settings = get("settings", list, [])
        if not all(isinstance(p, str) for p in settings):
            raise UsageError("checkpoint.options.settings: expected a list of paths")
        mode = get("permission_mode", (str, type(None)))
        if mode is not None and mode not in PERMISSION_MODES:
            raise UsageError(f"checkpoint.options.permission_mode: unknown mode {mode!r}")
        checkpoint_dir = get("checkpoint_dir", (str, type(None)))
        mcp_config = get("mcp_config", list, [])
        if not all(isinstance(p, str) for p in mcp_config):
            raise UsageError("checkpoint.options.mcp_config: expected a list of paths")
        rules = {name: get(name, list, []) for name in ("allowed_tools", "disallowed_tools")}
        if not all(isinstance(r, str) for listed in rules.values() for r in listed):
            raise UsageError("checkpoint.options.allowed_tools/disallowed_tools: expected lists of rules")
        return cls(
            model=get("model", str),
            cwd=Path(get("cwd", str)),
            permission_mode=mode,
            max_turns=max(1, get("max_turns", int, 50)),
            settings=[Path(p) for p in settings],
            include_claude=get("include_claude", bool, True),
            trust_project_hooks=get("trust_project_hooks", bool, False),
            checkpoint_dir=Path(checkpoint_dir) if checkpoint_dir else None,
            system=get("system", (str, type(None))),
            scripted_position=max(0, get("scripted_position", int, 0)),
            sandbox=get("sandbox", bool, False),
            mcp_config=[Path(p) for p in mcp_config],
            strict_mcp_config=get("strict_mcp_config", bool, False),
            allowed_tools=rules["allowed_tools"],
            disallowed_tools=rules["disallowed_tools"],
        )


DEFAULT_SYSTEM = (
    "You are a careful coding agent working in the user's project directory. Use the tools to inspect before "
    "you change anything; keep changes small; say what you did."
)


def home() -> Path:
    return resolve_hookloop_home()


def settings_layers(options: RunOptions) -> list[tuple[str, Mapping[str, object]]]:
    """The settings files that exist, lowest precedence first, then each ``--settings`` file."""
    try:
        layers = read_settings_layers(options.cwd, extra=options.settings, include_claude=options.include_claude)
    except SettingsError as exc:
        raise UsageError(str(exc)) from exc
    from hookloop.cli._print import tool_rule_layers  # --allowedTools / --disallowedTools, highest precedence

    return [*layers, *tool_rule_layers(options.allowed_tools, options.disallowed_tools)]


def build_policy(options: RunOptions, layers: Sequence[tuple[str, Mapping[str, object]]]) -> PermissionPolicy:
    try:
        return PermissionPolicy.from_settings(layers, workspace=options.cwd, mode=options.permission_mode)
    except PermissionConfigError as exc:
        raise UsageError(str(exc)) from exc


def build_worker(options: RunOptions, *, transcript: Path, session_id: str | None = None) -> tuple[Worker, list[str]]:
    """The Worker for a CLI session, and diagnostics worth showing (settings, untrusted hooks)."""
    from hookloop.providers import ModelSpecError, client_from_model_string
    from hookloop.tools.builtin import Workspace, builtin_tools

    if not options.cwd.is_dir():
        raise UsageError(f"--cwd {options.cwd}: not a directory")
    layers = settings_layers(options)
    policy = build_policy(options, layers)
    try:
        client, model = client_from_model_string(options.model)
    except (ModelSpecError, ValueError) as exc:  # ValueError: a scripted model file that cannot be read
        raise UsageError(describe_error(exc)) from exc
    if isinstance(client, ScriptedClient) and options.scripted_position:
        client.advance(options.scripted_position)
    sandbox, sandbox_notes = build_sandbox(options, layers, policy)
    worker = Worker(
        client,
        tools=builtin_tools(Workspace(options.cwd), sandbox=sandbox),
        system=options.system or DEFAULT_SYSTEM,
        model=model,
        max_turns=options.max_turns,
        permissions=policy,
        workspace=options.cwd,
        transcript=transcript,
        session_id=session_id,
    )
    notes = [*sandbox_notes, *install_command_hooks(worker, options, sandbox=sandbox)]
    from hookloop.cli._agents import add_agent_tool

    notes += add_agent_tool(worker, options.cwd, include_claude=options.include_claude)
    return worker, notes


def build_sandbox(
    options: RunOptions, layers: Sequence[tuple[str, Mapping[str, object]]], policy: PermissionPolicy
) -> tuple[Any, list[str]]:
    """The OS sandbox of the settings (``--sandbox`` forces it on), wired into ``policy``; ``None`` when it
    is off. Unavailable with ``--sandbox`` or ``failIfUnavailable``: a usage error; otherwise a loud note."""
    from hookloop.sandbox import Sandbox, SandboxConfigError, SandboxUnavailableError

    try:
        sandbox = Sandbox.from_settings(
            layers, workspace=options.cwd, policy=policy, enabled=True if options.sandbox else None
        )
    except SandboxConfigError as exc:
        raise UsageError(str(exc)) from exc
    if not sandbox.settings.enabled:
        return None, []
    if options.sandbox and not sandbox.availability.available:  # asked for by name: never run without it
        raise UsageError(f"--sandbox: no sandbox here: {sandbox.availability.reason} (see hookloop doctor)")
    try:
        warning = sandbox.check_available()
    except SandboxUnavailableError as exc:
        raise UsageError(str(exc)) from exc
    policy.sandbox = sandbox
    return sandbox, [*([warning] if warning else []), *(f"note: {n}" for n in sandbox.settings.notes)]


def install_command_hooks(worker: Worker, options: RunOptions, *, sandbox: Any = None) -> list[str]:
    """Attach the configured command hooks (Claude Code / Cline / hookloop settings), the ones ``sandbox``
    covers running in it. Returns notes to show."""
    import importlib

    try:
        bridge = importlib.import_module("hookloop.command_hooks.bridge")
    except ImportError:
        return []
    hooks = bridge.CommandHooks.load(
        options.cwd,
        include_claude=options.include_claude,
        trust_project=options.trust_project_hooks,
        extra_settings=options.settings,
        options=None if sandbox is None else bridge.RunnerOptions(sandbox=sandbox),
        log=False,  # the returned notes and the renderer say it; the library's log would repeat it
    )
    hooks.install(worker)
    return [
        f"{d.severity}: {d.file}: {d.path}: {d.message}" if d.path else f"{d.severity}: {d.file}: {d.message}"
        for d in hooks.diagnostics
        if d.severity != "info"
    ]


# -- approvals --------------------------------------------------------------------------------------------


def fixed_approver(answer: Approval) -> Callable[[PendingCall], Any] | None:
    """--yes approves every ask once; --deny rejects it; "pause" leaves it to the checkpoint."""

    async def yes(call: PendingCall) -> ResumeDecision:
        return Approve()

    async def deny(call: PendingCall) -> ResumeDecision:
        return Reject("denied by --deny")

    yes.name = "--yes"  # type: ignore[attr-defined]
    deny.name = "--deny"  # type: ignore[attr-defined]
    return {"yes": yes, "deny": deny}.get(answer)


class TerminalApprover:
    """Asks the person at the terminal: allow once / allow always / deny (with a reason).

    "Allow always" adds the narrowest rule covering the call (:func:`hookloop.permissions.suggest_rule`, shown in
    the prompt); when there is none (a compound command of several programs, an interpreter) it is not offered.
    """

    name = "terminal"

    def __init__(
        self, console: Console, pause_spinner: Callable[[], None], *, workspace: str | Path | None = None
    ) -> None:
        self.console = console
        self.pause_spinner = pause_spinner
        self.workspace = Path(workspace) if workspace is not None else Path.cwd()

    async def __call__(self, call: PendingCall) -> ResumeDecision:
        self.pause_spinner()
        args = dumps(call.arguments, ensure_ascii=False)
        self.console.print(f"\n[bold magenta]approval needed[/] [bold]{call.tool_name}[/] {args}", highlight=False)
        self.console.print(f"  asked by {call.asked_by}: {call.reason or 'no reason given'}", highlight=False)
        rule = suggest_rule(call.tool_name, call.arguments, self.workspace)
        always = f"  [a] allow always (adds {rule})" if rule is not None else ""
        while True:
            line = await _read_line(f"  [y] allow once{always}  [n] deny › ")
            if line is None:  # Ctrl-D: no answer is a denial, and nothing else is read for it
                self.console.print("\n  no answer (end of input): denied", highlight=False)
                return Reject("denied at the terminal (no answer: end of input)")
            answer = line.strip().lower()
            if answer in ("y", "yes"):
                return Approve()
            if answer in ("a", "always") and rule is not None:
                return AllowAlways(rule)
            if answer in ("a", "always"):
                self.console.print("  no single narrow rule covers this call; answer y or n", highlight=False)
                continue
            if answer in ("n", "no", "d", "deny"):
                reason = await _read_line("  reason (optional) › ")
                if reason is None:
                    self.console.print()
                return Reject((reason or "").strip() or "denied at the terminal")
            self.console.print("  please answer y, a or n" if rule is not None else "  please answer y or n")


class DomainApprover:
    """A sandboxed command reaching a host not on the allow-list: --yes allows it, --deny and a run without a
    terminal refuse it (the result names it), at a terminal the person is asked once per host per session."""

    def __init__(self, approval: Approval, console: Console, pause_spinner: Callable[[], None]) -> None:
        self.approval = approval
        self.console = console
        self.pause_spinner = pause_spinner
        self.answers: dict[str, bool] = {}
        self.lock = asyncio.Lock()

    async def ask(self, host: str) -> bool:
        if self.approval != "ask":
            return self.approval == "yes"
        async with self.lock:  # parallel connections: one question at a time, each host once
            if host not in self.answers:
                self.pause_spinner()
                question = f"\n[bold magenta]network[/] a sandboxed command wants to reach [bold]{host}[/]"
                self.console.print(question, highlight=False)
                answer = await _read_line("  allow it for this session? [y/n] › ")
                self.answers[host] = (answer or "").strip().lower() in ("y", "yes")
            return self.answers[host]


async def _read_line(prompt: str) -> str | None:
    """input() in a daemon thread, so a Ctrl-C (which cancels the run) never waits for the person. ``None``
    at the end of input (Ctrl-D, a closed stdin)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        line: str | None
        try:
            line = input(prompt)
        except EOFError:
            line = None

        def deliver() -> None:
            if not future.done():
                future.set_result(line)

        loop.call_soon_threadsafe(deliver)

    threading.Thread(target=read, daemon=True).start()
    return await future


# -- output ---------------------------------------------------------------------------------------------


def json_line(data: Mapping[str, object]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def kill_child_groups() -> None:
    """SIGKILL the process group of every direct child of this process (the tool and hook processes, which
    each lead their own group), so quitting at once leaves nothing running. Linux (/proc); a no-op elsewhere."""
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parent, group = int(fields[1]), int(fields[2])
        if parent == me and group != os.getpgrp():
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)


# -- driving a session --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Session:
    """One CLI run or resume: output, approvals, Ctrl-C, checkpoint writing, exit code."""

    options: RunOptions
    output: OutputFormat
    approval: Approval
    out: Console
    err: Console
    session_id: str = field(default_factory=lambda: new_id("session"))
    interrupts: int = 0
    stopped_by: signal.Signals = signal.SIGINT
    """The first stop signal received (SIGINT or SIGTERM): names the cancellation and sets the exit code."""
    mcp: Any = None
    """The MCP servers to open around the run (:class:`hookloop.cli._mcp.MCPPlan`)."""
    renderer: TextRenderer | None = None

    @property
    def transcript(self) -> Path:
        return home() / "sessions" / f"{self.session_id}.jsonl"

    def checkpoint_path(self, run_id: str) -> Path:
        folder = self.options.checkpoint_dir or (home() / "checkpoints")
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{run_id}.checkpoint.json"

    def save(self, checkpoint: Checkpoint, worker: Worker) -> Path:
        """Write the checkpoint with this session's options inside it (so the MAC covers them too)."""
        if isinstance(worker.client, ScriptedClient):
            self.options.scripted_position = worker.client.position
        path = self.checkpoint_path(checkpoint.run_id)
        options = freeze_object({"hookloop_cli": CLI_FORMAT, **self.options.to_json()})
        return dataclasses.replace(checkpoint, options=options).save(path, key=worker.checkpoint_key)

    def execute(self, start: Callable[[Worker], Any]) -> int:
        """Build the Worker, run ``start(worker)`` (run or resume) under Ctrl-C handling; returns the exit code."""
        try:
            worker, notes = build_worker(self.options, transcript=self.transcript, session_id=self.session_id)
            self.mcp = session_mcp_plan(self.options, self.approval, self.err)
            notes.extend(self.mcp.notes)
        except UsageError as exc:
            print_error(exc, self.err)
            return EXIT_USAGE
        for note in notes:
            self.err.print(RichText(one_line(note), style="yellow"))
        renderer: TextRenderer | None = None
        if self.output == "text":
            renderer = self.renderer = TextRenderer(self.out, self.err)
            worker.subscribe(renderer)
        elif self.output == "stream-json":
            worker.subscribe(lambda event: json_line(event_to_json(event)))
        fixed = fixed_approver(self.approval)
        if fixed is not None:
            worker.approvers.append(fixed)
        elif self.approval == "ask":
            stop = renderer.pause if renderer is not None else (lambda: None)
            workspace = worker.permissions.workspace if worker.permissions is not None else None
            worker.approvers.append(TerminalApprover(self.err, stop, workspace=workspace))
        guard_descendants()  # subreaper + watchdog: nothing a tool or hook starts outlives this process
        sandbox = getattr(worker.permissions, "sandbox", None)
        if sandbox is not None:
            stop = renderer.pause if renderer is not None else (lambda: None)
            sandbox.ask_domain = DomainApprover(self.approval, self.err, stop).ask
        try:
            return asyncio.run(self._drive(worker, start))
        except CheckpointError as exc:  # a checkpoint refused (replayed, unreadable key) or not writable
            print_error(exc, self.err)
            return EXIT_USAGE
        finally:
            worker.close()
            if renderer is not None:
                renderer.stop_spinner()

    async def _drive(self, worker: Worker, start: Callable[[Worker], Any]) -> int:
        loop = asyncio.get_running_loop()

        def interrupt(signum: signal.Signals) -> None:
            self.interrupts += 1
            if self.interrupts == 1:
                self.stopped_by = signum
                if self.renderer is not None:
                    self.renderer.pause()
                self.err.print(f"\n[yellow]cancelling ({_STOP_SIGNALS[signum][0]})… (Ctrl-C again to quit at once)[/]")
                worker.cancel()
            else:
                if self.renderer is not None:
                    self.renderer.stop_spinner()  # leave the terminal with its cursor shown
                kill_child_groups()  # tools and hooks lead their own process groups: take them along
                os._exit(_STOP_SIGNALS[signum][1])

        for signum in _STOP_SIGNALS:
            loop.add_signal_handler(signum, interrupt, signum)
        try:
            outcome: Outcome = await run_with_mcp_servers(self.mcp, worker, self.options.cwd, self.err, start)
        except Cancelled:
            name, code = _STOP_SIGNALS[self.stopped_by]
            how = "cancelled with Ctrl-C" if self.stopped_by == signal.SIGINT else f"cancelled by {name}"
            path = self.save(worker.checkpoint(how), worker)
            return self._report_stopped(
                "cancelled", f"{how}; transcript {self.transcript}; checkpoint {path}", code, path
            )
        except WorkerError as exc:
            return self._report_stopped("error", describe_error(exc), EXIT_FAILED, None)
        finally:
            for signum in _STOP_SIGNALS:
                loop.remove_signal_handler(signum)
        if isinstance(outcome, Paused):
            path = self.save(outcome.checkpoint, worker)
            return self._report_paused(outcome, path)
        return self._report_finished(worker, outcome)

    def _result(self, status: str, **fields: object) -> dict[str, object]:
        return {
            "type": "result",
            "status": status,
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            **fields,
        }

    def _report_finished(self, worker: Worker, outcome: Finished) -> int:
        usage = outcome.usage
        usage_json = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        if self.output == "text":
            self.err.print(
                f"[dim]done in {outcome.turns} turns · {usage.input_tokens} in / {usage.output_tokens} out · "
                f"transcript {self.transcript}[/]",
                highlight=False,
            )
        else:
            json_line(
                self._result(
                    "finished", run_id=outcome.run_id, text=outcome.text, turns=outcome.turns, usage=usage_json
                )
            )
        return EXIT_OK

    def resume_command(self, path: Path) -> str:
        """The shell command that resumes the checkpoint at ``path`` (quoted: paths may hold spaces), with
        ``--cwd`` when the run worked elsewhere than this shell's directory."""
        words = ["hookloop", "resume", str(path)]
        if self.options.cwd.resolve() != Path.cwd().resolve():
            words += ["--cwd", str(self.options.cwd)]
        return shlex.join(words)

    def _report_paused(self, outcome: Paused, path: Path) -> int:
        command = self.resume_command(path)
        if self.output == "text":
            self.err.print(f"\n[bold magenta]paused[/]: {outcome.reason}", highlight=False)
            for call in outcome.pending:
                self.err.print(f"  {call.tool_name} {dumps(call.arguments)} — {call.asked_by}", highlight=False)
            self.err.print(f"checkpoint written; continue with:\n  {command} --yes   (or --deny)", highlight=False)
        else:
            pending = [
                {
                    "call_id": c.call_id,
                    "tool": c.tool_name,
                    "arguments": dict(c.arguments),
                    "reason": c.reason,
                    "asked_by": c.asked_by,
                }
                for c in outcome.pending
            ]
            json_line(
                self._result(
                    "paused",
                    run_id=outcome.run_id,
                    reason=outcome.reason,
                    pending=pending,
                    checkpoint_path=str(path),
                    resume_command=command,
                )
            )
        return EXIT_PAUSED

    def _report_stopped(self, status: str, message: str, code: int, path: Path | None) -> int:
        command = None if path is None else f"{self.resume_command(path)} --message {shlex.quote('…')}"
        if self.output == "text":
            self.err.print(RichText(f"hookloop: {message}" if status == "error" else message, style="red"))
            if command is not None:
                self.err.print(RichText(f"continue it with:\n  {command}", style="yellow"))
        else:
            fields: dict[str, object] = {"checkpoint_path": None if path is None else str(path)}
            if command is not None:
                fields["resume_command"] = command
            json_line(self._result(status, error=message, **fields))
        return code
