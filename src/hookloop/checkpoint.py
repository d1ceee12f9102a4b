"""Checkpoints: the complete, versioned, authenticated, JSON-serialisable state of a paused run.

``Worker.resume(checkpoint, decisions=...)`` continues from one — in the same Worker or in a fresh Worker
in another process (built with the same tools and hooks) — and produces the same continuation as if the run
had never paused.

Trust (SPEC §7). A checkpoint on disk is input, not authority:

- **Authenticated.** A serialised checkpoint carries an HMAC-SHA256 over its whole body (``options``
  included), made with a per-user secret (``$HOOKLOOP_HOME/checkpoint.key``, created mode 0600 on first use)
  or with the ``key=`` the library user passes. Loading one whose MAC does not match — changed after it was
  written, or made with another key (on another machine: pass that machine's key, or copy its key file) —
  raises :class:`hookloop.errors.CheckpointError`. ``verify=False`` reads a checkpoint for inspection only:
  :meth:`Worker.resume` refuses it.
- **Never trusted for decisions.** The ``state`` of a call in the file only says which calls the caller
  must decide; resume plans every call that is not done again against the *current* permission policy, and
  approval comes only from the ``decisions`` passed to resume.
- **Consumed once.** Every checkpoint has a random ``nonce``; resume records it (in the process and under
  ``$HOOKLOOP_HOME/resumed/``) before running anything, and refuses a second resume unless ``fork=True``.
- **Bounded.** Text over ``max_bytes`` (default :data:`MAX_CHECKPOINT_BYTES`) is refused before it is
  parsed; nesting deeper than :data:`MAX_DEPTH`, wrong types and unknown fields raise ``CheckpointError``
  naming the JSON path.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypeAlias

from hookloop import _checkpoint_auth as auth
from hookloop._frozen import FrozenDict, JSONValue, empty, freeze_object, thaw_object
from hookloop.errors import CheckpointError, ItemError
from hookloop.items import Item, ToolCall, ToolResult, item_from_json
from hookloop.stream import Usage

__all__ = [
    "CHECKPOINT_VERSION",
    "MAX_CHECKPOINT_BYTES",
    "MAX_DEPTH",
    "AllowAlways",
    "Approve",
    "Checkpoint",
    "PendingCall",
    "Reject",
    "ResumeDecision",
]

CHECKPOINT_VERSION = 2
"""2: authenticated (HMAC) with a nonce and options. 1 (a plain digest anyone could recompute) is refused."""
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
"""The default limit on a checkpoint's size, checked before anything is parsed."""
MAX_DEPTH = 256
"""The deepest JSON nesting a checkpoint may have."""

