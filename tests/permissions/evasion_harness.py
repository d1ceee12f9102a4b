"""Shared harness of the evasion corpora (issue 10): one case, every mode, with and without a hook's allow.

A :class:`Case` is a command, the rule set it is decided under, and what the *rules* make of it:

``"deny"``
    a deny rule matches: denied in every mode, behind a whole-tool ``Bash`` allow and behind a hook's allow.
``"ask"``
    an ask rule matches (and no deny rule): asks in every mode but ``dontAsk``, where it is denied — also in
    ``bypassPermissions``, behind a whole-tool ``Bash`` allow and behind a hook's allow.
``"unmatched"``
    no rule decides (typically: a narrower allow rule does not cover code that runs code): the mode's default
    applies (ask, ask, deny in plan, allow in bypassPermissions, deny in dontAsk); a hook's allow or a
    whole-tool ``Bash`` allow then allows it.
``"allow"``
    an allow rule covers it: allowed in every mode.

:func:`check_case` asserts :meth:`PermissionPolicy.check` and :meth:`PermissionPolicy.decide` for all five
modes, each without hooks and with a hook voting allow (``HookVote(behavior="allow")``, what a pre-tool-call
hook's ``Allow`` becomes), under the case's rules and under the same rules plus a whole-tool ``Bash`` allow:
twenty decisions per case.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from hookloop.permissions import Behavior, HookVote, PermissionMode, PermissionPolicy

__all__ = [
    "ALLOW",
    "ASK",
    "DENY",
    "HOOK_ALLOW",
    "MODES",
    "Case",
    "Expected",
    "Rules",
    "check_case",
    "check_guarded",
    "distinct_commands",
    "expected_behavior",
    "run_in_bash",
]

Expected = Literal["deny", "ask", "unmatched", "allow"]
MODES: Final[tuple[PermissionMode, ...]] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
HOOK_ALLOW: Final = HookVote(behavior="allow", reason="the hook approves everything", hook="approver")

#: The rule set the corpora use unless a case names its own: narrow allows for the programs under attack
#: (including the interpreters and code runners), denies for the programs the attacks try to reach, asks for
#: the subcommands hidden behind global options.
ALLOW: Final = (
    "Bash(git:*)", "Bash(npm:*)", "Bash(pnpm:*)", "Bash(yarn:*)", "Bash(docker:*)", "Bash(kubectl:*)",
    "Bash(cargo:*)", "Bash(go:*)", "Bash(pip:*)", "Bash(uv:*)", "Bash(helm:*)", "Bash(ls:*)", "Bash(echo:*)",
    "Bash(printf:*)", "Bash(cat:*)", "Bash(base64:*)", "Bash(python3:*)", "Bash(python:*)", "Bash(node:*)",
    "Bash(perl:*)", "Bash(ruby:*)", "Bash(php:*)", "Bash(find:*)", "Bash(xargs:*)", "Bash(sed:*)", "Bash(awk:*)",
    "Bash(gawk:*)", "Bash(true)", "Bash(grep:*)", "Bash(tar:*)", "Bash(rsync:*)", "Bash(make:*)", "Bash(vim:*)",
    "Bash(npx:*)", "Bash(poetry:*)", "Bash(bundle:*)", "Bash(sort:*)", "Bash(head:*)", "Bash(wc:*)",
)  # fmt: skip
DENY: Final = ("Bash(rm:*)", "Bash(touch:*)", "Bash(curl:*)")
ASK: Final = (
    "Bash(git push:*)", "Bash(npm publish:*)", "Bash(pnpm publish:*)", "Bash(yarn publish:*)",
    "Bash(docker push:*)", "Bash(kubectl delete:*)", "Bash(helm uninstall:*)", "Bash(cargo publish:*)",
    "Bash(pip install:*)", "Bash(go get:*)", "Bash(uv publish:*)", "Bash(poetry publish:*)",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rules:
    """Allow, ask and deny rule lists."""

    allow: tuple[str, ...] = ALLOW
    ask: tuple[str, ...] = ASK
    deny: tuple[str, ...] = DENY


@dataclass(frozen=True, slots=True)
class Case:
    """One corpus entry: ``command`` under ``rules`` must get ``expected`` from the rules (see the module)."""

    command: str
    expected: Expected
    rules: Rules = field(default_factory=Rules)


def expected_behavior(expected: Expected, mode: PermissionMode, *, hook_allow: bool, whole_tool: bool) -> Behavior:
    """What :meth:`PermissionPolicy.decide` must answer for a case of ``expected`` in ``mode``."""
    if expected == "deny":
        return "deny"
    if expected == "ask":
        return "deny" if mode == "dontAsk" else "ask"
    if expected == "allow" or hook_allow or whole_tool:
        return "allow"
    return {"default": "ask", "acceptEdits": "ask", "plan": "deny", "bypassPermissions": "allow", "dontAsk": "deny"}[
        mode
    ]


_POLICIES: dict[tuple[Path, Rules, PermissionMode, bool], PermissionPolicy] = {}


def _policy(workspace: Path, rules: Rules, mode: PermissionMode, whole_tool: bool) -> PermissionPolicy:
    key = (workspace, rules, mode, whole_tool)
    policy = _POLICIES.get(key)
    if policy is None:
        allow = (*rules.allow, "Bash") if whole_tool else rules.allow
        policy = PermissionPolicy(allow=allow, ask=rules.ask, deny=rules.deny, mode=mode, workspace=workspace)
        _POLICIES[key] = policy
    return policy


def check_case(case: Case, workspace: Path) -> None:
    """Assert the case's decision in every mode, with and without a hook's allow and a whole-tool allow."""
    tool_input = {"command": case.command}
    rule_behavior = {"deny": "deny", "ask": "ask", "allow": "allow", "unmatched": None}[case.expected]
    for whole_tool in (False, True):
        for mode in MODES:
            policy = _policy(workspace, case.rules, mode, whole_tool)
            match = policy.check("Bash", tool_input)
            got_rule = None if match is None else match.behavior
            want_rule = "allow" if whole_tool and rule_behavior is None else rule_behavior
            assert got_rule == want_rule, (case.command, mode, whole_tool, match)
            for hook_allow in (False, True):
                outcome = policy.decide("Bash", tool_input, hooks=(HOOK_ALLOW,) if hook_allow else ())
                want = expected_behavior(case.expected, mode, hook_allow=hook_allow, whole_tool=whole_tool)
                assert outcome.behavior == want, (case.command, mode, whole_tool, hook_allow, outcome)


def distinct_commands(cases: list[Case]) -> int:
    """How many distinct command strings the cases hold."""
    return len({case.command for case in cases})


def run_in_bash(command: str, cwd: Path) -> str:
    """Run ``command`` with the real bash in ``cwd`` (to show an attack of a corpus really runs what it hides);
    its output, for the assertion message."""
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def check_guarded(command: str, workspace: Path, rules: Rules) -> None:
    """Assert that ``command``, which writes where only the protected-path guard can judge (a protected path, or
    files below a directory it does not name), is asked about wherever something would allow it — an allow rule,
    a whole-tool ``Bash`` allow, a hook's allow, ``bypassPermissions`` — and denied in ``dontAsk``; in plan mode
    with nothing allowing it, plan's default (deny) stands. No deny or ask rule may match it."""
    tool_input = {"command": command}
    for whole_tool in (False, True):
        for mode in MODES:
            policy = _policy(workspace, rules, mode, whole_tool)
            match = policy.check("Bash", tool_input)
            assert match is None or match.behavior == "allow", (command, mode, whole_tool, match)
            for hooks in ((), (HOOK_ALLOW,)):
                outcome = policy.decide("Bash", tool_input, hooks=hooks)
                allowed = bool(hooks) or match is not None
                want = "deny" if mode == "dontAsk" or (mode == "plan" and not allowed) else "ask"
                assert outcome.behavior == want, (command, mode, whole_tool, hooks, outcome)
