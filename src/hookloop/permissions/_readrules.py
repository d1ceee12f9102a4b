"""The Read rules one call's reads must honour, as a path filter reading tools ask for every file they meet.

The policy decides a call on the paths in its input (``Grep(path="src")``). A search then reads files the policy
never saw: everything under ``src``. :class:`ReadRules` carries the rules that must also hold for those files,
so the tool can leave them out:

- every **deny** rule covering this tool or the Read family (``Read(./.env)``, ``Grep(./secrets/**)``) whose
  specifier is a path pattern, or none (the whole tool);
- every **ask** rule of that kind, except those that matched the call itself: the call ran, so it was approved
  under them (``Grep(path="secrets")`` under ``ask: Read(./secrets/**)`` searches ``secrets``). An ask rule the
  call did not match was never put to anyone, so its files must not be read silently.

Matching reuses :class:`~hookloop.permissions._paths.PathPattern` with the deny/ask (loose) semantics: either
root of the pattern, case-folded too, a matching directory covering its contents.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from hookloop.permissions._paths import PathPattern, ResolvedPath
from hookloop.permissions._rules import CallContext, Rule

__all__ = ["ReadRules"]

_WILDCARDS = re.compile(r"[*?]+")


class ReadRules:
    """A :class:`hookloop.tools.ReadFilter`: the path patterns that keep a reading tool from reading a path in
    this call. Immutable once built; safe to share between threads."""

    __slots__ = ("_everything", "_patterns")

    def __init__(self, patterns: Iterable[PathPattern], *, everything: bool = False) -> None:
        self._patterns = tuple((pattern, *_necessary(pattern)) for pattern in patterns)
        self._everything = everything

    @classmethod
    def for_call(
        cls,
        *,
        deny: Iterable[Rule],
        ask: Iterable[Rule],
        tool_name: str,
        tool_input: Mapping[str, object],
        context: Callable[[], CallContext],
    ) -> ReadRules | None:
        """The rules for one call (see the module docstring), or None when no rule restricts its reads.

        ``context`` is called only when an ask rule has to be matched against the call.
        """
        patterns: list[PathPattern] = []
        everything = False
        call_context: CallContext | None = None
        for behavior, rules in (("deny", deny), ("ask", ask)):
            for rule in rules:
                spec = rule.specifier
                if not isinstance(spec, PathPattern | None):
                    continue
                if not (rule.covers_tool(tool_name) or rule.covers_tool("Read")):
                    continue
                if behavior == "ask":
                    call_context = call_context or context()
                    if rule.matches(tool_name, tool_input, call_context):
                        continue  # the call was approved under this rule
                if spec is None:
                    everything = True
                else:
                    patterns.append(spec)
        if not patterns and not everything:
            return None
        return cls(dict.fromkeys(patterns), everything=everything)

    def denies(self, path: str) -> bool:
        """Whether ``path`` (absolute, symbolic links and ``..`` resolved) is covered by one of the rules."""
        if self._everything:
            return True
        folded = path.casefold()
        resolved = ResolvedPath(lexical=path, real=path)
        return any(
            folded.startswith(roots)
            and all(literal in folded for literal in literals)
            and pattern.matches(resolved, loose=True)
            for pattern, roots, literals in self._patterns
        )

    def __repr__(self) -> str:
        if self._everything:
            return "<ReadRules: every path>"
        return f"<ReadRules {[p.text for p, _, _ in self._patterns]}>"


def _necessary(pattern: PathPattern) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What any path the pattern matches contains, case-folded, to skip the full match cheaply for most paths:
    it starts with one of the roots, and each segment matches one of its components, so the literal text
    between a segment's ``*`` and ``?`` wildcards occurs in the path (segments with ``[…]`` sets are skipped).
    Only a shortcut: the decision stays :meth:`PathPattern.matches`."""
    roots = tuple(root.casefold() for root in pattern.roots)
    literals = {
        run.casefold() for segment in pattern.segments if "[" not in segment for run in _WILDCARDS.split(segment) if run
    }
    return roots, tuple(sorted(literals, key=len, reverse=True))
