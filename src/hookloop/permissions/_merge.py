"""The pure merge of a rule match, hook votes and the mode's default into one outcome."""

from __future__ import annotations

from collections.abc import Sequence

from hookloop.permissions._types import Behavior, HookVote, PermissionMode, PermissionOutcome, RuleMatch

__all__ = ["merge"]


def _hooks_outcome(behavior: Behavior, votes: Sequence[HookVote]) -> PermissionOutcome:
    # Sorted and de-duplicated so that the outcome never depends on the order the hooks finished in.
    unique = sorted({(vote.hook, vote.reason) for vote in votes})
    if len(unique) == 1:
        hook, reason = unique[0]
        return PermissionOutcome(behavior=behavior, reason=reason, decided_by=f'hook "{hook}"')
    names = ", ".join(dict.fromkeys(f'"{hook}"' for hook, _ in unique))
    reason = "; ".join(f"{hook}: {reason}" if reason else hook for hook, reason in unique)
    return PermissionOutcome(behavior=behavior, reason=reason, decided_by=f"hooks {names}")


def _rule_outcome(rule: RuleMatch) -> PermissionOutcome:
    verb = {"allow": "allowed by", "ask": "needs approval under", "deny": "denied by"}[rule.behavior]
    return PermissionOutcome(behavior=rule.behavior, reason=f"{verb} {rule.label}", decided_by=rule.label)


def merge(
    rule: RuleMatch | None,
    hooks: Sequence[HookVote],
    *,
    mode: PermissionMode,
    unmatched: Behavior,
    unmatched_reason: str = "",
) -> PermissionOutcome:
    """Merge the most restrictive matching rule, the hooks' votes and the mode's default into one outcome.

    Precedence, first that applies wins:

    1. a deny rule, then any hook's deny → deny (a hook's deny tightens in every mode, ``bypassPermissions`` too);
    2. an ask rule, then any hook's ask → ask;
    3. an allow rule, then any hook's allow → allow;
    4. ``unmatched`` — the mode's default for this call, computed by the caller
       (:meth:`PermissionPolicy.decide`), explained by ``unmatched_reason``.

    So a hook's allow never loosens a deny or ask rule; it only settles calls no rule decided. Finally, in
    ``dontAsk`` mode an ask outcome becomes deny (nobody is there to answer). The result is a pure function of
    the arguments and does not depend on the order of ``hooks``.
    """
    by_behavior: dict[Behavior, list[HookVote]] = {"allow": [], "ask": [], "deny": []}
    for vote in hooks:
        by_behavior[vote.behavior].append(vote)

    outcome: PermissionOutcome
    if rule is not None and rule.behavior == "deny":
        outcome = _rule_outcome(rule)
    elif by_behavior["deny"]:
        outcome = _hooks_outcome("deny", by_behavior["deny"])
    elif rule is not None and rule.behavior == "ask":
        outcome = _rule_outcome(rule)
    elif by_behavior["ask"]:
        outcome = _hooks_outcome("ask", by_behavior["ask"])
    elif rule is not None:
        outcome = _rule_outcome(rule)
    elif by_behavior["allow"]:
        outcome = _hooks_outcome("allow", by_behavior["allow"])
    else:
        reason = unmatched_reason or f"no rule or hook decided; {mode} mode defaults to {unmatched}"
        outcome = PermissionOutcome(behavior=unmatched, reason=reason, decided_by=f'mode "{mode}"')

    if mode == "dontAsk" and outcome.behavior == "ask":
        return PermissionOutcome(
            behavior="deny",
            reason=f"dontAsk mode denies what would need approval ({outcome.decided_by}: {outcome.reason})",
            decided_by='mode "dontAsk"',
        )
    return outcome
