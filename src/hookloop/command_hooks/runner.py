"""Running hook handlers: spawn, feed stdin, drain, time out, kill the whole process group. Only moves bytes.

:func:`run_process` runs one program and returns a :class:`HookOutcome`; :func:`run_hook` builds the argv,
environment and timeout for one :class:`~hookloop.command_hooks.model.ConfiguredHook` (command, Cline script,
or HTTP via :mod:`hookloop.command_hooks.http_hooks`); :func:`run_all` runs every hook of one event firing
**in parallel** and returns their outcomes in configuration order. Interpreting an outcome (exit codes, JSON)
is :mod:`hookloop.command_hooks.translate`'s job.

Process contract (Unix):

* Shell form runs ``/bin/sh -c <command>`` (as Claude Code does); exec form (``args``) spawns the program
  directly with no shell, after substituting ``${CLAUDE_PROJECT_DIR}``-style placeholders as plain strings;
  Cline scripts run through :func:`~hookloop.command_hooks.discovery.launcher_for` (a file without a shebang is
  retried through ``/bin/sh``, as a shell would).
* On Linux the hook is started synchronously and its exit watched through a pidfd by the event loop, which
  also reads and writes its pipes (:func:`hookloop._spawn.spawn_group_light`: no watcher thread per spawn);
  where pidfd is missing or refused, through asyncio's subprocess machinery. The contract below is the same.
* Each hook leads a new session and process group (``start_new_session``), has no controlling terminal, stdin is
  a pipe, cwd is the project directory; the environment is hookloop's with the settings ``env`` block applied
  and secrets withheld, plus ``HOOKLOOP_PROJECT_DIR``, ``CLAUDE_PROJECT_DIR``, ``CLAUDECODE=1`` (command hooks,
  as Claude Code sets it; scripts test it to know they run under an agent) and (plugins) ``CLAUDE_PLUGIN_ROOT`` /
  ``CLAUDE_PLUGIN_DATA`` — the rule is in :mod:`hookloop.command_hooks.environment` (Cline's classic hooks
  document no variables of their own, and get none of these but the project directories).
* The JSON payload is written to stdin, then stdin is closed. Writes are buffered by the event loop, so a hook
  that never reads stdin cannot block us; a broken pipe is ignored.
* stdout and stderr are drained concurrently as data arrives. Each keeps at most ``output_cap`` bytes (1 MiB).
  **stdout over the cap** is the hook's answer cut short: the hook's group is terminated at once (SIGTERM,
  grace, SIGKILL) and the outcome is the error ``output_too_large`` naming the hook and the cap — the truncated
  part is never read as JSON or as text, and a ``failClosed`` handler blocks. stderr over the cap is only
  diagnostics: the rest is read and dropped and the outcome says ``stderr_truncated``. Lines are passed to
  ``on_line`` as they complete, decoded as UTF-8 with replacement characters; streaming stops when the cap is
  reached; a line longer than 64 KiB is delivered in pieces.
* **Timeout**: SIGTERM to the whole group, up to ``kill_grace`` seconds for every member to exit, then SIGKILL to
  the group, then wait for it. The outcome's ``error`` names the hook and the timeout.
* **Leader exits, leftovers remain**: once the leader has exited we wait up to ``drain_window`` seconds for
  stdout/stderr to reach EOF (so output from background children is not lost), then close our ends of the
  pipes — a grandchild holding them open cannot make us wait. What the hook left running is then either
  **kept** (``keep``, which a Worker's command hooks pass unless ``keep_background`` is 0 or the handler says
  ``keepBackground: false``): it runs on, watched and reaped, and is ended at the session's end
  (:mod:`hookloop.command_hooks.kept`) — as Claude Code and Cline let a hook's ``afplay … &`` or ``nohup … &``
  finish; or, without ``keep`` (``run_process`` / ``run_all`` called on their own), **killed**: any process
  still in the group — a ``sleep 1000 &`` holding the pipe, or a daemon that let go of it — is terminated the
  same way (SIGTERM, grace, SIGKILL), and a process that left the group (its own ``setsid`` or ``setpgid``) is
  found by the call's token in its environment and killed and reaped (:mod:`hookloop._reaper`).
* **Cancellation**: the running groups are terminated (SIGTERM, grace, SIGKILL — all hooks at once, since each
  runs in its own task) and waited for, then :class:`asyncio.CancelledError` propagates. A second cancellation
  during that cleanup sends SIGKILL immediately.
* **Sandbox**: with ``RunnerOptions.sandbox``, the hooks it covers run under the OS sandbox (see
  :mod:`hookloop.sandbox`): same process contract, with bwrap as the group leader; a hook the sandbox cannot
  be set up for is a ``spawn_failed`` outcome.
* "Could not run" is kept apart from "answered": a missing program (spawn error or exit 127, or CPython's
  ``can't open file`` with exit 2), a non-executable file (exit 126), death by a signal (or a shell reporting
  128+SIGSEGV and friends) and a timeout each get their own ``error_kind``, so an exit 2 from an interpreter
  that never started the script is not mistaken for a deliberate "deny".

Windows is handled by the pure argv builders only; process-group killing here is POSIX.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import errno
import functools
import json
import logging
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from hookloop import _reaper
from hookloop._spawn import spawn_group, spawn_group_light
from hookloop.effects import current_effects
from hookloop.effects import perform as perform_effect

from .discovery import is_windows, launcher_for
from .environment import SessionEnvFiles, hook_environment_bytes
from .http_hooks import run_http
from .kept import DEFAULT_LIMIT, KeptProcesses
from .model import (
    OUTPUT_CAP,
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    ErrorKind,
    HookOutcome,
    HttpHandler,
    McpToolHandler,
    ProcessHandler,
    PromptHandler,
    PythonHandler,
    hook_effect,
    outcome_from_json,
    outcome_to_json,
)
from .processes import Batch, HookProcess, ProcessPool, request_tail

__all__ = [
    "CLINE_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "OUTPUT_CAP",
    "ErrorKind",
    "HookOutcome",
    "HookSandbox",
    "OnHookLine",
    "OnLine",
    "RunnerOptions",
    "StreamName",
    "classify_exit",
    "command_argv",
    "default_timeout",
    "expand_placeholders",
    "hook_environment",
    "run_all",
    "run_hook",
    "run_process",
]

_log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 600.0
"""Claude Code's default for command and HTTP hooks, in seconds."""
CLINE_TIMEOUT = 30.0
"""Cline's fixed timeout for hook scripts, in seconds."""
_EVENT_DEFAULTS: dict[str, float] = {"UserPromptSubmit": 30.0, "MessageDisplay": 10.0, "SessionEnd": 1.5}
_SESSION_END_MAX = 60.0
_MAX_LINE = 64 * 1024
_PIPE_CLOSE_WAIT = 1.0
_KILL_WAIT = 5.0
_POLL = 0.01
_CRASH_SIGNALS = frozenset(
    int(s)
    for s in (
        signal.SIGSEGV,
        signal.SIGBUS,
        signal.SIGILL,
        signal.SIGFPE,
        signal.SIGABRT,
        signal.SIGKILL,
        signal.SIGSYS,
        signal.SIGTRAP,
    )
)
_PYTHON_CANNOT_OPEN = re.compile(r"^\S*python[\w.]*: can't open file .*\[Errno \d+\]")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PLACEHOLDER_VARS = ("CLAUDE_PROJECT_DIR", "HOOKLOOP_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA")

