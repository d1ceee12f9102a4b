"""What ``claude -p`` users expect of ``hookloop run`` / ``hookloop -p``: Claude Code's result fields, its
stream-json messages, ``--allowedTools`` / ``--disallowedTools``, the prompt from stdin, the cost of the run.

``--output-format json`` prints one object: Claude Code's result fields — ``type`` ("result"), ``subtype``
("success", "error_max_turns", "error_during_execution", or hookloop's "paused" / "cancelled"), ``is_error``,
``result`` (the answer), ``num_turns``, ``duration_ms``, ``duration_api_ms`` (time spent in model requests),
``total_cost_usd`` (null when a model has no known price: see :mod:`hookloop.providers.pricing`), ``usage``
(``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``),
``modelUsage`` (per model, with ``costUSD``), ``permission_denials`` (``tool_name``, ``tool_use_id``,
``tool_input``), ``stop_reason``, ``session_id`` — and hookloop's own beside them (``status``, ``text``,
``turns``, ``run_id``, ``transcript_path``; a pause adds ``pending`` and ``resume_command``). With
``--verbose`` it is a JSON array of every stream-json message instead, as Claude Code prints.

``--output-format stream-json`` prints one JSON object a line: hookloop's timeline events (the schema of
:func:`hookloop.timeline.event_to_json`) and, interleaved, Claude Code's messages — ``{"type": "system",
"subtype": "init", …}`` first, ``{"type": "assistant", "message": {…}}`` for each text,
tool-use or thinking block, ``{"type": "user", "message": {…}}`` for each tool result — and last the result
object above. A consumer of Claude Code's format keeps the lines whose ``type`` it knows.
"""

from __future__ import annotations

import platform
import re
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hookloop import Finished, MaxTurnsExceeded, Paused, PendingCall, Worker, WorkerError
from hookloop.cli._session import Session, UsageError, json_line
from hookloop.items import Message, Reasoning, ToolCall, ToolResult, new_id
from hookloop.providers.pricing import PRICES_AS_OF, UsageCost, cost_usd, price_for
from hookloop.stream import TextDelta, Usage
from hookloop.timeline import (
    HookDecision,
    ItemAppended,
    ModelRequestEnded,
    ModelRequestStarted,
    TimelineEvent,
    ToolStarted,
)

__all__ = [
    "ClaudeSession",
    "RunTracker",
    "mcp_config_paths",
    "read_prompt",
    "split_tool_rules",
    "system_prompt",
    "tool_rule_layers",
    "usage_json",
    "version_line",
]


def version_line() -> str:
    """``hookloop 0.1.0 (Python 3.11.9)``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mine = version("hookloop")
    except PackageNotFoundError:
        mine = "unknown"
    return f"hookloop {mine} (Python {platform.python_version()})"


# -- flags ----------------------------------------------------------------------------------------------


def split_tool_rules(values: Sequence[str]) -> list[str]:
    """Claude Code's ``--allowedTools "Bash(git log:*)" Read,Edit``: every value holds one or more rules,
    separated by commas or spaces outside parentheses. Unbalanced parentheses are a usage error."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, list[str]()
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth < 0:
                    raise UsageError(f"tool rule {value!r}: ')' without '('")
            if depth == 0 and (char == "," or char.isspace()):
                if current:
                    rules.append("".join(current))
                current = []
                continue
            current.append(char)
        if depth:
            raise UsageError(f"tool rule {value!r}: '(' is never closed")
        if current:
            rules.append("".join(current))
    return rules


def mcp_config_paths(values: Sequence[str]) -> list[Path]:
    """``--mcp-config`` values: files, or (as Claude Code allows) inline JSON, kept in a private file under
    ``$HOOKLOOP_HOME/mcp-configs`` named by its hash so the run (and a resume) can read it as a file."""
    import hashlib
    import os

    from hookloop.cli._session import home

    paths: list[Path] = []
    for value in values:
        if not value.lstrip().startswith("{"):
            paths.append(Path(value).resolve())
            continue
        folder = home() / "mcp-configs"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / f"{hashlib.sha256(value.encode()).hexdigest()[:32]}.json"
        if not path.exists():
            tmp = folder / f".{path.name}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(value)
            tmp.replace(path)
        paths.append(path)
    return paths


