"""Parsing permission rules (Claude Code's syntax) and matching one rule against one tool call."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

from hookloop.permissions import _programs, _shell
from hookloop.permissions._files import FileAccess, file_accesses, is_sink
from hookloop.permissions._paths import Links, PathPattern, ResolvedPath, compile_path_pattern, resolve, within
from hookloop.permissions._text import OPAQUE, fold, star_intersects, star_match
from hookloop.permissions._types import Behavior, PermissionConfigError

__all__ = [
    "EDIT_TOOLS",
    "READ_ONLY_TOOLS",
    "BashPattern",
    "CallContext",
    "DomainPattern",
    "Rule",
    "bash_pattern_matches",
    "command_files",
    "is_byte_sink",
    "parse_rule",
    "tool_paths",
    "url_hosts",
]

#: Tools that only read. Read rules (``Read(…)``) cover all of them, as in Claude Code.
READ_ONLY_TOOLS: Final = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
#: Tools that edit files. Edit and Write rules cover all of them; acceptEdits mode allows them in the workspace.
EDIT_TOOLS: Final = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_RULE_FAMILIES: Final[dict[str, frozenset[str]]] = {
    "Read": READ_ONLY_TOOLS,
    "Edit": EDIT_TOOLS,
    "Write": EDIT_TOOLS,
    # Claude Code renamed its Task tool Agent: a rule written for either name covers both.
    "Agent": frozenset({"Agent", "Task"}),
    "Task": frozenset({"Agent", "Task"}),
}
_PATH_TOOLS: Final = READ_ONLY_TOOLS | EDIT_TOOLS
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_*][A-Za-z0-9_.*-]*")
_HOST: Final = re.compile(r"[A-Za-z0-9*](?:[A-Za-z0-9.*-]*[A-Za-z0-9])?")
_GLOB_CHARS: Final = re.compile(r"[*?\[]")
_BLANK: Final = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class CallContext:
    """What matching needs besides the call: where relative paths start and which directories are the workspace.

    ``cwd`` is the directory a Bash command starts in (``None``: the workspace), ``home`` what ``~`` expands to;
    ``files`` memoises :func:`command_files` and ``links`` which paths are symlinks (see
    :func:`hookloop.permissions._paths.realpath`) for the duration of one decision.
    """

    workspace: Path
    allowed_dirs: tuple[str, ...]  # resolved workspace and additional directories
    cwd: Path | None = None
    home: Path | None = None
    files: dict[str, tuple[FileAccess, ...]] = field(default_factory=dict, compare=False)
    links: Links = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class BashPattern:
    """A ``Bash(…)`` specifier: ``*``-globs over a simple command's words joined by single spaces."""

    alternatives: tuple[str, ...]
    scan_tokens: tuple[str, ...]
    head: str | None = None  # the program the pattern names, when it has no `*`: a fast first check
    folded_head: str | None = None

    @classmethod
    def parse(cls, spec: str) -> BashPattern:
        spec = " ".join(spec.split())
        if spec.endswith(":*"):  # legacy prefix form: `npm run test:*` is `npm run test` or `npm run test …`
            prefix = spec[:-2].rstrip()
            alternatives: tuple[str, ...] = (prefix, f"{prefix} *")
        elif spec.endswith(" *") and spec.count("*") == 1:  # `ls *` also matches a bare `ls`
            alternatives = (spec[:-2], spec)
        else:
            alternatives = (spec,)
        scan = tuple(token for token in alternatives[0].split(" ") if token.strip("*"))
        first = alternatives[0].split(" ", 1)[0]
        head = None if "*" in first or not first else first
        folded = None if head is None or any(ch.isspace() for ch in fold(head)) else fold(head)
        return cls(alternatives=alternatives, scan_tokens=scan, head=head, folded_head=folded)

    def allows(self, words: _shell.Words) -> bool:
        """Allow matching: the words match exactly, and the rule names every word that makes them run code
        given as data (``python3 -c CODE``, ``find -delete``, ``git -c``; see :mod:`._programs`).

        A pure function of the pattern and the words, memoised (agents repeat the same subcommands)."""
        head = words[0] if words else None
        if head is None or (self.head is not None and head != self.head):
            return False
        return _allows(self, words)

    def restricts(self, words: _shell.Words) -> bool:
        """Deny/ask matching: also the basename of the program, and folded look-alikes (pure, memoised)."""
        if not words or words[0] is None:
            return False
        return _restricts(self, words)

    def _restricts(self, words: _shell.Words) -> bool:
        assert words[0] is not None
        if self.folded_head is not None:
            # The program must be the one the rule names (by basename, folded) unless the head holds a blank.
            program = fold(words[0])
            if not _BLANK.search(program):
                program = program.rstrip("/")
                if program != self.folded_head and program.rsplit("/", 1)[-1] != self.folded_head:
                    return False
        subjects = {" ".join(OPAQUE if word is None else word for word in words)}
        head = words[0].rstrip("/")
        if "/" in head:
            subjects.add(" ".join([head.rsplit("/", 1)[1], *(OPAQUE if w is None else w for w in words[1:])]))
        return any(
            star_intersects(alternative, subject) or star_intersects(fold(alternative), fold(subject))
            for alternative in self.alternatives
            for subject in subjects
        )

    def appears_in(self, found: frozenset[str]) -> bool:
        """Conservative scan for unanalysable commands: every literal word of the rule occurs as a token."""
        folded, globs = _folded_tokens(found)
        for want in self.scan_tokens:
            wanted = fold(want)
            if "*" in wanted:
                if any(star_match(wanted, token) for token in folded):
                    continue
            elif wanted in folded:
                continue
            if not any(fnmatchcase(wanted.replace("*", ""), token) for token in globs):
                return False
        return True


