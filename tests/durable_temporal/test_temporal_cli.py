"""``hookloop runs …`` on a Temporal server (``--db temporal://HOST:PORT/NAMESPACE``): real CLI subprocesses against
the dev server, the run executed by a real worker process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from durable_temporal.temporal_kit import Procs
from hookloop.durable.temporal import TemporalBackend

pytestmark = pytest.mark.anyio


def hookloop(procs: Procs, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from hookloop.cli import main; main()", *args],
        env=procs.env() | {"COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )


async def test_runs_list_show_and_approve_on_temporal(procs: Procs) -> None:
    procs.queue = "hookloop"  # the CLI opens the backend with the default task queue
    procs.worker()
    backend = TemporalBackend(procs.url, task_queue=procs.queue, heartbeat_timeout=procs.heartbeat)
    run_id = await backend.start("go", worker="app", options={"dir": str(procs.workdir), "ask": True})
    record = await backend.wait(run_id, timeout=40)
    assert record.status == "paused", record
    listed = hookloop(procs, "runs", "list", "--db", procs.url, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert run_id in [r["run_id"] for r in runs]
    shown = hookloop(procs, "runs", "show", run_id, "--db", procs.url, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "paused"
    approved = hookloop(procs, "runs", "approve", run_id, "--all", "--db", procs.url)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert (await backend.wait(run_id, timeout=40)).status == "finished"
    again = hookloop(procs, "runs", "approve", run_id, "--all", "--db", procs.url)
    assert again.returncode != 0
    missing = hookloop(procs, "runs", "show", "run-nope", "--db", procs.url)
    assert missing.returncode == 2
    assert "no such run" in missing.stderr


def test_a_bad_temporal_url_is_one_line(procs: Procs) -> None:
    done = hookloop(procs, "runs", "list", "--db", "temporal://localhost:notaport/default")
    assert done.returncode == 2
    assert "port" in done.stderr
    assert "Traceback" not in done.stderr
