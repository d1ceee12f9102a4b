"""hookloop's own handler types: ``process`` (a hook process that stays running, JSON lines) and ``python``
(a typed in-process hook named in settings). Real processes throughout."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from hookloop import Cancelled, Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.model import ConfiguredHook, HookSource, ProcessHandler
from hookloop.command_hooks.processes import HookProcess
from hookloop.timeline import HookStarted, TimelineEvent

pytestmark = pytest.mark.anyio

SERVER = """
import asyncio, os, sys
from hookloop.hookserver import deny, serve

starts, fifo = sys.argv[1], sys.argv[2]
with open(starts, "a") as f:
    f.write(f"{os.getpid()}\\n")

async def handle(event, data):
    command = data.get("tool_input", {}).get("command", "")
    if "crash" in command:
        os._exit(3)
    if "hang" in command:
        with open(fifo, "w") as f:
            f.write("waiting")
        await asyncio.sleep(3600)
    if "chatty" in command:
        print("a note from the hook process", file=sys.stderr, flush=True)
    if "rm -rf" in command:
        return deny("no rm -rf here")
    return None

serve(handle)
"""


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.project.mkdir()
        self.starts = root / "starts.txt"
        self.fifo = root / "fifo"
        os.mkfifo(self.fifo)
        self.server = root / "server.py"
        self.server.write_text(SERVER)
        self.ran: list[str] = []

    def settings(self, handler: dict[str, Any], *, where: str = ".hookloop/settings.json") -> None:
        path = self.project / where
        path.parent.mkdir(parents=True, exist_ok=True)
        hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}
        path.write_text(json.dumps({"hooks": hooks}))

    def process_handler(self, **fields: Any) -> dict[str, Any]:
        args = [str(self.server), str(self.starts), str(self.fifo)]
        return {"type": "process", "command": sys.executable, "args": args, **fields}

    def load(self) -> CommandHooks:
        return CommandHooks.load(
            self.project, home=self.root / "home", hookloop_home=self.root / "hl", trust_project=True
        )

    def worker(self, *commands: str) -> Worker:
        @tool(name="Bash")
        async def bash(command: str) -> str:
            """Run a command."""
            self.ran.append(command)
            return f"ran {command}"

        turns: list[Any] = [[ToolUse("Bash", {"command": c})] for c in commands]
        worker = Worker(ScriptedClient([*turns, [Text("done")]]), tools=[bash])
        self.load().install(worker)
        return worker

    def pids(self) -> list[int]:
        return [int(x) for x in self.starts.read_text().split()] if self.starts.exists() else []


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def results(worker: Worker) -> list[str]:
    return [i.content for i in worker.history if isinstance(i, ToolResult)]


async def test_one_process_answers_every_firing_of_a_run_and_is_gone_at_its_end(proj: Project) -> None:
    proj.settings(proj.process_handler())
    worker = proj.worker("ls", "rm -rf /", "pwd")
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert proj.ran == ["ls", "pwd"]
    assert "no rm -rf here" in results(worker)[1]
    pids = proj.pids()
    assert len(pids) == 1  # started once, lazily, for three firings
    assert not alive(pids[0])  # killed with its group at the run's end


async def test_a_crash_is_a_hook_error_for_that_firing_and_the_next_firing_restarts_it(proj: Project) -> None:
    proj.settings(proj.process_handler())
    worker = proj.worker("crash now", "ls")
    await worker.run("go")
    assert proj.ran == ["crash now", "ls"]  # fail-open, as a crashed command hook
    assert len(proj.pids()) == 2


async def test_fail_closed_blocks_the_call_whose_firing_crashed(proj: Project) -> None:
    proj.settings(proj.process_handler(failClosed=True))
    worker = proj.worker("crash now", "ls")
    await worker.run("go")
    assert proj.ran == ["ls"]
    assert "exited with status 3 before answering" in results(worker)[0]


async def test_a_hung_answer_times_out_that_firing_only(proj: Project) -> None:
    proj.settings(proj.process_handler(timeout=1))

    async def drain_fifo() -> None:
        await asyncio.to_thread(proj.fifo.read_text)

    reader = asyncio.create_task(drain_fifo())
    worker = proj.worker("hang here", "ls")
    await worker.run("go")
    await reader
    assert proj.ran == ["hang here", "ls"]  # the timeout is a non-blocking hook error
    assert len(proj.pids()) == 1  # the same process answered the next firing


async def test_cancelling_the_run_kills_the_process_waiting_on_an_answer(proj: Project) -> None:
    proj.settings(proj.process_handler())
    worker = proj.worker("hang here")
    started: list[TimelineEvent] = []
    worker.subscribe(lambda e: started.append(e) if isinstance(e, HookStarted) else None)
    task = asyncio.create_task(worker.run("go"))
    await asyncio.to_thread(proj.fifo.read_text)  # the process has the request and is not answering
    worker.cancel()
    with pytest.raises(Cancelled):
        await task
    pids = proj.pids()
    assert len(pids) == 1
    assert not alive(pids[0])
    assert proj.ran == []


async def test_stderr_of_the_process_is_logged(proj: Project, caplog: pytest.LogCaptureFixture) -> None:
    proj.settings(proj.process_handler())
    worker = proj.worker("chatty ls")
    with caplog.at_level(logging.INFO, logger="hookloop.command_hooks.processes"):
        await worker.run("go")
    assert any("a note from the hook process" in r.getMessage() for r in caplog.records)


async def test_requests_are_pipelined_and_answers_may_come_out_of_order(tmp_path: Path) -> None:
    server = tmp_path / "reverse.py"
    server.write_text(
        "import asyncio\n"
        "from hookloop.hookserver import serve\n"
        "second = None\n"
        "async def handle(event, data):\n"
        "    global second\n"
        "    if second is None:\n"
        "        second = asyncio.Event()\n"
        "    if data['n'] == 1:\n"
        "        await second.wait()\n"
        "    else:\n"
        "        second.set()\n"
        "    return {'n': data['n']}\n"
        "serve(handle)\n"
    )
    hook = ConfiguredHook(
        event="PreToolUse",
        matcher=None,
        handler=ProcessHandler(command=sys.executable),
        source=HookSource(kind="hookloop-project", path=str(tmp_path / "s.json")),
    )
    process = HookProcess(
        hook.name, [sys.executable, str(server)], cwd=str(tmp_path), env=None, output_cap=1 << 20, kill_grace=1.0
    )
    try:
        one = asyncio.create_task(process.request("PreToolUse", b'{"n": 1}', timeout=30))
        two = asyncio.create_task(process.request("PreToolUse", b'{"n": 2}', timeout=30))
        first, second = await asyncio.gather(one, two)
        assert json.loads(first.stdout) == {"n": 1}
        assert json.loads(second.stdout) == {"n": 2}
        assert first.exit_code == 0
        assert process.starts == 1
    finally:
        await process.close()
    assert process.pid is None


async def test_process_and_python_handlers_are_refused_in_claude_code_settings(proj: Project) -> None:
    proj.settings(proj.process_handler(), where=".claude/settings.json")
    hooks = proj.load()
    assert hooks.hooks == ()
    assert any("hookloop's own" in d.message for d in hooks.diagnostics)
    worker = proj.worker("rm -rf /")
    await worker.run("go")
    assert proj.ran == ["rm -rf /"]  # nothing ran the refused hook
    assert proj.pids() == []


GUARD_MODULE = """
from hookloop.hooks import Continue, Deny

