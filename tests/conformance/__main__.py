"""``scripts/conformance [--strict] [-v] [NAME ...]``: replay every recording and print one row per recording.

Verdicts: PASS; FAIL (fails the run); KNOWN (fails for a reason marked in ``scenarios.KNOWN_FAILING``, does not
fail the run); FIXED (marked known-failing but passes: remove the mark; fails the run under ``--strict``).
Every difference of a failing recording is printed under the table (``-v``: of passing ones too, their notes).
Exit status: 0 when nothing FAILs, 1 otherwise, 2 when no recording was found.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence

from conformance.harness import Result, run_recording
from conformance.recording import load, recording_dirs, recording_paths

PER_RECORDING_SECONDS = 120


def _table(results: list[Result]) -> str:
    width = max(len(r.name) for r in results)
    lines = [f"{'recording':<{width}}  {'api':<9}  {'reqs':<5}  verdict"]
    for r in results:
        extra = f"  ({r.known})" if r.known else ""
        synth = "  [synth]" if r.synthesised else ""
        lines.append(f"{r.name:<{width}}  {r.api:<9}  {r.requests:<5}  {r.verdict}{extra}{synth}")
    return "\n".join(lines)


async def _run_all(names: Sequence[str]) -> list[Result]:
    results = []
    for path in recording_paths():
        if names and path.stem not in names:
            continue
        try:
            results.append(await asyncio.wait_for(run_recording(load(path)), PER_RECORDING_SECONDS))
        except TimeoutError:
            failed = Result(path.stem, "?", "-")
            failed.diffs.append(f"the replay did not end within {PER_RECORDING_SECONDS} s")
            results.append(failed)
        except Exception as exc:  # a broken recording or a harness bug: a FAIL row, the others still run
            failed = Result(path.stem, "?", "-")
            failed.diffs.append(f"harness error: {type(exc).__name__}: {exc}")
            results.append(failed)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/conformance", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only these recordings (file stems)")
    parser.add_argument("--strict", action="store_true", help="a FIXED recording (stale known-failing mark) fails")
    parser.add_argument("-v", "--verbose", action="store_true", help="print notes of passing recordings too")
    args = parser.parse_args(argv)
    dirs = recording_dirs()
    print("recordings from: " + ", ".join(str(d) for d in dirs))
    started = time.perf_counter()
    results = asyncio.run(_run_all(args.names))
    if not results:
        print("no recordings found")
        return 2
    print(_table(results))
    for r in results:
        if r.diffs or (args.verbose and r.note):
            print(f"\n{r.verdict} {r.name}" + (f" — {r.note}" if r.note else ""))
            for line in r.diffs:
                print(f"  - {line}")
    counts = {v: sum(1 for r in results if r.verdict == v) for v in ("PASS", "FAIL", "KNOWN", "FIXED")}
    print(
        f"\n{len(results)} recordings in {time.perf_counter() - started:.1f} s: "
        + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    )
    if counts["FIXED"]:
        print("FIXED recordings pass: remove their marks from tests/conformance/scenarios.py KNOWN_FAILING")
    failed = counts["FAIL"] or (args.strict and counts["FIXED"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
