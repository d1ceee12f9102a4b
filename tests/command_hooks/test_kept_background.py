"""What a command hook leaves running after it answered is kept until the session ends (Claude Code and Cline
let a hook's ``afplay … &`` / ``nohup … &`` / ``(sleep 2; curl …) &`` finish), then ended; a timeout or a
cancellation still kills everything at once (:mod:`hookloop.command_hooks.kept`).

Real shells and real background processes. No sleeps: background children block on a FIFO the test holds open
for reading and writing (so a child's open never blocks, and a line written before the child reads is kept),
and the test waits for a process to exit through a pidfd, with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hookloop import Finished, ScriptedClient, Text, ToolUse, Worker, _reaper, _spawn, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.config import parse_settings
from hookloop.command_hooks.kept import KeptProcesses
from hookloop.command_hooks.model import CommandHandler, HookOutcome, HookSource
from hookloop.command_hooks.runner import OnLine, RunnerOptions, run_hook, run_process
from hookloop.timeline import HookDecision, HookOutputLine, TimelineEvent

from .conftest import command_hook
from .test_worker_command_hooks import Env, env, group, worker_for

__all__ = ["env"]  # the fixture, imported for these tests

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, pidfds and the subreaper"),
]

OPTIONS = RunnerOptions(kill_grace=0.2, drain_window=0.2)
PAYLOAD = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
DEADLINE = 20.0  # seconds a test waits for an event before failing (never reached when all is well)


def state(pid: int) -> str | None:
    """The process state letter; None once the pid is gone from /proc (dead *and* reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
    except (FileNotFoundError, ProcessLookupError):
        return None


async def run(
    command: str,
    keeper: KeptProcesses,
    *,
    timeout: float = 60,  # noqa: ASYNC109 -- the hook's own timeout
    on_line: OnLine | None = None,
    shell: str = "/bin/sh",
) -> HookOutcome:
    """``command`` through a shell, its leftovers handed to ``keeper``, with short kill and drain windows."""
    return await run_process(
        [shell, "-c", command], timeout=timeout, kill_grace=0.2, drain_window=0.2, on_line=on_line, keep=keeper
    )


def running(pid: int) -> bool:
    return state(pid) not in (None, "Z", "X")


async def exited(pid: int) -> None:
    """Wait (up to DEADLINE) until ``pid`` has exited, through a pidfd."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    loop.add_reader(pidfd, lambda: done.done() or done.set_result(None))
    try:
        await asyncio.wait_for(done, DEADLINE)
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


async def reaped(pid: int) -> bool:
    """``pid`` exited and the keeper reaped it (its pidfd callback runs in the loop iteration that saw the exit,
    or the next one)."""
    await exited(pid)
    for _ in range(100):
        if state(pid) is None:
            return True
        await asyncio.sleep(0)
    return False


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A FIFO and our descriptor on it, open for reading and writing: children reading it never block on
    open, and what we write waits in it until they read."""
    path = tmp_path / "gate"
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR)
    yield path, fd
    os.close(fd)


def pids(text: str) -> dict[str, int]:
    """``role pid`` lines of a hook's stdout."""
    return {role: int(pid) for role, pid in (line.split() for line in text.splitlines() if line.strip())}


def our_zombies() -> set[int]:
    me = os.getpid()
    found = set()
    for task in os.listdir(f"/proc/{me}/task"):
        for child in Path(f"/proc/{me}/task/{task}/children").read_text().split():
            if state(int(child)) == "Z":
                found.add(int(child))
    return found


# --------------------------------------------------------------------------------------------------------------
# The runner with a keeper
# --------------------------------------------------------------------------------------------------------------


async def test_a_child_that_holds_stdout_does_not_delay_the_answer_and_is_kept(tmp_path: Path) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    command = 'sleep 1000 & echo "child $!"; echo \'{"ok": 1}\''  # the sleep inherits stdout and keeps it open
    outcome = await run(command, keeper)
    assert outcome.ok
    assert not outcome.timed_out
    assert outcome.duration < 30  # answered after the drain window, not at the timeout
    child = int(outcome.stdout_text.split()[1])
    assert running(child)
    assert keeper.pids == {child}
    assert len(keeper) == 1
    await keeper.release()
    assert state(child) is None  # killed and reaped
    assert len(keeper) == 0
    assert keeper.descriptors == 0


