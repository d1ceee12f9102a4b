"""Value types of the permission policy: behaviours, modes, rule matches, hook votes, outcomes, errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from hookloop.errors import ConfigError

__all__ = [
    "BEHAVIORS",
    "MODES",
    "Behavior",
    "HookVote",
    "PermissionConfigError",
    "PermissionMode",
    "PermissionOutcome",
    "RuleMatch",
]

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
Behavior = Literal["allow", "ask", "deny"]

MODES: Final[tuple[PermissionMode, ...]] = get_args(PermissionMode)
BEHAVIORS: Final[tuple[Behavior, ...]] = get_args(Behavior)


def _check_behavior(behavior: str, owner: str) -> None:
    if behavior not in BEHAVIORS:
        raise ValueError(f"{owner}.behavior must be one of {', '.join(BEHAVIORS)}, not {behavior!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleMatch:
    """The most restrictive permission rule that matches a call (deny > ask > allow).

    ``rule`` is the rule text as written (``"Bash(npm run test:*)"``); ``source`` names where it came from: the
    settings file or label given to :meth:`PermissionPolicy.from_settings`, ``"session"`` for rules added with
    :meth:`PermissionPolicy.add_session_rule`, or ``None`` for rules given to the constructor without a source.
    """

    behavior: Behavior
    rule: str
    source: str | None

    def __post_init__(self) -> None:
        _check_behavior(self.behavior, "RuleMatch")

    @property
    def label(self) -> str:
        """``rule "Bash(rm:*)" (project settings)``: how outcomes name this rule in ``decided_by``."""
        where = f" ({self.source})" if self.source else ""
        return f'rule "{self.rule}"{where}'


@dataclass(frozen=True, slots=True, kw_only=True)
class HookVote:
    """What one hook said about a call: its permission behaviour, why, and the hook's name."""

    behavior: Behavior
    reason: str
    hook: str

    def __post_init__(self) -> None:
        _check_behavior(self.behavior, "HookVote")


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionOutcome:
    """The final permission decision for one call.

    ``decided_by`` names what settled it: ``rule "Bash(rm:*)" (project settings)``, ``hook "guard"`` (or
    ``hooks "a", "b"`` when several hooks agreed), or ``mode "plan"``.
    """

    behavior: Behavior
    reason: str
    decided_by: str

    def __post_init__(self) -> None:
        _check_behavior(self.behavior, "PermissionOutcome")


class PermissionConfigError(ConfigError):
    """A permission setting or rule is malformed.

    ``source`` names the settings file or label (``None`` for rules given in code), ``json_path`` the offending
    entry (``permissions.allow[3]``; ``None`` when not from a settings document), ``problem`` what is wrong.
    """
