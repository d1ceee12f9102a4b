"""Processes that leave their call's process group: found, killed and reaped when the call ends.

Every child :func:`hookloop._spawn.spawn_group` starts (Bash, Grep, command hooks) gets its own token in the
``HOOKLOOP_SPAWN`` environment variable, which its descendants inherit. Killing the call's process group
reaches everything that stayed in the group; a process that left it (``setsid``, ``setpgid``,
``process_group=0``) is found by its token instead.

On Linux this process becomes a **child subreaper** (``prctl(PR_SET_CHILD_SUBREAPER)``) at the first spawn
(or when :func:`guard_descendants` is called): an orphan no longer goes to init but to us, so when a call ends
its escapees are among our own children — one read of ``/proc/self/task/<pid>/children`` finds them, without
scanning the whole process table. :func:`release` then SIGKILLs each child carrying the call's token with
everything below it, and reaps (``waitpid``) exactly the pids it killed and the call's own reparented group
members — never a pid asyncio's child watcher waits for (the live leaders are excluded), never a child this
process started some other way (it carries no token). Without the subreaper (other systems, or
``guard_descendants(subreaper=False)``) the whole of ``/proc`` is scanned for the token instead (slower).

:func:`guard_descendants` (the CLI calls it at start) also starts a watchdog: a small process that waits for this
one to die — in any way, SIGKILL included — and then kills every process still carrying one of our tokens.

A call whose caller keeps what it left running (a command hook that exited on its own,
:mod:`hookloop.command_hooks.kept`) is :func:`detach`-ed instead: :func:`remnants` finds what of it still runs
(our children in its group or carrying its token, with the subreaper), and :func:`release_kept` ends it later —
its group while a live member holds the group's number, everything carrying its token, reaped.

What remains possible (not guaranteed): a process that clears or rewrites its environment *and* leaves the
group survives its call (with the subreaper it stays our child, so the watchdog's sweep misses it too); a
process that has something outside our tree start code for it (``systemd-run``, ``at``, an ssh to localhost,
a running tmux or docker daemon) is out of reach; a fork bomb that outpaces the sweep for its whole 2 s budget
survives it; an escapee that exits on its own before its call ends leaves a zombie entry (no code runs) until
this process exits. Without :func:`guard_descendants`, a SIGKILLed host leaves its tool processes running.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ENV_VAR",
    "detach",
    "discard",
    "group_exists",
    "guard_descendants",
    "is_subreaper",
    "kill_kept",
    "reap_killed",
    "register",
    "release",
    "release_kept",
    "remnants",
    "with_token",
]

ENV_VAR = "HOOKLOOP_SPAWN"
"""The environment variable carrying a child's token (``<pid>.<random>.<n>``)."""

_LINUX = sys.platform.startswith("linux")
_PR_SET_CHILD_SUBREAPER = 36
_SWEEP_BUDGET = 2.0
_PATIENCE = 0.2  # seconds an unreadable environment is looked at again
_POLL = 0.002
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class _State:
    def __init__(self) -> None:
        self.prefix = f"{os.getpid()}.{secrets.token_hex(4)}"
        self.counter = itertools.count(1)
        self.leaders: dict[int, tuple[bytes, int]] = {}  # live leaders (asyncio reaps them) → token, start
        self.started: dict[bytes, int] = {}  # token → clock ticks just before its spawn
        self.subreaper: bool | None = None  # None: not decided yet
        self.want_subreaper = True
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.watchdog_pipe: int | None = None
        self.children_fd: int | None = None  # /proc/<pid>/task/<pid>/children, kept open: pread is cheap


_state = _State()


def _after_fork_in_child() -> None:
    global _state
    _state = _State()  # a forked child is a new owner: its own tokens, no leaders, no watchdog


os.register_at_fork(after_in_child=_after_fork_in_child)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _ensure_subreaper() -> bool:
    if _state.subreaper is None:
        _state.subreaper = _LINUX and _state.want_subreaper and _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return _state.subreaper


def is_subreaper() -> bool:
    """Whether this process was made a child subreaper by hookloop."""
    return bool(_state.subreaper)