async def test_a_timeout_kills_the_group_and_its_escapee_at_once(tmp_path: Path) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    command = (
        'sleep 1000 >/dev/null 2>&1 & echo "child $!"\n'
        'setsid sleep 1000 >/dev/null 2>&1 & echo "escapee $!"\n'
        "exec sleep 1000"
    )
    outcome = await run(command, keeper, timeout=0.5, shell="/bin/bash")
    assert outcome.error_kind == "timeout"
    found = pids(outcome.stdout_text)
    assert state(found["child"]) is None
    assert state(found["escapee"]) is None
    assert len(keeper) == 0


async def test_a_cancelled_hook_has_its_background_children_killed(fifo: tuple[Path, int], tmp_path: Path) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    gate, _fd = fifo
    started = asyncio.Event()
    seen: dict[str, int] = {}

    def line(stream: object, text: str) -> None:
        role, pid = text.split()
        seen[role] = int(pid)
        if len(seen) == 2:
            started.set()

    command = f'sleep 1000 >/dev/null 2>&1 & echo "child $!"\necho "leader $$"\nread line < {gate}'
    call = asyncio.ensure_future(run(command, keeper, on_line=line, shell="/bin/bash"))
    await asyncio.wait_for(started.wait(), DEADLINE)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert state(seen["child"]) is None
    assert state(seen["leader"]) is None
    assert len(keeper) == 0


async def test_kept_children_finish_on_their_own_and_nothing_stays_behind(
    fifo: tuple[Path, int], tmp_path: Path
) -> None:
    """Many firings, each leaving a child that finishes after the hook answered: every one is reaped when it
    exits; no process, zombie or descriptor is left, and the keeper is empty."""
    keeper = KeptProcesses(limit=40, kill_grace=0.2)
    gate, fd = fifo
    # one byte each (concurrent line reads of one FIFO would interleave)
    hook = command_hook(f"(dd bs=1 count=1 < {gate}; echo done >> {tmp_path / 'log'}) >/dev/null 2>&1 &")
    options = replace(OPTIONS, kept=keeper)
    zombies = our_zombies()
    descriptors = len(os.listdir("/proc/self/fd"))
    for _ in range(8):
        outcomes = await asyncio.gather(
            *(run_hook(hook, PAYLOAD, project_dir=tmp_path, options=options) for _ in range(30))
        )
        assert all(o.ok for o in outcomes)
        assert len(keeper) == 30  # each one's child waits on the gate
        os.write(fd, b"x" * 30)
        assert await keeper.wait(DEADLINE)
        assert len(keeper) == 0
        assert keeper.descriptors == 0
    assert len((tmp_path / "log").read_text().split()) == 240  # every child did its work
    assert our_zombies() <= zombies
    assert len(os.listdir("/proc/self/fd")) <= descriptors


async def test_a_long_session_of_hooks_that_leave_nothing_does_not_grow(tmp_path: Path) -> None:
    keeper = KeptProcesses()
    options = replace(OPTIONS, kept=keeper)
    hooks = [command_hook("cat >/dev/null; exit 0"), command_hook("( : ) & exit 0")]  # a child gone at once
    state_of = _reaper._state
    await run_hook(hooks[1], PAYLOAD, project_dir=tmp_path, options=options)  # opens what stays open for good
    assert await keeper.wait(DEADLINE)
    before = (len(state_of.leaders), len(state_of.started), len(os.listdir("/proc/self/fd")), our_zombies())
    for _ in range(250):
        outcomes = await asyncio.gather(*(run_hook(h, PAYLOAD, project_dir=tmp_path, options=options) for h in hooks))
        assert all(o.ok for o in outcomes)
    assert await keeper.wait(DEADLINE)
    assert len(keeper) == 0
    assert keeper.descriptors == 0
    after = (len(state_of.leaders), len(state_of.started), len(os.listdir("/proc/self/fd")), our_zombies())
    assert after[:3] <= before[:3]
    assert after[3] <= before[3]