def tool_rule_layers(allowed: Sequence[str], disallowed: Sequence[str]) -> list[tuple[str, Mapping[str, object]]]:
    """The settings layers ``--allowedTools`` / ``--disallowedTools`` add (highest precedence; deny > ask >
    allow decides across layers, so an allowed tool that a settings file denies stays denied)."""
    layers: list[tuple[str, Mapping[str, object]]] = []
    if allowed:
        layers.append(("--allowedTools", {"permissions": {"allow": list(allowed)}}))
    if disallowed:
        layers.append(("--disallowedTools", {"permissions": {"deny": list(disallowed)}}))
    return layers


_BARE_TOOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def remove_disallowed_tools(worker: Worker, disallowed: Sequence[str]) -> None:
    """A whole tool disallowed by name (``--disallowedTools Bash``) is also taken out of the model's tool list,
    as Claude Code does; its deny rule stays as the backstop."""
    names = {t.meta.name for t in worker.tools}
    for rule in disallowed:
        if _BARE_TOOL.match(rule) and rule in names:
            worker.remove_tool(rule)


def system_prompt(system: str | None, append: str | None) -> str | None:
    """``--system-prompt`` (None: hookloop's default) with ``--append-system-prompt`` added after a blank line."""
    if not append:
        return system
    from hookloop.cli._session import DEFAULT_SYSTEM

    return f"{system or DEFAULT_SYSTEM}\n\n{append}"


def read_prompt(prompt: str | None) -> str:
    """The prompt: the argument, or stdin when it is ``-`` or missing (``echo hi | hookloop -p``).

    With a prompt argument, piped input is added after it, as ``claude -p`` does (``cat error.log | hookloop -p
    "explain this"``): stdin is read when it is a file, or a pipe that has data (or its end) within a quarter of a
    second — an idle pipe inherited from a parent that never writes is left alone rather than waited on. A
    missing prompt at a terminal, or an empty one, is a usage error."""
    if prompt is not None and prompt != "-":
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        piped = _piped_input()
        return f"{prompt}\n\n{piped}" if piped and piped.strip() else prompt
    if prompt is None and sys.stdin.isatty():
        raise UsageError("no prompt: pass it as an argument, or '-' to read it from stdin")
    text = sys.stdin.read()
    if not text.strip():
        raise UsageError("no prompt: stdin was empty")
    return text.rstrip("\n")


def _piped_input() -> str | None:
    import os
    import select
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):  # no stdin at all
        return None
    if stat.S_ISREG(mode):
        return sys.stdin.read().rstrip("\n")
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None  # a terminal, /dev/null
    ready, _, _ = select.select([sys.stdin], [], [], 0.25)
    return sys.stdin.read().rstrip("\n") if ready else None


# -- what a run cost, what it said ------------------------------------------------------------------------


