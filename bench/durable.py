"""Durable runs on DBOS (issue 13, SPEC §10): what durability costs, and how paused runs and workers scale.

- **durable turn vs DBOS's bare step** — the cost of one durable turn (a model call and a no-op tool call: two
  DBOS steps, plus the turn machine, the recorded stream events and the decision digest), against a bare DBOS
  workflow doing two steps that do nothing, measured side by side in one process on the same SQLite database.
  Both workflows are executed the same way: queued on the run queue and executed by the serving process's DBOS
  queue worker, on the event loop and thread pool that executes every durable run. Each turn is timed inside the
  executing workflow: from one model request (timeline ``ModelRequestStarted``) to the next, against the start of
  every other bare step to the next; the first turn and the last (the answer) are left out, so the fixed costs of
  starting and ending a workflow are not in it. Short runs of each kind alternate (``repeats`` of each), so a
  change of the machine's load falls on both kinds alike. Figure: the median over every turn of them (one fsync
  stall or scheduling hiccup of a shared machine moves a median little, a difference of two whole-run totals a
  lot); the ratio of the mean turns is in the note. While a run executes nothing else in this process reads the
  database: its end is noticed in memory and its record read afterwards. Target ≤ 1.3×.
- **500 paused runs** — the SQLite database's size (≤ 100 MB), ``hookloop runs list`` (a real CLI subprocess,
  start-up included; ≤ 1 s; the store's ``list_runs`` alone is shown for reference), and approve → the first
  model call of the continuation with a worker serving (≤ 1 s; the queue's polling interval is part of it).
- **throughput** — 1,000 short scripted runs (a tool turn and an answer) on PostgreSQL, executed by 2 worker
  processes vs by 1; the ratio is shown (no target: on a 2-core machine shared with other work it is bound by
  the cores). The server is a throw-away one (:mod:`bench._postgres`); without PostgreSQL binaries the rows say
  so.

Without the ``dbos`` extra the section reports what it could not measure instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._measure import Sizes
from bench._report import Row, info, times
from hookloop import Approve, ScriptedClient, Text, ToolUse, Worker, tool
from hookloop.cli._durable import HistoryScripted
from hookloop.permissions import PermissionPolicy
from hookloop.timeline import ModelRequestStarted, RunEnded

__all__ = ["run"]

SECTION = "durable runs (DBOS)"


@dataclass(frozen=True, slots=True)
class _Sizes:
    turns: int
    repeats: int
    paused: int
    cli_repeats: int
    approvals: int
    throughput: int


SIZES = {
    "full": _Sizes(turns=12, repeats=30, paused=500, cli_repeats=5, approvals=9, throughput=1000),
    "quick": _Sizes(turns=12, repeats=12, paused=100, cli_repeats=3, approvals=5, throughput=200),
    "tiny": _Sizes(turns=3, repeats=1, paused=3, cli_repeats=1, approvals=1, throughput=2),
}
CLI = "import sys; from hookloop.cli import main; sys.argv[0] = 'hookloop'; main()"
ROOT = Path(__file__).resolve().parents[1]


async def _noop(x: int) -> str:
    return "ok"


async def _gated(x: int) -> str:
    return "done"


NOOP = tool(name="noop")(_noop)
GATED = tool(name="gated")(_gated)

_marks: dict[str, list[float]] = {}
"""Run id → perf_counter of each model request of the run (timeline ``ModelRequestStarted``), in the workers this
process builds; the bare workflow's tag → the start of every other step, and its end."""
_ended: set[str] = set()
"""Run ids whose RunEnded was seen, bare tags whose workflow returned (set from the executing thread)."""
_model_calls: dict[str, list[float]] = {}
"""Run id → perf_counter of each model request the workers of this process sent."""


class _MarkingClient(HistoryScripted):
    """A scripted client (its place in the script from the history) that notes when each request arrives."""

    def stream(self, request: Any) -> Any:
        _model_calls.setdefault(request.run_id, []).append(time.perf_counter())
        return super().stream(request)


def turns_factory(options: Mapping[str, object]) -> Worker:
    """``options["turns"]`` tool turns (one no-op call each) then an answer; each model request is marked through
    the timeline."""
    turns = int(str(options.get("turns", 1)))
    script: list[Any] = [[ToolUse("noop", {"x": i}, call_id=f"c{i}")] for i in range(turns)]
    worker = Worker(ScriptedClient([*script, [Text("done")]]), tools=[NOOP], max_turns=turns + 2)

    def timeline(event: object) -> None:
        if isinstance(event, ModelRequestStarted):
            _marks.setdefault(event.run_id, []).append(time.perf_counter())
        elif isinstance(event, RunEnded):
            _ended.add(event.run_id)

    worker.subscribe(timeline)
    return worker


