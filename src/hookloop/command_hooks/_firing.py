"""The machinery behind :class:`~hookloop.command_hooks.bridge.CommandHooks` on one Worker: which handlers a
firing selects (matcher, ``if`` rule), running them through :func:`~hookloop.command_hooks.runner.run_all`,
reporting each outcome (timeline, ``logging``), fire-and-forget tasks and their draining, and the facts every
payload carries. Private: the public surface is :mod:`hookloop.command_hooks.bridge`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import getpass
import importlib.metadata
import logging
import os
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hookloop._frozen import JSONValue
from hookloop.effects import current_effects
from hookloop.errors import Aborted
from hookloop.timeline import HookDecision, HookOutputLine, HookStarted

from . import payloads as wire_in
from .config import HookConfig, dedupe
from .environment import ENV_FILE_EVENTS, SessionEnvFiles
from .kept import KeptProcesses
from .matchers import matcher_matches
from .model import (
    TOOL_EVENTS,
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    HookOutcome,
    McpToolHandler,
    ProcessHandler,
    PromptHandler,
)
from .processes import ProcessPool
from .rewake import Rewake, rewake_text
from .runner import RunnerOptions, StreamName, run_all
from .transcript import TranscriptKeeper
from .translate import CommandDecision, DecisionKind, merge_decisions, translate_outcome

if TYPE_CHECKING:
    from hookloop.permissions import PermissionPolicy
    from hookloop.worker import Worker

__all__ = ["HOOK_NAME", "NOTHING", "CommandHookCancelled", "Fired", "Firing"]

_log = logging.getLogger("hookloop.command_hooks.bridge")

HOOK_NAME = "command hooks"
"""The name of the in-process hooks (and the approver) :meth:`CommandHooks.install` registers."""
_MATCH_MEMO = 4096
_ANSWER_MEMO, _ANSWER_MEMO_SIZE = 256, 4096  # decisions remembered; of answers up to this many bytes
_KIND_NAMES: dict[DecisionKind, str] = {
    "continue": "Continue",
    "allow": "Allow",
    "ask": "Ask",
    "defer": "Defer",
    "deny": "Deny",
    "block": "Block",
    "stop": "Stop",
}


class CommandHookCancelled(Aborted):
    """A command hook stopped the whole run at a point where hookloop has no graceful stop: Cline's
    ``cancel: true`` on PreToolUse / TaskStart / TaskResume (Cline ends the task there), ``continue: false`` on
    SessionStart / PreCompact / PermissionRequest, or a PermissionRequest deny with ``interrupt: true``.

    ``event`` is the command-hook event, ``hooks`` the commands or scripts that asked, ``protocol`` their wire
    format. Raised from the in-process hook; the Worker currently reports an exception raised by a hook as
    :class:`~hookloop.errors.HookError` with this error as ``__cause__`` — :meth:`find` returns it either way.
    (Raised from the PermissionRequest approver it ends the run as itself.)
    """

    def __init__(self, reason: str, *, event: str, hooks: Sequence[str], protocol: Literal["claude", "cline"]) -> None:
        super().__init__(reason, hook=hooks[0] if hooks else None, event=event)
        self.hooks = tuple(hooks)
        self.protocol = protocol

    @staticmethod
    def find(error: BaseException | None) -> CommandHookCancelled | None:
        """``error`` itself or the first :class:`CommandHookCancelled` in its ``__cause__`` chain, else None."""
        seen: set[int] = set()
        while error is not None and id(error) not in seen:
            if isinstance(error, CommandHookCancelled):
                return error
            seen.add(id(error))
            error = error.__cause__
        return None


@dataclass(frozen=True, slots=True)
class Fired:
    """One firing: the handlers that answered (configuration order), their decisions, the merge."""

    hooks: tuple[ConfiguredHook, ...]
    decisions: tuple[CommandDecision, ...]
    merged: CommandDecision
    outcomes: tuple[HookOutcome, ...] = ()
    """The runner's outcomes, in the same order (empty when nothing ran): each handler's stdout, for fields only
    some events read (``retry``, ``watchPaths``)."""
    ends_turn: str | None = None
    """A prompt/agent handler answered "not ok" where that ends the turn (PreToolUse, PostToolUse without
    ``continueOnBlock``): its reason."""


NOTHING = Fired((), (), CommandDecision())


class Firing:
    """The machinery of one Worker's command hooks: selection, running, reporting, background tasks, payload
    facts. The per-event hooks are in :mod:`hookloop.command_hooks._events`."""

    log_failures: bool = True
    """Log each hook that could not run or misbehaved (``CommandHooks(log=False)`` turns it off)."""

    def __init__(
        self,
        worker: Worker,
        config: HookConfig,
        *,
        project_dir: str,
        options: RunnerOptions,
        background_grace: float,
        transcript_dir: str | os.PathLike[str] | None = None,
        rewake_wait: float | None = None,
    ) -> None:
        self.config = config
        self.rewake_wait = rewake_wait
        self.worker = worker
        self.processes: ProcessPool | None = None
        """The running hook processes of ``process`` handlers (closed at each run's end)."""
        if any(isinstance(hook.handler, ProcessHandler) for hook in config.hooks):
            self.processes = ProcessPool(output_cap=options.output_cap, kill_grace=options.kill_grace)
            options = dataclasses.replace(options, processes=self.processes)
        self.kept: KeptProcesses | None = None
        """What command hooks left running after they answered (released at each run's end)."""
        spawns = any(isinstance(hook.handler, (CommandHandler, ClineScript)) for hook in config.hooks)
        if options.keep_background > 0 and spawns:
            self.kept = KeptProcesses(limit=options.keep_background, kill_grace=options.kill_grace)
        if options.kept is not self.kept:
            options = dataclasses.replace(options, kept=self.kept)
        self.options = options
        self.project_dir = project_dir
        self.background_grace = background_grace
        # Per event, in configuration order. Claude hooks with an ``if`` on a non-tool event never run.
        self.claude_hooks: dict[str, tuple[ConfiguredHook, ...]] = {}
        self.cline_hooks: dict[str, tuple[ConfiguredHook, ...]] = {}
        for hook in self.config.hooks:
            if hook.protocol == "cline":
                self.cline_hooks[hook.event] = (*self.cline_hooks.get(hook.event, ()), hook)
            elif hook.condition is None or hook.event in TOOL_EVENTS:
                self.claude_hooks[hook.event] = (*self.claude_hooks.get(hook.event, ()), hook)
        self.claude_events = frozenset(self.claude_hooks)
        self.cline_events = frozenset(self.cline_hooks)
        workspace = worker.workspace
        self.cwd = str(workspace.resolve()) if workspace is not None else project_dir
        self.background: set[asyncio.Task[Any]] = set()
        self.pending_context: dict[str, list[str]] = {}
        self.policies: dict[str, PermissionPolicy | None] = {}
        self.matched: dict[tuple[str, str | None, str], bool] = {}
        self.selected: dict[tuple[str | None, str | None, str | None], tuple[ConfiguredHook, ...]] = {}
        self.translated: dict[tuple[object, ...], CommandDecision] = {}
        self.any_async = any(_runs_async(hook) for hook in config.hooks)
        self.any_model_handlers = any(_in_process(hook) for hook in config.hooks)
        self.version = _version()
        self.user_id = _user_id()
        self.env_files: SessionEnvFiles | None = options.session_env_files
        self.transcript = TranscriptKeeper(worker, transcript_dir, cwd=self.cwd, version=self.version)
        self.any_rewake = any(_rewakes(hook) for hook in config.hooks)
        self.rewake = Rewake(HOOK_NAME, lambda text, source: worker.notify(text, source=source), lambda: worker.running)

    def has(self, claude: str | None = None, cline: str | None = None) -> bool:
        return claude in self.claude_events or cline in self.cline_events

    # -- selection, running, reporting ---------------------------------------------------------------------

    def select(
        self,
        claude: str | None,
        cline: str | None = None,
        *,
        target: str | None = None,
        tool: tuple[str, Mapping[str, JSONValue]] | None = None,
    ) -> tuple[ConfiguredHook, ...]:
        """Handlers for one firing, in configuration order: Claude hooks of ``claude`` whose matcher accepts
        ``target`` and whose ``if`` rule matches ``tool`` (name, input), then Cline scripts named ``cline``.
        Remembered per (``claude``, ``cline``, ``target``) when no candidate has an ``if`` rule (then nothing
        else decides: the configuration does not change during the installation's life)."""
        key = (claude, cline, target)
        known = self.selected.get(key)
        if known is not None:
            return known
        selected: list[ConfiguredHook] = []
        conditional = False
        for hook in self.claude_hooks.get(claude, ()) if claude is not None else ():
            if hook.matcher is not None and not self.matches(hook.matcher, target, hook.event):
                continue
            if hook.condition is not None:
                conditional = True
                if tool is None or not self.condition_matches(hook.condition, *tool):
                    continue
            selected.append(hook)
        if cline is not None:
            selected.extend(self.cline_hooks.get(cline, ()))
        found = dedupe(tuple(selected))
        if not conditional:
            if len(self.selected) >= _MATCH_MEMO:
                self.selected.clear()
            self.selected[key] = found
        return found

    def matches(self, matcher: str, target: str | None, event: str) -> bool:
        """:func:`~hookloop.command_hooks.matchers.matcher_matches`, remembered per (matcher, target, event):
        targets are tool names and sources, a small set, and this runs on every tool call."""
        key = (matcher, target, event)
        known = self.matched.get(key)
        if known is None:
            if len(self.matched) >= _MATCH_MEMO:
                self.matched.clear()
            known = self.matched[key] = matcher_matches(matcher, target, event=event)
        return known

    def condition_matches(self, condition: str, tool_name: str, tool_input: Mapping[str, JSONValue]) -> bool:
        """The ``if`` filter: the rule is evaluated as a permission rule that matches any subcommand (a deny
        rule's matching), against the tool call. A rule that cannot be parsed, or a check that fails, runs the
        hook (fails open, as Claude Code does)."""
        if condition not in self.policies:
            from hookloop.permissions import PermissionConfigError, PermissionPolicy

            policy = self.worker.permissions
            workspace = policy.workspace if policy is not None else self.cwd
            try:
                self.policies[condition] = PermissionPolicy(deny=[condition], workspace=workspace, source="if")
            except PermissionConfigError as exc:
                _log.warning(
                    "command hooks: `if` rule %r cannot be parsed (%s); the hook runs on every call", condition, exc
                )
                self.policies[condition] = None
        checker = self.policies[condition]
        if checker is None:
            return True
        try:
            return checker.check(tool_name, tool_input) is not None
        except Exception:
            _log.exception("command hooks: `if` rule %r could not be evaluated; the hook runs", condition)
            return True

    async def fire(
        self,
        hooks: tuple[ConfiguredHook, ...],
        payload: Mapping[str, object],
        cline_payload: Callable[[], Mapping[str, object]] | None,
        *,
        session_id: str,
        call_id: str | None = None,
        background: bool = False,
    ) -> Fired:
        """Run ``hooks`` (``async`` handlers in the background), report each outcome, merge the decisions."""
        cline_body = None
        if cline_payload is not None and self.cline_events and any(h.protocol == "cline" for h in hooks):
            cline_body = cline_payload()
        blocking = hooks
        if self.any_async:
            blocking = tuple(h for h in hooks if not _runs_async(h))
            if len(blocking) != len(hooks):
                detached = tuple(h for h in hooks if _runs_async(h) and not _rewakes(h))
                if detached:
                    self.spawn(self.run_async_handlers(detached, payload, cline_body, session_id, call_id))
                waking = tuple(h for h in hooks if _rewakes(h))
                if waking:
                    task = self.spawn(self.run_async_handlers(waking, payload, cline_body, session_id, call_id))
                    self.rewake.track(task)
            if not blocking:
                return NOTHING
        return await self.run(
            blocking, payload, cline_body, session_id=session_id, call_id=call_id, background=background
        )

    async def run(
        self,
        hooks: tuple[ConfiguredHook, ...],
        payload: Mapping[str, object],
        cline_body: Mapping[str, object] | None,
        *,
        session_id: str,
        call_id: str | None,
        background: bool = False,
    ) -> Fired:
        started = time.perf_counter()
        timeline = self.worker.timeline
        if timeline.subscribers:
            for hook in hooks:
                timeline.emit(HookStarted(event=hook.event, hook=hook.name, source=_source(hook), call_id=call_id))
        ends_turn: str | None = None
        try:
            if self.any_model_handlers and any(_in_process(h) for h in hooks):
                outcomes, decisions, ends_turn = await self.run_mixed(hooks, payload, cline_body, session_id)
            else:
                outcomes = await run_all(
                    hooks,
                    payload,
                    project_dir=self.project_dir,
                    cline_payload=cline_body,
                    options=self.options,
                    on_line=self.line_streamer(),
                    extra_env=self.hook_env(hooks, session_id),
                )
                decisions = tuple(map(self.translate, hooks, outcomes))
        except asyncio.CancelledError:
            self.report_cancelled(hooks, call_id, time.perf_counter() - started, background=background)
            raise
        self.report(hooks, outcomes, decisions, call_id)
        merged = merge_decisions(decisions)
        fired_outcomes = tuple(outcomes)
        if len(decisions) > 1:
            own = {e for d in decisions for e in d.errors}
            for error in merged.errors:
                if error not in own:
                    _log.warning("command hooks on %s: %s", hooks[0].event, error)
        return Fired(hooks, decisions, merged, fired_outcomes, ends_turn)

    def translate(self, hook: ConfiguredHook, outcome: HookOutcome) -> CommandDecision:
        """:func:`~hookloop.command_hooks.translate.translate_outcome`, remembered for answers that ran to
        completion: then the decision depends only on the event, the protocol and the answer (exit status, HTTP
        status, stdout, stderr), and a hook usually answers the same on every call. Small answers only."""
        if not outcome.ok or outcome.stdout_truncated or len(outcome.stdout) + len(outcome.stderr) > _ANSWER_MEMO_SIZE:
            return translate_outcome(hook, outcome)
        key = (hook.event, hook.protocol, outcome.exit_code, outcome.http_status, outcome.stdout, outcome.stderr)
        known = self.translated.get(key)
        if known is None:
            if len(self.translated) >= _ANSWER_MEMO:
                self.translated.clear()
            known = self.translated[key] = translate_outcome(hook, outcome)
        return known

    async def run_mixed(
        self,
        hooks: tuple[ConfiguredHook, ...],
        payload: Mapping[str, object],
        cline_body: Mapping[str, object] | None,
        session_id: str,
    ) -> tuple[tuple[HookOutcome, ...], tuple[CommandDecision, ...], str | None]:
        """One firing with prompt / agent / mcp_tool handlers among the hooks: those run in process (see
        :mod:`._llm_handlers`, :mod:`._mcp_handler`), the rest through the runner, all in parallel."""
        from ._llm_handlers import Judged, run_judge
        from ._mcp_handler import run_mcp_tool_hook

        external = tuple(h for h in hooks if not _in_process(h))

        async def own(hook: ConfiguredHook) -> Judged:
            if isinstance(hook.handler, PromptHandler):
                return await run_judge(hook, payload, self.worker, workspace=self.cwd)
            outcome = await run_mcp_tool_hook(
                hook, payload, self.worker, session_id=session_id, output_cap=self.options.output_cap
            )
            return Judged(outcome=outcome, decision=translate_outcome(hook, outcome))

        async with asyncio.TaskGroup() as group:
            ran = group.create_task(
                run_all(
                    external,
                    payload,
                    project_dir=self.project_dir,
                    cline_payload=cline_body,
                    options=self.options,
                    on_line=self.line_streamer(),
                    extra_env=self.hook_env(external, session_id),
                )
            )
            judged = {id(h): group.create_task(own(h)) for h in hooks if _in_process(h)}
        by_hook = dict(zip((id(h) for h in external), ran.result(), strict=True))
        outcomes: list[HookOutcome] = []
        decisions: list[CommandDecision] = []
        ends_turn: list[str] = []
        for hook in hooks:
            task = judged.get(id(hook))
            if task is None:
                outcome = by_hook[id(hook)]
                outcomes.append(outcome)
                decisions.append(translate_outcome(hook, outcome))
                continue
            result = task.result()
            outcomes.append(result.outcome)
            decisions.append(result.decision)
            if result.ends_turn:
                ends_turn.append(result.ends_turn)
        return tuple(outcomes), tuple(decisions), "\n".join(ends_turn) or None

    def hook_env(self, hooks: tuple[ConfiguredHook, ...], session_id: str) -> dict[str, str]:
        """Per-firing variables: the session id, and ``CLAUDE_ENV_FILE`` (emptied for this firing) on the events
        whose hooks may persist variables into later Bash commands."""
        env = {"CLAUDE_CODE_SESSION_ID": session_id, "HOOKLOOP_SESSION_ID": session_id}
        files = self.env_files
        if files is not None and hooks and hooks[0].event in ENV_FILE_EVENTS:
            try:
                env["CLAUDE_ENV_FILE"] = files.path_for(session_id, hooks[0].event)
            except OSError as exc:
                _log.warning("command hooks: cannot prepare CLAUDE_ENV_FILE for %s: %s", hooks[0].event, exc)
        return env

    async def run_async_handlers(
        self,
        hooks: tuple[ConfiguredHook, ...],
        payload: Mapping[str, object],
        cline_body: Mapping[str, object] | None,
        session_id: str,
        call_id: str | None,
    ) -> None:
        """``async``/``asyncRewake`` handlers: they decide nothing; their context reaches the model on its next
        request through ``worker.notify``; an asyncRewake handler's exit 2 wakes the model
        (:mod:`hookloop.command_hooks.rewake`)."""
        fired = await self.run(hooks, payload, cline_body, session_id=session_id, call_id=call_id, background=True)
        for hook, decision, outcome in zip(fired.hooks, fired.decisions, fired.outcomes, strict=True):
            if _rewakes(hook) and outcome.ok:
                prefix = hook.handler.rewake_message if isinstance(hook.handler, CommandHandler) else None
                message = rewake_text(outcome.exit_code, outcome.stdout_text, outcome.stderr_text, prefix=prefix)
                if message is not None:
                    self.rewake.add(hook.name, message)
                    continue
            for text in filter(None, decision.additional_context):
                self.worker.notify(text, source=f"async {hook.event} hook {hook.name}")

    def line_streamer(self) -> Callable[[ConfiguredHook, StreamName, str], None] | None:
        timeline = self.worker.timeline
        if not timeline.subscribers:
            return None

        def stream(hook: ConfiguredHook, name: StreamName, line: str) -> None:
            timeline.emit(
                HookOutputLine(event=hook.event, hook=hook.name, source=_source(hook), stream=name, line=line)
            )

        return stream

    def report(
        self,
        hooks: Sequence[ConfiguredHook],
        outcomes: Sequence[HookOutcome],
        decisions: Sequence[CommandDecision],
        call_id: str | None,
    ) -> None:
        timeline = self.worker.timeline
        for hook, outcome, decision in zip(hooks, outcomes, decisions, strict=True):
            if not (timeline.subscribers or decision.errors or decision.system_message):
                continue  # nobody listens and there is nothing to warn about
            name, reason, loud = _describe(hook, outcome, decision)
            if loud and self.log_failures:
                _log.warning("%s hook %s (%s): %s: %s", hook.event, hook.name, _source(hook), name, reason)
            for message in decision.system_message:
                _log.info("%s hook %s says: %s", hook.event, hook.name, message)
            if timeline.subscribers:
                timeline.emit(
                    HookDecision(
                        event=hook.event,
                        hook=hook.name,
                        source=_source(hook),
                        decision=name,
                        reason=reason,
                        seconds=outcome.duration,
                        call_id=call_id,
                    )
                )

    def report_cancelled(
        self, hooks: Sequence[ConfiguredHook], call_id: str | None, seconds: float, *, background: bool
    ) -> None:
        """Hooks cut short by a cancellation (the run was cancelled, or it ended while fire-and-forget hooks
        still ran): their process groups were killed; each is reported as ``HookCancelled``."""
        why = "still running when the run ended" if background else "the run was cancelled"
        reason = f"{why}; its process group was killed"
        timeline = self.worker.timeline
        for hook in hooks:
            _log.log(logging.WARNING if background else logging.INFO, "%s hook %s: %s", hook.event, hook.name, reason)
            if timeline.subscribers:
                timeline.emit(
                    HookDecision(
                        event=hook.event,
                        hook=hook.name,
                        source=_source(hook),
                        decision="HookCancelled",
                        reason=reason,
                        seconds=seconds,
                        call_id=call_id,
                    )
                )

    # -- background tasks ---------------------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, object]) -> asyncio.Task[Any]:
        """Start fire-and-forget work in a task this installation owns (drained at session_end).

        The task runs outside the run's durable effects (``current_effects`` is None in it): a background hook
        fires at a time no replay can reproduce, so a durable backend cannot record it as a step in order; it
        runs best-effort, again on a replay (see :mod:`hookloop.durable.dbos`)."""
        context = contextvars.copy_context()
        context.run(current_effects.set, None)
        task = asyncio.get_running_loop().create_task(work, context=context)
        self.background.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("command hooks: a background hook run failed", exc_info=task.exception())

    async def drain(self, deadline: float) -> None:
        """Wait for background hooks until ``deadline`` (loop time), then cancel what is left and wait for it
        (cancelling a hook run kills its process groups)."""
        loop = asyncio.get_running_loop()
        while self.background:
            tasks = set(self.background)
            done, pending = await asyncio.wait(tasks, timeout=max(deadline - loop.time(), 0.0))
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
            for task in done | pending:
                self.background.discard(task)

    # -- payload facts ------------------------------------------------------------------------------------------

    def claude_facts(self, session_id: str) -> wire_in.ClaudeFacts:
        """The common fields; ``transcript_path`` is the Claude Code–format transcript, brought up to date."""
        return wire_in.ClaudeFacts(
            session_id=session_id,
            transcript_path=self.transcript.current(),
            cwd=self.current_dir(),
            permission_mode=wire_in.permission_mode_of(self.worker.permission_mode),
            workspace=self.cwd,
        )

    def current_dir(self) -> str:
        """The session's current directory (Claude Code's ``cwd``, which "follows cd"): where the Worker's Bash
        tool is after its last ``cd``; the workspace root when it has no Bash tool that keeps one."""
        for tool in self.worker.tools:
            if tool.meta.name == "Bash":
                where = getattr(tool, "cwd", None)
                return str(where) if isinstance(where, Path) else self.cwd
        return self.cwd

    def cline_facts(self, task_id: str) -> wire_in.ClineFacts:
        return wire_in.ClineFacts(
            task_id=task_id,
            workspace_roots=(self.project_dir,),
            user_id=self.user_id,
            version=self.version,
            provider=self.worker.client.provider,
            model=self.worker.model,
            timestamp_ms=int(time.time() * 1000),
            cwd=self.cwd,
        )


def _rewakes(hook: ConfiguredHook) -> bool:
    handler = hook.handler
    return isinstance(handler, CommandHandler) and handler.async_rewake


def _runs_async(hook: ConfiguredHook) -> bool:
    handler = hook.handler
    return isinstance(handler, CommandHandler) and (handler.run_async or handler.async_rewake)


def _in_process(hook: ConfiguredHook) -> bool:
    """prompt, agent and mcp_tool handlers run inside this process, not through the runner."""
    return isinstance(hook.handler, (PromptHandler, McpToolHandler))


def _source(hook: ConfiguredHook) -> str:
    return f"{hook.source.label}: {hook.source.path}"


def _describe(hook: ConfiguredHook, outcome: HookOutcome, decision: CommandDecision) -> tuple[str, str | None, bool]:
    """(timeline decision name, reason, loud) for one handler's outcome."""
    if not outcome.ok:
        reason = outcome.error or f"hook {hook.name} could not run ({outcome.error_kind})"
        if decision.kind != "continue":
            reason += f"; failClosed: {decision.kind}"
        return "HookFailed", reason, True
    if decision.errors and decision.kind == "continue" and decision.continue_:
        return "HookError", "; ".join(decision.errors), True
    name = _KIND_NAMES[decision.kind]
    if decision.kind == "stop" and hook.protocol == "cline":
        name = "Cancel"
    parts: list[str] = []
    if decision.reason:
        parts.append(decision.reason)
    if decision.stop_reason:
        parts.append(decision.stop_reason)
    if decision.updated_input is not None:
        parts.append("updatedInput")
    if decision.replace_output is not None:
        parts.append("updatedToolOutput")
    parts.extend(f"context: {text}" for text in decision.additional_context)
    parts.extend(f"systemMessage: {text}" for text in decision.system_message)
    parts.extend(decision.errors)
    return name, "; ".join(parts) or None, bool(decision.errors)


def _version() -> str:
    try:
        return "hookloop " + importlib.metadata.version("hookloop")
    except importlib.metadata.PackageNotFoundError:
        return "hookloop"


def _user_id() -> str:
    """Cline's ``userId``: ``$CLINE_USER_ID``, else the login name."""
    explicit = os.environ.get("CLINE_USER_ID")
    if explicit:
        return explicit
    with contextlib.suppress(Exception):
        return getpass.getuser()
    return "unknown"
