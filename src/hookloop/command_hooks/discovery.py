"""Cline-style hook discovery: a hook is an executable file named after the event, in a hook directory.

Directories, in configuration order (global first, as Cline documents):

1. ``~/Documents/Cline/Hooks/`` — Cline's global hooks folder (``cline-user``);
2. ``$HOOKLOOP_HOME/hooks/`` (default ``~/.hookloop/hooks/``) — hookloop's own (``hookloop-scripts``);
3. ``<project>/.clinerules/hooks/`` — the workspace's hooks (``cline-project``; needs trust).

Only the classic (VS Code extension) layout is read: its payload is what hookloop sends. The SDK/CLI folders
(``~/.cline/hooks``, ``<ws>/.cline/hooks``) expect a different payload (``hookName: "tool_call"`` …) and are not
scanned.

File rules (Cline's): on macOS/Linux the file is extensionless, named exactly ``PreToolUse`` etc., and must have
the executable bit — a non-executable file is a *disabled* hook (Cline's toggle flips the bit), reported as
info. On Windows only ``<Event>.ps1`` counts and presence means enabled. The same resolved path found twice runs
once per event.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .model import CLINE_EVENTS, ClineScript, ConfiguredHook, Diagnostic, HookSource, Severity

__all__ = ["cline_hook_dirs", "discover_cline_scripts", "is_windows", "launcher_for"]

POWERSHELL_ARGS: tuple[str, ...] = ("-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File")


def is_windows(platform: str) -> bool:
    """``sys.platform`` values of native Windows (``win32``); Cygwin/MSYS count as Unix."""
    return platform.startswith("win")


def launcher_for(path: str, platform: str) -> list[str]:
    """The argv that runs Cline hook script ``path`` on ``platform`` (a ``sys.platform`` value). Pure.

    Unix: the file itself — the kernel honours its shebang. (A file without a shebang fails with ENOEXEC; the
    runner then retries through ``/bin/sh``, as a shell would.) Windows: ``.ps1`` files through
    ``powershell -NoProfile -NonInteractive -ExecutionPolicy Bypass -File <path>``; anything else is spawned
    directly (an ``.exe``).
    """
    if is_windows(platform) and path.lower().endswith(".ps1"):
        return ["powershell", *POWERSHELL_ARGS, path]
    return [path]


def cline_hook_dirs(project_dir: Path, *, home: Path, hookloop_home: Path) -> tuple[HookSource, ...]:
    """The directories scanned for Cline hook scripts, in configuration order."""
    return (
        HookSource(kind="cline-user", path=str(home / "Documents" / "Cline" / "Hooks")),
        HookSource(kind="hookloop-scripts", path=str(hookloop_home / "hooks")),
        HookSource(kind="cline-project", path=str(project_dir / ".clinerules" / "hooks")),
    )


def discover_cline_scripts(
    dirs: tuple[HookSource, ...], *, platform: str
) -> tuple[tuple[ConfiguredHook, ...], tuple[Diagnostic, ...]]:
    """Scan ``dirs`` for hook scripts. Missing directories are fine; unusable files become diagnostics."""
    hooks: list[ConfiguredHook] = []
    diagnostics: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    windows = is_windows(platform)
    for source in dirs:
        directory = Path(source.path)
        try:
            entries = sorted(os.listdir(directory))
        except FileNotFoundError:
            continue
        except OSError as exc:
            diagnostics.append(_diag("warning", source, f"cannot list hook directory: {exc.strerror or exc}"))
            continue
        names = set(entries)
        for event in CLINE_EVENTS:
            wanted = f"{event}.ps1" if windows else event
            for name in entries:
                if name != wanted and name.split(".", 1)[0] == event:
                    diagnostics.append(_ignored_variant(source, name, wanted, windows))
            if wanted not in names:
                continue
            path = directory / wanted
            problem = _unusable(path, windows)
            if problem is not None:
                diagnostics.append(_diag("info", source, f"{wanted}: {problem}"))
                continue
            resolved = (event, os.path.realpath(path))
            if resolved in seen:
                diagnostics.append(_diag("info", source, f"{wanted}: same script as one found earlier; runs once"))
                continue
            seen.add(resolved)
            hooks.append(ConfiguredHook(event=event, matcher=None, handler=ClineScript(path=str(path)), source=source))
    return tuple(hooks), tuple(diagnostics)


def _unusable(path: Path, windows: bool) -> str | None:
    try:
        info = path.stat()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file; ignored"
    if not windows and not info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
        return "not executable, so disabled (chmod +x to enable it)"
    return None


def _ignored_variant(source: HookSource, name: str, wanted: str, windows: bool) -> Diagnostic:
    rule = "only <Event>.ps1 files" if windows else "only extensionless files named exactly after the event"
    return _diag("warning", source, f"{name}: ignored; on this platform Cline hooks are {rule} (expected {wanted})")


def _diag(severity: Severity, source: HookSource, message: str) -> Diagnostic:
    return Diagnostic(severity=severity, file=source.path, path="", message=message)