def paused_factory(options: Mapping[str, object]) -> Worker:
    """One call of ``gated`` (an ask rule pauses it), then an answer once decided."""
    client = _MarkingClient([[ToolUse("gated", {"x": 1}, call_id="g1")], [Text("done")]])
    return Worker(client, tools=[GATED], permissions=PermissionPolicy(ask=["gated"]), max_turns=4)


def short_factory(options: Mapping[str, object]) -> Worker:
    """The throughput run: a tool turn and an answer."""
    return Worker(ScriptedClient([[ToolUse("noop", {"x": 0}, call_id="c0")], [Text("done")]]), tools=[NOOP])


def register(backend: Any) -> None:
    backend.register("bench-turns", turns_factory)
    backend.register("bench-paused", paused_factory)
    backend.register("bench-short", short_factory)


# -- the bare DBOS workflow ------------------------------------------------------------------------------------


def _bare_workflow() -> Any:
    """Register (once) a DBOS workflow of ``steps`` steps that do nothing; it marks the start of every other step
    (a turn is two steps) and its end, as the durable run's timeline marks each model request."""
    from dbos import DBOS

    global _BARE
    if _BARE is not None:
        return _BARE

    @DBOS.step(name="bench_bare_step")
    async def bare_step(i: int) -> int:
        return i

    @DBOS.workflow(name=BARE_WORKFLOW)
    async def bare_workflow(tag: str, steps: int) -> int:
        marks = _marks.setdefault(tag, [])
        for i in range(steps):
            if i % 2 == 0:
                marks.append(time.perf_counter())
            await bare_step(i)
        marks.append(time.perf_counter())
        _ended.add(tag)
        return steps

    _BARE = bare_workflow
    return _BARE


_BARE: Any = None
BARE_WORKFLOW = "bench_bare_workflow"


async def _serving(backend: Any) -> asyncio.Task[None]:
    task = asyncio.create_task(backend.serve())
    await asyncio.sleep(0)
    return task


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def _ended_in_memory(key: str) -> None:
    """Until the executing thread marked ``key`` ended (at most 600 s): no database read meanwhile (a reader in
    this process would compete with the timed run's commits, on one side of the comparison only)."""
    deadline = time.perf_counter() + 600
    while key not in _ended:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"bench run {key} did not end in 600 s")
        await asyncio.sleep(0.01)


def _turns(marks: list[float]) -> list[float]:
    """The durations of the turns but the first and the last, each from its model request (its first bare step)
    to the next turn's; the last mark is the answer's request (the bare workflow's end)."""
    return [b - a for a, b in itertools.pairwise(marks[1:-1])]


async def _durable_turns(backend: Any, turns: int) -> list[float]:
    run_id = await backend.start("bench", worker="bench-turns", options={"turns": turns})
    await _ended_in_memory(run_id)
    record = await backend.wait(run_id, timeout=600)
    if record.status != "finished":
        raise RuntimeError(f"bench run {run_id} ended {record.status}: {record.error or record.reason}")
    return _turns(_marks.pop(run_id))


async def _bare_turns(backend: Any, turns: int, tag: str) -> list[float]:
    """The bare workflow queued on the run queue, as :meth:`DBOSBackend.start` queues a run: executed by the
    serving process's queue worker, where durable runs execute."""
    from hookloop.durable import _dbos_run
    from hookloop.durable.dbos import APP_VERSION

    _bare_workflow()
    options = {"queue_name": _dbos_run.QUEUE_NAME, "workflow_name": BARE_WORKFLOW, "app_version": APP_VERSION}
    handle = await backend._client.enqueue_async(options, tag, 2 * turns)
    await _ended_in_memory(tag)
    await handle.get_result(polling_interval_sec=0.05)
    return _turns(_marks.pop(tag))


