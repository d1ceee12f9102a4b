"""``Bash``: run a shell command in the workspace, Claude Code's input shape."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import os
import shlex
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pydantic

from hookloop._frozen import freeze_object
from hookloop.tools._base import ToolContext, ToolFailure, ToolOutput
from hookloop.tools.builtin import _process
from hookloop.tools.builtin._common import BuiltinTool, HeadTail, Input
from hookloop.tools.builtin._structured import bash_response
from hookloop.tools.builtin._workspace import Workspace

if TYPE_CHECKING:
    from hookloop.sandbox import Sandbox

__all__ = ["BashTool"]

MAX_TIMEOUT_MS = 600_000
DEFAULT_TIMEOUT_MS = 120_000
OUTPUT_CAP = 30_000
_SESSION_ENV_VAR = "HOOKLOOP_SESSION_ENV_SCRIPT"


class BashInput(Input):
    command: str = pydantic.Field(min_length=1)
    description: str | None = None
    timeout: int | None = pydantic.Field(default=None, gt=0, le=MAX_TIMEOUT_MS)
    run_in_background: bool | None = None


class SandboxedBashInput(BashInput):
    """The input when a sandbox is on: Claude Code adds this field then."""

    dangerouslyDisableSandbox: bool | None = None  # Claude Code's field name


class BashTool(BuiltinTool[BashInput]):
    """Runs ``command`` with ``bash -c`` (``/bin/sh -c`` without bash) in the workspace.

    - The child leads a new process group, stdin is /dev/null, stdout and stderr are captured interleaved and
      capped at ``output_cap`` characters (head and tail kept, the cut marked).
    - Timeout (``timeout`` in ms, default 2 min, at most 10 min) and cancellation stop the whole group: SIGTERM,
      a short grace, SIGKILL, then wait. Background processes left when the shell exits are stopped too, and
      so are processes that left the group (``setsid``, ``setpgid``): they carry the call's token in their
      environment and are killed and reaped when the call ends (Linux; see :mod:`hookloop._reaper` for what
      remains out of reach — a process that also clears its environment, or has a daemon start it).
      (``run_in_background`` is accepted and not supported: the command runs in the foreground and the output
      says so.)
    - The working directory persists between calls of this tool object (an EXIT trap records ``pwd -P``; a
      command that replaces that trap, or a timeout, leaves it unchanged); a ``cd`` outside the workspace is
      reset to the root with a note. Environment changes do not persist, except what session hooks write to
      ``CLAUDE_ENV_FILE`` (see :meth:`attach_session_env`).
    - A non-zero exit is an error result ending in ``Exit code N``; a timeout is an error result with the
      output so far.

    Without ``sandbox`` the command may touch anything the process can: govern it with permission rules
    (``Bash(...)``). With an active :class:`hookloop.sandbox.Sandbox`, every command not in
    ``excludedCommands`` runs inside it (the OS confines its files and network, and those of everything it
    starts); a failure that looks like the sandbox's doing says so, and the hosts its proxy refused are named.
    The input then accepts ``dangerouslyDisableSandbox: true`` (Claude Code's field) when
    ``allowUnsandboxedCommands`` is on: the command runs unsandboxed, and the permission policy always asks
    first. An enabled but unavailable sandbox fails every call with ``failIfUnavailable``; otherwise the first
    result carries a loud warning and commands run unsandboxed.
    """

    input_model = BashInput
    name = "Bash"
    description = (
        "Run a shell command (bash) in the workspace and return its combined stdout and stderr. "
        "The working directory persists between calls; environment variables do not. "
        f"Output is capped at {OUTPUT_CAP} characters. timeout is in milliseconds "
        f"(default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}); on timeout the command and everything it "
        "started are killed. Prefer the Read, Write, Edit, Glob and Grep tools for files."
    )
    schema = freeze_object(
        {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to execute"},
                "timeout": {
                    "type": "number",
                    "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
                },
                "description": {
                    "type": "string",
                    "description": "Clear, concise description of what this command does in 5-10 words",
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Accepted for compatibility; commands always run in the foreground here",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        }
    )

    def __init__(
        self,
        workspace: Workspace,
        *,
        env: Mapping[str, str] | None = None,
        shell: str | None = None,
        default_timeout_ms: int = DEFAULT_TIMEOUT_MS,
        output_cap: int = OUTPUT_CAP,
        grace: float = _process.GRACE,
        sandbox: Sandbox | None = None,
    ) -> None:
        super().__init__(workspace)
        self._sandbox = sandbox
        self._warned = False
        if sandbox is not None:
            sandbox.attach()
        if sandbox is not None and sandbox.settings.enabled:
            self.input_model = SandboxedBashInput  # type: ignore[misc]  # this instance adds the sandbox field
        if sandbox is not None and sandbox.settings.enabled and sandbox.settings.allow_unsandboxed_commands:
            properties = {
                **self.schema["properties"],  # type: ignore[dict-item]
                "dangerouslyDisableSandbox": {
                    "type": "boolean",
                    "description": "Run this command outside the OS sandbox (always needs approval). Only "
                    "after it failed because of the sandbox.",
                },
            }
            schema = freeze_object({**self.schema, "properties": properties})
            self._meta = dataclasses.replace(self._meta, input_schema=schema)
        self._env = dict(env or {})
        self._settings_env: dict[str, str] = {}
        self._session_script: Callable[[str], str | None] | None = None
        self._shell = shell or shutil.which("bash") or "/bin/sh"
        self._default_timeout = default_timeout_ms
        self._cap = output_cap
        self._grace = grace
        self._cwd = workspace.root

    def attach_session_env(
        self, settings_env: Mapping[str, str], session_script: Callable[[str], str | None] | None
    ) -> None:
        """Claude Code's session environment for this tool's commands: ``settings_env`` (the settings ``env``
        block) is set under the constructor's ``env``, and ``session_script(session_id)`` — the ``export``
        lines SessionStart / Setup / CwdChanged / FileChanged hooks appended to ``CLAUDE_ENV_FILE`` — is
        evaluated by the shell before each command of that session (on the command's own line, so its line
        numbers do not move; inside the sandbox too). Called by
        :meth:`hookloop.command_hooks.bridge.CommandHooks.install`; a later call replaces both."""
        self._settings_env = dict(settings_env)
        self._session_script = session_script

    @property
    def cwd(self) -> Path:
        """Where the next command starts (the last command's final directory, or the root)."""
        return self._cwd

    async def run(self, args: BashInput, ctx: ToolContext) -> object:
        notes: list[str] = []
        if args.run_in_background:
            notes.append(
                "Note: run_in_background is not supported here; the command ran in the foreground "
                "and anything it left running was stopped when it ended."
            )
        cwd = self._cwd
        if not cwd.is_dir():
            notes.append(f"Note: the working directory {cwd} no longer exists; the command ran in {self._root}.")
            cwd = self._cwd = self._root
        timeout_ms = args.timeout or self._default_timeout
        sandboxed = self._sandboxed(args, notes)
        session_env = self._session_script(ctx.session_id) if self._session_script is not None else None
        text, status, timed_out, new_cwd, blocked = await self._run(
            args.command, cwd, timeout_ms, sandboxed, session_env
        )
        notes_after = self._move_to(new_cwd)
        if sandboxed and self._sandbox is not None and (status or blocked):
            explained = self._sandbox.explain_failure(text, blocked)
            if explained:
                notes_after.append(explained)

        body = "\n".join([*notes, text] if text else notes)
        tail: list[str] = []
        if timed_out:
            tail.append(f"Command timed out after {timeout_ms} ms; it and every process it started were killed.")
        elif status is not None and status < 0:
            tail.append(f"Command was killed by signal {_signal_name(-status)}.")
        elif status:
            tail.append(f"Exit code {status}")
        tail.extend(notes_after)
        content = "\n".join(part for part in (body, *tail) if part) or "(no output)"
        if timed_out:
            raise ToolFailure(content)
        structured = bash_response(text, interrupted=status is not None and status < 0)
        return ToolOutput(content=content, is_error=bool(status), structured=structured)

    def _sandboxed(self, args: BashInput, notes: list[str]) -> bool:
        sandbox = self._sandbox
        if sandbox is None or not sandbox.settings.enabled:
            return False
        if not sandbox.availability.available:
            try:
                warning = sandbox.check_available()
            except Exception as exc:
                raise ToolFailure(f"Not run: {exc}.") from None
            if warning and not self._warned:
                self._warned = True
                notes.append(warning)
            return False
        disable = getattr(args, "dangerouslyDisableSandbox", None)
        tool_input = {"command": args.command, "dangerouslyDisableSandbox": disable}
        if disable and not sandbox.settings.allow_unsandboxed_commands:
            notes.append(
                "Note: dangerouslyDisableSandbox is not allowed (sandbox.allowUnsandboxedCommands is false); "
                "the command ran sandboxed."
            )
        return sandbox.will_sandbox(tool_input)

    @property
    def _root(self) -> Path:
        return self._workspace.root

    def _move_to(self, new_cwd: Path | None) -> list[str]:
        if new_cwd is None or new_cwd == self._cwd:
            return []
        if self._workspace.contains(new_cwd):
            self._cwd = new_cwd
            return []
        self._cwd = self._root
        return [f"Shell cwd was reset to {self._root}: the command left it at {new_cwd}, outside the workspace."]

    async def _run(
        self, command: str, cwd: Path, timeout_ms: int, sandboxed: bool = False, session_env: str | None = None
    ) -> tuple[str, int | None, bool, Path | None, list[str]]:
        """Run one command: (output, exit status or None, timed out, final directory or None, hosts the
        sandbox's proxy refused). ``session_env`` is shell text evaluated first (see
        :meth:`attach_session_env`)."""
        fd, cwd_file = tempfile.mkstemp(prefix="hookloop-bash-cwd-")
        os.close(fd)
        # The EXIT trap records the final directory even after `exit N` or a failing command. On the same line
        # as the command, so the command's line numbers in shell error messages stay right.
        record = shlex.quote(f"pwd -P >| {shlex.quote(cwd_file)}")
        env = {**os.environ, **self._settings_env, **self._env} if self._env or self._settings_env else None
        if session_env:
            env = {**(env if env is not None else os.environ), _SESSION_ENV_VAR: session_env}
            script = f'trap {record} EXIT; eval "${_SESSION_ENV_VAR}"; unset {_SESSION_ENV_VAR}; {command}'
        else:
            script = f"trap {record} EXIT; {command}"
        output = HeadTail(self._cap)
        timed_out = False
        blocked: list[str] = []
        stack = contextlib.AsyncExitStack()
        try:
            argv = [self._shell, "-c", script]
            if sandboxed:
                argv, env, blocked = await self._enter_sandbox(stack, argv, cwd, env, cwd_file)
            try:
                proc = await _process.spawn(argv, cwd=cwd, env=env, stdout=output.feed)
            except OSError as exc:
                if exc.errno == errno.E2BIG:
                    raise ToolFailure(f"The command is too long to run ({len(command)} characters).") from None
                raise ToolFailure(f"Cannot start {self._shell} in {cwd}: {exc.strerror or exc}.") from None
            try:
                async with asyncio.timeout(timeout_ms / 1000):
                    await proc.wait_exit()
            except TimeoutError:
                timed_out = True
            finally:
                # also on cancellation: stop the whole group, background children included, and wait
                complete = await proc.stop(grace=self._grace)
            text = output.text().rstrip()
            if not complete:
                text += "\n[output incomplete: a process that left the command's process group kept it open]"
            return text, None if timed_out else proc.returncode, timed_out, _read_cwd(cwd_file), list(blocked)
        finally:
            await stack.aclose()  # the sandbox's proxy and mount points, after the command is gone
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)

    async def _enter_sandbox(
        self,
        stack: contextlib.AsyncExitStack,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str] | None,
        cwd_file: str,
    ) -> tuple[list[str], dict[str, str], list[str]]:
        from hookloop.sandbox import SandboxError

        assert self._sandbox is not None
        try:
            wrapped = await stack.enter_async_context(
                self._sandbox.open_command(argv, cwd=cwd, env=env, writable_files=(cwd_file,))
            )
        except SandboxError as exc:
            raise ToolFailure(f"Cannot run the command in the sandbox: {exc}") from None
        return list(wrapped.argv), dict(wrapped.env), wrapped.blocked


def _read_cwd(path: str) -> Path | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            line = f.read().strip()
    except OSError:
        return None
    if not line:
        return None
    return Path(os.path.realpath(line))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
