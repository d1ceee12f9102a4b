"""The permission policy: rules from settings layers, the mode, and the decision for one tool call."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, Protocol, cast

from hookloop.permissions import _shell
from hookloop.permissions._files import PROTECTED_DIRS, PROTECTED_FILES, names_protected, protected_reason
from hookloop.permissions._merge import merge
from hookloop.permissions._paths import ANY_BELOW, Links, PathPattern, ResolvedPath, realpath, within
from hookloop.permissions._readrules import ReadRules
from hookloop.permissions._rules import (
    EDIT_TOOLS,
    READ_ONLY_TOOLS,
    BashPattern,
    CallContext,
    DomainPattern,
    Rule,
    command_files,
    parse_rule,
    redirects_stay_inside,
    tool_paths,
)
from hookloop.permissions._types import (
    BEHAVIORS,
    MODES,
    Behavior,
    HookVote,
    PermissionConfigError,
    PermissionMode,
    PermissionOutcome,
    RuleMatch,
)
from hookloop.permissions._verdicts import BashVerdict, BashVerdicts

__all__ = ["PERMISSION_KEYS", "PermissionPolicy", "SandboxGate", "unknown_permission_keys"]

_RESTRICTIVENESS: Final[tuple[Behavior, ...]] = ("deny", "ask", "allow")

_PROTECTED_NAMED: Final = re.compile(
    r"(?<![\w.-])("
    + "|".join(re.escape(name) for name in sorted(PROTECTED_DIRS | PROTECTED_FILES, key=len, reverse=True))
    + r")(?![\w.-])"
)
"""A protected directory or file named in a command's text (``.git/hooks``, ``~/.bashrc``; not ``.github``):
code given as data (``python3 -c``, ``node -e``, awk, SQL …) that names one may write there, which no rule can
check, so even a hook's allow or ``bypassPermissions`` asks first."""


class SandboxGate(Protocol):
    """What the policy asks an OS sandbox (:class:`hookloop.sandbox.Sandbox` implements it)."""

    def auto_allows(self, tool_input: Mapping[str, object]) -> bool:
        """The Bash call runs sandboxed and ``autoAllowBashIfSandboxed`` is on."""
        ...

    def wants_unsandboxed(self, tool_input: Mapping[str, object]) -> bool:
        """The Bash call asks to run outside the sandbox (``dangerouslyDisableSandbox``) and may."""
        ...


_SANDBOX_MODES: Final = frozenset({"default", "acceptEdits", "dontAsk"})


def _check_mode(mode: object, *, source: str | None = None, json_path: str | None = None) -> PermissionMode:
    """``mode`` as the exact ``str`` of :data:`MODES` it names (a ``str`` subclass equal to one is not kept)."""
    if not isinstance(mode, str) or mode not in MODES:
        raise PermissionConfigError(
            f"unknown permission mode {mode!r} (expected one of {', '.join(MODES)})", source=source, json_path=json_path
        )
    return MODES[MODES.index(mode)]


def _looks_like_path(label: str) -> bool:
    return "/" in label or os.sep in label or label.endswith(".json")


PERMISSION_KEYS = ("allow", "ask", "deny", "additionalDirectories", "defaultMode", "disableBypassPermissionsMode")
"""The keys of a settings file's ``permissions`` object (Claude Code's)."""


def unknown_permission_keys(permissions: Mapping[str, object]) -> list[tuple[str, str | None]]:
    """The keys of a ``permissions`` object that are not :data:`PERMISSION_KEYS`, each with the known key it
    looks like a misspelling of (``alow`` → ``allow``, ``Deny`` → ``deny``), or None. Pure."""
    import difflib

    found: list[tuple[str, str | None]] = []
    lowered = {key.lower(): key for key in PERMISSION_KEYS}
    for key in permissions:
        name = str(key)
        if name in PERMISSION_KEYS:
            continue
        close = lowered.get(name.lower()) or next(
            iter(difflib.get_close_matches(name, PERMISSION_KEYS, n=1, cutoff=0.6)), None
        )
        found.append((name, close))
    return found


