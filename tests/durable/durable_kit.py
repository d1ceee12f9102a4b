"""What the durable tests share: worker processes started and killed by PID, the readiness FIFO a child writes
to, and the PostgreSQL server (see conftest.py)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP = HERE / "durable_app.py"
SRC = HERE.parents[1] / "src"


def pg_bin() -> Path:
    env = os.environ.get("HOOKLOOP_PG_BIN")
    candidates = [Path(env)] if env else sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for candidate in candidates:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError(
        "PostgreSQL server binaries not found (initdb, pg_ctl): install Debian's postgresql package "
        "(.ci/run does) or set HOOKLOOP_PG_BIN"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    port: int
    datadir: Path
    as_user: list[str]
    bindir: Path

    def dump(self, database: str) -> bytes:
        """Everything in ``database`` (pg_dump, data included)."""
        return subprocess.run(
            [
                *self.as_user,
                str(self.bindir / "pg_dump"),
                *("-h", "127.0.0.1", "-p", str(self.port)),
                "-U",
                "postgres",
                database,
            ],
            check=True,
            capture_output=True,
        ).stdout

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str) -> None:
        subprocess.run(
            [
                *self.as_user,
                str(self.bindir / "psql"),
                *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres"),
                *("-v", "ON_ERROR_STOP=1", "-q", "-c", sql),
            ],
            check=True,
            capture_output=True,
        )


def _alive(pid: int) -> bool:
    """Running (a zombie, killed and waiting for whoever reaps it, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@dataclass
class Procs:
    """Worker processes (and hook processes they left) that a test started; all killed by PID at the end."""

    url: str
    folder: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    strays: list[int] = field(default_factory=list)
    _fifo: int | None = None
    _keep: int | None = None

    def worker(self, executor_id: str, **extra_env: str) -> subprocess.Popen[bytes]:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]), **extra_env)
        log = (self.folder / f"worker-{executor_id}.log").open("ab")
        proc = subprocess.Popen(
            [sys.executable, str(APP), "serve", self.url, executor_id], env=env, stdout=log, stderr=log
        )
        log.close()
        self.started.append(proc)
        return proc

    def here(self, mode: str, executor_id: str) -> tuple[subprocess.Popen[bytes], str]:
        """``durable_app.py execute|orphan``: a process that starts one run with ``queue=False`` (and executes
        it, or exits before); the process and the run id it printed."""
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]))
        log = (self.folder / f"worker-{executor_id}.log").open("ab")
        proc = subprocess.Popen(
            [sys.executable, str(APP), mode, self.url, executor_id, str(self.folder)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        log.close()
        self.started.append(proc)
        assert proc.stdout is not None
        run_id = proc.stdout.readline().decode().strip()
        assert run_id.startswith("run_"), (run_id, proc.wait())
        return proc, run_id

    def open_fifo(self) -> None:
        path = self.folder / "ready.fifo"
        os.mkfifo(path)
        self._fifo = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._keep = os.open(path, os.O_WRONLY)  # so the read end never sees end-of-file between writers

    def ready(self, timeout: float = 40.0) -> dict[str, object]:
        """The next readiness message a child writes (it names the process to kill)."""
        assert self._fifo is not None, "open_fifo() first"
        buffer = b""
        while not buffer.endswith(b"\n"):
            readable, _, _ = select.select([self._fifo], [], [], timeout)
            if not readable:
                logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in self.folder.glob("worker-*.log"))
                raise AssertionError(f"no child became ready within {timeout} s; worker logs:\n{logs}")
            buffer += os.read(self._fifo, 4096)
        message: dict[str, object] = json.loads(buffer.decode())
        return message

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def kill_pid(self, pid: int) -> None:
        """SIGKILL a process a child started (it is checked at the end too)."""
        self.strays.append(pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                self.kill(proc)
        for pid in self.strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for proc in self.started:
            if proc.stdout is not None:
                proc.stdout.close()
        for fd in (self._fifo, self._keep):
            if fd is not None:
                os.close(fd)
        left = [p.pid for p in self.started if p.poll() is None] + [pid for pid in self.strays if _alive(pid)]
        assert not left, f"processes left running: {left}"