def usage_json(usage: Usage) -> dict[str, object]:
    """Claude Code's (Anthropic's) usage keys."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


@dataclass(slots=True)
class RunTracker:
    """A timeline subscriber: model requests (time, usage, cost), permission denials, and Claude Code's
    stream-json messages (emitted as they happen when ``stream`` is set, always collected in ``messages``)."""

    session_id: str
    cwd: Path
    permission_mode: str
    stream: bool = False
    started: float = field(default_factory=time.monotonic)
    requests: list[UsageCost] = field(default_factory=list)
    api_seconds: float = 0.0
    denials: list[dict[str, object]] = field(default_factory=list)
    messages: list[dict[str, object]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    mcp_servers: list[str] = field(default_factory=list)
    model: str | None = None
    _open: dict[int, tuple[float, str | None, str]] = field(default_factory=dict)
    _calls: dict[str, tuple[str, Mapping[str, object]]] = field(default_factory=dict)
    _message_id: str = ""

    def attach(self, worker: Worker) -> None:
        """Follow ``worker`` (call before the run starts, after its tools are final)."""
        self.tools = [t.meta.name for t in worker.tools]
        self.model = worker.model
        worker.subscribe(self)
        worker.denial_observers.append(self._denied)

    def init(self) -> None:
        """Claude Code's first message: ``{"type": "system", "subtype": "init", …}`` (tools, MCP servers, model,
        permission mode)."""
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(self.cwd),
                "session_id": self.session_id,
                "tools": list(self.tools),
                "mcp_servers": [
                    {"name": name, "status": "connected" if self._has_tools_of(name) else "failed"}
                    for name in self.mcp_servers
                ],
                "model": self.model,
                "permissionMode": self.permission_mode,
            }
        )

    def _has_tools_of(self, server: str) -> bool:
        return any(name.startswith(f"mcp__{server}__") for name in self.tools)

    async def _denied(self, call: PendingCall) -> None:
        self._denial(call.call_id, call.tool_name, dict(call.arguments))

    def _denial(self, call_id: str, tool: str, arguments: Mapping[str, object]) -> None:
        if any(d["tool_use_id"] == call_id for d in self.denials):
            return
        self.denials.append({"tool_name": tool, "tool_use_id": call_id, "tool_input": dict(arguments)})

    def _emit(self, message: dict[str, object]) -> None:
        message.setdefault("session_id", self.session_id)
        message.setdefault("uuid", new_id("msg"))
        self.messages.append(message)
        if self.stream:
            json_line(message)

    def __call__(self, event: TimelineEvent) -> None:
        if isinstance(event, ModelRequestStarted):
            self._open[event.turn] = (time.monotonic(), event.model, event.provider)
            self._message_id = new_id("msg")
            if event.model:
                self.model = event.model
        elif isinstance(event, ModelRequestEnded):
            began, model, provider = self._open.pop(event.turn, (time.monotonic(), None, "unknown"))
            self.api_seconds += time.monotonic() - began
            self.requests.append(UsageCost(model, provider, event.usage or Usage()))
        elif isinstance(event, HookDecision):
            if event.event == "permission_request" and event.decision == "Reject" and event.call_id:
                name, arguments = self._calls.get(event.call_id, ("", {}))  # an approver (--deny) refused it
                self._denial(event.call_id, name, arguments)
        elif isinstance(event, ItemAppended):
            self._item(event)

    def _item(self, event: ItemAppended) -> None:
        item = event.item
        block: dict[str, object] | None = None
        if isinstance(item, Message) and item.role == "assistant" and item.text:
            block = {"type": "text", "text": item.text}
        elif isinstance(item, ToolCall):
            arguments = item.to_json()["arguments"]
            block = {"type": "tool_use", "id": item.call_id, "name": item.name, "input": arguments}
            self._calls[item.call_id] = (item.name, arguments if isinstance(arguments, dict) else {})
        elif isinstance(item, Reasoning) and item.text:
            block = {"type": "thinking", "thinking": item.text, "signature": item.signature}
        elif isinstance(item, ToolResult):
            content: dict[str, object] = {
                "type": "tool_result",
                "tool_use_id": item.call_id,
                "content": item.content,
                "is_error": item.is_error,
            }
            self._emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [content]},
                    "parent_tool_use_id": None,
                }
            )
            return
        if block is not None:
            self._emit(
                {
                    "type": "assistant",
                    "message": {
                        "id": self._message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": self.model,
                        "content": [block],
                    },
                    "parent_tool_use_id": None,
                }
            )

    @property
    def usage(self) -> Usage:
        total = Usage()
        for request in self.requests:
            total = total + request.usage
        return total

    @property
    def cost(self) -> float | None:
        return cost_usd(self.requests)

    def model_usage(self) -> dict[str, dict[str, object]]:
        """Claude Code's ``modelUsage``: tokens and cost per model."""
        out: dict[str, dict[str, object]] = {}
        for request in self.requests:
            name = request.model or request.provider
            row = out.setdefault(
                name,
                {"inputTokens": 0, "outputTokens": 0, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0},
            )
            usage = request.usage
            row["inputTokens"] = int(str(row["inputTokens"])) + usage.input_tokens
            row["outputTokens"] = int(str(row["outputTokens"])) + usage.output_tokens
            row["cacheReadInputTokens"] = int(str(row["cacheReadInputTokens"])) + usage.cache_read_tokens
            row["cacheCreationInputTokens"] = int(str(row["cacheCreationInputTokens"])) + usage.cache_write_tokens
        for name, row in out.items():
            row["costUSD"] = cost_usd([r for r in self.requests if (r.model or r.provider) == name])
        return out

    @property
    def billed(self) -> bool:
        """Some request of the run used tokens (a run that failed before any answer has no cost to tell)."""
        return any(r.usage.input_tokens or r.usage.output_tokens for r in self.requests)

    def cost_line(self) -> str:
        """``cost $0.0123`` for the end of a text run; says why when it is unknown."""
        cost = self.cost
        if self.requests and all(r.provider == "scripted" for r in self.requests):
            return "cost $0 (the offline scripted model)"
        if cost is not None:
            return f"cost ${cost:.4f} (prices of {PRICES_AS_OF})"
        unknown = sorted({r.model or "?" for r in self.requests if r.provider != "scripted" and not price_for(r.model)})
        return f"cost unknown ({', '.join(unknown)} not in hookloop's price table)"

    def result(self, *, subtype: str, is_error: bool, text: str | None, turns: int, **extra: object) -> dict[str, Any]:
        """Claude Code's result object (hookloop's own fields go in ``extra``)."""
        return {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "duration_api_ms": round(self.api_seconds * 1000),
            "num_turns": turns,
            "result": text,
            "session_id": self.session_id,
            "total_cost_usd": self.cost,
            "usage": usage_json(self.usage),
            "modelUsage": self.model_usage(),
            "permission_denials": list(self.denials),
            **extra,
        }


