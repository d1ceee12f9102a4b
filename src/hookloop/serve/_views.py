"""What the pages show, as plain data for the templates: timeline rows from transcript events, ages, costs,
the exact rule an "allow always" adds. Nothing here produces HTML: the templates escape every value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hookloop.checkpoint import PendingCall
from hookloop.durable import RunRecord

__all__ = ["Row", "age", "allow_always_rule", "cost", "rows"]

MAX_TEXT = 20_000
"""A longer value is cut (and says so) on the page."""


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a run's timeline."""

    kind: str
    """A CSS class: model, message, call, result, hook, tool, run, error."""
    title: str
    body: str = ""
    who: str = ""
    """Who decided (a hook, a rule, the user), for hook and permission decisions."""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters)"


def _json(value: object) -> str:
    return _cut(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str))


def _parts_text(parts: object) -> str:
    if not isinstance(parts, list):
        return ""
    out = []
    for part in parts:
        if isinstance(part, Mapping):
            if part.get("type") == "text":
                out.append(str(part.get("text", "")))
            else:
                out.append(f"[{part.get('type', 'part')} {part.get('media_type', '')}]".replace(" ]", "]"))
    return "\n".join(out)


def _meta(item: Mapping[str, Any]) -> str:
    meta = item.get("meta")
    if not isinstance(meta, Mapping) or not meta:
        return ""
    return ", ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, default=str)}" for k, v in meta.items())


def _item_row(item: Mapping[str, Any]) -> Row | None:
    kind = item.get("type")
    if kind == "message":
        text = _parts_text(item.get("content"))
        return Row("message", f"{item.get('role', '?')}", _cut(text), _meta(item))
    if kind == "tool_call":
        args = item.get("arguments")
        body = _json(args) if item.get("raw_arguments") is None else _cut(str(item.get("raw_arguments")))
        return Row("call", f"tool call {item.get('name')} ({item.get('call_id')})", body, _meta(item))
    if kind == "tool_result":
        content = item.get("content")
        text = content if isinstance(content, str) else _json(content)
        extra = _parts_text(item.get("parts"))
        title = f"{'error' if item.get('is_error') else 'result'} of {item.get('name')} ({item.get('call_id')})"
        return Row("error" if item.get("is_error") else "result", title, _cut(text + extra), _meta(item))
    if kind == "reasoning":
        return Row("model", "reasoning", _cut(str(item.get("text") or "(redacted)")))
    return Row("run", f"item {kind}", _json(item))


def rows(events: Sequence[Mapping[str, Any]]) -> list[Row]:
    """The timeline: model turns, messages, tool calls and results, every hook and permission decision."""
    out: list[Row] = []
    for e in events:
        kind = e.get("type")
        if kind == "item" and isinstance(e.get("item"), Mapping):
            row = _item_row(e["item"])
        elif kind == "hook":
            who = f"{e.get('hook')} ({e.get('source')})"
            title = f"{e.get('decision')} on {e.get('event')}" + (f" · {e.get('call_id')}" if e.get("call_id") else "")
            row = Row("hook", title, str(e.get("reason") or ""), who)
        elif kind == "model_request_started":
            model = f"{e.get('provider')}:{e.get('model')}" if e.get("model") else str(e.get("provider"))
            row = Row("model", f"model request · turn {e.get('turn')} · {model}")
        elif kind == "model_request_ended":
            tokens = f"{e.get('input_tokens')} in / {e.get('output_tokens')} out"
            error = e.get("error")
            row = Row(
                "error" if error else "model", f"model reply · {tokens} · {e.get('stop_reason')}", str(error or "")
            )
        elif kind == "tool_started":
            row = Row("tool", f"{e.get('tool')} started ({e.get('call_id')})")
        elif kind == "tool_ended":
            status = "failed" if e.get("is_error") else "ok"
            row = Row("tool", f"{e.get('tool')} {status} in {float(e.get('seconds') or 0):.2f}s ({e.get('call_id')})")
        elif kind == "hook_output":
            row = Row("hook", f"{e.get('hook')} {e.get('stream')}", str(e.get("line", "")))
        elif kind == "run_started":
            row = Row("run", f"run {e.get('source')} · {e.get('run_id')}")
        elif kind == "run_ended":
            row = Row("run", f"run {e.get('outcome')}", str(e.get("detail") or ""))
        elif kind == "tool_progress":
            row = Row(
                "tool", f"{e.get('tool')} progress {e.get('progress')}/{e.get('total')}", str(e.get("message") or "")
            )
        else:
            row = None  # stream deltas and server logs: the items they build are shown
        if row is not None:
            out.append(row)
    return out


def age(when: datetime, now: datetime | None = None) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``."""
    seconds = max(0, int(((now or datetime.now(UTC)) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def cost(record: RunRecord) -> str:
    return "—" if record.cost_usd is None else f"${record.cost_usd:.4f}"


PATH_TOOLS = frozenset(
    {"Bash", "Read", "Glob", "Grep", "LS", "NotebookRead", "Edit", "Write", "MultiEdit", "NotebookEdit"}
)
"""Tools whose "allow always" rule depends on the run's directory."""


def allow_always_rule(call: PendingCall, workspace: str | None) -> str | None:
    """The exact rule "allow always" adds for ``call`` (:func:`hookloop.permissions.suggest_rule`). None: not
    offered — no narrow rule covers the call, or the rule depends on the run's directory and the store does not
    know it."""
    from hookloop.permissions import suggest_rule

    if workspace is None and call.tool_name in PATH_TOOLS:
        return None
    try:
        return suggest_rule(call.tool_name, call.arguments, workspace or "/")
    except (ValueError, TypeError, OSError):
        return None
