"""A throw-away PostgreSQL server for benchmarks and tests: Debian's ``postgresql`` binaries, a temporary data
directory, its own user, 127.0.0.1 on a free port, stopped (and checked gone, by PID) at the end.

    with PostgresServer.start() as server:
        url = server.create_database("bench")    # postgresql://hookloop@127.0.0.1:PORT/bench

Run as root, the server runs as the ``postgres`` system user (PostgreSQL refuses to run as root), its data
directory owned by that user; otherwise as the current user. Authentication is ``trust`` on 127.0.0.1 only (the
server listens nowhere else and its Unix socket is in the private data directory). No sleep waits for anything:
``pg_ctl -w`` returns once the server accepts connections, and stopping waits for the postmaster to exit.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = ["PostgresServer", "PostgresUnavailable", "find_binaries"]

SUPERUSER = "hookloop"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries here (``apt-get install postgresql``), or no user to run them as."""


def find_binaries() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$HOOKLOOP_PG_BIN``, Debian's newest
    ``/usr/lib/postgresql/*/bin``, else the ``PATH``."""
    candidates = [os.environ.get("HOOKLOOP_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.name)
    except ValueError:
        return 0.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(slots=True)
class PostgresServer:
    """A running server; :meth:`stop` (or leaving the ``with`` block) stops it and removes its data."""

    bin: Path
    root: Path
    port: int
    user: str | None
    """The system user the server runs as (None: this process's user)."""
    pid: int = 0

    @property
    def data(self) -> Path:
        return self.root / "data"

    @classmethod
    def start(cls) -> PostgresServer:
        """initdb a temporary cluster and start it on 127.0.0.1; raises PostgresUnavailable when it cannot."""
        binaries = find_binaries()
        user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable("running as root and there is no 'postgres' user to run the server") from None
            user = "postgres"
        root = Path(tempfile.mkdtemp(prefix="hookloop-pg-"))
        server = cls(bin=binaries, root=root, port=_free_port(), user=user)
        try:
            if user is not None:
                entry = pwd.getpwnam(user)
                os.chown(root, entry.pw_uid, entry.pw_gid)
            os.chmod(root, 0o700)
            server._run("initdb", "-D", str(server.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
            options = f"-h 127.0.0.1 -p {server.port} -k {server.data} -c fsync=off -c max_connections=200"
            server._run("pg_ctl", "-D", str(server.data), "-o", options, "-l", str(root / "log"), "-w", "start")
            server.pid = int((server.data / "postmaster.pid").read_text().split()[0])
        except BaseException:
            server.stop()
            raise
        return server

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [str(self.bin / program), *args],
            user=self.user,
            capture_output=True,
            text=True,
            cwd=self.root,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            log = self.root / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PostgresUnavailable(f"{program} failed ({done.returncode}): {done.stderr.strip()[-2000:]} {tail}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` (letters, digits, underscores) and return its URL."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name {name!r}: letters, digits and underscores only")
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, name)
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown), make sure its postmaster is gone (SIGKILL by PID if not), and
        remove the data directory."""
        if self.data.exists() and self.pid:
            with contextlib.suppress(PostgresUnavailable, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            if _alive(self.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not alive; the postmaster is not our child, so read its state.
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return True
