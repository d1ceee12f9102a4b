"""The application the durable tests run in real worker processes: ``python durable_app.py serve URL EXECUTOR``;
``python durable_app.py execute URL EXECUTOR DIR`` starts one run here (``queue=False``) and executes only it, and
``… orphan URL EXECUTOR DIR`` starts one so and exits before executing it (each prints the run id first).

The Worker factory ``app`` builds, from ``options["dir"]`` (a test's folder):

- a scripted model that answers by the number of model replies already in the history (so a replay that does not
  send a request again still gets the right reply) and logs every request it receives to ``requests.log``;
- a tool ``step(n)`` that logs ``{n, key, pid}`` to ``tools.log`` (``key``: its idempotency key);
- a PreToolUse command hook (a real subprocess) that logs each firing to ``hooks.log``;
- an in-process pre_tool_call hook that asks for approval of ``step(3)`` when ``ask`` is in the options, and that
  denies ``step(1)`` when the file ``flip`` exists (a hook that is not deterministic);
- an on_abort hook that logs to ``aborts.log``.

A file ``block-<what>`` makes the matching effect block forever after writing ``ready`` (JSON: the pid to kill
and what blocked), removing the block file first: the test SIGKILLs the process, and the effect runs normally
when it is performed again.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from hookloop import ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.hooks import AbortInfo, Ask, Continue, Deny, Pause, PreToolCallInfo, PreToolCallResult
from hookloop.items import Message
from hookloop.providers.base import LLMRequest
from hookloop.providers.scripted import ScriptedTurn
from hookloop.tools import ToolContext

HOOK_SCRIPT = """\
import json, os, sys, time
here = sys.argv[1]
data = json.load(sys.stdin)
n = data["tool_input"].get("n")
with open(os.path.join(here, "hooks.log"), "a") as f:
    f.write(json.dumps({"n": n, "pid": os.getpid()}) + "\\n")
block = os.path.join(here, f"block-hook-{n}")
if os.path.exists(block):
    os.remove(block)
    with open(os.path.join(here, "ready.fifo"), "w") as f:
        f.write(json.dumps({"pid": os.getpid(), "what": "hook"}) + "\\n")
    while True:
        time.sleep(3600)
"""

TURNS = [
    [Text("two steps at once"), ToolUse("step", {"n": 1}, call_id="c1"), ToolUse("step", {"n": 2}, call_id="c2")],
    [Text("one more"), ToolUse("step", {"n": 3}, call_id="c3")],
    [Text("all done")],
]

TWICE = [
    *TURNS[:2],
    [Text("four"), ToolUse("step", {"n": 4}, call_id="c4")],
    [Text("three again"), ToolUse("step", {"n": 3}, call_id="c5")],
    [Text("all done")],
]
"""With ``twice``: step(3) asks (c3), step(4) pauses (c4, a hook's Pause), then step(3) asks again (c5)."""


def _log(path: Path, record: Mapping[str, object]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(dict(record)) + "\n")


def _ready(here: Path, what: str) -> None:
    """Tell the test (which reads the FIFO ``ready.fifo``) which process to kill."""
    with (here / "ready.fifo").open("w", encoding="utf-8") as f:
        f.write(json.dumps({"pid": os.getpid(), "what": what}) + "\n")


def _blocked(here: Path, what: str) -> bool:
    block = here / f"block-{what}"
    if not block.exists():
        return False
    block.unlink()
    _ready(here, what)
    return True


async def _recorded(url: str, step: str) -> None:
    """Wait until this workflow has recorded ``step`` (the other call of the batch finished first)."""
    from dbos import DBOS, DBOSClient

    workflow = DBOS.workflow_id
    assert workflow is not None
    client = DBOSClient(system_database_url=url)
    try:
        while True:
            if any(s["function_name"] == step for s in await client.list_workflow_steps_async(workflow)):
                return
            await asyncio.sleep(0.02)  # polls the database: no event tells another step was recorded
    finally:
        client.destroy()


def app(options: Mapping[str, object]) -> Worker:
    here = Path(str(options["dir"]))

    def reply(request: LLMRequest) -> ScriptedTurn:
        index = sum(1 for item in request.items if isinstance(item, Message) and item.role == "assistant")
        _log(here / "requests.log", {"index": index, "pid": os.getpid()})
        if _blocked(here, f"model-{index}"):
            threading.Event().wait()  # the process is killed here
        turns = TWICE if options.get("twice") else TURNS
        return ScriptedTurn(blocks=tuple(turns[min(index, len(turns) - 1)]))

    @tool
    async def step(n: int, ctx: ToolContext) -> str:
        """Do step n."""
        _log(here / "tools.log", {"n": n, "key": ctx.idempotency_key, "pid": os.getpid()})
        if n == 1 and (here / "block-tool-1-after-2").exists():
            await _recorded(str(options["url"]), "tool:1:c2#0")
        if _blocked(here, f"tool-{n}") or _blocked(here, f"tool-{n}-after-2"):
            await asyncio.Event().wait()  # the process is killed here, or the run is cancelled
        return f"step {n} done"

    worker = Worker(ScriptedClient([reply] * 10), tools=[step])

    def guard(info: PreToolCallInfo) -> PreToolCallResult:
        if info.arguments.get("n") == 1 and (here / "flip").exists():
            return Deny("flipped")
        if options.get("twice") and info.arguments.get("n") == 4:
            return Pause("step 4 waits")
        if options.get("ask") and info.arguments.get("n") == 3:
            return Ask("step 3 needs a person")
        return Continue()

    worker.add_pre_tool_call_hook(guard)

    def aborted(info: AbortInfo) -> None:
        _log(here / "aborts.log", {"reason": info.reason, "pid": os.getpid()})

    worker.add_on_abort_hook(aborted)

    project = here / "project"
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    script = project / ".claude" / "hook.py"
    if not script.exists():
        script.write_text(HOOK_SCRIPT)
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "step", "hooks": [{"type": "command", "command": f"{sys.executable} {script} {here}"}]}
            ]
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    CommandHooks.load(project, home=here / "home", hookloop_home=here / "hl", trust_project=True).install(worker)
    return worker


async def serve(url: str, executor_id: str) -> None:
    from hookloop.durable.dbos import DBOSBackend

    backend = DBOSBackend(url, executor_id=executor_id)
    backend.register("app", app)
    try:
        await backend.serve()
    finally:
        await backend.close()


async def execute(url: str, executor_id: str, folder: str, *, begin: bool) -> None:
    from hookloop.durable.dbos import DBOSBackend

    backend = DBOSBackend(url, executor_id=executor_id)
    backend.register("app", app)
    try:
        run_id = await backend.start("go", worker="app", options={"dir": folder, "url": url}, queue=False)
        print(run_id, flush=True)
        if begin:
            record = await backend.execute(run_id)
            print(record.status, flush=True)
    finally:
        await backend.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(execute(sys.argv[2], sys.argv[3], sys.argv[4], begin=sys.argv[1] == "execute"))
