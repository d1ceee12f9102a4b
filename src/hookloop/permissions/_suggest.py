"""The narrowest allow rule an "allow always" answer should add, as Claude Code proposes it."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from hookloop.permissions import _shell
from hookloop.permissions._files import file_accesses, protected_reason
from hookloop.permissions._rules import EDIT_TOOLS, READ_ONLY_TOOLS, BashPattern, tool_paths

__all__ = ["suggest_rule"]

#: Programs whose first operand is a subcommand: ``git status`` gets ``Bash(git status:*)``, not ``Bash(git:*)``.
MULTI_COMMAND_PROGRAMS: Final = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "bun", "deno", "npx", "cargo", "go", "docker", "podman", "kubectl", "helm",
        "pip", "pip3", "uv", "poetry", "pdm", "hatch", "conda", "mamba", "make", "gradle", "mvn", "dotnet",
        "terraform", "gh", "glab", "brew", "apt", "apt-get", "dnf", "yum", "systemctl", "rustup", "swift", "mix",
        "composer", "bundle", "rake", "nix", "just", "task", "tox", "nox", "pre-commit", "gcloud", "aws", "az",
    }
)  # fmt: skip
#: Runners whose ``run`` subcommand takes a script name: ``npm run test`` gets ``Bash(npm run test:*)``.
_SCRIPT_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun", "deno", "uv", "poetry", "pdm", "hatch", "cargo"})
#: Programs for which a prefix rule would allow anything: interpreters, shells, wrappers. No rule is proposed.
_NO_PREFIX: Final = frozenset(
    {
        "bash", "sh", "zsh", "dash", "ksh", "fish", "python", "python3", "node", "perl", "ruby", "php", "lua",
        "deno", "bun", "eval", "exec", "env", "sudo", "doas", "su", "xargs", "parallel", "ssh", "nohup", "timeout",
        "nice", "watch", "command", "builtin", "source", ".", "awk", "gawk", "sed", "find", "osascript", "pwsh",
        "cmd", "powershell", "npx", "time", "script", "chroot", "busybox",
    }
)  # fmt: skip
_PLAIN_WORD: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@%/=,-]*")
_PATH_SAFE: Final = re.compile(r"[^*?\[\]()\x00-\x1f]+")


def _bash_prefix(words: _shell.Words) -> str | None:
    head = words[0] if words else None
    if head is None or not _PLAIN_WORD.fullmatch(head) or posixpath.basename(head) in _NO_PREFIX:
        return None
    program = posixpath.basename(head)
    operands = list(words[1:])
    if program not in MULTI_COMMAND_PROGRAMS:
        return head
    if not operands or operands[0] is None:
        return head
    sub = operands[0]
    if sub.startswith("-") or not _PLAIN_WORD.fullmatch(sub):
        return None  # global options before the subcommand (`git -c x=y push`): no safe prefix
    if program in _SCRIPT_RUNNERS and sub == "run" and len(operands) > 1:
        script = operands[1]
        if script is None or script.startswith("-") or not _PLAIN_WORD.fullmatch(script):
            return None
        return f"{head} run {script}"
    return f"{head} {sub}"


def _suggest_bash(command: str, cwd: Path) -> str | None:
    analysis = _shell.analyse(command)
    if not analysis.safe or not analysis.commands:
        return None
    home = Path(os.path.expanduser("~"))
    for access in file_accesses(command, cwd=cwd, workspace=cwd, home=home):
        if access.paths is None or (access.write and any(protected_reason(p) for p in access.paths)):
            return None
    prefixes = {_bash_prefix(words) for words in analysis.commands}
    if None in prefixes or len(prefixes) != 1:
        return None  # a compound command of several programs: no single rule; ask each time
    (prefix,) = prefixes
    assert prefix is not None
    rule = f"Bash({prefix}:*)"
    pattern = BashPattern.parse(f"{prefix}:*")
    return rule if all(pattern.allows(words) for words in analysis.commands) else None


def _relative_spec(path: str, cwd: Path) -> str | None:
    root = os.path.realpath(cwd)
    if path == root:
        return "./**"
    if path.startswith(root.rstrip("/") + "/"):
        return "./" + path[len(root) :].strip("/")
    return None


def _suggest_path(tool_name: str, tool_input: Mapping[str, object], cwd: Path) -> str | None:
    family = "Read" if tool_name in READ_ONLY_TOOLS else "Edit"
    paths = tool_paths(tool_name, tool_input, cwd)
    if not paths:
        return None
    path = paths[0].real
    if any(p.real != path for p in paths[1:]) and tool_name not in {"Glob", "Grep", "LS"}:
        return None
    is_dir = tool_name in {"Glob", "Grep", "LS"} or os.path.isdir(path)
    exact = family == "Edit" and protected_reason(paths[0]) is not None
    if exact:
        target, suffix = path, ""  # a protected file: only that file
    elif is_dir:
        target, suffix = path, "/**"
    else:
        target = posixpath.dirname(path)
        suffix = "/**"
        if target == os.path.realpath(cwd):
            target, suffix = path, ""  # a file at the top of the workspace: that file
    if not _PATH_SAFE.fullmatch(target):
        return None
    relative = _relative_spec(target, cwd)
    if relative == "./**":
        return f"{family}(./**)" if suffix else None
    spec = (relative if relative is not None else "/" + target) + suffix
    return f"{family}({spec})"


def suggest_rule(tool_name: str, tool_input: Mapping[str, object], cwd: str | Path) -> str | None:
    """The narrowest allow rule that covers this call, for an "allow always" answer; ``None`` if there is none.

    * ``Bash``: ``Bash(<program> <subcommand>:*)`` for programs with subcommands (``npm test`` →
      ``Bash(npm test:*)``, ``git status`` → ``Bash(git status:*)``, ``npm run build`` →
      ``Bash(npm run build:*)``), ``Bash(<program>:*)`` otherwise (``ls -la`` → ``Bash(ls:*)``). A compound
      command gets a rule only when one rule covers every subcommand. ``None`` — never a whole-tool ``Bash``
      rule — for a command that cannot be analysed, opens a file only known at run time or writes a protected
      path, runs an interpreter, shell or wrapper (``python``, ``bash``, ``sudo``, ``xargs`` …), puts options
      before a subcommand, or needs several rules.
    * Read tools (Read, Glob, Grep, LS, NotebookRead): ``Read(./dir/**)`` for the file's directory inside
      ``cwd`` (the workspace), ``Read(//abs/dir/**)`` outside it, the file itself at the top of the workspace.
    * Edit tools (Edit, Write, MultiEdit, NotebookEdit): the same with ``Edit(…)``; a protected path (``.git/``,
      ``.claude/`` …) gets a rule for that one file.
    * ``WebFetch``: ``WebFetch(domain:<host>)``.
    * Any other tool: its name (``mcp__server__tool``).

    ``cwd`` is the workspace the file tools resolve relative paths against. The result always parses as a rule.
    """
    base = Path(os.path.abspath(cwd))
    if tool_name == "Bash":
        command = tool_input.get("command")
        return _suggest_bash(command, base) if isinstance(command, str) else None
    if tool_name in READ_ONLY_TOOLS or tool_name in EDIT_TOOLS:
        return _suggest_path(tool_name, tool_input, base)
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", tool_name):
        return None
    if tool_name == "WebFetch":
        url = tool_input.get("url")
        try:
            host = urlsplit(url.strip()).hostname if isinstance(url, str) else None
        except ValueError:
            host = None
        if host and re.fullmatch(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?", host.rstrip(".").lower()):
            return f"WebFetch(domain:{host.rstrip('.').lower()})"
        return None
    return tool_name
