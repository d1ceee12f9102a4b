"""Processes a command hook leaves running after it answered: kept until the session ends, then ended.

Claude Code and Cline kill at most a hook's own process (on a timeout or an abort); whatever it started in the
background lives on — and hook collections rely on it: a Notification hook plays ``afplay done.aiff &``, a
logger runs ``(sleep 2; curl -d @log …) &`` or ``nohup notify-send … &`` and answers at once. hookloop keeps such
processes too, within SPEC's "no orphans": they are **kept** by the session and **ended at its end**.

The rule (:func:`~hookloop.command_hooks.runner.run_process` with ``keep=``):

* A hook whose main process **exits on its own** (any exit status, a crash included) may leave processes
  running — in its process group, or out of it (``setsid``, ``nohup … &`` …): they are not killed. Its answer
  comes as soon as the main process exited and stdout/stderr reached their end, or after the runner's
  ``drain_window`` when a background process still holds them; hookloop then closes its ends of the pipes (a
  background process that writes to the hook's stdout or stderr after that gets EPIPE / SIGPIPE: redirect its
  output, ``cmd >/dev/null 2>&1 &``).
* A hook that **times out**, whose stdout passes the output cap, or that is **cancelled** (the run is) has its
  whole group and every escapee killed at once, as always.
* What a hook left is watched (Linux: a pidfd per process; with the subreaper, the orphans of a dying hook are
  this process's children, so each one that exits is reaped at once, and the children it leaves are found then).
  A hook whose processes have all exited is forgotten: a session firing 10 000 hooks that leave nothing keeps
  nothing, and holds no descriptor.
* At most ``limit`` hooks' leftovers are kept at once (default 32, :attr:`RunnerOptions.keep_background
  <hookloop.command_hooks.runner.RunnerOptions.keep_background>`); keeping one more ends the oldest's (SIGTERM,
  ``kill_grace``, SIGKILL).
* **Session end** (:meth:`KeptProcesses.release`; the Worker's command hooks call it in ``session_end`` — at the
  end of every run or resume, however it ends — with the deadline of their fire-and-forget hooks,
  ``background_grace`` seconds): what still runs at the deadline gets SIGTERM, then SIGKILL after ``kill_grace``
  with everything carrying the hook's ``HOOKLOOP_SPAWN`` token and its group, and is reaped.
* If this process dies first: the watchdog of :func:`hookloop.guard_descendants` (the CLI starts it) kills every
  process carrying one of its tokens; at a normal interpreter exit an ``atexit`` handler SIGKILLs what is still
  kept.

Opting out: ``keepBackground: false`` on a command handler in the settings (hookloop's own field; Claude Code
ignores it) kills that hook's leftovers when it exits, hookloop's former behaviour; ``RunnerOptions(
keep_background=0)`` does it for every hook. Outside a Worker (:func:`~hookloop.command_hooks.runner.run_all`
called directly, ``hookloop hooks test``) there is no session to keep them: they are killed when the hook exits,
unless the caller passes its own :class:`KeptProcesses` (``RunnerOptions(kept=…)``) and releases it. Under the hook
sandbox the sandbox's PID namespace ends them with the hook regardless. ``process`` handlers (hook processes
that stay running) are not concerned: they live for the run already.

Limits: on systems without pidfds (not Linux, or a kernel before 5.3) the leftovers are not watched: a hook
whose group still exists is kept until the session ends, where its group is killed (escapees are found only on
Linux; elsewhere a group that emptied and whose number a new group took meanwhile would be hit). A process that
leaves the group *and* clears its environment (or runs a setuid program) is not found (as for every call, see
:mod:`hookloop._reaper`). One that leaves the group, is handed to us when its parent dies while the hook's other
processes still run, and exits before any of them does stays a zombie entry until this process exits: its
environment can no longer be read, so it cannot be told from a child someone else started.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import math
import os
import signal
import sys
import weakref
from dataclasses import dataclass, field

from hookloop import _reaper

__all__ = ["DEFAULT_LIMIT", "KeptProcesses"]

DEFAULT_LIMIT = 32
"""How many hooks' leftovers a session keeps at once by default."""
_POLL = 0.05  # seconds between looks at groups that cannot be watched (no pidfd)
_LINUX = sys.platform.startswith("linux")


