"""The OS sandbox: what running a Bash call in bubblewrap adds (issue 18).

- bare spawn (baseline) — ``asyncio.create_subprocess_exec("bash", "-c", "true")`` and wait: the least a
  runtime can do to run a command;
- Bash tool — hookloop's Bash tool running ``true`` (process group, EXIT trap for the working directory, output
  capture, stop and wait);
- Bash tool, sandboxed — the same call in the sandbox: the per-command proxy, the masks for one Read deny rule
  (``Read(./.env)``), bwrap with fresh namespaces, the socat bridge for the network.

No target (SPEC §10 sets none); the figures go in the README next to the bare spawn. Each sample times
``BATCH`` sequential calls; figures are medians of interleaved rounds.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from functools import partial
from pathlib import Path
from time import perf_counter_ns

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, info, times
from hookloop.permissions import PermissionPolicy
from hookloop.sandbox import Sandbox, SandboxSettings
from hookloop.tools import ToolContext, ToolOutput
from hookloop.tools.builtin import BashTool, Workspace

__all__ = ["run"]

SECTION = "sandbox (Bash `true`)"
BATCH = 3
CTX = ToolContext(run_id="bench", session_id="bench", call_id="call", tool_name="Bash", turn=1)


async def _bare() -> float:
    bash = shutil.which("bash") or "/bin/sh"
    start = perf_counter_ns()
    for _ in range(BATCH):
        process = await asyncio.create_subprocess_exec(bash, "-c", "true")
        assert await process.wait() == 0
    return (perf_counter_ns() - start) / BATCH


async def _tool(tool: BashTool) -> float:
    start = perf_counter_ns()
    for _ in range(BATCH):
        result = await tool.execute({"command": "true"}, CTX)
    elapsed = perf_counter_ns() - start
    assert isinstance(result, ToolOutput), result
    assert not result.is_error, result
    return elapsed / BATCH


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    repeats = {"full": 21, "quick": 7, "tiny": 1}[sizes.name]
    folder = tempfile.mkdtemp(prefix="hookloop-bench-sandbox-", dir="/var/tmp")
    try:
        ws = Path(folder)
        (ws / ".env").write_text("SECRET=1\n")
        policy = PermissionPolicy(deny=["Read(./.env)"], workspace=ws)
        sandbox = Sandbox(SandboxSettings(enabled=True), workspace=ws, policy=policy)
        availability = sandbox.availability
        if not availability.available:
            row = info(SECTION, "sandboxed Bash call", float("nan"), "ns", note=f"not measured: {availability.reason}")
            return [row], {"unavailable": availability.reason}
        cases: dict[str, Sample] = {
            "bare": _bare,
            "tool": partial(_tool, BashTool(Workspace(ws))),
            "sandboxed": partial(_tool, BashTool(Workspace(ws), sandbox=sandbox)),
        }
        medians, samples = await interleave(cases, repeats)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base = medians["bare"]
    rows = [
        info(SECTION, "bare asyncio spawn of bash -c true", base, "ns"),
        times(SECTION, "Bash tool call", medians["tool"], "ns", base, "bare spawn"),
        times(SECTION, "Bash tool call, sandboxed", medians["sandboxed"], "ns", base, "bare spawn"),
        times(
            SECTION, "sandboxed vs unsandboxed Bash tool call", medians["sandboxed"], "ns", medians["tool"],
            "unsandboxed call",
        ),
        info(SECTION, "added by the sandbox, per call", medians["sandboxed"] - medians["tool"], "ns"),
    ]  # fmt: skip
    return rows, {"batch": BATCH, "medians_ns": medians, "samples_ns": samples}