StreamName: TypeAlias = Literal["stdout", "stderr"]
OnLine: TypeAlias = Callable[[StreamName, str], None]
"""Receives each output line of one hook as it arrives (without its line ending)."""
OnHookLine: TypeAlias = Callable[[ConfiguredHook, StreamName, str], None]
""":func:`run_all`'s line callback: the line tagged with the hook it came from."""


class SandboxedArgv(Protocol):
    """A command prepared to run sandboxed."""

    @property
    def argv(self) -> Sequence[str]: ...

    @property
    def env(self) -> Mapping[str, str]: ...


class HookSandbox(Protocol):
    """An OS sandbox command hooks may run in (:class:`hookloop.sandbox.Sandbox` implements it)."""

    def covers_hook(self, hook: ConfiguredHook) -> bool:
        """Whether this hook runs sandboxed (the ``sandbox.hooks`` setting, and the sandbox works)."""
        ...

    def open_command(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None
    ) -> AbstractAsyncContextManager[SandboxedArgv]:
        """Prepare ``argv``; spawn it inside the ``async with``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerOptions:
    """Knobs for :func:`run_hook` / :func:`run_all`; defaults follow Claude Code and Cline."""

    default_timeout: float | None = None
    """Override the per-event default for command/HTTP hooks without a ``timeout`` (seconds)."""
    cline_timeout: float = CLINE_TIMEOUT
    kill_grace: float = 2.0
    """Seconds between SIGTERM and SIGKILL."""
    drain_window: float = 0.5
    """Seconds to keep reading after the leader exited before leftovers in its group are terminated."""
    output_cap: int = OUTPUT_CAP
    http_url_allowlist: tuple[str, ...] | None = None
    """URL patterns (``*`` wildcards) HTTP hooks may call; ``None`` = any http(s) URL."""
    http_env_allowlist: tuple[str, ...] | None = None
    """Global limit on the variables HTTP headers may interpolate; ``None`` = each hook's own list."""
    platform: str = sys.platform
    base_env: Mapping[str, str] | None = None
    """Environment hooks inherit; ``None`` = this process's environment."""
    sandbox: HookSandbox | None = None
    """Runs the hooks it covers (:meth:`HookSandbox.covers_hook`) in an OS sandbox; HTTP hooks never."""
    settings_env: tuple[tuple[str, str], ...] = ()
    """The settings ``env`` block (name, value pairs), applied over ``base_env`` for every hook."""
    env_allowlist: tuple[str, ...] = ()
    """``commandHookAllowedEnvVars``: secrets (names or ``PREFIX*``) hooks may still inherit."""
    scrub_env: bool = True
    """Withhold secrets from hooks (:func:`hookloop.command_hooks.environment.is_secret`)."""
    session_env_files: SessionEnvFiles | None = None
    """Where ``CLAUDE_ENV_FILE`` points for SessionStart / Setup / CwdChanged / FileChanged hooks (set by
    :class:`~hookloop.command_hooks.bridge.CommandHooks`); ``None``: the variable is not set."""
    processes: ProcessPool | None = None
    """The running hook processes of ``process`` handlers (set by the Worker's command hooks); ``None``: such
    handlers cannot run (outside a Worker) and are a hook error."""
    keep_background: int = DEFAULT_LIMIT
    """How many hooks' background processes a Worker's session keeps at once (see
    :mod:`hookloop.command_hooks.kept`): a hook that exits on its own may leave processes running (``afplay … &``,
    ``nohup … &``); they are ended at the session's end, and keeping one more than this ends the oldest's.
    ``0``: none is kept — what a hook leaves is killed when it exits (hookloop's former, strict behaviour). A
    handler's ``keepBackground: false`` does the same for that hook."""
    kept: KeptProcesses | None = None
    """Where the background processes of hooks are kept: set by the Worker's command hooks (one per Worker,
    released at each session end); ``None`` (``run_all`` / ``run_hook`` called directly): what a hook leaves is
    killed when it exits. A caller passing its own must :meth:`~KeptProcesses.release` it."""


