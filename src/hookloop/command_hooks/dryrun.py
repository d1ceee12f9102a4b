"""Trying hooks without an agent: one event on a sample input (``hookloop hooks test``), and a recorded session
replayed through the hooks and permission rules without executing any tool (``hookloop hooks replay``).

Both run the configured hook processes for real (that is the point: see what *your* scripts answer), through the
same selection, runner, translation and merge as a live run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from hookloop._frozen import JSONValue, freeze_object, thaw, thaw_object
from hookloop.command_hooks import payloads as wire_in
from hookloop.command_hooks.config import HookConfig, dedupe, resolve_hookloop_home
from hookloop.command_hooks.environment import ENV_FILE_EVENTS, SessionEnvFiles
from hookloop.command_hooks.matchers import match_target
from hookloop.command_hooks.model import (
    TOOL_EVENTS,
    CommandHandler,
    ConfiguredHook,
    HookOutcome,
    HttpHandler,
    ProcessHandler,
)
from hookloop.command_hooks.processes import ProcessPool
from hookloop.command_hooks.runner import RunnerOptions, run_all
from hookloop.command_hooks.translate import CommandDecision, merge_decisions, translate_outcome
from hookloop.errors import HookloopError
from hookloop.permissions import HookVote, PermissionConfigError, PermissionPolicy

__all__ = [
    "HookRun",
    "ReplayEntry",
    "TranscriptError",
    "TryReport",
    "cline_event_for",
    "decision_json",
    "is_cline_payload",
    "read_transcript",
    "replay",
    "runner_options",
    "try_event",
]

READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "TodoRead"})


class TranscriptError(HookloopError, ValueError):
    """A transcript that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookRun:
    """One hook process of a firing: what it printed, how it ended, what it decided."""

    hook: ConfiguredHook
    outcome: HookOutcome
    decision: CommandDecision

    def to_json(self) -> dict[str, JSONValue]:
        o = self.outcome
        return {
            "source": self.hook.source.path,
            "layer": self.hook.source.label,
            "plugin": self.hook.source.plugin,
            "protocol": self.hook.protocol,
            "command": self.hook.name,
            "matcher": self.hook.matcher,
            "exit_code": o.exit_code,
            "outcome": o.error_kind,
            "error": o.error,
            "timed_out": o.timed_out,
            "duration_ms": round(o.duration * 1000, 3),
            "stdout": o.stdout.decode("utf-8", errors="replace"),
            "stderr": o.stderr.decode("utf-8", errors="replace"),
            "decision": decision_json(self.decision),
        }


def decision_json(decision: CommandDecision) -> dict[str, JSONValue]:
    """A decision as JSON: ``decision`` (continue | allow | ask | defer | deny | block | stop), ``reason``,
    ``updated_input``, ``additional_context``, ``system_message``, ``continue``, ``stop_reason``,
    ``replace_output``, ``errors``."""
    return {
        "decision": decision.kind,
        "reason": decision.reason,
        "updated_input": None if decision.updated_input is None else thaw(decision.updated_input),
        "additional_context": list(decision.additional_context),
        "system_message": list(decision.system_message),
        "continue": decision.continue_,
        "stop_reason": decision.stop_reason,
        "replace_output": thaw(decision.replace_output),
        "errors": list(decision.errors),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class TryReport:
    """``hooks test``: every hook that matched, and the merged decision hookloop would act on."""

    event: str
    target: str | None
    runs: tuple[HookRun, ...]
    merged: CommandDecision
    env_file: str | None = None
    """``CLAUDE_ENV_FILE`` the hooks got (SessionStart, Setup, CwdChanged, FileChanged), else ``None``."""
    env_exports: str | None = None
    """What the hooks wrote to it: the lines later Bash commands of that session would evaluate."""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "event": self.event,
            "target": self.target,
            "hooks": [r.to_json() for r in self.runs],
            "merged": decision_json(self.merged),
            "env_file": self.env_file,
            "env_exports": self.env_exports,
        }


def _condition_holds(hook: ConfiguredHook, tool_name: str | None, tool_input: Mapping[str, object], cwd: Path) -> bool:
    """The per-handler ``if`` rule, matched like a deny rule (any subcommand); unparsable rules fail open."""
    if hook.condition is None:
        return True
    if tool_name is None:
        return False
    try:
        policy = PermissionPolicy(deny=[hook.condition], workspace=cwd, source="if")
    except PermissionConfigError:
        return True
    return policy.check(tool_name, tool_input) is not None


