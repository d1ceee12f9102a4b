"""Hook processes under load of firings: many on one event (their requests go out together and their answers are
awaited together), timeouts and cancellation there, what a process that misbehaves gets, and the state the
runner remembers per hook (the process's environment is computed when it starts). Real processes throughout."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from hookloop.command_hooks.model import ConfiguredHook, HookSource, ProcessHandler
from hookloop.command_hooks.processes import ProcessPool
from hookloop.command_hooks.runner import RunnerOptions, run_all

from .conftest import command_hook

pytestmark = pytest.mark.anyio

SERVER = """
import asyncio, json, os, sys
from hookloop.hookserver import serve

name, fifo = sys.argv[1], sys.argv[2] + "." + sys.argv[1]

async def handle(event, data):
    command = data["tool_input"]["command"]
    if command == "hang " + name or command == "hang all":
        with open(fifo, "w") as f:  # waits for the test to read it: then the request is here, unanswered
            f.write(name)
        await asyncio.sleep(3600)
    if command == "crash " + name:
        os._exit(3)
    if command == "close stdout " + name:
        os.close(1)
        await asyncio.sleep(3600)
    return {"name": name, "pid": os.getpid(), "env": os.environ.get("HOOKLOOP_TEST_SETTING"),
            "input": data["tool_input"]}

