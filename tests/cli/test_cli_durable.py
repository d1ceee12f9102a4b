"""``hookloop run --durable``, ``hookloop worker`` and ``hookloop runs …`` as real subprocesses on a real SQLite
database (the DBOS backend): a run pauses and no process waits; ``runs list/show`` see it from another process;
``runs approve/deny`` from a third while ``hookloop worker`` runs in a fourth, which finishes it; a second
decision of the same pause is refused in one line; cancel; continue a finished run; ``--format json``.

Every process a test starts is stopped by its PID and checked gone. Waiting for a run to end uses the backend's
own ``wait`` (the library API), never a sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookloop import Approve
from hookloop.durable import RunRecord
from hookloop.durable.dbos import DBOSBackend

# Real CLI processes on a durable store: a loaded machine (four test workers on two cores) needs more than 60 s.
pytestmark = pytest.mark.timeout(180)

CLI = "import sys; from hookloop.cli import main; sys.argv[0] = 'hookloop'; main()"
RUN_ID = re.compile(r"^run_[0-9a-f]+$")

WRITE_SCRIPT = {
    "turns": [
        {
            "blocks": [
                {"text": "I will write a file."},
                {"tool": "Write", "arguments": {"file_path": "out.txt", "content": "hello\n"}, "call_id": "w1"},
            ]
        },
        {"blocks": [{"text": "Done."}]},
        {"blocks": [{"text": "Continued."}]},
    ]
}


class Project:
    """A project folder, its scripted model, the database URL and the environment the CLI runs in."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.dir = tmp_path / "project"
        self.dir.mkdir()
        self.script = tmp_path / "script.json"
        self.script.write_text(json.dumps(WRITE_SCRIPT))
        self.url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
        self.env = {**env, "HOOKLOOP_DBOS_LOG_LEVEL": "ERROR"}
        self.started: list[subprocess.Popen[bytes]] = []

    def cli(self, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-c", CLI, *args],
            env=self.env,
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=50,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if check is not None:
            assert done.returncode == check, (done.returncode, done.stdout, done.stderr)
        return done

    def runs(self, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
        return self.cli("runs", *args, "--db", self.url, check=check)

    def start_paused(self) -> str:
        done = self.cli("run", "--durable", self.url, "write hello", "-m", f"scripted:{self.script}", check=3)
        run_id = done.stdout.splitlines()[0]
        assert RUN_ID.match(run_id), done.stdout
        assert "paused" in done.stderr, done.stderr
        assert "w1" in done.stderr, done.stderr
        return run_id

    def worker(self) -> subprocess.Popen[bytes]:
        """``hookloop worker URL``, returned once it says it is executing runs."""
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "worker", self.url],
            env=self.env,
            cwd=self.dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.started.append(proc)
        assert proc.stderr is not None
        seen = b""
        while b"executing runs" not in seen:
            readable, _, _ = select.select([proc.stderr], [], [], 40)
            assert readable, f"hookloop worker did not start: {seen!r}"
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"hookloop worker exited: {seen!r} (rc {proc.wait()})"
            seen += chunk
        return proc

    def wait(self, run_id: str) -> RunRecord:
        async def main() -> RunRecord:
            backend = DBOSBackend(self.url)
            try:
                return await backend.wait(run_id, timeout=45)
            finally:
                await backend.close()

        return asyncio.run(main())

    def stop_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()
        left = [p.pid for p in self.started if p.poll() is None]
        assert not left, f"processes left running: {left}"


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Iterator[Project]:
    p = Project(tmp_path, env)
    try:
        yield p
    finally:
        p.stop_all()


def listed(project: Project) -> list[dict[str, Any]]:
    data = json.loads(project.runs("list", "--format", "json").stdout)
    assert isinstance(data, list)
    return data


def backend_call(project: Project, method: str, *args: Any, **kwargs: Any) -> Any:
    """A RunStore call made in this process (setup or a check that is not the CLI under test)."""

    async def main() -> Any:
        backend = DBOSBackend(project.url)
        try:
            return await getattr(backend, method)(*args, **kwargs)
        finally:
            await backend.close()

    return asyncio.run(main())


def project_history(project: Project, run_id: str) -> list[dict[str, Any]]:
    return [dict(i) for i in backend_call(project, "get_run", run_id).history]


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_a_durable_run_pauses_and_other_processes_list_and_show_it(project: Project) -> None:
    run_id = project.start_paused()
    assert not (project.dir / "out.txt").exists()
    [row] = listed(project)
    assert row["run_id"] == run_id
    assert row["status"] == "paused"
    assert row["worker"] == "hookloop-cli"
    assert [(c["call_id"], c["tool"], c["arguments"]) for c in row["pending"]] == [
        ("w1", "Write", {"file_path": "out.txt", "content": "hello\n"})
    ]
    assert row["pause_id"]
    assert row["prompt"] == "write hello"
    assert row["age_seconds"] >= 0

    table = project.runs("list").stdout
    assert re.search(rf"{run_id}\s+paused\s+1 \(Write\)\s+\d+[smhd]\s+1\s+write hello", table), table

    shown = project.runs("show", run_id).stdout
    assert "paused" in shown
    assert re.search(r"w1\s+Write .*out\.txt", shown), shown
    assert f"hookloop runs approve {run_id}" in shown


def test_approve_from_another_process_while_a_worker_runs_and_a_second_approval_is_refused(project: Project) -> None:
    run_id = project.start_paused()
    worker = project.worker()
    project.runs("approve", run_id, "w1")
    record = project.wait(run_id)
    assert record.status == "finished", record
    assert (project.dir / "out.txt").read_text() == "hello\n"
    assert "already decided" in one_line(project.runs("approve", run_id, "w1", check=1))
    results = [i for i in project_history(project, run_id) if i["type"] == "tool_result"]
    assert len(results) == 1, results
    assert not results[0].get("is_error"), results
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=30) == 0