def _cline_facts(payload: Mapping[str, object], cwd: Path) -> wire_in.ClineFacts:
    return wire_in.ClineFacts(
        task_id=str(payload.get("session_id", "hooks-test")),
        workspace_roots=(str(cwd),),
        user_id="hookloop",
        version="hookloop",
        provider="hookloop",
        model=None,
        timestamp_ms=int(time.time() * 1000),
    )


def _cline_payload(cline_event: str, payload: Mapping[str, object], cwd: Path) -> dict[str, object] | None:
    """The classic Cline stdin for ``cline_event``, built from a Claude Code shaped ``payload``."""
    facts = _cline_facts(payload, cwd)
    tool_input = payload.get("tool_input")
    arguments = tool_input if isinstance(tool_input, Mapping) else {}
    tool_name = str(payload.get("tool_name", ""))
    if cline_event == "PreToolUse":
        return dict(wire_in.cline_pre_tool_use(facts, tool_name, arguments))
    if cline_event == "PostToolUse":
        response = payload.get("tool_response", payload.get("error", ""))
        result = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        failed = payload.get("hook_event_name") == "PostToolUseFailure"
        built = wire_in.cline_post_tool_use(
            facts, tool_name, arguments, result=result, success=not failed, execution_ms=0
        )
        return dict(built)
    if cline_event == "UserPromptSubmit":
        return dict(wire_in.cline_user_prompt_submit(facts, str(payload.get("prompt", ""))))
    if cline_event == "Notification":
        kind = str(payload.get("notification_type", "idle_prompt"))
        message = str(payload.get("message", ""))
        waiting = kind == "permission_prompt"
        built = wire_in.cline_notification(
            facts, event=kind, source="hooks test", message=message, waiting_for_user=waiting
        )
        return dict(built)
    if cline_event == "PreCompact":
        trigger = str(payload.get("trigger", "manual"))
        return dict(wire_in.cline_pre_compact(facts, context_size=0, strategy=trigger, context_json_path=""))
    if cline_event in ("TaskStart", "TaskResume", "TaskCancel", "TaskComplete"):
        prompt = payload.get("prompt")
        return dict(wire_in.cline_task(facts, cline_event, initial_task=prompt if isinstance(prompt, str) else None))  # type: ignore[arg-type]
    return None


CLINE_TO_CLAUDE: dict[str, str] = {
    "TaskStart": "SessionStart",
    "TaskResume": "SessionStart",
    "TaskCancel": "SessionEnd",
    "TaskComplete": "SessionEnd",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "UserPromptSubmit": "UserPromptSubmit",
    "Notification": "Notification",
    "PreCompact": "PreCompact",
}
"""A Cline hook name → the Claude Code event hookloop fires at the same moment (the bridge's table)."""
_SESSION_SOURCES = {"TaskStart": "startup", "TaskResume": "resume"}


def is_cline_payload(payload: Mapping[str, object]) -> bool:
    """Whether ``payload`` is a classic Cline hook input (``hookName`` / ``clineVersion`` / ``taskId`` …) rather
    than Claude Code's (``hook_event_name``, snake_case)."""
    return "hook_event_name" not in payload and any(
        key in payload for key in ("hookName", "clineVersion", "taskId", "workspaceRoots")
    )


def cline_event_for(event: str, payload: Mapping[str, object]) -> str | None:
    """The Cline hook that fires with Claude Code event ``event`` (``event`` itself when it is a Cline name)."""
    if event in CLINE_TO_CLAUDE:
        return event
    if event == "PostToolUseFailure":
        return "PostToolUse"
    if event == "SessionStart":
        return "TaskResume" if payload.get("source") == "resume" else "TaskStart"
    return None


