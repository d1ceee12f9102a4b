"""Trying hooks without an agent: one event on a sample input (``hookloop hooks test``), and a recorded session
replayed through the hooks and permission rules without executing any tool (``hookloop hooks replay``).

Both run the configured hook processes for real (that is the point: see what *your* scripts answer), through the
same selection, runner, translation and merge as a live run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hookloop._frozen import JSONValue, freeze_object, thaw, thaw_object
from hookloop.command_hooks import payloads as wire_in
from hookloop.command_hooks.config import HookConfig
from hookloop.command_hooks.matchers import match_target
from hookloop.command_hooks.model import TOOL_EVENTS, ConfiguredHook, HookOutcome
from hookloop.command_hooks.runner import RunnerOptions, run_all
from hookloop.command_hooks.translate import CommandDecision, merge_decisions, translate_outcome
from hookloop.errors import HookloopError
from hookloop.permissions import HookVote, PermissionConfigError, PermissionPolicy

__all__ = [
    "HookRun",
    "ReplayEntry",
    "TranscriptError",
    "TryReport",
    "decision_json",
    "read_transcript",
    "replay",
    "try_event",
]

READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "TodoRead"})
CLINE_NAMES = {"PreToolUse": "PreToolUse", "PostToolUse": "PostToolUse", "UserPromptSubmit": "UserPromptSubmit"}


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

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "event": self.event,
            "target": self.target,
            "hooks": [r.to_json() for r in self.runs],
            "merged": decision_json(self.merged),
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


def _cline_payload(event: str, payload: Mapping[str, object], cwd: Path) -> dict[str, object] | None:
    facts = wire_in.ClineFacts(
        task_id=str(payload.get("session_id", "hooks-test")),
        workspace_roots=(str(cwd),),
        user_id="hookloop",
        version="hookloop",
        provider="hookloop",
        model=None,
        timestamp_ms=int(time.time() * 1000),
    )
    tool_input = payload.get("tool_input")
    arguments = tool_input if isinstance(tool_input, Mapping) else {}
    if event == "PreToolUse":
        return dict(wire_in.cline_pre_tool_use(facts, str(payload.get("tool_name", "")), arguments))
    if event == "UserPromptSubmit":
        return dict(wire_in.cline_user_prompt_submit(facts, str(payload.get("prompt", ""))))
    return None


async def try_event(
    config: HookConfig,
    event: str,
    payload: Mapping[str, object],
    *,
    project_dir: str | Path,
    tool: str | None = None,
    options: RunnerOptions | None = None,
) -> TryReport:
    """Run the hooks configured for ``event`` on ``payload`` (Claude Code's input shape; ``hook_event_name``
    is filled in) and merge their decisions. ``tool`` overrides ``payload["tool_name"]`` for matching."""
    cwd = Path(project_dir)
    body: dict[str, object] = {"hook_event_name": event, "cwd": str(cwd), **dict(payload)}
    if tool is not None:
        body["tool_name"] = tool
    target = match_target(event, body)
    raw_input = body.get("tool_input")
    tool_input: Mapping[str, object] = raw_input if isinstance(raw_input, Mapping) else {}
    tool_name = str(body["tool_name"]) if "tool_name" in body else None
    selected = [
        hook
        for hook in config.for_event(event, target)
        if event not in TOOL_EVENTS or _condition_holds(hook, tool_name, tool_input, cwd)
    ]
    cline = [h for h in config.hooks if h.protocol == "cline" and h.event == CLINE_NAMES.get(event)]
    cline_body = _cline_payload(event, body, cwd) if cline else None
    hooks = [h for h in selected if h.protocol == "claude"] + (cline if cline_body is not None else [])
    outcomes = await run_all(hooks, body, project_dir=cwd, cline_payload=cline_body, options=options)
    runs = tuple(
        HookRun(hook=h, outcome=o, decision=translate_outcome(h, o)) for h, o in zip(hooks, outcomes, strict=True)
    )
    return TryReport(event=event, target=target, runs=runs, merged=merge_decisions([r.decision for r in runs]))


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
