"""What makes a checkpoint trustworthy: the per-user MAC key, the MAC itself, and the ledger of consumed ones.

- **Key.** ``$HOOKLOOP_HOME/checkpoint.key`` (default ``~/.hookloop/checkpoint.key``): 32 random bytes as hex,
  created on first use atomically (a private temp file linked into place, so two processes racing agree on one
  key) with mode 0600 inside a 0700 directory. A key file that is a symlink, not a regular file, not owned by
  this user, or readable or writable by the group or others is refused. A library user may pass a key instead.
- **MAC.** HMAC-SHA256 over the canonical JSON encoding (sorted keys, no spaces, ASCII) of the whole body.
- **Ledger.** A checkpoint's nonce is recorded as consumed, in this process and as one file per nonce under
  ``$HOOKLOOP_HOME/resumed/`` created with ``O_EXCL`` — so of two processes racing to resume the same
  checkpoint exactly one wins.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from hookloop.errors import CheckpointError

__all__ = ["KEY_FILE", "consume", "default_key", "key_id", "mac", "resolve_key"]

KEY_FILE = "checkpoint.key"
LEDGER_DIR = "resumed"
_KEY_BYTES = 32
NONCE = re.compile(r"[0-9a-f]{32}")
_lock = threading.Lock()
_consumed: dict[str, str] = {}
"""Nonces resumed in this process → when (ISO time), whatever the ledger directory."""


def resolve_hookloop_home() -> Path:
    """``$HOOKLOOP_HOME`` if set, else ``~/.hookloop`` (as :func:`hookloop.command_hooks.resolve_hookloop_home`,
    which cannot be imported here without importing the Worker)."""
    override = os.environ.get("HOOKLOOP_HOME")
    return Path(override) if override else Path.home() / ".hookloop"


def _private_dir(path: Path) -> None:
    """Create ``path`` (and parents) with mode 0700 if missing."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _check_private(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise CheckpointError(f"checkpoint key {path}: not a regular file")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise CheckpointError(f"checkpoint key {path}: owned by another user (uid {info.st_uid}); refusing it")
    if info.st_mode & 0o077:
        raise CheckpointError(
            f"checkpoint key {path}: mode {stat.S_IMODE(info.st_mode):o} lets other users read or change it; "
            f"refusing it (chmod 600 {path} if it is yours, or delete it to make a new key)"
        )


def _read_key(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if path.is_symlink():
            raise CheckpointError(f"checkpoint key {path}: is a symlink; refusing it") from exc
        raise
    try:
        _check_private(fd, path)
        raw = os.read(fd, 4 * _KEY_BYTES)
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < 16:
        raise CheckpointError(f"checkpoint key {path}: not a hookloop key (expected {2 * _KEY_BYTES} hex digits)")
    return key


def default_key(home: str | Path | None = None) -> bytes:
    """This user's checkpoint key, created on first use (see the module docstring). ``home`` overrides
    ``$HOOKLOOP_HOME``. Raises :class:`CheckpointError` for a key file that is unsafe or unreadable."""
    folder = Path(home) if home is not None else resolve_hookloop_home()
    path = folder / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise CheckpointError(f"checkpoint key {path}: cannot read it: {exc.strerror or exc}") from exc
    try:
        _private_dir(folder)
        tmp = folder / f".{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, (os.urandom(_KEY_BYTES).hex() + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # atomic and exclusive: a racing process's key wins, and we read it below
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except OSError as exc:
        raise CheckpointError(f"checkpoint key {path}: cannot create it: {exc.strerror or exc}") from exc


def resolve_key(key: bytes | None) -> bytes:
    """``key`` if given (at least 16 bytes), else :func:`default_key`."""
    if key is None:
        return default_key()
    if not isinstance(key, bytes) or len(key) < 16:
        raise CheckpointError("checkpoint key: expected at least 16 bytes")
    return key


def key_id(key: bytes) -> str:
    """A public fingerprint of ``key`` (says which key made a checkpoint without revealing it)."""
    return hmac.new(key, b"hookloop checkpoint key id", hashlib.sha256).hexdigest()[:16]


def canonical(body: Mapping[str, object]) -> bytes:
    """The canonical encoding the MAC covers. Raises ValueError/RecursionError for what JSON cannot hold."""
    return json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def mac(key: bytes, body: Mapping[str, object]) -> str:
    return "hmac-sha256:" + hmac.new(key, canonical(body), hashlib.sha256).hexdigest()


def consume(nonce: str, *, run_id: str, ledger: Path | None, fork: bool) -> None:
    """Record ``nonce`` as resumed — in this process, and in ``ledger`` (a directory; None: the default under
    ``$HOOKLOOP_HOME``) — or raise :class:`CheckpointError` if it already was. ``fork`` resumes again
    deliberately: nothing is refused (and the nonce is recorded if it was not yet)."""
    if NONCE.fullmatch(nonce) is None:  # never a path: the nonce names a ledger file
        raise CheckpointError("checkpoint.nonce: expected 32 hex digits")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with _lock:
        earlier = _consumed.get(nonce)
        if earlier is not None and not fork:
            raise _replayed(nonce, earlier, "in this process")
        folder = ledger if ledger is not None else resolve_hookloop_home() / LEDGER_DIR
        entry = folder / nonce
        try:
            _private_dir(folder)
        except OSError as exc:
            raise _unrecorded(nonce, folder, exc) from exc
        try:
            fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            if not fork:
                raise _replayed(nonce, _recorded_at(entry), f"(recorded in {entry})") from None
        except OSError as exc:
            raise _unrecorded(nonce, folder, exc) from exc
        else:
            try:
                os.write(fd, json.dumps({"resumed_at": now, "run_id": run_id, "pid": os.getpid()}).encode())
            finally:
                os.close(fd)
        _consumed.setdefault(nonce, now)


def _unrecorded(nonce: str, folder: Path, exc: OSError) -> CheckpointError:
    return CheckpointError(
        f"cannot record that checkpoint {nonce} is being resumed ({folder}: {exc.strerror or exc}); "
        "a checkpoint is resumed only once it is recorded"
    )


def _recorded_at(entry: Path) -> str:
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
        return str(data["resumed_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown time"


def _replayed(nonce: str, when: str, where: str) -> CheckpointError:
    return CheckpointError(
        f"checkpoint {nonce} was already resumed at {when} {where}; a checkpoint is resumed once",
        hint="pass fork=True to resume it again as a new run, with new idempotency keys",
    )