def verbose_printer(err: Any) -> Any:
    """``--verbose`` in text mode: each model request (tokens, stop reason) and the first lines of each tool
    result, on stderr."""
    from rich.text import Text as RichText

    in_text = False  # the model's text line is open: start on a new line (a terminal shows both streams)

    def say(line: str) -> None:
        nonlocal in_text
        err.print(RichText(("\n" if in_text else "") + line, style="dim"))
        in_text = False

    def show(event: TimelineEvent) -> None:
        nonlocal in_text
        if isinstance(event, TextDelta):
            in_text = True
        elif isinstance(event, ModelRequestEnded):
            usage = event.usage or Usage()
            detail = f"error: {event.error}" if event.error else f"stop: {event.stop_reason}"
            line = f"  model request {event.turn}: {usage.input_tokens} in / {usage.output_tokens} out · {detail}"
            say(line)
        elif isinstance(event, ItemAppended) and isinstance(event.item, ToolResult):
            lines = event.item.content.splitlines() or [""]
            shown = "\n".join(f"  │ {x[:200]}" for x in lines[:5])
            more = f"\n  │ … {len(lines) - 5} more lines" if len(lines) > 5 else ""
            say(f"  {event.item.name} result:\n{shown}{more}")
        elif isinstance(event, ToolStarted):
            in_text = False  # the renderer closed the line

    return show


