"""The inbox over the DBOS backend (`hookloop serve --durable URL`): a real worker process executes the runs, a
real `hookloop serve` process shows them and takes the decisions, nothing in between is faked. The database is
SQLite under the test's tmp dir."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from inbox_helpers import HOOKLOOP, XSS, Project

APP = str(Path(__file__).with_name("inbox_dbos_app.py"))


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'durable.sqlite'}"


@pytest.fixture
def worker(project: Project, url: str) -> Iterator[subprocess.Popen[str]]:
    """A worker process executing the durable runs."""
    process = subprocess.Popen(
        [sys.executable, APP, "serve", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=project.env
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "serving"
        yield process
    finally:
        stop(process)


@pytest.fixture
def inbox(project: Project, url: str, worker: subprocess.Popen[str]) -> Iterator[httpx.Client]:
    """`hookloop serve --durable URL`, and a client that presents its token."""
    process = subprocess.Popen(
        [*HOOKLOOP, "serve", "--durable", url, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=project.env,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("hookloop inbox for ")
        address = process.stdout.readline().strip()
        base, token = address.split("/runs?token=")
        with httpx.Client(base_url=base, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
            yield client
    finally:
        stop(process)


def start(project: Project, url: str, prompt: str) -> str:
    out = subprocess.run(
        [sys.executable, APP, "start", url, prompt], capture_output=True, text=True, env=project.env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "paused"
    return str(result["run_id"])


def hidden(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(csrf|pause_id)" value="([^"]*)">', page))


def finish(client: httpx.Client, run_id: str) -> str:
    with client.stream("GET", f"/runs/{run_id}/events?after=0") as response:
        text = "".join(response.iter_text())
    ended = re.findall(r"event: end\ndata: (\w+)", text)
    assert ended, text
    return ended[-1]


def test_approve_a_durable_run_from_the_inbox_and_a_worker_process_finishes_it(
    project: Project, url: str, inbox: httpx.Client
) -> None:
    run_id = start(project, url, XSS)
    runs = inbox.get("/runs?status=paused").text
    assert run_id in runs
    page = inbox.get(f"/runs/{run_id}").text
    assert "echo needs a person" in page
    assert "Allow always: <code>echo</code>" in page  # a tool whose rule does not depend on the directory
    assert "<script>window" not in page
    fields = {**hidden(page), "action:c1": "approve"}
    response = inbox.post(f"/runs/{run_id}/decide", data=fields, follow_redirects=False)
    assert response.status_code == 303
    assert finish(inbox, run_id) == "finished"
    done = inbox.get(f"/runs/{run_id}").text
    assert 'class="badge finished"' in done
    assert "done: " in done
    assert "&lt;script&gt;window.__xss=&#39;script&#39;&lt;/script&gt;" in done
    assert "<script>window" not in done
    again = inbox.post(f"/runs/{run_id}/decide", data=fields, follow_redirects=False)
    assert again.status_code == 409
    assert "already decided" in again.text


def test_deny_cancel_and_a_schema_check_on_a_durable_run(project: Project, url: str, inbox: httpx.Client) -> None:
    run_id = start(project, url, "deny me")
    page = inbox.get(f"/runs/{run_id}").text
    bad = {**hidden(page), "action:c1": "edit", "input:c1": '{"text": 5}'}
    refused = inbox.post(f"/runs/{run_id}/decide", data=bad, follow_redirects=False)
    assert refused.status_code == 409
    assert "schema" in refused.text
    deny = {**hidden(page), "action:c1": "deny", "reason:c1": "not this one"}
    assert inbox.post(f"/runs/{run_id}/decide", data=deny, follow_redirects=False).status_code == 303
    assert finish(inbox, run_id) == "finished"
    assert "not this one" in inbox.get(f"/runs/{run_id}").text
    other = start(project, url, "cancel me")
    page = inbox.get(f"/runs/{other}").text
    cancelled = inbox.post(f"/runs/{other}/cancel", data={"csrf": hidden(page)["csrf"]}, follow_redirects=False)
    assert cancelled.status_code == 303
    assert 'class="badge cancelled"' in inbox.get(f"/runs/{other}").text
    assert other in inbox.get("/runs?status=cancelled").text
