"""The application the Temporal tests run in real worker processes: ``python temporal_app.py serve URL QUEUE HB``.

The Worker factory ``app`` builds, from ``options["dir"]`` (a test's folder):

- a scripted model that answers by the number of model replies already in the history (so a replay that does not
  send a request again still gets the right reply) and logs every request it receives to ``requests.log``; with
  ``flaky`` (a count) in the options its second request fails that many times with a retryable RateLimitError,
  with ``bad_key`` it fails with an AuthenticationError (not retryable);
- a tool ``step(n)`` that logs ``{n, key, pid}`` to ``tools.log`` (``key``: its idempotency key); with ``slow``
  in the options, ``step(2)`` takes that many seconds;
- a PreToolUse command hook (a real subprocess) that logs each firing to ``hooks.log``;
- an in-process pre_tool_call hook that asks for approval of ``step(3)`` when ``ask`` is in the options, and that
  denies ``step(1)`` when the file ``flip`` exists (a hook that is not deterministic);
- an on_abort hook that logs to ``aborts.log``;
- with ``rules`` in the options (``{"ask": [...], "deny": [...]}``), a permission policy of those rules.

A file ``block-<what>`` makes the matching effect block forever after writing a line to the FIFO ``ready.fifo``
(removing the block file first): the test SIGKILLs the process, and the effect runs normally when it is performed
again.

``python temporal_app.py approve URL QUEUE RUN_ID PAUSE_ID`` is a short-lived client process: it approves every
pending call and leaves with ``exit_now`` (``os._exit``) once the update returned (temporalio/sdk-python#300: the
SDK's runtime can abort the interpreter at shutdown after the call succeeded; the exit code must say what the call
did).
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
from hookloop.hooks import AbortInfo, Ask, Continue, Deny, PreToolCallInfo, PreToolCallResult
from hookloop.items import Message
from hookloop.permissions import PermissionPolicy
from hookloop.providers import AuthenticationError, RateLimitError
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


def _log(path: Path, record: Mapping[str, object]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(dict(record)) + "\n")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _blocked(here: Path, what: str) -> bool:
    block = here / f"block-{what}"
    if not block.exists():
        return False
    block.unlink()
    with (here / "ready.fifo").open("w", encoding="utf-8") as f:
        f.write(json.dumps({"pid": os.getpid(), "what": what}) + "\n")
    return True


def app(options: Mapping[str, object]) -> Worker:
    here = Path(str(options["dir"]))

    def reply(request: LLMRequest) -> ScriptedTurn:
        index = sum(1 for item in request.items if isinstance(item, Message) and item.role == "assistant")
        _log(here / "requests.log", {"index": index, "pid": os.getpid()})
        tries = sum(1 for r in _lines(here / "requests.log") if r["index"] == index)
        if index == 1 and tries <= int(str(options.get("flaky", 0))):  # a provider that is briefly overloaded
            raise RateLimitError("429 slow down", provider="scripted", retry_after=0.05)
        if index == 1 and options.get("bad_key"):
            raise AuthenticationError("401 invalid x-api-key", provider="scripted")
        if _blocked(here, f"model-{index}"):
            threading.Event().wait()  # the process is killed here
        return ScriptedTurn(blocks=tuple(TURNS[min(index, len(TURNS) - 1)]))

    @tool
    async def step(n: int, ctx: ToolContext) -> str:
        """Do step n."""
        _log(here / "tools.log", {"n": n, "key": ctx.idempotency_key, "pid": os.getpid()})
        if n == 2 and options.get("slow"):  # a long tool: longer than the heartbeat timeout
            await asyncio.sleep(float(str(options["slow"])))
        if _blocked(here, f"tool-{n}"):
            await asyncio.Event().wait()  # the process is killed here, or the run is cancelled
        return f"step {n} done"

    rules = options.get("rules")
    policy = PermissionPolicy(**rules, workspace=here) if isinstance(rules, dict) else None  # type: ignore[arg-type]
    worker = Worker(ScriptedClient([reply] * 10), tools=[step], permissions=policy)

    def guard(info: PreToolCallInfo) -> PreToolCallResult:
        if info.arguments.get("n") == 1 and (here / "flip").exists():
            return Deny("flipped")
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


async def serve(url: str, queue: str, heartbeat: float) -> None:
    from hookloop.durable.temporal import TemporalBackend

    b = TemporalBackend(url, task_queue=queue, heartbeat_timeout=heartbeat, executor_id=f"worker-{os.getpid()}")
    b.register("app", app)
    await b.serve()


async def approve(url: str, queue: str, run_id: str, pause_id: str) -> int:
    from hookloop.checkpoint import Approve
    from hookloop.durable import StaleDecision
    from hookloop.durable.temporal import TemporalBackend

    b = TemporalBackend(url, task_queue=queue)
    record = await b.get_run(run_id)
    try:
        await b.approve(run_id, {p.call_id: Approve() for p in record.pending}, pause_id=pause_id)
    except StaleDecision as exc:
        print(f"{type(exc).__name__}: {exc}", flush=True)
        return 3
    print("approved", flush=True)
    return 0


if __name__ == "__main__":
    verb = sys.argv[1]
    if verb == "serve":
        asyncio.run(serve(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    elif verb == "approve":
        from hookloop.durable.temporal import exit_now

        exit_now(asyncio.run(approve(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])))  # sdk-python#300
    else:
        raise SystemExit(f"unknown verb {verb!r}")
