"""Everything ``hookloop hooks validate`` checks, once per settings file, and what ``hooks list`` / ``test``
refuse to run on: the hook configuration's own diagnostics (bad JSON, unknown events, malformed entries), the
``permissions`` object (rules, misspelt or unknown keys), the ``sandbox`` object, the ``model``, top-level keys
that look like a misspelt setting, and — for validate — command hooks whose program or script does not exist
or is not executable.

Each settings file is read once here; a file that is not valid JSON is reported once (by the hook
configuration's loader) and then left out of the other checks.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hookloop.command_hooks.config import HookConfig
from hookloop.command_hooks.model import CommandHandler, ConfiguredHook

__all__ = ["Problem", "command_problem", "settings_problems"]

Severity = Literal["error", "warning", "info"]

_READ_SECTIONS = ("hooks", "permissions", "sandbox", "env", "model", "mcpServers", "disableAllHooks")
"""Top-level settings hookloop reads: one of these misspelt is a whole section silently dropped (an error)."""
_OTHER_SETTINGS = (
    "$schema", "allowedHttpHookUrls", "httpHookAllowedEnvVars", "commandHookAllowedEnvVars", "enabledPlugins",
    "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "apiKeyHelper",
    "cleanupPeriodDays", "includeCoAuthoredBy", "statusLine", "outputStyle", "forceLoginMethod",
    "forceLoginOrgUUID", "spinnerTipsEnabled", "alwaysThinkingEnabled", "extraKnownMarketplaces",
    "awsAuthRefresh", "awsCredentialExport", "companyAnnouncements", "allowManagedHooksOnly", "theme",
    "otelHeadersHelper", "subagentStatusLine", "skipWebFetchPreflight", "feedbackSurveyRate",
)  # fmt: skip
"""Claude Code settings hookloop does not read (left alone, never reported)."""
_INTERPRETERS = frozenset(
    {"python", "python3", "node", "bash", "sh", "zsh", "dash", "ruby", "perl", "php", "deno", "bun", "tsx"}
)
_SCRIPT_SUFFIX = re.compile(r"\.(py|js|mjs|cjs|ts|sh|bash|zsh|rb|pl|php)$")
_BUILTINS = frozenset(
    {"echo", "printf", "true", "false", "exit", "test", "[", ":", "cd", "exec", "export", "read", "set", "eval"}
)
_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "|&"})


@dataclass(frozen=True, slots=True)
class Problem:
    severity: Severity
    text: str
    """``file: json.path: what is wrong``"""


def settings_problems(
    project: Path, config: HookConfig, files: list[Path], *, check_commands: bool = False
) -> list[Problem]:
    """Every problem of the settings ``files`` (lowest precedence first) and of ``config`` (the hook
    configuration loaded from them), each reported once."""
    problems = [Problem(d.severity, str(d)) for d in config.diagnostics]
    documents, duplicates = _documents(files)
    problems.extend(duplicates)
    for path, data in documents:
        problems.extend(_document_problems(project, path, data))
    if check_commands:
        for hook in config.hooks:
            problem = command_problem(hook, project)
            if problem is not None:
                problems.append(Problem("error", f"{hook.source.path}: {hook.json_path}.command: {problem}"))
            if hook.condition is not None:
                problems.extend(_condition_problem(hook, project))
    return list(dict.fromkeys(problems))  # one file read as two layers reports the same problem once


def _documents(files: list[Path]) -> tuple[list[tuple[str, Mapping[str, object]]], list[Problem]]:
    """Each file that exists and is a JSON object, once (a project whose .hookloop is the home: one file);
    and the keys a file sets twice in one object (JSON keeps the last: the first is silently lost)."""
    found: dict[str, tuple[str, Mapping[str, object]]] = {}
    problems: list[Problem] = []
    for path in files:
        key = os.path.realpath(path)
        if key in found or not path.is_file():
            continue
        twice: list[str] = []

        def pairs(items: list[tuple[str, object]], twice: list[str] = twice) -> dict[str, object]:
            seen: set[str] = set()
            for name, _ in items:
                if name in seen:
                    twice.append(name)
                seen.add(name)
            return dict(items)

        try:
            data = json.loads(path.read_bytes().decode("utf-8-sig"), object_pairs_hook=pairs)
        except (OSError, ValueError):
            continue  # the hook configuration's loader reported it
        for name in dict.fromkeys(twice):
            problems.append(Problem("error", f"{path}: key {name!r} appears twice in one object; all but the last "
                                    "are ignored"))  # fmt: skip
        if isinstance(data, dict):
            found[key] = (str(path), data)
    return list(found.values()), problems


def _document_problems(project: Path, path: str, data: Mapping[str, object]) -> list[Problem]:
    from hookloop.permissions import PermissionConfigError, PermissionPolicy
    from hookloop.permissions._policy import unknown_permission_keys
    from hookloop.sandbox import SandboxConfigError
    from hookloop.sandbox._settings import parse_sandbox_settings

    problems: list[Problem] = []
    try:
        PermissionPolicy.from_settings([(path, data)], workspace=project)
    except PermissionConfigError as exc:
        problems.append(Problem("error", str(exc)))
    permissions = data.get("permissions")
    if isinstance(permissions, Mapping):
        for key, close in unknown_permission_keys(permissions):
            if close is None:
                problems.append(Problem("warning", f"{path}: permissions.{key}: unknown key; ignored"))
    try:
        parse_sandbox_settings([(path, data)], workspace=project)
    except SandboxConfigError as exc:
        problems.append(Problem("error", str(exc)))
    model = data.get("model")
    if model is not None:
        problems.extend(_model_problem(path, model))
    for key in data:
        if key in _READ_SECTIONS or key in _OTHER_SETTINGS:
            continue
        matches = difflib.get_close_matches(str(key), _READ_SECTIONS, n=1, cutoff=0.75)
        if matches:
            problems.append(Problem("error", f"{path}: {key}: unknown setting; did you mean {matches[0]!r}?"))
    return problems


def _condition_problem(hook: ConfiguredHook, project: Path) -> list[Problem]:
    """An ``if`` that is not a permission rule: at run time the hook would run on every call (fail open)."""
    from hookloop.permissions import PermissionConfigError, PermissionPolicy

    try:
        PermissionPolicy(deny=[hook.condition or ""], workspace=project, source="if")
    except PermissionConfigError as exc:
        where = f"{hook.source.path}: {hook.json_path}.if"
        return [Problem("error", f"{where}: {exc.problem}; the hook would run on every call")]
    return []


def _model_problem(path: str, model: object) -> list[Problem]:
    from hookloop.cli._errors import describe_error
    from hookloop.providers.select import ModelSpecError, resolve_model_string

    # A warning: only `hookloop run` without --model reads it (and then stops on it, naming the file).
    if not isinstance(model, str) or not model.strip():
        return [Problem("warning", f'{path}: model: expected a model name such as "sonnet" or "openai:gpt-4o"')]
    try:
        resolve_model_string(model)
    except ModelSpecError as exc:
        return [Problem("warning", f"{path}: model: {describe_error(exc)}")]
    return []


def command_problem(hook: ConfiguredHook, project: Path) -> str | None:
    """Why ``hook``'s command cannot run, judged without running it: its program (or the script an
    interpreter is given) does not exist, is a directory, or is not executable; a bare program name not on
    PATH. ``None`` when it looks runnable or cannot be judged (a command built by the shell at run time)."""
    handler = hook.handler
    if not isinstance(handler, CommandHandler):
        return None
    if handler.args is not None:
        words = [handler.command, *handler.args]
    else:
        try:
            words = shlex.split(handler.command)
        except ValueError:
            return None
        for index, word in enumerate(words):
            if word in _OPERATORS:
                words = words[:index]
                break
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]  # VAR=value before the program
    if not words:
        return None
    expanded = [_expand(word, project, hook) for word in words]
    program = expanded[0]
    if program is None:
        return None
    if "/" in program:
        return _file_problem(program, project, executable=True)
    if program in _BUILTINS:
        return None
    if shutil.which(program) is None:
        return f"{program}: command not found on PATH"
    if Path(program).name in _INTERPRETERS or re.fullmatch(r"python3(\.\d+)?", program):
        for arg in expanded[1:]:
            if arg is None:
                return None
            if arg in ("-c", "-e", "-m"):
                return None  # inline code or a module: nothing to look for
            if arg.startswith("-"):
                continue
            if "/" in arg or _SCRIPT_SUFFIX.search(arg):
                return _file_problem(arg, project, executable=False)
            return None
    return None


def _expand(word: str, project: Path, hook: ConfiguredHook) -> str | None:
    """``word`` with ``$CLAUDE_PROJECT_DIR`` (and the plugin root) and ``~`` expanded; None when another
    variable or a substitution is left (decided only at run time)."""
    values = {"CLAUDE_PROJECT_DIR": str(project), "HOOKLOOP_PROJECT_DIR": str(project)}
    if hook.source.plugin_root:
        values["CLAUDE_PLUGIN_ROOT"] = hook.source.plugin_root

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return values.get(name, match.group(0))

    text = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", value, word)
    if "$" in text or "`" in text or "*" in text or "?" in text:
        return None
    return os.path.expanduser(text)


def _file_problem(name: str, project: Path, *, executable: bool) -> str | None:
    path = Path(name) if os.path.isabs(name) else project / name
    if not path.exists():
        return f"{name}: no such file ({path})"
    if path.is_dir():
        return f"{name}: is a directory"
    if executable and not os.access(path, os.X_OK):
        return f"{name}: not executable (chmod +x {path})"
    return None