async def _turn_overhead(backend: Any, sizes: Sizes) -> list[Row]:
    turns, repeats = SIZES[sizes.name].turns, SIZES[sizes.name].repeats
    durable: list[float] = []
    bare: list[float] = []
    for i in range(repeats + 1):  # the first round warms up
        cases = ["durable", "bare"] if i % 2 else ["bare", "durable"]
        for kind in cases:
            got = await (_durable_turns(backend, turns) if kind == "durable" else _bare_turns(backend, turns, f"{i}"))
            if i:
                (durable if kind == "durable" else bare).extend(got)
    per_turn, per_steps = statistics.median(durable) * 1e9, statistics.median(bare) * 1e9
    means = statistics.fmean(durable) / statistics.fmean(bare)
    note = (
        f"median of {len(durable)} turns ({repeats} runs of {turns} turns each, first and last left out); "
        f"ratio of the mean turns {means:.2f}×"
    )
    return [
        info(SECTION, "bare DBOS workflow, 2 no-op steps (SQLite)", per_steps, "ns", note="queued like a run"),
        times(
            SECTION,
            "durable turn: model call + tool call (SQLite)",
            per_turn,
            "ns",
            per_steps,
            "2 bare DBOS steps",
            at_most=1.3,
            note=note,
        ),
    ]


# -- 500 paused runs ----------------------------------------------------------------------------------------------


async def _paused(backend: Any, url: str, database: Path, sizes: _Sizes) -> list[Row]:
    count = sizes.paused
    ids = [await backend.start(f"paused {i}", worker="bench-paused") for i in range(count)]
    for run_id in ids:
        record = await backend.wait(run_id, timeout=600)
        if record.status != "paused":
            raise RuntimeError(f"bench run {run_id} ended {record.status}, not paused: {record.error}")
    size = sum(p.stat().st_size for p in database.parent.glob(database.name + "*"))
    listed: list[float] = []
    for _ in range(sizes.cli_repeats + 2):
        start = time.perf_counter()
        records = await backend.list_runs(status="paused", limit=count)
        listed.append(time.perf_counter() - start)
    assert len(records) == count, len(records)
    cli: list[float] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for _ in range(sizes.cli_repeats):
        start = time.perf_counter()
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", CLI, "runs", "list", "--limit", str(count), "--db", url],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        cli.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise RuntimeError(f"hookloop runs list failed: {done.stderr.strip()[-500:]}")
    latency: list[float] = []
    for run_id in ids[: sizes.approvals]:
        record = await backend.get_run(run_id)
        start = time.perf_counter()
        await backend.approve(run_id, {c.call_id: Approve() for c in record.pending}, pause_id=record.pause_id)
        ended = await backend.wait(run_id, timeout=600)
        if ended.status != "finished":
            raise RuntimeError(f"bench run {run_id} ended {ended.status} after approval: {ended.error}")
        latency.append(min(t for t in _model_calls[run_id] if t >= start) - start)
    note = f"{count} runs paused on one ask each"
    return [
        info(
            SECTION,
            f"database size, {count} paused runs",
            size,
            "bytes",
            target="≤ 100 MB",
            passed=size <= 100e6 * count / 500,
            note=note + ("" if count == 500 else f"; the target scaled to {count} runs"),
        ),
        info(SECTION, f"store list_runs, {count} paused runs", statistics.median(listed) * 1e9, "ns"),
        info(
            SECTION,
            f"hookloop runs list (CLI process), {count} paused runs",
            statistics.median(cli) * 1e9,
            "ns",
            target="≤ 1 s",
            passed=statistics.median(cli) <= 1.0,
            note="Python start-up and imports included",
        ),
        info(
            SECTION,
            "approve → first model call of the continuation",
            statistics.median(latency) * 1e9,
            "ns",
            target="≤ 1 s",
            passed=statistics.median(latency) <= 1.0,
            note=f"worker serving in this process; median of {len(latency)}",
        ),
    ]


# -- throughput on PostgreSQL ---------------------------------------------------------------------------------------