async def test_beyond_the_limit_the_oldest_hooks_leftovers_are_ended(tmp_path: Path) -> None:
    keeper = KeptProcesses(limit=2, kill_grace=0.2)
    children = []
    for _ in range(3):
        outcome = await run('sleep 1000 >/dev/null 2>&1 & echo "child $!"', keeper)
        children.append(pids(outcome.stdout_text)["child"])
    assert await reaped(children[0])  # the oldest: SIGTERM, and reaped
    assert running(children[1])
    assert running(children[2])
    assert keeper.pids == {children[1], children[2]}
    await keeper.release()
    assert state(children[1]) is None
    assert state(children[2]) is None


async def test_a_setsid_escapee_is_kept_then_killed_and_reaped_at_release(tmp_path: Path) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    ready = tmp_path / "ready"
    command = (
        f"(setsid sh -c 'sleep 1000 & echo $! > {ready}') >/dev/null 2>&1\n"  # a double fork: the sleep is orphaned
        f'echo "escapee $(cat {ready})"'
    )
    outcome = await run(command, keeper)
    escapee = pids(outcome.stdout_text)["escapee"]
    assert running(escapee)
    assert os.getpgid(escapee) != outcome.pid  # it left the hook's group
    assert keeper.pids == {escapee}  # the subreaper made it our child, and its token tells it is the hook's
    await keeper.release(asyncio.get_running_loop().time())  # the deadline is now: end it
    assert state(escapee) is None


async def test_release_waits_until_the_deadline_for_kept_processes_to_finish(
    fifo: tuple[Path, int], tmp_path: Path
) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    gate, fd = fifo
    marker = tmp_path / "marker"
    command = f'(read line < {gate}; echo "got $line" > {marker}) >/dev/null 2>&1 & echo "child $!"'
    outcome = await run(command, keeper)
    child = pids(outcome.stdout_text)["child"]
    ending = asyncio.ensure_future(keeper.release(asyncio.get_running_loop().time() + 3600))
    await asyncio.sleep(0)  # the release is waiting for the child
    assert not ending.done()
    os.write(fd, b"late\n")
    await asyncio.wait_for(ending, DEADLINE)  # returns as soon as the child finished: nothing was killed
    assert marker.read_text() == "got late\n"
    assert state(child) is None


LOGGER = """
trap 'echo flushed >> "$LOG"; exit 0' TERM
sh "$CHILD" &
wait
"""
LOGGERS_CHILD = """
trap 'echo child >> "$LOG"; exit 0' TERM
echo $$ > "$READY"
sleep 1000 &
wait
"""


async def test_release_sends_sigterm_first_also_to_what_a_dying_process_hands_over(tmp_path: Path) -> None:
    """A kept logger (an escapee) flushes on SIGTERM; the child it leaves when it exits is found and told
    too, before any SIGKILL (the grace is longer than the test's deadline)."""
    keeper = KeptProcesses(kill_grace=3600)
    (tmp_path / "logger.sh").write_text(LOGGER)
    (tmp_path / "child.sh").write_text(LOGGERS_CHILD)
    log, ready = tmp_path / "log", tmp_path / "ready"
    command = (
        f"export LOG={log} CHILD={tmp_path / 'child.sh'} READY={ready}\n"
        f"setsid sh {tmp_path / 'logger.sh'} >/dev/null 2>&1 &\n"
        'echo "logger $!"\n'
        f'while [ ! -s {ready} ]; do sleep 0.01; done; echo "child $(cat {ready})"'
    )
    found = pids((await run(command, keeper)).stdout_text)
    assert keeper.pids == {found["logger"]}  # the child is the logger's, not ours (yet)
    await asyncio.wait_for(keeper.release(), DEADLINE)
    assert log.read_text().split() == ["flushed", "child"]
    assert state(found["logger"]) is None
    assert state(found["child"]) is None