def test_deny_with_a_reason_and_json_output(project: Project) -> None:
    run_id = project.start_paused()
    worker = project.worker()
    done = project.runs("deny", run_id, "--all", "--reason", "not in this repo", "--format", "json")
    answer = json.loads(done.stdout)
    assert answer["run_id"] == run_id
    assert answer["decisions"] == {"w1": {"decision": "deny", "reason": "not in this repo"}}
    assert project.wait(run_id).status == "finished"
    assert not (project.dir / "out.txt").exists()
    shown = json.loads(project.runs("show", run_id, "--format", "json").stdout)
    assert shown["status"] == "finished"
    assert shown["text"] == "Done."
    assert shown["pending"] == []
    [result] = [i for i in shown["history"] if i.get("type") == "tool_result"]
    assert result["is_error"], result
    assert "not in this repo" in json.dumps(result), result
    assert shown["events"], "the timeline is part of show --format json"
    worker.send_signal(signal.SIGINT)  # Ctrl-C stops a worker as cleanly as SIGTERM
    assert worker.wait(timeout=30) == 0


def test_refusals_name_the_pending_calls(project: Project) -> None:
    started = project.cli(
        "run",
        "--durable",
        project.url,
        "write hello",
        "-m",
        f"scripted:{project.script}",
        "--output-format",
        "json",
        check=3,
    )
    [result] = [json.loads(line) for line in started.stdout.splitlines()]
    assert result["type"] == "result"
    assert result["status"] == "paused"
    assert [c["call_id"] for c in result["pending"]] == ["w1"]
    run_id = result["run_id"]
    unnamed = one_line(project.runs("approve", run_id, check=2))
    assert "w1" in unnamed
    assert "--all" in unnamed
    stale = one_line(project.runs("approve", run_id, "nope", check=1))
    assert "nope" in stale
    assert "not pending" in stale
    assert "w1" in stale
    assert "not the current" in one_line(project.runs("approve", run_id, "w1", "--pause", "0-old", check=1))


def test_approve_with_an_edited_input(project: Project) -> None:
    run_id = project.start_paused()
    assert "schema" in one_line(project.runs("approve", run_id, "w1", "--input", '{"file_path": 3}', check=1))
    edited = json.dumps({"file_path": "out.txt", "content": "edited\n"})
    project.runs("approve", run_id, "w1", "--input", edited)
    project.worker()
    assert project.wait(run_id).status == "finished"
    assert (project.dir / "out.txt").read_text() == "edited\n"


def test_cancel_a_paused_run_from_another_process(project: Project) -> None:
    run_id = project.start_paused()
    cancelled = json.loads(project.runs("cancel", run_id, "--format", "json").stdout)
    assert cancelled == {"run_id": run_id, "status": "cancelled", "was": "paused", "cancelled": True}
    assert "already ended" in project.runs("cancel", run_id).stderr
    only = json.loads(project.runs("list", "--status", "cancelled", "--format", "json").stdout)
    assert [r["run_id"] for r in only] == [run_id]
    [result] = [i for i in project_history(project, run_id) if i["type"] == "tool_result"]
    assert result["is_error"], result  # the call that waited gets one result: not executed