serve(handle)
"""


class Servers:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.project.mkdir()
        self.script = root / "server.py"
        self.script.write_text(SERVER)
        self.fifo = root / "fifo"
        self.pool = ProcessPool(output_cap=1 << 20, kill_grace=0.5)
        self.options = RunnerOptions(processes=self.pool, kill_grace=0.5)

    def hook(self, name: str, *, timeout: float | None = None) -> ConfiguredHook:
        os.mkfifo(f"{self.fifo}.{name}")
        handler = ProcessHandler(command=sys.executable, args=(str(self.script), name, str(self.fifo)), timeout=timeout)
        source = HookSource(kind="hookloop-project", path=str(self.project / ".hookloop/settings.json"))
        return ConfiguredHook(event="PreToolUse", matcher=None, handler=handler, source=source, json_path=name)

    async def fire(self, hooks: list[ConfiguredHook], command: str, options: RunnerOptions | None = None) -> list:  # type: ignore[type-arg]
        payload = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command}}  # fmt: skip
        outcomes = await run_all(hooks, payload, project_dir=self.project, options=options or self.options)
        return list(outcomes)


@pytest.fixture
async def servers(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Servers(tmp_path)
    yield s
    await s.pool.close()


def answer(outcome: object) -> dict[str, object]:
    data = json.loads(outcome.stdout)  # type: ignore[attr-defined]
    assert isinstance(data, dict)
    return data


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_twenty_processes_and_a_command_hook_on_one_event_answer_in_configuration_order(
    servers: Servers,
) -> None:
    hooks = [servers.hook(f"p{n}") for n in range(20)]
    mixed = [*hooks[:10], command_hook("echo from-a-command"), *hooks[10:]]
    first = await servers.fire(mixed, "ls")
    second = await servers.fire(mixed, "pwd")  # the processes run now: their requests go out together
    for outcomes, command in ((first, "ls"), (second, "pwd")):
        assert all(o.ok and o.exit_code == 0 for o in outcomes), outcomes
        assert outcomes[10].stdout == b"from-a-command\n"
        names = [answer(o)["name"] for i, o in enumerate(outcomes) if i != 10]
        assert names == [f"p{n}" for n in range(20)]
        assert all(answer(o)["input"] == {"command": command} for i, o in enumerate(outcomes) if i != 10)
    pids = [answer(o)["pid"] for i, o in enumerate(first) if i != 10]
    assert [answer(o)["pid"] for i, o in enumerate(second) if i != 10] == pids
    assert len(set(pids)) == 20
    assert all(o.pid == answer(o)["pid"] for i, o in enumerate(second) if i != 10)
    assert all(p.starts == 1 for p in servers.pool.processes.values())


async def test_a_hung_process_among_many_times_out_alone_and_keeps_running(servers: Servers) -> None:
    hooks = [servers.hook("slow", timeout=1), servers.hook("quick")]
    await servers.fire(hooks, "ls")  # both started
    reader = asyncio.create_task(asyncio.to_thread(Path(f"{servers.fifo}.slow").read_text))
    slow, quick = await servers.fire(hooks, "hang slow")
    assert await reader == "slow"
    assert slow.error_kind == "timeout"
    assert slow.timed_out
    assert "did not answer within 1 seconds" in (slow.error or "")
    assert quick.ok
    assert answer(quick)["name"] == "quick"
    again = await servers.fire(hooks, "ls")
    assert [answer(o)["name"] for o in again] == ["slow", "quick"]
    assert all(p.starts == 1 for p in servers.pool.processes.values())  # the hung one was not restarted


async def test_cancelling_a_firing_of_many_processes_kills_the_ones_that_had_not_answered(servers: Servers) -> None:
    hooks = [servers.hook("a"), servers.hook("b")]
    started = await servers.fire(hooks, "ls")
    pids = [int(answer(o)["pid"]) for o in started]  # type: ignore[call-overload]
    firing = asyncio.create_task(servers.fire(hooks, "hang all"))
    for name in ("a", "b"):  # each has its request and is not answering
        assert await asyncio.to_thread(Path(f"{servers.fifo}.{name}").read_text) == name
    firing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await firing
    assert not any(alive(pid) for pid in pids)
    assert all(p.pid is None for p in servers.pool.processes.values())


async def test_a_crash_among_many_is_that_hooks_error_and_the_next_firing_restarts_it(servers: Servers) -> None:
    hooks = [servers.hook("a"), servers.hook("b")]
    await servers.fire(hooks, "ls")
    a, b = await servers.fire(hooks, "crash a")
    assert a.error_kind == "crashed"
    assert "exited with status 3 before answering" in (a.error or "")
    assert b.ok
    again = await servers.fire(hooks, "ls")
    assert all(o.ok for o in again)
    starts = {p.argv[2]: p.starts for p in servers.pool.processes.values()}
    assert starts == {"a": 2, "b": 1}


async def test_a_process_that_closes_its_stdout_is_stopped_and_started_again(servers: Servers) -> None:
    hook = servers.hook("a")
    [first] = await servers.fire([hook], "ls")
    pid = int(answer(first)["pid"])  # type: ignore[call-overload]
    [closed] = await servers.fire([hook], "close stdout a")
    assert closed.error_kind == "crashed"
    assert not alive(pid)  # it could no longer answer: stopped, not left running
    [again] = await servers.fire([hook], "ls")
    assert again.ok
    assert answer(again)["pid"] != pid


async def test_a_last_answer_without_its_line_end_still_answers(tmp_path: Path) -> None:
    script = tmp_path / "once.py"
    script.write_text(
        "import json, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "sys.stdout.write(json.dumps({'id': request['id'], 'stdout': 'bye'}))\n"  # no newline, then exit
    )
    pool = ProcessPool(output_cap=1 << 20, kill_grace=0.5)
    handler = ProcessHandler(command=sys.executable, args=(str(script),))
    hook = ConfiguredHook(
        event="PreToolUse", matcher=None, handler=handler, source=HookSource(kind="hookloop-user", path="/s")
    )
    try:
        [outcome] = await run_all(
            [hook], {"tool_input": {}}, project_dir=tmp_path, options=RunnerOptions(processes=pool)
        )
    finally:
        await pool.close()
    assert outcome.ok
    assert outcome.stdout == b"bye"


async def test_an_answer_read_after_the_exit_was_seen_still_answers(tmp_path: Path) -> None:
    """The event loop can see the process exit before it reads the answer the process wrote last (the exit and
    the pipe are watched apart): the answer still in the pipe must be read, not reported as "exited before
    answering". Each round is a race; before the fix about one in five rounds lost its answer."""
    script = tmp_path / "once.py"
    script.write_text(
        "import json, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "sys.stdout.write(json.dumps({'id': request['id'], 'stdout': 'bye'}))\n"
    )
    handler = ProcessHandler(command=sys.executable, args=(str(script),))
    hook = ConfiguredHook(
        event="PreToolUse", matcher=None, handler=handler, source=HookSource(kind="hookloop-user", path="/s")
    )
    lost = []
    for _ in range(30):
        pool = ProcessPool(output_cap=1 << 20, kill_grace=0.5)
        try:
            [outcome] = await run_all(
                [hook], {"tool_input": {}}, project_dir=tmp_path, options=RunnerOptions(processes=pool)
            )
        finally:
            await pool.close()
        if not (outcome.ok and outcome.stdout == b"bye"):
            lost.append(outcome.error)
    assert lost == []


