"""`hookloop serve` as a command: what it prints, what it refuses (one line, exit 2), and a CheckpointDirStore that
a restarted server reads the same way; two approvals of one pause at once: exactly one wins."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from inbox_helpers import HOOKLOOP, Project, Server

from hookloop import Approve
from hookloop.durable import CheckpointDirStore, PauseConsumed, RunNotFound, StaleDecision


def refused(project: Project, *args: str) -> str:
    out = subprocess.run(
        [*HOOKLOOP, "serve", *args], capture_output=True, text=True, env=project.env, cwd=project.root, timeout=60
    )
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("hookloop: ")
    return lines[0]


def test_serve_prints_a_loopback_address_with_a_fresh_token(server: Server) -> None:
    token = server.url.split("?token=")[1]
    assert len(token) >= 32
    assert httpx.get(server.base + "/runs").status_code == 403
    response = httpx.get(server.url, follow_redirects=True)
    assert response.status_code == 200
    assert "<h1>Runs</h1>" in response.text


def test_a_second_server_has_another_token(server: Server, project: Project) -> None:
    other = subprocess.Popen(
        [*HOOKLOOP, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, env=project.env, cwd=project.root
    )
    try:
        assert other.stdout is not None
        other.stdout.readline()
        address = other.stdout.readline().strip()
        assert address.split("?token=")[1] != server.url.split("?token=")[1]
        assert httpx.get(server.base + "/runs?token=" + address.split("?token=")[1]).status_code == 403
    finally:
        other.terminate()
        other.wait(timeout=20)
        other.stdout.close()  # type: ignore[union-attr]


def test_usage_errors_are_one_line(project: Project, tmp_path: Path) -> None:
    assert "cannot be used together" in refused(project, "--durable", "default", "--checkpoint-dir", str(tmp_path))
    assert "--durable ftp://x" in refused(project, "--durable", "ftp://x")
    assert "--permission-mode" in refused(project, "--permission-mode", "yolo")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert "cannot listen on 127.0.0.1" in refused(project, "--port", str(port))


def test_a_restarted_store_knows_how_runs_it_continued_ended(project: Project) -> None:
    finished = project.pause("touch f.marker")
    cancelled = project.pause("touch c.marker")

    async def first() -> None:
        store = CheckpointDirStore(project.checkpoints)
        await store.approve(finished, {"call_0001": Approve()})
        await store.cancel(cancelled)
        await store.wait_idle()
        await store.close()

    async def later() -> dict[str, str]:
        store = CheckpointDirStore(project.checkpoints)
        return {r.run_id: r.status for r in await store.list_runs()}

    asyncio.run(first())
    statuses = asyncio.run(later())
    assert statuses[cancelled] == "cancelled"
    assert statuses[finished] == "finished"
    assert (project.root / "f.marker").exists()
    assert not (project.root / "c.marker").exists()


def test_two_approvals_of_one_pause_at_once_exactly_one_wins(project: Project) -> None:
    run_id = project.pause("touch once.marker")

    async def race() -> list[object]:
        stores = [CheckpointDirStore(project.checkpoints), CheckpointDirStore(project.checkpoints)]
        results = await asyncio.gather(
            *(s.approve(run_id, {"call_0001": Approve()}) for s in stores), return_exceptions=True
        )
        for store in stores:
            await store.wait_idle()
        return results

    results = asyncio.run(race())
    assert sorted(type(r).__name__ for r in results) == ["NoneType", "PauseConsumed"]
    assert (project.root / "once.marker").exists()


def test_the_store_refuses_what_it_cannot_decide(project: Project) -> None:
    run_id = project.pause("touch a")

    async def check() -> None:
        store = CheckpointDirStore(project.checkpoints)
        with pytest.raises(RunNotFound):
            await store.get_run("../../etc/passwd")
        with pytest.raises(StaleDecision, match="missing"):
            await store.approve(run_id, {})
        with pytest.raises(StaleDecision, match="not a pending call"):
            await store.approve(run_id, {"call_0001": Approve(), "call_9": Approve()})
        with pytest.raises(StaleDecision, match="no longer the current one"):
            await store.approve(run_id, {"call_0001": Approve()}, pause_id="0" * 32)
        detail = await store.get_run(run_id)
        assert detail.status == "paused"
        assert detail.pause_id is not None
        assert detail.workspace == str(project.root)
        await store.cancel(run_id)
        with pytest.raises(PauseConsumed):
            await store.approve(run_id, {"call_0001": Approve()}, pause_id=detail.pause_id)

    asyncio.run(check())