def guard(info):
    if "rm -rf" in str(info.arguments.get("command", "")):
        return Deny("python guard: no rm -rf")
    return Continue()
"""


async def test_a_python_handler_is_a_typed_hook_limited_to_its_matcher(
    proj: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = proj.root / "pyhooks"
    package.mkdir()
    (package / "hl_guard_mod.py").write_text(GUARD_MODULE)
    monkeypatch.syspath_prepend(str(package))
    proj.settings({"type": "python", "callable": "hl_guard_mod:guard"})
    worker = proj.worker("ls", "rm -rf /")
    await worker.run("go")
    assert proj.ran == ["ls"]
    assert "python guard: no rm -rf" in results(worker)[1]


async def test_a_python_handler_that_cannot_be_imported_denies_when_fail_closed(proj: Project) -> None:
    proj.settings({"type": "python", "callable": "no_such_module_hl:guard", "failClosed": True})
    worker = proj.worker("ls")
    await worker.run("go")
    assert proj.ran == []
    assert "could not be loaded" in results(worker)[0]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hookserver"


@pytest.mark.parametrize("server", ["guard.js", "guard.py"])
async def test_the_example_hook_servers_guard_a_real_run(proj: Project, server: str) -> None:
    own = proj.project / ".hookloop"
    own.mkdir()
    (own / server).write_text((EXAMPLES / server).read_text())
    settings = json.loads((EXAMPLES / "settings.json").read_text())
    if server == "guard.py":
        handler = settings["hooks"]["PreToolUse"][0]["hooks"][0]
        handler.update(command=sys.executable, args=["${CLAUDE_PROJECT_DIR}/.hookloop/guard.py"])
    (own / "settings.json").write_text(json.dumps(settings))
    worker = proj.worker("ls -la", "rm -rf build", "rm -fr /")
    await worker.run("go")
    assert proj.ran == ["ls -la"]
    refused = results(worker)[1:]
    assert all("refuses rm -rf" in text for text in refused)
