"""Command hooks: what hookloop's runner and bridge add to spawning a hook process (SPEC §10, issue 5).

The hook is a trivial ``sh`` JSON hook — it reads its stdin and prints a PreToolUse ``allow`` object::

    read -r input || true; echo '{"hookSpecificOutput": {...}}'

- bare spawn (baseline) — ``asyncio.create_subprocess_exec("/bin/sh", "-c", SCRIPT)`` with the three pipes and
  ``communicate(payload)``: the least a runtime can do to run the hook and read its answer;
- ``run_all`` — hookloop's runner on one configured hook: its own session and process group, environment, stdin
  write and close, concurrent draining with caps and line splitting, the wait for the group to be gone;
- bridge — the installed ``"command hooks"`` pre_tool_call hook called with a tool-call summary: payload
  building, handler selection, ``run_all``, translation, merge, the hookloop result;
- 20 hooks — 20 distinct matching hooks on one event, through ``run_all`` and through the bridge, against the
  same 20 scripts spawned concurrently by hand (``asyncio.gather`` of bare spawns). Wall time.

Targets (SPEC §10, issue 17): ≤ 1.10× the bare spawn for one hook, ≤ 1.15× for 20. Each sample times ``BATCH``
sequential round trips (one for 20 hooks); figures are medians of interleaved rounds.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from functools import partial
from time import perf_counter_ns
from typing import Any

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, times
from hookloop import ScriptedClient, Worker, tool
from hookloop._frozen import freeze_object
from hookloop.command_hooks.bridge import CommandHooks
from hookloop.command_hooks.config import HookConfig
from hookloop.command_hooks.model import CommandHandler, ConfiguredHook, HookSource
from hookloop.command_hooks.runner import run_all
from hookloop.hooks import PRE_TOOL_CALL, Allow, PreToolCallInfo

__all__ = ["run"]

SECTION = "command hooks (trivial sh JSON hook)"
ANSWER = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
SCRIPT = f"read -r input || true; echo '{ANSWER}'"
PAYLOAD = {
    "session_id": "bench",
    "transcript_path": "",
    "cwd": "/",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls -la"},
    "tool_use_id": "call_1",
}
BODY = json.dumps(PAYLOAD, separators=(",", ":")).encode()
BATCH = 5
MANY = 20
SOURCE = HookSource(kind="hookloop-user", path="/bench/settings.json")


def script(n: int | None) -> str:
    """The hook script; ``n`` makes 20 distinct commands (identical ones would be deduplicated by config)."""
    return SCRIPT if n is None else f"{SCRIPT} # hook {n}"


def configured(n: int | None) -> ConfiguredHook:
    """One configured hook; each ``n`` its own entry of the settings file (entries at the same place would be one
    handler read twice, and the bridge would run it once)."""
    return ConfiguredHook(
        event="PreToolUse",
        matcher="Bash",
        handler=CommandHandler(command=script(n)),
        source=SOURCE,
        json_path=f"hooks.PreToolUse[0].hooks[{n or 0}]",
    )


async def bare_spawn(command: str) -> bytes:
    process = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate(BODY)
    return out


async def _bare_one() -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        out = await bare_spawn(SCRIPT)
    elapsed = perf_counter_ns() - start
    assert out.strip() == ANSWER.encode(), out
    return elapsed / BATCH


async def _run_all_one(hook: ConfiguredHook, project: str) -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        [outcome] = await run_all([hook], PAYLOAD, project_dir=project)
    elapsed = perf_counter_ns() - start
    assert outcome.ok, outcome
    assert outcome.exit_code == 0, outcome
    return elapsed / BATCH


async def _bridge_one(fn: Any, call: PreToolCallInfo) -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        result = await fn(call)
    elapsed = perf_counter_ns() - start
    assert isinstance(result, Allow), result
    return elapsed / BATCH


async def _bare_many() -> float:
    start = perf_counter_ns()
    outs = await asyncio.gather(*(bare_spawn(script(n)) for n in range(MANY)))
    elapsed = perf_counter_ns() - start
    assert all(out.strip() == ANSWER.encode() for out in outs)
    return elapsed


async def _run_all_many(hooks: list[ConfiguredHook], project: str) -> float:
    start = perf_counter_ns()
    outcomes = await run_all(hooks, PAYLOAD, project_dir=project)
    elapsed = perf_counter_ns() - start
    assert all(o.ok and o.exit_code == 0 for o in outcomes)
    return elapsed


async def _bridge_many(fn: Any, call: PreToolCallInfo) -> float:
    start = perf_counter_ns()
    result = await fn(call)
    elapsed = perf_counter_ns() - start
    assert isinstance(result, Allow), result
    return elapsed


def bridge_hook(hooks: tuple[ConfiguredHook, ...], project: str) -> tuple[Any, PreToolCallInfo]:
    """The installed pre_tool_call hook of a Worker with ``hooks``, and a tool-call summary to call it with."""

    @tool(name="Bash")
    async def bash(command: str) -> str:
        """Unused: only its metadata is needed."""
        return command

    worker = Worker(ScriptedClient([]), tools=[bash], session_id="bench")
    CommandHooks(HookConfig(hooks=hooks), project_dir=project).install(worker)
    handler = worker.hooks.chain(PRE_TOOL_CALL).single
    assert handler is not None
    call = PreToolCallInfo(
        run_id="run_bench",
        session_id="bench",
        turn=1,
        call_id="call_1",
        tool_name="Bash",
        arguments=freeze_object({"command": "ls -la"}),
        meta=bash.meta,
        permission_mode=None,
    )
    return handler.fn, call


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    repeats_one = {"full": 31, "quick": 9, "tiny": 1}[sizes.name]
    repeats_many = {"full": 21, "quick": 7, "tiny": 1}[sizes.name]
    with tempfile.TemporaryDirectory(prefix="hookloop-bench-") as folder:
        project = folder
        one = configured(None)
        many = [configured(n) for n in range(MANY)]
        bridge_one, call = bridge_hook((one,), project)
        bridge_many, _ = bridge_hook(tuple(many), project)
        single: dict[str, Sample] = {
            "bare": _bare_one,
            "run_all": partial(_run_all_one, one, project),
            "bridge": partial(_bridge_one, bridge_one, call),
        }
        parallel: dict[str, Sample] = {
            "bare": _bare_many,
            "run_all": partial(_run_all_many, many, project),
            "bridge": partial(_bridge_many, bridge_many, call),
        }
        medians_one, samples_one = await interleave(single, repeats_one)
        medians_many, samples_many = await interleave(parallel, repeats_many)
    base, base_many = medians_one["bare"], medians_many["bare"]
    at_most, at_most_many = 1.10, 1.15
    one_label, many_label = "bare asyncio spawn", f"{MANY} bare spawns (gather)"
    rows = [
        info(SECTION, "bare asyncio spawn + communicate", base, "ns"),
        times(SECTION, "1 hook through run_all", medians_one["run_all"], "ns", base, one_label, at_most=at_most),
        times(
            SECTION, "1 hook through the bridge (pre_tool_call)", medians_one["bridge"], "ns", base, one_label,
            at_most=at_most,
        ),
        info(SECTION, f"{MANY} bare spawns, concurrently (wall)", base_many, "ns"),
        times(
            SECTION, f"{MANY} hooks on one event, run_all (wall)", medians_many["run_all"], "ns", base_many,
            many_label, at_most=at_most_many,
        ),
        times(
            SECTION, f"{MANY} hooks on one event, bridge (wall)", medians_many["bridge"], "ns", base_many,
            many_label, at_most=at_most_many,
        ),
    ]  # fmt: skip
    data: dict[str, object] = {
        "script": SCRIPT,
        "batch": BATCH,
        "medians_ns": {"one": medians_one, "many": medians_many},
        "samples_ns": {"one": samples_one, "many": samples_many},
    }
    return rows, data