CallState: TypeAlias = Literal["ready", "approval", "paused", "done", "subagent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCall:
    """One tool call of the paused batch.

    ``state``: ``ready`` (cleared to run), ``approval`` (a rule or hook asked: needs a decision), ``paused``
    (a hook paused on it: needs a decision), ``done`` (already answered, ``result`` holds the answer).
    ``asked_by`` names the rule or hook that asked or paused. ``subagent``: the call runs a subagent that
    paused; ``child`` is the subagent's own checkpoint (authenticated with this one), and its calls that need a
    decision appear in :attr:`Checkpoint.pending` as ``<this call id>/<child call id>``.
    """

    call_id: str
    tool_name: str
    arguments: FrozenDict = field(default_factory=empty)
    state: CallState = "ready"
    reason: str = ""
    asked_by: str = ""
    result: ToolResult | None = None
    child: Checkpoint | None = None

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
            **({} if self.child is None else {"child": self.child._body()}),
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
    """Resume decision: run this call and add a session allow rule (default: the narrowest rule covering the call,
    :func:`hookloop.permissions.suggest_rule`; none when there is no narrow one, e.g. a compound command)."""

    rule: str | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """Resume decision: do not run this call; it gets an error result with ``reason``."""

    reason: str = "denied by the user"


ResumeDecision: TypeAlias = Approve | AllowAlways | Reject


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """The state of a paused run.

    Serialise with :meth:`to_json` / :meth:`dumps` / :meth:`save` (authenticated with ``key``, default the
    per-user key); load with :meth:`from_json` / :meth:`loads` / :meth:`load` (verified with the same key).

    ``nonce`` identifies this checkpoint for the consume-once ledger (a fresh random one per checkpoint).
    ``options`` is the application's own JSON (the CLI saves its run options there); it is authenticated with
    the rest but hookloop never acts on it. ``resumable`` is False for a checkpoint read with
    ``verify=False``: it may be inspected, never resumed.
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
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))
    options: FrozenDict = field(default_factory=empty)
    resumable: bool = field(default=True, compare=False, repr=False)

    @property
    def pending(self) -> tuple[PendingCall, ...]:
        """The calls that need a decision to resume — a paused subagent's as ``<call id>/<child call id>``."""
        found: list[PendingCall] = []
        for c in self.batch:
            if c.child is not None:
                found.extend(replace(p, call_id=f"{c.call_id}/{p.call_id}") for p in c.child.pending)
            elif c.needs_decision:
                found.append(c)
        return tuple(found)

    def open_calls(self) -> frozenset[str]:
        """The ids of the calls not answered yet (a paused subagent's prefixed as in :attr:`pending`): a resume
        decision may name any of them."""
        ids: set[str] = set()
        for c in self.batch:
            if c.child is not None:
                ids.update(f"{c.call_id}/{i}" for i in c.child.open_calls())
            elif c.state != "done":
                ids.add(c.call_id)
        return frozenset(ids)

    def _body(self) -> dict[str, JSONValue]:
        u = self.usage
        return {
            "version": self.version,
            "nonce": self.nonce,
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
            "options": thaw_object(self.options),
        }

    def to_json(self, *, key: bytes | None = None) -> dict[str, JSONValue]:
        """The JSON body with ``key_id`` and ``mac`` (HMAC-SHA256 with ``key``, default the per-user key)."""
        secret = auth.resolve_key(key)
        body = self._body()
        body["key_id"] = auth.key_id(secret)
        body["mac"] = auth.mac(secret, body)
        return body

    def dumps(self, *, key: bytes | None = None) -> str:
        return json.dumps(self.to_json(key=key), ensure_ascii=False)

    def save(self, path: str | Path, *, key: bytes | None = None) -> Path:
        """Write atomically (a private temp file, mode 0600, renamed into place) and return the path."""
        target = Path(path)
        text = self.dumps(key=key).encode("utf-8")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.write(fd, text)
            finally:
                os.close(fd)
            tmp.replace(target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise CheckpointError(f"cannot write checkpoint {target}: {exc.strerror or exc}") from exc
        return target

    @classmethod
    def loads(
        cls,
        text: str | bytes,
        *,
        key: bytes | None = None,
        verify: bool = True,
        max_bytes: int = MAX_CHECKPOINT_BYTES,
    ) -> Checkpoint:
        """Parse and verify (see :meth:`from_json`). Text longer than ``max_bytes`` (bytes, or characters for a
        ``str``) is refused before it is parsed."""
        return cls.from_json(parse_json(text, max_bytes), key=key, verify=verify)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        key: bytes | None = None,
        verify: bool = True,
        max_bytes: int = MAX_CHECKPOINT_BYTES,
    ) -> Checkpoint:
        """Read ``path`` (a regular file of at most ``max_bytes``: the size is checked before reading) and
        parse it as :meth:`loads` does."""
        return cls.loads(read_limited(path, max_bytes), key=key, verify=verify, max_bytes=max_bytes)

    @classmethod
    def from_json(cls, data: object, *, key: bytes | None = None, verify: bool = True) -> Checkpoint:
        """Validate and rebuild.

        With ``verify`` (the default) the MAC must match ``key`` (default: the per-user key); otherwise the
        checkpoint is still fully validated but comes back with ``resumable=False`` (inspection only).
        Raises :class:`CheckpointError` naming what is wrong (the JSON path for a malformed field).
        """
        if not isinstance(data, Mapping):
            raise CheckpointError(f"checkpoint: expected a JSON object, got {type(data).__name__}")
        _check_depth(data)
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise CheckpointError("checkpoint.version: missing or not an integer")
        if version > CHECKPOINT_VERSION:
            raise CheckpointError(
                f"checkpoint.version: {version} was written by a newer hookloop (this one reads up to "
                f"{CHECKPOINT_VERSION}); upgrade hookloop to resume it"
            )
        if version < CHECKPOINT_VERSION:
            raise CheckpointError(
                f"checkpoint.version: {version} is an unauthenticated checkpoint from an older hookloop (anyone "
                "could have changed it); it cannot be resumed — start a new run"
            )
        if verify:
            _verify(data, auth.resolve_key(key))
        try:
            checkpoint = _parse(data)
        except ItemError as exc:
            raise CheckpointError(f"checkpoint.{exc}") from None
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            raise CheckpointError(f"checkpoint: malformed ({type(exc).__name__}: {exc})") from None
        if not verify:
            object.__setattr__(checkpoint, "resumable", False)
        return checkpoint


def parse_json(text: str | bytes, max_bytes: int = MAX_CHECKPOINT_BYTES) -> object:
    """JSON text → value, refusing text over ``max_bytes`` before parsing it, and NaN/Infinity; every failure
    (too deep, invalid, not UTF-8) is a :class:`CheckpointError`."""
    if len(text) > max_bytes:
        raise CheckpointError(f"checkpoint is {len(text)} bytes, over the {max_bytes}-byte limit")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise CheckpointError("checkpoint is nested too deeply to be a checkpoint") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity, a huge integer
        raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from None


def read_limited(path: str | Path, max_bytes: int = MAX_CHECKPOINT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, refusing one over ``max_bytes`` before reading it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointError(f"cannot read checkpoint {path}: not a regular file")
        if info.st_size > max_bytes:
            raise CheckpointError(
                f"checkpoint {path} is {info.st_size} bytes, over the {max_bytes}-byte limit; not read"
            )
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise CheckpointError(f"checkpoint {path} grew over the {max_bytes}-byte limit while it was read")
        return b"".join(chunks)
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _check_depth(data: object) -> None:
    """Refuse nesting deeper than MAX_DEPTH (iteratively: a deep input cannot exhaust the stack here)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise CheckpointError(f"checkpoint: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)


def _verify(data: Mapping[str, object], key: bytes) -> None:
    claimed = data.get("mac")
    if not isinstance(claimed, str):
        raise CheckpointError("checkpoint.mac: missing; a checkpoint must be authenticated to be resumed")
    body = {k: v for k, v in data.items() if k != "mac"}
    try:
        expected = auth.mac(key, body)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"checkpoint: not JSON-encodable ({exc})") from None
    if hmac.compare_digest(claimed.encode("utf-8", "replace"), expected.encode()):
        return
    mine = auth.key_id(key)
    made_with = data.get("key_id")
    if isinstance(made_with, str) and made_with != mine:
        raise CheckpointError(
            f"checkpoint.mac: made with another key (key id {made_with[:16]!r}; this key is {mine!r}) — or "
            f"changed after it was written. Made on another machine? Copy its $HOOKLOOP_HOME/{auth.KEY_FILE}",
            hint="or pass its key=",
        )
    raise CheckpointError(
        "checkpoint.mac: the checkpoint was changed after it was written (MAC mismatch); it cannot be resumed"
    )


_TOP = frozenset(
    {
        "version", "nonce", "run_id", "session_id", "system", "history", "batch", "pause_kind", "reason",
        "turn", "forced_continuations", "usage", "run_start", "cache_prefix", "options", "key_id", "mac",
    }
)  # fmt: skip
_CALL = frozenset({"call_id", "tool_name", "arguments", "state", "reason", "asked_by", "result", "child"})
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _field(data: Mapping[str, object], key: str, kind: type | tuple[type, ...], where: str = "checkpoint") -> object:
    value = data.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise CheckpointError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def _count(data: Mapping[str, object], key: str, where: str = "checkpoint") -> int:
    value = _field(data, key, int, where)
    assert isinstance(value, int)
    if value < 0:
        raise CheckpointError(f"{where}.{key}: expected a count (0 or more), got {value}")
    return value


def _str_field(data: Mapping[str, object], key: str, where: str = "checkpoint") -> str:
    value = _field(data, key, str, where)
    assert isinstance(value, str)
    return value


def _unknown(data: Mapping[str, object], known: frozenset[str], where: str) -> None:
    extra = sorted(repr(k)[:80] for k in data if k not in known)
    if extra:
        more = f" and {len(extra) - 5} more" if len(extra) > 5 else ""
        raise CheckpointError(f"{where}: unknown field(s) {', '.join(extra[:5])}{more}")


def _parse_call(raw: object, i: int, calls: Mapping[str, ToolCall], answered: set[str]) -> PendingCall:
    where = f"checkpoint.batch[{i}]"
    if not isinstance(raw, Mapping):
        raise CheckpointError(f"{where}: expected an object, got {type(raw).__name__}")
    _unknown(raw, _CALL, where)
    state = raw.get("state")
    if state not in ("ready", "approval", "paused", "done", "subagent"):
        raise CheckpointError(f"{where}.state: expected ready, approval, paused, done or subagent, got {state!r}")
    call_id = _str_field(raw, "call_id", where)
    tool_name = _str_field(raw, "tool_name", where)
    call = calls.get(call_id)
    if call is None:
        raise CheckpointError(f"{where}.call_id: call {call_id!r} is not in the history")
    if call.name != tool_name:
        raise CheckpointError(f"{where}.tool_name: {tool_name!r}, but the history's call is {call.name!r}")
    if call_id in answered:
        raise CheckpointError(f"{where}.call_id: call {call_id!r} is already answered in the history")
    args = _field(raw, "arguments", Mapping, where)
    assert isinstance(args, Mapping)
    result_raw = raw.get("result")
    result = None
    if result_raw is not None:
        parsed = item_from_json(result_raw, where=f"batch[{i}].result")
        if not isinstance(parsed, ToolResult) or parsed.call_id != call_id:
            raise CheckpointError(f"{where}.result: expected the tool_result item of call {call_id!r}")
        result = parsed
    if (state == "done") != (result is not None):
        raise CheckpointError(f"{where}.result: a done call needs its result, and only a done call has one")
    child_raw = raw.get("child")
    if (state == "subagent") != (child_raw is not None):
        raise CheckpointError(f"{where}.child: a subagent call needs its child checkpoint, and only it has one")
    child = None
    if child_raw is not None:
        if not isinstance(child_raw, Mapping):
            raise CheckpointError(f"{where}.child: expected an object, got {type(child_raw).__name__}")
        try:
            child = _parse(child_raw)
        except CheckpointError as exc:
            raise CheckpointError(f"{where}.child: {exc}") from None
    return PendingCall(
        call_id=call_id,
        tool_name=tool_name,
        arguments=freeze_object(args),
        state=state,
        reason=_str_field(raw, "reason", where),
        asked_by=_str_field(raw, "asked_by", where),
        result=result,
        child=child,
    )


def _parse(data: Mapping[str, object]) -> Checkpoint:
    from hookloop._loop import history_problem  # the turn machine imports this module

    _unknown(data, _TOP, "checkpoint")
    nonce = _str_field(data, "nonce")
    if auth.NONCE.fullmatch(nonce) is None:
        raise CheckpointError("checkpoint.nonce: expected 32 lowercase hex digits")
    history_raw = _field(data, "history", list)
    assert isinstance(history_raw, list)
    history = tuple(item_from_json(raw, where=f"history[{i}]") for i, raw in enumerate(history_raw))
    problem = history_problem(history)
    if problem is not None:
        raise CheckpointError(f"checkpoint.history: {problem}")
    calls = {i.call_id: i for i in history if isinstance(i, ToolCall)}  # the latest call of each id
    waiting: set[str] = set()  # ids whose latest call has no result yet (ids may be reused once answered)
    for item in history:
        if isinstance(item, ToolCall):
            waiting.add(item.call_id)
        elif isinstance(item, ToolResult):
            waiting.discard(item.call_id)
    answered = set(calls) - waiting
    batch_raw = _field(data, "batch", list)
    assert isinstance(batch_raw, list)
    batch = tuple(_parse_call(raw, i, calls, answered) for i, raw in enumerate(batch_raw))
    if len({c.call_id for c in batch}) != len(batch):
        raise CheckpointError("checkpoint.batch: a call appears twice")
    kind = data.get("pause_kind")
    if kind not in ("tool_calls", "turn_end"):
        raise CheckpointError(f"checkpoint.pause_kind: expected tool_calls or turn_end, got {kind!r}")
    if (kind == "tool_calls") != bool(batch):
        raise CheckpointError(f"checkpoint.batch: a {kind} pause cannot have {len(batch)} pending call(s)")
    usage_raw = _field(data, "usage", Mapping)
    assert isinstance(usage_raw, Mapping)
    _unknown(usage_raw, frozenset(_USAGE), "checkpoint.usage")
    usage = Usage(**{k: _count(usage_raw, k, "checkpoint.usage") for k in _USAGE})
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise CheckpointError(f"checkpoint.system: expected a string or null, got {type(system).__name__}")
    run_start = _count(data, "run_start")
    if run_start > len(history):
        raise CheckpointError(f"checkpoint.run_start: {run_start} is outside the history (0..{len(history)})")
    cache_prefix = _count(data, "cache_prefix")
    if cache_prefix > len(history):
        raise CheckpointError(f"checkpoint.cache_prefix: {cache_prefix} is outside the history (0..{len(history)})")
    options = _field(data, "options", Mapping)
    assert isinstance(options, Mapping)
    return Checkpoint(
        version=CHECKPOINT_VERSION,
        nonce=nonce,
        run_id=_str_field(data, "run_id"),
        session_id=_str_field(data, "session_id"),
        system=system,
        history=history,
        batch=batch,
        pause_kind=kind,
        reason=_str_field(data, "reason"),
        turn=_count(data, "turn"),
        forced_continuations=_count(data, "forced_continuations"),
        usage=usage,
        run_start=run_start,
        cache_prefix=cache_prefix,
        options=freeze_object(options),
    )
