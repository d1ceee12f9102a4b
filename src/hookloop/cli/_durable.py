"""``hookloop run --durable [URL]`` and ``hookloop worker [URL]``: the CLI's own Worker as a durable run.

The CLI registers its Worker with the backend as the factory :data:`CLI_FACTORY`; a run's ``options`` carry what
any process needs to rebuild it — the working directory, model string, permission mode, settings files, flags —
and never an API key or a hook environment (those come from the environment of the process that executes the
run). Every process that executes runs (``hookloop worker``, ``hookloop run --durable``) registers the same
factory, so a run paused in one process continues in any other attached to the same database.

With a durable run nobody answers permission asks at a terminal: an ask pauses the run durably (no process waits
for it) and ``hookloop runs approve|deny`` decides it from any process; ``--yes`` / ``--deny`` decide every ask
as in a plain run. MCP servers are not started for durable runs (``--mcp-config`` is refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from hookloop import ScriptedClient, Worker
from hookloop.cli._dbopen import StoreUnavailable, describe_url, durable_argv, open_store, resolve_url
from hookloop.cli._session import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PAUSED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Approval,
    RunOptions,
    TextRenderer,
    UsageError,
    build_worker,
    fixed_approver,
    home,
    json_line,
)
from hookloop.durable import RunRecord
from hookloop.errors import HookloopError
from hookloop.items import Item, Message, ToolCall, ToolResult, new_id
from hookloop.providers.base import LLMRequest
from hookloop.timeline import event_to_json

__all__ = [
    "CLI_FACTORY",
    "StoreUnavailable",
    "cli_worker_factory",
    "describe_url",
    "durable_argv",
    "open_store",
    "resolve_url",
    "run_durable",
    "serve_worker",
]

CLI_FACTORY = "hookloop-cli"
"""The name the CLI's Worker factory is registered under in every process that executes runs."""
_OPTIONS_FORMAT = 1


# -- the CLI's Worker, rebuilt in any process ----------------------------------------------------------------


class HistoryScripted(ScriptedClient):
    """A scripted model whose place in the script comes from the history it is asked about, not from its own
    counter: a durable run's replayed model calls never reach the client, and a continuation in a fresh process
    starts a fresh client, so the next turn is the number of model replies already in the history."""

    def _next_turn(self, request: LLMRequest) -> Any:
        self._position = model_replies(request.items)
        self._calls = sum(1 for item in request.items if isinstance(item, ToolCall))
        return super()._next_turn(request)


def model_replies(items: Sequence[Item]) -> int:
    """How many model replies a history holds: each run of model-made items (assistant text, tool calls,
    reasoning, provider blocks) after a user message or tool result is one reply."""
    replies, in_reply = 0, False
    for item in items:
        made_by_model = not isinstance(item, ToolResult) and not (
            isinstance(item, Message) and item.role != "assistant"
        )
        if made_by_model and not in_reply:
            replies += 1
        in_reply = made_by_model
    return replies


def options_for(run: RunOptions, approval: Approval, *, session: str) -> dict[str, object]:
    """The ``options`` a CLI run is started with (JSON): what :func:`cli_worker_factory` rebuilds it from."""
    return {"hookloop_cli": _OPTIONS_FORMAT, "run": run.to_json(), "approval": approval, "session": session}


_renderers: dict[str, Any] = {}
"""Session id → a subscriber to attach to the Worker this process builds for that session (the run this
``hookloop run --durable`` process started and watches)."""


def cli_worker_factory(options: Mapping[str, object]) -> Worker:
    """Rebuild the CLI's Worker from a run's ``options`` (:func:`options_for`): built-in tools in its
    directory, the settings files and command hooks read now, its model. Raises UsageError on bad options."""
    if options.get("hookloop_cli") != _OPTIONS_FORMAT:
        raise UsageError(f"options.hookloop_cli: unknown format {options.get('hookloop_cli')!r}")
    raw = options.get("run")
    if not isinstance(raw, Mapping):
        raise UsageError("options.run: expected an object")
    run = RunOptions.from_json(raw)
    session = options.get("session")
    session_id = session if isinstance(session, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,80}", session) else None
    session_id = session_id or new_id("session")
    worker, _notes = build_worker(run, transcript=home() / "sessions" / f"{session_id}.jsonl", session_id=session_id)
    if run.model.startswith("scripted:"):
        worker.client = HistoryScripted.from_file(run.model.removeprefix("scripted:"))
    approval = options.get("approval")
    fixed = fixed_approver("yes" if approval == "yes" else "deny" if approval == "deny" else "pause")
    if fixed is not None:
        worker.approvers.append(fixed)
    sandbox = getattr(worker.permissions, "sandbox", None)
    if sandbox is not None:
        allow = approval == "yes"

        async def ask_domain(host: str) -> bool:
            return allow  # nobody to ask: --yes allows, anything else refuses (the result names the host)

        sandbox.ask_domain = ask_domain
    subscriber = _renderers.get(session_id)
    if subscriber is not None:
        worker.subscribe(subscriber)
    return worker


def register_cli(backend: Any) -> None:
    backend.register(CLI_FACTORY, cli_worker_factory)


# -- hookloop run --durable ----------------------------------------------------------------------------------

_EXIT_BY_STATUS = {"finished": EXIT_OK, "paused": EXIT_PAUSED, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}


