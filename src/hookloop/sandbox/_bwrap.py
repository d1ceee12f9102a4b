"""The Linux backend: bubblewrap (``bwrap``), with ``socat`` bridging the network proxy into the sandbox.

The command line, in order (later mounts cover earlier ones)::

    bwrap --ro-bind / /  --dev /dev  --proc /proc          the root read-only, fresh /dev and /proc
          --tmpfs /tmp  --tmpfs /run                        private /tmp; /run (unix sockets) hidden
          --ro-bind SOCK SOCK                                ... except allowUnixSockets
          --bind W W                                         each writable directory (workspace, …)
          --ro-bind P P                                      Edit-denied and protected paths inside them
          --ro-bind EMPTY P                                  protected paths that do not exist yet
          --ro-bind EMPTY_FILE F                             Read-denied files read as empty
          --tmpfs D --remount-ro D                           Read-denied directories read as empty
          --ro-bind PROXY_DIR /tmp/.hookloop-proxy          the proxy's unix socket
          --unshare-user --disable-userns --cap-drop ALL      no capabilities, even run as root
          --unshare-net --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try
          --die-with-parent --chdir CWD -- [bridge] COMMAND

``--unshare-net`` leaves only loopback (bwrap brings ``lo`` up); the bridge is a ``socat`` listening on
``127.0.0.1:PORT`` inside that forwards to the proxy's socket, started before the command (bash waits until it
accepts, with a bounded loop and no sleep). ``--unshare-pid`` makes bwrap the init of the command's processes:
when the command exits, or bwrap dies, every process inside dies too, ``setsid`` or not; ``--die-with-parent``
kills the sandbox when the process that started bwrap dies, even by SIGKILL. ``--new-session`` is not used:
the command already runs without a controlling terminal (its spawner starts a new session), and staying in
the spawner's process group lets a SIGTERM reach the command itself, with its grace period.

A hard link to a masked file cannot be made inside (the mask is its own mount: ``EXDEV``); links that already
existed are masked too (:func:`~hookloop.sandbox._paths.same_inode_links`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence

from hookloop.sandbox._backend import Availability, SandboxSpec, WrappedCommand
from hookloop.sandbox._paths import SandboxError

__all__ = ["BubblewrapBackend"]

_PROXY_DIR = "/tmp/.hookloop-proxy"
# A user namespace with every capability dropped: run as root, bwrap would otherwise leave the command all its
# capabilities, and `umount` of a mask or `mount -o remount,rw /` would undo the sandbox. --disable-userns (bwrap
# 0.8+) also keeps the command from making a nested user namespace; older bwraps work without it (mounts seen
# from a nested namespace are locked anyway).
_ISOLATION = (
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
)
_HIDDEN_ALWAYS = ("/dev", "/proc")
_BRIDGE_TRIES = 20000
_lock = threading.Lock()
_created: dict[str, int] = {}  # mount points this process created for missing protected paths -> users
_empties: dict[str, str] = {}


def _empty(kind: str) -> str:
    """A read-only empty file or directory to mount over things (one per process, removed at exit)."""
    with _lock:
        if not _empties:
            base = tempfile.mkdtemp(prefix="hookloop-sandbox-")
            file_path, dir_path = os.path.join(base, "empty"), os.path.join(base, "empty.d")
            with open(file_path, "x", encoding="utf-8"):
                pass
            os.mkdir(dir_path)
            os.chmod(file_path, 0o444)
            os.chmod(dir_path, 0o555)
            _empties.update(file=file_path, dir=dir_path, base=base)
            atexit.register(_remove_empties, base)
        return _empties[kind]


def _remove_empties(base: str) -> None:
    for path in (os.path.join(base, "empty.d"), os.path.join(base, "empty")):
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
    shutil.rmtree(base, ignore_errors=True)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


class BubblewrapBackend:
    """Sandboxes commands with bubblewrap on Linux.

    ``bwrap`` and ``socat`` are looked up on ``PATH`` unless given. Without ``socat`` the sandbox has no
    network at all (the proxy cannot be reached), and :meth:`availability` says so in its details.
    """

    name = "bubblewrap"

    def __init__(self, *, bwrap: str | None = None, socat: str | None = None) -> None:
        self._bwrap = bwrap or shutil.which("bwrap")
        self._socat = socat or shutil.which("socat")
        self._bash = shutil.which("bash")
        self._availability: Availability | None = None
        self._isolation = list(_ISOLATION)

    @property
    def network_bridge(self) -> bool:
        """Whether commands can reach the proxy (``socat`` and ``bash`` are present)."""
        return self._socat is not None and self._bash is not None

    def availability(self) -> Availability:
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> Availability:
        import sys

        details: dict[str, str] = {"socat": self._socat or "not found (sandboxed commands get no network)"}
        if not sys.platform.startswith("linux"):
            return Availability(available=False, reason=f"bubblewrap needs Linux, this is {sys.platform}")
        if self._bwrap is None:
            return Availability(
                available=False,
                reason="bwrap (bubblewrap) is not installed: apt-get install bubblewrap socat",
                details=details,
            )
        try:
            version = subprocess.run(
                [self._bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
            smoke = self._smoke(self._isolation)
            if smoke.returncode != 0 and "--disable-userns" in smoke.stderr:
                self._isolation.remove("--disable-userns")
                smoke = self._smoke(self._isolation)
        except (OSError, subprocess.SubprocessError) as exc:
            return Availability(available=False, reason=f"{self._bwrap} cannot run: {exc}", details=details)
        details["bwrap"] = f"{self._bwrap} ({version or 'unknown version'})"
        if smoke.returncode != 0:
            why = smoke.stderr.strip().splitlines()[-1] if smoke.stderr.strip() else f"exit {smoke.returncode}"
            return Availability(
                available=False,
                reason=f"bwrap cannot create namespaces here ({why}); unprivileged user namespaces may be off",
                details=details,
            )
        return Availability(
            available=True, reason=f"bubblewrap {version.split()[-1] if version else ''}".strip(), details=details
        )

    def _smoke(self, isolation: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = [self._bwrap or "bwrap", "--ro-bind", "/", "/", "--proc", "/proc", *isolation, "--", "true"]
        return subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)

    def wrap(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], spec: SandboxSpec) -> WrappedCommand:
        if self._bwrap is None:
            raise SandboxError("cannot sandbox: bwrap (bubblewrap) is not installed")
        self.availability()  # settles the isolation flags this bwrap supports
        hidden = [*_HIDDEN_ALWAYS]
        args = [self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if spec.private_tmp:
            args += ["--tmpfs", "/tmp"]
            hidden.append("/tmp")
        if spec.hide_run:
            for run in ("/run", "/var/run"):
                if os.path.isdir(run) and not os.path.islink(run):
                    args += ["--tmpfs", run]
                    hidden.append(run)
            for sock in spec.unix_sockets:
                if os.path.exists(sock):
                    args += ["--ro-bind", sock, sock]
        writable = [w for w in spec.writable if os.path.exists(w)]
        for path in writable:
            args += ["--bind", path, path]

        def visible(path: str) -> bool:
            return any(_inside(path, w) for w in writable) or not any(_inside(path, h) for h in hidden)

        for path in spec.read_only:
            if visible(path) and os.path.exists(path):
                args += ["--ro-bind", path, path]
        created: list[str] = []
        with _lock:
            for path, _kind in spec.missing_protected:
                # A mount point another sandbox of this process made still counts as missing.
                if not visible(path) or (path not in _created and os.path.lexists(path)):
                    continue
                created.append(path)
                _created[path] = _created.get(path, 0) + 1
        for path, kind in spec.missing_protected:
            if path in created:
                args += ["--ro-bind", _empty(kind), path]
        for path in spec.masked_files:
            if visible(path):
                args += ["--ro-bind", _empty("file"), path]
        for path in spec.masked_dirs:
            if visible(path):
                args += ["--tmpfs", path, "--remount-ro", path]
        command = list(argv)
        sandbox_env = dict(env)
        sandbox_env["TMPDIR"] = "/tmp"
        if spec.proxy_socket is not None and self.network_bridge and spec.private_tmp:
            args += ["--ro-bind", os.path.dirname(spec.proxy_socket), _PROXY_DIR]
            inner = f"{_PROXY_DIR}/{os.path.basename(spec.proxy_socket)}"
            command = [*self._bridge(inner, spec.proxy_port), *command]
            proxy = f"http://127.0.0.1:{spec.proxy_port}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
                sandbox_env[name] = proxy
            for name in ("NO_PROXY", "no_proxy"):
                sandbox_env[name] = "localhost,127.0.0.1,::1"
        args += [
            *self._isolation,
            "--chdir",
            cwd,
            "--",
            *command,
        ]
        return WrappedCommand(argv=tuple(args), env=sandbox_env, cleanup=lambda: _release(created))

    def _bridge(self, socket_path: str, port: int) -> list[str]:
        assert self._socat is not None
        assert self._bash is not None
        listen = f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr"
        script = (
            f"{shlex.quote(self._socat)} {listen} UNIX-CONNECT:{shlex.quote(socket_path)} 2>/dev/null & "
            "i=0; "
            f"until {{ : </dev/tcp/127.0.0.1/{port}; }} 2>/dev/null; do "
            f"i=$((i+1)); if [ $i -gt {_BRIDGE_TRIES} ]; then "
            "echo 'hookloop sandbox: the network bridge (socat) did not start' >&2; exit 125; fi; done; "
            'exec "$@"'
        )
        return [self._bash, "-c", script, "hookloop-sandbox"]


def _release(created: list[str]) -> None:
    """Remove the empty mount points made for missing protected paths once no sandbox uses them."""
    with _lock:
        for path in created:
            users = _created.get(path, 0) - 1
            if users > 0:
                _created[path] = users
                continue
            _created.pop(path, None)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)  # only when still empty
                elif os.path.isfile(path) and os.path.getsize(path) == 0:
                    os.unlink(path)