# --------------------------------------------------------------------------------------------------------------
# Pure helpers
# --------------------------------------------------------------------------------------------------------------


def default_timeout(event: str, hook: ConfiguredHook, options: RunnerOptions | None = None) -> float:
    """The timeout for ``hook`` on ``event``, in seconds.

    Cline scripts: ``cline_timeout`` (30 s, Cline's fixed value). Command/HTTP hooks: their own ``timeout``,
    else the event's default (600 s; 30 s for UserPromptSubmit, 10 s for MessageDisplay, a 1.5 s budget for
    SessionEnd) unless ``options.default_timeout`` overrides it. SessionEnd timeouts are capped at 60 s.
    """
    opts = options or RunnerOptions()
    if isinstance(hook.handler, ClineScript):
        return opts.cline_timeout
    if hook.timeout is not None:
        value = hook.timeout
        return min(value, _SESSION_END_MAX) if event == "SessionEnd" else value
    if opts.default_timeout is not None:
        return opts.default_timeout
    return _EVENT_DEFAULTS.get(event, DEFAULT_TIMEOUT)


def hook_environment(
    project_dir: str,
    *,
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    settings_env: Mapping[str, str] | None = None,
    allowlist: tuple[str, ...] = (),
    scrub: bool = True,
) -> dict[str, str]:
    """The environment a command hook runs with: ``base`` (default ``os.environ``) with ``settings_env`` on
    top, minus secrets that ``allowlist`` does not pass (when ``scrub``), then ``extra``, then
    ``HOOKLOOP_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` set to ``project_dir``. The rule is in
    :mod:`hookloop.command_hooks.environment`."""
    overrides = {**(extra or {}), "HOOKLOOP_PROJECT_DIR": project_dir, "CLAUDE_PROJECT_DIR": project_dir}
    env = hook_environment_bytes(
        base, settings_env=settings_env or {}, allowlist=allowlist, scrub=scrub, overrides=overrides
    )
    return {os.fsdecode(k): os.fsdecode(v) for k, v in env.items()}