@lru_cache(maxsize=4096)
def _allows(pattern: BashPattern, words: _shell.Words) -> bool:
    head = words[0]
    if head is None or _BLANK.search(head):
        return False
    subject = " ".join(OPAQUE if word is None else word for word in words)
    matching = [alternative for alternative in pattern.alternatives if star_match(alternative, subject)]
    if not matching:
        return False
    triggers = _programs.code_triggers(words)
    return any(all(_programs.names_trigger(alt, trigger) for trigger in triggers) for alt in matching)


@lru_cache(maxsize=4096)
def _restricts(pattern: BashPattern, words: _shell.Words) -> bool:
    return pattern._restricts(words)


@lru_cache(maxsize=256)
def _folded_tokens(found: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    # The tokens folded once per command, and those holding glob characters (`/bin/r?` may be `rm`).
    folded = frozenset(fold(token) for token in found)
    return folded, tuple(token for token in folded if _GLOB_CHARS.search(token) is not None)


@dataclass(frozen=True, slots=True)
class DomainPattern:
    """``WebFetch(domain:example.com)``; ``*`` globs allowed (``domain:*.example.com``)."""

    host: str

    def matches(self, url: object, *, loose: bool) -> bool:
        """Allow rules (``loose=False``) match when every host the URL may name matches exactly; deny and ask
        rules when any does, also as a subdomain or a look-alike spelling (see :func:`url_hosts`)."""
        if not isinstance(url, str):
            return False
        hosts = url_hosts(url)
        if not hosts:
            return False
        if not loose:
            return all(star_match(self.host, host) for host in hosts)
        wanted = fold(self.host)
        return any(
            star_match(self.host, host) or host.endswith("." + self.host) or star_match(wanted, fold(host))
            or fold(host).endswith("." + wanted)
            for host in hosts
        )  # fmt: skip


_URL_BLANKS: Final = re.compile(r"[\t\n\r]")
_NO_SLASHES: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):/?(?=[^/])")


@lru_cache(maxsize=256)
def url_hosts(url: str) -> frozenset[str]:
    """Every host a URL parser may take ``url`` to name, lower-case, without a trailing dot.

    Python's ``urlsplit`` (and httpx) read ``https://evil.com\\@example.com/`` as ``example.com``; the WHATWG
    parser (browsers, Node — a WebFetch tool written in it) and urllib3 (requests) read a backslash as a slash,
    so as ``evil.com``. WHATWG also drops tabs and line breaks, percent-decodes the host (``evil%2ecom``) and
    takes ``https:evil.com`` and ``https:/evil.com`` for ``https://evil.com``; a tool may read ``evil.com/x`` as
    ``https://evil.com/x``. Every reading counts.
    """
    cleaned = _URL_BLANKS.sub("", url).strip()
    readings = {url.strip(), cleaned, cleaned.replace("\\", "/")}
    readings |= {_NO_SLASHES.sub(r"\1://", reading, count=1) for reading in readings}
    if "//" not in cleaned:
        readings.add("https://" + cleaned)  # a tool may take `evil.com/x` for `https://evil.com/x`
    hosts: set[str] = set()
    for reading in readings:
        try:
            host = urlsplit(reading).hostname
        except ValueError:
            continue
        if host:
            hosts.add(host.rstrip(".").lower())
            hosts.add(unquote(host).rstrip(".").lower())
    return frozenset(hosts)


