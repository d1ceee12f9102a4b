"""Trust for project-level hooks: code from a repository runs only after the user has trusted it, and again
after every change.

What is trusted is a **digest** of everything project-level that decides which code runs
(:func:`project_config_digest`): the ``hooks`` value of each project settings file (``.claude/settings.json``,
``.claude/settings.local.json``, ``.hookloop/settings.json``, ``.hookloop/settings.local.json``; an unparsable
file contributes the hash of its bytes) and, when present, its ``env`` block, ``enabledPlugins`` and
``disableAllHooks`` (they decide what code runs), every file under ``.clinerules/hooks/`` (path, content hash,
executable bit), and the content of project files that a project command hook names (best effort: each word of
the command and its ``args``, after substituting ``$CLAUDE_PROJECT_DIR``/``$HOOKLOOP_PROJECT_DIR``, that is a
file inside the project). Editing any of these changes the digest, so the configuration must be trusted again.
Claude's project files are always part of the digest, even when a run skips them, so trusting with one setting
cannot smuggle them in for another.

The store is ``$HOOKLOOP_HOME/trusted.json`` (default ``~/.hookloop/trusted.json``)::

    {"version": 1, "projects": {"/abs/project": {"digest": "sha256:…", "trusted_at": "2026-…Z"}}}

written atomically (temporary file + rename). Concurrent writers: the last one wins.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shlex
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from hookloop.errors import HookloopError

from .config import HookConfig, resolve_hookloop_home
from .model import Diagnostic

__all__ = [
    "TrustStoreError",
    "apply_trust",
    "is_trusted",
    "project_config_digest",
    "trust",
    "trust_store_path",
    "untrust",
]

_STORE_VERSION = 1
_PROJECT_SETTINGS = (
    ("claude-project", (".claude", "settings.json")),
    ("claude-local", (".claude", "settings.local.json")),
    ("hookloop-project", (".hookloop", "settings.json")),
    ("hookloop-local", (".hookloop", "settings.local.json")),
)
_PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "HOOKLOOP_PROJECT_DIR")
_ALSO_TRUSTED = ("env", "enabledPlugins", "disableAllHooks")


class TrustStoreError(HookloopError):
    """The trust store cannot be read or written; names the file."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"trust store {path}: {problem}")
        self.path = path


def trust_store_path(hookloop_home: Path | None = None) -> Path:
    """Where trust is recorded: ``<hookloop_home>/trusted.json`` (``$HOOKLOOP_HOME`` or ``~/.hookloop``)."""
    return (hookloop_home if hookloop_home is not None else resolve_hookloop_home()) / "trusted.json"


