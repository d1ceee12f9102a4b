"""The part of a Bash call's rule matching that depends only on the command string and the rules, memoised.

Matching a ``Bash(…)`` command pattern against a command's analysed subcommands is a pure function of the
pattern and the command; what depends on the file system (where redirections point, see :mod:`._files`), the
working directory, the sandbox or the mode is not part of it and is evaluated again on every decision by the
policy. :class:`BashVerdicts` holds one snapshot of a policy's rule lists and answers, per command:

* which deny and ask rules with a command pattern match it (loose matching, :meth:`BashPattern.restricts`);
* which allow rules with a command pattern allow every subcommand (before the redirect check);
* the first allow rule covering the first subcommand when every subcommand is covered by some allow rule
  (before the redirect check), or ``None``.

The policy builds a new snapshot whenever a rule is added, so a cached answer never outlives its rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hookloop.permissions import _shell
from hookloop.permissions._rules import BashPattern, Rule, bash_pattern_matches
from hookloop.permissions._types import Behavior

__all__ = ["BashVerdict", "BashVerdicts"]

_MAX_COMMANDS: Final = 256


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


class BashVerdicts:
    """A snapshot of the rule lists and the memoised :class:`BashVerdict` per command (at most 256 kept)."""

    __slots__ = ("_by_head", "_cache", "_general", "rules")

    def __init__(self, rules: dict[Behavior, list[Rule]]) -> None:
        self.rules: Final[dict[Behavior, tuple[Rule, ...]]] = {
            behavior: tuple(rules[behavior]) for behavior in ("allow", "ask", "deny")
        }
        self._cache: dict[str, BashVerdict] = {}
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
        analysis = _shell.analyse(command)
        return BashVerdict(
            deny=self._patterns("deny", command),
            ask=self._patterns("ask", command),
            allow=self._patterns("allow", command),
            covering=self._covering(analysis),
        )

    def _patterns(self, behavior: Behavior, command: str) -> tuple[bool, ...]:
        loose = behavior != "allow"
        return tuple(
            isinstance(rule.specifier, BashPattern) and bash_pattern_matches(rule.specifier, command, loose=loose)
            for rule in self.rules[behavior]
        )

    def _covering(self, analysis: _shell.ShellAnalysis) -> Rule | None:
        if not analysis.safe or not analysis.commands:
            return None
        first: Rule | None = None
        for words in analysis.commands:
            head = words[0] if words else None
            candidates = self._by_head.get(head, self._general) if head is not None else self._general
            covering = next((rule for rule in candidates if _covers(rule, words)), None)
            if covering is None:
                return None
            first = first or covering
        return first


def _covers(rule: Rule, words: _shell.Words) -> bool:
    spec = rule.specifier
    return spec is None or (isinstance(spec, BashPattern) and spec.allows(words))