async def _throughput(sizes: Sizes) -> list[Row]:
    from bench._postgres import PostgresServer, PostgresUnavailable
    from hookloop.durable.dbos import DBOSBackend

    count = SIZES[sizes.name].throughput
    try:
        server = await asyncio.to_thread(PostgresServer.start)
    except PostgresUnavailable as exc:
        return [info(SECTION, "throughput on PostgreSQL", 0, "count", note=f"not measured: {exc}")]
    rates: dict[int, float] = {}
    workers: list[asyncio.subprocess.Process] = []
    backends: dict[int, Any] = {}
    try:
        urls = {n: await asyncio.to_thread(server.create_database, f"bench_{n}") for n in (1, 2)}
        for n, url in urls.items():
            backends[n] = await asyncio.to_thread(DBOSBackend, url)
        # Every worker process starts at once (their start-up is not timed); each database has its own.
        workers = [await _worker_process(urls[n]) for n in (1, 2, 2)]
        for n in (1, 2):
            while len(await asyncio.to_thread(_executors, backends[n])) < n:  # serving: heartbeats written
                if any(w.returncode is not None for w in workers):
                    raise RuntimeError("a bench worker process exited before serving")
                await asyncio.sleep(0.05)
        for n in (1, 2):
            rates[n] = await _drain(backends[n], count)
    finally:
        await _terminate(workers)
        for backend in backends.values():
            await backend.close()
        await asyncio.to_thread(server.stop)
    return [
        info(SECTION, f"throughput, {count} short runs, 1 worker process (PostgreSQL)", rates[1], "per_s"),
        Row(
            section=SECTION,
            measure=f"throughput, {count} short runs, 2 worker processes (PostgreSQL)",
            value=rates[2],
            unit="per_s",
            baseline=rates[1],
            baseline_label="1 process",
            ratio=rates[2] / rates[1] if rates[1] else 0.0,
            ratio_kind="x",
            note="runs per second (a tool turn and an answer each), queued while the workers drain them; "
            "2 cores shared with the database server",
        ),
    ]


async def _worker_process(url: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + str(ROOT / "src")}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.durable", "serve", url, env=env, stdin=subprocess.DEVNULL
    )


async def _terminate(workers: list[asyncio.subprocess.Process]) -> None:
    """SIGTERM each worker process by its PID, then SIGKILL what has not exited after 30 s."""
    for w in workers:
        if w.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                w.terminate()
    for w in workers:
        try:
            await asyncio.wait_for(w.wait(), 30)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                w.kill()
            await w.wait()


async def _drain(backend: Any, count: int) -> float:
    """Queue ``count`` runs for the worker processes serving ``backend``'s database; runs per second until the
    last one ends."""
    start = time.perf_counter()
    ids = [await backend.start("short", worker="bench-short") for _ in range(count)]
    for run_id in ids:
        record = await backend.wait(run_id, timeout=1800)
        if record.status != "finished":
            raise RuntimeError(f"bench run {run_id} ended {record.status}: {record.error}")
    return count / (time.perf_counter() - start)


def _executors(backend: Any) -> list[str]:
    import sqlalchemy as sa

    with backend._engine.connect() as conn:
        return [r[0] for r in conn.execute(sa.text("select executor_id from hookloop_executors"))]


# -- the section ------------------------------------------------------------------------------------------------


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    """The whole section: the SQLite figures, then throughput on PostgreSQL."""
    try:
        from hookloop.durable.dbos import DBOSBackend  # noqa: F401
    except ImportError as exc:
        return [
            info(SECTION, "durable runs", 0, "count", note=f"not measured: pip install 'hookloop[dbos]' ({exc})")
        ], {}
    rows, data = await run_sqlite(sizes)
    started = time.perf_counter()
    rows += await run_postgres(sizes)
    data["seconds_postgres"] = round(time.perf_counter() - started, 1)
    return rows, data


async def run_sqlite(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    """A durable turn against DBOS's bare step, and the paused runs — on a SQLite database served here."""
    from hookloop.durable.dbos import DBOSBackend

    rows: list[Row] = []
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hookloop-bench-durable-") as folder:
        database = Path(folder) / "durable.sqlite"
        url = f"sqlite:///{database}"
        backend = await asyncio.to_thread(DBOSBackend, url)
        register(backend)
        _bare_workflow()
        serving = await _serving(backend)
        try:
            started = time.perf_counter()
            rows += await _turn_overhead(backend, sizes)
            seconds["turn"] = round(time.perf_counter() - started, 1)
            rows += await _paused(backend, url, database, SIZES[sizes.name])
            seconds["paused"] = round(time.perf_counter() - started - seconds["turn"], 1)
        finally:
            await _stop(serving)  # serve() leaves the loop a working default executor; close() never raises
            await backend.close()
    return rows, {"paused_runs": SIZES[sizes.name].paused, "seconds_sqlite": seconds}


async def run_postgres(sizes: Sizes) -> list[Row]:
    """Throughput of short runs on PostgreSQL, 2 worker processes against 1."""
    return await _throughput(sizes)


def _serve_main(url: str) -> None:
    """``python -m bench.durable serve URL``: a worker process for the throughput figure (until SIGTERM)."""
    import signal

    from hookloop.durable.dbos import DBOSBackend

    async def main() -> None:
        backend = DBOSBackend(url)
        register(backend)
        task = asyncio.create_task(backend.serve())
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        await _stop(task)
        await backend.close()

    asyncio.run(main())


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "serve":
    _serve_main(sys.argv[2])
