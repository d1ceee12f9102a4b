"""The part of a Bash call's rule matching that depends only on the command string and the rules, memoised.

Matching a ``Bash(…)`` command pattern against a command's analysed subcommands is a pure function of the
pattern and the command; what depends on the file system (where redirections point, see :mod:`._files`), the
working directory, the sandbox or the mode is not part of it and is evaluated again on every decision by the
policy. :class:`BashVerdicts` holds one snapshot of a policy's rule lists and answers, per command:

* which deny and ask rules with a command pattern match it (loose matching, :meth:`BashPattern.restricts`);
* which allow rules with a command pattern allow every subcommand (before the redirect check);
* the first allow rule covering the first subcommand when every subcommand is covered by some allow rule
  (before the redirect check), or ``None``.

Per subcommand (its words) it also remembers the first allow rule covering it and which deny and ask command
patterns restrict it, so a new command made of subcommands seen before is matched with one look-up each.

The policy builds a new snapshot whenever a rule is added, so a cached answer never outlives its rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hookloop.permissions import _shell
from hookloop.permissions._paths import PathPattern
from hookloop.permissions._rules import EDIT_TOOLS, READ_ONLY_TOOLS, BashPattern, Rule, bash_pattern_matches
from hookloop.permissions._types import Behavior

__all__ = ["BashVerdict", "BashVerdicts"]

_MAX_COMMANDS: Final = 256
_MAX_WORDS: Final = 4096
_MIXED: Final = object()  # a sentinel: no single program, or nothing remembered


@dataclass(frozen=True, slots=True)
class BashVerdict:
    """The rule-only matching results for one command, aligned with the snapshot's rule tuples.

    ``deny[i]`` / ``ask[i]`` / ``allow[i]``: rule ``i`` of that list has a command pattern and it matches the
    command (for allow: every subcommand, the analysis is safe and not empty). ``covering``: see the module.
    """

    deny: tuple[bool, ...]
    ask: tuple[bool, ...]
    allow: tuple[bool, ...]
    covering: Rule | None
    allowing: tuple[int, ...] = ()
    """The indices ``i`` with ``allow[i]``, in order."""


class BashVerdicts:
    """A snapshot of the rule lists and the memoised :class:`BashVerdict` per command (at most 256 kept)."""

    __slots__ = (
        "_allow_general",
        "_allow_named",
        "_allow_unnamed",
        "_bits",
        "_by_head",
        "_cache",
        "_facts",
        "_general",
        "_none",
        "_restrict_bits",
        "_specs",
        "opens",
        "patterns",
        "restricting",
        "rules",
    )

    def __init__(self, rules: dict[Behavior, list[Rule]]) -> None:
        self.rules: Final[dict[Behavior, tuple[Rule, ...]]] = {
            behavior: tuple(rules[behavior]) for behavior in ("allow", "ask", "deny")
        }
        self.patterns: Final[dict[Behavior, tuple[bool, ...]]] = {
            behavior: tuple(isinstance(rule.specifier, BashPattern) for rule in listed)
            for behavior, listed in self.rules.items()
        }
        """Per rule: whether it has a command pattern (its answer for a command is in the verdict)."""
        self.opens: Final[dict[Behavior, tuple[tuple[bool, bool], ...]]] = {
            behavior: tuple(_opens(rule) for rule in listed) for behavior, listed in self.rules.items()
        }
        """Per rule: whether it covers the files a Bash command writes, and those it reads (by redirection)."""
        self.restricting: Final[dict[Behavior, tuple[int, ...]]] = {
            behavior: tuple(
                index
                for index, rule in enumerate(self.rules[behavior])
                if self.patterns[behavior][index] or rule.covers_tool("Bash") or any(self.opens[behavior][index])
            )
            for behavior in ("deny", "ask")
        }
        """The deny or ask rules that can match a Bash call, in order: those with a command pattern, those covering
        the Bash tool, and those covering the files it opens (``Rule.matches`` is false for any other)."""
        self._allow_general = tuple(
            index
            for index, rule in enumerate(self.rules["allow"])
            if not self.patterns["allow"][index] and rule.covers_tool("Bash")
        )  # the allow rules without a command pattern that can match a Bash call
        self._specs: dict[Behavior, tuple[tuple[int, BashPattern], ...]] = {
            behavior: tuple(
                (index, spec) for index, rule in enumerate(listed) if isinstance(spec := rule.specifier, BashPattern)
            )
            for behavior, listed in self.rules.items()
        }
        self._none = {behavior: (False,) * len(listed) for behavior, listed in self.rules.items()}
        # Allow patterns by the program they name (None: any program): only those can allow every subcommand.
        self._allow_unnamed = tuple((index, spec) for index, spec in self._specs["allow"] if spec.head is None)
        self._allow_named: dict[str, tuple[tuple[int, BashPattern], ...]] = {}
        for index, spec in self._specs["allow"]:
            if spec.head is not None:
                self._allow_named[spec.head] = (*self._allow_named.get(spec.head, ()), (index, spec))
        self._cache: dict[str, BashVerdict] = {}
        self._facts: dict[_shell.Words, tuple[Rule | None, int]] = {}  # subcommand → what `_learn` found
        # One bit per deny and ask rule with a command pattern, for `_learn`.
        self._bits: dict[Behavior, tuple[int, ...]] = {}
        restrict_bits: list[tuple[int, BashPattern]] = []
        for behavior in ("deny", "ask"):
            start = len(restrict_bits)
            restrict_bits.extend((1 << (start + at), spec) for at, (_, spec) in enumerate(self._specs[behavior]))
            self._bits[behavior] = tuple(bit for bit, _ in restrict_bits[start:])
        self._restrict_bits = tuple(restrict_bits)
        # Allow rules that can cover a subcommand, by the program their pattern names; `_general` holds those
        # that can cover any program (no specifier, or a pattern starting with a `*`). Rule order is kept.
        general: list[tuple[int, Rule]] = []
        named: dict[str, list[tuple[int, Rule]]] = {}
        for index, rule in enumerate(self.rules["allow"]):
            if not rule.covers_tool("Bash"):
                continue
            spec = rule.specifier
            if isinstance(spec, BashPattern) and spec.head is not None:
                named.setdefault(spec.head, []).append((index, rule))
            elif spec is None or isinstance(spec, BashPattern):
                general.append((index, rule))
        self._general: tuple[Rule, ...] = tuple(rule for _, rule in general)
        self._by_head: dict[str, tuple[Rule, ...]] = {
            head: tuple(rule for _, rule in sorted([*found, *general], key=lambda item: item[0]))
            for head, found in named.items()
        }

    def verdict(self, command: str) -> BashVerdict:
        """The rule-only matching results for ``command`` (computed once per snapshot and command)."""
        found = self._cache.get(command)
        if found is None:
            found = self._compute(command)
            if len(self._cache) >= _MAX_COMMANDS:
                self._cache.clear()
            self._cache[command] = found
        return found

    def _compute(self, command: str) -> BashVerdict:
        # One pass over the subcommands, each looked up once in the memo of what the rules say of it.
        analysis = _shell.analyse(command)
        facts = self._facts
        covered = analysis.safe and bool(analysis.commands)
        first: Rule | None = None
        restricted = 0
        heads: set[str | None] = set()
        for words in analysis.commands:
            covering, bits = facts.get(words) or self._learn(words)
            restricted |= bits
            heads.add(words[0] if words else None)
            if covering is None:
                covered = False
            elif first is None:
                first = covering
        for words in analysis.deny_commands:
            restricted |= (facts.get(words) or self._learn(words))[1]
        allow, allowing = self._allowing(command, analysis, heads)
        return BashVerdict(
            deny=self._restricting("deny", command, analysis, restricted),
            ask=self._restricting("ask", command, analysis, restricted),
            allow=allow,
            covering=first if covered else None,
            allowing=allowing,
        )

    def _learn(self, words: _shell.Words) -> tuple[Rule | None, int]:
        """What the rules say of one subcommand: the first allow rule covering it (or ``None``), and the bits of
        the deny and ask command patterns restricting it (``BashPattern.restricts``). Remembered."""
        head = words[0] if words else None
        candidates = self._by_head.get(head, self._general) if head is not None else self._general
        covering = next((rule for rule in candidates if _covers(rule, words)), None)
        bits = 0
        for bit, spec in self._restrict_bits:
            if spec.restricts(words):
                bits |= bit
        if len(self._facts) >= _MAX_WORDS:
            self._facts.clear()
        found = self._facts[words] = (covering, bits)
        return found

    def _restricting(
        self, behavior: Behavior, command: str, analysis: _shell.ShellAnalysis, restricted: int
    ) -> tuple[bool, ...]:
        # `bash_pattern_matches(spec, command, loose=True)` for each deny or ask rule with a command pattern:
        # every one when the program may be one only known at run time, else those restricting a subcommand
        # (`restricted`: the bits of `_learn`), and those whose words all appear in a command that is unsafe or
        # runs code. (`bash_pattern_matches` looks only at the subcommands of the program the rule names;
        # `restricts` is false for the others.)
        specs, bits = self._specs[behavior], self._bits[behavior]
        if analysis.runs_unknown:
            hits = tuple(index for index, _ in specs)
        else:
            scan = not analysis.safe or analysis.runs_code
            hits = tuple(
                index
                for (index, spec), bit in zip(specs, bits, strict=True)
                if restricted & bit or (scan and spec.appears_in(_shell.tokens(command)))
            )
        return self._flags(behavior, hits)

    def _flags(self, behavior: Behavior, hits: tuple[int, ...]) -> tuple[bool, ...]:
        if not hits:
            return self._none[behavior]
        flags = list(self._none[behavior])
        for index in hits:
            flags[index] = True
        return tuple(flags)

    def _allowing(
        self, command: str, analysis: _shell.ShellAnalysis, heads: set[str | None]
    ) -> tuple[tuple[bool, ...], tuple[int, ...]]:
        # Per allow rule, whether its command pattern allows every subcommand (`bash_pattern_matches`), and the
        # indices of those that do. A pattern that names a program is not matched against a command made of
        # several programs (`heads`) or another one: `BashPattern.allows` refuses every subcommand of another.
        only = next(iter(heads)) if len(heads) == 1 else _MIXED
        named = self._allow_named.get(only, ()) if isinstance(only, str) else ()
        specs = tuple(sorted((*self._allow_unnamed, *named), key=_first)) if named else self._allow_unnamed
        hits = tuple(index for index, spec in specs if bash_pattern_matches(spec, command, loose=False))
        return self._flags("allow", hits), hits

    def allow_candidates(self, verdict: BashVerdict) -> tuple[int, ...]:
        """The allow rules that can match a Bash call with this verdict, in order: those without a command
        pattern that cover the Bash tool, and those whose pattern allows the command."""
        if not verdict.allowing:
            return self._allow_general
        return tuple(sorted((*self._allow_general, *verdict.allowing)))


def _first(item: tuple[int, BashPattern]) -> int:
    return item[0]


def _opens(rule: Rule) -> tuple[bool, bool]:
    # A Read/Edit rule with a path specifier (or none) covers a Bash command's redirect targets.
    if not isinstance(rule.specifier, PathPattern | None):
        return False, False
    return any(rule.covers_tool(tool) for tool in EDIT_TOOLS), any(rule.covers_tool(tool) for tool in READ_ONLY_TOOLS)


def _covers(rule: Rule, words: _shell.Words) -> bool:
    spec = rule.specifier
    return spec is None or (isinstance(spec, BashPattern) and spec.allows(words))
