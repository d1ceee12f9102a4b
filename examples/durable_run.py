"""A durable run on DBOS (pip install 'hookloop[dbos]'): it pauses for an approval without holding a process,
the decision is recorded in the database, and a worker continues it. Here all three happen in one process for
brevity; in practice `hookloop worker` processes serve, and the approval comes from `hookloop runs approve`, the
web inbox (`hookloop serve --durable`) or any process calling `backend.approve`. Kill the process mid-run and
start it again: the run continues where it was, completed model calls and tools are not repeated.
"""

import asyncio
import contextlib
from collections.abc import Mapping

from hookloop import Approve, ScriptedClient, ScriptedTurn, Text, ToolResult, ToolUse, Worker, tool
from hookloop.durable.dbos import DBOSBackend
from hookloop.permissions import PermissionPolicy
from hookloop.providers import LLMRequest


@tool
async def deploy(env: str) -> str:
    """Deploy to an environment."""
    return f"deployed to {env}"


def reply(request: LLMRequest) -> ScriptedTurn:
    """The model: deploy, then report (a stand-in for a real client; any process may run either turn)."""
    done = any(isinstance(item, ToolResult) for item in request.items)
    return ScriptedTurn(blocks=(Text("Deployed."),) if done else (ToolUse("deploy", {"env": "prod"}),))


def make_worker(options: Mapping[str, object]) -> Worker:  # every process that runs runs registers it
    return Worker(ScriptedClient([reply] * 4), tools=[deploy], permissions=PermissionPolicy(ask=["deploy"]))


async def main() -> None:
    backend = DBOSBackend("sqlite:///durable-demo.sqlite")
    backend.register("default", make_worker)
    serving = asyncio.create_task(backend.serve())  # usually `hookloop worker` processes
    run_id = await backend.start("deploy to prod")
    record = await backend.wait(run_id)
    print(record.status)  # prints: paused
    decisions = {call.call_id: Approve() for call in record.pending}  # from any process, days later
    await backend.approve(run_id, decisions, pause_id=record.pause_id)
    record = await backend.wait(run_id)
    print(record.status)  # prints: finished
    serving.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await serving
    await backend.close()


asyncio.run(main())
