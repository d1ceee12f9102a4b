"""The exception tree. Every error hookloop raises derives from :class:`HookloopError`.

::

    HookloopError
    ├── WorkerError                a run or resume ended in failure (on_abort fired once before it was raised)
    │   ├── Cancelled              worker.cancel() was called              on_abort reason "Cancelled"
    │   ├── Aborted                a hook or interceptor said Abort/Cancel on_abort reason = its reason
    │   ├── HookError              a hook raised or returned a result its event does not accept
    │   ├── ClientError            the model provider failed (providers subclass it per failure kind)
    │   ├── MaxTurnsExceeded       the run reached max_turns
    │   ├── ContextWindowExceeded  the history does not fit the model's context (compaction cancelled/impossible)
    │   └── StopHookLoopError      on_turn_end forced too many continuations in a row
    ├── WorkerStateError           an operation the Worker's current state forbids (e.g. editing a locked prefix)
    ├── CheckpointError            a checkpoint that cannot be resumed (bad version, malformed, tampered)
    ├── ConfigError                a malformed setting (names the file and the JSON path): PermissionConfigError,
    │                              SandboxConfigError
    ├── ItemError                  a history item's JSON is malformed (names the field)
    └── ToolDefinitionError        a function cannot become a tool (names the parameter)

A pause is a result (:class:`hookloop.Paused`), not an error.
"""

from __future__ import annotations

__all__ = [
    "Aborted",
    "Cancelled",
    "CheckpointError",
    "ClientError",
    "ConfigError",
    "ContextWindowExceeded",
    "HookError",
    "HookloopError",
    "ItemError",
    "MaxTurnsExceeded",
    "StopHookLoopError",
    "ToolDefinitionError",
    "WorkerError",
    "WorkerStateError",
]


class HookloopError(Exception):
    """Root of every error hookloop raises.

    ``hint`` (optional) is advice for code that calls the library (``pass api_key=``, ``fork=True``): it is
    part of ``str(error)``; :attr:`message` is the error without it — what the command line shows, with its
    own advice (a flag, a variable) instead.
    """

    hint: str | None = None

    def __init__(self, *args: object, hint: str | None = None) -> None:
        super().__init__(*args)
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text} ({self.hint})" if self.hint else text

    @property
    def message(self) -> str:
        """The error without the library :attr:`hint`."""
        return super().__str__()


class WorkerError(HookloopError):
    """A run or resume ended in failure. ``run_id`` names the run (set when the error leaves the Worker)."""

    run_id: str | None = None

    @property
    def abort_reason(self) -> str:
        """The reason on_abort receives for this error."""
        return str(self)


class Cancelled(WorkerError):
    """The run was cancelled with ``worker.cancel()``."""

    def __init__(self, message: str = "Cancelled") -> None:
        super().__init__(message)

    @property
    def abort_reason(self) -> str:
        return "Cancelled"


class Aborted(WorkerError):
    """A hook or interceptor ended the run (``Abort``/``Cancel`` results, a stream hook's ``Pause``)."""

    def __init__(self, reason: str, *, hook: str | None = None, event: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hook = hook
        self.event = event

    @property
    def abort_reason(self) -> str:
        return self.reason


class HookError(WorkerError):
    """A hook raised, or returned something its event does not accept. Names the hook and the event."""

    def __init__(self, message: str, *, hook: str, event: str, call_id: str | None = None) -> None:
        super().__init__(f"hook {hook!r} on {event}: {message}")
        self.hook = hook
        self.event = event
        self.call_id = call_id


class ClientError(WorkerError):
    """The model provider failed. ``provider`` names it; ``retryable`` tells whether a retry may help."""

    def __init__(self, message: str, *, provider: str = "unknown", retryable: bool = False) -> None:
        super().__init__(message)
        self.provider = provider
        self.retryable = retryable


class MaxTurnsExceeded(WorkerError):
    """The run reached ``max_turns`` model requests without finishing."""

    def __init__(self, max_turns: int) -> None:
        super().__init__(f"the run reached max_turns={max_turns} without finishing")
        self.max_turns = max_turns


class ContextWindowExceeded(WorkerError):
    """The request does not fit the model's context window and could not be compacted."""

    def __init__(self, tokens: int, window: int, why: str) -> None:
        super().__init__(f"the request needs about {tokens} tokens but the context window is {window}: {why}")
        self.tokens = tokens
        self.window = window


class StopHookLoopError(WorkerError):
    """on_turn_end forced ``count`` continuations in a row (the cap); the run ends instead of looping forever."""

    def __init__(self, count: int, hook: str | None) -> None:
        by = f" (last by hook {hook!r})" if hook else ""
        super().__init__(
            f"on_turn_end forced {count} continuations in a row{by}; stopping to avoid an endless loop "
            "(raise Worker(max_forced_continuations=...) if this is intended)"
        )
        self.count = count
        self.hook = hook


class WorkerStateError(HookloopError):
    """The Worker's current state forbids the operation (e.g. changing a cache-locked prefix, run while running)."""


class CheckpointError(HookloopError):
    """A checkpoint cannot be resumed: unknown version, malformed field (named), or modified after writing."""


class ConfigError(HookloopError, ValueError):
    """A setting is malformed. ``source`` names the settings file or label (``None`` for values given in code),
    ``json_path`` the offending entry (``permissions.allow[3]``), ``problem`` what is wrong; the message is
    ``source: json_path: problem``."""

    def __init__(self, problem: str, *, source: str | None = None, json_path: str | None = None) -> None:
        where = ": ".join(part for part in (source, json_path) if part)
        super().__init__(f"{where}: {problem}" if where else problem)
        self.problem = problem
        self.source = source
        self.json_path = json_path


class ItemError(HookloopError, ValueError):
    """A history item's JSON is malformed; the message names the field."""


class ToolDefinitionError(HookloopError, TypeError):
    """A function cannot become a tool; the message names the function and parameter."""