def expand_placeholders(text: str, env: Mapping[str, str]) -> str:
    """Substitute ``${NAME}`` / ``$NAME`` for the project/plugin variables present in ``env``, as plain strings
    (exec form has no shell to do it). Other ``$`` references are left alone."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in _PLACEHOLDER_VARS and name in env:
            return env[name]
        return match.group(0)

    return _ENV_REF.sub(substitute, text)


def command_argv(handler: CommandHandler, *, platform: str, env: Mapping[str, str]) -> list[str]:
    """The argv for a command handler. Pure.

    Exec form: ``[command, *args]`` with placeholders expanded, no shell. Shell form: ``/bin/sh -c`` on Unix
    (``pwsh -Command`` when ``shell`` is ``"powershell"``); on Windows Git Bash (``bash -c``) or
    ``powershell -Command``.
    """
    if handler.args is not None:
        return [expand_placeholders(handler.command, env), *(expand_placeholders(a, env) for a in handler.args)]
    if handler.shell == "powershell":
        exe = "powershell" if is_windows(platform) else "pwsh"
        return [exe, "-NoProfile", "-NonInteractive", "-Command", handler.command]
    if is_windows(platform):
        return ["bash", "-c", handler.command]
    return ["/bin/sh", "-c", handler.command]


def classify_exit(exit_code: int, stderr: str, *, via_shell: bool) -> tuple[ErrorKind, int | None]:
    """Tell "could not run" apart from an answer, from a normal exit status. Pure.

    127 → ``not_found`` and 126 → ``not_executable`` (what shells and ``env`` report); exit 2 whose first stderr
    line is CPython's ``can't open file … [Errno N]`` → ``not_found`` (the interpreter never ran the script,
    claude-code#80697); through a shell, 128+N for a fault signal N (SEGV, BUS, ILL, FPE, ABRT, KILL, SYS, TRAP)
    → ``crashed`` with signal N. Anything else is ``ok``. Returns ``(kind, signal)``.
    """
    if exit_code == 127:
        return "not_found", None
    if exit_code == 126:
        return "not_executable", None
    if exit_code == 2:
        first = stderr.lstrip().split("\n", 1)[0]
        if _PYTHON_CANNOT_OPEN.match(first):
            return "not_found", None
    if via_shell and exit_code - 128 in _CRASH_SIGNALS:
        return "crashed", exit_code - 128
    return "ok", None


# --------------------------------------------------------------------------------------------------------------
# One process
# --------------------------------------------------------------------------------------------------------------


class _Capture:
    """One output stream: keeps the first ``cap`` bytes, splits lines for the callback."""

    def __init__(
        self, stream: StreamName, cap: int, on_line: OnLine | None, on_overflow: Callable[[], None] | None = None
    ) -> None:
        self.stream: StreamName = stream
        self.on_overflow = on_overflow
        self.cap = cap
        self.data = bytearray()
        self.truncated = False
        self.on_line = on_line
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""
        self.finished = False

    def feed(self, chunk: bytes) -> None:
        if self.truncated or not chunk:
            return
        room = self.cap - len(self.data)
        if len(chunk) > room:
            chunk = chunk[:room]
            self.truncated = True
        self.data += chunk
        if self.on_line is not None:
            self._split(self.decoder.decode(chunk))
        if self.truncated:
            self.finish()
            if self.on_overflow is not None:
                self.on_overflow()

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self.on_line is not None:
            rest = self.pending + self.decoder.decode(b"", final=True)
            self.pending = ""
            if rest:
                self._emit(rest)

    def _split(self, text: str) -> None:
        *lines, rest = (self.pending + text).split("\n")
        for line in lines:
            self._emit(line.removesuffix("\r"))
        while len(rest) > _MAX_LINE:
            self._emit(rest[:_MAX_LINE])
            rest = rest[_MAX_LINE:]
        self.pending = rest

    def _emit(self, line: str) -> None:
        callback = self.on_line
        if callback is None:
            return
        try:
            callback(self.stream, line)
        except Exception:
            # A broken subscriber must not break the hook run; stop calling it.
            _log.exception("on_line callback failed; no more lines are streamed for this hook")
            self.on_line = None


class _HookProtocol(asyncio.SubprocessProtocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int, on_line: OnLine | None) -> None:
        self.loop = loop
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.captures = {
            1: _Capture("stdout", cap, on_line, self._overflowed),
            2: _Capture("stderr", cap, on_line),
        }
        self._open = {1, 2}
        self._exit_waiter: asyncio.Future[None] | None = None

    @property
    def overflowed(self) -> bool:
        """stdout passed the cap: the answer is unusable."""
        return self.captures[1].truncated

    def _overflowed(self) -> None:
        if self._exit_waiter is not None:
            _release(self._exit_waiter)

    async def wait_exited(self, timeout: float) -> bool:  # noqa: ASYNC109 -- the caller acts on expiry itself
        """Wait until the process exits, stdout overflows or ``timeout`` seconds pass; True if it exited.
        Cancelling the caller leaves ``exited`` untouched. (``asyncio.wait`` would do, at two loop iterations
        per wake-up instead of one: a measurable share of a 1 ms hook round trip.)"""
        if self.exited.done() or self.overflowed:
            return self.exited.done()
        waiter = self._exit_waiter = self.loop.create_future()
        expiry = self.loop.call_later(timeout, _release, waiter)
        try:
            await waiter
        finally:
            expiry.cancel()
            self._exit_waiter = None
        return self.exited.done()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        capture = self.captures.get(fd)
        if capture is not None:
            capture.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd in self._open:
            self._open.discard(fd)
            self.captures[fd].finish()
            if not self._open and not self.closed.done():
                self.closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        if self._exit_waiter is not None:
            _release(self._exit_waiter)


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (zombies do not count: where PID 1 does not reap
    orphans, they linger with the group id but are dead)."""
    if not _reaper.group_exists(pgid):
        return False
    if not sys.platform.startswith("linux"):
        return True
    return _linux_group_has_live_member(pgid)


def _linux_group_has_live_member(pgid: int) -> bool:
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            # "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


async def _terminate_group(pgid: int, protocol: _HookProtocol, grace: float) -> None:
    """SIGTERM the group, give it ``grace`` seconds, SIGKILL whatever is left, wait for the leader and the
    group to be gone (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    _signal_group(pgid, signal.SIGTERM)
    await asyncio.wait([protocol.exited], timeout=grace)
    # Polling: members other than the leader are not our children, so nothing notifies us when they exit.
    while _group_alive(pgid) and (remaining := deadline - loop.time()) > 0:  # noqa: ASYNC110
        await asyncio.sleep(min(_POLL, remaining))
    if protocol.exited.done() and not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGKILL)
    await asyncio.wait([protocol.exited], timeout=_KILL_WAIT)
    end = loop.time() + _KILL_WAIT
    while _group_alive(pgid) and loop.time() < end:  # noqa: ASYNC110
        await asyncio.sleep(_POLL)


def _feed_stdin(transport: asyncio.SubprocessTransport, data: bytes) -> None:
    pipe = transport.get_pipe_transport(0)
    if not isinstance(pipe, asyncio.WriteTransport):
        return
    try:
        if data:
            pipe.write(data)  # buffered by the loop; flushed as the hook reads
        pipe.write_eof()  # closes stdin once the buffer is flushed
    except (BrokenPipeError, ConnectionResetError):
        pass  # the hook closed stdin or already exited: it did not want the input


def _spawn_failure(name: str, argv: Sequence[str], cwd: str | None, exc: OSError) -> HookOutcome:
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError):
        if cwd is not None and exc.filename == cwd and not os.path.isdir(cwd):
            return HookOutcome(
                name=name, error_kind="spawn_failed", error=f"hook {name} could not start: no directory {cwd}"
            )
        return HookOutcome(name=name, error_kind="not_found", error=f"hook {name} could not start: {argv[0]}: {reason}")
    if isinstance(exc, PermissionError):
        return HookOutcome(
            name=name, error_kind="not_executable", error=f"hook {name} could not start: {argv[0]}: {reason}"
        )
    return HookOutcome(name=name, error_kind="spawn_failed", error=f"hook {name} could not start: {reason}")


async def run_process(
    argv: Sequence[str],
    stdin: bytes = b"",
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | Mapping[bytes, bytes] | None = None,
    timeout: float,  # noqa: ASYNC109 -- not a cancel scope: expiry terminates the process group
    kill_grace: float = 2.0,
    drain_window: float = 0.5,
    output_cap: int = OUTPUT_CAP,
    on_line: OnLine | None = None,
    name: str | None = None,
    via_shell: bool = False,
    shell_fallback: bool = False,
    keep: KeptProcesses | None = None,
) -> HookOutcome:
    """Run one program to completion under the process contract in the module docstring.

    ``via_shell`` says ``argv`` is a shell running the hook (so 128+N means "child died of signal N");
    ``shell_fallback`` retries a file without a shebang (ENOEXEC) through ``/bin/sh``. ``keep``: when the program
    exits on its own, what it leaves running is handed to it instead of being killed
    (:mod:`hookloop.command_hooks.kept`); a timeout, an stdout over the cap or a cancellation still kill
    everything. Never raises for hook failures — they are outcomes; raises :class:`asyncio.CancelledError`
    after cleanup when cancelled.
    """
    if not argv:
        raise ValueError("run_process needs a non-empty argv")
    label = name if name is not None else shlex.join(argv)
    loop = asyncio.get_running_loop()
    started = loop.time()
    protocol = _HookProtocol(loop, output_cap, on_line)
    try:
        transport: asyncio.SubprocessTransport | None = spawn_group_light(protocol, *argv, cwd=cwd, env=env)
        if transport is None:  # no pidfd here: asyncio's own subprocess machinery
            transport, _ = await spawn_group(
                lambda: protocol,
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,  # spawn_group copies it (adding the call's token)
            )
    except OSError as exc:
        if shell_fallback and exc.errno == errno.ENOEXEC:
            return await run_process(
                ["/bin/sh", *argv],
                stdin,
                cwd=cwd,
                env=env,
                timeout=timeout,
                kill_grace=kill_grace,
                drain_window=drain_window,
                output_cap=output_cap,
                on_line=on_line,
                name=label,
                via_shell=True,
                keep=keep,
            )
        outcome = _spawn_failure(label, argv, cwd, exc)
        return _with(outcome, timeout=timeout, duration=loop.time() - started)

    pgid = transport.get_pid()
    timed_out = False
    kept = False
    try:
        _feed_stdin(transport, stdin)
        if not await protocol.wait_exited(timeout):
            timed_out = not protocol.overflowed
            await _terminate_group(pgid, protocol, kill_grace)
        else:
            # The pipes usually close before the exit is reported: then there is nothing to wait for.
            if not protocol.closed.done():
                await asyncio.wait([protocol.closed], timeout=drain_window)
            if keep is not None and not protocol.overflowed:
                kept = True  # what it left runs on; our ends of the pipes are closed below
            elif _group_alive(pgid):
                await _terminate_group(pgid, protocol, kill_grace)
        if not kept and not protocol.closed.done():
            await _reaper.release(pgid)  # a process that left the group may hold the pipes: it dies now
            await asyncio.wait([protocol.closed], timeout=_PIPE_CLOSE_WAIT)
    except asyncio.CancelledError:
        kept = False
        try:
            await _terminate_group(pgid, protocol, kill_grace)
        except asyncio.CancelledError:
            _signal_group(pgid, signal.SIGKILL)
            raise
        raise
    finally:
        for capture in protocol.captures.values():
            capture.finish()
        transport.close()
        if not (kept and keep is not None and _handed_over(keep, pgid, label)):
            await _reaper.release(pgid)  # what left the group (setsid …): killed and reaped too

    returncode = transport.get_returncode()
    out, err = protocol.captures[1], protocol.captures[2]
    stderr_text = bytes(err.data).decode("utf-8", errors="replace")
    kind: ErrorKind = "ok"
    sig: int | None = None
    message: str | None = None
    exit_code: int | None = returncode
    if returncode is not None and returncode < 0:
        sig, exit_code = -returncode, None
    if out.truncated:
        kind = "output_too_large"
        message = (
            f"hook {label} wrote more than {_size(output_cap)} to stdout (the output cap): its answer was "
            "discarded, not read, and the hook was stopped"
        )
    elif timed_out:
        kind = "timeout"
        message = (
            f"hook {label} timed out after {timeout:g} s; its process group was terminated "
            f"(SIGTERM, and SIGKILL after {kill_grace:g} s for anything still running)"
        )
    elif returncode is None:
        kind = "crashed"
        message = f"hook {label} did not exit"
    elif returncode < 0:
        kind = "crashed"
    else:
        kind, sig = classify_exit(returncode, stderr_text, via_shell=via_shell)
        if kind != "ok":
            first = stderr_text.strip().split("\n", 1)[0]
            detail = f": {first}" if first else ""
            message = f"hook {label} could not run (exit {returncode}){detail}"
    if kind == "crashed" and sig is not None:
        message = f"hook {label} was killed by signal {_signal_name(sig)}"
    return HookOutcome(
        name=label,
        error_kind=kind,
        error=message,
        exit_code=exit_code,
        signal=sig,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        timed_out=timed_out,
        timeout=timeout,
        duration=loop.time() - started,
        pid=pgid,
    )


def _handed_over(keep: KeptProcesses, pgid: int, label: str) -> bool:
    """Give what the hook led by ``pgid`` left running to ``keep``; False if that failed (then it is killed)."""
    try:
        keep.keep(pgid, label)
    except Exception:
        _log.exception("hook %s: its background processes could not be kept; they are killed", label)
        return False
    return True


def _size(count: int) -> str:
    if count >= 1 << 20 and count % (1 << 20) == 0:
        return f"{count >> 20} MiB"
    if count >= 1 << 10 and count % (1 << 10) == 0:
        return f"{count >> 10} KiB"
    return f"{count} bytes"


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


def _with(outcome: HookOutcome, *, timeout: float, duration: float) -> HookOutcome:
    return HookOutcome(
        name=outcome.name,
        error_kind=outcome.error_kind,
        error=outcome.error,
        timeout=timeout,
        duration=duration,
    )


# --------------------------------------------------------------------------------------------------------------
# Hooks
# --------------------------------------------------------------------------------------------------------------


def _encode(payload: Mapping[str, object] | bytes) -> bytes:
    if isinstance(payload, bytes):
        return payload
    return _PAYLOAD_JSON.encode(payload).encode("utf-8")


_PAYLOAD_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""``json.dumps(payload, ensure_ascii=False, separators=(",", ":"))`` without a new encoder per firing."""


_PROTOCOL_VARS = (
    "HOOKLOOP_PROJECT_DIR",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_SESSION_ID",
    "HOOKLOOP_SESSION_ID",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
)


def _hook_env(
    hook: ConfiguredHook, project: str, opts: RunnerOptions, extra_env: Mapping[str, str] | None
) -> tuple[dict[str, str], Mapping[str, str]]:
    """The protocol variables for ``hook`` (``extra_env``, the project directory, a plugin's root and data
    folder), and a lazy view of everything it sees before the secret filter (placeholders in exec form and
    HTTP header variables read it); see :mod:`hookloop.command_hooks.environment` for the whole rule."""
    overrides = {**(extra_env or {}), "HOOKLOOP_PROJECT_DIR": project, "CLAUDE_PROJECT_DIR": project}
    if type(hook.handler) is CommandHandler:  # Claude Code's command hooks run with CLAUDECODE=1 (Cline's: no)
        overrides["CLAUDECODE"] = "1"
    source = hook.source
    if source.plugin_root is not None:
        overrides["CLAUDE_PLUGIN_ROOT"] = source.plugin_root
        if source.plugin_data is not None:
            overrides["CLAUDE_PLUGIN_DATA"] = source.plugin_data
    base: MutableMapping[str, str] = os.environ if opts.base_env is None else dict(opts.base_env)
    if opts.settings_env:
        return overrides, collections.ChainMap(overrides, dict(opts.settings_env), base)
    return overrides, collections.ChainMap(overrides, base)


async def run_hook(
    hook: ConfiguredHook,
    payload: Mapping[str, object] | bytes,
    *,
    project_dir: str | os.PathLike[str],
    options: RunnerOptions | None = None,
    on_line: OnLine | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> HookOutcome:
    """Run one configured hook with ``payload`` (already in the hook's own protocol) as its input."""
    opts = options or RunnerOptions()
    project = os.fspath(project_dir)
    body = _encode(payload)
    handler = hook.handler
    if isinstance(handler, ProcessHandler):
        return await _run_in_process(hook, handler, body, project, opts, extra_env)
    overrides, env = _hook_env(hook, project, opts, extra_env)
    timeout = default_timeout(hook.event, hook, opts)
    if isinstance(handler, HttpHandler):
        return await run_http(
            handler,
            body,
            timeout=timeout,
            environ=env,
            url_allowlist=opts.http_url_allowlist,
            env_allowlist=opts.http_env_allowlist,
            output_cap=opts.output_cap,
        )
    if isinstance(handler, (PromptHandler, McpToolHandler)):  # run by the Worker's bridge (_firing.run_mixed)
        kind = handler.kind if isinstance(handler, PromptHandler) else "mcp_tool"
        message = f"hook {hook.name}: {kind} handlers run only inside a Worker (they need its model or MCP servers)"
        return HookOutcome(name=hook.name, error_kind="spawn_failed", error=message, timeout=timeout)
    if isinstance(handler, PythonHandler):
        message = f"hook {hook.name}: python handlers are typed hooks registered on the Worker; they do not run here"
        return HookOutcome(name=hook.name, error_kind="spawn_failed", error=message, timeout=timeout)
    if isinstance(handler, ClineScript):
        argv = launcher_for(handler.path, opts.platform)
        via_shell, fallback = False, not is_windows(opts.platform)
    else:
        argv = command_argv(handler, platform=opts.platform, env=env)
        via_shell, fallback = handler.args is None, False
    if opts.sandbox is not None and opts.sandbox.covers_hook(hook):
        return await _run_sandboxed(opts.sandbox, hook, argv, body, project, opts, env, on_line, via_shell, fallback)
    env_ = hook_environment_bytes(
        opts.base_env,
        settings_env=dict(opts.settings_env),
        allowlist=opts.env_allowlist,
        scrub=opts.scrub_env,
        overrides=overrides,
    )
    return await _run_hook_process(hook, argv, body, project, opts, env_, on_line, via_shell, fallback, timeout)


async def _run_in_process(
    hook: ConfiguredHook,
    handler: ProcessHandler,
    body: bytes,
    project: str,
    opts: RunnerOptions,
    extra_env: Mapping[str, str] | None,
) -> HookOutcome:
    """A firing of a ``process`` handler: one request to its running hook process (started if need be)."""
    found = _process_of(hook, handler, project, opts, _lasting(extra_env), extra_env)
    if isinstance(found, HookOutcome):
        return found
    process, timeout = found
    return await process.request(hook.event, body, timeout=timeout)


def _lasting(extra_env: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """The variables of ``extra_env`` a hook process keeps (not the per-firing ones), as a memo key."""
    if not extra_env or extra_env.keys() <= _PER_FIRING_VARS:  # the bridge's usual: only per-firing ones
        return ()
    return tuple(sorted(i for i in extra_env.items() if i[0] not in _PER_FIRING_VARS))


def _process_of(
    hook: ConfiguredHook,
    handler: ProcessHandler,
    project: str,
    opts: RunnerOptions,
    lasting: tuple[tuple[str, str], ...],
    extra_env: Mapping[str, str] | None,
) -> tuple[HookProcess, float] | HookOutcome:
    """The hook process a firing of ``hook`` goes to and the firing's timeout, or the outcome of a firing that
    cannot run. Remembered in the pool per (hook, project, ``lasting`` — :func:`_lasting` of ``extra_env``) for
    these ``opts``; the process's environment is computed when it starts, not here."""
    pool = opts.processes
    if pool is None or (opts.sandbox is not None and opts.sandbox.covers_hook(hook)):  # checked at every firing
        timeout = default_timeout(hook.event, hook, opts)
        if pool is None:
            message = f"hook {hook.name}: process handlers run only inside a Worker (hookloop keeps the process)"
        else:
            message = f"hook {hook.name}: process handlers cannot run under the hook sandbox; use a command handler"
        return HookOutcome(name=hook.name, error_kind="spawn_failed", error=message, timeout=timeout)
    # exec form with a $ placeholder expands from the environment: not remembered (it may change)
    memo = handler.args is None or ("$" not in handler.command and not any("$" in a for a in handler.args))
    key = (id(hook), project, lasting)
    if memo:
        known = pool.resolved.get(key)  # only memo-able hooks are in it
        if known is not None and known[0] is opts and known[1] is hook:
            return known[2], known[3]
    timeout = default_timeout(hook.event, hook, opts)
    overrides, env = _hook_env(hook, project, opts, extra_env)
    argv = command_argv(CommandHandler(command=handler.command, args=handler.args), platform=opts.platform, env=env)
    kept = {k: v for k, v in overrides.items() if k not in _PER_FIRING_VARS}

    def process_env() -> dict[bytes, bytes]:
        return hook_environment_bytes(
            opts.base_env,
            settings_env=dict(opts.settings_env),
            allowlist=opts.env_allowlist,
            scrub=opts.scrub_env,
            overrides=kept,
        )

    process = pool.get(hook, argv, cwd=project, env=process_env)
    if memo:
        if len(pool.resolved) >= _PROCESS_MEMO:
            pool.resolved.clear()
        pool.resolved[key] = (opts, hook, process, timeout)
    return process, timeout


_PROCESS_MEMO = 1024


_PER_FIRING_VARS = frozenset({"CLAUDE_ENV_FILE", "CLAUDE_CODE_SESSION_ID", "HOOKLOOP_SESSION_ID"})
"""Variables that differ per firing: a long-lived process cannot get them in its environment."""


async def _run_hook_process(
    hook: ConfiguredHook,
    argv: Sequence[str],
    body: bytes,
    project: str,
    opts: RunnerOptions,
    env: Mapping[str, str] | Mapping[bytes, bytes] | None,
    on_line: OnLine | None,
    via_shell: bool,
    fallback: bool,
    timeout: float,  # noqa: ASYNC109 -- passed on to run_process (expiry terminates the group)
) -> HookOutcome:
    return await run_process(
        argv,
        body,
        cwd=project,
        env=env,
        timeout=timeout,
        kill_grace=opts.kill_grace,
        drain_window=opts.drain_window,
        output_cap=opts.output_cap,
        on_line=on_line,
        name=hook.name,
        via_shell=via_shell,
        shell_fallback=fallback,
        keep=opts.kept if opts.keep_background > 0 and _keeps_background(hook) else None,
    )


def _keeps_background(hook: ConfiguredHook) -> bool:
    handler = hook.handler
    return not isinstance(handler, CommandHandler) or handler.keep_background


async def _run_sandboxed(
    sandbox: HookSandbox,
    hook: ConfiguredHook,
    argv: list[str],
    body: bytes,
    project: str,
    opts: RunnerOptions,
    env: Mapping[str, str],
    on_line: OnLine | None,
    via_shell: bool,
    fallback: bool,
) -> HookOutcome:
    from hookloop.sandbox import SandboxError

    try:
        scrubbed = hook_environment_bytes(
            dict(env),
            settings_env={},
            allowlist=opts.env_allowlist,
            scrub=opts.scrub_env,
            overrides={k: env[k] for k in _PROTOCOL_VARS if k in env},
        )
        plain = {os.fsdecode(k): os.fsdecode(v) for k, v in scrubbed.items()}
        async with sandbox.open_command(argv, cwd=project, env=plain) as wrapped:
            timeout = default_timeout(hook.event, hook, opts)
            outcome = await _run_hook_process(
                hook, wrapped.argv, body, project, opts, wrapped.env, on_line, via_shell, False, timeout
            )
    except SandboxError as exc:
        return HookOutcome(name=hook.name, error_kind="spawn_failed", error=f"hook {hook.name} not run: {exc}")
    # bwrap itself reports a program it cannot execute (exit 1): the same "could not run" kinds as a spawn.
    first = outcome.stderr.split(b"\n", 1)[0]
    if outcome.exit_code == 1 and first.startswith(b"bwrap: execvp "):
        if first.endswith(b"Exec format error") and fallback:
            return await _run_sandboxed(
                sandbox, hook, ["/bin/sh", *argv], body, project, opts, env, on_line, True, False
            )
        kind: ErrorKind = "not_executable" if first.endswith(b"Permission denied") else "not_found"
        message = f"hook {hook.name} could not start: {first.decode('utf-8', 'replace').removeprefix('bwrap: ')}"
        return HookOutcome(name=hook.name, error_kind=kind, error=message, timeout=outcome.timeout)
    return outcome


async def run_all(
    hooks: Sequence[ConfiguredHook],
    payload: Mapping[str, object] | bytes,
    *,
    project_dir: str | os.PathLike[str],
    cline_payload: Mapping[str, object] | bytes | None = None,
    options: RunnerOptions | None = None,
    on_line: OnHookLine | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> tuple[HookOutcome, ...]:
    """Run every hook of one event firing in parallel; outcomes come back in ``hooks`` order.

    Command and HTTP hooks receive ``payload`` (Claude Code's input shape); Cline scripts receive
    ``cline_payload`` (required when any are present). Every hook runs to completion — one hook's "deny" does
    not stop its siblings. ``on_line(hook, stream, line)`` receives output lines as they arrive. Cancelling the
    awaiting task terminates every running hook's process group at once, waits for them, then re-raises.
    """
    if cline_payload is None and any(isinstance(hook.handler, ClineScript) for hook in hooks):
        raise ValueError("run_all: Cline scripts are among the hooks but no cline_payload was given")
    claude_body = _encode(payload)
    cline_body = _encode(cline_payload) if cline_payload is not None else b""

    durable = current_effects.get() is not None
    call_id = payload.get("tool_use_id") if durable and isinstance(payload, Mapping) else None

    async def one(hook: ConfiguredHook) -> HookOutcome:
        tagged: OnLine | None = None if on_line is None else functools.partial(on_line, hook)
        body = cline_body if hook.protocol == "cline" else claude_body
        fire = functools.partial(
            run_hook, hook, body, project_dir=project_dir, options=options, on_line=tagged, extra_env=extra_env
        )
        if not durable:
            return await fire()
        return await perform_effect(
            "hook",
            *hook_effect(hook, call_id),
            fire,
            outcome_to_json,
            outcome_from_json,
        )

    if not hooks:
        return ()
    sent = None if durable else _send_to_processes(hooks, claude_body, os.fspath(project_dir), options, extra_env)
    if sent is not None and len(sent.sent) == len(hooks):  # all to running hook processes: no task, no coroutine
        return tuple(await sent.outcomes())
    if len(hooks) == 1:
        return (await one(hooks[0]),)
    if not sent:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(hook)) for hook in hooks]
        return tuple(task.result() for task in tasks)
    # Requests to running hook processes went out already: their answers are awaited together, not in tasks.
    outcomes: dict[int, HookOutcome] = {}
    async with asyncio.TaskGroup() as group:
        others = {i: group.create_task(one(hook)) for i, hook in enumerate(hooks) if i not in sent.positions}
        answered = await sent.outcomes()
    outcomes.update(zip(sent.positions, answered, strict=True))
    outcomes.update((i, task.result()) for i, task in others.items())
    return tuple(outcomes[i] for i in range(len(hooks)))


class _Sent(Batch):
    """A :class:`Batch` that also knows each request's hook (its position in ``hooks``)."""

    __slots__ = ("positions",)

    def __init__(self) -> None:
        super().__init__()
        self.positions: list[int] = []


def _send_to_processes(
    hooks: Sequence[ConfiguredHook],
    body: bytes,
    project: str,
    options: RunnerOptions | None,
    extra_env: Mapping[str, str] | None,
) -> _Sent | None:
    """Send the requests of the ``process`` hooks among ``hooks`` whose process already runs (positions in
    ``hooks`` in :attr:`_Sent.positions`); ``None`` when none could be sent this way."""
    if options is None or options.processes is None:
        return None
    resolved = options.processes.resolved
    sandbox = options.sandbox  # when set, every firing goes through _process_of and its sandbox check
    sent: _Sent | None = None
    lasting: tuple[tuple[str, str], ...] | None = None
    event, tail = "", b""
    for i, hook in enumerate(hooks):
        handler = hook.handler
        if type(handler) is ProcessHandler or isinstance(handler, ProcessHandler):
            if lasting is None:
                lasting = _lasting(extra_env)
            if hook.event != event:  # one line for every process of the event
                event, tail = hook.event, request_tail(hook.event, body)
            known = None if sandbox is not None else resolved.get((id(hook), project, lasting))  # _process_of's memo
            if known is not None and known[0] is options and known[1] is hook:
                process, timeout = known[2], known[3]
            else:
                found = _process_of(hook, handler, project, options, lasting, extra_env)
                if isinstance(found, HookOutcome):
                    continue
                process, timeout = found
            if sent is None:
                sent = _Sent()
            if process.submit(sent, tail, timeout=timeout):
                sent.positions.append(i)
    return sent if sent is not None and sent.sent else None