async def try_event(
    config: HookConfig,
    event: str,
    payload: Mapping[str, object],
    *,
    project_dir: str | Path,
    tool: str | None = None,
    options: RunnerOptions | None = None,
    hook_timeout: float | None = None,
) -> TryReport:
    """Run the hooks configured for ``event`` on ``payload`` and merge their decisions.

    ``event`` is a Claude Code event name or a classic Cline hook name (TaskStart, TaskResume, TaskCancel,
    TaskComplete, PreToolUse, PostToolUse, UserPromptSubmit, Notification, PreCompact). A Claude Code shaped
    ``payload`` (``hook_event_name`` is filled in) goes to the Claude Code hooks of the event (a Cline name
    selects the Claude event fired at the same moment, e.g. TaskStart → SessionStart), and Cline scripts get the
    Cline payload hookloop would build from it. A Cline payload (:func:`is_cline_payload`) is sent **verbatim**
    to the Cline scripts of the event; Claude Code hooks then do not run. ``tool`` overrides
    ``payload["tool_name"]`` for matching. ``hook_timeout`` (seconds) replaces every selected hook's timeout.
    Handlers from several files are merged as in a live run (:func:`~hookloop.command_hooks.config.dedupe`).
    """
    cwd = Path(project_dir)
    opts = options or RunnerOptions()
    cline_event = cline_event_for(event, payload)
    verbatim = is_cline_payload(payload)
    claude_event = CLINE_TO_CLAUDE.get(event, event)
    body: dict[str, object] = {"hook_event_name": claude_event, "cwd": str(cwd), **dict(payload)}
    if event in _SESSION_SOURCES and "source" not in body:
        body["source"] = _SESSION_SOURCES[event]
    if tool is not None:
        body["tool_name"] = tool
    target = match_target(claude_event, body)
    raw_input = body.get("tool_input")
    tool_input: Mapping[str, object] = raw_input if isinstance(raw_input, Mapping) else {}
    tool_name = str(body["tool_name"]) if "tool_name" in body else None
    selected: tuple[ConfiguredHook, ...] = ()
    if not verbatim:
        selected = tuple(
            hook
            for hook in config.for_event(claude_event, target)
            if hook.protocol == "claude"
            and (claude_event not in TOOL_EVENTS or _condition_holds(hook, tool_name, tool_input, cwd))
        )
    cline = tuple(h for h in config.hooks if h.protocol == "cline" and h.event == cline_event)
    cline_body: Mapping[str, object] | None = None
    if cline:
        cline_body = dict(payload) if verbatim else _cline_payload(cline_event or "", body, cwd)
    hooks = dedupe((*selected, *(cline if cline_body is not None else ())))
    if hook_timeout is not None:
        hooks = tuple(_with_timeout(hook, hook_timeout) for hook in hooks)
        opts = replace(opts, cline_timeout=hook_timeout)
    session = str(body.get("session_id", "hooks-test"))
    extra = {"CLAUDE_CODE_SESSION_ID": session, "HOOKLOOP_SESSION_ID": session}
    env_file = None
    if opts.session_env_files is not None and claude_event in ENV_FILE_EVENTS:
        env_file = extra["CLAUDE_ENV_FILE"] = opts.session_env_files.path_for(session, claude_event)
    pool = None
    if opts.processes is None and any(isinstance(h.handler, ProcessHandler) for h in hooks):
        pool = ProcessPool(output_cap=opts.output_cap, kill_grace=opts.kill_grace)  # started for this try only
        opts = replace(opts, processes=pool)
    try:
        outcomes = await run_all(hooks, body, project_dir=cwd, cline_payload=cline_body, options=opts, extra_env=extra)
    finally:
        if pool is not None:
            await pool.close()
    runs = tuple(
        HookRun(hook=h, outcome=o, decision=translate_outcome(h, o)) for h, o in zip(hooks, outcomes, strict=True)
    )
    exports = Path(env_file).read_text(encoding="utf-8", errors="replace") if env_file else None  # noqa: ASYNC240 -- a small local file, once
    merged = merge_decisions([r.decision for r in runs])
    return TryReport(event=event, target=target, runs=runs, merged=merged, env_file=env_file, env_exports=exports)


def _with_timeout(hook: ConfiguredHook, timeout: float) -> ConfiguredHook:
    handler = hook.handler
    if isinstance(handler, (CommandHandler, HttpHandler, ProcessHandler)):
        return replace(hook, handler=replace(handler, timeout=timeout))
    return hook