def run_durable(url: str | None, prompt: str, run: RunOptions, approval: Approval, output: str) -> int:
    """Start the run in the database, execute it in this process until it finishes or pauses, and report it.
    The run id is the first line on stdout (text output) or in the result object (json / stream-json)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if run.mcp_config:
        err.print("hookloop: --mcp-config is not supported with --durable (MCP servers are not started)", markup=False)
        return EXIT_USAGE
    try:
        backend = open_store(None if url == "default" else url)
    except StoreUnavailable as exc:
        err.print(f"hookloop: {exc}", markup=False)
        return EXIT_USAGE
    session = new_id("session")
    renderer: TextRenderer | None = None
    if output == "text":
        renderer = TextRenderer(Console(soft_wrap=True, highlight=False), err)
        _renderers[session] = renderer
    elif output == "stream-json":
        _renderers[session] = lambda event: json_line(event_to_json(event))
    try:
        build_worker(run, transcript=home() / "sessions" / f"{session}.jsonl", session_id=session)[0].close()
    except UsageError as exc:  # the same checks a worker process makes, reported here at once
        err.print(f"hookloop: {exc}", markup=False)
        return EXIT_USAGE
    from hookloop._reaper import guard_descendants

    guard_descendants()
    register_cli(backend)
    try:
        record, stopped = asyncio.run(_execute(backend, prompt, options_for(run, approval, session=session), output))
    except HookloopError as exc:
        err.print(f"hookloop: {type(exc).__name__}: {exc}", markup=False)
        return EXIT_FAILED
    finally:
        if renderer is not None:
            renderer.stop_spinner()
    return _report(record, output, err, stopped)


async def _execute(
    backend: Any, prompt: str, options: Mapping[str, object], output: str
) -> tuple[RunRecord, signal.Signals | None]:
    loop = asyncio.get_running_loop()
    stopped: list[signal.Signals] = []
    cancelling: list[asyncio.Task[None]] = []
    # A backend that can execute one run by itself (DBOS) runs this one only: queued runs of the database are
    # left to the workers. Otherwise this process serves the backend until its run has ended.
    here = hasattr(backend, "execute")
    try:
        run_id = await backend.start(prompt, worker=CLI_FACTORY, options=options, **({"queue": False} if here else {}))
        if output == "text":
            sys.stdout.write(f"{run_id}\n")
            sys.stdout.flush()
        executing = asyncio.create_task(backend.execute(run_id) if here else backend.serve())

        def interrupt(signum: signal.Signals) -> None:
            if stopped:
                os._exit(EXIT_CANCELLED if stopped[0] == signal.SIGINT else EXIT_TERMINATED)
            stopped.append(signum)
            cancelling.append(loop.create_task(backend.cancel(run_id)))

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, interrupt, signum)
        try:
            if here:
                record: RunRecord = await executing
            else:
                waiting = asyncio.create_task(backend.wait(run_id))
                done, _ = await asyncio.wait({waiting, executing}, return_when=asyncio.FIRST_COMPLETED)
                if waiting not in done:  # the executor stopped first: its error says why
                    executing.result()
                    raise HookloopError("the run's executor stopped before the run ended")
                record = waiting.result()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            executing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await executing
        return record, stopped[0] if stopped else None
    finally:
        await backend.close()


def _report(record: RunRecord, output: str, err: Console, stopped: signal.Signals | None) -> int:
    code = _EXIT_BY_STATUS.get(record.status, EXIT_FAILED)
    if record.status == "cancelled" and stopped == signal.SIGTERM:
        code = EXIT_TERMINATED
    if output != "text":
        from hookloop.cli._runs import record_to_json

        data = record_to_json(record)
        json_line({"type": "result", **data})
        return code
    if record.status == "paused":
        err.print(f"\n[bold magenta]paused[/]: {record.reason}", highlight=False)
        for call in record.pending:
            err.print(f"  {call.call_id}  {call.tool_name} — {call.asked_by}", markup=False)
        err.print(
            f"decide from any process:\n  hookloop runs approve {record.run_id} --all   (or: hookloop runs deny …)\n"
            "a worker continues it: hookloop worker",
            markup=False,
        )
    elif record.status == "finished":
        err.print(f"[dim]done in {record.turns} turns · run {record.run_id}[/]", highlight=False)
    else:
        detail = record.error or record.reason or record.status
        err.print(f"[red]run {record.run_id} {record.status}: {detail}[/]", highlight=False, markup=True)
    return code


# -- hookloop worker -----------------------------------------------------------------------------------------


def serve_worker(url: str | None) -> int:
    """Execute queued runs (and recover crashed ones) until SIGINT or SIGTERM; then stop cleanly (exit 0)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        backend = open_store(url)
    except StoreUnavailable as exc:
        err.print(f"hookloop: {exc}", markup=False)
        return EXIT_USAGE
    from hookloop._reaper import guard_descendants

    guard_descendants()
    register_cli(backend)
    return asyncio.run(_serve(backend, err, describe_url(url)))


async def _serve(backend: Any, err: Console, where: str) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals: list[signal.Signals] = []

    def interrupt(signum: signal.Signals) -> None:
        if signals:
            os._exit(EXIT_CANCELLED if signals[0] == signal.SIGINT else EXIT_TERMINATED)
        signals.append(signum)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt, signum)
    serving = asyncio.create_task(backend.serve())
    err.print(f"hookloop worker: executing runs from {where} (Ctrl-C to stop)", markup=False)
    stopping = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if serving in done:
            serving.result()
            return EXIT_OK
        err.print(f"hookloop worker: stopping ({signals[0].name})", markup=False)
        return EXIT_OK
    except HookloopError as exc:
        err.print(f"hookloop worker: {type(exc).__name__}: {exc}", markup=False)
        return EXIT_FAILED
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        stopping.cancel()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await serving
        await backend.close()
