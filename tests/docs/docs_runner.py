"""Run documentation code as a user would: a fresh interpreter, a fresh directory, no keys, no network.

Shared by the README and ``examples/`` tests. A program runs with ``sys.executable`` and this checkout's
``hookloop`` first on ``PYTHONPATH``, in an empty working directory, with its own ``HOOKLOOP_HOME`` and
``HOME`` (so no user settings, trust records or checkpoint keys leak in), without provider credentials or
``HOOKLOOP_MODEL``, and — where bubblewrap can make one — in a network namespace of its own (loopback only),
so a block that would need a real provider fails instead of quietly reaching one.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import hookloop

REPO = Path(__file__).resolve().parents[2]
SOURCE = Path(hookloop.__file__).resolve().parents[1]  # the hookloop under test (src/ of this checkout)

_SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_", "HOOKLOOP_", "CLAUDE_", "AWS_", "GOOGLE_", "AZURE_", "GEMINI_")


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


@functools.cache
def _offline_prefix() -> tuple[str, ...]:
    """``bwrap`` arguments that give the child no network but loopback, or () where bubblewrap cannot."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ()
    prefix = (bwrap, "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--")
    probe = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True, timeout=30, check=False)
    return prefix if probe.returncode == 0 else ()


def offline_env(root: Path) -> dict[str, str]:
    """The environment of a documentation program: private homes under ``root``, no credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SECRET_PREFIXES) and "PROXY" not in k.upper()}
    home, user = root / "hookloop-home", root / "user-home"
    home.mkdir(exist_ok=True)
    user.mkdir(exist_ok=True)
    env["HOOKLOOP_HOME"] = str(home)
    env["HOME"] = str(user)
    env["PYTHONPATH"] = os.pathsep.join([str(SOURCE), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Any HTTP client that honours proxies goes nowhere: a provider SDK would fail at once, never reach the net.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[name] = "http://127.0.0.1:9"
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1"
    return env


def run_python(args: list[str], *, cwd: Path, root: Path, timeout: float = 45, stdin: str = "") -> Ran:
    """Run ``python -W error ARGS`` in ``cwd`` with :func:`offline_env` (``root`` holds the private homes)."""
    proc = subprocess.run(
        [*_offline_prefix(), sys.executable, "-W", "error", *args],
        cwd=cwd,
        env=offline_env(root),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Ran(proc.returncode, proc.stdout, proc.stderr)