class PermissionPolicy:
    """Permission rules (allow / ask / deny lists in Claude Code's syntax) and a permission mode.

    :meth:`check` finds the most restrictive rule matching a call; :meth:`decide` merges it with the hooks'
    votes and the mode's default (see :func:`hookloop.permissions.merge`). The policy only reads the file
    system to resolve paths (symlinks); it never runs anything. Methods are safe to call from several threads
    except :meth:`add_session_rule` and the ``mode`` setter, which the owner calls between decisions.
    """

    def __init__(
        self,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        mode: PermissionMode = "default",
        workspace: str | Path | None = None,
        additional_directories: Iterable[str | Path] = (),
        source: str | None = None,
    ) -> None:
        """Build a policy from rule lists given in code.

        ``workspace`` defaults to the current directory (read once, now). Relative ``additional_directories``
        are relative to the workspace. ``source`` labels the rules in outcomes. A malformed rule raises
        :class:`PermissionConfigError` naming the list and index (``deny[2]``); an unknown mode raises it too.
        """
        self._mode = _check_mode(mode)
        self._workspace = Path(os.path.abspath(Path(workspace if workspace is not None else os.getcwd())))
        self._home = Path(os.path.expanduser("~"))
        hookloop_home = os.environ.get("HOOKLOOP_HOME")
        self._protected_extra = (os.path.realpath(hookloop_home),) if hookloop_home else ()
        self._directories: list[str] = []
        self._rules: dict[Behavior, list[Rule]] = {"allow": [], "ask": [], "deny": []}
        self._verdicts: BashVerdicts | None = None  # the rules' snapshot for Bash matching, rebuilt after _add
        self.sandbox: SandboxGate | None = None
        """The OS sandbox Bash commands run in, if any: with ``autoAllowBashIfSandboxed`` a sandboxed Bash
        call no rule or hook decided is allowed (in default, acceptEdits and dontAsk modes; deny and ask rules
        still come first), and a call with ``dangerouslyDisableSandbox`` always asks (as an ask rule would)."""
        self._add_directories(additional_directories, base=self._workspace)
        for behavior, texts in (("allow", allow), ("ask", ask), ("deny", deny)):
            for index, text in enumerate(texts):
                self._add(cast("Behavior", behavior), text, source=source, json_path=f"{behavior}[{index}]")

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def from_settings(
        cls,
        layers: Sequence[tuple[str | Path, Mapping[str, object]]],
        *,
        workspace: str | Path | None = None,
        mode: PermissionMode | None = None,
    ) -> PermissionPolicy:
        """Build a policy from Claude Code settings documents, lowest precedence first (user → project → local).

        Each layer is ``(path or label, parsed settings JSON)``; only its ``"permissions"`` key is read:
        ``allow`` / ``ask`` / ``deny`` lists are concatenated across layers (deny > ask > allow decides, so a
        later layer cannot loosen an earlier deny), ``additionalDirectories`` lists are concatenated (relative
        entries are relative to the settings file's base directory), and ``defaultMode`` is taken from the last
        layer that sets it, unless ``mode`` is given. A key that looks like a misspelt one (``alow``, ``dney``:
        see :func:`unknown_permission_keys`) is an error — a rule list must never be dropped silently; other
        unknown keys are ignored (``hookloop hooks validate`` warns about them). A ``/x`` rule is relative to the
        settings file's directory (the directory above ``.claude/``); for a layer named by a label, not a path,
        to the workspace. Anything malformed raises :class:`PermissionConfigError` naming the layer and the JSON
        path, e.g. ``.claude/settings.json: permissions.allow[3]: …``.
        """
        policy = cls(workspace=workspace)
        chosen: PermissionMode | None = None
        for label, document in layers:
            source = str(label)
            settings_dir = Path(os.path.abspath(os.path.dirname(source))) if _looks_like_path(source) else None
            if not isinstance(document, Mapping):
                raise PermissionConfigError("settings must be a JSON object", source=source)
            permissions = document.get("permissions")
            if permissions is None:
                continue
            if not isinstance(permissions, Mapping):
                raise PermissionConfigError("must be a JSON object", source=source, json_path="permissions")
            for key, close in unknown_permission_keys(permissions):
                if close is not None:
                    raise PermissionConfigError(
                        f"unknown key {key!r}; did you mean {close!r}?", source=source, json_path=f"permissions.{key}"
                    )
            for behavior in BEHAVIORS:
                entries = permissions.get(behavior, [])
                key = f"permissions.{behavior}"
                if not isinstance(entries, list):
                    raise PermissionConfigError("must be a list of rule strings", source=source, json_path=key)
                for index, text in enumerate(entries):
                    policy._add(behavior, text, source=source, json_path=f"{key}[{index}]", settings_dir=settings_dir)
            directories = permissions.get("additionalDirectories", [])
            key = "permissions.additionalDirectories"
            if not isinstance(directories, list):
                raise PermissionConfigError("must be a list of directory strings", source=source, json_path=key)
            for index, entry in enumerate(directories):
                if not isinstance(entry, str) or not entry.strip():
                    raise PermissionConfigError(
                        f"must be a non-empty directory string, not {entry!r}",
                        source=source,
                        json_path=f"{key}[{index}]",
                    )
            base = policy._workspace if settings_dir is None else settings_dir
            if settings_dir is not None and settings_dir.name == ".claude":
                base = settings_dir.parent
            policy._add_directories(cast("list[str]", directories), base=base)
            if "defaultMode" in permissions:
                chosen = _check_mode(permissions["defaultMode"], source=source, json_path="permissions.defaultMode")
        policy.mode = mode if mode is not None else (chosen or "default")
        return policy

    def _add(
        self,
        behavior: Behavior,
        text: object,
        *,
        source: str | None,
        json_path: str | None,
        settings_dir: Path | None = None,
    ) -> None:
        rule = parse_rule(
            text,
            behavior,
            source=source,
            workspace=self._workspace,
            settings_dir=settings_dir,
            home=self._home,
            json_path=json_path,
        )
        self._rules[behavior].append(rule)
        self._verdicts = None

    def _add_directories(self, directories: Iterable[str | Path], *, base: Path) -> None:
        for directory in directories:
            joined = os.path.join(base, os.path.expanduser(str(directory)))
            self._directories.append(os.path.realpath(joined))

    def copy(self, *, mode: PermissionMode | None = None) -> PermissionPolicy:
        """An independent copy (rules added to one later never reach the other), in ``mode`` if given — what
        a subagent runs under. The sandbox gate is shared."""
        twin = copy.copy(self)
        twin._directories = list(self._directories)
        twin._rules = {behavior: list(rules) for behavior, rules in self._rules.items()}
        twin._verdicts = None
        if mode is not None:
            twin.mode = mode
        return twin

    # -- state -------------------------------------------------------------------------------------------------
    @property
    def mode(self) -> PermissionMode:
        """The permission mode; setting an unknown mode raises :class:`PermissionConfigError`."""
        return self._mode

    @mode.setter
    def mode(self, value: PermissionMode) -> None:
        self._mode = _check_mode(value)

    @property
    def workspace(self) -> Path:
        """The workspace directory (absolute, as given)."""
        return self._workspace

    @property
    def additional_directories(self) -> tuple[str, ...]:
        """The additional directories (real paths), in the order given."""
        return tuple(dict.fromkeys(self._directories))

    def add_session_rule(self, behavior: Behavior, rule: str) -> None:
        """Add a rule for the rest of the session (an "allow always" answer), labelled ``"session"``.

        A malformed rule raises :class:`PermissionConfigError`; the policy is unchanged then.
        """
        if behavior not in BEHAVIORS:
            raise PermissionConfigError(f"unknown behavior {behavior!r}", source="session")
        self._add(behavior, rule, source="session", json_path=None)

    def add_hook_rule(self, behavior: Behavior, rule: str, *, source: str) -> None:
        """Add a rule a hook asked for (a PermissionRequest hook's ``updatedPermissions``) for the rest of the
        session, labelled ``source``. Like :meth:`add_session_rule`, except that an allow rule naming a
        protected path (``Edit(.git/**)``, ``Write(~/.bashrc)`` …) is refused: a hook never unlocks what only
        the user's own allow rule may. Deny and ask rules are always taken. A refused or malformed rule raises
        :class:`PermissionConfigError`; the policy is unchanged then."""
        if behavior not in BEHAVIORS:
            raise PermissionConfigError(f"unknown behavior {behavior!r}", source=source)
        parsed = parse_rule(
            rule, behavior, source=source, workspace=self._workspace, settings_dir=None, home=self._home, json_path=None
        )
        spec = parsed.specifier
        if behavior == "allow" and isinstance(spec, PathPattern):
            names = (*PROTECTED_DIRS, *PROTECTED_FILES, *self._protected_extra)
            named = next((name for name in names if names_protected(spec, name)), None)
            if named is not None:
                raise PermissionConfigError(
                    f"allow rule {rule!r} names the protected path {named}; a hook cannot allow it", source=source
                )
        self._rules[behavior].append(parsed)
        self._verdicts = None

    def restricted_paths(self, family: str) -> tuple[PathPattern, ...]:
        """The path patterns of the deny and ask rules that cover a ``"Read"`` or ``"Edit"`` tool, in rule
        order (the OS sandbox masks / write-protects what they cover; an ask counts, since nobody is asked
        inside a sandboxed command)."""
        tools = READ_ONLY_TOOLS if family == "Read" else EDIT_TOOLS
        return tuple(
            rule.specifier
            for behavior in ("deny", "ask")
            for rule in self._rules[behavior]
            if isinstance(rule.specifier, PathPattern) and any(rule.covers_tool(tool) for tool in tools)
        )

    def web_domains(self, behavior: Behavior) -> tuple[str, ...]:
        """The host patterns of the ``WebFetch(domain:…)`` rules of one behaviour (the sandbox's network
        allow-list takes the allow ones; deny and ask ones are refused)."""
        return tuple(
            rule.specifier.host
            for rule in self._rules[behavior]
            if isinstance(rule.specifier, DomainPattern) and rule.covers_tool("WebFetch")
        )

    # -- decisions ---------------------------------------------------------------------------------------------
    def _context(self, cwd: str | Path | None = None) -> CallContext:
        links: Links = {}  # the decision's memo of symlinks, shared with the redirect targets' resolution
        allowed = (realpath(str(self._workspace), links), *self._directories)
        start = None if cwd is None else Path(os.path.abspath(os.path.join(self._workspace, cwd)))
        return CallContext(
            workspace=self._workspace,
            allowed_dirs=tuple(dict.fromkeys(allowed)),
            cwd=start,
            home=self._home,
            links=links,
        )

    def check(
        self, tool_name: str, tool_input: Mapping[str, object], *, cwd: str | Path | None = None
    ) -> RuleMatch | None:
        """The most restrictive rule matching the call (deny > ask > allow), or ``None``.

        Within one behaviour the first matching rule in layer order (then session rules) is reported. A Bash
        allow rule matches only when every subcommand is covered by some allow rule and the command could be
        analysed (see :mod:`hookloop.permissions`); the first allow rule covering the first subcommand is then
        reported. For Bash, the files a command opens by redirection (and ``tee`` operands) are also checked
        against Edit/Write (``>``, ``>>``, ``<>`` …) and Read (``<``, ``<>``) deny and ask rules, resolved as bash
        resolves them (tilde forms, ``cd`` earlier in the command) from ``cwd``, the directory the command
        starts in (default: the workspace; relative to it if relative). A target only known at run time (a glob,
        a variable, an unknown tilde form, a relative path after a ``cd`` to an unknown directory) matches every
        such rule.
        """
        return self._check(tool_name, tool_input, self._context(cwd))

    def _check(self, tool_name: str, tool_input: Mapping[str, object], context: CallContext) -> RuleMatch | None:
        # For a Bash command, what command patterns say comes from the snapshot's memo (it depends on the
        # command and the rules only); everything else (redirect targets, other specifiers) is matched live.
        command = tool_input.get("command")
        rules: Mapping[Behavior, Sequence[Rule]] = self._rules
        verdict: BashVerdict | None = None
        if tool_name == "Bash" and isinstance(command, str):
            snapshot = self._verdicts
            if snapshot is None:
                snapshot = self._verdicts = BashVerdicts(self._rules)
            verdict = snapshot.verdict(command)
            restricting = self._bash_restriction(snapshot, verdict, tool_input, command, context)
            if restricting is not None:
                return restricting
            return _bash_allow(snapshot, verdict, tool_input, command, context)
        for behavior in ("deny", "ask"):
            if behavior == "ask" and self._unsandboxed(tool_name, tool_input):
                return RuleMatch(behavior="ask", rule="dangerouslyDisableSandbox", source="sandbox")
            flags = None if verdict is None else verdict.deny if behavior == "deny" else verdict.ask
            for index, rule in enumerate(rules[behavior]):
                if flags is not None and isinstance(rule.specifier, BashPattern):
                    hit = flags[index]
                else:
                    hit = rule.matches(tool_name, tool_input, context)
                if hit or _redirect_hit(rule, tool_name, tool_input, context):
                    return RuleMatch(behavior=behavior, rule=rule.text, source=rule.source)
        return self._allow_match(tool_name, tool_input, context, rules["allow"], verdict)

    def _bash_restriction(
        self,
        snapshot: BashVerdicts,
        verdict: BashVerdict,
        tool_input: Mapping[str, object],
        command: str,
        context: CallContext,
    ) -> RuleMatch | None:
        """:meth:`_check`'s deny and ask passes for a Bash command, from the snapshot's per-rule facts: the same
        rules in the same order as the general passes, without asking each rule again what it covers."""
        for behavior in ("deny", "ask"):
            if behavior == "ask" and self._unsandboxed("Bash", tool_input):
                return RuleMatch(behavior="ask", rule="dangerouslyDisableSandbox", source="sandbox")
            flags = verdict.deny if behavior == "deny" else verdict.ask
            rules, patterns, opens = snapshot.rules[behavior], snapshot.patterns[behavior], snapshot.opens[behavior]
            for index in snapshot.restricting[behavior]:  # the others never match a Bash call
                rule = rules[index]
                hit = flags[index] if patterns[index] else rule.matches("Bash", tool_input, context)
                writes, reads = opens[index]
                if hit or ((writes or reads) and _opens_covered(rule, writes, reads, command, context)):
                    return RuleMatch(behavior=behavior, rule=rule.text, source=rule.source)
        return None

    def read_filter(self, tool_name: str, tool_input: Mapping[str, object]) -> ReadRules | None:
        """What a call's reads must leave out beyond its own paths (a search walking a tree), as a
        :class:`hookloop.tools.ReadFilter`; ``None`` when no rule restricts them.

        It covers the deny rules and the ask rules for this tool or the Read family with a path specifier
        (or none), except ask rules that match the call itself (it only runs once approved under them). The
        rules are read now; rules added later do not change it.
        """
        return ReadRules.for_call(
            deny=tuple(self._rules["deny"]),
            ask=tuple(self._rules["ask"]),
            tool_name=tool_name,
            tool_input=tool_input,
            context=self._context,
        )

    def _unsandboxed(self, tool_name: str, tool_input: Mapping[str, object]) -> bool:
        return tool_name == "Bash" and self.sandbox is not None and self.sandbox.wants_unsandboxed(tool_input)

    @staticmethod
    def _allow_match(
        tool_name: str,
        tool_input: Mapping[str, object],
        context: CallContext,
        allow: Sequence[Rule],
        verdict: BashVerdict | None,
    ) -> RuleMatch | None:
        """The allow rule matching the call; ``verdict`` is the memo for a Bash command (``None`` otherwise)."""
        command = tool_input.get("command")
        for index, rule in enumerate(allow):
            if verdict is not None and isinstance(command, str) and isinstance(rule.specifier, BashPattern):
                hit = verdict.allow[index] and redirects_stay_inside(command, context)
            else:
                hit = rule.matches(tool_name, tool_input, context)
            if hit:
                return RuleMatch(behavior="allow", rule=rule.text, source=rule.source)
        if verdict is None or not isinstance(command, str):
            return None
        # A compound command may be covered by different allow rules, one per subcommand (the memo has the
        # first rule covering the first subcommand when every subcommand is covered and the analysis is safe).
        first = verdict.covering
        if first is None or not redirects_stay_inside(command, context):
            return None
        return RuleMatch(behavior="allow", rule=first.text, source=first.source)

    def decide(
        self,
        tool_name: str,
        tool_input: Mapping[str, object],
        *,
        hooks: Sequence[HookVote] = (),
        read_only: bool = False,
        cwd: str | Path | None = None,
    ) -> PermissionOutcome:
        """The final decision for one call: rules, then hooks, then the mode's default (see :func:`merge`).

        ``read_only`` marks a tool that only reads (the built-in Read, Glob, Grep, LS and NotebookRead always
        count as read-only). ``hooks`` are the votes of the pre-tool-call hooks that expressed a permission
        decision; their order does not matter. ``cwd`` is the directory a Bash command will start in (the Bash
        tool's remembered working directory; default the workspace), see :meth:`check`.

        Two things are never allowed by a mode's default or a hook's allow, only asked (denied in ``dontAsk``):
        a write to a protected path (``.git/``, ``.claude/``, ``.hookloop/``, shell start-up files …, see
        :mod:`hookloop.permissions`) unless an allow rule names it, and a Bash command opening a file only known
        at run time. ``bypassPermissions`` asks for them too.
        """
        behavior, reason = self._mode_default(tool_name, tool_input, read_only=read_only)
        context = self._context(cwd)
        outcome = merge(
            self._check(tool_name, tool_input, context),
            hooks,
            mode=self._mode,
            unmatched=behavior,
            unmatched_reason=reason,
        )
        if outcome.behavior != "allow":
            return outcome
        guard = self._guard(tool_name, tool_input, context)
        if guard is None:
            return outcome
        decided_by, why = guard
        if self._mode == "dontAsk":
            return PermissionOutcome(
                behavior="deny", reason=f"dontAsk mode denies what would need approval ({why})", decided_by=decided_by
            )
        return PermissionOutcome(behavior="ask", reason=why, decided_by=decided_by)

    def _guard(self, tool_name: str, tool_input: Mapping[str, object], context: CallContext) -> tuple[str, str] | None:
        """Why an allowed call must still be asked about: ``(decided_by, reason)``, or ``None``."""
        if tool_name in EDIT_TOOLS:
            for path in tool_paths(tool_name, tool_input, self._workspace) or ():
                name = protected_reason(path, self._protected_extra)
                if name is not None and not self._names(name, tool_name, path):
                    return "protected path", f"{path.real} is under the protected path {name}; no allow rule names it"
            return None
        command = tool_input.get("command")
        if tool_name != "Bash" or not isinstance(command, str):
            return None
        for access in command_files(command, context):
            verb = "writes" if access.write else "reads"
            if access.paths is None:
                return "run-time file", f"the command {verb} a file only known at run time ({access.written})"
            if not access.write:
                continue
            for path in access.paths:
                if path.lexical.endswith(ANY_BELOW):
                    where = path.real[: -len(ANY_BELOW)].rstrip("/") or "/"
                    if not self._live(where, context):
                        continue
                    return "protected path", (
                        f"the command writes files below {where} that it does not name (what an archive, a patch or "
                        "a directory holds): they may be under a protected path (.git, .claude …)"
                    )
                name = protected_reason(path, self._protected_extra)
                if name is not None and not self._names(name, "Write", path):
                    why = f"the command writes {path.real}, under the protected path {name}; no allow rule names it"
                    return "protected path", why
        if _shell.analyse(command).runs_code:
            named = _PROTECTED_NAMED.search(command)
            if named is not None:  # `python3 -c "open('.git/hooks/pre-commit', 'w')…"`: no rule sees the write
                return "protected path", (
                    f"the code this command runs names the protected path {named.group(1)}, where it may write"
                )
        return None

    def _live(self, directory: str, context: CallContext) -> bool:
        """Whether files written below ``directory`` may be protected paths that matter: it is the workspace, the
        home directory, an additional directory, ``$HOOKLOOP_HOME`` or a directory above one of them (where
        ``.git``, ``.claude``, ``.bashrc`` … are read), or is itself under a protected path. Below, in a build
        directory say, a ``.git`` is only a nested repository's."""
        home = str(self._home)
        places = (
            *context.allowed_dirs,
            str(self._workspace),
            home,
            realpath(home, context.links),
            *self._protected_extra,
        )
        if any(within(place, directory) for place in places):
            return True
        return protected_reason(ResolvedPath(lexical=directory, real=directory), self._protected_extra) is not None

    def _names(self, name: str, tool_name: str, path: ResolvedPath) -> bool:
        """Whether an allow rule for ``tool_name`` covers ``path`` and names the protected ``name`` literally."""
        return any(
            isinstance(rule.specifier, PathPattern)
            and rule.covers_tool(tool_name)
            and rule.specifier.matches(path, loose=False)
            and names_protected(rule.specifier, name)
            for rule in self._rules["allow"]
        )

    def _mode_default(
        self, tool_name: str, tool_input: Mapping[str, object], *, read_only: bool
    ) -> tuple[Behavior, str]:
        mode = self._mode
        if mode == "bypassPermissions":
            return "allow", "bypassPermissions mode allows every call no rule or hook restricts"
        reads = read_only or tool_name in READ_ONLY_TOOLS
        paths = tool_paths(tool_name, tool_input, self._workspace)
        outside = self._outside(paths)
        if outside is not None and (reads or (tool_name in EDIT_TOOLS and mode == "acceptEdits")):
            return "ask", outside
        if reads:
            return "allow", f"{tool_name} only reads inside the workspace; {mode} mode allows it"
        if mode == "plan":
            return "deny", f"plan mode does not run {tool_name}, which is not read-only"
        if tool_name == "Bash" and mode in _SANDBOX_MODES and self.sandbox and self.sandbox.auto_allows(tool_input):
            return "allow", "the command runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed)"
        if mode == "acceptEdits" and tool_name in EDIT_TOOLS:
            return "allow", f"acceptEdits mode allows {tool_name} inside the workspace"
        return "ask", f"{tool_name} needs approval in {mode} mode"

    def _outside(self, paths: list[ResolvedPath] | None) -> str | None:
        """Why the paths are not all inside the workspace or additional directories; ``None`` if they are."""
        if paths is None:
            return "the tool input has no usable path"
        if not paths:
            return None  # nothing to resolve (Bash): the workspace is not resolved a second time
        allowed = self._context().allowed_dirs
        for path in paths:
            if not any(within(path.real, directory) for directory in allowed):
                return f"{path.real} is outside the workspace and its additional directories"
        return None