async def test_a_process_that_exits_leaving_a_child_on_its_stdout_fails_its_firing_without_waiting(
    tmp_path: Path,
) -> None:
    """Reading on after the exit (above) must not make a firing wait for its timeout when a child the process
    left behind keeps stdout open: the firing fails as a crash once the grace is over."""
    handler = ProcessHandler(command="read line; sleep 60 &", timeout=30)
    hook = ConfiguredHook(
        event="PreToolUse", matcher=None, handler=handler, source=HookSource(kind="hookloop-user", path="/s")
    )
    pool = ProcessPool(output_cap=1 << 20, kill_grace=0.2)
    try:
        [outcome] = await run_all(
            [hook], {"tool_input": {}}, project_dir=tmp_path, options=RunnerOptions(processes=pool)
        )
    finally:
        await pool.close()
    assert outcome.error_kind == "crashed"
    assert not outcome.timed_out
    assert "before answering" in (outcome.error or "")


async def test_a_restarted_process_gets_the_environment_of_its_restart(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = servers.hook("a")
    monkeypatch.setenv("HOOKLOOP_TEST_SETTING", "first")
    [one] = await servers.fire([hook], "ls")
    assert answer(one)["env"] == "first"
    monkeypatch.setenv("HOOKLOOP_TEST_SETTING", "second")
    [same] = await servers.fire([hook], "ls")
    assert answer(same)["env"] == "first"  # a running process keeps the environment it started with
    await servers.fire([hook], "crash a")
    [restarted] = await servers.fire([hook], "ls")
    assert answer(restarted)["env"] == "second"


async def test_new_options_with_a_changed_setting_are_not_answered_from_the_memo(servers: Servers) -> None:
    hook = servers.hook("a")
    [one] = await servers.fire([hook], "ls")
    assert answer(one)["env"] is None
    pool = ProcessPool(output_cap=1 << 20, kill_grace=0.5)
    changed = RunnerOptions(processes=pool, settings_env=(("HOOKLOOP_TEST_SETTING", "from settings"),))
    try:
        [two] = await servers.fire([hook], "ls", changed)
        assert answer(two)["env"] == "from settings"
        assert answer(two)["pid"] != answer(one)["pid"]
        [three] = await servers.fire([hook], "ls")  # the first options still reach their own process
        assert answer(three)["pid"] == answer(one)["pid"]
    finally:
        await pool.close()


async def test_secrets_stay_out_of_a_process_started_from_the_memo(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = servers.hook("a")
    await servers.fire([hook], "ls")
    monkeypatch.setenv("HOOKLOOP_TEST_SETTING", "sk-" + "a" * 40)  # a value that looks like a credential
    await servers.fire([hook], "crash a")
    [restarted] = await servers.fire([hook], "ls")
    assert answer(restarted)["env"] is None


ECHO_SERVER = """
from hookloop.hookserver import serve

async def handle(event, data):
    return {"event": event, "n": data["n"]}

serve(handle)
"""


async def test_an_async_hookserver_answers_every_line_of_a_pipe_the_last_without_its_line_end(tmp_path: Path) -> None:
    script = tmp_path / "echo.py"
    script.write_text(ECHO_SERVER)
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    requests = b"".join(b'{"id":"%d","event":"E","input":{"n":%d}}\n' % (n, n) for n in range(50))
    out, _ = await process.communicate(requests + b'{"id":"last","event":"F","input":{"n":-1}}')
    answers = {a["id"]: a["stdout"] for a in map(json.loads, out.splitlines())}
    assert answers == {**{str(n): {"event": "E", "n": n} for n in range(50)}, "last": {"event": "F", "n": -1}}
    assert process.returncode == 0


async def test_an_async_hookserver_reads_a_memory_stream_too() -> None:
    import io

    from hookloop.hookserver import serve

    async def handle(event: str, data: dict[str, object]) -> dict[str, object]:
        return {"n": data["n"]}

    out = io.BytesIO()
    requests = io.BytesIO(b'{"id":"1","event":"E","input":{"n":1}}\n{"id":"2","event":"E","input":{"n":2}}\n')
    await asyncio.to_thread(serve, handle, stdin=requests, stdout=out)
    answers = sorted((a["id"], a["stdout"]) for a in map(json.loads, out.getvalue().splitlines()))
    assert answers == [("1", {"n": 1}), ("2", {"n": 2})]
