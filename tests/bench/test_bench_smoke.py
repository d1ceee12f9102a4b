"""Smoke test of ``python -m bench``: every benchmark runs at tiny sizes and reports its structure.

No timing is asserted here (SPEC §10: figures are measured by hand, as same-run ratios, never in tests). The
peers (pluggy, strands-agents) come with the ``bench`` extra; without them the dispatch section says what it
could not measure instead of failing, and this test checks that too.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from bench.__main__ import main
from bench._client import PrebuiltClient, text_turn, tool_turn
from bench._measure import TINY
from bench._report import Row

from bench import dispatch_cost, loop_overhead, permissions, streaming

PEERS_INSTALLED = all(importlib.util.find_spec(name) is not None for name in ("pluggy", "strands"))


def _check_rows(rows: list[Row], section: str) -> None:
    assert rows, f"{section}: no rows"
    for row in rows:
        assert row.section, row
        assert row.measure, row
        assert row.value >= 0, row
        assert row.status in ("", "PASS", "MISS"), row
        if row.target:
            assert row.passed is not None, f"a row with a target must be judged: {row}"
        if row.baseline is not None:
            assert row.ratio is not None, row
            assert row.baseline_label, row


def _measures(rows: list[Row]) -> set[str]:
    return {row.measure for row in rows}


def test_dispatch_section_reports_every_hook_count_and_the_peers() -> None:
    rows, data = asyncio.run(dispatch_cost.run(TINY))
    _check_rows(rows, "dispatch")
    measures = _measures(rows)
    for measure in ("0 hooks", "1 sync hook", "1 async hook", "5 sync hooks", "5 async hooks"):
        assert measure in measures
    zero = next(r for r in rows if r.measure == "0 hooks: coroutines created per event")
    assert zero.value == 0, "dispatch with nobody listening created a coroutine"
    peer_rows = {m for m in measures if m.endswith(("vs pluggy", "vs strands"))}
    if PEERS_INSTALLED:
        assert len(peer_rows) == 10, peer_rows  # 0/1/5 sync, 1/5 async × pluggy, strands
    else:
        assert "not measured" in measures
    assert set(data) >= {"median_ns", "samples_ns", "frames_per_event"}


def test_dispatch_section_without_the_peers_says_what_it_did_not_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pluggy", "strands", "strands.hooks"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import name` raise ImportError
    rows, _ = asyncio.run(dispatch_cost.run(TINY))
    _check_rows(rows, "dispatch")
    assert not any(r.measure.endswith(("vs pluggy", "vs strands")) for r in rows)
    missing = next(r for r in rows if r.measure == "not measured")
    assert "pluggy is not installed" in missing.note
    assert "strands-agents is not installed" in missing.note


def test_streaming_section_compares_0_1_3_hooks_with_the_raw_generator() -> None:
    rows, data = asyncio.run(streaming.run(TINY))
    _check_rows(rows, "streaming")
    assert [r.measure for r in rows[1:4]] == ["0 hooks", "1 on_text_delta hook", "3 on_text_delta hooks"]
    assert rows[4].measure == "3 on_text_delta hooks vs none"
    assert rows[4].target == "≤ 1.3×"
    assert rows[5].measure == "iter_run stream: 3 on_text_delta hooks vs none"
    assert rows[5].target == "≤ 1.3×"
    assert rows[6].measure == "1 hook returning a new Continue() per delta"
    assert all(r.ratio_kind == "percent" for r in rows[1:4])
    assert data["deltas"] == TINY.deltas


def test_loop_section_reports_configurations_and_history_growth() -> None:
    rows, data = asyncio.run(loop_overhead.run(TINY))
    _check_rows(rows, "loop")
    sections = {r.section for r in rows}
    assert sections == {loop_overhead.SECTION, loop_overhead.GROWTH, loop_overhead.CONCURRENT}
    assert sum(1 for r in rows if r.section == loop_overhead.GROWTH) == 3
    concurrent = [r for r in rows if r.section == loop_overhead.CONCURRENT]
    assert [r.measure.split(": ")[1] for r in concurrent] == ["wall time per turn", "peak Python memory"]
    assert concurrent[1].value > 0
    assert concurrent[1].unit == "KiB"
    assert data["concurrent"]["runs"] == TINY.concurrent_runs  # type: ignore[index]
    assert set(data["growth_ns"]) == {"hand-written", "plain", "3 hooks + subscriber"}  # type: ignore[arg-type]


def test_handwritten_loop_does_the_same_work_as_the_worker() -> None:
    client = PrebuiltClient(loop_overhead.script(3))
    history = asyncio.run(loop_overhead.handwritten_loop(client, loop_overhead.RAW_TOOLS))
    assert history[-1] == ("assistant", "done")
    assert ("call_3_1", "ok") in history
    assert len(client.started) == 4


def test_prebuilt_client_events_are_well_formed() -> None:
    turn = text_turn(5)
    assert sum(1 for e in turn if type(e).__name__ == "TextDelta") == 5
    calls = tool_turn(7, ("a", "b"))
    assert [e.fragment for e in calls if type(e).__name__ == "ToolCallDelta"] == ['{"x": 7}', '{"x": 7}']


@pytest.mark.timeout(240)  # every section of the suite, in its quick sizes: ~20 s alone, a minute on a loaded machine
def test_command_prints_the_table_markdown_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["--tiny", "--markdown", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "measure" in printed
    assert "targets met" in printed
    assert "## Performance" in printed
    assert "python -m bench --tiny --markdown --json" in printed  # the invocation, in the header
    assert "Measured with `python -m bench --tiny` on" in printed  # what produced the figures
    report = json.loads(out.read_text(encoding="utf-8"))
    assert set(report) >= {"command", "machine", "rows", "sections", "markdown"}
    assert set(report["sections"]) == {
        "dispatch",
        "streaming",
        "loop",
        "interceptors",
        "command_hooks",
        "hook_processes",
        "sandbox",
        "permissions",
        "providers",
        "subagents",
    }
    statuses = {row["status"] for row in report["rows"]}
    assert statuses <= {"", "PASS", "MISS"}
    assert any(row["target"] for row in report["rows"])


def test_permissions_section_times_a_1kb_command_against_the_target() -> None:
    rows, data = asyncio.run(permissions.run(TINY))
    _check_rows(rows, "permissions")
    assert [r.measure for r in rows] == [
        "first decision (parse + analysis + rules)",
        "repeated decision (analysis cached)",
        "first decision beyond the parse",
        "  ↳ analysis beyond the parse",
        "  ↳ rules and files beyond the analysis",
        "first decision, memos cold",
        "tree-sitter parse alone",
    ]
    assert rows[0].target == rows[1].target == "≤ 200.00 µs"
    assert data["characters"] == len(permissions.COMMAND) == 1000
    assert data["behavior"] == "allow"  # every subcommand of the realistic command is covered by a rule


def test_hook_processes_section_measures_the_round_trip_and_checks_for_leaks() -> None:
    from bench import hook_processes

    rows, data = asyncio.run(hook_processes.run(TINY))
    _check_rows(rows, "hook processes")
    targets = {row.measure: row.target for row in rows if row.target}
    assert targets["1 persistent hook, round trip through run_all"] == "≤ 200.00 µs"
    leak = data["leak"]
    assert isinstance(leak, dict)
    assert leak["children"] <= 0  # the pool's processes were all stopped and reaped
    assert leak["fds"] <= 0