# -- the session ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ClaudeSession(Session):
    """A :class:`~hookloop.cli._session.Session` that reports as Claude Code does, adds the cost, and saves
    the conversation after the run so ``--continue`` can pick it up."""

    verbose: bool = False
    tracker: RunTracker | None = None
    worker: Worker | None = None
    restored: Any = None
    """A :class:`hookloop.cli._store.SavedSession` to continue (``--continue`` / ``--resume``)."""
    error: WorkerError | None = None
    """The error that ended the run, if one did."""

    def wrap(self, start: Any) -> Any:
        """``start`` with the tracker attached, the saved conversation restored, disallowed tools removed."""

        async def run(worker: Worker) -> Any:
            from hookloop.cli._store import restore

            self.worker = worker
            if self.restored is not None:
                for note in restore(worker, self.restored):
                    self.err.print(note, markup=False, highlight=False)
            remove_disallowed_tools(worker, self.options.disallowed_tools)
            mode = self.options.permission_mode or (
                worker.permissions.mode if worker.permissions is not None else "default"
            )
            self.tracker = RunTracker(
                session_id=self.session_id,
                cwd=self.options.cwd,
                permission_mode=str(mode),
                stream=self.output == "stream-json",
            )
            self.tracker.mcp_servers = [s.name for s in getattr(self.mcp, "servers", [])]
            self.tracker.attach(worker)
            self.tracker.init()
            if self.verbose and self.output == "text":
                worker.subscribe(verbose_printer(self.err))
            try:
                return await start(worker)
            except WorkerError as exc:  # the subtype of the result says which (MaxTurnsExceeded, …)
                self.error = exc
                raise

        return run

    def _save_conversation(self) -> None:
        from hookloop.cli._store import save_session

        if self.worker is not None:
            try:
                save_session(self.worker, self.options, "saved after the run")
            except (OSError, UsageError, ValueError) as exc:
                self.err.print(f"hookloop: the session could not be saved: {exc}", markup=False, highlight=False)

    def _print_result(self, result: dict[str, Any]) -> None:
        if self.output == "json" and self.verbose and self.tracker is not None:
            import json

            sys.stdout.write(json.dumps([*self.tracker.messages, result], ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            json_line(result)

    def _report_finished(self, worker: Worker, outcome: Finished) -> int:
        self._save_conversation()
        tracker = self.tracker
        if tracker is None:  # pragma: no cover - wrap() always ran before a run can finish
            return Session._report_finished(self, worker, outcome)
        if self.output == "text":
            self.err.print(f"[dim]{tracker.cost_line()} · session {self.session_id}[/]", highlight=False)
            return Session._report_finished(self, worker, outcome)  # its last word: the transcript path
        result = tracker.result(
            subtype="success",
            is_error=False,
            text=outcome.text,
            turns=outcome.turns,
            stop_reason=outcome.stop_reason or outcome.reason,
            status="finished",
            run_id=outcome.run_id,
            transcript_path=str(self.transcript),
        )
        result["text"], result["turns"] = outcome.text, outcome.turns
        self._print_result(result)
        return 0

    def _report_paused(self, outcome: Paused, path: Path) -> int:
        self._save_conversation()
        if self.output == "text" or self.tracker is None:
            return Session._report_paused(self, outcome, path)
        from hookloop.cli._session import EXIT_PAUSED

        command = f"hookloop resume {shlex.quote(str(path))}"
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
        result = self.tracker.result(
            subtype="paused",
            is_error=True,
            text=None,
            turns=outcome.checkpoint.turn,
            status="paused",
            run_id=outcome.run_id,
            reason=outcome.reason,
            pending=pending,
            checkpoint_path=str(path),
            resume_command=command,
            transcript_path=str(self.transcript),
        )
        self._print_result(result)
        return EXIT_PAUSED

    def _report_stopped(self, status: str, message: str, code: int, path: Path | None) -> int:
        self._save_conversation()
        if self.output == "text" or self.tracker is None:
            code = Session._report_stopped(self, status, message, code, path)
            if self.tracker is not None and self.output == "text" and self.tracker.billed:
                self.err.print(f"[dim]{self.tracker.cost_line()}[/]", highlight=False)
            return code
        subtype = (
            "cancelled"
            if status == "cancelled"
            else "error_max_turns"
            if isinstance(self.error, MaxTurnsExceeded)
            else "error_during_execution"
        )
        result = self.tracker.result(
            subtype=subtype,
            is_error=True,
            text=None,
            turns=len(self.tracker.requests),
            status=status,
            error=message,
            checkpoint_path=None if path is None else str(path),
            transcript_path=str(self.transcript),
        )
        self._print_result(result)
        return code
