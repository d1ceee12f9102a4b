"""Section "providers": hookloop's client stream over a loopback SSE reply vs the raw official SDK stream over
the same reply, both in the same run, alternating (the measurement is :mod:`bench.providers.bench_stream`,
also runnable alone). Per API (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses): the median ns per
text delta of each, and the ratio. Target (issue 11): the provider layer stays ≤ 1.3× the raw SDK stream.
"""

from __future__ import annotations

from bench._measure import Sizes
from bench._report import Row, times
from bench.providers.bench_stream import run_bench

SECTION = "providers (client stream vs raw SDK stream, loopback SSE)"


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    # The SDKs parse every event into their own types: a stream of deltas/25 text deltas keeps the section
    # as long as the streaming one.
    deltas = max(100, sizes.deltas // 25)
    repeats = max(3, sizes.stream_repeats)
    results = await run_bench(deltas, repeats)
    rows = [
        times(
            SECTION,
            f"{r['api']}: client per text delta ({deltas:,} a stream)",
            r["client_us_per_delta"] * 1000,
            "ns",
            r["raw_us_per_delta"] * 1000,
            "raw SDK stream",
            at_most=1.3,
        )
        for r in results
    ]
    return rows, {"deltas": deltas, "repeats": repeats, "results": results}
