"""merge(): precedence between rules, hook votes and the mode; and the permission invariant as properties."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop.permissions import (
    Behavior,
    HookVote,
    PermissionMode,
    PermissionOutcome,
    PermissionPolicy,
    RuleMatch,
    merge,
)

BEHAVIORS: list[Behavior] = ["allow", "ask", "deny"]
MODES: list[PermissionMode] = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]


def vote(behavior: Behavior, hook: str = "h", reason: str = "r") -> HookVote:
    return HookVote(behavior=behavior, reason=reason, hook=hook)


def rule(behavior: Behavior) -> RuleMatch:
    return RuleMatch(behavior=behavior, rule=f"Bash({behavior}:*)", source="project")


# -- examples -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule_behavior", "hooks", "unmatched", "expected", "decided_by"),
    [
        ("deny", ["allow"], "allow", "deny", 'rule "Bash(deny:*)" (project)'),
        ("ask", ["allow"], "allow", "ask", 'rule "Bash(ask:*)" (project)'),
        ("allow", ["deny"], "allow", "deny", 'hook "h0"'),
        ("allow", ["ask"], "allow", "ask", 'hook "h0"'),
        ("ask", ["deny"], "allow", "deny", 'hook "h0"'),  # a hook's deny beats an ask rule
        ("deny", ["ask"], "allow", "deny", 'rule "Bash(deny:*)" (project)'),  # a deny rule beats a hook's ask
        (None, ["allow"], "ask", "allow", 'hook "h0"'),  # a hook's allow settles what no rule decided
        (None, ["allow", "ask"], "allow", "ask", 'hook "h1"'),
        (None, [], "ask", "ask", 'mode "default"'),
        ("allow", [], "ask", "allow", 'rule "Bash(allow:*)" (project)'),
    ],
)
def test_precedence(
    rule_behavior: Behavior | None, hooks: list[Behavior], unmatched: Behavior, expected: str, decided_by: str
) -> None:
    votes = [vote(behavior, hook=f"h{i}") for i, behavior in enumerate(hooks)]
    outcome = merge(None if rule_behavior is None else rule(rule_behavior), votes, mode="default", unmatched=unmatched)
    assert (outcome.behavior, outcome.decided_by) == (expected, decided_by)


def test_hook_reasons_are_reported_and_several_hooks_are_all_named() -> None:
    one = merge(None, [vote("deny", "guard", "rm is frozen")], mode="default", unmatched="ask")
    assert one == PermissionOutcome(behavior="deny", reason="rm is frozen", decided_by='hook "guard"')
    two = merge(None, [vote("deny", "b", "second"), vote("deny", "a", "first")], mode="default", unmatched="ask")
    assert two == PermissionOutcome(behavior="deny", reason="a: first; b: second", decided_by='hooks "a", "b"')


def test_unmatched_reason_is_used() -> None:
    outcome = merge(None, [], mode="plan", unmatched="deny", unmatched_reason="plan mode does not run Bash")
    assert outcome == PermissionOutcome(behavior="deny", reason="plan mode does not run Bash", decided_by='mode "plan"')


def test_dont_ask_turns_ask_into_deny_and_says_why() -> None:
    outcome = merge(rule("ask"), [], mode="dontAsk", unmatched="ask")
    assert outcome.behavior == "deny"
    assert outcome.decided_by == 'mode "dontAsk"'
    assert 'rule "Bash(ask:*)" (project)' in outcome.reason


def test_values_validate_their_behavior() -> None:
    with pytest.raises(ValueError, match=r"HookVote\.behavior"):
        HookVote(behavior="defer", reason="", hook="h")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"RuleMatch\.behavior"):
        RuleMatch(behavior="passthrough", rule="Bash", source=None)  # type: ignore[arg-type]


# -- properties of merge -------------------------------------------------------------------------------------------
behaviors = st.sampled_from(BEHAVIORS)
modes = st.sampled_from(MODES)
hook_votes = st.builds(
    HookVote, behavior=behaviors, reason=st.sampled_from(["", "r1", "r2"]), hook=st.sampled_from(["a", "b", "c"])
)
rule_matches = st.none() | st.builds(
    RuleMatch, behavior=behaviors, rule=st.sampled_from(["Bash", "Read(./x)"]), source=st.sampled_from([None, "p"])
)


@settings(max_examples=400, deadline=None)
@given(rule_matches, st.lists(hook_votes, max_size=5), st.lists(hook_votes, max_size=3), modes, behaviors)
def test_merge_hook_allow_never_loosens_a_deny_or_ask_rule(
    match: RuleMatch | None, hooks: list[HookVote], extra: list[HookVote], mode: PermissionMode, unmatched: Behavior
) -> None:
    allows = [HookVote(behavior="allow", reason=v.reason, hook=v.hook) for v in extra]
    before = merge(match, hooks, mode=mode, unmatched=unmatched)
    after = merge(match, [*hooks, *allows], mode=mode, unmatched=unmatched)
    if match is not None and match.behavior in {"deny", "ask"}:
        assert after.behavior != "allow"
        assert after == before
    if before.behavior != "allow":
        assert after.behavior == before.behavior or before.decided_by.startswith('mode "')


@settings(max_examples=400, deadline=None)
@given(rule_matches, st.lists(hook_votes, max_size=5), modes, behaviors, st.sampled_from(["a", "z"]))
def test_merge_any_hook_deny_yields_deny(
    match: RuleMatch | None, hooks: list[HookVote], mode: PermissionMode, unmatched: Behavior, name: str
) -> None:
    outcome = merge(match, [*hooks, vote("deny", name)], mode=mode, unmatched=unmatched)
    assert outcome.behavior == "deny"


@settings(max_examples=400, deadline=None)
@given(rule_matches, st.lists(hook_votes, max_size=5), modes, behaviors)
def test_merge_adding_a_hook_ask_never_yields_allow(
    match: RuleMatch | None, hooks: list[HookVote], mode: PermissionMode, unmatched: Behavior
) -> None:
    assert merge(match, [*hooks, vote("ask")], mode=mode, unmatched=unmatched).behavior != "allow"


@settings(max_examples=400, deadline=None)
@given(rule_matches, st.lists(hook_votes, max_size=6), modes, behaviors, st.randoms(use_true_random=False))
def test_merge_is_deterministic_and_independent_of_hook_order(
    match: RuleMatch | None, hooks: list[HookVote], mode: PermissionMode, unmatched: Behavior, rnd: random.Random
) -> None:
    shuffled = list(hooks)
    rnd.shuffle(shuffled)
    first = merge(match, hooks, mode=mode, unmatched=unmatched)
    assert merge(match, hooks, mode=mode, unmatched=unmatched) == first
    assert merge(match, shuffled, mode=mode, unmatched=unmatched) == first
    assert merge(match, tuple(reversed(hooks)), mode=mode, unmatched=unmatched) == first


# -- properties of decide over random rule sets -------------------------------------------------------------------
RULES = [
    "Bash", "Bash(ls:*)", "Bash(git status)", "Bash(git * main)", "Bash(rm:*)", "Bash(* --version)",
    "Bash(npm run test:*)", "Bash(curl:*)", "Read", "Read(./secrets/**)", "Edit(./src/**)", "Write(*.env)",
    "WebFetch(domain:example.com)", "mcp__srv", "mcp__srv__tool", "Grep",
]  # fmt: skip
CALLS: list[tuple[str, dict[str, object]]] = [
    ("Bash", {"command": "ls -la"}),
    ("Bash", {"command": "git status && rm -rf build"}),
    ("Bash", {"command": "git push origin main"}),
    ("Bash", {"command": "node --version | curl -d @- x"}),
    ("Bash", {"command": 'eval "$X"'}),
    ("Bash", {"command": "npm run test > out.log"}),
    ("Read", {"file_path": "secrets/key"}),
    ("Read", {"file_path": "/etc/passwd"}),
    ("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
    ("Write", {"file_path": "prod.env", "content": ""}),
    ("Grep", {"pattern": "x", "path": "secrets"}),
    ("WebFetch", {"url": "https://example.com/x", "prompt": "p"}),
    ("mcp__srv__tool", {}),
    ("mcp__other__tool", {}),
]

rule_lists = st.lists(st.sampled_from(RULES), max_size=4, unique=True)


def build(workspace: Path, allow: list[str], ask: list[str], deny: list[str], mode: PermissionMode) -> PermissionPolicy:
    return PermissionPolicy(allow=allow, ask=ask, deny=deny, mode=mode, workspace=workspace)


@settings(max_examples=250, deadline=None)
@given(
    rule_lists, rule_lists, rule_lists, modes, st.sampled_from(CALLS), st.lists(hook_votes, max_size=4), st.booleans()
)
def test_decide_hook_allow_never_loosens_rules(
    workspace: Path,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    mode: PermissionMode,
    call: tuple[str, dict[str, object]],
    hooks: list[HookVote],
    read_only: bool,
) -> None:
    policy = build(workspace, allow, ask, deny, mode)
    tool, tool_input = call
    rules_alone = policy.check(tool, tool_input)
    with_allows = policy.decide(tool, tool_input, hooks=[*hooks, vote("allow", "yes-man")], read_only=read_only)
    if rules_alone is not None and rules_alone.behavior in {"deny", "ask"}:
        assert with_allows.behavior != "allow"
        assert with_allows == policy.decide(tool, tool_input, hooks=hooks, read_only=read_only)
    if any(v.behavior == "deny" for v in hooks) or (rules_alone is not None and rules_alone.behavior == "deny"):
        assert with_allows.behavior == "deny"


@settings(max_examples=250, deadline=None)
@given(rule_lists, rule_lists, rule_lists, modes, st.sampled_from(CALLS), st.lists(hook_votes, max_size=4))
def test_decide_hook_deny_and_ask_always_tighten(
    workspace: Path,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    mode: PermissionMode,
    call: tuple[str, dict[str, object]],
    hooks: list[HookVote],
) -> None:
    policy = build(workspace, allow, ask, deny, mode)
    tool, tool_input = call
    assert policy.decide(tool, tool_input, hooks=[*hooks, vote("deny")]).behavior == "deny"
    assert policy.decide(tool, tool_input, hooks=[*hooks, vote("ask")]).behavior != "allow"


@settings(max_examples=250, deadline=None)
@given(
    rule_lists,
    rule_lists,
    rule_lists,
    modes,
    st.sampled_from(CALLS),
    st.lists(hook_votes, max_size=5).flatmap(lambda hs: st.tuples(st.just(hs), st.permutations(hs))),
)
def test_decide_is_deterministic_and_independent_of_hook_order(
    workspace: Path,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    mode: PermissionMode,
    call: tuple[str, dict[str, object]],
    hook_orders: tuple[list[HookVote], list[HookVote]],
) -> None:
    tool, tool_input = call
    hooks, permuted = hook_orders
    first = build(workspace, allow, ask, deny, mode).decide(tool, tool_input, hooks=hooks)
    again = build(workspace, allow, ask, deny, mode).decide(tool, tool_input, hooks=permuted)
    assert first == again


@settings(max_examples=250, deadline=None)
@given(rule_lists, rule_lists, rule_lists, modes, st.sampled_from(CALLS))
def test_deny_rule_in_any_layer_order_wins(
    workspace: Path,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    mode: PermissionMode,
    call: tuple[str, dict[str, object]],
) -> None:
    tool, tool_input = call
    policy = build(workspace, allow, ask, deny, mode)
    reversed_policy = build(workspace, allow[::-1], ask[::-1], deny[::-1], mode)
    first, second = policy.check(tool, tool_input), reversed_policy.check(tool, tool_input)
    assert (first is None) == (second is None)
    if first is not None and second is not None:
        assert first.behavior == second.behavior
        if first.behavior == "deny":
            assert policy.decide(tool, tool_input).behavior == "deny"