def runner_options(
    config: HookConfig, options: RunnerOptions | None = None, *, hookloop_home: Path | None = None
) -> RunnerOptions:
    """``options`` completed from ``config`` as a live run completes them: the HTTP allowlists, the settings
    ``env`` block, ``commandHookAllowedEnvVars`` and the session env files (``<hookloop home>/session-env``)."""
    opts = options or RunnerOptions()
    if opts.http_url_allowlist is None and config.http_url_allowlist is not None:
        opts = replace(opts, http_url_allowlist=config.http_url_allowlist)
    if opts.http_env_allowlist is None and config.http_env_allowlist is not None:
        opts = replace(opts, http_env_allowlist=config.http_env_allowlist)
    env = config.env
    if env and not opts.settings_env:
        opts = replace(opts, settings_env=tuple(env.items()))
    if config.env_allowlist and not opts.env_allowlist:
        opts = replace(opts, env_allowlist=config.env_allowlist)
    if opts.session_env_files is None:
        home = hookloop_home if hookloop_home is not None else resolve_hookloop_home()
        opts = replace(opts, session_env_files=SessionEnvFiles(home / "session-env"))
    return opts


# -- replay ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """One step of a recorded session: a user prompt, or a tool call (name, input, id)."""

    kind: Literal["prompt", "tool_call"]
    line: int
    text: str = ""
    tool_name: str = ""
    tool_input: Mapping[str, object] | None = None
    call_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayEntry:
    """What the hooks and rules would have done with one recorded step.

    ``verdict``: ``allowed``, ``denied``, ``asked`` (tool calls); ``rewritten`` is set when a hook changed the
    input; ``blocked`` / ``passed`` (prompts); ``stopped`` when a hook would have ended the run.
    """

    step: Recorded
    verdict: str
    reason: str
    decided_by: str
    updated_input: Mapping[str, object] | None
    context: tuple[str, ...]
    runs: tuple[HookRun, ...]

    @property
    def rewritten(self) -> bool:
        return self.updated_input is not None and dict(self.updated_input) != dict(self.step.tool_input or {})

    def to_json(self) -> dict[str, JSONValue]:
        s = self.step
        return {
            "line": s.line,
            "kind": s.kind,
            "tool": s.tool_name or None,
            "input": thaw(s.tool_input) if s.tool_input is not None else None,
            "prompt": s.text if s.kind == "prompt" else None,
            "verdict": self.verdict,
            "rewritten": self.rewritten,
            "updated_input": None if self.updated_input is None else thaw(self.updated_input),
            "reason": self.reason,
            "decided_by": self.decided_by,
            "context": list(self.context),
            "hooks": [r.to_json() for r in self.runs],
        }