@pytest.mark.parametrize("turns", [1, 5])
async def test_a_cancelled_release_kills_at_once_and_reaps_later(tmp_path: Path, turns: int) -> None:
    """Cancelled (before its end began, or during the grace of a process that ignores SIGTERM), the release
    SIGKILLs what is kept; the zombie is reaped by the next release."""
    keeper = KeptProcesses(kill_grace=3600)
    outcome = await run("trap '' TERM; sleep 1000 >/dev/null 2>&1 & echo \"child $!\"", keeper)
    child = pids(outcome.stdout_text)["child"]
    ending = asyncio.ensure_future(keeper.release())
    for _ in range(turns):
        await asyncio.sleep(0)  # let the release get this far (no time passes)
    ending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ending
    await exited(child)
    assert len(keeper) == 0
    await keeper.release()
    assert state(child) is None


@pytest.mark.parametrize("how", ["keepBackground false", "keep_background 0", "no keeper"])
async def test_the_strict_behaviour_can_be_chosen(tmp_path: Path, how: str) -> None:
    keeper = KeptProcesses(kill_grace=0.2)
    hook = command_hook('sleep 1000 >/dev/null 2>&1 & echo "child $!"')
    options = replace(OPTIONS, kept=keeper)
    if how == "keepBackground false":
        assert isinstance(hook.handler, CommandHandler)
        hook = replace(hook, handler=replace(hook.handler, keep_background=False))
    elif how == "keep_background 0":
        options = replace(OPTIONS, kept=keeper, keep_background=0)
    else:
        options = OPTIONS
    outcome = await run_hook(hook, PAYLOAD, project_dir=tmp_path, options=options)
    assert state(pids(outcome.stdout_text)["child"]) is None  # killed (and reaped) when the hook exited
    assert len(keeper) == 0


async def test_without_pidfds_the_group_is_kept_unwatched_and_killed_at_release(
    monkeypatch: pytest.MonkeyPatch, fifo: tuple[Path, int], tmp_path: Path
) -> None:
    monkeypatch.setattr(_spawn, "_PIDFD", False)  # asyncio's machinery spawns, and nothing can be watched
    keeper = KeptProcesses(kill_grace=0.2)
    gate, fd = fifo
    outcome = await run(f'sleep 1000 >/dev/null 2>&1 & echo "sleeper $!"; (read x < {gate}) & echo "reader $!"', keeper)
    found = pids(outcome.stdout_text)
    assert running(found["sleeper"])
    assert len(keeper) == 1
    assert keeper.descriptors == 0
    os.write(fd, b"go\n")
    await exited(found["reader"])  # it finished on its own: reaped at the next look
    await keeper.release()
    assert state(found["sleeper"]) is None
    assert state(found["reader"]) is None
    assert len(keeper) == 0


def test_keep_background_is_a_known_field_and_must_be_a_boolean(tmp_path: Path) -> None:
    source = HookSource(kind="hookloop-user", path=str(tmp_path / "settings.json"))
    settings = {"hooks": {"Notification": [{"hooks": [
        {"type": "command", "command": "a", "keepBackground": False},
        {"type": "command", "command": "b"},
        {"type": "command", "command": "c", "keepBackground": "no"},
    ]}]}}  # fmt: skip
    layer = parse_settings(settings, source)
    handlers = [hook.handler for hook in layer.hooks]
    assert [(h.command, h.keep_background) for h in handlers if isinstance(h, CommandHandler)] == [
        ("a", False),
        ("b", True),
    ]
    (problem,) = layer.diagnostics
    assert problem.path.endswith("keepBackground")
    assert problem.severity == "error"


# --------------------------------------------------------------------------------------------------------------
# On a Worker: kept for the session, ended at its end
# --------------------------------------------------------------------------------------------------------------

LEAVES_THREE = """
(read line < "$GATE"; echo "done $line" > "$MARKER") >/dev/null 2>&1 &
echo "finisher $!"
sleep 1000 >/dev/null 2>&1 &
echo "sleeper $!"
setsid sh -c 'echo $$ > "$READY"; exec sleep 1000' >/dev/null 2>&1 &
while [ ! -s "$READY" ]; do sleep 0.01; done  # it has left the group
echo "escapee $(cat "$READY")"
"""


