"""Checkpoints: the complete, versioned, JSON-serialisable state of a paused run.

``Worker.resume(checkpoint, decisions=...)`` continues from one — in the same Worker or in a fresh Worker
in another process (built with the same tools and hooks) — and produces the same continuation as if the run
had never paused. A checkpoint carries a digest of its content; loading one that was modified after it was
written, or one written by a newer hookloop, raises :class:`hookloop.errors.CheckpointError` naming the problem.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from hookloop._frozen import FrozenDict, JSONValue, empty, freeze_object, thaw_object
from hookloop.errors import CheckpointError, ItemError
from hookloop.items import Item, ToolResult, item_from_json
from hookloop.stream import Usage

__all__ = [
    "CHECKPOINT_VERSION",
    "AllowAlways",
    "Approve",
    "Checkpoint",
    "PendingCall",
    "Reject",
    "ResumeDecision",
]

CHECKPOINT_VERSION = 1

CallState: TypeAlias = Literal["ready", "approval", "paused", "done"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCall:
    """One tool call of the paused batch.

    ``state``: ``ready`` (cleared to run), ``approval`` (a rule or hook asked: needs a decision), ``paused``
    (a hook paused on it: needs a decision), ``done`` (already answered, ``result`` holds the answer).
    ``asked_by`` names the rule or hook that asked or paused.
    """

    call_id: str
    tool_name: str
    arguments: FrozenDict = field(default_factory=empty)
    state: CallState = "ready"
    reason: str = ""
    asked_by: str = ""
    result: ToolResult | None = None

    @property
    def needs_decision(self) -> bool:
        return self.state in ("approval", "paused")

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "arguments": thaw_object(self.arguments),
            "state": self.state,
            "reason": self.reason,
            "asked_by": self.asked_by,
            "result": None if self.result is None else self.result.to_json(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Approve:
    """Resume decision: run this call once — with ``updated_input`` instead of its arguments if given (validated
    against the tool's schema and checked by the permission rules again, like any declared edit)."""

    updated_input: FrozenDict | None = None

    def __init__(self, *, updated_input: Mapping[str, object] | None = None) -> None:
        object.__setattr__(self, "updated_input", None if updated_input is None else freeze_object(updated_input))


@dataclass(frozen=True, slots=True)
class AllowAlways:
    """Resume decision: run this call and add a session allow rule (default: the tool's name)."""

    rule: str | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """Resume decision: do not run this call; it gets an error result with ``reason``."""

    reason: str = "denied by the user"


ResumeDecision: TypeAlias = Approve | AllowAlways | Reject


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """The state of a paused run.

    Serialise with :meth:`to_json` / :meth:`dumps` / :meth:`save`; load with :meth:`from_json` / :meth:`loads` /
    :meth:`load`.
    """

    version: int = CHECKPOINT_VERSION
    run_id: str
    session_id: str
    system: str | None
    history: tuple[Item, ...]
    batch: tuple[PendingCall, ...]
    pause_kind: Literal["tool_calls", "turn_end"]
    reason: str
    turn: int
    forced_continuations: int
    usage: Usage
    run_start: int
    cache_prefix: int = 0

    @property
    def pending(self) -> tuple[PendingCall, ...]:
        """The calls that need a decision to resume."""
        return tuple(c for c in self.batch if c.needs_decision)

    def _body(self) -> dict[str, JSONValue]:
        u = self.usage
        return {
            "version": self.version,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "system": self.system,
            "history": [i.to_json() for i in self.history],
            "batch": [c.to_json() for c in self.batch],
            "pause_kind": self.pause_kind,
            "reason": self.reason,
            "turn": self.turn,
            "forced_continuations": self.forced_continuations,
            "usage": {
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_tokens": u.cache_read_tokens,
                "cache_write_tokens": u.cache_write_tokens,
            },
            "run_start": self.run_start,
            "cache_prefix": self.cache_prefix,
        }

    def to_json(self) -> dict[str, JSONValue]:
        body = self._body()
        body["digest"] = _digest(body)
        return body

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    def save(self, path: str | Path) -> Path:
        """Write atomically (temp file + rename) and return the path."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(self.dumps(), encoding="utf-8")
        tmp.replace(target)
        return target

    @classmethod
    def loads(cls, text: str | bytes, *, verify: bool = True) -> Checkpoint:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from exc
        return cls.from_json(data, verify=verify)

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = True) -> Checkpoint:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CheckpointError(f"cannot read checkpoint {path}: {exc}") from exc
        return cls.loads(text, verify=verify)

    @classmethod
    def from_json(cls, data: object, *, verify: bool = True) -> Checkpoint:
        """Validate and rebuild. ``verify=False`` accepts a checkpoint edited by hand (still fully validated)."""
        if not isinstance(data, Mapping):
            raise CheckpointError(f"checkpoint: expected a JSON object, got {type(data).__name__}")
        version = data.get("version")
        if not isinstance(version, int):
            raise CheckpointError("checkpoint.version: missing or not an integer")
        if version > CHECKPOINT_VERSION:
            raise CheckpointError(
                f"checkpoint.version: {version} was written by a newer hookloop (this one reads up to "
                f"{CHECKPOINT_VERSION}); upgrade hookloop to resume it"
            )
        if version < 1:
            raise CheckpointError(f"checkpoint.version: {version} is not a valid version")
        if verify:
            body = {k: v for k, v in data.items() if k != "digest"}
            if data.get("digest") != _digest(body):
                raise CheckpointError(
                    "checkpoint.digest: the checkpoint was modified after it was written (digest mismatch); "
                    "pass verify=False to resume a deliberately edited checkpoint"
                )
        try:
            return _parse(data)
        except ItemError as exc:
            raise CheckpointError(f"checkpoint.{exc}") from exc


def _digest(body: Mapping[str, object]) -> str:
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _field(data: Mapping[str, object], key: str, kind: type | tuple[type, ...], where: str = "checkpoint") -> object:
    value = data.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise CheckpointError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def _parse(data: Mapping[str, object]) -> Checkpoint:
    history_raw = _field(data, "history", list)
    assert isinstance(history_raw, list)
    history = tuple(item_from_json(raw, where=f"history[{i}]") for i, raw in enumerate(history_raw))
    batch_raw = _field(data, "batch", list)
    assert isinstance(batch_raw, list)
    batch = []
    for i, raw in enumerate(batch_raw):
        where = f"checkpoint.batch[{i}]"
        if not isinstance(raw, Mapping):
            raise CheckpointError(f"{where}: expected an object")
        state = raw.get("state")
        if state not in ("ready", "approval", "paused", "done"):
            raise CheckpointError(f"{where}.state: expected ready, approval, paused or done, got {state!r}")
        args = _field(raw, "arguments", Mapping, where)
        assert isinstance(args, Mapping)
        result_raw = raw.get("result")
        result = None
        if result_raw is not None:
            parsed = item_from_json(result_raw, where=f"batch[{i}].result")
            if not isinstance(parsed, ToolResult):
                raise CheckpointError(f"{where}.result: expected a tool_result item")
            result = parsed
        if state == "done" and result is None:
            raise CheckpointError(f"{where}.result: a done call needs its result")
        batch.append(
            PendingCall(
                call_id=str(_field(raw, "call_id", str, where)),
                tool_name=str(_field(raw, "tool_name", str, where)),
                arguments=freeze_object(args),
                state=state,
                reason=str(_field(raw, "reason", str, where)),
                asked_by=str(_field(raw, "asked_by", str, where)),
                result=result,
            )
        )
    kind = data.get("pause_kind")
    if kind not in ("tool_calls", "turn_end"):
        raise CheckpointError(f"checkpoint.pause_kind: expected tool_calls or turn_end, got {kind!r}")
    usage_raw = _field(data, "usage", Mapping)
    assert isinstance(usage_raw, Mapping)
    try:
        usage = Usage(**{k: int(v) for k, v in usage_raw.items()})
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint.usage: {exc}") from exc
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise CheckpointError("checkpoint.system: expected a string or null")
    run_start = int(_field(data, "run_start", int))  # type: ignore[call-overload]
    if not 0 <= run_start <= len(history):
        raise CheckpointError(f"checkpoint.run_start: {run_start} is outside the history (0..{len(history)})")
    return Checkpoint(
        version=CHECKPOINT_VERSION,
        run_id=str(_field(data, "run_id", str)),
        session_id=str(_field(data, "session_id", str)),
        system=system,
        history=history,
        batch=tuple(batch),
        pause_kind=kind,
        reason=str(_field(data, "reason", str)),
        turn=int(_field(data, "turn", int)),  # type: ignore[call-overload]
        forced_continuations=int(_field(data, "forced_continuations", int)),  # type: ignore[call-overload]
        usage=usage,
        run_start=run_start,
        cache_prefix=int(data.get("cache_prefix", 0) or 0),  # type: ignore[call-overload]
    )
