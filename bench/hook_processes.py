"""Hook processes that stay running (``"type": "process"``, issue 17): what a firing costs once the process runs.

The hook is a small Python server that answers every request with a PreToolUse ``allow`` (the same answer as the
command-hooks section's ``sh`` hook). Measured through the exact functions the Worker calls:

- bare spawn (baseline, for scale) — one ``sh`` hook spawned and answered, as in the command-hooks section;
- floor — the same server's round trip written by hand on asyncio's subprocess pipes (write a line, read one);
- persistent round trip — ``run_all`` on one configured ``process`` hook whose process already runs (the
  runner's pool, as the bridge sets it up): request line, answer line, HookOutcome;
- the same with a :mod:`hookloop.hookserver` server (``serve(handler)`` returning the same answer as a dict):
  what a user's Python hook server costs, its side included;
- through the bridge — the installed ``"command hooks"`` pre_tool_call hook on that hook;
- 20 hooks — 20 distinct process hooks on one event through ``run_all`` and through the bridge (wall), and
  their floor: the 20 servers' round trips written by hand (20 lines written, then 20 answers read), each
  server in its own session as hook processes are (where the scheduler groups a session's processes — Linux's
  autogroup — that alone costs 20 processes on one event about twice the wall time on a busy machine);
- leaks — ``N`` firings through the bridge: open file descriptors, live child processes and RSS before/after.

Targets (issue 17): round trip ≤ 0.2 ms (with the hand-written server and with a hookserver one); 20 hooks ≤ 1 ms
wall; no leak of processes, pipes or memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import tempfile
from functools import partial
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, absolute, info, times
from bench.command_hooks import ANSWER, BODY, PAYLOAD, SCRIPT, bare_spawn, bridge_hook
from hookloop.command_hooks.model import ConfiguredHook, HookSource, ProcessHandler
from hookloop.command_hooks.processes import ProcessPool
from hookloop.command_hooks.runner import RunnerOptions, run_all
from hookloop.hooks import Allow

__all__ = ["run"]

SECTION = "hook processes (persistent, JSON lines)"
SERVER = f"""
import sys
answer = {ANSWER!r}.replace('"', '\\\\"')
for line in sys.stdin:
    i = line.index('"id":"') + 6
    request_id = line[i:line.index('"', i)]
    sys.stdout.write('{{"id":"' + request_id + '","stdout":"' + answer + '"}}\\n')
    sys.stdout.flush()