def guard_descendants(*, subreaper: bool = True, watchdog: bool = True) -> None:
    """Make this process answer for every process hookloop starts, now rather than at the first spawn.

    ``subreaper``: on Linux become a child subreaper (default; done at the first spawn anyway). Pass False
    before anything is spawned to keep the process-wide default (orphans go to init): escapees are then found
    by scanning all of ``/proc`` at the end of each call. A process that is a subreaper also receives the
    orphans of processes it started by other means; hookloop never reaps those (it reaps only what it killed),
    so an application whose own subprocesses double-fork daemons should pass False.

    ``watchdog``: start a small helper process (once) that, when this process dies for any reason — SIGKILL
    included — kills every process still carrying one of this process's tokens. Linux only (it reads
    ``/proc/<pid>/environ``). The CLI calls ``guard_descendants()`` at start. Idempotent; a no-op elsewhere.
    """
    if _state.subreaper is None:
        _state.want_subreaper = subreaper
        _ensure_subreaper()
    if watchdog and _LINUX and _state.watchdog is None:
        _start_watchdog()


def with_token(env: Mapping[str, str] | Mapping[bytes, bytes] | None) -> tuple[dict[Any, Any], bytes]:
    """A copy of ``env`` (``None``: this process's environment) with a fresh ``HOOKLOOP_SPAWN`` token, and the
    token. Keys keep their type (str or bytes)."""
    _ensure_subreaper()
    token = f"{_state.prefix}.{next(_state.counter)}".encode()
    _state.started[token] = _ticks()
    if env is None:
        raw = getattr(os.environ, "_data", None)
        env = raw if isinstance(raw, dict) else {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    copy: dict[Any, Any] = dict(env)
    if isinstance(next(iter(copy), b""), str):
        copy[ENV_VAR] = token.decode()
    else:
        copy[ENV_VAR.encode()] = token
    return copy, token


def register(pid: int, token: bytes) -> None:
    """``pid`` is a live leader (asyncio's child watcher reaps it): never reap it here."""
    _state.leaders[pid] = (token, _state.started.pop(token, 0))


def discard(token: bytes) -> None:
    """The spawn that ``token`` was made for failed: forget it."""
    _state.started.pop(token, None)


async def release(pid: int) -> None:
    """The call led by ``pid`` is over (its group already killed): kill and reap whatever of it left the group.

    Bounded (about 2 s at worst); the common case — nothing escaped — costs one read of our children list.
    Cancelling it during the wait leaves everything already SIGKILLed (only zombie entries may remain).
    """
    leader = _state.leaders.pop(pid, None)
    if leader is None or not _LINUX:
        return
    await _finish(_needle(leader[0]), pid, leader[1], set())


def _needle(token: bytes) -> bytes:
    """What a process carrying ``token`` has in its environment (``/proc/<pid>/environ``)."""
    return ENV_VAR.encode() + b"=" + token


async def _finish(needle: bytes, pgid: int, since: int, killed: set[int]) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    # Polling: the processes are not our children (or not yet), so nothing notifies us when they go.
    while _sweep(needle, pgid, since, killed, patient=loop.time() < start + _PATIENCE):
        if loop.time() > start + _SWEEP_BUDGET:
            break
        await asyncio.sleep(_POLL)


# ---------------------------------------------------------------------------------------------------------
# Calls whose leftovers are kept (command hooks' background processes)
# ---------------------------------------------------------------------------------------------------------


def detach(pid: int) -> tuple[bytes, int] | None:
    """The call led by ``pid`` is over (its leader reaped) and its caller keeps what it left running instead of
    releasing it (:mod:`hookloop.command_hooks.kept`): ``pid`` is no longer a live leader. Returns the call's
    token and start (clock ticks), for :func:`remnants` and :func:`release_kept`; None for an unknown ``pid``."""
    return _state.leaders.pop(pid, None)


def remnants(pgid: int, token: bytes, since: int) -> tuple[list[int], list[int]]:
    """What the finished call led by ``pgid`` (its leader gone) still has running: ``(known, maybe)``.

    With the subreaper these are our children — everything the call left is one of them or below one: those in
    its group or carrying its token are ``known``; ``maybe`` are our children started since the call whose
    environment cannot be read right now (mid-``exec``, or cleared): look again later. Without the subreaper,
    every process in the group or carrying the token, none ``maybe``. Only processes started since the call
    count. Zombies of ours in the call's group are reaped on the way. Linux only: ``([], [])`` elsewhere."""
    if not _LINUX:
        return [], []
    needle = _needle(token)
    subreaper = bool(_state.subreaper)
    me = os.getpid()
    watchdog = _state.watchdog.pid if _state.watchdog is not None else None
    known: list[int] = []
    maybe: list[int] = []
    for pid in _our_children() if subreaper else _all_pids():
        if pid in _state.leaders or pid == watchdog:
            continue
        stat = _stat(pid)
        if stat is None:
            continue
        state, ppid, group, started = stat
        if started < since:
            continue  # older than the call
        if state in (b"Z", b"X"):
            if ppid == me and group == pgid:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            continue
        if group == pgid:
            known.append(pid)  # the group's number is taken while it has a member: it is still the call's
            continue
        carries = _carries(pid, needle)
        if carries:
            known.append(pid)
        elif carries is None and subreaper:
            maybe.append(pid)
    return known, maybe


async def release_kept(pgid: int, token: bytes, since: int, alive: Sequence[int]) -> None:
    """End a call :func:`detach` kept: SIGKILL ``alive`` (its processes known to be running, each with the
    processes below it), its group while one of them is in it, and everything carrying its token; then reap what
    is ours (bounded, as :func:`release`)."""
    killed = _kill_kept(pgid, alive)
    if _LINUX:
        await _finish(_needle(token), pgid, since, killed)


def kill_kept(pgid: int, token: bytes, since: int, alive: Sequence[int]) -> dict[int, int]:
    """:func:`release_kept` without waiting: one round of kills, nothing reaped unless already dead (for the
    interpreter's exit, or a cancelled release). Returns the processes killed that are still to be reaped, each
    with its start (clock ticks), for :func:`reap_killed`."""
    killed = _kill_kept(pgid, alive)
    if _LINUX:
        _sweep(_needle(token), pgid, since, killed, patient=False)
    starts: dict[int, int] = {}
    for pid in killed:
        stat = _stat(pid)
        if stat is not None:
            starts[pid] = stat[3]
    return starts


def reap_killed(killed: dict[int, int]) -> None:
    """Reap the processes of ``killed`` (pid → start, from :func:`kill_kept`) that are now our zombies, and forget
    those gone; a pid now naming another process (a different start) is forgotten, never reaped."""
    me = os.getpid()
    for pid, started in list(killed.items()):
        stat = _stat(pid)
        if stat is None or stat[3] != started:
            del killed[pid]
        elif stat[0] in (b"Z", b"X") and stat[1] == me:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            del killed[pid]


def _kill_kept(pgid: int, alive: Sequence[int]) -> set[int]:
    killed: set[int] = set()
    for pid in alive:
        stat = _stat(pid)
        if stat is not None and stat[2] == pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)  # a live member holds the group's number: it is the call's
            break
    for pid in alive:
        for victim in _tree(pid) if _LINUX else [pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(victim, signal.SIGKILL)
            killed.add(victim)
    return killed


# ---------------------------------------------------------------------------------------------------------
# /proc
# ---------------------------------------------------------------------------------------------------------


def _sweep(needle: bytes, pgid: int, since: int, killed: set[int], *, patient: bool) -> bool:
    """One round: SIGKILL every process carrying ``needle`` (with its descendants), reap what is ours and
    dead. True while something of the call may still be alive or unreaped. ``patient``: a child whose
    environment cannot be read right now (it is in the middle of ``exec``) is looked at again. Processes that
    started before ``since`` (clock ticks) cannot belong to the call and are left alone."""
    pending = False
    subreaper = bool(_state.subreaper)
    candidates = _our_children() if subreaper else _all_pids()
    for pid in candidates:
        if pid == pgid or pid in _state.leaders or (_state.watchdog is not None and pid == _state.watchdog.pid):
            continue  # leaders are asyncio's to reap
        stat = _stat(pid)
        if stat is None:
            continue
        state, ppid, group, started = stat
        if started < since:
            continue  # older than the call: not its descendant
        ours = ppid == os.getpid()
        if state in (b"Z", b"X"):
            if ours and (pid in killed or group == pgid):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            elif pid in killed:
                pending = True  # its parent (killed too) has not died yet; it comes to us next
            continue
        if not subreaper and group == pgid:
            pending = True  # a member still dying
        if pid in killed:
            pending = True  # SIGKILLed, still dying
        elif (carries := _carries(pid, needle)) is None:
            pending = pending or patient
        elif carries:
            for victim in _tree(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(victim, signal.SIGKILL)
                killed.add(victim)
            pending = True
    if subreaper and group_exists(pgid):
        pending = True  # members still dying, or reparented to us as zombies: reaped next round
    for pid in list(killed):
        if _stat(pid) is None:
            killed.discard(pid)
        else:
            pending = True
    return pending


def _our_children() -> list[int]:
    # Orphans are reparented to the subreaper's first live thread: the main thread, whose id is the pid.
    try:
        if _state.children_fd is None:
            me = os.getpid()
            _state.children_fd = os.open(f"/proc/{me}/task/{me}/children", os.O_RDONLY | os.O_CLOEXEC)
        data = chunk = os.pread(_state.children_fd, 1 << 16, 0)
        while len(chunk) == 1 << 16:
            chunk = os.pread(_state.children_fd, 1 << 16, len(data))
            data += chunk
    except OSError:
        return _all_pids()
    return [int(p) for p in data.split()]


def _all_pids() -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    me = os.getpid()
    return [int(n) for n in names if n.isdigit() and int(n) != me]


def _stat(pid: int) -> tuple[bytes, int, int, int] | None:
    """(state, ppid, pgrp, start time in clock ticks since boot) of ``pid``, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[19])


def _ticks() -> int:
    """Now, in the clock ticks ``/proc/<pid>/stat`` counts start times in, rounded down and one tick early.
    The smaller of the monotonic and boot-time clocks: kernels differ in which one start times follow."""
    if not _LINUX:
        return 0
    now = min(time.clock_gettime(time.CLOCK_MONOTONIC), time.clock_gettime(time.CLOCK_BOOTTIME))
    return int(now * _HZ) - 1


def _carries(pid: int, needle: bytes) -> bool | None:
    """Whether ``pid``'s environment holds ``needle``; None when it reads empty (mid-``exec`` the kernel shows
    no environment for a moment; ``env -i`` shows none for good)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        return None
    if not environ:
        return None
    return any(entry == needle for entry in environ.split(b"\0"))


def _tree(root: int) -> list[int]:
    """``root`` and its descendants, parents first."""
    found, queue = [root], [root]
    while queue:
        pid = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    children = [int(c) for c in handle.read().split()]
            except OSError:
                continue
            found.extend(children)
            queue.extend(children)
    return found


def group_exists(pgid: int) -> bool:
    """Whether process group ``pgid`` has any member (zombies included; one we may not signal counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------------------------------------------------
# Watchdog
# ---------------------------------------------------------------------------------------------------------

_WATCHDOG = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(s, signal.SIG_IGN)
prefix = sys.argv[1].encode()
while os.read(0, 4096):
    pass
me = os.getpid()
for round in range(50):
    if round:
        time.sleep(0.01)
    hit = round < 5  # a few rounds at least: mid-exec a process shows an empty environment for a moment
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read()
        except OSError:
            continue
        if any(e.startswith(prefix) for e in env.split(b"\0")):
            try:
                os.kill(int(name), signal.SIGKILL)
                hit = True
            except OSError:
                pass
    if not hit:
        break
"""


def _start_watchdog() -> None:
    read_end, write_end = os.pipe()  # not inheritable: children never hold the write end
    try:
        _state.watchdog = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, f"{ENV_VAR}={_state.prefix}."],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C to our terminal's group does not reach it
            close_fds=True,
        )
    except OSError:
        os.close(write_end)
        return
    finally:
        os.close(read_end)
    _state.watchdog_pipe = write_end  # closed by the kernel when we die: the watchdog then sweeps
