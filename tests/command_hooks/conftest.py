from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from hookloop.command_hooks.model import ClineScript, CommandHandler, ConfiguredHook, HookSource
from hookloop.command_hooks.runner import RunnerOptions

WriteScript = Callable[..., Path]

# Small kill windows keep the suite fast; the runner's defaults are 2 s grace and 0.5 s drain.
FAST = RunnerOptions(kill_grace=0.2, drain_window=0.2)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def write_script(tmp_path: Path) -> WriteScript:
    """Write an executable script under tmp_path/scripts and return its path."""
    folder = tmp_path / "scripts"
    folder.mkdir(exist_ok=True)

    def write(name: str, body: str, *, shebang: str | None = "#!/bin/bash", executable: bool = True) -> Path:
        path = folder / name
        text = (shebang + "\n" if shebang else "") + body.lstrip("\n")
        path.write_text(text)
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IXUSR if executable else mode & ~0o111)
        return path

    return write


def command_hook(
    command: str,
    *,
    event: str = "PreToolUse",
    args: tuple[str, ...] | None = None,
    timeout: float | None = None,
    fail_closed: bool = False,
) -> ConfiguredHook:
    return ConfiguredHook(
        event=event,
        matcher=None,
        handler=CommandHandler(command=command, args=args, timeout=timeout, fail_closed=fail_closed),
        source=HookSource(kind="hookloop-user", path="/test/settings.json"),
    )


def cline_hook(path: Path, *, event: str = "PreToolUse") -> ConfiguredHook:
    return ConfiguredHook(
        event=event,
        matcher=None,
        handler=ClineScript(path=str(path)),
        source=HookSource(kind="cline-project", path=str(path.parent)),
    )


def _stat_fields(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def is_alive(pid: int) -> bool:
    """A process that exists and is not a zombie (PID 1 here does not reap orphans, so zombies linger)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


def pgid_of(pid: int) -> int:
    fields = _stat_fields(pid)
    assert fields is not None, f"no process {pid}"
    return int(fields[2])


def live_group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                members.append(int(name))
    return members