"""
HOOKSERVER = f"""
from hookloop.hookserver import serve
answer = {json.loads(ANSWER)!r}
serve(lambda event, data: answer)
"""
BATCH = 20
MANY = 20
SOURCE = HookSource(kind="hookloop-user", path="/bench/settings.json")


def configured(server: Path, n: int, *, site: bool = False) -> ConfiguredHook:
    """Process hook ``n`` on ``server`` (``site``: with the site packages, for a server that imports hookloop)."""
    handler = ProcessHandler(command=sys.executable, args=(*(() if site else ("-S",)), str(server), str(n)))
    path = f"hooks.PreToolUse[0].hooks[{n}]"  # each its own settings entry (one entry read twice runs once)
    return ConfiguredHook(event="PreToolUse", matcher="Bash", handler=handler, source=SOURCE, json_path=path)


async def _bare_one() -> float:
    start = perf_counter_ns()
    out = await bare_spawn(SCRIPT)
    elapsed = perf_counter_ns() - start
    assert out.strip() == ANSWER.encode(), out
    return elapsed


async def _floor(process: asyncio.subprocess.Process, line: bytes) -> float:
    """The floor: one request line written and its answer line read on the pipes of an asyncio subprocess."""
    assert process.stdin is not None
    assert process.stdout is not None
    start = perf_counter_ns()
    for _ in range(BATCH):
        process.stdin.write(line)
        answer = await process.stdout.readline()
    elapsed = perf_counter_ns() - start
    assert answer.startswith(b'{"id":"1"'), answer
    return elapsed / BATCH


async def _floor_many(processes: list[asyncio.subprocess.Process], line: bytes) -> float:
    """The floor of 20 hooks: one request line written to each of 20 servers, then their 20 answers read."""
    start = perf_counter_ns()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(line)
    for process in processes:
        assert process.stdout is not None
        answer = await process.stdout.readline()
    elapsed = perf_counter_ns() - start
    assert answer.startswith(b'{"id":"1"'), answer
    return elapsed


async def _round_trip(hooks: list[ConfiguredHook], project: str, opts: RunnerOptions) -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        outcomes = await run_all(hooks, PAYLOAD, project_dir=project, options=opts)
    elapsed = perf_counter_ns() - start
    assert all(o.ok and o.exit_code == 0 and o.stdout == ANSWER.encode() for o in outcomes), outcomes
    return elapsed / BATCH


async def _bridge(fn: Any, call: Any) -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        result = await fn(call)
    elapsed = perf_counter_ns() - start
    assert isinstance(result, Allow), result
    return elapsed / BATCH


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _children() -> int:
    me = str(os.getpid())
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                count += 1
    return count


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    repeats = {"full": 31, "quick": 9, "tiny": 1}[sizes.name]
    firings = {"full": 10_000, "quick": 2_000, "tiny": 50}[sizes.name]
    with tempfile.TemporaryDirectory(prefix="hookloop-bench-") as folder:
        project = folder
        server = Path(folder) / "server.py"
        server.write_text(SERVER)
        own = Path(folder) / "hookserver.py"
        own.write_text(HOOKSERVER)
        one, many = [configured(server, 0)], [configured(server, n) for n in range(MANY)]
        served = [configured(own, 0, site=True)]
        pool = ProcessPool(output_cap=1 << 20, kill_grace=1.0)
        opts = RunnerOptions(processes=pool)
        bridge_fn, call = bridge_hook((one[0],), project)
        bridge_many, _ = bridge_hook(tuple(many), project)
        floor = await asyncio.create_subprocess_exec(
            sys.executable, "-S", str(server), "floor", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        floors = [  # each leads its own session, as hook processes must (no controlling terminal)
            await asyncio.create_subprocess_exec(
                sys.executable, "-S", str(server), f"floor {n}", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, start_new_session=True,
            )
            for n in range(MANY)
        ]  # fmt: skip
        request = b'{"id":"1","event":"PreToolUse","input":%s}\n' % BODY
        try:
            cases: dict[str, Sample] = {
                "bare": _bare_one,
                "floor": partial(_floor, floor, request),
                "persistent": partial(_round_trip, one, project, opts),
                "hookserver": partial(_round_trip, served, project, opts),
                "floor_many": partial(_floor_many, floors, request),
                "bridge": partial(_bridge, bridge_fn, call),
                "many": partial(_round_trip, many, project, opts),
                "bridge_many": partial(_bridge, bridge_many, call),
            }
            medians, samples = await interleave(cases, repeats)
            fds, children, rss = _fds(), _children(), _rss_mb()
            for _ in range(firings // BATCH):
                await _bridge(bridge_fn, call)
            leaked_fds, leaked_children, grown = _fds() - fds, _children() - children, _rss_mb() - rss
        finally:
            await pool.close()
            for fn in (bridge_fn, bridge_many):  # the bridge's own pool (its Worker's command hooks)
                await fn.__self__.processes.close()
            for process in (floor, *floors):
                assert process.stdin is not None
                process.stdin.close()
                await process.wait()
            await asyncio.sleep(0)
    base = medians["bare"]
    no_leak = leaked_fds <= 0 and leaked_children <= 0 and grown < 5.0
    rows = [
        info(SECTION, "bare spawn of one sh hook (for scale)", base, "ns"),
        absolute(SECTION, "1 persistent hook, round trip through run_all", medians["persistent"], at_most_ns=200_000),
        times(SECTION, "… vs a bare spawn", medians["persistent"], "ns", base, "bare spawn"),
        times(
            SECTION,
            "… vs the same round trip on bare asyncio pipes",
            medians["persistent"],
            "ns",
            medians["floor"],
            "bare asyncio pipes",
        ),
        absolute(
            SECTION,
            "1 persistent hook on a hookloop.hookserver server, run_all",
            medians["hookserver"],
            at_most_ns=200_000,
        ),
        info(SECTION, "1 persistent hook through the bridge (pre_tool_call)", medians["bridge"], "ns"),
        info(
            SECTION,
            f"{MANY} servers' round trips on bare asyncio pipes, own sessions (floor, wall)",
            medians["floor_many"],
            "ns",
        ),
        absolute(
            SECTION, f"{MANY} persistent hooks on one event, run_all (wall)", medians["many"], at_most_ns=1_000_000
        ),
        info(SECTION, f"{MANY} persistent hooks on one event, bridge (wall)", medians["bridge_many"], "ns"),
        info(
            SECTION,
            f"{firings:,} firings: +{leaked_fds} fds, +{leaked_children} processes, +{grown:.1f} MB peak RSS",
            float(firings),
            "count",
            target="no leak",
            passed=no_leak,
        ),
    ]
    data: dict[str, object] = {
        "batch": BATCH,
        "medians_ns": medians,
        "samples_ns": samples,
        "leak": {"fds": leaked_fds, "children": leaked_children, "rss_mb": grown, "firings": firings},
    }
    return rows, data