def project_config_digest(project_dir: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of the project's hook configuration (see the module docstring for what it covers)."""
    project = Path(project_dir).resolve()
    settings: dict[str, object] = {}
    commands: list[str] = []
    for kind, parts in _PROJECT_SETTINGS:
        path = project.joinpath(*parts)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            settings[kind] = {"unreadable": exc.strerror or str(exc)}
            continue
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except ValueError:
            settings[kind] = {"unparsed_sha256": _sha256(raw)}
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        settings[kind] = hooks
        # The env block and enabledPlugins also decide what runs (LD_PRELOAD, BASH_ENV, a plugin's hooks);
        # recorded only when present, so digests of files without them are unchanged.
        extras = {key: data[key] for key in _ALSO_TRUSTED if isinstance(data, dict) and key in data}
        if extras:
            settings[kind] = {"hooks": hooks, **extras}
        commands.extend(_command_words(hooks))
    document = {
        "version": 1,
        "settings": settings,
        "cline_scripts": _tree_entries(project, project / ".clinerules" / "hooks"),
        "referenced_files": _referenced_files(project, commands),
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + _sha256(canonical.encode("utf-8"))


def is_trusted(
    project_dir: str | os.PathLike[str], *, hookloop_home: Path | None = None, digest: str | None = None
) -> bool:
    """Whether the project's current hook configuration (or ``digest``) is the one the user trusted.

    An unreadable or corrupt store counts as "not trusted" (fail safe).
    """
    project = Path(project_dir).resolve()
    current = digest if digest is not None else project_config_digest(project)
    try:
        projects = _read_store(trust_store_path(hookloop_home))
    except TrustStoreError:
        return False
    entry = projects.get(str(project))
    return isinstance(entry, dict) and entry.get("digest") == current


def trust(project_dir: str | os.PathLike[str], *, hookloop_home: Path | None = None) -> str:
    """Record the project's current hook configuration as trusted; returns the digest recorded.

    Raises :class:`TrustStoreError` when the store exists but is corrupt (it is not overwritten) or cannot be
    written.
    """
    project = Path(project_dir).resolve()
    digest = project_config_digest(project)
    path = trust_store_path(hookloop_home)
    projects = _read_store(path)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    projects[str(project)] = {"digest": digest, "trusted_at": now}
    _write_store(path, projects)
    return digest


def untrust(project_dir: str | os.PathLike[str], *, hookloop_home: Path | None = None) -> bool:
    """Forget the project's trust; returns whether there was any. Raises :class:`TrustStoreError` like
    :func:`trust`."""
    project = Path(project_dir).resolve()
    path = trust_store_path(hookloop_home)
    projects = _read_store(path)
    if projects.pop(str(project), None) is None:
        return False
    _write_store(path, projects)
    return True


def apply_trust(
    config: HookConfig, project_dir: str | os.PathLike[str], *, hookloop_home: Path | None = None
) -> HookConfig:
    """``config`` unchanged when no project-level file shapes it (hooks, ``env``, ``disableAllHooks``,
    ``enabledPlugins``, Cline scripts) or the project is trusted; otherwise the configuration as if the project's
    files did not exist, with a warning diagnostic saying what was skipped and why."""
    skipped = config.project_hooks
    env_blocks = config.project_env
    shaped = skipped or env_blocks or config.project_shaped
    if not shaped or is_trusted(project_dir, hookloop_home=hookloop_home):
        return config
    project = Path(project_dir).resolve()
    what = f"{len(skipped)} project hook(s)"
    if env_blocks:
        what += f" and the env block of {len(env_blocks)} project settings file(s)"
    if not (skipped or env_blocks):
        what = "this project's settings (disableAllHooks / enabledPlugins)"
    reason = Diagnostic(
        severity="warning",
        file=str(project),
        path="",
        message=(
            f"{what} skipped: this project's hook configuration is not trusted "
            "(new or changed since it was trusted); review it, then run `hookloop hooks trust`"
        ),
    )
    return config.without_project_hooks(reason)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tree_entries(project: Path, root: Path) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    if not root.is_dir():
        return entries
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            entries.append({"path": _relative(project, path), **_file_facts(path)})
    return entries


def _file_facts(path: Path) -> dict[str, object]:
    try:
        mode = path.stat().st_mode
        content = path.read_bytes()
    except OSError as exc:
        return {"unreadable": exc.strerror or str(exc)}
    return {"sha256": _sha256(content), "executable": bool(mode & 0o111)}


def _relative(project: Path, path: Path) -> str:
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)


def _command_words(hooks: object) -> Iterator[str]:
    """Every ``command`` string and ``args`` item in a raw ``hooks`` value (malformed parts are skipped)."""
    if not isinstance(hooks, dict):
        return
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if not isinstance(handler, dict):
                    continue
                if isinstance(handler.get("command"), str):
                    yield handler["command"]
                args = handler.get("args")
                if isinstance(args, list):
                    yield from (arg for arg in args if isinstance(arg, str))


def _referenced_files(project: Path, commands: list[str]) -> list[dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words:
            for var in _PROJECT_VARS:
                word = word.replace("${" + var + "}", str(project)).replace("$" + var, str(project))
            try:
                candidate = (project / word).resolve()
                if not candidate.is_relative_to(project) or not candidate.is_file():
                    continue
            except (OSError, ValueError):  # embedded NUL, name too long …: not a file reference
                continue
            key = _relative(project, candidate)
            found.setdefault(key, {"path": key, **_file_facts(candidate)})
    return [found[key] for key in sorted(found)]


def _read_store(path: Path) -> dict[str, object]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise TrustStoreError(path, f"cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise TrustStoreError(path, f"not valid JSON ({exc}); fix or delete it") from exc
    valid = isinstance(data, dict) and data.get("version") == _STORE_VERSION
    if not valid or not isinstance(data.get("projects"), dict):
        raise TrustStoreError(path, f'expected {{"version": {_STORE_VERSION}, "projects": {{...}}}}')
    projects = data["projects"]
    assert isinstance(projects, dict)
    return dict(projects)


def _write_store(path: Path, projects: Mapping[str, object]) -> None:
    document = {"version": _STORE_VERSION, "projects": dict(sorted(projects.items()))}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".trusted-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=2, sort_keys=True)
                handle.write("\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TrustStoreError(path, f"cannot write: {exc.strerror or exc}") from exc