def _bash_allow(
    snapshot: BashVerdicts, verdict: BashVerdict, tool_input: Mapping[str, object], command: str, context: CallContext
) -> RuleMatch | None:
    """:meth:`PermissionPolicy._allow_match` for a Bash command, from the snapshot's per-rule facts."""
    rules, patterns = snapshot.rules["allow"], snapshot.patterns["allow"]
    for index in snapshot.allow_candidates(verdict):  # the others never match a Bash call
        rule = rules[index]
        if patterns[index]:
            hit = verdict.allow[index] and redirects_stay_inside(command, context)
        else:
            hit = rule.matches("Bash", tool_input, context)
        if hit:
            return RuleMatch(behavior="allow", rule=rule.text, source=rule.source)
    # A compound command may be covered by different allow rules, one per subcommand (the memo has the first
    # rule covering the first subcommand when every subcommand is covered and the analysis is safe).
    first = verdict.covering
    if first is None or not redirects_stay_inside(command, context):
        return None
    return RuleMatch(behavior="allow", rule=first.text, source=first.source)


def _opens_covered(rule: Rule, writes: bool, reads: bool, command: str, context: CallContext) -> bool:
    """:func:`_redirect_hit` for a Bash command and a rule covering its written (``writes``) or read files."""
    for access in command_files(command, context):
        if not (writes if access.write else reads):
            continue
        if access.paths is None or rule.specifier is None:
            return True
        specifier = rule.specifier
        assert isinstance(specifier, PathPattern)
        if any(specifier.matches(path, loose=True) for path in access.paths):
            return True
    return False


def _redirect_hit(rule: Rule, tool_name: str, tool_input: Mapping[str, object], context: CallContext) -> bool:
    """Whether a Read/Edit deny or ask rule matches a file the Bash command opens (run-time targets: always)."""
    if tool_name != "Bash" or not isinstance(rule.specifier, PathPattern | None):
        return False
    command = tool_input.get("command")
    if not isinstance(command, str):
        return False
    writes = any(rule.covers_tool(tool) for tool in EDIT_TOOLS)
    reads = any(rule.covers_tool(tool) for tool in READ_ONLY_TOOLS)
    if not writes and not reads:
        return False
    for access in command_files(command, context):
        if not (writes if access.write else reads):
            continue
        if access.paths is None or rule.specifier is None:
            return True
        if any(rule.specifier.matches(path, loose=True) for path in access.paths):
            return True
    return False