def test_resume_continues_a_finished_run_with_a_new_prompt(project: Project) -> None:
    run_id = project.start_paused()
    refused = one_line(project.runs("resume", run_id, "--message", "again", check=1))
    assert "is paused" in refused
    assert "approve" in refused
    record = backend_call(project, "get_run", run_id)
    backend_call(project, "approve", run_id, {"w1": Approve()}, pause_id=record.pause_id)
    project.worker()
    assert project.wait(run_id).status == "finished"
    project.runs("resume", run_id, "--message", "and now?")
    assert project.wait(run_id).status == "finished"
    shown = backend_call(project, "get_run", run_id)
    assert shown.text == "Continued."
    users = [json.dumps(dict(i)) for i in shown.history if i.get("role") == "user"]
    assert any("and now?" in t for t in users), users


def test_run_durable_executes_its_own_run_and_leaves_the_queued_ones_to_the_workers(project: Project) -> None:
    other = backend_call(project, "start", "someone else's", worker="an-app-the-cli-does-not-know")
    run_id = project.start_paused()
    assert backend_call(project, "get_run", other).status == "queued"  # not taken, so not failed for its factory
    assert backend_call(project, "get_run", run_id).status == "paused"


def test_bad_database_urls_are_one_line_errors_without_credentials(project: Project) -> None:
    for args in (
        ("runs", "list", "--db", "mysql://u:secret@h/db"),
        ("worker", "ftp://u:secret@x"),
        ("run", "--durable", "redis://u:secret@x", "hi", "-m", f"scripted:{project.script}"),
    ):
        line = one_line(project.cli(*args, check=2))
        assert "secret" not in line, line
        assert "expected sqlite:///" in line, line


def test_bad_flags_and_unknown_runs_are_one_line_errors(project: Project) -> None:
    assert "sleeping" in one_line(project.runs("list", "--status", "sleeping", check=2))
    assert "yaml" in one_line(project.runs("list", "--format", "yaml", check=2))
    assert "JSON object" in one_line(project.runs("approve", "run_0", "w1", "--input", "[1, 2]", check=2))
    assert "no such run" in one_line(project.runs("show", "run_0000", check=2))


def test_ctrl_c_at_the_terminal_cancels_the_durable_run_it_is_executing(project: Project, tmp_path: Path) -> None:
    fifo = tmp_path / "started.fifo"
    os.mkfifo(fifo)
    command = f"echo started > {fifo}; exec sleep 40"
    script = tmp_path / "slow.json"
    script.write_text(
        json.dumps({"turns": [{"blocks": [{"tool": "Bash", "arguments": {"command": command}, "call_id": "b1"}]}]})
    )
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    keep = os.open(fifo, os.O_WRONLY)  # no end-of-file before the command writes
    args = [sys.executable, "-c", CLI, "run", "--durable", project.url, "go", "-m", f"scripted:{script}", "--yes"]
    master, slave = os.openpty()
    # setsid --ctty: a new session whose controlling terminal is the pty, as a shell's job would have.
    proc = subprocess.Popen(
        ["setsid", "--ctty", *args], stdin=slave, stdout=slave, stderr=slave, cwd=project.dir, env=project.env
    )
    os.close(slave)
    project.started.append(proc)
    try:
        readable, _, _ = select.select([reader], [], [], 45)
        assert readable, "the Bash call never started"
        os.write(master, b"\x03")  # Ctrl-C at the terminal: SIGINT to the foreground process group
        output = b""
        while True:
            ready, _, _ = select.select([master], [], [], 45)
            assert ready, f"no exit after Ctrl-C: {output!r}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        assert proc.wait(timeout=30) == 130, output
        run_id = re.search(rb"run_[0-9a-f]+", output)
        assert run_id, output
        record = project.wait(run_id.group().decode())
        assert record.status == "cancelled", record
        [result] = [i for i in project_history(project, record.run_id) if i["type"] == "tool_result"]
        assert result["is_error"], result  # one result for the interrupted call
    finally:
        for fd in (reader, keep, master):
            os.close(fd)
    sleepers = subprocess.run(["pgrep", "-f", command], capture_output=True, text=True, check=False)
    assert sleepers.stdout.strip() == "", "the Bash command outlived the cancelled run"