@dataclass(eq=False, slots=True)
class _Kept:
    """What one finished hook left running."""

    pgid: int
    token: bytes
    since: int
    name: str
    loop: asyncio.AbstractEventLoop
    watched: dict[int, int] = field(default_factory=dict)
    """pid → pidfd of every process watched (known ones and maybe ones)."""
    known: set[int] = field(default_factory=set)
    """The watched processes known to be the hook's (ours to signal and reap)."""
    blind: bool = False
    """Not watched (no pidfd): alive while its group exists (or, on Linux, while it has remnants)."""
    gone: asyncio.Future[None] | None = None
    """Set when no known process is left (made while the session end waits for it)."""
    signalled: signal.Signals | None = None
    """The signal it is being ended with: sent to each process found from then on too."""


class KeptProcesses:
    """The processes command hooks of one session left running after they answered (see the module).

    ``limit``: at most this many hooks' leftovers at once (the oldest are ended beyond it; at least 1).
    ``kill_grace``: seconds between SIGTERM and SIGKILL when they are ended.
    """

    def __init__(self, *, limit: int = DEFAULT_LIMIT, kill_grace: float = 2.0) -> None:
        self.limit = max(1, limit)
        self.kill_grace = kill_grace
        self._kept: dict[int, _Kept] = {}  # by group id, oldest first
        self._ending: set[asyncio.Task[None]] = set()  # ending the oldest, beyond the limit
        self._leaving: set[_Kept] = set()  # being ended (until their end is over)
        self._idle: asyncio.Future[None] | None = None
        self._killed: dict[int, int] = {}  # SIGKILLed without waiting, to reap: pid → start (clock ticks)
        _ALL.add(self)

    def __len__(self) -> int:
        """How many hooks' leftovers are kept right now."""
        return len(self._kept)

    @property
    def pids(self) -> frozenset[int]:
        """The kept processes being watched that are known to be the hooks' (for diagnostics and tests)."""
        return frozenset(pid for kept in self._kept.values() for pid in kept.known)

    @property
    def descriptors(self) -> int:
        """How many pidfds are open to watch them."""
        return sum(len(kept.watched) for kept in self._kept.values())

    # -- keeping --------------------------------------------------------------------------------------------

    def keep(self, pgid: int, name: str) -> bool:
        """Take over what the hook led by ``pgid`` left running: its leader has exited and been reaped, and the
        runner closed its ends of the pipes. Returns whether anything was left (usually not: then nothing is
        kept). Never raises for the hook's processes; call it in the event loop the session ends in."""
        record = _reaper.detach(pgid)
        if record is None:
            return False
        kept = _Kept(pgid, record[0], record[1], name, asyncio.get_running_loop())
        if self._killed:
            _reaper.reap_killed(self._killed)
        try:
            self._look_at_blind()
            if _watchable():
                self._rescan(kept)
                alive = bool(kept.watched) or kept.blind
            else:
                kept.blind = True
                alive = self._blind_alive(kept)
        except BaseException:
            self._kill(kept)
            raise
        if not alive:
            return False
        self._kept[pgid] = kept
        while len(self._kept) > self.limit:
            oldest = self._kept.pop(next(iter(self._kept)))
            self._leaving.add(oldest)
            task = kept.loop.create_task(self._end(oldest, grace=True))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)
        return True

    def _rescan(self, kept: _Kept) -> None:
        """Watch what of ``kept`` runs now (a dying process hands its children to us: they are found here)."""
        found, maybe = _reaper.remnants(kept.pgid, kept.token, kept.since)
        if kept.signalled is not None:  # being ended: what a dying process handed to us is told too
            for pid in found:
                if pid not in kept.known:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, kept.signalled)
        kept.known.update(found)
        for pid in (*found, *maybe):
            if pid in kept.watched:
                continue
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue  # gone already: reaped at the next look if it is ours
            except OSError:  # out of descriptors: watch this hook no longer, end it with the session
                kept.blind = True
                continue
            kept.watched[pid] = pidfd
            kept.loop.add_reader(pidfd, self._exited, kept, pid)
        if not any(pid in kept.known for pid in kept.watched) and kept.gone is not None and not kept.gone.done():
            kept.gone.set_result(None)

    def _exited(self, kept: _Kept, pid: int) -> None:
        """A watched process exited: reap it if it is ours, look for what it left, forget the hook once it is all
        gone."""
        self._unwatch(kept, pid)
        if pid in kept.known:
            kept.known.discard(pid)
            if _reaper.is_subreaper():
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)  # our child (orphans come to the subreaper): reaped now
        self._rescan(kept)
        if not kept.watched and not kept.blind and self._kept.get(kept.pgid) is kept:
            del self._kept[kept.pgid]
        self._check_idle()

    def _unwatch(self, kept: _Kept, pid: int) -> None:
        pidfd = kept.watched.pop(pid, None)
        if pidfd is not None:
            with contextlib.suppress(Exception):  # the loop may be closed (a hook kept by an earlier loop)
                kept.loop.remove_reader(pidfd)
            os.close(pidfd)

    def _blind_alive(self, kept: _Kept) -> bool:
        if _LINUX:
            found, _ = _reaper.remnants(kept.pgid, kept.token, kept.since)
            kept.known = set(found)
            return bool(found)
        return _reaper.group_exists(kept.pgid)

    def _look_at_blind(self) -> None:
        """Forget the unwatched hooks whose processes are all gone."""
        for pgid, kept in list(self._kept.items()):
            if kept.blind and not kept.watched and not self._blind_alive(kept):
                del self._kept[pgid]
        self._check_idle()

    def _check_idle(self) -> None:
        """Wake the session end waiting for the kept processes once none known to be a hook's is left."""
        idle = self._idle
        if idle is not None and not idle.done() and not self._busy():
            idle.set_result(None)

    # -- ending -----------------------------------------------------------------------------------------------

    async def release(self, deadline: float | None = None) -> None:
        """The session ends: wait until ``deadline`` (event-loop time; ``None``: not at all) for the kept
        processes to exit on their own, then end the rest — SIGTERM, up to ``kill_grace`` seconds, SIGKILL to
        what is left, to its group and to everything carrying its hook's token — and reap them. Returns once
        they are gone (bounded). Cancelled, it SIGKILLs what is left before letting the cancellation through."""
        loop = asyncio.get_running_loop()
        try:
            if deadline is not None:
                await self._wait_idle(loop, deadline)
            self._leaving.update(self._kept.values())
            ending, self._kept = list(self._kept.values()), {}
            await asyncio.gather(*(self._end(kept, grace=True) for kept in ending))
            if self._ending:
                await asyncio.gather(*self._ending, return_exceptions=True)
        except asyncio.CancelledError:
            self.kill_now()
            raise
        if self._killed:
            _reaper.reap_killed(self._killed)

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109 -- the answer says if it expired
        """Wait up to ``timeout`` seconds (``None``: as long as it takes) for every kept process to exit on its
        own, without ending any; True once none is left."""
        loop = asyncio.get_running_loop()
        await self._wait_idle(loop, math.inf if timeout is None else loop.time() + timeout)
        return not self._busy()

    def _busy(self) -> bool:
        return any(kept.known or kept.blind for kept in self._kept.values())

    async def _wait_idle(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        while self._busy() and (left := deadline - loop.time()) > 0:
            if any(kept.blind for kept in self._kept.values()):
                await asyncio.sleep(min(_POLL, left))  # nothing tells us when an unwatched group is gone
                self._look_at_blind()
                continue
            self._idle = loop.create_future()
            try:
                await asyncio.wait([self._idle], timeout=None if math.isinf(left) else left)
            finally:
                self._idle = None

    async def _end(self, kept: _Kept, *, grace: bool) -> None:
        """SIGTERM what ``kept`` has running, give it ``kill_grace`` seconds, then SIGKILL and reap the rest.
        Cancelled, it SIGKILLs the rest at once."""
        try:
            await self._ending_of(kept, grace=grace)
        except BaseException:
            self._kill(kept)
            raise
        finally:
            self._leaving.discard(kept)

    async def _ending_of(self, kept: _Kept, *, grace: bool) -> None:
        loop = asyncio.get_running_loop()
        same_loop = kept.loop is loop
        if same_loop and not kept.blind:
            self._rescan(kept)
        elif kept.blind and _LINUX:
            self._blind_alive(kept)
        if grace and self.kill_grace > 0 and (kept.known or kept.blind):
            self._signal(kept, signal.SIGTERM)
            if same_loop and not kept.blind:
                if kept.known:
                    kept.gone = loop.create_future()
                    await asyncio.wait([kept.gone], timeout=self.kill_grace)
            else:
                end = loop.time() + self.kill_grace
                while self._blind_alive(kept) and loop.time() < end:  # noqa: ASYNC110 -- nothing to wait on
                    await asyncio.sleep(_POLL)
        alive = sorted(kept.known)
        for pid in list(kept.watched):
            self._unwatch(kept, pid)
        kept.known.clear()
        if _LINUX:
            await _reaper.release_kept(kept.pgid, kept.token, kept.since, alive)
        elif _reaper.group_exists(kept.pgid):
            _signal_group(kept.pgid, signal.SIGKILL)

    def _signal(self, kept: _Kept, sig: signal.Signals) -> None:
        kept.signalled = sig
        if kept.blind and not _LINUX:
            if _reaper.group_exists(kept.pgid):
                _signal_group(kept.pgid, sig)
            return
        in_group = False
        for pid in kept.known:
            pidfd = kept.watched.get(pid)
            try:
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, sig)
                else:
                    os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                continue
            in_group = in_group or _pgid_of(pid) == kept.pgid
        if in_group:  # a live member holds the group's number: it is still the hook's group
            _signal_group(kept.pgid, sig)

    def kill_now(self) -> None:
        """SIGKILL every kept process now — with what runs below it, its group and whatever carries its hook's
        token — without waiting (a cancelled session end, the interpreter's exit). Their zombies are reaped at the
        next :meth:`keep` or :meth:`release`, or go with this process."""
        ending, self._kept = [*self._kept.values(), *self._leaving], {}
        self._leaving.clear()  # an end not started yet (cancelled with the release) would never kill them
        for kept in ending:
            self._kill(kept)
        self._check_idle()

    def _kill(self, kept: _Kept) -> None:
        for pid in list(kept.watched):
            self._unwatch(kept, pid)
        with contextlib.suppress(OSError):
            if _LINUX:
                found, _ = _reaper.remnants(kept.pgid, kept.token, kept.since)
                alive = sorted({*kept.known, *found})
                self._killed.update(_reaper.kill_kept(kept.pgid, kept.token, kept.since, alive))
            elif _reaper.group_exists(kept.pgid):
                _signal_group(kept.pgid, signal.SIGKILL)
        kept.known.clear()


def _watchable() -> bool:
    from hookloop import _spawn

    return _LINUX and _spawn._pidfd_works()


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_ALL: weakref.WeakSet[KeptProcesses] = weakref.WeakSet()


@atexit.register
def _at_exit() -> None:
    for keeper in list(_ALL):
        keeper.kill_now()
