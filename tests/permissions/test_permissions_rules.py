"""Each rule form of Claude Code's syntax, matched through PermissionPolicy.check."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionConfigError, PermissionPolicy, RuleMatch


def bash(command: str) -> dict[str, object]:
    return {"command": command}


def behavior_of(policy: PermissionPolicy, tool: str, tool_input: dict[str, object]) -> str | None:
    match = policy.check(tool, tool_input)
    return None if match is None else match.behavior


# -- bare tool names ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "matches"),
    [
        ("Bash", "Bash", bash("anything at all; eval $X"), True),
        ("Bash", "Read", {"file_path": "x"}, False),
        ("Bash(*)", "Bash", bash("rm -rf /"), True),
        ("WebFetch", "WebFetch", {"url": "https://example.com"}, True),
        ("Read", "Grep", {"pattern": "x"}, True),  # Read rules cover every reading tool
        ("Read", "Glob", {"pattern": "*.py"}, True),
        ("Read", "Edit", {"file_path": "x", "old_string": "a", "new_string": "b"}, False),
        ("Edit", "Write", {"file_path": "x", "content": ""}, True),  # Edit rules cover every editing tool
        ("Edit", "NotebookEdit", {"notebook_path": "n.ipynb"}, True),
        ("Write", "MultiEdit", {"file_path": "x", "edits": []}, True),
        ("Grep", "Glob", {"pattern": "*"}, False),
        ("mcp__github", "mcp__github__create_issue", {}, True),
        ("mcp__github", "mcp__github2__create_issue", {}, False),
        ("mcp__github", "mcp__github", {}, True),
        ("mcp__github__*", "mcp__github__list", {}, True),
        ("mcp__github__create_issue", "mcp__github__create_issue", {}, True),
        ("mcp__github__create_issue", "mcp__github__delete_repo", {}, False),
        ("mcp__*", "mcp__any__tool", {}, True),
    ],
)
def test_tool_name_rules(tmp_path: Path, rule: str, tool: str, tool_input: dict[str, object], matches: bool) -> None:
    policy = PermissionPolicy(deny=[rule], workspace=tmp_path)
    assert (policy.check(tool, tool_input) is not None) is matches


# -- Bash specifiers ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "command", "allowed"),
    [
        ("Bash(npm run test:*)", "npm run test", True),
        ("Bash(npm run test:*)", "npm run test --coverage", True),
        ("Bash(npm run test:*)", "npm run testing", False),
        ("Bash(npm run test:*)", "npm run build", False),
        ("Bash(git * main)", "git push origin main", True),
        ("Bash(git * main)", "git checkout main", True),
        ("Bash(git * main)", "git push origin dev", False),
        ("Bash(* --version)", "node --version", True),
        ("Bash(* --version)", "node --help", False),
        ("Bash(ls *)", "ls", True),  # a single trailing ` *` also matches the bare command
        ("Bash(ls *)", "ls -la", True),
        ("Bash(ls *)", "lsof", False),
        ("Bash(ls*)", "lsof", True),
        ("Bash(git status)", "git status", True),
        ("Bash(git status)", "git  status", True),  # words, not raw spacing
        ("Bash(git status)", "git status -s", False),
        ("Bash(git commit -m *)", 'git commit -m "fix: a; b"', True),  # quoted text is one word, not a separator
        ("Bash(ls:*)", 'ls "$HOME"', True),  # a run-time word is fine where the rule accepts anything
        ("Bash(git checkout main)", "git checkout $BRANCH", False),  # ... but not where it needs a literal
    ],
)
def test_bash_allow_forms(tmp_path: Path, rule: str, command: str, allowed: bool) -> None:
    policy = PermissionPolicy(allow=[rule], workspace=tmp_path)
    assert (behavior_of(policy, "Bash", bash(command)) == "allow") is allowed


@pytest.mark.parametrize(
    ("rule", "command", "denied"),
    [
        ("Bash(rm -rf /)", "rm -rf /", True),
        ("Bash(rm -rf /)", "rm $FLAGS /", True),  # a run-time word may be anything, for a deny rule
        ("Bash(rm -rf /)", "rm -rf /tmp/x", False),
        ("Bash(git push --force:*)", "git push --force origin", True),
        ("Bash(git push --force:*)", "git push origin", False),
        ("Bash(* --version)", "/usr/bin/node --version", True),
    ],
)
def test_bash_deny_forms(tmp_path: Path, rule: str, command: str, denied: bool) -> None:
    policy = PermissionPolicy(deny=[rule], workspace=tmp_path)
    assert (behavior_of(policy, "Bash", bash(command)) == "deny") is denied


def test_compound_command_needs_an_allow_rule_for_every_subcommand(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Bash(git status)", "Bash(ls:*)"], workspace=tmp_path)
    match = policy.check("Bash", bash("git status && ls -la"))
    assert match == RuleMatch(behavior="allow", rule="Bash(git status)", source=None)
    assert policy.check("Bash", bash("git status && ls -la && make")) is None


def test_whole_tool_bash_allow_covers_unanalysable_commands_but_deny_still_wins(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Bash"], deny=["Bash(rm:*)"], workspace=tmp_path)
    assert behavior_of(policy, "Bash", bash("f() { ls; }; f")) == "allow"
    assert behavior_of(policy, "Bash", bash('eval "r""m -rf /"')) == "deny"
    # issue 10: a program only known at run time matches every deny rule, even behind a whole-tool allow
    assert behavior_of(policy, "Bash", bash('eval "$X"')) == "deny"


def test_pattern_allow_never_covers_unanalysable_commands(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Bash(eval:*)", "Bash(echo:*)"], workspace=tmp_path)
    assert policy.check("Bash", bash('eval "$X"')) is None
    assert behavior_of(policy, "Bash", bash("eval 'echo hi'")) == "allow"  # literal: analysed, inner allowed


def test_redirect_after_cd_is_resolved_in_the_directory_it_runs_in(tmp_path: Path) -> None:
    # Issue 10 item 5: a literal `cd` is followed (it used to make every relative target unknown).
    policy = PermissionPolicy(allow=["Bash(cd:*)", "Bash(ls:*)"], workspace=tmp_path)
    assert behavior_of(policy, "Bash", bash("cd sub && ls > listing")) == "allow"
    assert policy.check("Bash", bash("cd .. && ls > listing")) is None  # outside the workspace
    assert policy.check("Bash", bash("cd $D && ls > listing")) is None  # an unknown directory
    assert behavior_of(policy, "Bash", bash(f"cd sub && ls > {tmp_path}/listing")) == "allow"
    assert behavior_of(policy, "Bash", bash("ls > listing")) == "allow"


def test_redirect_targets_are_checked_against_edit_and_read_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(
        allow=["Bash"], deny=["Edit(./.env)", "Read(./secrets/**)"], ask=["Write(//etc/**)"], workspace=tmp_path
    )
    assert behavior_of(policy, "Bash", bash("echo X=1 > .env")) == "deny"
    assert behavior_of(policy, "Bash", bash("cat < secrets/key")) == "deny"
    assert behavior_of(policy, "Bash", bash("echo hi >> /etc/hosts")) == "ask"
    assert behavior_of(policy, "Bash", bash("cat < .env")) == "allow"  # a read is not an edit


def test_redirecting_to_a_byte_sink_is_not_an_edit(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Bash"], deny=["Edit"], workspace=tmp_path)
    assert behavior_of(policy, "Bash", bash("make > /dev/null 2>&1")) == "allow"
    assert behavior_of(policy, "Bash", bash("make 2> /dev/stderr")) == "allow"
    assert behavior_of(policy, "Bash", bash("make > build.log")) == "deny"


def test_unanalysable_command_denied_when_a_deny_word_appears(tmp_path: Path) -> None:
    policy = PermissionPolicy(deny=["Bash(git push:*)"], workspace=tmp_path)
    assert behavior_of(policy, "Bash", bash("f() { :; }; echo git push")) == "deny"
    assert policy.check("Bash", bash("f() { :; }; echo git")) is None  # every literal word of the rule must appear


def test_most_restrictive_rule_is_reported(tmp_path: Path) -> None:
    policy = PermissionPolicy(
        allow=["Bash(git:*)"], ask=["Bash(git push:*)"], deny=["Bash(git push --force:*)"], workspace=tmp_path
    )
    assert policy.check("Bash", bash("git log")) == RuleMatch(behavior="allow", rule="Bash(git:*)", source=None)
    assert policy.check("Bash", bash("git push")) == RuleMatch(behavior="ask", rule="Bash(git push:*)", source=None)
    assert policy.check("Bash", bash("git push --force")) == RuleMatch(
        behavior="deny", rule="Bash(git push --force:*)", source=None
    )


def test_bash_rule_with_missing_command_matches_only_whole_tool_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Bash(ls:*)"], deny=["Bash(rm:*)"], workspace=tmp_path)
    assert policy.check("Bash", {}) is None
    assert PermissionPolicy(deny=["Bash"], workspace=tmp_path).check("Bash", {}) is not None


# -- WebFetch and other specifiers -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "allowed", "denied"),
    [
        ("https://example.com/a", True, True),
        ("https://EXAMPLE.com./a", True, True),
        ("http://example.com:8080/", True, True),
        ("https://api.example.com/", False, True),  # deny and ask also cover subdomains; allow does not
        ("https://example.com.evil.net/", False, False),
        ("https://example.com@evil.net/", False, False),  # userinfo is not the host
        ("https://еxample.com/", False, True),  # Cyrillic е: a look-alike is never allowed, always denied
        ("not a url", False, False),
    ],
)
def test_webfetch_domain(tmp_path: Path, url: str, allowed: bool, denied: bool) -> None:
    allow = PermissionPolicy(allow=["WebFetch(domain:example.com)"], workspace=tmp_path)
    deny = PermissionPolicy(deny=["WebFetch(domain:example.com)"], workspace=tmp_path)
    assert (allow.check("WebFetch", {"url": url}) is not None) is allowed
    assert (deny.check("WebFetch", {"url": url}) is not None) is denied


def test_webfetch_domain_glob(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["WebFetch(domain:*.example.com)"], workspace=tmp_path)
    assert policy.check("WebFetch", {"url": "https://docs.example.com/x"}) is not None
    assert policy.check("WebFetch", {"url": "https://example.org/x"}) is None


def test_agent_and_generic_specifiers(tmp_path: Path) -> None:
    policy = PermissionPolicy(deny=["Agent(Explore)", "Skill(deploy*)"], workspace=tmp_path)
    assert policy.check("Agent", {"subagent_type": "Explore", "prompt": "x"}) is not None
    assert policy.check("Agent", {"subagent_type": "Plan", "prompt": "Explore"}) is None
    assert policy.check("Skill", {"skill": "deploy-prod"}) is not None
    assert policy.check("Skill", {"skill": "lint"}) is None


# -- malformed rules --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ("", "empty rule"),
        ("   ", "empty rule"),
        ("Bash(ls", "closing parenthesis"),
        ("Bash(ls) x", "closing parenthesis"),
        ("Bash)", "without an opening"),
        ("Ba sh", "not a tool name"),
        ("WebFetch(example.com)", "domain:"),
        ("WebFetch(domain:exa mple.com)", "not a host name"),
    ],
)
def test_malformed_rules_raise_with_list_and_index(tmp_path: Path, rule: str, fragment: str) -> None:
    with pytest.raises(PermissionConfigError) as caught:
        PermissionPolicy(allow=["Read"], deny=["Bash", rule], workspace=tmp_path, source="code")
    assert fragment in caught.value.problem
    assert caught.value.json_path == "deny[1]"
    assert str(caught.value).startswith("code: deny[1]: ")


def test_non_string_rule_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(PermissionConfigError, match=r"must be a string, not int"):
        PermissionPolicy(ask=[3], workspace=tmp_path)  # type: ignore[list-item]


def test_session_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(workspace=tmp_path)
    assert policy.check("Bash", bash("make build")) is None
    policy.add_session_rule("allow", "Bash(make:*)")
    assert policy.check("Bash", bash("make build")) == RuleMatch(
        behavior="allow", rule="Bash(make:*)", source="session"
    )
    with pytest.raises(PermissionConfigError, match="session"):
        policy.add_session_rule("allow", "Bash(make")
    with pytest.raises(PermissionConfigError, match="unknown behavior"):
        policy.add_session_rule("maybe", "Bash")  # type: ignore[arg-type]
    assert policy.decide("Bash", bash("make build")).decided_by == 'rule "Bash(make:*)" (session)'