async def test_a_hooks_background_children_outlive_it_and_die_with_the_session(
    env: Env, fifo: tuple[Path, int]
) -> None:
    gate, fd = fifo
    marker = env.root / "marker"
    env.script("notify.sh", f"GATE={gate}\nMARKER={marker}\nexport READY={env.root / 'ready'}\n{LEAVES_THREE}")
    env.settings({"PreToolUse": group(".claude/hooks/notify.sh")})
    seen: dict[str, int] = {}
    during: dict[str, object] = {}

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, HookOutputLine) and event.stream == "stdout":
            role, pid = event.line.split()
            seen[role] = int(pid)

    @tool
    async def probe() -> str:
        """Runs after the PreToolUse hook answered."""
        during["alive"] = {role: running(pid) for role, pid in seen.items()}
        during["pgid"] = os.getpgid(seen["escapee"]) != os.getpgid(seen["sleeper"])
        os.write(fd, b"now\n")
        during["finisher reaped"] = await reaped(seen["finisher"])
        during["marker"] = marker.read_text()
        return "probed"

    worker, _, _ = worker_for(env, [[ToolUse("probe", {})], [Text("done")]], tools=[probe], grace=0.1)
    worker.subscribe(watch)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert during["alive"] == {"finisher": True, "sleeper": True, "escapee": True}  # not killed with the hook
    assert during["pgid"]  # the escapee left the group
    assert during["finisher reaped"]
    assert during["marker"] == "done now\n"
    assert state(seen["sleeper"]) is None  # the session's end killed and reaped the rest
    assert state(seen["escapee"]) is None


async def test_a_session_end_hooks_background_upload_finishes_within_the_grace(
    env: Env, fifo: tuple[Path, int]
) -> None:
    gate, fd = fifo
    marker = env.root / "uploaded"
    body = f'(read line < {gate}; echo "uploaded $line" > {marker}) >/dev/null 2>&1 &\necho "uploader $!"'
    env.script("upload.sh", body)
    env.settings({"SessionEnd": group(".claude/hooks/upload.sh")})
    answered = asyncio.Event()
    seen: dict[str, int] = {}

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, HookOutputLine) and event.stream == "stdout":
            role, pid = event.line.split()
            seen[role] = int(pid)
        if isinstance(event, HookDecision) and event.event == "SessionEnd":
            answered.set()

    worker, _, _ = worker_for(env, [[Text("done")]], grace=3600)  # the grace is a bound, not a wait
    worker.subscribe(watch)
    running_run = asyncio.ensure_future(worker.run("go"))
    await asyncio.wait_for(answered.wait(), DEADLINE)  # the hook answered; its child waits on the gate
    assert running(seen["uploader"])
    assert not running_run.done()
    os.write(fd, b"log\n")
    assert isinstance(await asyncio.wait_for(running_run, DEADLINE), Finished)
    assert marker.read_text() == "uploaded log\n"  # not cut off by the session's end
    assert state(seen["uploader"]) is None


async def test_a_worker_with_keep_background_0_kills_leftovers_with_the_hook(env: Env) -> None:
    env.settings({"PreToolUse": group('sleep 1000 >/dev/null 2>&1 & echo "child $!"')})
    seen: dict[str, int] = {}
    during: dict[str, bool] = {}

    @tool
    async def probe() -> str:
        """Runs after the PreToolUse hook answered."""
        during["alive"] = running(seen["child"])
        return "probed"

    def watch(event: TimelineEvent) -> None:
        if isinstance(event, HookOutputLine) and event.stream == "stdout":
            seen.update(pids(event.line))

    worker = Worker(ScriptedClient([[ToolUse("probe", {})], [Text("done")]]), tools=[probe])
    env.workers.append(worker)
    worker.subscribe(watch)
    hooks = CommandHooks.load(
        env.project,
        home=env.home,
        hookloop_home=env.hookloop_home,
        trust_project=True,
        options=replace(OPTIONS, keep_background=0),
    )
    hooks.install(worker)
    await worker.run("go")
    assert during["alive"] is False
