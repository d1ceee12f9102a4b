"""``hookloop runs …`` on a Temporal server (``--db temporal://HOST:PORT/NAMESPACE``): real CLI subprocesses against
the dev server, the run executed by a real worker process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from durable_temporal.temporal_kit import Procs
from hookloop.durable.temporal import TemporalBackend

# Real servers and worker processes: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


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


SCRIPT = {
    "turns": [
        {
            "blocks": [
                {"text": "I will write a file."},
                {"tool": "Write", "arguments": {"file_path": "out.txt", "content": "hello\n"}, "call_id": "w1"},
            ]
        },
        {"blocks": [{"text": "Done."}]},
    ]
}


def test_hookloop_run_durable_on_temporal_pauses_and_a_hookloop_worker_finishes_it(procs: Procs) -> None:
    project = procs.workdir / "project"
    project.mkdir()
    script = procs.workdir / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = procs.env() | {"COLUMNS": "200"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from hookloop.cli import main; main()", *args],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=55,
            check=False,
        )

    done = cli("run", "--durable", procs.url, "write hello", "-m", f"scripted:{script}")
    assert done.returncode == 3, done.stdout + done.stderr  # paused: Write asks in the default mode
    assert not (project / "out.txt").exists()
    listed = json.loads(cli("runs", "list", "--db", procs.url, "--format", "json").stdout)
    (run,) = [r for r in listed if r["status"] == "paused"]
    worker = subprocess.Popen(
        [sys.executable, "-c", "from hookloop.cli import main; main()", "worker", procs.url],
        env=env,
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    procs.started.append(worker)  # SIGKILLed and checked gone by the fixture
    approved = cli("runs", "approve", run["run_id"], "--all", "--db", procs.url)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    waited = cli("runs", "show", run["run_id"], "--db", procs.url, "--format", "json")
    assert waited.returncode == 0, waited.stderr
    backend = TemporalBackend(procs.url)
    import asyncio

    record = asyncio.run(backend.wait(run["run_id"], timeout=40))
    assert record.status == "finished", record
    assert (project / "out.txt").read_text() == "hello\n"
