"""Fixtures of the durable tests: the database (a SQLite file, or a database on a real PostgreSQL server this
session starts) and the worker processes a test starts (killed by PID at the end, checked gone).

PostgreSQL: the server binaries come from Debian's ``postgresql`` package (``.ci/run`` installs it); without them
the PostgreSQL tests fail, they are never skipped. The server runs as the unprivileged ``postgres`` user (root
cannot run it) from a fresh data directory, on a free port on 127.0.0.1, and is stopped at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from durable.durable_kit import PgServer, Procs, free_port, pg_bin


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    bindir = pg_bin()
    root = Path(tempfile.mkdtemp(prefix="hookloop-pg-"))
    datadir = root / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        user = "postgres"
        pw = pwd.getpwnam(user)
        os.chown(root, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", user, "--"]
    port = free_port()
    init = [*as_user, str(bindir / "initdb"), "-D", str(datadir), "-U", "postgres", "-A", "trust", "-E", "UTF8"]
    subprocess.run(init, check=True, capture_output=True)
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
    ctl = [*as_user, str(bindir / "pg_ctl"), "-D", str(datadir)]
    subprocess.run([*ctl, "-o", options, "-l", str(root / "log"), "-w", "start"], check=True, capture_output=True)
    server = PgServer(port=port, datadir=datadir, as_user=as_user, bindir=bindir)
    try:
        yield server
    finally:
        subprocess.run([*ctl, "-m", "immediate", "-w", "stop"], check=False, capture_output=True)
        pid_file = datadir / "postmaster.pid"
        assert not pid_file.exists(), "the PostgreSQL server did not stop"
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'durable.sqlite'}"
    server: PgServer = request.getfixturevalue("pg_server")
    name = f"t_{uuid.uuid4().hex[:12]}"
    server.psql(f"CREATE DATABASE {name}")
    return server.url(name)


@pytest.fixture
def procs(db_url: str, tmp_path: Path) -> Iterator[Procs]:
    folder = tmp_path / "app"
    folder.mkdir()
    running = Procs(url=db_url, folder=folder)
    running.open_fifo()
    try:
        yield running
    finally:
        running.close()
