"""``python -m bench [--quick] [--json FILE] [--markdown] [--only SECTION ...]`` — run from the repository root.

Prints one table of every figure with its same-run baseline, ratio, SPEC §10 target and PASS/MISS. ``--quick``
does fewer iterations and repeats (a smoke check of the figures, noisier); ``--json`` saves the rows and raw
samples; ``--markdown`` also prints the README performance block. Exit status is 0 even when targets are missed:
this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bench import (
    command_hooks,
    dispatch_cost,
    durable,
    hook_processes,
    interceptors,
    loop_overhead,
    permissions,
    provider_stream,
    sandbox,
    streaming,
    subagents,
    temporal,
)
from bench._measure import FULL, QUICK, TINY, Sizes
from bench._report import Row, render_markdown, render_table

SectionRun = Callable[[Sizes], Awaitable[tuple[list[Row], dict[str, object]]]]
SECTIONS: dict[str, SectionRun] = {
    "dispatch": dispatch_cost.run,
    "streaming": streaming.run,
    "loop": loop_overhead.run,
    "interceptors": interceptors.run,
    "command_hooks": command_hooks.run,
    "hook_processes": hook_processes.run,
    "sandbox": sandbox.run,
    "permissions": permissions.run,
    "providers": provider_stream.run,
    "subagents": subagents.run,
    "durable": durable.run,
    "temporal": temporal.run,
}
OPT_IN = ("durable", "temporal")
"""Sections run only when named with --only (minutes, a PostgreSQL server or a Temporal dev server, worker
processes)."""
DEFAULT_SECTIONS = [name for name in SECTIONS if name not in OPT_IN]


def machine() -> str:
    cpus = os.cpu_count() or 0
    return (
        f"{platform.system()} {platform.machine()}, {cpus} CPU{'s' if cpus != 1 else ''}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


async def run_sections(sizes: Sizes, names: Sequence[str]) -> tuple[list[Row], dict[str, object]]:
    rows: list[Row] = []
    data: dict[str, object] = {}
    for name in names:
        started = time.perf_counter()
        section_rows, section_data = await SECTIONS[name](sizes)
        section_data["seconds"] = round(time.perf_counter() - started, 2)
        rows += section_rows
        data[name] = section_data
    return rows, data


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats (noisier)")
    parser.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)  # the smoke test's sizes
    parser.add_argument("--json", metavar="FILE", type=Path, help="save rows, raw samples and context as JSON")
    parser.add_argument("--markdown", action="store_true", help="also print the README performance block")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(SECTIONS),
        default=DEFAULT_SECTIONS,
        metavar="SECTION",
        help=f"sections to run (default: all but {', '.join(OPT_IN)}, which run only when named)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    sizes = TINY if args.tiny else QUICK if args.quick else FULL
    invocation = shlex.join(["python", "-m", "bench", *(sys.argv[1:] if argv is None else argv)])
    print(f"{invocation}  —  {machine()}  —  sizes: {sizes.name}", flush=True)
    # What produced the figures: the flags that change the measurement (not --json / --markdown).
    command = "python -m bench" + {"tiny": " --tiny", "quick": " --quick", "full": ""}[sizes.name]
    if args.only != DEFAULT_SECTIONS:
        command += " --only " + " ".join(args.only)
    started = time.perf_counter()
    rows, data = asyncio.run(run_sections(sizes, args.only))
    print(render_table(rows))
    missed = [f"{r.measure} ({r.section.split(' (')[0]})" for r in rows if r.passed is False]
    judged = sum(1 for r in rows if r.passed is not None)
    print(f"\n{judged - len(missed)} of {judged} targets met in {time.perf_counter() - started:.1f} s", end="")
    print(f"; missed: {'; '.join(missed)}" if missed else "")
    dispatch_data = data.get("dispatch", {})
    peers = dispatch_data.get("peers", []) if isinstance(dispatch_data, dict) else []
    installed = [p for p in peers if "not installed" not in p]
    markdown = render_markdown(rows, command=command, machine=machine(), peers=installed)
    if args.markdown:
        print("\n" + markdown)
    if args.json is not None:
        report = {
            "command": command,
            "invocation": invocation,
            "machine": machine(),
            "sizes": sizes.name,
            "rows": [r.to_json() for r in rows],
            "sections": data,
            "markdown": markdown,
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