Specifier = BashPattern | PathPattern | DomainPattern | str | None


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule: ``tool`` (a name, ``*`` allowed) and what its specifier compiled to."""

    text: str
    behavior: Behavior
    source: str | None
    tool: str
    specifier: Specifier = field(default=None)

    def covers_tool(self, tool_name: str) -> bool:
        if self.tool == tool_name:
            return True
        family = _RULE_FAMILIES.get(self.tool)
        if family is not None:
            return tool_name in family
        if self.tool.startswith("mcp__") and self.tool.count("__") == 1 and "*" not in self.tool:
            return tool_name == self.tool or tool_name.startswith(self.tool + "__")  # a whole MCP server
        return star_match(self.tool, tool_name)

    def matches(self, tool_name: str, tool_input: Mapping[str, object], context: CallContext) -> bool:
        """Whether this rule applies to the call (for Bash allow rules: covers every subcommand)."""
        if not self.covers_tool(tool_name):
            return False
        spec = self.specifier
        loose = self.behavior != "allow"
        if spec is None:
            return True
        if isinstance(spec, BashPattern):
            return _bash_matches(spec, tool_input.get("command"), context, loose=loose)
        if isinstance(spec, PathPattern):
            paths = tool_paths(tool_name, tool_input, context.workspace)
            if not paths:
                return False
            hits = [spec.matches(path, loose=loose) for path in paths]
            return any(hits) if loose else all(hits)
        if isinstance(spec, DomainPattern):
            return spec.matches(tool_input.get("url"), loose=loose)
        return _generic_matches(spec, tool_name, tool_input, loose=loose)


def _bash_matches(spec: BashPattern, command: object, context: CallContext, *, loose: bool) -> bool:
    if not isinstance(command, str) or not bash_pattern_matches(spec, command, loose=loose):
        return False
    return loose or redirects_stay_inside(command, context)


def bash_pattern_matches(spec: BashPattern, command: str, *, loose: bool) -> bool:
    """The part of a command pattern's match that depends only on the command: for deny/ask (``loose``) the
    whole match; for allow, whether the analysis is safe and the pattern allows every subcommand (the caller
    then checks :func:`redirects_stay_inside`)."""
    analysis = _shell.analyse(command)
    if loose:
        if analysis.runs_unknown:  # a program only known at run time could be the one this rule names
            return True
        if spec.folded_head is None:
            candidates: tuple[_shell.Words, ...] = (*analysis.commands, *analysis.deny_commands)
        else:  # only the commands of the program the rule names (and heads with blanks) can match
            by_program = analysis.by_program
            candidates = (*by_program.get(spec.folded_head, ()), *by_program.get(" ", ()))
        if any(spec.restricts(words) for words in candidates):
            return True
        return (not analysis.safe or analysis.runs_code) and spec.appears_in(_shell.tokens(command))
    if not analysis.safe or not analysis.commands:
        return False
    return all(spec.allows(words) for words in analysis.commands)


def is_byte_sink(target: str | None) -> bool:
    """``/dev/null``, the standard streams, the terminal and ``/dev/fd/N``: redirecting there edits no file."""
    return target is not None and is_sink(target)


def command_files(command: str, context: CallContext) -> tuple[FileAccess, ...]:
    """The files a Bash command opens by redirection, resolved in ``context`` (see :mod:`._files`)."""
    found = context.files.get(command)
    if found is None:
        home = context.home if context.home is not None else Path(os.path.expanduser("~"))
        cwd = context.cwd if context.cwd is not None else context.workspace
        found = context.files[command] = file_accesses(
            command, cwd=cwd, workspace=context.workspace, home=home, links=context.links
        )
    return found


def redirects_stay_inside(command: str, context: CallContext) -> bool:
    """Whether every file the command opens is known, and every one it writes is inside the workspace."""
    for access in command_files(command, context):
        if access.operand:
            continue  # a program's own arguments: deny/ask rules and protected paths check them, not allow rules
        if access.paths is None:
            return False  # only known at run time: never allowed automatically
        if access.write and not all(
            any(within(path.real, directory) for directory in context.allowed_dirs) for path in access.paths
        ):
            return False
    return True


def _generic_matches(spec: str, tool_name: str, tool_input: Mapping[str, object], *, loose: bool) -> bool:
    # Tools without a defined specifier (Agent(Explore), Skill(x), custom tools): the specifier is a `*`-glob
    # that must equal one of the input's top-level string values (Agent/Task: the subagent type only).
    values = [tool_input.get("subagent_type")] if tool_name in {"Agent", "Task"} else list(tool_input.values())
    strings = [value for value in values if isinstance(value, str)]
    if loose:
        return any(star_match(spec, s) or star_match(fold(spec), fold(s)) for s in strings)
    return any(star_match(spec, s) for s in strings)


def tool_paths(tool_name: str, tool_input: Mapping[str, object], workspace: Path) -> list[ResolvedPath] | None:
    """The paths a file tool touches, resolved; ``[]`` for tools without paths, ``None`` if they are unusable."""
    if tool_name not in _PATH_TOOLS:
        return []
    raw: list[object]
    if tool_name in {"NotebookEdit", "NotebookRead"}:
        raw = [tool_input.get("notebook_path")]
    elif tool_name in {"Glob", "Grep", "LS"}:
        base = tool_input.get("path")
        raw = [base if base is not None else "."]
        pattern = tool_input.get("pattern")
        if tool_name == "Glob" and isinstance(pattern, str) and isinstance(raw[0], str):
            # The fixed leading part of a glob is a directory it reads: Glob("/etc/**") reads /etc.
            fixed = pattern.split("/")
            cut = next((i for i, part in enumerate(fixed) if _GLOB_CHARS.search(part)), len(fixed))
            prefix = "/".join(fixed[:cut])
            if prefix:
                raw.append(prefix if prefix.startswith(("/", "~")) else f"{raw[0]}/{prefix}")
    else:
        raw = [tool_input.get("file_path")]
    resolved: list[ResolvedPath] = []
    for item in raw:
        path = resolve(item, cwd=workspace) if isinstance(item, str) else None
        if path is None:
            return None
        resolved.append(path)
    return resolved


def parse_rule(
    text: object,
    behavior: Behavior,
    *,
    source: str | None,
    workspace: Path,
    settings_dir: Path | None,
    home: Path,
    json_path: str | None = None,
) -> Rule:
    """Parse one rule string; raise :class:`PermissionConfigError` naming ``source`` and ``json_path``."""

    def fail(problem: str) -> PermissionConfigError:
        return PermissionConfigError(problem, source=source, json_path=json_path)

    if not isinstance(text, str):
        raise fail(f"a rule must be a string, not {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise fail("empty rule")
    if "(" in stripped:
        if not stripped.endswith(")"):
            raise fail(f"rule {text!r} has text after its closing parenthesis or no closing parenthesis")
        tool, spec = stripped[:-1].split("(", 1)
        spec = spec.strip()
    elif ")" in stripped:
        raise fail(f"rule {text!r} has a closing parenthesis without an opening one")
    else:
        tool, spec = stripped, ""
    tool = tool.strip()
    if not _TOOL_NAME.fullmatch(tool):
        raise fail(f"rule {text!r}: {tool!r} is not a tool name (letters, digits, _ - . and * wildcards)")
    if spec in {"", "*"}:
        return Rule(text=text, behavior=behavior, source=source, tool=tool)
    specifier: Specifier
    if tool == "Bash":
        if spec == ":*":
            return Rule(text=text, behavior=behavior, source=source, tool=tool)
        specifier = BashPattern.parse(spec)
    elif tool in {"Read", "Edit", "Write", "Glob", "Grep", "LS", "MultiEdit", "NotebookEdit", "NotebookRead"}:
        specifier = compile_path_pattern(spec, workspace=workspace, settings_dir=settings_dir, home=home)
    elif tool == "WebFetch":
        if not spec.startswith("domain:"):
            raise fail(f"rule {text!r}: WebFetch rules take `domain:<host>`, e.g. WebFetch(domain:example.com)")
        host = spec.removeprefix("domain:").strip().rstrip(".").lower()
        if not _HOST.fullmatch(host):
            raise fail(f"rule {text!r}: {host!r} is not a host name")
        specifier = DomainPattern(host=host)
    else:
        specifier = spec
    return Rule(text=text, behavior=behavior, source=source, tool=tool, specifier=specifier)