def _records(path: Path) -> Iterator[tuple[int, Mapping[str, object]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TranscriptError(f"{path}: cannot read transcript: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{path}: not a text file ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise TranscriptError(f"{path}:{number}: not JSON ({exc})") from exc
        if isinstance(record, Mapping):
            yield number, record


def read_transcript(path: str | Path) -> list[Recorded]:
    """The prompts and tool calls of a hookloop JSONL transcript or a Claude Code session transcript."""
    file = Path(path)
    steps: list[Recorded] = []
    for number, record in _records(file):
        kind = record.get("type")
        if kind == "item":  # hookloop
            item = record.get("item")
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "message" and item.get("role") == "user":
                meta = item.get("meta") or {}
                if isinstance(meta, Mapping) and meta.get("source"):
                    continue  # hook context, notifications, compaction markers: not the user's words
                text = "".join(
                    str(p.get("text", ""))
                    for p in item.get("content", [])
                    if isinstance(p, Mapping) and p.get("type") == "text"
                )
                steps.append(Recorded(kind="prompt", line=number, text=text))
            elif item.get("type") == "tool_call":
                arguments = item.get("arguments")
                steps.append(
                    Recorded(
                        kind="tool_call",
                        line=number,
                        tool_name=str(item.get("name", "")),
                        tool_input=freeze_object(arguments) if isinstance(arguments, Mapping) else freeze_object({}),
                        call_id=str(item.get("call_id", "")),
                    )
                )
        elif kind in ("user", "assistant"):  # Claude Code
            message = record.get("message")
            if not isinstance(message, Mapping):
                continue
            content = message.get("content")
            if kind == "user" and isinstance(content, str):
                steps.append(Recorded(kind="prompt", line=number, text=content))
            elif isinstance(content, list):
                for block in content:
                    if not isinstance(block, Mapping):
                        continue
                    if kind == "user" and block.get("type") == "text" and not record.get("isMeta"):
                        steps.append(Recorded(kind="prompt", line=number, text=str(block.get("text", ""))))
                    elif kind == "assistant" and block.get("type") == "tool_use":
                        arguments = block.get("input")
                        steps.append(
                            Recorded(
                                kind="tool_call",
                                line=number,
                                tool_name=str(block.get("name", "")),
                                tool_input=freeze_object(arguments)
                                if isinstance(arguments, Mapping)
                                else freeze_object({}),
                                call_id=str(block.get("id", "")),
                            )
                        )
    return steps


async def replay(
    steps: Sequence[Recorded],
    config: HookConfig,
    *,
    project_dir: str | Path,
    policy: PermissionPolicy | None = None,
    options: RunnerOptions | None = None,
) -> list[ReplayEntry]:
    """Feed each recorded step through the hooks (UserPromptSubmit, PreToolUse) and the permission rules;
    nothing is executed. A hook's allow never loosens a rule, as in a live run."""
    cwd = Path(project_dir)
    facts = wire_in.ClaudeFacts(
        session_id="replay",
        transcript_path="",
        cwd=str(cwd),
        permission_mode=wire_in.permission_mode_of(None if policy is None else policy.mode),
    )
    entries: list[ReplayEntry] = []
    for step in steps:
        if step.kind == "prompt":
            body = dict(wire_in.user_prompt_submit_input(facts, step.text))
            report = await try_event(config, "UserPromptSubmit", body, project_dir=cwd, options=options)
            merged = report.merged
            blocked = merged.kind in ("block", "deny", "stop") or not merged.continue_
            entries.append(
                ReplayEntry(
                    step=step,
                    verdict="blocked" if blocked else "passed",
                    reason=merged.reason or merged.stop_reason or "",
                    decided_by="UserPromptSubmit hooks" if report.runs else "no hook",
                    updated_input=None,
                    context=merged.additional_context,
                    runs=report.runs,
                )
            )
            continue
        tool_input = thaw_object(step.tool_input or {})
        body = dict(wire_in.pre_tool_use_input(facts, step.tool_name, tool_input, step.call_id))
        report = await try_event(config, "PreToolUse", body, project_dir=cwd, options=options)
        entries.append(_tool_verdict(step, report, policy))
    return entries


def _tool_verdict(step: Recorded, report: TryReport, policy: PermissionPolicy | None) -> ReplayEntry:
    merged = report.merged
    effective: Mapping[str, object] = (
        merged.updated_input if merged.updated_input is not None else (step.tool_input or {})
    )
    if not merged.continue_ or merged.kind == "stop":
        return ReplayEntry(
            step=step,
            verdict="stopped",
            reason=merged.stop_reason or merged.reason or "",
            decided_by="PreToolUse hooks",
            updated_input=merged.updated_input,
            context=merged.additional_context,
            runs=report.runs,
        )
    votes = []
    if merged.kind in ("deny", "block"):
        votes.append(HookVote(behavior="deny", reason=merged.reason or "denied by a hook", hook="PreToolUse hooks"))
    elif merged.kind in ("ask", "defer"):
        votes.append(HookVote(behavior="ask", reason=merged.reason or "a hook asks", hook="PreToolUse hooks"))
    elif merged.kind == "allow":
        votes.append(HookVote(behavior="allow", reason=merged.reason or "", hook="PreToolUse hooks"))
    if policy is None:
        policy = PermissionPolicy(mode="bypassPermissions")
    outcome = policy.decide(step.tool_name, effective, hooks=votes, read_only=step.tool_name in READ_ONLY_TOOLS)
    verdict = {"allow": "allowed", "deny": "denied", "ask": "asked"}[outcome.behavior]
    return ReplayEntry(
        step=step,
        verdict=verdict,
        reason=outcome.reason,
        decided_by=outcome.decided_by,
        updated_input=merged.updated_input,
        context=merged.additional_context,
        runs=report.runs,
    )
