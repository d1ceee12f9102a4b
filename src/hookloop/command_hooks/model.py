"""Value types of command hooks: where a hook came from, what runs, what went wrong loading it, and what
happened when it ran (:class:`HookOutcome`).

Every type here is a frozen, slotted, keyword-only dataclass. Event names are strings on purpose: this is the
wire edge, and the names are the vendors' (Claude Code's PascalCase events, Cline's file names).
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass
from typing import Literal, TypeAlias

from hookloop._frozen import FrozenDict

__all__ = [
    "CLAUDE_EVENTS",
    "CLINE_CANCELLABLE_EVENTS",
    "CLINE_EVENTS",
    "MATCHER_EVENTS",
    "NEVER_FIRED_EVENTS",
    "OUTPUT_CAP",
    "OWN_HANDLER_TYPES",
    "SUPPORTED_EVENTS",
    "TOOL_EVENTS",
    "ClineScript",
    "CommandHandler",
    "ConfiguredHook",
    "Diagnostic",
    "ErrorKind",
    "Handler",
    "HookOutcome",
    "HookSource",
    "HttpHandler",
    "McpToolHandler",
    "ProcessHandler",
    "PromptHandler",
    "PythonHandler",
    "Severity",
    "SourceKind",
]

SUPPORTED_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "StopFailure",
    "PreCompact",
    "PostCompact",
    "PermissionDenied",
    "ConfigChange",
    "CwdChanged",
    "FileChanged",
    "Elicitation",
    "ElicitationResult",
)
"""Claude Code events hookloop fires (and translates)."""

CLAUDE_EVENTS: frozenset[str] = frozenset(
    {
        *SUPPORTED_EVENTS,
        "Setup",
        "InstructionsLoaded",
        "UserPromptExpansion",
        "MessageDisplay",
        "PermissionDenied",
        "SubagentStart",
        "SubagentStop",
        "TaskCreated",
        "TaskCompleted",
        "TeammateIdle",
        "ConfigChange",
        "CwdChanged",
        "DirectoryAdded",
        "FileChanged",
        "WorktreeCreate",
        "WorktreeRemove",
        "Elicitation",
        "ElicitationResult",
    }
)
"""Every event Claude Code documents. A known event hookloop does not fire is loaded with an info diagnostic;
an unknown name is an error."""

NEVER_FIRED_EVENTS: frozenset[str] = CLAUDE_EVENTS - frozenset(SUPPORTED_EVENTS)
"""Documented Claude Code events hookloop has no moment for (``Setup``: no init/maintenance mode;
``InstructionsLoaded``: hookloop loads no CLAUDE.md; task, team, worktree … events):
their hooks load and never run (``hookloop hooks list`` marks them, ``hooks validate`` warns)."""

MATCHER_EVENTS: frozenset[str] = frozenset(
    {
        "SessionStart",
        "Setup",
        "InstructionsLoaded",
        "UserPromptExpansion",
        "PreToolUse",
        "PermissionRequest",
        "PermissionDenied",
        "PostToolUse",
        "PostToolUseFailure",
        "Notification",
        "SubagentStart",
        "SubagentStop",
        "StopFailure",
        "ConfigChange",
        "DirectoryAdded",
        "FileChanged",
        "PreCompact",
        "PostCompact",
        "Elicitation",
        "ElicitationResult",
        "SessionEnd",
    }
)
"""Events whose matcher filters something; on every other event a matcher is ignored (matches all)."""

TOOL_EVENTS: frozenset[str] = frozenset(
    {"PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure"}
)
"""Events where a handler's ``if`` permission-rule filter applies; with ``if`` on any other event a handler
never runs."""

CLINE_EVENTS: tuple[str, ...] = (
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Notification",
    "PreCompact",
)
"""Classic Cline hook names (``VALID_HOOK_TYPES``): a script file named after one of them is that hook."""

CLINE_CANCELLABLE_EVENTS: frozenset[str] = frozenset(
    {"TaskStart", "TaskResume", "PreToolUse", "PostToolUse", "UserPromptSubmit"}
)
"""Cline events where ``cancel: true`` stops the task; elsewhere it is ignored."""

SourceKind: TypeAlias = Literal[
    "claude-user",
    "hookloop-user",
    "claude-project",
    "hookloop-project",
    "claude-local",
    "hookloop-local",
    "cline-user",
    "hookloop-scripts",
    "cline-project",
    "claude-plugin",
]

_PROJECT_KINDS = frozenset({"claude-project", "hookloop-project", "claude-local", "hookloop-local", "cline-project"})
_LABELS: dict[str, str] = {
    "claude-user": "User",
    "hookloop-user": "User",
    "cline-user": "User",
    "hookloop-scripts": "User",
    "claude-project": "Project",
    "hookloop-project": "Project",
    "cline-project": "Project",
    "claude-local": "Local",
    "hookloop-local": "Local",
    "claude-plugin": "Plugin",
}

Severity: TypeAlias = Literal["error", "warning", "info"]

OUTPUT_CAP = 1 << 20
"""Bytes of output kept per stream (stdout, stderr; an HTTP hook's body)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookSource:
    """A settings file or a hook-script directory, labelled with the layer it belongs to."""

    kind: SourceKind
    path: str
    plugin: str | None = None
    """For ``claude-plugin`` sources: the plugin's id (``name@marketplace``)."""
    plugin_root: str | None = None
    """For ``claude-plugin`` sources: the installed plugin's folder (``CLAUDE_PLUGIN_ROOT``)."""
    plugin_data: str | None = None
    """For ``claude-plugin`` sources: its persistent data folder (``CLAUDE_PLUGIN_DATA``)."""
    enabled_by_project: bool = False
    """For ``claude-plugin`` sources: only a project-level settings file enables it, so it needs project
    trust."""
    disabled_by_project: bool = False
    """For ``claude-plugin`` sources: the user's files enable it and a project file turns it off; it runs
    only while that project is untrusted (an untrusted project's files have no effect)."""

    @property
    def project_level(self) -> bool:
        """True for files and scripts inside the project, and for plugins a project file enabled: they run
        only once the project is trusted."""
        return self.kind in _PROJECT_KINDS or self.enabled_by_project

    @property
    def label(self) -> str:
        """``User`` / ``Project`` / ``Local``: the tag an approval prompt shows (Claude Code's ``[Project]``)."""
        return _LABELS[self.kind]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandHandler:
    """``{"type": "command", ...}``: a shell string (``sh -c``), or an executable plus ``args`` (no shell)."""

    command: str
    args: tuple[str, ...] | None = None
    """Exec form when not ``None`` (even when empty): ``command`` is spawned directly with these arguments."""
    timeout: float | None = None
    """Seconds; ``None`` means the event's default (see :func:`hookloop.command_hooks.runner.default_timeout`)."""
    condition: str | None = None
    """The ``if`` permission-rule filter (e.g. ``Bash(git *)``), evaluated by the caller before spawning."""
    fail_closed: bool = False
    """When the hook cannot run (missing, not executable, crashed, timed out) block instead of allowing."""
    run_async: bool = False
    """``async``: run in the background, never blocks."""
    async_rewake: bool = False
    """``asyncRewake``: run in the background; exit 2 wakes the model (:mod:`hookloop.command_hooks.rewake`)."""
    rewake_message: str | None = None
    """``rewakeMessage``: the prefix of an asyncRewake wake-up message (the hook's output follows it)."""
    shell: Literal["bash", "powershell"] | None = None
    status_message: str | None = None
    keep_background: bool = True
    """``keepBackground`` (hookloop's own field): what the hook leaves running when it exits on its own is kept
    until the session ends (:mod:`hookloop.command_hooks.kept`); ``false`` kills it when the hook exits."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpHandler:
    """``{"type": "http", ...}``: POST the hook input as JSON to ``url``."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    """Values may reference ``$VAR`` / ``${VAR}``; only names in ``allowed_env_vars`` are substituted, the rest
    become empty strings."""
    allowed_env_vars: tuple[str, ...] = ()
    timeout: float | None = None
    condition: str | None = None
    fail_closed: bool = False
    status_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClineScript:
    """A Cline hook: an executable file named after the event, found in a hook directory."""

    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptHandler:
    """``{"type": "prompt" | "agent", ...}``: a model judges the hook input and answers ``{"ok": bool, "reason":
    str}`` (see :mod:`hookloop.command_hooks._llm_handlers`). ``agent`` runs a sub-run with the read-only tools
    Read, Grep and Glob (up to 50 turns) before it answers."""

    kind: Literal["prompt", "agent"]
    prompt: str
    """The instruction; ``$ARGUMENTS`` is replaced by the hook input JSON (appended when absent)."""
    model: str | None = None
    """A model name for the Worker's client (a small model); ``None`` = the Worker's own model."""
    continue_on_block: bool = False
    """``continueOnBlock``: on PreToolUse/PostToolUse a "not ok" answer does not end the turn; the reason goes
    to the model as the tool error (PreToolUse) or next to the result (PostToolUse)."""
    timeout: float | None = None
    condition: str | None = None
    status_message: str | None = None
    fail_closed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolHandler:
    """``{"type": "mcp_tool", "server": ..., "tool": ..., "input": {...}}``: call a tool of an MCP server
    connected to the Worker; ``${tool_input.file_path}``-style references in ``input`` strings are filled from
    the hook input. The tool's text result is read as the hook's stdout (JSON iff it starts with ``{``)."""

    server: str
    tool: str
    input: FrozenDict | None = None
    """Tool arguments (templated); ``None`` = the hook input itself."""
    timeout: float | None = None
    condition: str | None = None
    status_message: str | None = None
    fail_closed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessHandler:
    """``{"type": "process", "command": ...}`` (hookloop's own settings only): a hook process hookloop starts
    once and talks to in JSON lines — one request per firing, one answer each, pipelined (see
    :mod:`hookloop.command_hooks.processes`). ``command`` is a shell string, or an executable plus ``args``."""

    command: str
    args: tuple[str, ...] | None = None
    timeout: float | None = None
    condition: str | None = None
    fail_closed: bool = False
    status_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonHandler:
    """``{"type": "python", "callable": "package.module:function"}`` (hookloop's own settings only): a typed
    in-process hook (it receives the event's frozen summary and returns a hook result), registered on the
    Worker like :meth:`hookloop.Worker.add_hook` (see :mod:`hookloop.command_hooks.python_hooks`)."""

    callable: str
    fail_closed: bool = False
    """When the callable cannot be imported: the event's calls are denied (tool events) instead of the hook
    being left out with a warning."""


OWN_HANDLER_TYPES = frozenset({"process", "python"})
"""Handler types only hookloop knows: accepted only in hookloop's own settings files (``.hookloop/``), never in
``.claude/settings.json``, which Claude Code would then reject."""

Handler: TypeAlias = (
    CommandHandler | HttpHandler | ClineScript | PromptHandler | McpToolHandler | ProcessHandler | PythonHandler
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfiguredHook:
    """One runnable handler bound to its event, matcher and origin. Its position in
    :attr:`HookConfig.hooks` is its configuration order."""

    event: str
    """Claude Code event name for command/http handlers; Cline hook name for Cline scripts."""
    matcher: str | None
    handler: Handler
    source: HookSource
    json_path: str = ""
    """Where the handler is defined inside its settings file (``hooks.PreToolUse[0].hooks[1]``); empty for
    Cline scripts."""

    @property
    def protocol(self) -> Literal["claude", "cline"]:
        """Which wire format the hook speaks."""
        return "cline" if isinstance(self.handler, ClineScript) else "claude"

    @property
    def name(self) -> str:
        """What to call the hook in messages: the script path, the command line, or the URL."""
        handler = self.handler
        if isinstance(handler, ClineScript):
            return handler.path
        if isinstance(handler, HttpHandler):
            return handler.url
        if isinstance(handler, PromptHandler):
            return f"{handler.kind}: {handler.prompt}"
        if isinstance(handler, McpToolHandler):
            return f"mcp_tool: {handler.server}/{handler.tool}"
        if isinstance(handler, PythonHandler):
            return f"python: {handler.callable}"
        if isinstance(handler, ProcessHandler):
            command = handler.command if handler.args is None else shlex.join([handler.command, *handler.args])
            return f"process: {command}"
        if handler.args is not None:
            return shlex.join([handler.command, *handler.args])
        return handler.command

    @property
    def fail_closed(self) -> bool:
        handler = self.handler
        return False if isinstance(handler, ClineScript) else handler.fail_closed

    @property
    def timeout(self) -> float | None:
        handler = self.handler
        return None if isinstance(handler, (ClineScript, PythonHandler)) else handler.timeout

    @property
    def condition(self) -> str | None:
        handler = self.handler
        return None if isinstance(handler, (ClineScript, PythonHandler)) else handler.condition


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """A problem found while loading hooks. ``error``: the entry named by ``path`` was skipped (the rest of
    the file still loads); ``warning``: it loads but something is off; ``info``: worth knowing."""

    severity: Severity
    file: str
    path: str
    """JSON path inside ``file`` (``hooks.PreToolUse[0].hooks[1].timeout``); empty for the whole file."""
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        return f"{where}: {self.message}"


ErrorKind: TypeAlias = Literal[
    "ok",
    "timeout",
    "not_found",
    "not_executable",
    "crashed",
    "spawn_failed",
    "http_error",
    "url_not_allowed",
    "output_too_large",
]
"""``ok``: the hook ran to completion and its exit code / HTTP 2xx response is meaningful. Everything else
means the hook could not give an answer. ``output_too_large``: stdout (an HTTP body) passed the output cap, so
the answer is incomplete and is never read — not as JSON, not as text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutcome:
    """What happened when one handler ran. Built by the runner; read by ``translate``."""

    name: str
    """The script path, command line or URL — what messages call the hook."""
    error_kind: ErrorKind = "ok"
    error: str | None = None
    """Human-readable description of a failure; names the hook (and the timeout, for timeouts)."""
    exit_code: int | None = None
    """The process exit status (``None`` for HTTP, for spawn failures and for deaths by signal)."""
    signal: int | None = None
    """The signal that ended the hook: its crash, or our SIGTERM/SIGKILL after a timeout."""
    http_status: int | None = None
    stdout: bytes = b""
    """Captured stdout (at most ``output_cap`` bytes); an HTTP hook's response body."""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    timeout: float | None = None
    """The timeout that applied, in seconds."""
    duration: float = 0.0
    """Seconds from spawn (or request) until the hook and its group were gone."""
    pid: int | None = None
    """Process id of the leader, which is also its process group id."""

    @property
    def ok(self) -> bool:
        """The hook ran to completion (whatever its exit code)."""
        return self.error_kind == "ok"

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def outcome_to_json(outcome: HookOutcome) -> dict[str, object]:
    """A hook outcome as JSON (an external hook effect's recorded outcome; bytes as base64)."""
    data: dict[str, object] = {}
    for name in HookOutcome.__slots__:
        value = getattr(outcome, name)
        data[name] = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
    return data


def outcome_from_json(data: object) -> HookOutcome:
    """The outcome :func:`outcome_to_json` made; a clear ``ValueError`` for anything else."""
    if not isinstance(data, dict):
        raise ValueError("recorded hook outcome: expected an object")
    fields = dict(data)
    try:
        for name in ("stdout", "stderr"):
            fields[name] = base64.b64decode(str(fields.get(name, "")), validate=True)
        return HookOutcome(**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"recorded hook outcome: {exc}") from None


def hook_effect(hook: ConfiguredHook, call_id: object) -> tuple[str, dict[str, object]]:
    """(key, describe) of one firing of ``hook`` as an effect (see :mod:`hookloop.effects`). The key names the
    hook by its layer and place in its settings file, not by its path, so it is the same on another machine."""
    call = call_id if isinstance(call_id, str) else None
    where = hook.json_path or hook.name
    return (
        f"hook:{hook.event}:{call or '-'}:{hook.source.kind}:{where}",
        {"event": hook.event, "hook": hook.name, "source": hook.source.path, "call_id": call},
    )
